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

#[cfg(test)]
mod tests {
    use crate::predicates::node_pressure::NodePressure;
    use crate::predicates::reasons_of;
    use crate::predicates::{check_node_disk_pressure, check_node_memory_pressure, check_node_pid_pressure};
    use crate::testing::{NodeBuilder, PodBuilder};

    /// The three predicates, with the condition each reads: memory refuses BestEffort pods only,
    /// disk and pid every pod.
    fn pressures() -> [(NodePressure, &'static str); 3] {
        [
            (check_node_memory_pressure::predicate(), "MemoryPressure"),
            (check_node_disk_pressure::predicate(), "DiskPressure"),
            (check_node_pid_pressure::predicate(), "PIDPressure"),
        ]
    }

    #[test]
    fn a_pressured_node_refuses_what_its_predicate_says() {
        use check_node_disk_pressure::ERR_NODE_UNDER_DISK_PRESSURE as DISK;
        use check_node_memory_pressure::ERR_NODE_UNDER_MEMORY_PRESSURE as MEMORY;
        use check_node_pid_pressure::ERR_NODE_UNDER_PID_PRESSURE as PID;
        assert_eq!(pressures().map(|(p, _)| p.reason), [MEMORY, DISK, PID]);
        assert_eq!(
            pressures().map(|(p, _)| p.name),
            ["CheckNodeMemoryPressure", "CheckNodeDiskPressure", "CheckNodePIDPressure"]
        );

        // (case, condition status, pod, refused by memory, by disk, by pid)
        let cases = [
            ("best effort, pressure", "True", PodBuilder::new("p"), [true, true, true]),
            ("burstable, pressure", "True", PodBuilder::new("p").req(&[("memory", "1Mi")]), [false, true, true]),
            ("cpu request, pressure", "True", PodBuilder::new("p").req(&[("cpu", "1")]), [false, true, true]),
            ("limits only, pressure", "True", PodBuilder::new("p").limits(&[("cpu", "1")]), [false, true, true]),
            (
                "extended resources only is still best effort",
                "True",
                PodBuilder::new("p").req(&[("example.com/foo", "1")]),
                [true, true, true],
            ),
            ("best effort, no pressure", "False", PodBuilder::new("p"), [false, false, false]),
            ("unknown is not pressure", "Unknown", PodBuilder::new("p"), [false, false, false]),
        ];
        for (name, status, pod, refused) in cases {
            for ((predicate, condition), refused) in pressures().into_iter().zip(refused) {
                let node = NodeBuilder::new("n").condition(condition, status).info();
                let want = if refused { vec![predicate.reason.clone()] } else { vec![] };
                assert_eq!(reasons_of(&predicate, pod.clone().build(), &node), want, "{name}: {condition}");
            }
        }
    }
}
