//! CheckNodeDiskPressure: a node reporting DiskPressure takes no new pods.

use crate::framework::Reason;
use crate::framework::{AnyPredicate, ArgumentError, PredicateArgs};
use crate::framework::{Cause, Pressure, ReasonKind};
use crate::predicates::node_pressure::NodePressure;
use std::sync::Arc;

pub const ERR_NODE_UNDER_DISK_PRESSURE: Reason =
    Reason::of(Cause::NodePressure(Pressure::Disk), ReasonKind::Unresolvable, "node(s) had disk pressure");

/// The registry name.
pub const NAME: &str = "CheckNodeDiskPressure";

/// Builds it (it takes no argument).
pub fn build(_args: &PredicateArgs<'_>) -> Result<Arc<dyn AnyPredicate>, ArgumentError> {
    Ok(Arc::new(predicate()))
}

pub fn predicate() -> NodePressure {
    NodePressure {
        name: NAME,
        condition: |c| c.disk_pressure,
        reason: ERR_NODE_UNDER_DISK_PRESSURE,
        best_effort_only: false,
    }
}
