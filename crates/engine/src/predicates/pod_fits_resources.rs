//! PodFitsResources: the node's allocatable must cover what the pods on it request plus what the
//! incoming pod requests, for every resource the pod requests, and the node must take one more pod.
//!
//! Its Policy argument, as kube-scheduler's `NodeResourcesFitArgs`, names extended resources it
//! does not check (`ignoredResources`, and `ignoredResourceGroups` by the prefix before `/`): they
//! are managed by someone else, such as a device extender. In the Policy era the ignored list was
//! predicate metadata that GeneralPredicates' resource check read too, so GeneralPredicates
//! honours the same list when the Policy lists both.

use std::sync::Arc;

use crate::cluster::intern::IStr;
use crate::cluster::NodeInfo;
use crate::framework::PodContext;
use crate::framework::{
    AnyPredicate, ArgumentError, Cause, ClusterView, Failures, Predicate, PredicateArgs, Reason, ReasonKind,
    ResourceName,
};
pub use crate::predicates::ignored_resources::IgnoredResources;

/// The registry name.
pub const NAME: &str = "PodFitsResources";

/// A node short of a resource: resolvable (evicting pods frees it), in upstream's words
/// (`Insufficient %v`).
const fn insufficient(resource: ResourceName, message: &'static str) -> Reason {
    Reason::of(Cause::Insufficient { resource }, ReasonKind::Resolvable, message)
}

pub const ERR_INSUFFICIENT_PODS: Reason = insufficient(ResourceName::Pods, "Insufficient pods");
pub const ERR_INSUFFICIENT_CPU: Reason = insufficient(ResourceName::Cpu, "Insufficient cpu");
pub const ERR_INSUFFICIENT_MEMORY: Reason = insufficient(ResourceName::Memory, "Insufficient memory");
pub const ERR_INSUFFICIENT_EPHEMERAL_STORAGE: Reason =
    insufficient(ResourceName::EphemeralStorage, "Insufficient ephemeral-storage");

/// A node short of a scalar resource the pod requests (`name`, interned with the pod's requests:
/// only the message is made here, as before the cause).
pub fn insufficient_scalar(name: IStr) -> Reason {
    let message = format!("Insufficient {name}");
    Reason::owned(Cause::Insufficient { resource: ResourceName::Scalar(name) }, ReasonKind::Resolvable, message)
}

#[derive(Debug, Default)]
pub struct PodFitsResources {
    ignored: IgnoredResources,
}

impl PodFitsResources {
    pub fn new(ignored: IgnoredResources) -> Self {
        PodFitsResources { ignored }
    }
}

/// Builds it from its Policy entry, whose argument object is its own fields
/// ([`crate::predicates::ignored_resources::FIELDS`]).
pub fn build(args: &PredicateArgs<'_>) -> Result<Arc<dyn AnyPredicate>, ArgumentError> {
    Ok(Arc::new(PodFitsResources::new(IgnoredResources::from_argument(args.argument)?)))
}

/// Pushes a reason per resource that does not fit. A resource the pod requests none of is not
/// checked (as kube-scheduler's Fit plugin today), so an over-committed node still takes a pod
/// that asks nothing of that resource; nor is an ignored extended resource.
pub fn check_resources(pod: &PodContext, node: &NodeInfo, ignored: &IgnoredResources, reasons: &mut Vec<Reason>) {
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
    for (i, (name, amount)) in want.scalar.iter().enumerate() {
        if short(*amount, allocatable.scalar(name), requested.scalar(name)) && !ignored.ignores(name) {
            let interned = match pod.scalar_resources.get(i) {
                Some(interned) if interned.as_str() == name => interned.clone(),
                // `requests` changed after the context was made: not on the request path.
                _ => IStr::new(name),
            };
            reasons.push(insufficient_scalar(interned));
        }
    }
}

impl Predicate for PodFitsResources {
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
        insufficient_scalar(IStr::new(name))
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
            assert_eq!(reasons_of(&PodFitsResources::default(), pod.build(), &node), want, "{name}");
        }
    }

    #[test]
    fn existing_pods_init_containers_count_on_the_node() {
        let node = NodeInfo::from_parts(
            NodeBuilder::new("n").build(),
            [PodBuilder::new("old").req(&[("cpu", "1")]).init_req(&[("cpu", "3")]).build()],
        );
        let fits = reasons_of(&PodFitsResources::default(), PodBuilder::new("p").req(&[("cpu", "1")]).build(), &node);
        assert!(fits.is_empty());
        let short =
            reasons_of(&PodFitsResources::default(), PodBuilder::new("p").req(&[("cpu", "1001m")]).build(), &node);
        assert_eq!(short, vec![ERR_INSUFFICIENT_CPU]);
    }

    fn ignoring(resources: &[&str], groups: &[&str]) -> IgnoredResources {
        let owned = |l: &[&str]| l.iter().map(|s| s.to_string()).collect();
        IgnoredResources::new(owned(resources), owned(groups)).unwrap()
    }

    /// upstream: TestPodFitsResources (1.12-1.17 predicates_test.go) case "skip checking ignored
    /// extended resource" (`ignoredExtendedResources`), and TestEnoughRequests (1.20
    /// noderesources/fit_test.go) cases "skip checking ignored extended resource" and "skip
    /// checking ignored extended resource via resource groups". The node is upstream's
    /// `makeAllocatableResources(10, 20, 32, 5, 20, 5)`: 10m cpu, 20 bytes of memory, 32 pods,
    /// 5 example.com/aaa, 20 bytes of ephemeral storage, 5 hugepages-2Mi; example.com/bbb and
    /// kubernetes.io/something are not allocatable.
    #[test]
    fn ignored_extended_resources() {
        let node = NodeInfo::from_parts(
            NodeBuilder::new("n")
                .alloc(&[
                    ("cpu", "10m"),
                    ("memory", "20"),
                    ("pods", "32"),
                    ("example.com/aaa", "5"),
                    ("ephemeral-storage", "20"),
                    ("hugepages-2Mi", "5"),
                ])
                .build(),
            [PodBuilder::new("existing").req(&[("cpu", "0"), ("memory", "0")]).build()],
        );
        let bbb = || PodBuilder::new("p").req(&[("cpu", "1m"), ("memory", "1"), ("example.com/bbb", "1")]);
        let cases: Vec<(&str, PodBuilder, IgnoredResources, Vec<Reason>)> = vec![
            ("not ignored: checked", bbb(), IgnoredResources::default(), vec![insufficient("example.com/bbb")]),
            ("skip checking ignored extended resource", bbb(), ignoring(&["example.com/bbb"], &[]), vec![]),
            (
                "skip checking ignored extended resource via resource groups",
                PodBuilder::new("p").req(&[
                    ("cpu", "1m"),
                    ("memory", "1"),
                    ("example.com/bbb", "1"),
                    ("kubernetes.io/something", "1"),
                ]),
                ignoring(&[], &["example.com"]),
                vec![insufficient("kubernetes.io/something")],
            ),
            (
                "another resource of the same group is still checked",
                bbb(),
                ignoring(&["example.com/aaa"], &["example.org"]),
                vec![insufficient("example.com/bbb")],
            ),
            (
                "native resources are never ignored, even when named",
                PodBuilder::new("p").req(&[("hugepages-2Mi", "6"), ("kubernetes.io/something", "1")]),
                ignoring(&["hugepages-2Mi", "kubernetes.io/something"], &["kubernetes.io"]),
                vec![insufficient("hugepages-2Mi"), insufficient("kubernetes.io/something")],
            ),
            (
                "cpu and memory are still checked",
                PodBuilder::new("p").req(&[("cpu", "11m"), ("example.com/bbb", "1")]),
                ignoring(&["example.com/bbb"], &[]),
                vec![ERR_INSUFFICIENT_CPU],
            ),
        ];
        for (name, pod, ignored, want) in cases {
            assert_eq!(reasons_of(&PodFitsResources::new(ignored), pod.build(), &node), want, "{name}");
        }
    }

    #[test]
    fn ignored_lists_are_validated_as_upstream() {
        let err = |resources: &[&str], groups: &[&str]| {
            let owned = |l: &[&str]| l.iter().map(|s| s.to_string()).collect();
            IgnoredResources::new(owned(resources), owned(groups)).unwrap_err().to_string()
        };
        // upstream: TestValidateFitArgs (1.20 validation_pluginargs_test.go): "example.com/" in
        // either list, a 64-character group, a group with a '/'.
        assert!(
            err(&["example.com/"], &[]).starts_with("argument.ignoredResources[0]: "),
            "{}",
            err(&["example.com/"], &[])
        );
        assert!(err(&["example.com/"], &[]).contains("name part must be non-empty"));
        assert!(err(&[], &[&"a".repeat(64)]).contains("argument.ignoredResourceGroups[0]: "));
        assert!(err(&[], &[&"a".repeat(64)]).contains("no more than 63 characters"));
        assert_eq!(
            err(&[], &["ok.com", "example.com/aa"]),
            "argument.ignoredResourceGroups[1]: \"example.com/aa\": a resource group name can't contain '/'"
        );
        assert!(err(&["fine.io/a", "Bad Name"], &[]).starts_with("argument.ignoredResources[1]: \"Bad Name\""));
    }

    /// Each reason names the resource that is short; a scalar one by the pod's interned name.
    #[test]
    fn the_reason_names_the_resource() {
        let node = node(&[("pods", "1"), ("example.com/gpu", "1")], &[]);
        let pod = PodBuilder::new("p")
            .req(&[("cpu", "5"), ("memory", "17Gi"), ("ephemeral-storage", "101Gi"), ("example.com/gpu", "2")])
            .build();
        let ctx = PodContext::new(pod.clone());
        let reasons = reasons_of(&PodFitsResources::default(), pod, &node);
        let resources: Vec<String> = reasons
            .iter()
            .map(|r| match &r.cause {
                Cause::Insufficient { resource } => resource.as_str().to_string(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(resources, ["pods", "cpu", "memory", "ephemeral-storage", "example.com/gpu"]);
        let messages: Vec<&str> = reasons.iter().map(|r| r.message.as_ref()).collect();
        assert_eq!(messages.last(), Some(&"Insufficient example.com/gpu"));
        assert_eq!(reasons[0].cause, Cause::Insufficient { resource: ResourceName::Pods });
        assert_eq!(
            reasons[4].cause,
            Cause::Insufficient { resource: ResourceName::Scalar(ctx.scalar_resources[0].clone()) }
        );
        assert!(reasons.iter().all(Reason::is_resolvable));
    }
}
