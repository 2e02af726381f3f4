//! CheckNodeMemoryPressure: a node under memory pressure refuses BestEffort pods only (they are the
//! first the kubelet evicts); pods with any cpu or memory request or limit still fit.

use crate::framework::Reason;
use crate::framework::{AnyPredicate, ArgumentError, PredicateArgs};
use crate::framework::{Cause, Pressure, ReasonKind};
use crate::predicates::node_pressure::NodePressure;
use std::sync::Arc;

pub const ERR_NODE_UNDER_MEMORY_PRESSURE: Reason =
    Reason::of(Cause::NodePressure(Pressure::Memory), ReasonKind::Unresolvable, "node(s) had memory pressure");

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
