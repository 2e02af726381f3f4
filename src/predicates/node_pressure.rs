//! The shape the three pressure predicates share: a node reporting a pressure condition as `True`
//! refuses pods (all of them, or only BestEffort ones for memory).

use crate::cluster::NodeInfo;
use crate::engine::PodContext;
use crate::predicates::{Predicate, Reason};

/// A pressure predicate: its Policy name, the condition it reads and the reason it reports.
#[derive(Debug)]
pub struct NodePressure {
    pub name: &'static str,
    pub condition: &'static str,
    pub reason: Reason,
    /// Memory pressure refuses BestEffort pods only: they are the first the kubelet evicts.
    pub best_effort_only: bool,
}

pub fn condition_is_true(node: &NodeInfo, type_: &str) -> bool {
    node.node().status.conditions.iter().any(|c| c.type_ == type_ && c.status == "True")
}

impl Predicate for NodePressure {
    fn name(&self) -> &str {
        self.name
    }

    fn check(&self, pod: &PodContext, node: &NodeInfo, reasons: &mut Vec<Reason>) {
        if (pod.best_effort || !self.best_effort_only) && condition_is_true(node, self.condition) {
            reasons.push(self.reason.clone());
        }
    }
}
