//! The registry: every plugin this version has, one table row each, and the only place they are
//! listed. A predicate row gives its Policy name, its constructor, the key of the argument that
//! selects it under a custom name (if it takes one), and whether it is in the default set; its
//! position is its static rank (cheap and restrictive first). A priority row gives its name, its
//! constructor, its argument, and its weight in the default set.
//!
//! Arguments are checked here, the same way for every row ([`validate`]): a constructor is only
//! called with the argument its row declares, so none repeats those checks.

pub mod validate;

use std::sync::Arc;

use crate::framework::{AnyPredicate, IgnoredResources, Priority, PriorityArgs};
use crate::predicates::{
    check_node_condition, check_node_disk_pressure, check_node_label_presence, check_node_memory_pressure,
    check_node_pid_pressure, check_node_unschedulable, check_service_affinity, check_volume_binding, even_pods_spread,
    general_predicates, host_name, match_inter_pod_affinity, match_node_selector, max_azure_disk_volume_count,
    max_csi_volume_count, max_ebs_volume_count, max_gce_pd_volume_count, no_disk_conflict, no_volume_zone_conflict,
    pod_fits_host_ports, pod_fits_resources, pod_tolerates_node_taints,
};
use crate::priorities::{
    balanced_resource_allocation, equal, even_pods_spread as even_pods_spread_priority, image_locality,
    inter_pod_affinity, least_requested, most_requested, node_affinity, node_label, node_prefer_avoid_pods,
    requested_to_capacity_ratio, resource_limits, selector_spread, service_anti_affinity, service_spreading,
    taint_toleration,
};

pub use crate::framework::PredicateArgs;

/// Builds a predicate from its Policy entry.
pub type PredicateBuilder = fn(&PredicateArgs<'_>) -> Result<Arc<dyn AnyPredicate>, String>;

/// Builds a priority from its Policy entry.
pub type PriorityBuilder = fn(&PriorityArgs<'_>) -> Result<Arc<dyn Priority>, String>;

/// The argument a plugin takes in the Policy file: the key of its `argument` object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Argument {
    None,
    /// Optional; with it the entry may carry a custom name.
    Optional(&'static str),
    /// Required; with it the entry may carry a custom name.
    Required(&'static str),
}

impl Argument {
    pub fn key(self) -> Option<&'static str> {
        match self {
            Argument::None => None,
            Argument::Optional(key) | Argument::Required(key) => Some(key),
        }
    }
}

/// One predicate.
#[derive(Debug, Clone, Copy)]
pub struct PredicateRow {
    pub name: &'static str,
    pub build: PredicateBuilder,
    pub argument: Argument,
    /// In the set that runs when no Policy (or a Policy without `predicates`) is given.
    pub default: bool,
}

/// One priority.
#[derive(Debug, Clone, Copy)]
pub struct PriorityRow {
    pub name: &'static str,
    pub build: PriorityBuilder,
    pub argument: Argument,
    /// Its weight in the set that runs when the Policy gives no `priorities`; `None`: not in it.
    pub default_weight: Option<i64>,
}

const fn predicate_row(name: &'static str, build: PredicateBuilder, default: bool) -> PredicateRow {
    PredicateRow { name, build, argument: Argument::None, default }
}

/// Every predicate, in the static order (position = rank). The default set is kube-scheduler's
/// default provider set: `GeneralPredicates` instead of its parts, without the predicates that
/// need arguments and without `PodToleratesNodeNoExecuteTaints` (covered by
/// `PodToleratesNodeTaints`).
pub const PREDICATES: &[PredicateRow] = &[
    predicate_row("CheckNodeCondition", |_| Ok(Arc::new(check_node_condition::CheckNodeCondition)), true),
    predicate_row("CheckNodeUnschedulable", |_| Ok(Arc::new(check_node_unschedulable::CheckNodeUnschedulable)), true),
    predicate_row(
        "GeneralPredicates",
        |a| Ok(Arc::new(general_predicates::GeneralPredicates::new(a.ignored_resources.clone()))),
        true,
    ),
    predicate_row("HostName", |_| Ok(Arc::new(host_name::HostName)), false),
    predicate_row("PodFitsHostPorts", |_| Ok(Arc::new(pod_fits_host_ports::PodFitsHostPorts)), false),
    predicate_row("MatchNodeSelector", |_| Ok(Arc::new(match_node_selector::MatchNodeSelector)), false),
    predicate_row(
        "PodFitsResources",
        |a| Ok(Arc::new(pod_fits_resources::PodFitsResources::new(a.ignored_resources.clone()))),
        false,
    ),
    predicate_row("NoDiskConflict", |_| Ok(Arc::new(no_disk_conflict::NoDiskConflict)), true),
    predicate_row(
        "PodToleratesNodeTaints",
        |_| Ok(Arc::new(pod_tolerates_node_taints::PodToleratesNodeTaints::all())),
        true,
    ),
    predicate_row(
        "PodToleratesNodeNoExecuteTaints",
        |_| Ok(Arc::new(pod_tolerates_node_taints::PodToleratesNodeTaints::no_execute())),
        false,
    ),
    PredicateRow {
        name: check_node_label_presence::NAME,
        build: check_node_label_presence::build,
        argument: Argument::Required("labelsPresence"),
        default: false,
    },
    PredicateRow {
        name: check_service_affinity::NAME,
        build: check_service_affinity::build,
        argument: Argument::Required("serviceAffinity"),
        default: false,
    },
    predicate_row("MaxEBSVolumeCount", |_| Ok(Arc::new(max_ebs_volume_count::predicate())), true),
    predicate_row("MaxGCEPDVolumeCount", |_| Ok(Arc::new(max_gce_pd_volume_count::predicate())), true),
    predicate_row("MaxCSIVolumeCount", |_| Ok(Arc::new(max_csi_volume_count::MaxCSIVolumeCount)), true),
    predicate_row("MaxAzureDiskVolumeCount", |_| Ok(Arc::new(max_azure_disk_volume_count::predicate())), true),
    predicate_row("CheckVolumeBinding", |_| Ok(Arc::new(check_volume_binding::CheckVolumeBinding)), true),
    predicate_row("NoVolumeZoneConflict", |_| Ok(Arc::new(no_volume_zone_conflict::NoVolumeZoneConflict)), true),
    predicate_row("CheckNodeMemoryPressure", |_| Ok(Arc::new(check_node_memory_pressure::predicate())), true),
    predicate_row("CheckNodePIDPressure", |_| Ok(Arc::new(check_node_pid_pressure::predicate())), true),
    predicate_row("CheckNodeDiskPressure", |_| Ok(Arc::new(check_node_disk_pressure::predicate())), true),
    predicate_row("EvenPodsSpread", |_| Ok(Arc::new(even_pods_spread::EvenPodsSpread)), true),
    predicate_row("MatchInterPodAffinity", |_| Ok(Arc::new(match_inter_pod_affinity::MatchInterPodAffinity)), true),
];

/// Other spellings Policy files use: upstream registered the CSI count as `MaxCSIVolumeCountPred`.
pub const PREDICATE_ALIASES: &[(&str, &str)] = &[("MaxCSIVolumeCountPred", "MaxCSIVolumeCount")];

const fn priority_row(name: &'static str, build: PriorityBuilder, default_weight: Option<i64>) -> PriorityRow {
    PriorityRow { name, build, argument: Argument::None, default_weight }
}

/// Every priority, in the order the default set lists them.
pub const PRIORITIES: &[PriorityRow] = &[
    priority_row("SelectorSpreadPriority", selector_spread::build, Some(1)),
    priority_row("ServiceSpreadingPriority", service_spreading::build, None),
    priority_row("InterPodAffinityPriority", inter_pod_affinity::build, Some(1)),
    priority_row("LeastRequestedPriority", least_requested::build, Some(1)),
    priority_row("MostRequestedPriority", most_requested::build, None),
    priority_row("BalancedResourceAllocation", balanced_resource_allocation::build, Some(1)),
    PriorityRow {
        name: "RequestedToCapacityRatioPriority",
        build: requested_to_capacity_ratio::build,
        argument: Argument::Optional("requestedToCapacityRatioArguments"),
        default_weight: None,
    },
    priority_row("NodePreferAvoidPodsPriority", node_prefer_avoid_pods::build, Some(10000)),
    priority_row("NodeAffinityPriority", node_affinity::build, Some(1)),
    priority_row("TaintTolerationPriority", taint_toleration::build, Some(1)),
    priority_row("ImageLocalityPriority", image_locality::build, Some(1)),
    priority_row("EvenPodsSpreadPriority", even_pods_spread_priority::build, None),
    PriorityRow {
        name: "NodeLabelPriority",
        build: node_label::build,
        argument: Argument::Required("labelPreference"),
        default_weight: None,
    },
    PriorityRow {
        name: "ServiceAntiAffinityPriority",
        build: service_anti_affinity::build,
        argument: Argument::Required("serviceAntiAffinity"),
        default_weight: None,
    },
    priority_row("ResourceLimitsPriority", resource_limits::build, None),
    priority_row("EqualPriority", equal::build, None),
];

/// A predicate's row and static rank, by its Policy name (or an alias).
pub fn predicate_row_named(name: &str) -> Option<(usize, &'static PredicateRow)> {
    let name = PREDICATE_ALIASES.iter().find(|(alias, _)| *alias == name).map_or(name, |(_, real)| real);
    PREDICATES.iter().enumerate().find(|(_, row)| row.name == name)
}

/// A priority's row, by its Policy name.
pub fn priority_row_named(name: &str) -> Option<&'static PriorityRow> {
    PRIORITIES.iter().find(|row| row.name == name)
}

/// A predicate that takes no argument, built with the default settings (tests, tools).
pub fn predicate(name: &str) -> Option<Arc<dyn AnyPredicate>> {
    let (_, row) = predicate_row_named(name)?;
    let args = PredicateArgs { name: row.name, argument: None, ignored_resources: &IgnoredResources::default() };
    (row.argument.key().is_none()).then(|| (row.build)(&args).ok()).flatten()
}

/// A priority without argument, built with the default settings (tests, tools).
pub fn priority(name: &str) -> Option<Arc<dyn Priority>> {
    let row = priority_row_named(name)?;
    let args = PriorityArgs { name: row.name, argument: None, hard_pod_affinity_symmetric_weight: 1 };
    (row.build)(&args).ok()
}

/// The default predicates, in static order.
pub fn default_predicates() -> Vec<Arc<dyn AnyPredicate>> {
    let ignored = IgnoredResources::default();
    PREDICATES
        .iter()
        .filter(|row| row.default)
        .filter_map(|row| {
            (row.build)(&PredicateArgs { name: row.name, argument: None, ignored_resources: &ignored }).ok()
        })
        .collect()
}

/// The default priorities with their weights, in table order.
pub fn default_priorities(hard_pod_affinity_symmetric_weight: i64) -> Vec<(Arc<dyn Priority>, i64)> {
    PRIORITIES
        .iter()
        .filter_map(|row| {
            let weight = row.default_weight?;
            let args = PriorityArgs { name: row.name, argument: None, hard_pod_affinity_symmetric_weight };
            Some(((row.build)(&args).ok()?, weight))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_argument_keys_are_unique() {
        for (i, row) in PREDICATES.iter().enumerate() {
            assert!(PREDICATES[..i].iter().all(|r| r.name != row.name), "{}", row.name);
            if let Some(k) = row.argument.key() {
                assert!(PREDICATES[..i].iter().all(|r| r.argument.key() != Some(k)), "{k}");
            }
        }
        for (i, row) in PRIORITIES.iter().enumerate() {
            assert!(PRIORITIES[..i].iter().all(|r| r.name != row.name), "{}", row.name);
            if let Some(k) = row.argument.key() {
                assert!(PRIORITIES[..i].iter().all(|r| r.argument.key() != Some(k)), "{k}");
            }
        }
    }

    #[test]
    fn static_order_is_the_documented_one() {
        let names: Vec<_> = PREDICATES.iter().map(|r| r.name).collect();
        assert_eq!(names.first(), Some(&"CheckNodeCondition"));
        assert_eq!(names.last(), Some(&"MatchInterPodAffinity"));
        assert_eq!(names[names.len() - 2], "EvenPodsSpread");
        assert_eq!(names.len(), 23);
    }

    #[test]
    fn every_row_builds_a_plugin_of_its_own_name() {
        for row in PREDICATES.iter().filter(|r| r.argument.key().is_none()) {
            let p = predicate(row.name).unwrap();
            assert_eq!((p.name(), p.plugin()), (row.name, row.name));
        }
        for row in PRIORITIES.iter().filter(|r| !matches!(r.argument, Argument::Required(_))) {
            assert_eq!(priority(row.name).unwrap().name(), row.name);
        }
        assert_eq!(predicate_row_named("MaxCSIVolumeCountPred").map(|(_, r)| r.name), Some("MaxCSIVolumeCount"));
        assert!(predicate_row_named("checknodecondition").is_none());
    }
}
