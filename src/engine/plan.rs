//! What the engine runs: the predicates in their static order, whether to stop at a node's first
//! failure, and the weighted priorities. The Policy parser (`policy`) makes it from a
//! Policy file, or the default set when there is none; the registry builds
//! its plugins.

use std::sync::Arc;

use crate::framework::{AnyPredicate, Priority};

/// A priority and its weight in the combined score.
#[derive(Debug, Clone)]
pub struct WeightedPriority {
    pub priority: Arc<dyn Priority>,
    pub weight: i64,
}

/// What the engine runs. A predicate's position in `predicates` is its plan slot: where the
/// engine keeps its prepared state and what the report counts by.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub predicates: Vec<Arc<dyn AnyPredicate>>,
    pub always_check_all: bool,
    pub priorities: Vec<WeightedPriority>,
}

impl Plan {
    /// A plan of these predicates, stopping at the first failure, without priorities.
    pub fn of_predicates(predicates: Vec<Arc<dyn AnyPredicate>>) -> Plan {
        Plan { predicates, ..Plan::default() }
    }

    /// The names and weights of the priorities.
    pub fn priority_names(&self) -> Vec<(&str, i64)> {
        self.priorities.iter().map(|p| (p.priority.name(), p.weight)).collect()
    }

    /// The names of the predicates, in plan order.
    pub fn predicate_names(&self) -> Vec<&str> {
        self.predicates.iter().map(|p| p.name()).collect()
    }
}
