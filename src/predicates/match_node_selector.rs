//! MatchNodeSelector: the node's labels must satisfy the pod's `nodeSelector` and its required
//! node affinity (see [`crate::selectors`] for the term semantics).

use crate::cluster::NodeInfo;
use crate::engine::PodContext;
use crate::predicates::{Predicate, Reason};

pub const ERR_NODE_SELECTOR_NOT_MATCH: Reason = Reason::unresolvable("node(s) didn't match node selector");

#[derive(Debug)]
pub struct MatchNodeSelector;

/// The check, shared with GeneralPredicates.
pub fn matches_node_selector(pod: &PodContext, node: &NodeInfo) -> bool {
    let labels = &node.node().metadata.labels;
    let selector_ok = pod.pod.spec.node_selector.iter().all(|(k, v)| labels.get(k) == Some(v));
    selector_ok && pod.required_node_affinity.as_ref().is_none_or(|terms| terms.matches(node.name(), labels))
}

impl Predicate for MatchNodeSelector {
    fn name(&self) -> &str {
        "MatchNodeSelector"
    }

    fn check(&self, pod: &PodContext, node: &NodeInfo, reasons: &mut Vec<Reason>) {
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
        let node = NodeInfo::from_parts(NodeBuilder::new("n1").label("zone", "a").label("disk", "ssd").build(), []);
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

    #[test]
    fn required_affinity_without_terms_matches_nothing() {
        let node = NodeInfo::from_parts(NodeBuilder::new("n1").build(), []);
        let mut pod = PodBuilder::new("p").node_affinity_term(term(vec![])).build();
        if let Some(na) = pod.spec.affinity.as_mut().and_then(|a| a.node_affinity.as_mut()) {
            na.required_during_scheduling_ignored_during_execution.as_mut().unwrap().node_selector_terms.clear();
        }
        assert_eq!(reasons_of(&MatchNodeSelector, pod, &node), vec![ERR_NODE_SELECTOR_NOT_MATCH]);
    }
}
