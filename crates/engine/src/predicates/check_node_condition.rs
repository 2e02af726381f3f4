//! CheckNodeCondition, as 1.12's `CheckNodeConditionPredicate`: the node must be Ready, not out of
//! disk, with its network available, and not cordoned. Every reason is reported, one per failing
//! condition in the order the node lists them, then `spec.unschedulable`.
//!
//! Unlike CheckNodeUnschedulable, a toleration of `node.kubernetes.io/unschedulable` does not help
//! here: upstream checked `spec.unschedulable` alone. All four reasons are unresolvable, as in
//! upstream's `nodesWherePreemptionMightHelp` (node conditions do not change when pods are evicted).

use crate::cluster::{ConditionFailure, NodeInfo};
use crate::framework::PodContext;
use crate::framework::{AnyPredicate, ArgumentError, PredicateArgs};
use crate::framework::{Cause, ClusterView, Failures, Predicate, Reason, ReasonKind};
use crate::predicates::check_node_unschedulable::ERR_NODE_UNSCHEDULABLE;
use std::sync::Arc;

/// The registry name.
pub const NAME: &str = "CheckNodeCondition";

/// Builds it (it takes no argument).
pub fn build(_args: &PredicateArgs<'_>) -> Result<Arc<dyn AnyPredicate>, ArgumentError> {
    Ok(Arc::new(CheckNodeCondition))
}

pub const ERR_NODE_NOT_READY: Reason =
    Reason::of(Cause::NodeCondition(ConditionFailure::NotReady), ReasonKind::Unresolvable, "node(s) were not ready");
pub const ERR_NODE_OUT_OF_DISK: Reason = Reason::of(
    Cause::NodeCondition(ConditionFailure::OutOfDisk),
    ReasonKind::Unresolvable,
    "node(s) were out of disk space",
);
pub const ERR_NODE_NETWORK_UNAVAILABLE: Reason = Reason::of(
    Cause::NodeCondition(ConditionFailure::NetworkUnavailable),
    ReasonKind::Unresolvable,
    "node(s) had unavailable network",
);

/// Fails a node whose `Ready` condition is not `True`, whose `OutOfDisk` or `NetworkUnavailable`
/// condition is not `False`, or that is cordoned. A node that reports none of these conditions
/// passes, as upstream.
#[derive(Debug)]
pub struct CheckNodeCondition;

impl Predicate for CheckNodeCondition {
    type State = ();

    fn name(&self) -> &str {
        NAME
    }

    fn failures(&self) -> Failures {
        Failures::Unresolvable
    }

    fn prepare(&self, _pod: &PodContext, _view: &ClusterView<'_>) {}

    fn check(&self, _pod: &PodContext, _state: &(), node: &NodeInfo, reasons: &mut Vec<Reason>) {
        for failure in node.condition_failures() {
            reasons.push(match failure {
                ConditionFailure::NotReady => ERR_NODE_NOT_READY,
                ConditionFailure::OutOfDisk => ERR_NODE_OUT_OF_DISK,
                ConditionFailure::NetworkUnavailable => ERR_NODE_NETWORK_UNAVAILABLE,
            });
        }
        if node.node().spec.unschedulable {
            reasons.push(ERR_NODE_UNSCHEDULABLE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predicates::check_node_unschedulable::UNSCHEDULABLE_TAINT_KEY;
    use crate::predicates::reasons_of;
    use crate::testing::{NodeBuilder, PodBuilder};

    /// A node with exactly these conditions, in this order.
    fn with_conditions(name: &str, conditions: &[(&str, &str)]) -> NodeBuilder {
        NodeBuilder::new(name).conditions(conditions)
    }

    fn reasons(node: NodeBuilder) -> Vec<Reason> {
        let node = crate::cluster::NodeInfo::from_parts(node.build(), []);
        reasons_of(&CheckNodeCondition, PodBuilder::new("p").build(), &node)
    }

    /// upstream: TestNodeConditionPredicate (factory_test.go, 1.11-1.12: the same rules as
    /// `CheckNodeConditionPredicate`): nodes 1, 4, 6, 10 and 11 are considered, the others are
    /// not. The reasons are the predicate's, in the order of the node's conditions.
    #[test]
    fn upstream_node_condition_table() {
        let (ready, not_ready) = (("Ready", "True"), ("Ready", "False"));
        let (out_of_disk, disk_ok) = (("OutOfDisk", "True"), ("OutOfDisk", "False"));
        let cases = [
            ("node1 considered", with_conditions("node1", &[ready]), vec![]),
            ("node2 ignored - node not Ready", with_conditions("node2", &[not_ready]), vec![ERR_NODE_NOT_READY]),
            ("node3 ignored - node out of disk", with_conditions("node3", &[out_of_disk]), vec![ERR_NODE_OUT_OF_DISK]),
            ("node4 considered", with_conditions("node4", &[disk_ok]), vec![]),
            (
                "node5 ignored - node out of disk",
                with_conditions("node5", &[ready, out_of_disk]),
                vec![ERR_NODE_OUT_OF_DISK],
            ),
            ("node6 considered", with_conditions("node6", &[ready, disk_ok]), vec![]),
            (
                "node7 ignored - node out of disk, node not Ready",
                with_conditions("node7", &[not_ready, out_of_disk]),
                vec![ERR_NODE_NOT_READY, ERR_NODE_OUT_OF_DISK],
            ),
            (
                "node8 ignored - node not Ready",
                with_conditions("node8", &[not_ready, disk_ok]),
                vec![ERR_NODE_NOT_READY],
            ),
            (
                "node9 ignored - node unschedulable",
                with_conditions("node9", &[]).unschedulable(),
                vec![ERR_NODE_UNSCHEDULABLE],
            ),
            ("node10 considered", with_conditions("node10", &[]), vec![]),
            ("node11 considered", with_conditions("node11", &[]), vec![]),
        ];
        for (name, node, want) in cases {
            assert_eq!(reasons(node), want, "{name}");
        }
    }

    #[test]
    fn conditions() {
        let cases = [
            ("ready", NodeBuilder::new("n"), vec![]),
            ("ready unknown", NodeBuilder::new("n").condition("Ready", "Unknown"), vec![ERR_NODE_NOT_READY]),
            (
                "out of disk unknown",
                NodeBuilder::new("n").condition("OutOfDisk", "Unknown"),
                vec![ERR_NODE_OUT_OF_DISK],
            ),
            (
                "network unavailable",
                NodeBuilder::new("n").condition("NetworkUnavailable", "True"),
                vec![ERR_NODE_NETWORK_UNAVAILABLE],
            ),
            (
                "network unknown",
                NodeBuilder::new("n").condition("NetworkUnavailable", "Unknown"),
                vec![ERR_NODE_NETWORK_UNAVAILABLE],
            ),
            ("network available", NodeBuilder::new("n").condition("NetworkUnavailable", "False"), vec![]),
            (
                "every reason, conditions in the node's order, then unschedulable",
                with_conditions("n", &[("NetworkUnavailable", "True"), ("OutOfDisk", "True"), ("Ready", "False")])
                    .unschedulable(),
                vec![ERR_NODE_NETWORK_UNAVAILABLE, ERR_NODE_OUT_OF_DISK, ERR_NODE_NOT_READY, ERR_NODE_UNSCHEDULABLE],
            ),
            (
                "memory pressure is not this predicate's business",
                NodeBuilder::new("n").condition("MemoryPressure", "True"),
                vec![],
            ),
        ];
        for (name, node, want) in cases {
            assert_eq!(reasons(node), want, "{name}");
        }
    }

    #[test]
    fn a_cordoned_node_fails_even_for_a_pod_that_tolerates_it() {
        let node = NodeBuilder::new("n").unschedulable().info();
        let tolerant = PodBuilder::new("p").toleration(UNSCHEDULABLE_TAINT_KEY, "Exists", "", "NoSchedule").build();
        assert_eq!(reasons_of(&CheckNodeCondition, tolerant, &node), vec![ERR_NODE_UNSCHEDULABLE]);
    }

    #[test]
    fn every_reason_is_unresolvable() {
        for r in [ERR_NODE_NOT_READY, ERR_NODE_OUT_OF_DISK, ERR_NODE_NETWORK_UNAVAILABLE, ERR_NODE_UNSCHEDULABLE] {
            assert!(!r.is_resolvable(), "{r}");
        }
    }

    #[test]
    fn a_node_without_conditions_passes() {
        assert!(reasons(with_conditions("n", &[])).is_empty());
    }
}
