//! CheckNodeMemoryPressure: a node under memory pressure refuses BestEffort pods only (they are the
//! first the kubelet evicts); pods with any cpu or memory request or limit still fit.

use crate::cluster::NodeInfo;
use crate::engine::PodContext;
use crate::predicates::node_pressure::condition_is_true;
use crate::predicates::{Predicate, Reason};

pub const ERR_NODE_UNDER_MEMORY_PRESSURE: Reason = Reason::unresolvable("node(s) had memory pressure");

#[derive(Debug)]
pub struct CheckNodeMemoryPressure;

impl Predicate for CheckNodeMemoryPressure {
    fn name(&self) -> &str {
        "CheckNodeMemoryPressure"
    }

    fn check(&self, pod: &PodContext, node: &NodeInfo, reasons: &mut Vec<Reason>) {
        if pod.best_effort && condition_is_true(node, "MemoryPressure") {
            reasons.push(ERR_NODE_UNDER_MEMORY_PRESSURE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
            assert_eq!(reasons_of(&CheckNodeMemoryPressure, pod.build(), &node), want, "{name}");
        }
    }
}
