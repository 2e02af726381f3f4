//! What a node looked like to the pass that decided it, kept for the hints: how much of each
//! resource the pod asks for was free, and which of the pod's host ports were taken. Read from the
//! same `NodeInfo` the predicates saw, so pass 1 counts the nominated pods it added.

use predicate_engine::cluster::host_ports::HostPort;
use predicate_engine::cluster::resources::Resource;
use predicate_engine::cluster::NodeInfo;
use predicate_engine::framework::PodContext;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeFacts {
    /// Allocatable minus what the node's pods request (never below 0), for cpu, memory,
    /// ephemeral storage and the scalar resources the pod requests.
    pub free: Resource,
    /// The pod's host ports that a pod on the node already uses.
    pub taken_ports: Vec<HostPort>,
}

impl NodeFacts {
    pub fn of(pod: &PodContext, node: &NodeInfo) -> NodeFacts {
        let allocatable = node.allocatable();
        let used = node.pods.requested();
        let free_of = |alloc: i64, used: i64| alloc.saturating_sub(used).max(0);
        let free = Resource {
            milli_cpu: free_of(allocatable.milli_cpu, used.milli_cpu),
            memory: free_of(allocatable.memory, used.memory),
            ephemeral_storage: free_of(allocatable.ephemeral_storage, used.ephemeral_storage),
            allowed_pod_number: free_of(allocatable.allowed_pod_number, node.pods.pods().len() as i64),
            scalar: pod
                .requests
                .scalar
                .iter()
                .map(|(name, _)| (name.clone(), free_of(allocatable.scalar(name), used.scalar(name))))
                .collect(),
        };
        let in_use = node.pods.used_ports();
        let taken_ports =
            pod.host_ports.iter().filter(|want| in_use.iter().any(|u| want.conflicts_with(u))).cloned().collect();
        NodeFacts { free, taken_ports }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use predicate_engine::testing::{NodeBuilder, PodBuilder};

    #[test]
    fn free_is_allocatable_minus_requests_and_taken_ports_are_the_pods_own() {
        let node = NodeInfo::from_parts(
            NodeBuilder::new("n").alloc(&[("cpu", "2"), ("example.com/gpu", "4")]).build(),
            [
                PodBuilder::new("a")
                    .req(&[("cpu", "1500m"), ("example.com/gpu", "1")])
                    .host_port(80, "TCP", "")
                    .build(),
                PodBuilder::new("b").req(&[("cpu", "1")]).host_port(443, "TCP", "").build(),
            ],
        );
        let pod = PodContext::new(
            PodBuilder::new("p")
                .req(&[("example.com/gpu", "1")])
                .host_port(80, "TCP", "")
                .host_port(81, "TCP", "")
                .build(),
        );
        let facts = NodeFacts::of(&pod, &node);
        assert_eq!(facts.free.milli_cpu, 0, "over-committed (2.5 of 2 cpu): 0, not negative");
        assert_eq!(facts.free.scalar, [("example.com/gpu".to_string(), 3)]);
        let ports: Vec<i32> = facts.taken_ports.iter().map(|p| p.port).collect();
        assert_eq!(ports, [80]);
    }
}
