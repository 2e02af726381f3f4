//! PodFitsResources: the node's allocatable must cover what the pods on it request plus what the
//! incoming pod requests, for every resource the pod requests, and the node must take one more pod.

use std::borrow::Cow;

use crate::cluster::NodeInfo;
use crate::engine::PodContext;
use crate::predicates::{Predicate, Reason};

pub const ERR_INSUFFICIENT_PODS: Reason = Reason::resolvable("Insufficient pods");
pub const ERR_INSUFFICIENT_CPU: Reason = Reason::resolvable("Insufficient cpu");
pub const ERR_INSUFFICIENT_MEMORY: Reason = Reason::resolvable("Insufficient memory");
pub const ERR_INSUFFICIENT_EPHEMERAL_STORAGE: Reason = Reason::resolvable("Insufficient ephemeral-storage");

#[derive(Debug)]
pub struct PodFitsResources;

/// Pushes a reason per resource that does not fit. A resource the pod requests none of is not
/// checked (as kube-scheduler's Fit plugin today), so an over-committed node still takes a pod
/// that asks nothing of that resource.
pub fn check_resources(pod: &PodContext, node: &NodeInfo, reasons: &mut Vec<Reason>) {
    let allocatable = node.allocatable();
    let requested = node.pods.requested();
    let want = &pod.requests;

    if node.pods.pods().len() as i64 + 1 > allocatable.allowed_pod_number {
        reasons.push(ERR_INSUFFICIENT_PODS);
    }
    let short = |want: i64, alloc: i64, used: i64| want > 0 && want > alloc.saturating_sub(used);
    if short(want.milli_cpu, allocatable.milli_cpu, requested.milli_cpu) {
        reasons.push(ERR_INSUFFICIENT_CPU);
    }
    if short(want.memory, allocatable.memory, requested.memory) {
        reasons.push(ERR_INSUFFICIENT_MEMORY);
    }
    if short(want.ephemeral_storage, allocatable.ephemeral_storage, requested.ephemeral_storage) {
        reasons.push(ERR_INSUFFICIENT_EPHEMERAL_STORAGE);
    }
    for (name, amount) in &want.scalar {
        if short(*amount, allocatable.scalar(name), requested.scalar(name)) {
            reasons.push(Reason::new(Cow::Owned(format!("Insufficient {name}")), true));
        }
    }
}

impl Predicate for PodFitsResources {
    fn name(&self) -> &str {
        "PodFitsResources"
    }

    fn check(&self, pod: &PodContext, node: &NodeInfo, reasons: &mut Vec<Reason>) {
        check_resources(pod, node, reasons);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predicates::reasons_of;
    use crate::testing::{NodeBuilder, PodBuilder};

    fn node(alloc: &[(&str, &str)], used: &[(&str, &str)]) -> NodeInfo {
        NodeInfo::from_parts(
            NodeBuilder::new("n").alloc(alloc).build(),
            [PodBuilder::new("existing").req(used).build()],
        )
    }

    fn insufficient(name: &str) -> Reason {
        Reason::new(Cow::Owned(format!("Insufficient {name}")), true)
    }

    #[test]
    fn resources() {
        // Nodes have 4 cpu, 16Gi memory, 100Gi ephemeral storage and 110 pods unless set here.
        let cases: Vec<(&str, NodeInfo, PodBuilder, Vec<Reason>)> = vec![
            ("fits", node(&[], &[("cpu", "1")]), PodBuilder::new("p").req(&[("cpu", "3")]), vec![]),
            ("exactly fits", node(&[], &[("cpu", "3500m")]), PodBuilder::new("p").req(&[("cpu", "500m")]), vec![]),
            (
                "one millicore too many",
                node(&[], &[("cpu", "3500m")]),
                PodBuilder::new("p").req(&[("cpu", "501m")]),
                vec![ERR_INSUFFICIENT_CPU],
            ),
            (
                "memory",
                node(&[], &[("memory", "15Gi")]),
                PodBuilder::new("p").req(&[("memory", "2Gi")]),
                vec![ERR_INSUFFICIENT_MEMORY],
            ),
            (
                "ephemeral storage",
                node(&[], &[("ephemeral-storage", "99Gi")]),
                PodBuilder::new("p").req(&[("ephemeral-storage", "2Gi")]),
                vec![ERR_INSUFFICIENT_EPHEMERAL_STORAGE],
            ),
            (
                "every short resource is reported, in order",
                node(&[], &[("cpu", "4"), ("memory", "16Gi")]),
                PodBuilder::new("p").req(&[("memory", "1"), ("cpu", "1m")]),
                vec![ERR_INSUFFICIENT_CPU, ERR_INSUFFICIENT_MEMORY],
            ),
            (
                "a resource the pod asks none of is not checked on an over-committed node",
                node(&[("cpu", "1")], &[("cpu", "2")]),
                PodBuilder::new("p").req(&[("memory", "1Gi")]),
                vec![],
            ),
            (
                "a pod asking nothing fits a full node",
                node(&[("cpu", "1")], &[("cpu", "1")]),
                PodBuilder::new("p"),
                vec![],
            ),
            ("pod count", node(&[("pods", "1")], &[]), PodBuilder::new("p"), vec![ERR_INSUFFICIENT_PODS]),
            (
                "pod count is checked with the resources",
                node(&[("pods", "1"), ("cpu", "1")], &[]),
                PodBuilder::new("p").req(&[("cpu", "2")]),
                vec![ERR_INSUFFICIENT_PODS, ERR_INSUFFICIENT_CPU],
            ),
            (
                "extended resource available",
                node(&[("nvidia.com/gpu", "2")], &[("nvidia.com/gpu", "1")]),
                PodBuilder::new("p").req(&[("nvidia.com/gpu", "1")]),
                vec![],
            ),
            (
                "extended resource short",
                node(&[("nvidia.com/gpu", "2")], &[("nvidia.com/gpu", "2")]),
                PodBuilder::new("p").req(&[("nvidia.com/gpu", "1")]),
                vec![insufficient("nvidia.com/gpu")],
            ),
            (
                "extended resource the node lacks",
                node(&[], &[]),
                PodBuilder::new("p").req(&[("example.com/foo", "1")]),
                vec![insufficient("example.com/foo")],
            ),
            (
                "hugepages",
                node(&[("hugepages-2Mi", "10Mi")], &[]),
                PodBuilder::new("p").req(&[("hugepages-2Mi", "12Mi")]),
                vec![insufficient("hugepages-2Mi")],
            ),
            (
                "init container peak counts",
                node(&[], &[("cpu", "3")]),
                PodBuilder::new("p").req(&[("cpu", "100m")]).init_req(&[("cpu", "2")]),
                vec![ERR_INSUFFICIENT_CPU],
            ),
            (
                "overhead counts",
                node(&[], &[("cpu", "3")]),
                PodBuilder::new("p").req(&[("cpu", "1")]).overhead(&[("cpu", "1m")]),
                vec![ERR_INSUFFICIENT_CPU],
            ),
            (
                "unprefixed unknown resources are ignored",
                node(&[], &[]),
                PodBuilder::new("p").req(&[("gpu", "1")]),
                vec![],
            ),
        ];
        for (name, node, pod, want) in cases {
            assert_eq!(reasons_of(&PodFitsResources, pod.build(), &node), want, "{name}");
        }
    }

    #[test]
    fn existing_pods_init_containers_count_on_the_node() {
        let node = NodeInfo::from_parts(
            NodeBuilder::new("n").build(),
            [PodBuilder::new("old").req(&[("cpu", "1")]).init_req(&[("cpu", "3")]).build()],
        );
        let fits = reasons_of(&PodFitsResources, PodBuilder::new("p").req(&[("cpu", "1")]).build(), &node);
        assert!(fits.is_empty());
        let short = reasons_of(&PodFitsResources, PodBuilder::new("p").req(&[("cpu", "1001m")]).build(), &node);
        assert_eq!(short, vec![ERR_INSUFFICIENT_CPU]);
    }
}
