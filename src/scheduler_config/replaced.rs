//! Which of kube-scheduler's own plugins a Policy's predicates and priorities replace: one row per
//! plugin and extension point, with the classic plugins that do its work in the extender and what
//! an operator gives up by turning it off. Plugins with no row stay on (the volume plugins, dynamic
//! resource allocation, scheduling gates, queue sort, preemption and binding).

use std::collections::BTreeSet;

/// Where a plugin is turned off: its Filter (and the PreFilter that prepares only for it) or its
/// Score (and its PreScore).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Point {
    Filter,
    Score,
}

/// Which classic plugins must be in the Policy for the row to apply.
#[derive(Debug, Clone, Copy)]
pub enum ReplacedBy {
    /// Any one of them does the plugin's work.
    AnyOf(&'static [&'static str]),
    /// Only all of them together do.
    AllOf(&'static [&'static str]),
}

/// One plugin at one extension point.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    pub plugin: &'static str,
    pub point: Point,
    pub by: ReplacedBy,
    /// What kube-scheduler's plugin does that the classic ones do not ("" when nothing).
    pub gives_up: &'static str,
    /// Left on even when the Policy replaces it: a Filter that counts the pods already placed, which
    /// must see the ones kube-scheduler has assumed but not yet bound ([`KEPT`]).
    pub kept: bool,
}

const RESOURCE_SCORES: &[&str] =
    &["LeastRequestedPriority", "MostRequestedPriority", "RequestedToCapacityRatioPriority"];

/// Every plugin the classic Policy can stand in for, in the order the default profile runs them.
pub const ROWS: &[Row] = &[
    Row {
        plugin: "NodeUnschedulable",
        point: Point::Filter,
        by: ReplacedBy::AnyOf(&["CheckNodeUnschedulable", "CheckNodeCondition"]),
        gives_up: "with CheckNodeCondition, a pod that tolerates node.kubernetes.io/unschedulable is still kept \
                   off a cordoned node (docs/semantics.md)",
        kept: false,
    },
    Row {
        plugin: "NodeName",
        point: Point::Filter,
        by: ReplacedBy::AnyOf(&["GeneralPredicates", "HostName"]),
        gives_up: "",
        kept: false,
    },
    Row {
        plugin: "TaintToleration",
        point: Point::Filter,
        by: ReplacedBy::AnyOf(&["PodToleratesNodeTaints"]),
        gives_up: "",
        kept: false,
    },
    Row {
        plugin: "TaintToleration",
        point: Point::Score,
        by: ReplacedBy::AnyOf(&["TaintTolerationPriority"]),
        gives_up: "",
        kept: false,
    },
    Row {
        plugin: "NodeAffinity",
        point: Point::Filter,
        by: ReplacedBy::AnyOf(&["GeneralPredicates", "MatchNodeSelector"]),
        gives_up: "the profile's addedAffinity (this configuration sets none)",
        kept: false,
    },
    Row {
        plugin: "NodeAffinity",
        point: Point::Score,
        by: ReplacedBy::AnyOf(&["NodeAffinityPriority"]),
        gives_up: "",
        kept: false,
    },
    Row {
        plugin: "NodePorts",
        point: Point::Filter,
        by: ReplacedBy::AnyOf(&["GeneralPredicates", "PodFitsHostPorts"]),
        gives_up: "",
        kept: true,
    },
    Row {
        plugin: "NodeResourcesFit",
        point: Point::Filter,
        by: ReplacedBy::AnyOf(&["GeneralPredicates", "PodFitsResources"]),
        gives_up: "a node whose whole allocatable is too small is no longer marked unresolvable, so \
                   preemption looks at it and finds nothing to evict (docs/semantics.md)",
        kept: true,
    },
    Row {
        plugin: "NodeResourcesFit",
        point: Point::Score,
        by: ReplacedBy::AnyOf(RESOURCE_SCORES),
        gives_up: "",
        kept: false,
    },
    Row {
        plugin: "PodTopologySpread",
        point: Point::Filter,
        by: ReplacedBy::AnyOf(&["EvenPodsSpread"]),
        gives_up: "",
        kept: true,
    },
    Row {
        plugin: "PodTopologySpread",
        point: Point::Score,
        // Its Score does both: the pods' own ScheduleAnyway constraints and, for pods without
        // any, the system default spreading that replaced SelectorSpread.
        by: ReplacedBy::AllOf(&["EvenPodsSpreadPriority", "SelectorSpreadPriority"]),
        gives_up: "",
        kept: false,
    },
    Row {
        plugin: "InterPodAffinity",
        point: Point::Filter,
        by: ReplacedBy::AnyOf(&["MatchInterPodAffinity"]),
        gives_up: "",
        kept: true,
    },
    Row {
        plugin: "InterPodAffinity",
        point: Point::Score,
        by: ReplacedBy::AnyOf(&["InterPodAffinityPriority"]),
        gives_up: "",
        kept: false,
    },
    Row {
        plugin: "NodeResourcesBalancedAllocation",
        point: Point::Score,
        by: ReplacedBy::AnyOf(&["BalancedResourceAllocation"]),
        gives_up: "",
        kept: false,
    },
    Row {
        plugin: "ImageLocality",
        point: Point::Score,
        by: ReplacedBy::AnyOf(&["ImageLocalityPriority"]),
        gives_up: "",
        kept: false,
    },
];

/// A plugin turned off at one point, and the classic plugins of the Policy that replace it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disabled {
    pub plugin: &'static str,
    pub point: Point,
    pub by: Vec<&'static str>,
    pub gives_up: &'static str,
}

/// Why the [`Row::kept`] filters stay on. kube-scheduler places one pod after another: it assumes a
/// pod on its node in its own cache and goes on to the next pod while the first is still being
/// bound, and the extender learns where the first went only when its `/bind` arrives, which can be
/// after `/filter` for the next. These filters count the pods placed, assumed ones included, so
/// with them off two back-to-back pods can take one host port, a node's last CPU, or break each
/// other's anti-affinity or spread (seen end to end: `tests/e2e_scheduling.rs`).
pub const KEPT: &str = "they count the pods already placed, and see the ones kube-scheduler has placed but \
                        not yet bound, which the extender learns of only when their /bind arrives, \
                        possibly after kube-scheduler has moved on to the next pod: with them off, back-to-back pods \
                        double-book host ports and capacity and break anti-affinity and spreading";

/// The rows a Policy of these classic plugins (predicates and priorities, by registered name)
/// replaces and that are turned off, in [`ROWS`] order.
pub fn disabled(policy: &BTreeSet<&'static str>) -> Vec<Disabled> {
    replaced(policy).filter(|(row, _)| !row.kept).map(to_disabled).collect()
}

/// The [`Row::kept`] rows the Policy would replace: left on, and said so.
pub fn kept(policy: &BTreeSet<&'static str>) -> Vec<Disabled> {
    replaced(policy).filter(|(row, _)| row.kept).map(to_disabled).collect()
}

/// Every row the Policy replaces, the [`Row::kept`] ones included, in [`ROWS`] order: what the
/// in-process kube-scheduler turns off ([`KEPT_OFF_IN_PROCESS`]).
pub fn disabled_in_process(policy: &BTreeSet<&'static str>) -> Vec<Disabled> {
    replaced(policy).map(to_disabled).collect()
}

/// Why the [`Row::kept`] filters are off in the in-process kube-scheduler: the reason to keep them
/// ([`KEPT`]) is the extender's late view of placed pods, and the in-process engine has none.
pub const KEPT_OFF_IN_PROCESS: &str = "the engine counts a pod on its node from the plugin's Reserve, in the same \
                                       scheduling cycle as kube-scheduler's own cache, so the next pod's Filter \
                                       already sees it";

fn to_disabled((row, by): (&'static Row, Vec<&'static str>)) -> Disabled {
    Disabled { plugin: row.plugin, point: row.point, by, gives_up: row.gives_up }
}

/// Every row the Policy replaces, with the classic plugins that replace it.
fn replaced<'p>(policy: &'p BTreeSet<&'static str>) -> impl Iterator<Item = (&'static Row, Vec<&'static str>)> + 'p {
    ROWS.iter().filter_map(|row| {
        let by: Vec<&'static str> = match row.by {
            ReplacedBy::AnyOf(names) => names.iter().copied().filter(|n| policy.contains(n)).collect(),
            ReplacedBy::AllOf(names) if names.iter().all(|n| policy.contains(n)) => names.to_vec(),
            ReplacedBy::AllOf(_) => Vec::new(),
        };
        (!by.is_empty()).then_some((row, by))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use predicate_engine::registry::{PREDICATES, PRIORITIES};

    fn names(disabled: &[Disabled], point: Point) -> Vec<&'static str> {
        disabled.iter().filter(|d| d.point == point).map(|d| d.plugin).collect()
    }

    #[test]
    fn every_classic_name_in_the_table_is_registered() {
        for row in ROWS {
            let (ReplacedBy::AnyOf(names) | ReplacedBy::AllOf(names)) = row.by;
            for name in names {
                let known = match row.point {
                    Point::Filter => PREDICATES.iter().any(|r| r.name == *name),
                    Point::Score => PRIORITIES.iter().any(|r| r.name == *name),
                };
                assert!(known, "{}: {name} is not a registered {:?} plugin", row.plugin, row.point);
            }
        }
    }

    #[test]
    fn what_each_policy_replaces() {
        // (case, the Policy's classic plugins, filters turned off, scores turned off)
        type Case = (&'static str, &'static [&'static str], &'static [&'static str], &'static [&'static str]);
        let cases: &[Case] = &[
            ("nothing", &[], &[], &[]),
            (
                "GeneralPredicates: the node's own checks off, the ones counting placed pods kept",
                &["GeneralPredicates"],
                &["NodeName", "NodeAffinity"],
                &[],
            ),
            ("PodFitsResources alone: kept", &["PodFitsResources"], &[], &[]),
            ("CheckNodeCondition covers the cordon", &["CheckNodeCondition"], &["NodeUnschedulable"], &[]),
            ("the NoExecute-only variant replaces nothing", &["PodToleratesNodeNoExecuteTaints"], &[], &[]),
            ("any resource score", &["MostRequestedPriority"], &[], &["NodeResourcesFit"]),
            ("spreading needs both priorities", &["SelectorSpreadPriority"], &[], &[]),
            (
                "both spreading priorities, and the spreading filter kept",
                &["SelectorSpreadPriority", "EvenPodsSpreadPriority", "EvenPodsSpread"],
                &[],
                &["PodTopologySpread"],
            ),
            (
                "volumes stay kube-scheduler's too",
                &["NoDiskConflict", "CheckVolumeBinding", "MaxCSIVolumeCount"],
                &[],
                &[],
            ),
        ];
        for (name, policy, filters, scores) in cases {
            let policy: BTreeSet<&'static str> = policy.iter().copied().collect();
            let got = disabled(&policy);
            assert_eq!(names(&got, Point::Filter), *filters, "{name}: filters");
            assert_eq!(names(&got, Point::Score), *scores, "{name}: scores");
        }
        let all: BTreeSet<&'static str> =
            ["GeneralPredicates", "EvenPodsSpread", "MatchInterPodAffinity"].into_iter().collect();
        let left_on: Vec<&str> = kept(&all).iter().map(|d| d.plugin).collect();
        assert_eq!(left_on, ["NodePorts", "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity"]);
        // In-process, the kept ones are off with the rest.
        let off = disabled_in_process(&all);
        assert_eq!(
            names(&off, Point::Filter),
            ["NodeName", "NodeAffinity", "NodePorts", "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity"]
        );
        assert_eq!(off.len(), disabled(&all).len() + kept(&all).len());
    }
}
