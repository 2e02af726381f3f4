//! CheckNodePIDPressure: a node reporting PIDPressure takes no new pods.

use crate::framework::Reason;
use crate::framework::{AnyPredicate, ArgumentError, PredicateArgs};
use crate::predicates::node_pressure::NodePressure;
use std::sync::Arc;

pub const ERR_NODE_UNDER_PID_PRESSURE: Reason = Reason::unresolvable("node(s) had pid pressure");

/// The registry name.
pub const NAME: &str = "CheckNodePIDPressure";

/// Builds it (it takes no argument).
pub fn build(_args: &PredicateArgs<'_>) -> Result<Arc<dyn AnyPredicate>, ArgumentError> {
    Ok(Arc::new(predicate()))
}

pub fn predicate() -> NodePressure {
    NodePressure {
        name: NAME,
        condition: |c| c.pid_pressure,
        reason: ERR_NODE_UNDER_PID_PRESSURE,
        best_effort_only: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::NodeInfo;
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
            assert_eq!(reasons_of(&predicate(), pod.build(), &node), want, "{name}");
        }
    }
}
