//! PodFitsHostPorts: the host ports the pod binds must be free on the node, with 0.0.0.0 as a
//! wildcard that conflicts with every IP.

use crate::cluster::NodeInfo;
use crate::framework::PodContext;
use crate::framework::{AnyPredicate, ArgumentError, PredicateArgs};
use crate::framework::{Cause, ClusterView, Failures, Predicate, Reason, ReasonKind};
use std::sync::Arc;

/// The registry name.
pub const NAME: &str = "PodFitsHostPorts";

/// Builds it (it takes no argument).
pub fn build(_args: &PredicateArgs<'_>) -> Result<Arc<dyn AnyPredicate>, ArgumentError> {
    Ok(Arc::new(PodFitsHostPorts))
}

pub const ERR_POD_NOT_FITS_HOST_PORTS: Reason = Reason::of(
    Cause::HostPortConflict,
    ReasonKind::Resolvable,
    "node(s) didn't have free ports for the requested pod ports",
);

#[derive(Debug)]
pub struct PodFitsHostPorts;

/// The check, shared with GeneralPredicates.
pub fn fits_host_ports(pod: &PodContext, node: &NodeInfo) -> bool {
    let used = node.pods.used_ports();
    !pod.host_ports.iter().any(|want| used.iter().any(|u| want.conflicts_with(u)))
}

impl Predicate for PodFitsHostPorts {
    type State = ();

    fn name(&self) -> &str {
        NAME
    }

    fn failures(&self) -> Failures {
        Failures::MaybeResolvable
    }

    fn prepare(&self, _pod: &PodContext, _view: &ClusterView<'_>) {}

    fn check(&self, pod: &PodContext, _state: &(), node: &NodeInfo, reasons: &mut Vec<Reason>) {
        if !fits_host_ports(pod, node) {
            reasons.push(ERR_POD_NOT_FITS_HOST_PORTS);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predicates::reasons_of;
    use crate::testing::{NodeBuilder, PodBuilder};

    #[test]
    fn host_ports() {
        let fail = vec![ERR_POD_NOT_FITS_HOST_PORTS];
        // (name, port used on the node as (port, protocol, ip), port the pod wants, want)
        let cases = [
            ("free node", None, (80, "TCP", ""), vec![]),
            ("same port", Some((80, "TCP", "")), (80, "TCP", ""), fail.clone()),
            ("other port", Some((80, "TCP", "")), (8080, "TCP", ""), vec![]),
            ("other protocol", Some((53, "TCP", "")), (53, "UDP", ""), vec![]),
            ("default protocol is TCP", Some((80, "TCP", "")), (80, "", ""), fail.clone()),
            ("specific IPs apart", Some((80, "TCP", "10.0.0.1")), (80, "TCP", "10.0.0.2"), vec![]),
            ("same specific IP", Some((80, "TCP", "10.0.0.1")), (80, "TCP", "10.0.0.1"), fail.clone()),
            ("wildcard wanted, specific used", Some((80, "TCP", "10.0.0.1")), (80, "TCP", "0.0.0.0"), fail.clone()),
            ("specific wanted, wildcard used", Some((80, "TCP", "")), (80, "TCP", "10.0.0.1"), fail.clone()),
            ("SCTP", Some((9000, "SCTP", "")), (9000, "SCTP", ""), fail.clone()),
        ];
        for (name, used, (port, proto, ip), want) in cases {
            let existing = used.map(|(p, pr, i)| PodBuilder::new("old").host_port(p, pr, i).build());
            let node = NodeInfo::from_parts(NodeBuilder::new("n").build(), existing);
            let pod = PodBuilder::new("p").host_port(port, proto, ip).build();
            assert_eq!(reasons_of(&PodFitsHostPorts, pod, &node), want, "{name}");
        }
    }

    #[test]
    fn pods_without_host_ports_always_fit() {
        let node =
            NodeInfo::from_parts(NodeBuilder::new("n").build(), [PodBuilder::new("old").host_port(80, "", "").build()]);
        assert!(reasons_of(&PodFitsHostPorts, PodBuilder::new("p").build(), &node).is_empty());
    }
}
