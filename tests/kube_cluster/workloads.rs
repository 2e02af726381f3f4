//! The throughput harness's workloads, after upstream's scheduler_perf templates
//! (test/integration/scheduler_perf/templates and the performance-config.yaml files beside them):
//! the nodes, the initial pods that fill the cluster first and the measured pods.

use k8s_openapi::api::core::v1::Pod;
use serde_json::{json, Value};

use super::objects::SCHEDULER_NAME;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Workload {
    /// SchedulingBasic: pod-default (100m cpu, 500Mi) onto node-default.
    Basic,
    /// SchedulingPodAntiAffinity: every pod labelled color=green with a required anti-affinity
    /// to color=green per hostname (in both namespaces), so each lands on a node of its own.
    AntiAffinity,
    /// TopologySpreading: every pod labelled color=blue, spread over the zones with maxSkew 5
    /// (DoNotSchedule).
    Spread,
    /// PreemptionBasic: nodes filled with low-priority pods (900m cpu each, four per node), then
    /// high-priority pods (3 cpu) that fit only once three of them are preempted.
    Preemption,
}

/// The PriorityClass of the measured pods of [`Workload::Preemption`].
pub const HIGH_PRIORITY: &str = "throughput-high";

/// Which pods a template is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Initial,
    Measured,
}

impl Workload {
    /// Objects the workload needs before any pod (a PriorityClass).
    pub fn setup(self) -> Vec<Value> {
        match self {
            Workload::Preemption => vec![json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                "metadata": {"name": HIGH_PRIORITY}, "value": 10})],
            _ => Vec::new(),
        }
    }

    /// Node `i`: node-default (4 cpu, 32Gi, 110 pods, Ready), in one of three zones.
    pub fn node(self, i: usize) -> Value {
        let name = format!("scheduler-perf-{i:05}");
        let resources = json!({"cpu": "4", "memory": "32Gi", "pods": "110"});
        json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": format!("zone-{}", i % 3)}},
            "spec": {},
            "status": {"capacity": resources, "allocatable": resources, "conditions": [{"type": "Ready", "status": "True"}], "phase": "Running"}})
    }

    /// A pod of `phase` named `name` in `namespace`.
    pub fn pod(self, phase: Phase, namespace: &str, name: &str) -> Pod {
        let cpu = match (self, phase) {
            (Workload::Preemption, Phase::Initial) => "900m",
            (Workload::Preemption, Phase::Measured) => "3",
            _ => "100m",
        };
        let resources = json!({"cpu": cpu, "memory": "500Mi"});
        let mut pod = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"schedulerName": SCHEDULER_NAME, "terminationGracePeriodSeconds": 0, "containers": [{
                "name": "pause", "image": "registry.k8s.io/pause:3.10.2", "ports": [{"containerPort": 80}],
                "resources": {"requests": resources, "limits": resources}}]}});
        match (self, phase) {
            (Workload::AntiAffinity, _) => {
                pod["metadata"]["labels"] = json!({"color": "green"});
                pod["spec"]["affinity"] = json!({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
                    "labelSelector": {"matchLabels": {"color": "green"}}, "topologyKey": "kubernetes.io/hostname",
                    "namespaces": ["init", "measured"]}]}});
            }
            (Workload::Spread, _) => {
                pod["metadata"]["labels"] = json!({"color": "blue"});
                pod["spec"]["topologySpreadConstraints"] = json!([{"maxSkew": 5, "topologyKey": "topology.kubernetes.io/zone",
                    "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"color": "blue"}}}]);
            }
            (Workload::Preemption, Phase::Measured) => pod["spec"]["priorityClassName"] = json!(HIGH_PRIORITY),
            _ => {}
        }
        serde_json::from_value(pod).unwrap_or_else(|e| panic!("the {self:?} pod template: {e}"))
    }
}
