//! `PodContext`: everything about the incoming pod that the predicates read, computed once per
//! request instead of once per node, including the cluster-wide counts some predicates need
//! (topology pairs for inter-pod affinity and spread, the pods of the pod's service).

use std::sync::Arc;

use crate::cluster::host_ports::{pod_host_ports, HostPort};
use crate::cluster::objects::Pod;
use crate::cluster::resources::{pod_non_zero_requests, pod_requests, NonZero, Resource};
use crate::cluster::volumes::VolumeObjects;
use crate::cluster::{NodeInfo, PodInfo};
use crate::engine::view::ClusterView;
use crate::policy::Plan;
use crate::predicates::{check_service_affinity, even_pods_spread, match_inter_pod_affinity, Kind};
use crate::selectors::NodeSelectorTerms;

/// The pod being scheduled, prepared for the predicates.
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
    /// Topology counts for MatchInterPodAffinity, when the plan runs it.
    pub inter_pod_affinity: Option<match_inter_pod_affinity::State>,
    /// Topology counts for EvenPodsSpread, when the plan runs it.
    pub spread: Option<even_pods_spread::State>,
    /// The pods of the pod's service, for CheckServiceAffinity, when the plan runs it.
    pub service_affinity: Option<check_service_affinity::State>,
    /// The PersistentVolumeClaims, PersistentVolumes, StorageClasses and CSINodes the volume
    /// predicates resolve volumes through.
    pub volumes: VolumeObjects,
}

impl PodContext {
    /// The pod alone, without cluster-wide state: enough for the node-level predicates.
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
            inter_pod_affinity: None,
            spread: None,
            service_affinity: None,
            volumes: VolumeObjects::default(),
            pod,
        }
    }

    /// The pod with the cluster-wide state that the plan's predicates need, computed once for the
    /// request.
    pub fn for_request(pod: Pod, view: &ClusterView<'_>, plan: &Plan) -> Self {
        let mut ctx = PodContext::new(pod);
        ctx.volumes = view.snapshot.volumes().clone();
        if plan.has(Kind::MatchInterPodAffinity) {
            ctx.inter_pod_affinity = Some(match_inter_pod_affinity::State::compute(&ctx, view));
        }
        if plan.has(Kind::EvenPodsSpread) {
            ctx.spread = Some(even_pods_spread::State::compute(&ctx, view));
        }
        if plan.has(Kind::CheckServiceAffinity) {
            ctx.service_affinity = Some(check_service_affinity::State::compute(&ctx, view));
        }
        ctx
    }

    /// This context as it would be if `added` ran on `node` too: what the first pass of the
    /// nominated-pod double pass checks against (upstream's `meta.AddPod`). `None` when no state
    /// depends on other pods, so the context can be used as it is.
    pub fn with_added_pods(&self, node: &NodeInfo, added: &[&Arc<PodInfo>]) -> Option<PodContext> {
        self.with_changed_pods(node, added, Change::Add)
    }

    /// This context as it would be if `removed` no longer ran on `node`: what preemption checks
    /// once the victims are gone (upstream's `meta.RemovePod`). `None` when no state depends on
    /// other pods.
    pub fn with_removed_pods(&self, node: &NodeInfo, removed: &[&Arc<PodInfo>]) -> Option<PodContext> {
        self.with_changed_pods(node, removed, Change::Remove)
    }

    fn with_changed_pods(&self, node: &NodeInfo, pods: &[&Arc<PodInfo>], change: Change) -> Option<PodContext> {
        if self.inter_pod_affinity.is_none() && self.spread.is_none() && self.service_affinity.is_none() {
            return None;
        }
        let mut ctx = self.clone();
        for pod in pods {
            match change {
                Change::Add => {
                    if let Some(s) = ctx.inter_pod_affinity.as_mut() {
                        s.add_pod(&self.pod, pod, node);
                    }
                    if let Some(s) = ctx.spread.as_mut() {
                        s.add_pod(&self.pod, pod, node);
                    }
                    if let Some(s) = ctx.service_affinity.as_mut() {
                        s.add_pod(&self.pod, pod, node);
                    }
                }
                Change::Remove => {
                    if let Some(s) = ctx.inter_pod_affinity.as_mut() {
                        s.remove_pod(&self.pod, pod, node);
                    }
                    if let Some(s) = ctx.spread.as_mut() {
                        s.remove_pod(&self.pod, pod, node);
                    }
                    if let Some(s) = ctx.service_affinity.as_mut() {
                        s.remove_pod(&self.pod, pod, node);
                    }
                }
            }
        }
        Some(ctx)
    }
}

#[derive(Debug, Clone, Copy)]
enum Change {
    Add,
    Remove,
}
