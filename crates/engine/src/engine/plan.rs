//! What the engine runs: the predicates in their static order, whether to stop at a node's first
//! failure, and the weighted priorities. The Policy parser (`policy`) makes it from a
//! Policy file, or the default set when there is none; the registry builds
//! its plugins.

use std::sync::Arc;

use crate::engine::ordering::{DynamicOrder, OrderingMode, PredicateOrdering, Settings};
use crate::engine::FilterReport;
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
    /// Static (the order of `predicates`) or dynamic (see [`crate::engine::ordering`]).
    pub ordering: PredicateOrdering,
}

impl Plan {
    /// A plan of these predicates, stopping at the first failure, without priorities.
    pub fn of_predicates(predicates: Vec<Arc<dyn AnyPredicate>>) -> Plan {
        Plan { predicates, ..Plan::default() }
    }

    /// This plan with its predicates ordered by `mode` (a dynamic order starts afresh).
    pub fn with_ordering(self, mode: OrderingMode) -> Plan {
        self.with_ordering_settings(mode, Settings::default())
    }

    /// [`Plan::with_ordering`] publishing the dynamic order as `settings` say.
    pub fn with_ordering_settings(self, mode: OrderingMode, settings: Settings) -> Plan {
        let pinned = self.pinned();
        self.with_ordering_pinned(mode, pinned, settings)
    }

    /// This plan ordered by `mode`, its first `pinned` predicates placed by the Policy's `order`
    /// (dynamic ordering leaves them where they are).
    pub fn with_ordering_pinned(self, mode: OrderingMode, pinned: usize, settings: Settings) -> Plan {
        let ordering = match mode {
            OrderingMode::Static => PredicateOrdering::Static,
            OrderingMode::Dynamic => {
                PredicateOrdering::Dynamic(Arc::new(DynamicOrder::new(&self.predicates, pinned, settings)))
            }
        };
        Plan { ordering, ..self }
    }

    /// How many leading predicates dynamic ordering leaves in place (0 under static ordering,
    /// which moves none).
    pub fn pinned(&self) -> usize {
        match &self.ordering {
            PredicateOrdering::Dynamic(order) => order.pinned(),
            PredicateOrdering::Static => 0,
        }
    }

    /// The order a request starting now runs the predicates in, as plan slots; `None`: plan
    /// order. `alwaysCheckAllPredicates` runs every predicate in plan order: ordering changes
    /// nothing there.
    pub fn current_order(&self) -> Option<Arc<Vec<usize>>> {
        match &self.ordering {
            PredicateOrdering::Dynamic(order) if !self.always_check_all => Some(order.current()),
            _ => None,
        }
    }

    /// The names of the predicates in the order a request starting now runs them.
    pub fn ordered_predicate_names(&self) -> Vec<&str> {
        match self.current_order() {
            None => self.predicate_names(),
            Some(order) => order.iter().filter_map(|&slot| self.predicates.get(slot)).map(|p| p.name()).collect(),
        }
    }

    /// Takes in what a /filter request did (the dynamic order learns from it).
    pub fn observe(&self, report: &FilterReport) {
        if let PredicateOrdering::Dynamic(order) = &self.ordering {
            if !self.always_check_all {
                order.observe(report);
            }
        }
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
