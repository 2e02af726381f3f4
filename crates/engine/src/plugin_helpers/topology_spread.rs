//! `topologySpreadConstraints` as both the EvenPodsSpread predicate (`DoNotSchedule`) and
//! EvenPodsSpreadPriority (`ScheduleAnyway`) read them: compiled once per request for the incoming
//! pod, with the node inclusion policies.

use k8s_openapi::api::core::v1::TopologySpreadConstraint;

use crate::cluster::objects::Pod;
use crate::labels::selectors::LabelSelector;

const HONOR: &str = "Honor";

/// One constraint, compiled for the incoming pod.
#[derive(Debug)]
pub(crate) struct SpreadConstraint {
    pub(crate) max_skew: i64,
    pub(crate) topology_key: String,
    /// `labelSelector` (nil matches nothing, `{}` everything) with `key In (pod's value)` added for
    /// each `matchLabelKeys` key the pod has.
    pub(crate) selector: LabelSelector,
    /// `minDomains`, 1 when unset.
    pub(crate) min_domains: i64,
    /// `nodeAffinityPolicy` is `Honor` (the default; upstream treats any other value as Ignore).
    pub(crate) honor_node_affinity: bool,
    /// `nodeTaintsPolicy` is `Honor` (the default is `Ignore`).
    pub(crate) honor_node_taints: bool,
    /// 1 when the incoming pod matches the selector itself, else 0.
    pub(crate) self_match: i64,
}

impl SpreadConstraint {
    pub(crate) fn compile(c: &TopologySpreadConstraint, pod: &Pod) -> Self {
        let mut selector = c.label_selector.as_ref().map_or_else(LabelSelector::nothing, LabelSelector::compile);
        for key in c.match_label_keys.iter().flatten() {
            if let Some(value) = pod.metadata.labels.get(key) {
                selector.and_equals(key, value);
            }
        }
        let self_match = i64::from(selector.matches(&pod.metadata.labels));
        SpreadConstraint {
            max_skew: i64::from(c.max_skew),
            topology_key: c.topology_key.clone(),
            selector,
            min_domains: i64::from(c.min_domains.unwrap_or(1)),
            honor_node_affinity: c.node_affinity_policy.as_deref().is_none_or(|p| p == HONOR),
            honor_node_taints: c.node_taints_policy.as_deref() == Some(HONOR),
            self_match,
        }
    }

    /// Whether a placed pod counts in this constraint's domains: it is in the incoming pod's
    /// namespace, matches the selector, and is not terminating (upstream skips pods whose
    /// `deletionTimestamp` is set, "Bypass terminating Pod", kubernetes#87621).
    pub(crate) fn counts(&self, namespace: &str, p: &Pod) -> bool {
        !p.is_terminating() && p.metadata.namespace == namespace && self.selector.matches(&p.metadata.labels)
    }

    /// The constraints of the pod with this `whenUnsatisfiable`, compiled.
    pub(crate) fn of(pod: &Pod, when_unsatisfiable: &str) -> Vec<SpreadConstraint> {
        pod.spec
            .topology_spread_constraints
            .iter()
            .filter(|c| c.when_unsatisfiable == when_unsatisfiable)
            .map(|c| SpreadConstraint::compile(c, pod))
            .collect()
    }
}
