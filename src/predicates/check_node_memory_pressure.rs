//! CheckNodeMemoryPressure: a node under memory pressure refuses BestEffort pods only (they are the
//! first the kubelet evicts); pods with any cpu or memory request or limit still fit.

use crate::framework::Reason;
use crate::framework::{AnyPredicate, ArgumentError, PredicateArgs};
use crate::predicates::node_pressure::NodePressure;
use std::sync::Arc;

pub const ERR_NODE_UNDER_MEMORY_PRESSURE: Reason = Reason::unresolvable("node(s) had memory pressure");

/// The registry name.
pub const NAME: &str = "CheckNodeMemoryPressure";

/// Builds it (it takes no argument).
pub fn build(_args: &PredicateArgs<'_>) -> Result<Arc<dyn AnyPredicate>, ArgumentError> {
    Ok(Arc::new(predicate()))
}

pub fn predicate() -> NodePressure {
    NodePressure {
        name: NAME,
        condition: |c| c.memory_pressure,
        reason: ERR_NODE_UNDER_MEMORY_PRESSURE,
        best_effort_only: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::NodeInfo;
    use crate::predicates::reasons_of;
    use crate::testing::{NodeBuilder, PodBuilder};

    #[test]
    fn only_best_effort_pods_are_refused() {
        let pressured = || NodeInfo::from_parts(NodeBuilder::new("n").condition("MemoryPressure", "True").build(), []);
        let calm = || NodeInfo::from_parts(NodeBuilder::new("n").condition("MemoryPressure", "False").build(), []);
        let cases = [
            (
                "best effort on a pressured node",
                PodBuilder::new("p"),
                pressured(),
                vec![ERR_NODE_UNDER_MEMORY_PRESSURE],
            ),
            ("burstable on a pressured node", PodBuilder::new("p").req(&[("memory", "1Mi")]), pressured(), vec![]),
            ("limits only on a pressured node", PodBuilder::new("p").limits(&[("cpu", "1")]), pressured(), vec![]),
            (
                "extended resources only is still best effort",
                PodBuilder::new("p").req(&[("example.com/foo", "1")]),
                pressured(),
                vec![ERR_NODE_UNDER_MEMORY_PRESSURE],
            ),
            ("best effort on a calm node", PodBuilder::new("p"), calm(), vec![]),
        ];
        for (name, pod, node, want) in cases {
            assert_eq!(reasons_of(&predicate(), pod.build(), &node), want, "{name}");
        }
    }
}
