//! `PodContext`: the pod being scheduled, with what the plugins read of it computed once per
//! request instead of once per node. Pod data only: what a plugin needs of the cluster for a
//! request it computes in its own `prepare` (see [`crate::framework::predicate`]).

use crate::cluster::host_ports::{pod_host_ports, HostPort};
use crate::cluster::intern::IStr;
use crate::cluster::objects::Pod;
use crate::cluster::pod_requests::{requests_to_place, requests_to_score};
use crate::cluster::resources::{NonZero, Resource};
use crate::cluster::SchedulerVersion;
use crate::labels::selectors::NodeSelectorTerms;

/// The pod being scheduled, prepared for the plugins.
#[derive(Debug, Clone)]
pub struct PodContext {
    pub pod: Pod,
    /// What the pod needs of a node, as NodeResourcesFit's PreFilter computes it (pod-level
    /// resources, containers, init containers, sidecars, overhead; `cluster::pod_requests`).
    pub requests: Resource,
    /// The names of `requests.scalar`, in its order, interned: what a reason names when a node is
    /// short of one (`framework::ResourceName::Scalar`), without an allocation per node.
    pub scalar_resources: Vec<IStr>,
    /// cpu and memory as the resource scores count them (defaults for containers that ask none).
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
    /// The pod, scored as the newest tested kube-scheduler scores it (tests and tools; a request
    /// prepares it for the model's version: [`PodContext::for_version`]).
    pub fn new(pod: Pod) -> Self {
        PodContext::for_version(pod, SchedulerVersion::default())
    }

    /// The pod, as `version`'s kube-scheduler reads it. (Only its scores differ between versions,
    /// and only while the pod has a resize in its status: a pod being scheduled has none, a
    /// running pod placed again by whatif may.)
    pub fn for_version(pod: Pod, version: SchedulerVersion) -> Self {
        let required_node_affinity = pod
            .spec
            .affinity
            .as_ref()
            .and_then(|a| a.node_affinity.as_ref())
            .and_then(|na| na.required_during_scheduling_ignored_during_execution.as_ref())
            .map(|selector| NodeSelectorTerms::compile(&selector.node_selector_terms));
        let requests = requests_to_place(&pod);
        PodContext {
            scalar_resources: requests.scalar.iter().map(|(name, _)| IStr::new(name)).collect(),
            requests,
            non_zero_requests: requests_to_score(&pod, version),
            host_ports: pod_host_ports(&pod),
            best_effort: pod.is_best_effort(),
            priority: pod.priority(),
            required_node_affinity,
            pod,
        }
    }
}
