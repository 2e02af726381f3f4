//! ResourceLimitsPriority (alpha in kube-scheduler 1.11-1.18, never in the default set): scores 1 a
//! node whose allocatable cpu covers the pod's cpu limit or whose allocatable memory covers its
//! memory limit, 0 elsewhere, as upstream's `ResourceLimitsPriorityMap`
//! (pkg/scheduler/algorithm/priorities/resource_limits.go). A resource counts only when both the
//! limit and the allocatable amount are set (non-zero), so a pod without limits and a node that
//! publishes no allocatable score 0. Meant to break ties between nodes the resource priorities
//! score the same; the score is not normalised.
//!
//! The pod's limits are summed over its app containers and raised to any init container's
//! (upstream's `getResourceLimits`), with sidecars counted as the project counts their requests
//! (see [`pod_limits`]); overhead is not added, as upstream never added it here.

use std::sync::Arc;

use crate::cluster::pod_requests::limits as pod_limits;
use crate::cluster::NodeInfo;
use crate::framework::ClusterView;
use crate::framework::{ArgumentError, Candidate, PodContext};
use crate::framework::{Priority, PriorityArgs, Scorer};

pub const NAME: &str = "ResourceLimitsPriority";

#[derive(Debug)]
pub struct ResourceLimitsPriority;

pub fn build(_args: &PriorityArgs<'_>) -> Result<Arc<dyn Priority>, ArgumentError> {
    Ok(Arc::new(ResourceLimitsPriority))
}

impl Priority for ResourceLimitsPriority {
    fn name(&self) -> &str {
        NAME
    }

    fn prepare(&self, pod: &PodContext, _view: &ClusterView<'_>, _candidates: &[Candidate]) -> Box<dyn Scorer> {
        let limits = pod_limits(&pod.pod);
        Box::new(LimitsScorer { milli_cpu: limits.milli_cpu, memory: limits.memory })
    }
}

/// The pod's cpu (millicores) and memory (bytes) limits, computed once per request.
struct LimitsScorer {
    milli_cpu: i64,
    memory: i64,
}

/// Upstream's `computeScore`: whether a set limit fits a published allocatable amount.
fn covers(limit: i64, allocatable: i64) -> bool {
    limit != 0 && allocatable != 0 && limit <= allocatable
}

impl Scorer for LimitsScorer {
    fn score(&self, _pod: &PodContext, node: &NodeInfo) -> i64 {
        let allocatable = node.allocatable();
        i64::from(covers(self.milli_cpu, allocatable.milli_cpu) || covers(self.memory, allocatable.memory))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::objects::Pod;
    use crate::priorities::resource_allocation::test_support::scores;
    use crate::priorities::resource_allocation::test_support::upstream::make_node;
    use serde_json::json;

    fn priority() -> Arc<dyn Priority> {
        build(&PriorityArgs { name: NAME, argument: None, hard_pod_affinity_symmetric_weight: 1 }).unwrap()
    }

    /// A pod from its `spec` as JSON.
    fn pod(spec: serde_json::Value) -> Pod {
        serde_json::from_value(json!({"metadata": {"name": "p", "namespace": "default"}, "spec": spec})).unwrap()
    }

    fn limits(cpu: &str, memory: &str) -> serde_json::Value {
        json!({"resources": {"limits": {"cpu": cpu, "memory": memory}}})
    }

    /// upstream: TestResourceLimistPriority (1.11-1.16 resource_limits_test.go), every case.
    #[test]
    fn upstream_resource_limits_table() {
        let no_resources = pod(json!({"containers": []}));
        let cpu_only = pod(json!({"containers": [limits("1000m", "0"), limits("2000m", "0")]}));
        let mem_only = pod(json!({"containers": [limits("0", "2000"), limits("0", "3000")]}));
        let cpu_and_memory = pod(json!({"containers": [limits("1000m", "2000"), limits("2000m", "3000")]}));
        let cases = [
            (
                "pod does not specify its resource limits",
                no_resources,
                vec![
                    make_node("machine1", 4000, 10000),
                    make_node("machine2", 4000, 0),
                    make_node("machine3", 0, 10000),
                    make_node("machine4", 0, 0),
                ],
                vec![0, 0, 0, 0],
            ),
            (
                "pod only specifies  cpu limits",
                cpu_only,
                vec![make_node("machine1", 3000, 10000), make_node("machine2", 2000, 10000)],
                vec![1, 0],
            ),
            (
                "pod only specifies  mem limits",
                mem_only,
                vec![make_node("machine1", 4000, 4000), make_node("machine2", 5000, 10000)],
                vec![0, 1],
            ),
            (
                "pod specifies both cpu and  mem limits",
                cpu_and_memory.clone(),
                vec![make_node("machine1", 4000, 4000), make_node("machine2", 5000, 10000)],
                vec![1, 1],
            ),
            ("node does not advertise its allocatables", cpu_and_memory, vec![make_node("machine1", 0, 0)], vec![0]),
        ];
        for (name, pod, nodes, want) in cases {
            assert_eq!(scores(&priority(), pod, nodes, vec![]), want, "{name}");
        }
    }

    #[test]
    fn init_containers_sidecars_and_overhead() {
        let nodes = || vec![make_node("small", 1000, 1 << 30), make_node("large", 4000, 1 << 30)];
        // Memory 8Gi never fits: only cpu decides.
        let cases = [
            (
                // upstream getResourceLimits: max(sum of containers, each init container).
                "an init container's larger limit wins",
                pod(json!({"containers": [limits("500m", "8Gi")], "initContainers": [limits("2", "8Gi")]})),
                vec![0, 1],
            ),
            (
                "a smaller init container does not add",
                pod(json!({"containers": [limits("800m", "8Gi")], "initContainers": [limits("500m", "8Gi")]})),
                vec![1, 1],
            ),
            (
                // A sidecar runs beside the app containers: 800m + 300m = 1100m > 1000m.
                "a sidecar's limit adds to the app containers'",
                pod(json!({"containers": [limits("800m", "8Gi")], "initContainers": [
                    {"restartPolicy": "Always", "resources": {"limits": {"cpu": "300m"}}}
                ]})),
                vec![0, 1],
            ),
            (
                "overhead is not a limit",
                pod(json!({"containers": [limits("1", "8Gi")], "overhead": {"cpu": "100m"}})),
                vec![1, 1],
            ),
            (
                "limits only on an init container still count",
                pod(json!({"containers": [{}], "initContainers": [limits("1", "8Gi")]})),
                vec![1, 1],
            ),
            (
                "requests are not limits",
                pod(json!({"containers": [{"resources": {"requests": {"cpu": "1"}}}]})),
                vec![0, 0],
            ),
        ];
        for (name, pod, want) in cases {
            assert_eq!(scores(&priority(), pod, nodes(), vec![]), want, "{name}");
        }
    }

    #[test]
    fn accepted_in_a_policy_and_not_in_the_default_set() {
        let plan = crate::policy::parse(
            "policy.json",
            r#"{"kind":"Policy","apiVersion":"v1","priorities":[{"name":"ResourceLimitsPriority","weight":2}]}"#
                .as_bytes(),
            crate::policy::Overrides::default(),
        )
        .unwrap();
        assert_eq!(plan.priority_names(), [(NAME, 2)]);
        let default = crate::policy::Plan::default_plan();
        assert!(default.priority_names().iter().all(|(n, _)| *n != NAME));
    }
}
