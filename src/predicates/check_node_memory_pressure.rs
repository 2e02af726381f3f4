//! CheckNodeMemoryPressure: a node under memory pressure refuses BestEffort pods only (they are the
//! first the kubelet evicts); pods with any cpu or memory request or limit still fit.

use crate::framework::Reason;
use crate::predicates::node_pressure::NodePressure;

pub const ERR_NODE_UNDER_MEMORY_PRESSURE: Reason = Reason::unresolvable("node(s) had memory pressure");

pub fn predicate() -> NodePressure {
    NodePressure {
        name: "CheckNodeMemoryPressure",
        condition: |c| c.memory_pressure,
        reason: ERR_NODE_UNDER_MEMORY_PRESSURE,
        best_effort_only: true,
    }
}
