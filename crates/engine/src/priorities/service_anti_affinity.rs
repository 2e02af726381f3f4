//! ServiceAntiAffinityPriority (`argument.serviceAntiAffinity: {"label": L}`): spreads the pods
//! of the pod's first Service over the values of node label L, as upstream's `ServiceAntiAffinity`
//! (kube-scheduler 1.14-1.17, `pkg/scheduler/algorithm/priorities/selector_spreading.go`,
//! `getFirstServiceSelector` in `metadata.go`).
//!
//! - The first Service of the pod's namespace that selects the pod gives the selector; upstream
//!   takes the first in its lister's (cache) order, here the one with the smallest name, so the
//!   answer does not depend on hash order. Without one (or with an empty selector, which 1.17's
//!   `countMatchingPods` treats as selecting nothing) no pod counts.
//! - The count of a node is the number of assigned pods of the pod's namespace on it that the
//!   selector matches, pods being deleted left out (`countMatchingPods`).
//! - Scores are normalised over the candidate nodes, as upstream's reduce over the map results
//!   (`prepare` sums over the known candidates, `score` gives the final 0..=10 from them):
//!   `numServicePods` is the sum over all candidates (those without the label included), the
//!   count of a label value the sum over the candidates with that value; a node with the label
//!   scores `10 * (numServicePods - countOfItsValue) / numServicePods` (10 when there are no
//!   service pods), truncated; a node without the label scores 0.

use crate::hashing::HashMap;
use std::sync::Arc;

use serde::Deserialize;

use crate::cluster::NodeInfo;
use crate::framework::candidate::known_nodes;
use crate::framework::ClusterView;
use crate::framework::{ArgumentError, Candidate, PodContext};
use crate::framework::{Priority, PriorityArgs, Scorer, MAX_PRIORITY};
use crate::labels::selectors::LabelSelector;
use crate::plugin_helpers::services::{pod_services, service_selector};
use crate::priorities::spreading::PodMatcher;

#[derive(Debug, Clone)]
pub struct ServiceAntiAffinity {
    /// The Policy entry's name (a custom one when the entry names it so).
    name: String,
    /// The node label whose values the service's pods spread over.
    label: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Argument {
    label: Option<String>,
}

/// The registry name.
pub const NAME: &str = "ServiceAntiAffinityPriority";

pub fn build(args: &PriorityArgs<'_>) -> Result<Arc<dyn Priority>, ArgumentError> {
    let Some(value) = args.argument else {
        return Err(ArgumentError::new("argument.serviceAntiAffinity", "required by ServiceAntiAffinityPriority"));
    };
    if !value.is_object() {
        return Err(ArgumentError::new("argument.serviceAntiAffinity", "must be an object with a label"));
    }
    let argument =
        Argument::deserialize(value).map_err(|e| ArgumentError::new("argument.serviceAntiAffinity", format!("{e}")))?;
    let label = match argument.label {
        None => return Err(ArgumentError::new("argument.serviceAntiAffinity.label", "missing")),
        Some(l) if l.is_empty() => {
            return Err(ArgumentError::new("argument.serviceAntiAffinity.label", "must not be empty"))
        }
        Some(l) => l,
    };
    Ok(Arc::new(ServiceAntiAffinity { name: args.name.to_string(), label }))
}

impl Priority for ServiceAntiAffinity {
    fn name(&self) -> &str {
        &self.name
    }

    fn prepare(&self, pod: &PodContext, view: &ClusterView<'_>, candidates: &[Candidate]) -> Box<dyn Scorer> {
        let first = pod_services(&pod.pod, view)
            .min_by(|a, b| a.metadata.name.cmp(&b.metadata.name))
            .and_then(|svc| service_selector(svc))
            .filter(|selector| !selector.is_empty());
        let counts = match first {
            Some(selector) => PodMatcher {
                namespace: pod.pod.metadata.namespace.clone(),
                selectors: vec![LabelSelector::from_map(selector)],
                equality: selector.iter().next().map(|(k, v)| (k.clone(), v.clone())),
            }
            .count_by_node(view),
            None => HashMap::default(),
        };
        // Upstream's reduce over the map results: numServicePods over every candidate, and the
        // candidates' counts per value of the label.
        let mut service_pods = 0;
        let mut by_value: HashMap<String, i64> = HashMap::default();
        for node in known_nodes(candidates) {
            let count = counts.get(node.name()).copied().unwrap_or(0);
            service_pods += count;
            if let Some(value) = node.node().metadata.labels.get(&self.label) {
                match by_value.get_mut(value) {
                    Some(sum) => *sum += count,
                    None => {
                        by_value.insert(value.clone(), count);
                    }
                }
            }
        }
        Box::new(AntiAffinityScorer { label: self.label.clone(), counts_by_value: by_value, service_pods })
    }
}

struct AntiAffinityScorer {
    /// The node label the pods spread over.
    label: String,
    /// The first service's pods on the candidates, per value of the label.
    counts_by_value: HashMap<String, i64>,
    /// The first service's pods on all the candidates (`numServicePods`).
    service_pods: i64,
}

impl Scorer for AntiAffinityScorer {
    /// Upstream's `CalculateAntiAffinityPriorityReduce` for one node, from what `prepare` summed
    /// over the candidates: already 0..=10.
    fn score(&self, _pod: &PodContext, node: &NodeInfo) -> i64 {
        let Some(value) = node.node().metadata.labels.get(&self.label) else { return 0 };
        let max = MAX_PRIORITY as f64;
        let mut f = max;
        if self.service_pods > 0 {
            let of_value = self.counts_by_value.get(value).copied().unwrap_or(0);
            f = max * ((self.service_pods - of_value) as f64 / self.service_pods as f64);
        }
        // Go's int(fScore): truncation; f is in 0..=10.
        f as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::objects::Pod;
    use crate::cluster::Snapshot;
    use crate::priorities::spreading::test_objects::service;
    use crate::testing::{NodeBuilder, PodBuilder};

    fn args(argument: Option<&serde_json::Value>) -> PriorityArgs<'_> {
        PriorityArgs { name: "ServiceZone", argument, hard_pod_affinity_symmetric_weight: 1 }
    }

    fn pods(node: &str, ns: &str, labels: &[(&str, &str)], count: usize) -> Vec<Pod> {
        (0..count)
            .map(|i| {
                let name = format!("{node}-{}-{i}", labels.first().map_or("none", |l| l.1));
                labels.iter().fold(PodBuilder::new(&name).namespace(ns).node(node), |b, (k, v)| b.label(k, v)).build()
            })
            .collect()
    }

    fn scores(snapshot: &Snapshot, labels: &[(&str, &str)], candidates: &[&str]) -> Vec<i64> {
        let arg = serde_json::json!({"label": "zone"});
        let priority = build(&args(Some(&arg))).unwrap();
        let pod = labels.iter().fold(PodBuilder::new("incoming"), |b, (k, v)| b.label(k, v)).build();
        crate::priorities::testing::scores(&*priority, &PodContext::new(pod), snapshot, candidates)
    }

    const WEB_FE: &[(&str, &str)] = &[("app", "web"), ("tier", "fe")];

    fn cluster() -> Snapshot {
        let mut s = Snapshot::build(
            [
                NodeBuilder::new("a1").label("zone", "a").build(),
                NodeBuilder::new("a2").label("zone", "a").build(),
                NodeBuilder::new("b1").label("zone", "b").build(),
                NodeBuilder::new("c1").label("zone", "c").build(),
                NodeBuilder::new("nl").build(),
            ],
            [
                pods("a1", "default", &[("app", "web")], 1),
                pods("a2", "default", &[("app", "web")], 2),
                pods("b1", "default", &[("app", "web")], 1),
                pods("nl", "default", &[("app", "web")], 2),
                // Only the second Service's pods, and another namespace's.
                pods("c1", "default", &[("tier", "fe")], 3),
                pods("c1", "other", &[("app", "web")], 4),
            ]
            .into_iter()
            .flatten(),
        );
        // Both select the incoming pod; "alpha" comes first.
        s.upsert(service("default", "beta", Some(&[("tier", "fe")])));
        s.upsert(service("default", "alpha", Some(&[("app", "web")])));
        s
    }

    #[test]
    fn spreads_the_first_services_pods_over_label_values() {
        let s = cluster();
        // app=web pods of default: a1 1, a2 2, b1 1, c1 0, nl 2: numServicePods 6 (nl included).
        // Per zone: a 3, b 1, c 0.
        // a1, a2: 10*(6-3)/6 = 5; b1: 10*(6-1)/6 = 8.33 -> 8; c1: 10*(6-0)/6 = 10; nl: no label, 0.
        assert_eq!(scores(&s, WEB_FE, &["a1", "a2", "b1", "c1", "nl"]), [5, 5, 8, 10, 0]);
        // Over the candidates only: a2 2, c1 0, nl 2: numServicePods 4; a: 2, c: 0.
        // a2: 10*(4-2)/4 = 5; c1: 10*(4-0)/4 = 10; nl: 0.
        assert_eq!(scores(&s, WEB_FE, &["a2", "c1", "nl"]), [5, 10, 0]);
    }

    #[test]
    fn without_a_service_labelled_nodes_score_ten() {
        let s = cluster();
        assert_eq!(scores(&s, &[("app", "api")], &["a1", "b1", "nl"]), [10, 10, 0]);
        // The first Service has an empty selector: no pod counts (1.17's `selector.Empty()`).
        let mut s = cluster();
        s.upsert(service("default", "aaa", Some(&[])));
        assert_eq!(scores(&s, WEB_FE, &["a1", "b1", "nl"]), [10, 10, 0]);
    }

    /// Pods being deleted do not count (1.14-1.17 and v1.22's `countMatchingPods`: "Ignore pods
    /// being deleted for spreading purposes"); the Policy oracle found the extender counting them.
    #[test]
    fn pods_being_deleted_do_not_count() {
        let mut s = Snapshot::build(
            [NodeBuilder::new("a1").label("zone", "a").build(), NodeBuilder::new("b1").label("zone", "b").build()],
            [PodBuilder::new("going").node("a1").label("app", "web").terminating().build()],
        );
        s.upsert(service("default", "alpha", Some(&[("app", "web")])));
        // No service pod counts: every labelled node scores 10, as with none at all.
        assert_eq!(scores(&s, WEB_FE, &["a1", "b1"]), [10, 10]);
    }

    #[test]
    fn takes_its_name_from_the_policy_entry() {
        let arg = serde_json::json!({"label": "zone"});
        assert_eq!(build(&args(Some(&arg))).unwrap().name(), "ServiceZone");
    }

    #[test]
    fn argument_is_validated() {
        let cases = [
            (None, "argument.serviceAntiAffinity: required by ServiceAntiAffinityPriority"),
            (Some(serde_json::json!({})), "argument.serviceAntiAffinity.label: missing"),
            (Some(serde_json::json!({"label": ""})), "argument.serviceAntiAffinity.label: must not be empty"),
            (
                Some(serde_json::json!({"label": 3})),
                "argument.serviceAntiAffinity: invalid type: integer `3`, expected a string",
            ),
            (
                Some(serde_json::json!({"labels": ["zone"]})),
                "argument.serviceAntiAffinity: unknown field `labels`, expected `label`",
            ),
            (Some(serde_json::json!(["zone"])), "argument.serviceAntiAffinity: must be an object with a label"),
        ];
        for (arg, want) in cases {
            assert_eq!(build(&args(arg.as_ref())).unwrap_err().to_string(), want, "{arg:?}");
        }
    }
}
