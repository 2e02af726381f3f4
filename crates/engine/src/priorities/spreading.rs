//! What the spreading priorities (SelectorSpreadPriority, ServiceSpreadingPriority,
//! ServiceAntiAffinityPriority) share: counting the pods a selector picks per node, zone keys, and
//! counts summed per zone. The Services that select a pod are in
//! [`crate::plugin_helpers::services`], as CheckServiceAffinity reads them too.
//!
//! Upstream (kube-scheduler 1.14-1.17, `pkg/scheduler/algorithm/priorities/selector_spreading.go`)
//! normalises over the nodes being scored (the map results), not over the whole cluster: the
//! highest count, the counts per zone and the number of service pods are sums over the candidates.
//! `Priority::prepare` gets the candidates, so it computes those once per request (over the known
//! candidates) and `score` turns a node's count into its final score with lookups.

use crate::hashing::HashMap;

use crate::cluster::objects::Pod;
use crate::framework::ClusterView;
use crate::labels::selectors::LabelSelector;

pub use crate::cluster::node_zone::{zone_key, BETA_REGION, BETA_ZONE, GA_REGION, GA_ZONE};

/// The pods that count: pods of one namespace matching every selector of a non-empty list.
#[derive(Debug, Clone)]
pub struct PodMatcher {
    pub namespace: String,
    /// ANDed; never empty.
    pub selectors: Vec<LabelSelector>,
    /// A `key=value` every matching pod has, to look candidates up in the label index.
    pub equality: Option<(String, String)>,
}

impl PodMatcher {
    pub fn matches(&self, pod: &Pod) -> bool {
        pod.metadata.namespace == self.namespace && self.selectors.iter().all(|s| s.matches(&pod.metadata.labels))
    }

    /// A pod the spreading counts: a match that is not being deleted (`countMatchingPods`:
    /// "Ignore pods being deleted for spreading purposes").
    fn counts(&self, pod: &Pod) -> bool {
        !pod.is_terminating() && self.matches(pod)
    }

    /// The matching assigned pods per node name (upstream's `countMatchingPods` on every node),
    /// pods being deleted left out.
    pub fn count_by_node(&self, view: &ClusterView<'_>) -> HashMap<String, i64> {
        let mut counts: HashMap<String, i64> = HashMap::default();
        let mut add = |node: &str| match counts.get_mut(node) {
            Some(c) => *c += 1,
            None => {
                counts.insert(node.to_string(), 1);
            }
        };
        match &self.equality {
            Some((k, v)) => {
                for p in view.snapshot.pods_labelled(k, v).filter(|p| self.counts(&p.pod)) {
                    add(&p.pod.spec.node_name);
                }
            }
            None => {
                for node in view.nodes() {
                    for _ in node.pods.pods().iter().filter(|p| self.counts(&p.pod)) {
                        add(node.name());
                    }
                }
            }
        }
        counts
    }
}

/// A count summed per zone (`zone_key`) over nodes: upstream's per-zone sums over the candidates.
#[derive(Debug, Default)]
pub struct ZoneSums {
    /// region -> zone -> sum.
    sums: HashMap<String, HashMap<String, i64>>,
}

impl ZoneSums {
    /// Adds a node's count to its zone's sum; a node without a zone (its [`zone_key`]) adds
    /// nothing.
    pub fn add(&mut self, zone_key: Option<(&str, &str)>, count: i64) {
        let Some((region, zone)) = zone_key else { return };
        let zones = match self.sums.get_mut(region) {
            Some(zones) => zones,
            None => self.sums.entry(region.to_string()).or_default(),
        };
        match zones.get_mut(zone) {
            Some(sum) => *sum += count,
            None => {
                zones.insert(zone.to_string(), count);
            }
        }
    }

    /// The sum of a node's zone (0 for a zone no node added to), `None` when it has no zone.
    pub fn of(&self, zone_key: Option<(&str, &str)>) -> Option<i64> {
        zone_key.map(|(region, zone)| self.sums.get(region).and_then(|z| z.get(zone)).copied().unwrap_or(0))
    }

    /// Whether no node with a zone was added.
    pub fn is_empty(&self) -> bool {
        self.sums.is_empty()
    }

    /// The highest sum, 0 when there is none.
    pub fn max(&self) -> i64 {
        self.sums.values().flat_map(HashMap::values).copied().max().unwrap_or(0)
    }
}

/// Test objects: Services, ReplicationControllers, ReplicaSets and StatefulSets.
#[cfg(test)]
pub mod test_objects {
    use std::collections::BTreeMap;

    use k8s_openapi::api::apps::v1::{ReplicaSet, ReplicaSetSpec, StatefulSet, StatefulSetSpec};
    use k8s_openapi::api::core::v1::{ReplicationController, ReplicationControllerSpec, Service, ServiceSpec};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement, ObjectMeta};

    use crate::cluster::ClusterObject;

    pub fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn meta(namespace: &str, name: &str) -> ObjectMeta {
        ObjectMeta { namespace: Some(namespace.into()), name: Some(name.into()), ..ObjectMeta::default() }
    }

    /// A Service; `None` leaves `spec.selector` unset.
    pub fn service(namespace: &str, name: &str, selector: Option<&[(&str, &str)]>) -> ClusterObject {
        ClusterObject::Service(Box::new(Service {
            metadata: meta(namespace, name),
            spec: Some(ServiceSpec { selector: selector.map(map), ..ServiceSpec::default() }),
            ..Service::default()
        }))
    }

    pub fn replication_controller(namespace: &str, name: &str, selector: &[(&str, &str)]) -> ClusterObject {
        ClusterObject::ReplicationController(Box::new(ReplicationController {
            metadata: meta(namespace, name),
            spec: Some(ReplicationControllerSpec { selector: Some(map(selector)), ..Default::default() }),
            ..Default::default()
        }))
    }

    /// A label selector: `matchLabels` and `matchExpressions` as `(key, operator, values)`.
    pub fn selector(labels: &[(&str, &str)], exprs: &[(&str, &str, &[&str])]) -> LabelSelector {
        LabelSelector {
            match_labels: (!labels.is_empty()).then(|| map(labels)),
            match_expressions: (!exprs.is_empty()).then(|| {
                exprs
                    .iter()
                    .map(|(k, op, vs)| LabelSelectorRequirement {
                        key: k.to_string(),
                        operator: op.to_string(),
                        values: (!vs.is_empty()).then(|| vs.iter().map(|v| v.to_string()).collect()),
                    })
                    .collect()
            }),
        }
    }

    pub fn replica_set(namespace: &str, name: &str, selector: LabelSelector) -> ClusterObject {
        ClusterObject::ReplicaSet(Box::new(ReplicaSet {
            metadata: meta(namespace, name),
            spec: ReplicaSetSpec { selector, ..Default::default() },
            ..Default::default()
        }))
    }

    pub fn stateful_set(namespace: &str, name: &str, selector: LabelSelector) -> ClusterObject {
        ClusterObject::StatefulSet(Box::new(StatefulSet {
            metadata: meta(namespace, name),
            spec: StatefulSetSpec { selector, ..Default::default() },
            ..Default::default()
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zone_key_reads_beta_labels_first_then_ga_ones() {
        let m = test_objects::map;
        assert_eq!(zone_key(&m(&[])), None);
        assert_eq!(zone_key(&m(&[("zone", "a")])), None);
        assert_eq!(zone_key(&m(&[(GA_ZONE, "a")])), Some(("", "a")));
        assert_eq!(zone_key(&m(&[(BETA_ZONE, "b"), (GA_ZONE, "a")])), Some(("", "b")));
        assert_eq!(zone_key(&m(&[(BETA_REGION, "r"), (GA_REGION, "s")])), Some(("r", "")));
        assert_eq!(zone_key(&m(&[(GA_REGION, "s"), (GA_ZONE, "a")])), Some(("s", "a")));
        // The beta label wins even when empty: its value is what upstream reads.
        assert_eq!(zone_key(&m(&[(BETA_ZONE, ""), (GA_ZONE, "a")])), None);
    }

    #[test]
    fn zone_sums_add_per_zone_key() {
        let m = test_objects::map;
        let mut sums = ZoneSums::default();
        assert!(sums.is_empty());
        assert_eq!(sums.max(), 0);
        sums.add(zone_key(&m(&[(BETA_ZONE, "a")])), 2);
        sums.add(zone_key(&m(&[(GA_ZONE, "a")])), 1);
        sums.add(zone_key(&m(&[(BETA_REGION, "r"), (BETA_ZONE, "a")])), 0);
        sums.add(zone_key(&m(&[])), 5);
        assert!(!sums.is_empty());
        assert_eq!(sums.of(zone_key(&m(&[(GA_ZONE, "a")]))), Some(3));
        assert_eq!(sums.of(zone_key(&m(&[(BETA_REGION, "r"), (BETA_ZONE, "a")]))), Some(0));
        assert_eq!(sums.of(zone_key(&m(&[(GA_ZONE, "z")]))), Some(0));
        assert_eq!(sums.of(zone_key(&m(&[]))), None);
        assert_eq!(sums.max(), 3);
    }
}
