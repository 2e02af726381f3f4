//! `PodContext`: the pod being scheduled, with what the plugins read of it computed once per
//! request instead of once per node. Pod data only: what a plugin needs of the cluster for a
//! request it computes in its own `prepare` (see [`crate::framework::predicate`]).

use crate::cluster::host_ports::{pod_host_ports, HostPort};
use crate::cluster::objects::Pod;
use crate::cluster::resources::{pod_non_zero_requests, pod_requests, NonZero, Resource};
use crate::labels::selectors::NodeSelectorTerms;

/// The pod being scheduled, prepared for the plugins.
#[derive(Debug, Clone)]
pub struct PodContext {
    pub pod: Pod,
    /// What the pod needs of a node (containers, init containers, sidecars, overhead).
    pub requests: Resource,
    /// cpu and memory as the priorities count them (defaults for containers that ask none).
    pub non_zero_requests: NonZero,
    /// The host ports the pod binds.
    pub host_ports: Vec<HostPort>,
    /// `spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution`, compiled.
    pub required_node_affinity: Option<NodeSelectorTerms>,
    /// BestEffort QoS: refused by nodes under memory pressure.
    pub best_effort: bool,
    pub priority: i32,
}

impl PodContext {
    pub fn new(pod: Pod) -> Self {
        let required_node_affinity = pod
            .spec
            .affinity
            .as_ref()
            .and_then(|a| a.node_affinity.as_ref())
            .and_then(|na| na.required_during_scheduling_ignored_during_execution.as_ref())
            .map(|selector| NodeSelectorTerms::compile(&selector.node_selector_terms));
        PodContext {
            requests: pod_requests(&pod),
            non_zero_requests: pod_non_zero_requests(&pod),
            host_ports: pod_host_ports(&pod),
            best_effort: pod.is_best_effort(),
            priority: pod.priority(),
            required_node_affinity,
            pod,
        }
    }
}
