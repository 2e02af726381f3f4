//! GeneralPredicates: PodFitsResources, HostName, PodFitsHostPorts and MatchNodeSelector in one,
//! reporting every part that fails. Its resource check skips the extended resources the Policy's
//! PodFitsResources entry ignores (see [`IgnoredResources`]), as the Policy-era predicate metadata
//! shared that list between the two.

use std::sync::Arc;

use crate::cluster::NodeInfo;
use crate::framework::PodContext;
use crate::framework::{AnyPredicate, ArgumentError, ClusterView, Failures, Predicate, PredicateArgs, Reason};
use crate::plugin_helpers::node_affinity::matches_node_selector;
use crate::predicates::host_name::{fits_host, ERR_POD_NOT_MATCH_HOST_NAME};
use crate::predicates::match_node_selector::ERR_NODE_SELECTOR_NOT_MATCH;
use crate::predicates::pod_fits_host_ports::{fits_host_ports, ERR_POD_NOT_FITS_HOST_PORTS};
use crate::predicates::pod_fits_resources::{self, check_resources, IgnoredResources};

/// The registry name.
pub const NAME: &str = "GeneralPredicates";

#[derive(Debug, Default)]
pub struct GeneralPredicates {
    ignored: IgnoredResources,
}

impl GeneralPredicates {
    pub fn new(ignored: IgnoredResources) -> Self {
        GeneralPredicates { ignored }
    }
}

/// Builds it with what the Policy's PodFitsResources entry ignores (the registry has checked that
/// entry's argument when it built PodFitsResources).
pub fn build(args: &PredicateArgs<'_>) -> Result<Arc<dyn AnyPredicate>, ArgumentError> {
    let ignored = IgnoredResources::from_argument(args.policy.of(pod_fits_resources::NAME))?;
    Ok(Arc::new(GeneralPredicates::new(ignored)))
}

impl Predicate for GeneralPredicates {
    type State = ();

    fn name(&self) -> &str {
        NAME
    }

    fn failures(&self) -> Failures {
        Failures::MaybeResolvable
    }

    fn prepare(&self, _pod: &PodContext, _view: &ClusterView<'_>) {}

    fn check(&self, pod: &PodContext, _state: &(), node: &NodeInfo, reasons: &mut Vec<Reason>) {
        check_resources(pod, node, &self.ignored, reasons);
        if !fits_host(pod, node) {
            reasons.push(ERR_POD_NOT_MATCH_HOST_NAME);
        }
        if !fits_host_ports(pod, node) {
            reasons.push(ERR_POD_NOT_FITS_HOST_PORTS);
        }
        if !matches_node_selector(pod, node) {
            reasons.push(ERR_NODE_SELECTOR_NOT_MATCH);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predicates::pod_fits_resources::ERR_INSUFFICIENT_CPU;
    use crate::predicates::reasons_of;
    use crate::testing::{NodeBuilder, PodBuilder};

    #[test]
    fn reports_every_failing_part() {
        let node = NodeInfo::from_parts(
            NodeBuilder::new("n1").label("zone", "a").build(),
            [PodBuilder::new("old").host_port(80, "", "").build()],
        );
        let cases = [
            ("fits", PodBuilder::new("p").req(&[("cpu", "1")]), vec![]),
            ("resources only", PodBuilder::new("p").req(&[("cpu", "5")]), vec![ERR_INSUFFICIENT_CPU]),
            (
                "all four parts",
                PodBuilder::new("p").req(&[("cpu", "5")]).node("n2").host_port(80, "", "").node_selector("zone", "b"),
                vec![
                    ERR_INSUFFICIENT_CPU,
                    ERR_POD_NOT_MATCH_HOST_NAME,
                    ERR_POD_NOT_FITS_HOST_PORTS,
                    ERR_NODE_SELECTOR_NOT_MATCH,
                ],
            ),
            ("selector only", PodBuilder::new("p").node_selector("zone", "b"), vec![ERR_NODE_SELECTOR_NOT_MATCH]),
        ];
        for (name, pod, want) in cases {
            assert_eq!(reasons_of(&GeneralPredicates::default(), pod.build(), &node), want, "{name}");
        }
    }

    #[test]
    fn honours_the_ignored_extended_resources() {
        let node = NodeBuilder::new("n1").info();
        let pod = || PodBuilder::new("p").req(&[("example.com/foo", "1"), ("nvidia.com/gpu", "1")]).build();
        let ignored = IgnoredResources::new(vec!["example.com/foo".to_string()], vec![]).unwrap();
        let short = |name: &str| {
            Reason::new(
                std::borrow::Cow::Owned(format!("Insufficient {name}")),
                crate::framework::ReasonKind::Resolvable,
            )
        };
        assert_eq!(
            reasons_of(&GeneralPredicates::default(), pod(), &node),
            vec![short("example.com/foo"), short("nvidia.com/gpu")]
        );
        assert_eq!(reasons_of(&GeneralPredicates::new(ignored), pod(), &node), vec![short("nvidia.com/gpu")]);
    }
}
