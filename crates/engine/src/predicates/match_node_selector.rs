//! MatchNodeSelector: the node's labels must satisfy the pod's `nodeSelector` and its required
//! node affinity (see [`crate::labels::selectors`] for the term semantics).

use crate::cluster::NodeInfo;
use crate::framework::PodContext;
use crate::framework::{AnyPredicate, ArgumentError, PredicateArgs};
use crate::framework::{Cause, ClusterView, Failures, Predicate, Reason, ReasonKind};
use crate::plugin_helpers::node_affinity::matches_node_selector;
use std::sync::Arc;

/// The registry name.
pub const NAME: &str = "MatchNodeSelector";

/// Builds it (it takes no argument).
pub fn build(_args: &PredicateArgs<'_>) -> Result<Arc<dyn AnyPredicate>, ArgumentError> {
    Ok(Arc::new(MatchNodeSelector))
}

pub const ERR_NODE_SELECTOR_NOT_MATCH: Reason =
    Reason::of(Cause::NodeSelectorMismatch, ReasonKind::Unresolvable, "node(s) didn't match node selector");

#[derive(Debug)]
pub struct MatchNodeSelector;

impl Predicate for MatchNodeSelector {
    type State = ();

    fn name(&self) -> &str {
        NAME
    }

    fn failures(&self) -> Failures {
        Failures::Unresolvable
    }

    fn prepare(&self, _pod: &PodContext, _view: &ClusterView<'_>) {}

    fn check(&self, pod: &PodContext, _state: &(), node: &NodeInfo, reasons: &mut Vec<Reason>) {
        if !matches_node_selector(pod, node) {
            reasons.push(ERR_NODE_SELECTOR_NOT_MATCH);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predicates::reasons_of;
    use crate::testing::{field_term, requirement as req, term, NodeBuilder, PodBuilder};

    #[test]
    fn selectors_and_affinity() {
        let node = NodeBuilder::new("n1").label("zone", "a").label("disk", "ssd").info();
        let fail = vec![ERR_NODE_SELECTOR_NOT_MATCH];
        let cases = [
            ("nothing asked", PodBuilder::new("p"), vec![]),
            ("nodeSelector matches", PodBuilder::new("p").node_selector("zone", "a"), vec![]),
            ("nodeSelector value differs", PodBuilder::new("p").node_selector("zone", "b"), fail.clone()),
            ("nodeSelector key missing", PodBuilder::new("p").node_selector("gpu", "yes"), fail.clone()),
            (
                "every nodeSelector entry must match",
                PodBuilder::new("p").node_selector("zone", "a").node_selector("disk", "hdd"),
                fail.clone(),
            ),
            (
                "affinity matches",
                PodBuilder::new("p").node_affinity_term(term(vec![req("zone", "In", &["a", "b"])])),
                vec![],
            ),
            (
                "affinity misses",
                PodBuilder::new("p").node_affinity_term(term(vec![req("zone", "In", &["b"])])),
                fail.clone(),
            ),
            (
                "nodeSelector and affinity must both match",
                PodBuilder::new("p").node_selector("zone", "a").node_affinity_term(term(vec![req(
                    "disk",
                    "In",
                    &["hdd"],
                )])),
                fail.clone(),
            ),
            (
                "terms are ORed",
                PodBuilder::new("p")
                    .node_affinity_term(term(vec![req("zone", "In", &["b"])]))
                    .node_affinity_term(term(vec![req("disk", "Exists", &[])])),
                vec![],
            ),
            (
                "matchFields on the node name",
                PodBuilder::new("p").node_affinity_term(field_term(vec![req("metadata.name", "In", &["n1"])])),
                vec![],
            ),
            ("an empty term matches nothing", PodBuilder::new("p").node_affinity_term(term(vec![])), fail.clone()),
        ];
        for (name, pod, want) in cases {
            assert_eq!(reasons_of(&MatchNodeSelector, pod.build(), &node), want, "{name}");
        }
    }

    /// upstream: TestPodFitsSelector (1.12-1.13 predicates_test.go), every case, in its order.
    /// Each runs on a node named `node_1` unless the case names one, with the case's labels.
    #[test]
    fn upstream_pod_fits_selector() {
        use k8s_openapi::api::core::v1::{Affinity, NodeAffinity, NodeSelector};
        let pod = || PodBuilder::new("p");
        /// The pod with `requiredDuringScheduling...` set to these terms (`None`: no NodeSelector).
        fn required(terms: Option<Vec<k8s_openapi::api::core::v1::NodeSelectorTerm>>) -> PodBuilder {
            let mut p = PodBuilder::new("p").build();
            p.spec.affinity = Some(Affinity {
                node_affinity: Some(NodeAffinity {
                    required_during_scheduling_ignored_during_execution: terms
                        .map(|node_selector_terms| NodeSelector { node_selector_terms }),
                    ..NodeAffinity::default()
                }),
                ..Affinity::default()
            });
            PodBuilder::from_pod(p)
        }
        let foo_bar: &[(&str, &str)] = &[("foo", "bar")];
        let name_in = |name: &str| field_term(vec![req("metadata.name", "In", &[name])]);
        /// (name, pod, node name, node labels, fits)
        type Case<'a> = (&'a str, PodBuilder, &'a str, &'a [(&'a str, &'a str)], bool);
        let cases: Vec<Case<'_>> = vec![
            ("no selector", pod(), "node_1", &[], true),
            ("missing labels", pod().node_selector("foo", "bar"), "node_1", &[], false),
            ("same labels", pod().node_selector("foo", "bar"), "node_1", foo_bar, true),
            ("node labels are superset", pod().node_selector("foo", "bar"), "node_1", &[("foo", "bar"), ("baz", "blah")], true),
            (
                "node labels are subset",
                pod().node_selector("foo", "bar").node_selector("baz", "blah"),
                "node_1",
                foo_bar,
                false,
            ),
            (
                "Pod with matchExpressions using In operator that matches the existing node",
                pod().node_affinity_term(term(vec![req("foo", "In", &["bar", "value2"])])),
                "node_1",
                foo_bar,
                true,
            ),
            (
                "Pod with matchExpressions using Gt operator that matches the existing node",
                pod().node_affinity_term(term(vec![req("kernel-version", "Gt", &["0204"])])),
                "node_1",
                &[("kernel-version", "0206")],
                true,
            ),
            (
                "Pod with matchExpressions using NotIn operator that matches the existing node",
                pod().node_affinity_term(term(vec![req("mem-type", "NotIn", &["DDR", "DDR2"])])),
                "node_1",
                &[("mem-type", "DDR3")],
                true,
            ),
            (
                "Pod with matchExpressions using Exists operator that matches the existing node",
                pod().node_affinity_term(term(vec![req("GPU", "Exists", &[])])),
                "node_1",
                &[("GPU", "NVIDIA-GRID-K1")],
                true,
            ),
            (
                "Pod with affinity that don't match node's labels won't schedule onto the node",
                pod().node_affinity_term(term(vec![req("foo", "In", &["value1", "value2"])])),
                "node_1",
                foo_bar,
                false,
            ),
            (
                "Pod with a nil []NodeSelectorTerm in affinity, can't match the node's labels and won't schedule onto the node",
                required(Some(vec![])),
                "node_1",
                foo_bar,
                false,
            ),
            (
                "Pod with empty MatchExpressions is not a valid value will match no objects and won't schedule onto the node",
                pod().node_affinity_term(term(vec![])),
                "node_1",
                foo_bar,
                false,
            ),
            ("Pod with no Affinity will schedule onto a node", pod(), "node_1", foo_bar, true),
            ("Pod with Affinity but nil NodeSelector will schedule onto a node", required(None), "node_1", foo_bar, true),
            (
                "Pod with multiple matchExpressions ANDed that matches the existing node",
                pod().node_affinity_term(term(vec![req("GPU", "Exists", &[]), req("GPU", "NotIn", &["AMD", "INTER"])])),
                "node_1",
                &[("GPU", "NVIDIA-GRID-K1")],
                true,
            ),
            (
                "Pod with multiple matchExpressions ANDed that doesn't match the existing node",
                pod().node_affinity_term(term(vec![req("GPU", "Exists", &[]), req("GPU", "In", &["AMD", "INTER"])])),
                "node_1",
                &[("GPU", "NVIDIA-GRID-K1")],
                false,
            ),
            (
                "Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels and will schedule onto the node",
                pod()
                    .node_affinity_term(term(vec![req("foo", "In", &["bar", "value2"])]))
                    .node_affinity_term(term(vec![req("diffkey", "In", &["wrong", "value2"])])),
                "node_1",
                foo_bar,
                true,
            ),
            (
                "Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are deprecating) both are satisfied, will schedule onto the node",
                pod().node_selector("foo", "bar").node_affinity_term(term(vec![req("foo", "Exists", &[])])),
                "node_1",
                foo_bar,
                true,
            ),
            (
                "Pod with an Affinity matches node's labels but the PodSpec.NodeSelector(the old thing that we are deprecating) is not satisfied, won't schedule onto the node",
                pod().node_selector("foo", "bar").node_affinity_term(term(vec![req("foo", "Exists", &[])])),
                "node_1",
                &[("foo", "barrrrrr")],
                false,
            ),
            (
                "Pod with an invalid value in Affinity term won't be scheduled onto the node",
                pod().node_affinity_term(term(vec![req("foo", "NotIn", &["invalid value: ___@#$%^"])])),
                "node_1",
                foo_bar,
                false,
            ),
            (
                "Pod with matchFields using In operator that matches the existing node",
                pod().node_affinity_term(name_in("node_1")),
                "node_1",
                &[],
                true,
            ),
            (
                "Pod with matchFields using In operator that does not match the existing node",
                pod().node_affinity_term(name_in("node_1")),
                "node_2",
                &[],
                false,
            ),
            (
                "Pod with two terms: matchFields does not match, but matchExpressions matches",
                pod().node_affinity_term(name_in("node_1")).node_affinity_term(term(vec![req("foo", "In", &["bar"])])),
                "node_2",
                foo_bar,
                true,
            ),
            (
                "Pod with one term: matchFields does not match, but matchExpressions matches",
                pod().node_affinity_term(both(name_in("node_1"), vec![req("foo", "In", &["bar"])])),
                "node_2",
                foo_bar,
                false,
            ),
            (
                "Pod with one term: both matchFields and matchExpressions match",
                pod().node_affinity_term(both(name_in("node_1"), vec![req("foo", "In", &["bar"])])),
                "node_1",
                foo_bar,
                true,
            ),
        ];
        for (name, pod, node_name, labels, fits) in cases {
            let node = NodeBuilder::new(node_name).labels(labels).info();
            let want = if fits { vec![] } else { vec![ERR_NODE_SELECTOR_NOT_MATCH] };
            assert_eq!(reasons_of(&MatchNodeSelector, pod.build(), &node), want, "{name}");
        }
    }

    /// A term with both `matchFields` and `matchExpressions` (ANDed).
    fn both(
        fields: k8s_openapi::api::core::v1::NodeSelectorTerm,
        expressions: Vec<k8s_openapi::api::core::v1::NodeSelectorRequirement>,
    ) -> k8s_openapi::api::core::v1::NodeSelectorTerm {
        k8s_openapi::api::core::v1::NodeSelectorTerm { match_expressions: Some(expressions), ..fields }
    }

    #[test]
    fn required_affinity_without_terms_matches_nothing() {
        let node = NodeBuilder::new("n1").info();
        let mut pod = PodBuilder::new("p").node_affinity_term(term(vec![])).build();
        if let Some(na) = pod.spec.affinity.as_mut().and_then(|a| a.node_affinity.as_mut()) {
            na.required_during_scheduling_ignored_during_execution.as_mut().unwrap().node_selector_terms.clear();
        }
        assert_eq!(reasons_of(&MatchNodeSelector, pod, &node), vec![ERR_NODE_SELECTOR_NOT_MATCH]);
    }
}
