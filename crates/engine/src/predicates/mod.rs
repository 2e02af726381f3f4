//! The predicates: one file each, a function of the pod being scheduled (`PodContext`), what the
//! predicate prepared for the request, and one node (`NodeInfo`) that reports the reasons the pod
//! does not fit, in the wording of kube-scheduler's Policy-era predicates. They are written
//! against [`crate::framework`] and listed in [`crate::registry`].

#[cfg(test)]
use crate::cluster::NodeInfo;
#[cfg(test)]
use crate::framework::{AnyPredicate, ClusterView, PodContext, Reason};

pub mod check_node_condition;
pub mod check_node_disk_pressure;
pub mod check_node_label_presence;
pub mod check_node_memory_pressure;
pub mod check_node_pid_pressure;
pub mod check_node_unschedulable;
pub mod check_service_affinity;
pub mod check_volume_binding;
pub mod even_pods_spread;
pub mod general_predicates;
pub mod host_name;
pub mod ignored_resources;
pub mod match_inter_pod_affinity;
pub mod match_node_selector;
pub mod max_azure_disk_volume_count;
pub mod max_csi_volume_count;
pub mod max_ebs_volume_count;
pub mod max_gce_pd_volume_count;
pub mod no_disk_conflict;
pub mod no_volume_zone_conflict;
pub mod node_pressure;
pub mod pod_fits_host_ports;
pub mod pod_fits_resources;
pub mod pod_tolerates_node_taints;
#[cfg(test)]
pub mod test_argument;
pub mod volume_count;

/// Runs one predicate on a pod and a node, for the predicates' own tests: prepared over a cluster
/// of just that node, then checked.
#[cfg(test)]
pub(crate) fn reasons_of(
    predicate: &dyn AnyPredicate,
    pod: crate::cluster::objects::Pod,
    node: &NodeInfo,
) -> Vec<Reason> {
    reasons_with(predicate, &crate::cluster::volumes::VolumeObjects::default(), pod, node)
}

/// [`reasons_of`] with these volume objects (claims, volumes, classes, CSINodes) in the cluster.
#[cfg(test)]
pub(crate) fn reasons_with(
    predicate: &dyn AnyPredicate,
    volumes: &crate::cluster::volumes::VolumeObjects,
    pod: crate::cluster::objects::Pod,
    node: &NodeInfo,
) -> Vec<Reason> {
    let snapshot = crate::cluster::Snapshot::build([node.node().clone()], []).with_volumes(volumes.clone());
    let ctx = PodContext::new(pod);
    let state = predicate.prepare(&ctx, &ClusterView::of(&snapshot));
    let mut reasons = Vec::new();
    predicate.check(&ctx, state.as_deref(), node, &mut reasons).unwrap();
    reasons
}
