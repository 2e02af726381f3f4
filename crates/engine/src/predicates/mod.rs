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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::objects::Pod;
    use crate::cluster::volumes::VolumeObjects;
    use crate::cluster::ConditionFailure;
    use crate::framework::{Cause, Pressure, ReasonKind, ResourceName};
    use crate::testing::{claim_volume, PodBuilder};

    /// Every fixed reason a predicate gives says what it is, beside upstream's words (the reasons
    /// that name a resource, a taint or a label are tested beside their predicates).
    #[test]
    fn every_fixed_reason_says_what_it_is() {
        use ReasonKind::{Resolvable, Unresolvable};
        let insufficient = |resource| Cause::Insufficient { resource };
        let cases: Vec<(Reason, Cause, ReasonKind)> = vec![
            (pod_fits_resources::ERR_INSUFFICIENT_PODS, insufficient(ResourceName::Pods), Resolvable),
            (pod_fits_resources::ERR_INSUFFICIENT_CPU, insufficient(ResourceName::Cpu), Resolvable),
            (pod_fits_resources::ERR_INSUFFICIENT_MEMORY, insufficient(ResourceName::Memory), Resolvable),
            (
                pod_fits_resources::ERR_INSUFFICIENT_EPHEMERAL_STORAGE,
                insufficient(ResourceName::EphemeralStorage),
                Resolvable,
            ),
            (pod_fits_host_ports::ERR_POD_NOT_FITS_HOST_PORTS, Cause::HostPortConflict, Resolvable),
            (host_name::ERR_POD_NOT_MATCH_HOST_NAME, Cause::HostNameMismatch, Unresolvable),
            (match_node_selector::ERR_NODE_SELECTOR_NOT_MATCH, Cause::NodeSelectorMismatch, Unresolvable),
            (check_node_unschedulable::ERR_NODE_UNSCHEDULABLE, Cause::NodeUnschedulable, Unresolvable),
            (check_node_condition::ERR_NODE_NOT_READY, Cause::NodeCondition(ConditionFailure::NotReady), Unresolvable),
            (
                check_node_condition::ERR_NODE_OUT_OF_DISK,
                Cause::NodeCondition(ConditionFailure::OutOfDisk),
                Unresolvable,
            ),
            (
                check_node_condition::ERR_NODE_NETWORK_UNAVAILABLE,
                Cause::NodeCondition(ConditionFailure::NetworkUnavailable),
                Unresolvable,
            ),
            (
                check_node_memory_pressure::ERR_NODE_UNDER_MEMORY_PRESSURE,
                Cause::NodePressure(Pressure::Memory),
                Unresolvable,
            ),
            (check_node_disk_pressure::ERR_NODE_UNDER_DISK_PRESSURE, Cause::NodePressure(Pressure::Disk), Unresolvable),
            (check_node_pid_pressure::ERR_NODE_UNDER_PID_PRESSURE, Cause::NodePressure(Pressure::Pid), Unresolvable),
            (check_service_affinity::ERR_SERVICE_AFFINITY_VIOLATED, Cause::ServiceAffinity, Resolvable),
            (no_disk_conflict::ERR_DISK_CONFLICT, Cause::DiskConflict, Resolvable),
            (volume_count::ERR_MAX_VOLUME_COUNT_EXCEEDED, Cause::VolumeCountExceeded, Resolvable),
            (no_volume_zone_conflict::ERR_VOLUME_ZONE_CONFLICT, Cause::VolumeZoneConflict, Unresolvable),
            (check_volume_binding::ERR_VOLUME_NODE_CONFLICT, Cause::VolumeNodeConflict, Unresolvable),
            (check_volume_binding::ERR_VOLUME_BIND_CONFLICT, Cause::VolumeBindConflict, Unresolvable),
            (check_volume_binding::ERR_PV_NOT_EXIST, Cause::BoundVolumeMissing, Unresolvable),
            (check_volume_binding::ERR_UNBOUND_IMMEDIATE_CLAIMS, Cause::UnboundImmediateClaims, Unresolvable),
            (match_inter_pod_affinity::ERR_POD_AFFINITY_NOT_MATCH, Cause::InterPodAffinity, Resolvable),
            (match_inter_pod_affinity::ERR_AFFINITY_RULES_NOT_MATCH, Cause::PodAffinityRules, Unresolvable),
            (match_inter_pod_affinity::ERR_ANTI_AFFINITY_RULES_NOT_MATCH, Cause::PodAntiAffinityRules, Resolvable),
            (
                match_inter_pod_affinity::ERR_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
                Cause::ExistingPodsAntiAffinity,
                Resolvable,
            ),
            (even_pods_spread::ERR_TOPOLOGY_SPREAD_CONSTRAINTS_NOT_MATCH, Cause::TopologySpreadSkew, Resolvable),
            (even_pods_spread::ERR_TOPOLOGY_SPREAD_MISSING_LABEL, Cause::TopologySpreadMissingLabel, Unresolvable),
        ];
        for (reason, cause, kind) in cases {
            assert_eq!((&reason.cause, reason.kind), (&cause, kind), "{reason}");
        }
    }

    /// A claim that cannot be found is an unresolvable reason naming it, of the volumes' cause.
    #[test]
    fn a_volume_object_that_cannot_be_resolved() {
        let mut pod: Pod = PodBuilder::new("p").build();
        pod.spec.volumes.push(claim_volume("data"));
        let none = VolumeObjects::default();
        for reason in [
            check_volume_binding::prefilter_failure(&pod, &none),
            no_volume_zone_conflict::prefilter_failure(&pod, &none),
        ] {
            let reason = reason.unwrap();
            assert_eq!(reason.message, "persistentvolumeclaim \"data\" not found");
            assert_eq!((reason.cause, reason.kind), (Cause::VolumeUnresolved, ReasonKind::Unresolvable));
        }
    }
}
