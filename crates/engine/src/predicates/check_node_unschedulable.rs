//! CheckNodeUnschedulable: a cordoned node (`spec.unschedulable`) takes only pods that tolerate
//! `node.kubernetes.io/unschedulable:NoSchedule`.

use crate::cluster::NodeInfo;
use crate::framework::PodContext;
use crate::framework::{AnyPredicate, ArgumentError, PredicateArgs};
use crate::framework::{Cause, ClusterView, Failures, Predicate, Reason, ReasonKind};
use crate::plugin_helpers::tolerations::{tolerates_parts, NO_SCHEDULE};
use std::sync::Arc;

/// The registry name.
pub const NAME: &str = "CheckNodeUnschedulable";

/// Builds it (it takes no argument).
pub fn build(_args: &PredicateArgs<'_>) -> Result<Arc<dyn AnyPredicate>, ArgumentError> {
    Ok(Arc::new(CheckNodeUnschedulable))
}

pub const ERR_NODE_UNSCHEDULABLE: Reason =
    Reason::of(Cause::NodeUnschedulable, ReasonKind::Unresolvable, "node(s) were unschedulable");

/// The taint kube-scheduler checks a cordoned node against.
pub const UNSCHEDULABLE_TAINT_KEY: &str = "node.kubernetes.io/unschedulable";

#[derive(Debug)]
pub struct CheckNodeUnschedulable;

impl Predicate for CheckNodeUnschedulable {
    type State = ();

    fn name(&self) -> &str {
        NAME
    }

    fn failures(&self) -> Failures {
        Failures::Unresolvable
    }

    fn prepare(&self, _pod: &PodContext, _view: &ClusterView<'_>) {}

    fn check(&self, pod: &PodContext, _state: &(), node: &NodeInfo, reasons: &mut Vec<Reason>) {
        if !node.node().spec.unschedulable {
            return;
        }
        let tolerated =
            pod.pod.spec.tolerations.iter().any(|t| tolerates_parts(t, UNSCHEDULABLE_TAINT_KEY, "", NO_SCHEDULE));
        if !tolerated {
            reasons.push(ERR_NODE_UNSCHEDULABLE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predicates::reasons_of;
    use crate::testing::{NodeBuilder, PodBuilder};

    #[test]
    fn cordoned_nodes() {
        let key = UNSCHEDULABLE_TAINT_KEY;
        let cases = [
            ("schedulable node", NodeBuilder::new("n"), PodBuilder::new("p"), vec![]),
            (
                "cordoned node",
                NodeBuilder::new("n").unschedulable(),
                PodBuilder::new("p"),
                vec![ERR_NODE_UNSCHEDULABLE],
            ),
            (
                "tolerated by Exists",
                NodeBuilder::new("n").unschedulable(),
                PodBuilder::new("p").toleration(key, "Exists", "", "NoSchedule"),
                vec![],
            ),
            (
                "tolerated by a wildcard toleration",
                NodeBuilder::new("n").unschedulable(),
                PodBuilder::new("p").toleration("", "Exists", "", ""),
                vec![],
            ),
            (
                "a NoExecute toleration does not count",
                NodeBuilder::new("n").unschedulable(),
                PodBuilder::new("p").toleration(key, "Exists", "", "NoExecute"),
                vec![ERR_NODE_UNSCHEDULABLE],
            ),
            (
                "another key does not count",
                NodeBuilder::new("n").unschedulable(),
                PodBuilder::new("p").toleration("dedicated", "Exists", "", "NoSchedule"),
                vec![ERR_NODE_UNSCHEDULABLE],
            ),
        ];
        for (name, node, pod, want) in cases {
            let node = crate::cluster::NodeInfo::from_parts(node.build(), []);
            assert_eq!(reasons_of(&CheckNodeUnschedulable, pod.build(), &node), want, "{name}");
        }
    }
}
