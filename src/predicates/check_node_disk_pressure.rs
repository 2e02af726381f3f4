//! CheckNodeDiskPressure: a node reporting DiskPressure takes no new pods.

use crate::framework::Reason;
use crate::predicates::node_pressure::NodePressure;

pub const ERR_NODE_UNDER_DISK_PRESSURE: Reason = Reason::unresolvable("node(s) had disk pressure");

pub fn predicate() -> NodePressure {
    NodePressure {
        name: "CheckNodeDiskPressure",
        condition: |c| c.disk_pressure,
        reason: ERR_NODE_UNDER_DISK_PRESSURE,
        best_effort_only: false,
    }
}
