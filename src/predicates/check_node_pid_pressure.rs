//! CheckNodePIDPressure: a node reporting PIDPressure takes no new pods.

use crate::cluster::NodeInfo;
use crate::engine::PodContext;
use crate::predicates::node_pressure::condition_is_true;
use crate::predicates::{Predicate, Reason};

pub const ERR_NODE_UNDER_PID_PRESSURE: Reason = Reason::unresolvable("node(s) had pid pressure");

#[derive(Debug)]
pub struct CheckNodePIDPressure;

impl Predicate for CheckNodePIDPressure {
    fn name(&self) -> &str {
        "CheckNodePIDPressure"
    }

    fn check(&self, _pod: &PodContext, node: &NodeInfo, reasons: &mut Vec<Reason>) {
        if condition_is_true(node, "PIDPressure") {
            reasons.push(ERR_NODE_UNDER_PID_PRESSURE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predicates::reasons_of;
    use crate::testing::{NodeBuilder, PodBuilder};

    #[test]
    fn every_pod_is_refused_under_pressure() {
        let cases = [
            ("pressure", "True", PodBuilder::new("p"), vec![ERR_NODE_UNDER_PID_PRESSURE]),
            (
                "pressure, burstable pod",
                "True",
                PodBuilder::new("p").req(&[("cpu", "1")]),
                vec![ERR_NODE_UNDER_PID_PRESSURE],
            ),
            ("no pressure", "False", PodBuilder::new("p"), vec![]),
            ("unknown is not pressure", "Unknown", PodBuilder::new("p"), vec![]),
        ];
        for (name, status, pod, want) in cases {
            let node = NodeInfo::from_parts(NodeBuilder::new("n").condition("PIDPressure", status).build(), []);
            assert_eq!(reasons_of(&CheckNodePIDPressure, pod.build(), &node), want, "{name}");
        }
    }
}
