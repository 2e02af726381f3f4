//! The predicates: one file each, a pure function of the pod (`PodContext`) and one node
//! (`NodeInfo`) that reports the reasons the pod does not fit, in the wording of kube-scheduler's
//! Policy-era predicates.
//!
//! This module also knows the predicates by name: the static order they run in, which of them make
//! up the default set, and which exist in this version.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use crate::cluster::NodeInfo;
use crate::engine::PodContext;

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
pub mod volume_count;

/// Why a pod does not fit a node.
#[derive(Debug, Clone)]
pub struct Reason {
    /// What kube-scheduler users read, e.g. `Insufficient cpu`.
    pub message: Cow<'static, str>,
    /// Whether evicting pods from the node could make room (resources, ports), or not (selectors,
    /// taints, conditions): decides `FailedNodes` versus `FailedAndUnresolvableNodes`.
    pub resolvable: bool,
    /// The position in the plan of the predicate that gave it ([`NO_SLOT`] until the plan's
    /// predicate loop stamps it): what the per-predicate metrics count rejections by, without a
    /// counter per node.
    pub slot: u32,
}

/// The slot of a reason no plan loop has stamped.
pub const NO_SLOT: u32 = u32::MAX;

/// Two reasons are equal when they say the same thing; the slot is bookkeeping for the metrics.
impl PartialEq for Reason {
    fn eq(&self, other: &Self) -> bool {
        self.message == other.message && self.resolvable == other.resolvable
    }
}

impl Eq for Reason {}

impl Reason {
    /// A reason, resolvable by preemption or not.
    pub const fn new(message: Cow<'static, str>, resolvable: bool) -> Self {
        Reason { message, resolvable, slot: NO_SLOT }
    }

    /// A reason that preemption can resolve.
    pub const fn resolvable(message: &'static str) -> Self {
        Reason::new(Cow::Borrowed(message), true)
    }

    /// A reason that preemption cannot resolve.
    pub const fn unresolvable(message: &'static str) -> Self {
        Reason::new(Cow::Borrowed(message), false)
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// A predicate.
pub trait Predicate: Send + Sync + fmt::Debug {
    /// The name it has in the Policy file.
    fn name(&self) -> &str;

    /// Which classic predicate this is. Entries registered under a custom Policy name (with a
    /// `labelsPresence` or `serviceAffinity` argument) say so themselves.
    fn kind(&self) -> Option<Kind> {
        Kind::from_name(self.name())
    }

    /// Pushes onto `reasons` why the pod does not fit the node; pushes nothing when it fits.
    /// Called once per node (twice with nominated pods); must not allocate when the pod fits.
    fn check(&self, pod: &PodContext, node: &NodeInfo, reasons: &mut Vec<Reason>);
}

macro_rules! kinds {
    ($($kind:ident),+ $(,)?) => {
        /// Every classic predicate, in the default static order (cheap and restrictive first,
        /// `MatchInterPodAffinity` last).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Kind { $($kind),+ }

        impl Kind {
            /// All kinds, in static order.
            pub const ALL: &'static [Kind] = &[$(Kind::$kind),+];

            /// The Policy name.
            pub const fn name(self) -> &'static str {
                match self { $(Kind::$kind => stringify!($kind)),+ }
            }
        }
    };
}

kinds!(
    CheckNodeCondition,
    CheckNodeUnschedulable,
    GeneralPredicates,
    HostName,
    PodFitsHostPorts,
    MatchNodeSelector,
    PodFitsResources,
    NoDiskConflict,
    PodToleratesNodeTaints,
    PodToleratesNodeNoExecuteTaints,
    CheckNodeLabelPresence,
    CheckServiceAffinity,
    MaxEBSVolumeCount,
    MaxGCEPDVolumeCount,
    MaxCSIVolumeCount,
    MaxAzureDiskVolumeCount,
    CheckVolumeBinding,
    NoVolumeZoneConflict,
    CheckNodeMemoryPressure,
    CheckNodePIDPressure,
    CheckNodeDiskPressure,
    EvenPodsSpread,
    MatchInterPodAffinity,
);

/// What a predicate needs from the Policy besides its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgumentNeed {
    None,
    /// `argument.labelsPresence`.
    LabelsPresence,
    /// `argument.serviceAffinity`.
    ServiceAffinity,
}

impl Kind {
    /// Looks a predicate up by its Policy name. Upstream registered the CSI count as
    /// `MaxCSIVolumeCountPred`; Policy files written for it use that spelling, so it is accepted too.
    pub fn from_name(name: &str) -> Option<Kind> {
        if name == "MaxCSIVolumeCountPred" {
            return Some(Kind::MaxCSIVolumeCount);
        }
        Kind::ALL.iter().copied().find(|k| k.name() == name)
    }

    /// Position in the static order.
    pub fn rank(self) -> usize {
        self as usize
    }

    pub fn argument_need(self) -> ArgumentNeed {
        match self {
            Kind::CheckNodeLabelPresence => ArgumentNeed::LabelsPresence,
            Kind::CheckServiceAffinity => ArgumentNeed::ServiceAffinity,
            _ => ArgumentNeed::None,
        }
    }

    /// The predicate, for kinds that take no argument.
    pub fn instantiate(self) -> Option<Arc<dyn Predicate>> {
        let p: Arc<dyn Predicate> = match self {
            Kind::CheckNodeCondition => Arc::new(check_node_condition::CheckNodeCondition),
            Kind::CheckNodeUnschedulable => Arc::new(check_node_unschedulable::CheckNodeUnschedulable),
            Kind::GeneralPredicates => Arc::new(general_predicates::GeneralPredicates::default()),
            Kind::HostName => Arc::new(host_name::HostName),
            Kind::PodFitsHostPorts => Arc::new(pod_fits_host_ports::PodFitsHostPorts),
            Kind::MatchNodeSelector => Arc::new(match_node_selector::MatchNodeSelector),
            Kind::PodFitsResources => Arc::new(pod_fits_resources::PodFitsResources::default()),
            Kind::NoDiskConflict => Arc::new(no_disk_conflict::NoDiskConflict),
            Kind::PodToleratesNodeTaints => Arc::new(pod_tolerates_node_taints::PodToleratesNodeTaints::all()),
            Kind::PodToleratesNodeNoExecuteTaints => {
                Arc::new(pod_tolerates_node_taints::PodToleratesNodeTaints::no_execute())
            }
            Kind::CheckVolumeBinding => Arc::new(check_volume_binding::CheckVolumeBinding),
            Kind::NoVolumeZoneConflict => Arc::new(no_volume_zone_conflict::NoVolumeZoneConflict),
            Kind::MaxEBSVolumeCount => Arc::new(max_ebs_volume_count::predicate()),
            Kind::MaxGCEPDVolumeCount => Arc::new(max_gce_pd_volume_count::predicate()),
            Kind::MaxCSIVolumeCount => Arc::new(max_csi_volume_count::MaxCSIVolumeCount),
            Kind::MaxAzureDiskVolumeCount => Arc::new(max_azure_disk_volume_count::predicate()),
            Kind::CheckNodeMemoryPressure => Arc::new(check_node_memory_pressure::predicate()),
            Kind::CheckNodeDiskPressure => Arc::new(check_node_disk_pressure::predicate()),
            Kind::CheckNodePIDPressure => Arc::new(check_node_pid_pressure::predicate()),
            Kind::EvenPodsSpread => Arc::new(even_pods_spread::EvenPodsSpread),
            Kind::MatchInterPodAffinity => Arc::new(match_inter_pod_affinity::MatchInterPodAffinity),
            // These two are built from their Policy argument.
            Kind::CheckNodeLabelPresence | Kind::CheckServiceAffinity => return None,
        };
        Some(p)
    }

    /// In the set that runs when no Policy (or a Policy without `predicates`) is given: kube-scheduler's
    /// default provider set, which takes `GeneralPredicates` instead of its parts and leaves out the
    /// predicates that need arguments and `PodToleratesNodeNoExecuteTaints` (covered by
    /// `PodToleratesNodeTaints`).
    pub fn in_default_set(self) -> bool {
        !matches!(
            self,
            Kind::HostName
                | Kind::PodFitsHostPorts
                | Kind::MatchNodeSelector
                | Kind::PodFitsResources
                | Kind::PodToleratesNodeNoExecuteTaints
                | Kind::CheckNodeLabelPresence
                | Kind::CheckServiceAffinity
        )
    }
}

/// Runs one predicate on a pod and a node, for the predicates' own tests.
#[cfg(test)]
pub(crate) fn reasons_of(predicate: &dyn Predicate, pod: crate::cluster::objects::Pod, node: &NodeInfo) -> Vec<Reason> {
    reasons_with(predicate, &crate::cluster::volumes::VolumeObjects::default(), pod, node)
}

/// [`reasons_of`] with these volume objects (claims, volumes, classes, CSINodes) in the cluster.
#[cfg(test)]
pub(crate) fn reasons_with(
    predicate: &dyn Predicate,
    volumes: &crate::cluster::volumes::VolumeObjects,
    pod: crate::cluster::objects::Pod,
    node: &NodeInfo,
) -> Vec<Reason> {
    let mut ctx = PodContext::new(pod);
    ctx.volumes = volumes.clone();
    let mut reasons = Vec::new();
    predicate.check(&ctx, node, &mut reasons);
    reasons
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn static_order_is_the_documented_one() {
        let names: Vec<_> = Kind::ALL.iter().map(|k| k.name()).collect();
        assert_eq!(names.first(), Some(&"CheckNodeCondition"));
        assert_eq!(names.last(), Some(&"MatchInterPodAffinity"));
        assert_eq!(names[names.len() - 2], "EvenPodsSpread");
        assert_eq!(names.len(), 23);
    }

    #[test]
    fn names_round_trip() {
        for k in Kind::ALL {
            assert_eq!(Kind::from_name(k.name()), Some(*k));
            if let Some(p) = k.instantiate() {
                assert_eq!(p.name(), k.name());
            }
        }
        assert_eq!(Kind::from_name("checknodecondition"), None);
        assert_eq!(Kind::from_name("MaxCSIVolumeCountPred"), Some(Kind::MaxCSIVolumeCount));
    }
}
