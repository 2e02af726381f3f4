//! What the spreading priorities (SelectorSpreadPriority, ServiceSpreadingPriority,
//! ServiceAntiAffinityPriority) share: the Services that select a pod, counting the pods a
//! selector picks per node, zone keys, and the raw score that carries a node's group (zone, label
//! value) to `normalize`.
//!
//! Upstream (kube-scheduler 1.14-1.17, `pkg/scheduler/algorithm/priorities/selector_spreading.go`)
//! normalises over the nodes being scored (the map results), not over the whole cluster: the
//! highest count, the counts per zone and the number of service pods are sums over the candidates.
//! `Scorer::normalize` sees only the candidates' raw scores, so a raw score carries the node's
//! group in its high bits: `slot << 32 | count`, slot 0 meaning "no group". The groups are interned
//! once per request over every node of the view, so `score` only looks them up.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use k8s_openapi::api::core::v1::Service;

use crate::cluster::objects::Pod;
use crate::engine::view::ClusterView;
use crate::selectors::LabelSelector;

/// `failure-domain.beta.kubernetes.io/zone`: read first by `GetZoneKey` (1.17).
pub const BETA_ZONE: &str = "failure-domain.beta.kubernetes.io/zone";
/// `failure-domain.beta.kubernetes.io/region`: read first by `GetZoneKey` (1.17).
pub const BETA_REGION: &str = "failure-domain.beta.kubernetes.io/region";
/// `topology.kubernetes.io/zone`: read when the beta label is absent (1.17 onwards).
pub const GA_ZONE: &str = "topology.kubernetes.io/zone";
/// `topology.kubernetes.io/region`: read when the beta label is absent (1.17 onwards).
pub const GA_REGION: &str = "topology.kubernetes.io/region";

/// Upstream's `utilnode.GetZoneKey` (1.17) as `(region, zone)`: each from the beta label when the
/// node has it (even empty), else from the GA label; `None` when both come out empty.
pub fn zone_key(labels: &BTreeMap<String, String>) -> Option<(&str, &str)> {
    let read = |beta: &str, ga: &str| labels.get(beta).or_else(|| labels.get(ga)).map_or("", String::as_str);
    let zone = read(BETA_ZONE, GA_ZONE);
    let region = read(BETA_REGION, GA_REGION);
    (!region.is_empty() || !zone.is_empty()).then_some((region, zone))
}

/// The Services of the pod's namespace that select it (upstream's `GetPodServices`): a Service
/// without a selector selects nothing, one with an empty selector everything.
pub fn pod_services<'a>(pod: &'a Pod, view: &'a ClusterView<'_>) -> impl Iterator<Item = &'a Arc<Service>> + 'a {
    view.snapshot.services_in(&pod.metadata.namespace).filter(move |svc| {
        service_selector(svc).is_some_and(|selector| LabelSelector::from_map(selector).matches(&pod.metadata.labels))
    })
}

/// A Service's `spec.selector`, when it has one.
pub fn service_selector(svc: &Service) -> Option<&BTreeMap<String, String>> {
    svc.spec.as_ref().and_then(|spec| spec.selector.as_ref())
}

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

    /// The matching assigned pods per node name (upstream's `countMatchingPods` on every node).
    /// Pods being deleted count too: the model does not keep `deletionTimestamp`.
    pub fn count_by_node(&self, view: &ClusterView<'_>) -> HashMap<String, i64> {
        let mut counts: HashMap<String, i64> = HashMap::new();
        let mut add = |node: &str| match counts.get_mut(node) {
            Some(c) => *c += 1,
            None => {
                counts.insert(node.to_string(), 1);
            }
        };
        match &self.equality {
            Some((k, v)) => {
                for p in view.snapshot.pods_labelled(k, v).filter(|p| self.matches(&p.pod)) {
                    add(&p.pod.spec.node_name);
                }
            }
            None => {
                for node in view.nodes() {
                    for _ in node.pods.pods().iter().filter(|p| self.matches(&p.pod)) {
                        add(node.name());
                    }
                }
            }
        }
        counts
    }
}

/// Slot 0: the node has no group.
const NO_GROUP: i64 = 0;
const SLOT_SHIFT: u32 = 32;
const COUNT_MASK: i64 = (1 << SLOT_SHIFT) - 1;

/// The raw score of a node: its group slot and its count.
pub fn encode(slot: i64, count: i64) -> i64 {
    (slot << SLOT_SHIFT) | count.clamp(0, COUNT_MASK)
}

/// `(slot, count)` of a raw score.
pub fn decode(raw: i64) -> (usize, i64) {
    let slot = usize::try_from(raw >> SLOT_SHIFT).unwrap_or(0);
    (slot, raw & COUNT_MASK)
}

/// Slots (1, 2, ...) for the zones of every node of the view.
#[derive(Debug, Default)]
pub struct ZoneSlots {
    /// region -> zone -> slot.
    slots: HashMap<String, HashMap<String, i64>>,
    len: usize,
}

impl ZoneSlots {
    pub fn of(view: &ClusterView<'_>) -> Self {
        let mut out = ZoneSlots::default();
        for node in view.nodes() {
            let Some((region, zone)) = zone_key(&node.node().metadata.labels) else { continue };
            if out.slots.get(region).is_some_and(|z| z.contains_key(zone)) {
                continue;
            }
            out.len += 1;
            let slot = i64::try_from(out.len).unwrap_or(i64::MAX);
            out.slots.entry(region.to_string()).or_default().insert(zone.to_string(), slot);
        }
        out
    }

    /// The slot of a node's zone, 0 without one.
    pub fn slot(&self, labels: &BTreeMap<String, String>) -> i64 {
        zone_key(labels)
            .and_then(|(region, zone)| self.slots.get(region).and_then(|z| z.get(zone)))
            .copied()
            .unwrap_or(NO_GROUP)
    }

    /// The number of slots, the "no group" slot included.
    pub fn slot_count(&self) -> usize {
        self.len + 1
    }
}

/// Slots (1, 2, ...) for the values a node label takes over every node of the view.
#[derive(Debug, Default)]
pub struct LabelValueSlots {
    label: String,
    slots: HashMap<String, i64>,
}

impl LabelValueSlots {
    pub fn of(label: &str, view: &ClusterView<'_>) -> Self {
        let mut slots: HashMap<String, i64> = HashMap::new();
        for node in view.nodes() {
            let Some(value) = node.node().metadata.labels.get(label) else { continue };
            if !slots.contains_key(value) {
                let slot = i64::try_from(slots.len() + 1).unwrap_or(i64::MAX);
                slots.insert(value.clone(), slot);
            }
        }
        LabelValueSlots { label: label.to_string(), slots }
    }

    /// The slot of a node's value of the label, 0 when it lacks the label.
    pub fn slot(&self, labels: &BTreeMap<String, String>) -> i64 {
        labels.get(&self.label).and_then(|v| self.slots.get(v)).copied().unwrap_or(NO_GROUP)
    }

    /// The number of slots, the "no group" slot included.
    pub fn slot_count(&self) -> usize {
        self.slots.len() + 1
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
        ClusterObject::Service(Service {
            metadata: meta(namespace, name),
            spec: Some(ServiceSpec { selector: selector.map(map), ..ServiceSpec::default() }),
            ..Service::default()
        })
    }

    pub fn replication_controller(namespace: &str, name: &str, selector: &[(&str, &str)]) -> ClusterObject {
        ClusterObject::ReplicationController(ReplicationController {
            metadata: meta(namespace, name),
            spec: Some(ReplicationControllerSpec { selector: Some(map(selector)), ..Default::default() }),
            ..Default::default()
        })
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
        ClusterObject::ReplicaSet(ReplicaSet {
            metadata: meta(namespace, name),
            spec: Some(ReplicaSetSpec { selector, ..Default::default() }),
            ..Default::default()
        })
    }

    pub fn stateful_set(namespace: &str, name: &str, selector: LabelSelector) -> ClusterObject {
        ClusterObject::StatefulSet(StatefulSet {
            metadata: meta(namespace, name),
            spec: Some(StatefulSetSpec { selector, ..Default::default() }),
            ..Default::default()
        })
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
    fn raw_scores_carry_slot_and_count() {
        for (slot, count) in [(0, 0), (0, 7), (3, 0), (12, 5)] {
            assert_eq!(decode(encode(slot, count)), (usize::try_from(slot).unwrap(), count));
        }
    }
}
