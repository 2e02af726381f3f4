//! What the resource priorities (LeastRequestedPriority, MostRequestedPriority,
//! BalancedResourceAllocation, RequestedToCapacityRatioPriority) share: upstream's
//! `ResourceAllocationPriority` and `calculateResourceAllocatableRequest` (kube-scheduler
//! 1.16-1.17, pkg/scheduler/algorithm/priorities/resource_allocation.go).
//!
//! A node's "requested" amount of a resource is what its pods request plus what the incoming pod
//! requests; its capacity is the node's allocatable. cpu and memory count the *non-zero* requests
//! (a container that asks for no cpu counts 100m, one that asks for no memory 200Mi), so pods
//! without requests still spread; every other resource counts the real requests.

use crate::cluster::resources::{is_scalar_resource_name, CPU, EPHEMERAL_STORAGE, MEMORY};
use crate::cluster::NodeInfo;
use crate::framework::PodContext;

/// A resource the priorities can score, resolved from its name once, when the priority is built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceKey {
    /// Millicores, non-zero requests.
    Cpu,
    /// Bytes, non-zero requests.
    Memory,
    /// Bytes, real requests.
    EphemeralStorage,
    /// An extended resource, hugepages, a `kubernetes.io/` native resource or attachable volumes:
    /// real requests.
    Scalar(String),
}

impl ResourceKey {
    /// The key for a resource name, or `None` for a name the scheduler does not count (upstream
    /// scores such a name as requested 0 of capacity 0).
    pub fn of(name: &str) -> Option<ResourceKey> {
        match name {
            CPU => Some(ResourceKey::Cpu),
            MEMORY => Some(ResourceKey::Memory),
            EPHEMERAL_STORAGE => Some(ResourceKey::EphemeralStorage),
            _ if is_scalar_resource_name(name) => Some(ResourceKey::Scalar(name.to_string())),
            _ => None,
        }
    }

    /// What the incoming pod requests of this resource (non-zero for cpu and memory).
    pub fn pod_request(&self, pod: &PodContext) -> i64 {
        match self {
            ResourceKey::Cpu => pod.non_zero_requests.milli_cpu,
            ResourceKey::Memory => pod.non_zero_requests.memory,
            ResourceKey::EphemeralStorage => pod.requests.ephemeral_storage,
            ResourceKey::Scalar(name) => pod.requests.scalar(name),
        }
    }

    /// `(requested, allocatable)` on a node: what the node's pods request of this resource plus
    /// `pod_request` (from [`ResourceKey::pod_request`]), and the node's allocatable amount.
    pub fn requested_and_allocatable(&self, pod_request: i64, node: &NodeInfo) -> (i64, i64) {
        let allocatable = node.allocatable();
        let (on_node, capacity) = match self {
            ResourceKey::Cpu => (node.pods.non_zero_requested().milli_cpu, allocatable.milli_cpu),
            ResourceKey::Memory => (node.pods.non_zero_requested().memory, allocatable.memory),
            ResourceKey::EphemeralStorage => (node.pods.requested().ephemeral_storage, allocatable.ephemeral_storage),
            ResourceKey::Scalar(name) => (node.pods.requested().scalar(name), allocatable.scalar(name)),
        };
        (on_node.saturating_add(pod_request), capacity)
    }
}

/// The non-zero cpu (millicores) and memory (bytes) requested on a node with the pod added, and the
/// node's allocatable cpu and memory: `(cpu_requested, cpu_allocatable, memory_requested,
/// memory_allocatable)`.
pub fn cpu_and_memory(pod: &PodContext, node: &NodeInfo) -> (i64, i64, i64, i64) {
    let on_node = node.pods.non_zero_requested();
    let allocatable = node.allocatable();
    (
        on_node.milli_cpu.saturating_add(pod.non_zero_requests.milli_cpu),
        allocatable.milli_cpu,
        on_node.memory.saturating_add(pod.non_zero_requests.memory),
        allocatable.memory,
    )
}

/// `a * b / c` without overflow (c > 0), truncated toward zero like Go's integer division.
pub fn mul_div(a: i64, b: i64, c: i64) -> i64 {
    let q = i128::from(a) * i128::from(b) / i128::from(c);
    i64::try_from(q).unwrap_or(if q < 0 { i64::MIN } else { i64::MAX })
}

#[cfg(test)]
pub(crate) mod test_support {
    use std::sync::Arc;

    use crate::cluster::objects::{Node, Pod};
    use crate::cluster::Snapshot;
    use crate::framework::ClusterView;
    use crate::framework::PodContext;
    use crate::framework::Priority;
    use crate::priorities::testing::candidates;
    use crate::testing::{NodeBuilder, PodBuilder};

    /// A node with this allocatable cpu and memory.
    pub(crate) fn node(name: &str, cpu: &str, memory: &str) -> Node {
        alloc_node(name, &[("cpu", cpu), ("memory", memory)])
    }

    /// A node with these allocatable amounts.
    pub(crate) fn alloc_node(name: &str, alloc: &[(&str, &str)]) -> Node {
        NodeBuilder::new(name).alloc(alloc).build()
    }

    /// A pod placed on `node` with one container asking for `requests`.
    pub(crate) fn on(node: &str, name: &str, requests: &[(&str, &str)]) -> Pod {
        PodBuilder::new(name).node(node).req(requests).build()
    }

    /// One case of a table: the pod, the nodes, the pods placed on them, the expected scores in
    /// node order.
    pub(crate) struct ScoreCase {
        pub name: &'static str,
        pub pod: Pod,
        pub nodes: Vec<Node>,
        pub placed: Vec<Pod>,
        pub want: Vec<i64>,
    }

    /// Each case's scores under `priority`, against its `want`.
    pub(crate) fn check(priority: &Arc<dyn Priority>, cases: Vec<ScoreCase>) {
        for c in cases {
            assert_eq!(scores(priority, c.pod, c.nodes, c.placed), c.want, "{}", c.name);
        }
    }

    /// Each node's score for `pod` (in `nodes` order), after `normalize`, with `placed` (pods with
    /// `spec.nodeName` set) on the nodes.
    pub(crate) fn scores(priority: &Arc<dyn Priority>, pod: Pod, nodes: Vec<Node>, placed: Vec<Pod>) -> Vec<i64> {
        let names: Vec<String> = nodes.iter().map(|n| n.metadata.name.clone()).collect();
        let snapshot = Snapshot::build(nodes, placed);
        let ctx = PodContext::new(pod);
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let scorer = priority.prepare(&ctx, &ClusterView::of(&snapshot), &candidates(&snapshot, &refs));
        let mut scores: Vec<i64> =
            names.iter().map(|n| scorer.score(&ctx, &snapshot.node_info(n).expect("node in snapshot"))).collect();
        scorer.normalize(&mut scores);
        scores
    }

    /// The fixtures of upstream's resource priority tables (TestLeastRequested, TestMostRequested,
    /// TestBalancedResourceAllocation, 1.12-1.16 `algorithm/priorities`), rebuilt here: nodes with
    /// only cpu and memory allocatable, and the pod specs those tables share. Memory amounts are
    /// bytes, as upstream's.
    pub(crate) mod upstream {
        use crate::cluster::objects::{Node, Pod};
        use crate::testing::{NodeBuilder, PodBuilder};

        /// One case of an upstream table: its name, the pod, the nodes, the pods placed on them
        /// and the expected scores in node order.
        pub(crate) type Case = (&'static str, Pod, Vec<Node>, Vec<Pod>, Vec<i64>);

        /// `makeNode(name, milliCPU, memory)`.
        pub(crate) fn make_node(name: &str, milli_cpu: i64, memory: i64) -> Node {
            NodeBuilder::new(name).alloc(&[("cpu", &format!("{milli_cpu}m")), ("memory", &memory.to_string())]).build()
        }

        /// `noResources`: a pod without containers (its non-zero requests are 0 too).
        pub(crate) fn no_resources(name: &str, node: &str) -> Pod {
            PodBuilder::new(name).node(node).build()
        }

        /// `cpuOnly`: two containers asking 1000m and 2000m cpu and memory written as "0".
        pub(crate) fn cpu_only(name: &str, node: &str) -> Pod {
            PodBuilder::new(name)
                .node(node)
                .req(&[("cpu", "1000m"), ("memory", "0")])
                .req(&[("cpu", "2000m"), ("memory", "0")])
                .build()
        }

        /// `cpuAndMemory`: 1000m + 2000m cpu, 2000 + 3000 bytes of memory.
        pub(crate) fn cpu_and_memory(name: &str, node: &str) -> Pod {
            PodBuilder::new(name)
                .node(node)
                .req(&[("cpu", "1000m"), ("memory", "2000")])
                .req(&[("cpu", "2000m"), ("memory", "3000")])
                .build()
        }

        /// `bigCPUAndMemory`: 2000m + 3000m cpu, 4000 + 5000 bytes of memory.
        pub(crate) fn big_cpu_and_memory(name: &str, node: &str) -> Pod {
            PodBuilder::new(name)
                .node(node)
                .req(&[("cpu", "2000m"), ("memory", "4000")])
                .req(&[("cpu", "3000m"), ("memory", "5000")])
                .build()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::Snapshot;
    use crate::testing::{NodeBuilder, PodBuilder};

    #[test]
    fn resource_keys() {
        assert_eq!(ResourceKey::of("cpu"), Some(ResourceKey::Cpu));
        assert_eq!(ResourceKey::of("memory"), Some(ResourceKey::Memory));
        assert_eq!(ResourceKey::of("ephemeral-storage"), Some(ResourceKey::EphemeralStorage));
        assert_eq!(ResourceKey::of("intel.com/foo"), Some(ResourceKey::Scalar("intel.com/foo".to_string())));
        assert_eq!(ResourceKey::of("hugepages-2Mi"), Some(ResourceKey::Scalar("hugepages-2Mi".to_string())));
        assert_eq!(ResourceKey::of("CPU"), None);
        assert_eq!(ResourceKey::of("pods"), None);
        assert_eq!(ResourceKey::of("gpu"), None);
    }

    #[test]
    fn requested_counts_non_zero_cpu_and_memory_and_real_scalars() {
        let node = NodeBuilder::new("n").alloc(&[("cpu", "2"), ("memory", "1Gi"), ("example.com/dev", "4")]).build();
        // On the node: one pod without requests (counts 100m / 200Mi), one asking 500m and 1 dev.
        let placed = [
            PodBuilder::new("empty").node("n").req(&[]).build(),
            PodBuilder::new("dev").node("n").req(&[("cpu", "500m"), ("example.com/dev", "1")]).build(),
        ];
        let snapshot = Snapshot::build([node], placed);
        let info = snapshot.node_info("n").unwrap();
        // The incoming pod asks for memory only: its cpu counts 100m.
        let ctx = PodContext::new(PodBuilder::new("p").req(&[("memory", "100Mi"), ("example.com/dev", "2")]).build());
        // cpu: 100 + 500 + 100 = 700m of 2000m; memory: 200Mi + 200Mi + 100Mi = 500Mi of 1Gi.
        assert_eq!(cpu_and_memory(&ctx, &info), (700, 2000, 500 << 20, 1 << 30));
        let cpu = ResourceKey::Cpu;
        assert_eq!(cpu.requested_and_allocatable(cpu.pod_request(&ctx), &info), (700, 2000));
        // example.com/dev: 1 on the node + 2 = 3 of 4, no defaults.
        let dev = ResourceKey::of("example.com/dev").unwrap();
        assert_eq!(dev.requested_and_allocatable(dev.pod_request(&ctx), &info), (3, 4));
        let other = ResourceKey::of("example.com/none").unwrap();
        assert_eq!(other.requested_and_allocatable(other.pod_request(&ctx), &info), (0, 0));
    }

    #[test]
    fn default_set_has_least_requested_and_balanced_only() {
        let plan = crate::policy::Plan::default_plan();
        let names = plan.priority_names();
        assert!(names.contains(&("LeastRequestedPriority", 1)), "{names:?}");
        assert!(names.contains(&("BalancedResourceAllocation", 1)), "{names:?}");
        assert!(!names.iter().any(|(n, _)| *n == "MostRequestedPriority" || *n == "RequestedToCapacityRatioPriority"));
    }

    #[test]
    fn mul_div_does_not_overflow() {
        assert_eq!(mul_div(i64::MAX, 10, i64::MAX), 10);
        assert_eq!(mul_div(-250, 1, 100), -2);
        assert_eq!(mul_div(7, 10, 2), 35);
    }
}
