//! CheckNodeCondition: the node must be Ready and its network available.

use crate::cluster::NodeInfo;
use crate::engine::PodContext;
use crate::predicates::{Predicate, Reason};

pub const ERR_NODE_NOT_READY: Reason = Reason::unresolvable("node(s) were not ready");
pub const ERR_NODE_NETWORK_UNAVAILABLE: Reason = Reason::unresolvable("node(s) had unavailable network");

/// Fails a node whose `Ready` condition is not `True` or whose `NetworkUnavailable` condition is
/// not `False`. A node that reports neither condition passes, as upstream.
#[derive(Debug)]
pub struct CheckNodeCondition;

impl Predicate for CheckNodeCondition {
    fn name(&self) -> &str {
        "CheckNodeCondition"
    }

    fn check(&self, _pod: &PodContext, node: &NodeInfo, reasons: &mut Vec<Reason>) {
        let c = node.conditions();
        if c.not_ready {
            reasons.push(ERR_NODE_NOT_READY);
        }
        if c.network_unavailable {
            reasons.push(ERR_NODE_NETWORK_UNAVAILABLE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predicates::reasons_of;
    use crate::testing::{NodeBuilder, PodBuilder};

    #[test]
    fn conditions() {
        let cases = [
            ("ready", NodeBuilder::new("n"), vec![]),
            ("not ready", NodeBuilder::new("n").condition("Ready", "False"), vec![ERR_NODE_NOT_READY]),
            ("ready unknown", NodeBuilder::new("n").condition("Ready", "Unknown"), vec![ERR_NODE_NOT_READY]),
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
                "both",
                NodeBuilder::new("n").condition("Ready", "False").condition("NetworkUnavailable", "True"),
                vec![ERR_NODE_NOT_READY, ERR_NODE_NETWORK_UNAVAILABLE],
            ),
            (
                "memory pressure is not this predicate's business",
                NodeBuilder::new("n").condition("MemoryPressure", "True"),
                vec![],
            ),
        ];
        for (name, node, want) in cases {
            let node = crate::cluster::NodeInfo::from_parts(node.build(), []);
            assert_eq!(reasons_of(&CheckNodeCondition, PodBuilder::new("p").build(), &node), want, "{name}");
        }
    }

    #[test]
    fn a_node_without_conditions_passes() {
        let mut node = NodeBuilder::new("n").build();
        node.status.conditions.clear();
        let node = crate::cluster::NodeInfo::from_parts(node, []);
        assert!(reasons_of(&CheckNodeCondition, PodBuilder::new("p").build(), &node).is_empty());
    }
}
