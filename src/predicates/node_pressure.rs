//! The shape the three pressure predicates share: a node reporting a pressure condition as `True`
//! refuses pods (all of them, or only BestEffort ones for memory).

use crate::cluster::{NodeConditions, NodeInfo};
use crate::framework::PodContext;
use crate::framework::{ClusterView, Failures, Predicate, Reason};

/// A pressure predicate: its Policy name, the condition it reads and the reason it reports.
#[derive(Debug)]
pub struct NodePressure {
    pub name: &'static str,
    /// Reads the condition from the node's prepared flags.
    pub condition: fn(&NodeConditions) -> bool,
    pub reason: Reason,
    /// Memory pressure refuses BestEffort pods only: they are the first the kubelet evicts.
    pub best_effort_only: bool,
}

impl Predicate for NodePressure {
    type State = ();

    fn name(&self) -> &str {
        self.name
    }

    fn failures(&self) -> Failures {
        Failures::Unresolvable
    }

    fn prepare(&self, _pod: &PodContext, _view: &ClusterView<'_>) {}

    fn check(&self, pod: &PodContext, _state: &(), node: &NodeInfo, reasons: &mut Vec<Reason>) {
        if (pod.best_effort || !self.best_effort_only) && (self.condition)(&node.conditions()) {
            reasons.push(self.reason.clone());
        }
    }
}
