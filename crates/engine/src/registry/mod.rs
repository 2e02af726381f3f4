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

use crate::framework::{AnyPredicate, ArgumentError, PredicateArgs, Priority, PriorityArgs};
#[cfg(test)]
use crate::predicates::test_argument;
use crate::predicates::{
    check_node_condition, check_node_disk_pressure, check_node_label_presence, check_node_memory_pressure,
    check_node_pid_pressure, check_node_unschedulable, check_service_affinity, check_volume_binding, even_pods_spread,
    general_predicates, host_name, ignored_resources, match_inter_pod_affinity, match_node_selector,
    max_azure_disk_volume_count, max_csi_volume_count, max_ebs_volume_count, max_gce_pd_volume_count, no_disk_conflict,
    no_volume_zone_conflict, pod_fits_host_ports, pod_fits_resources, pod_tolerates_node_taints,
};
use crate::priorities::{
    balanced_resource_allocation, equal, even_pods_spread as even_pods_spread_priority, image_locality,
    inter_pod_affinity, least_requested, most_requested, node_affinity, node_label, node_prefer_avoid_pods,
    requested_to_capacity_ratio, resource_limits, selector_spread, service_anti_affinity, service_spreading,
    taint_toleration,
};

/// Builds a predicate from its Policy entry.
pub type PredicateBuilder = fn(&PredicateArgs<'_>) -> Result<Arc<dyn AnyPredicate>, ArgumentError>;

/// Builds a priority from its Policy entry.
pub type PriorityBuilder = fn(&PriorityArgs<'_>) -> Result<Arc<dyn Priority>, ArgumentError>;

/// The argument a plugin takes in the Policy file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Argument {
    None,
    /// Optional, under this key of the `argument` object; with it the entry may carry a custom
    /// name.
    Optional(&'static str),
    /// Required, under this key; with it the entry may carry a custom name.
    Required(&'static str),
    /// Optional, the `argument` object itself holding these fields (PodFitsResources'
    /// `ignoredResources` and `ignoredResourceGroups`, as `NodeResourcesFitArgs`).
    Fields(&'static [&'static str]),
}

impl Argument {
    /// The key that selects the plugin under a custom name.
    pub fn key(self) -> Option<&'static str> {
        match self {
            Argument::None | Argument::Fields(_) => None,
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

const fn predicate_row(name: &'static str, build: PredicateBuilder, argument: Argument, default: bool) -> PredicateRow {
    PredicateRow { name, build, argument, default }
}

/// Every predicate, in the static order (position = rank). The default set is kube-scheduler's
/// default provider set: `GeneralPredicates` instead of its parts, without the predicates that
/// need arguments and without `PodToleratesNodeNoExecuteTaints` (covered by
/// `PodToleratesNodeTaints`).
pub const PREDICATES: &[PredicateRow] = &[
    predicate_row(check_node_condition::NAME, check_node_condition::build, Argument::None, true),
    predicate_row(check_node_unschedulable::NAME, check_node_unschedulable::build, Argument::None, true),
    predicate_row(general_predicates::NAME, general_predicates::build, Argument::None, true),
    predicate_row(host_name::NAME, host_name::build, Argument::None, false),
    predicate_row(pod_fits_host_ports::NAME, pod_fits_host_ports::build, Argument::None, false),
    predicate_row(match_node_selector::NAME, match_node_selector::build, Argument::None, false),
    predicate_row(
        pod_fits_resources::NAME,
        pod_fits_resources::build,
        Argument::Fields(ignored_resources::FIELDS),
        false,
    ),
    predicate_row(no_disk_conflict::NAME, no_disk_conflict::build, Argument::None, true),
    predicate_row(pod_tolerates_node_taints::NAME, pod_tolerates_node_taints::build, Argument::None, true),
    predicate_row(
        pod_tolerates_node_taints::NO_EXECUTE_NAME,
        pod_tolerates_node_taints::build_no_execute,
        Argument::None,
        false,
    ),
    predicate_row(
        check_node_label_presence::NAME,
        check_node_label_presence::build,
        Argument::Required("labelsPresence"),
        false,
    ),
    predicate_row(
        check_service_affinity::NAME,
        check_service_affinity::build,
        Argument::Required("serviceAffinity"),
        false,
    ),
    predicate_row(max_ebs_volume_count::NAME, max_ebs_volume_count::build, Argument::None, true),
    predicate_row(max_gce_pd_volume_count::NAME, max_gce_pd_volume_count::build, Argument::None, true),
    predicate_row(max_csi_volume_count::NAME, max_csi_volume_count::build, Argument::None, true),
    predicate_row(max_azure_disk_volume_count::NAME, max_azure_disk_volume_count::build, Argument::None, true),
    predicate_row(check_volume_binding::NAME, check_volume_binding::build, Argument::None, true),
    predicate_row(no_volume_zone_conflict::NAME, no_volume_zone_conflict::build, Argument::None, true),
    predicate_row(check_node_memory_pressure::NAME, check_node_memory_pressure::build, Argument::None, true),
    predicate_row(check_node_pid_pressure::NAME, check_node_pid_pressure::build, Argument::None, true),
    predicate_row(check_node_disk_pressure::NAME, check_node_disk_pressure::build, Argument::None, true),
    predicate_row(even_pods_spread::NAME, even_pods_spread::build, Argument::None, true),
    predicate_row(match_inter_pod_affinity::NAME, match_inter_pod_affinity::build, Argument::None, true),
    // A plugin that exists only in the crate's tests: proof that a plugin with a Policy argument
    // is its file and this row (see `crate::predicates::test_argument`).
    #[cfg(test)]
    predicate_row(test_argument::NAME, test_argument::build, Argument::Required(test_argument::KEY), false),
];

/// Predicates kube-scheduler always ran with a Policy, listed or not: PodToleratesNodeTaints and
/// CheckNodeUnschedulable, "mandatory fit predicates" since 1.12 (TaintNodesByCondition;
/// `algorithmprovider/defaults`, `RegisterMandatoryFitPredicate`) and to the last Policy release
/// (v1.22 `framework/plugins/legacy_registry.go`, `mandatoryPredicates`, added by
/// `AppendPredicateConfigs`).
pub const MANDATORY_PREDICATES: &[&str] = &[pod_tolerates_node_taints::NAME, check_node_unschedulable::NAME];

/// Other spellings Policy files use: upstream registered the CSI count as `MaxCSIVolumeCountPred`,
/// and read `PodFitsPorts` as PodFitsHostPorts "for compatibility reasons" to the last Policy
/// release (v1.22 `framework/plugins/legacy_registry.go`, `ProcessPredicatePolicy`).
pub const PREDICATE_ALIASES: &[(&str, &str)] =
    &[("MaxCSIVolumeCountPred", max_csi_volume_count::NAME), ("PodFitsPorts", pod_fits_host_ports::NAME)];

const fn priority_row(
    name: &'static str,
    build: PriorityBuilder,
    argument: Argument,
    weight: Option<i64>,
) -> PriorityRow {
    PriorityRow { name, build, argument, default_weight: weight }
}

/// Every priority, in the order the default set lists them.
pub const PRIORITIES: &[PriorityRow] = &[
    priority_row(selector_spread::NAME, selector_spread::build, Argument::None, Some(1)),
    priority_row(service_spreading::NAME, service_spreading::build, Argument::None, None),
    priority_row(inter_pod_affinity::NAME, inter_pod_affinity::build, Argument::None, Some(1)),
    priority_row(least_requested::NAME, least_requested::build, Argument::None, Some(1)),
    priority_row(most_requested::NAME, most_requested::build, Argument::None, None),
    priority_row(balanced_resource_allocation::NAME, balanced_resource_allocation::build, Argument::None, Some(1)),
    priority_row(
        requested_to_capacity_ratio::NAME,
        requested_to_capacity_ratio::build,
        Argument::Optional("requestedToCapacityRatioArguments"),
        None,
    ),
    priority_row(node_prefer_avoid_pods::NAME, node_prefer_avoid_pods::build, Argument::None, Some(10000)),
    priority_row(node_affinity::NAME, node_affinity::build, Argument::None, Some(1)),
    priority_row(taint_toleration::NAME, taint_toleration::build, Argument::None, Some(1)),
    priority_row(image_locality::NAME, image_locality::build, Argument::None, Some(1)),
    priority_row(even_pods_spread_priority::NAME, even_pods_spread_priority::build, Argument::None, None),
    priority_row(node_label::NAME, node_label::build, Argument::Required("labelPreference"), None),
    priority_row(
        service_anti_affinity::NAME,
        service_anti_affinity::build,
        Argument::Required("serviceAntiAffinity"),
        None,
    ),
    priority_row(resource_limits::NAME, resource_limits::build, Argument::None, None),
    priority_row(equal::NAME, equal::build, Argument::None, None),
];

/// The registered name of a predicate a Policy may spell otherwise ([`PREDICATE_ALIASES`]).
pub fn predicate_name(name: &str) -> &str {
    PREDICATE_ALIASES.iter().find(|(alias, _)| *alias == name).map_or(name, |(_, real)| real)
}

/// A predicate's row and static rank, by its Policy name (or an alias).
pub fn predicate_row_named(name: &str) -> Option<(usize, &'static PredicateRow)> {
    let name = predicate_name(name);
    PREDICATES.iter().enumerate().find(|(_, row)| row.name == name)
}

/// A priority's row, by its Policy name.
pub fn priority_row_named(name: &str) -> Option<&'static PriorityRow> {
    PRIORITIES.iter().find(|row| row.name == name)
}

/// A predicate built without a Policy entry (no argument, default settings), if it can be: tests
/// and tools.
pub fn predicate(name: &str) -> Option<Arc<dyn AnyPredicate>> {
    let (_, row) = predicate_row_named(name)?;
    (row.build)(&PredicateArgs::bare(row.name)).ok()
}

/// A priority built without a Policy entry (no argument, default settings), if it can be: tests
/// and tools.
pub fn priority(name: &str) -> Option<Arc<dyn Priority>> {
    let row = priority_row_named(name)?;
    (row.build)(&PriorityArgs::bare(row.name)).ok()
}

/// The default predicates, in static order.
pub fn default_predicates() -> Vec<Arc<dyn AnyPredicate>> {
    PREDICATES
        .iter()
        .filter(|row| row.default)
        .filter_map(|row| (row.build)(&PredicateArgs::bare(row.name)).ok())
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
        let names: Vec<_> = names.into_iter().filter(|n| *n != test_argument::NAME).collect();
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
