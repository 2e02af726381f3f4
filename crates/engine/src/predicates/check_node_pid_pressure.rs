//! CheckNodePIDPressure: a node reporting PIDPressure takes no new pods.

use crate::framework::Reason;
use crate::framework::{AnyPredicate, ArgumentError, PredicateArgs};
use crate::framework::{Cause, Pressure, ReasonKind};
use crate::predicates::node_pressure::NodePressure;
use std::sync::Arc;

pub const ERR_NODE_UNDER_PID_PRESSURE: Reason =
    Reason::of(Cause::NodePressure(Pressure::Pid), ReasonKind::Unresolvable, "node(s) had pid pressure");

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
