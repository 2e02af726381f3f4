//! CheckNodePIDPressure: a node reporting PIDPressure takes no new pods.

use crate::framework::Reason;
use crate::predicates::node_pressure::NodePressure;

pub const ERR_NODE_UNDER_PID_PRESSURE: Reason = Reason::unresolvable("node(s) had pid pressure");

pub fn predicate() -> NodePressure {
    NodePressure {
        name: "CheckNodePIDPressure",
        condition: |c| c.pid_pressure,
        reason: ERR_NODE_UNDER_PID_PRESSURE,
        best_effort_only: false,
    }
}
