//! HostName: a pod that names its node (`spec.nodeName`) fits only that node.

use crate::cluster::NodeInfo;
use crate::framework::PodContext;
use crate::framework::{AnyPredicate, ArgumentError, PredicateArgs};
use crate::framework::{Cause, ClusterView, Failures, Predicate, Reason, ReasonKind};
use std::sync::Arc;

/// The registry name.
pub const NAME: &str = "HostName";

/// Builds it (it takes no argument).
pub fn build(_args: &PredicateArgs<'_>) -> Result<Arc<dyn AnyPredicate>, ArgumentError> {
    Ok(Arc::new(HostName))
}

pub const ERR_POD_NOT_MATCH_HOST_NAME: Reason =
    Reason::of(Cause::HostNameMismatch, ReasonKind::Unresolvable, "node(s) didn't match the requested hostname");

#[derive(Debug)]
pub struct HostName;

/// The check, shared with GeneralPredicates.
pub fn fits_host(pod: &PodContext, node: &NodeInfo) -> bool {
    let wanted = &pod.pod.spec.node_name;
    wanted.is_empty() || wanted == node.name()
}

impl Predicate for HostName {
    type State = ();

    fn name(&self) -> &str {
        NAME
    }

    fn failures(&self) -> Failures {
        Failures::Unresolvable
    }

    fn prepare(&self, _pod: &PodContext, _view: &ClusterView<'_>) {}

    fn check(&self, pod: &PodContext, _state: &(), node: &NodeInfo, reasons: &mut Vec<Reason>) {
        if !fits_host(pod, node) {
            reasons.push(ERR_POD_NOT_MATCH_HOST_NAME);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predicates::reasons_of;
    use crate::testing::{NodeBuilder, PodBuilder};

    #[test]
    fn host_names() {
        let node = NodeBuilder::new("n1").info();
        let cases = [
            ("no nodeName", PodBuilder::new("p"), vec![]),
            ("this node", PodBuilder::new("p").node("n1"), vec![]),
            ("another node", PodBuilder::new("p").node("n2"), vec![ERR_POD_NOT_MATCH_HOST_NAME]),
        ];
        for (name, pod, want) in cases {
            assert_eq!(reasons_of(&HostName, pod.build(), &node), want, "{name}");
        }
    }
}
