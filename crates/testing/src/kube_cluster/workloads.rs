//! The throughput harness's workloads, after upstream's scheduler_perf templates
//! (test/integration/scheduler_perf/templates and the performance-config.yaml files beside them):
//! the nodes, the initial pods that fill the cluster first and the measured pods.

use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim, Pod};
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
    /// Volumes bound at first consumer: every pod mounts a claim of a `WaitForFirstConsumer`
    /// class, with an available PersistentVolume of its own that only one zone's nodes reach, so
    /// the scheduler picks the node and its VolumeBinding PreBind binds the claim (the
    /// controller-manager's PV binder completes it). Upstream's volume workloads
    /// (volumes/performance-config.yaml) pre-bind their claims; this one makes the scheduler
    /// choose.
    Volumes,
}

/// The StorageClass of [`Workload::Volumes`].
pub const WAIT_FOR_FIRST_CONSUMER: &str = "throughput-wffc";

/// The PriorityClass of the measured pods of [`Workload::Preemption`].
pub const HIGH_PRIORITY: &str = "throughput-high";

/// Which pods a template is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Initial,
    Measured,
}

impl Workload {
    /// Whether `initial` and `measured` pods can all be placed on `nodes`: anti-affinity puts one
    /// pod per node, so a run with more pods than nodes would wait for ever on the rest.
    pub fn check_size(self, nodes: usize, initial: usize, measured: usize) -> Result<(), String> {
        match self {
            Workload::AntiAffinity if initial + measured > nodes => Err(format!(
                "the anti-affinity workload places one pod per node: {initial} initial + {measured} measured pods \
                 do not fit on {nodes} nodes"
            )),
            _ => Ok(()),
        }
    }

    /// Objects the workload needs before any pod (a PriorityClass).
    pub fn setup(self) -> Vec<Value> {
        match self {
            Workload::Preemption => vec![json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                "metadata": {"name": HIGH_PRIORITY}, "value": 10})],
            Workload::Volumes => vec![json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                "metadata": {"name": WAIT_FOR_FIRST_CONSUMER}, "provisioner": "kubernetes.io/no-provisioner",
                "volumeBindingMode": "WaitForFirstConsumer"})],
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

    /// Whether the workload needs kube-controller-manager (the PV binder).
    pub fn needs_controller_manager(self) -> bool {
        self == Workload::Volumes
    }

    /// The PersistentVolume and the claim the pod `name` (the `i`th of its phase) mounts, for
    /// [`Workload::Volumes`]: a 1Gi volume reachable from the nodes of zone `i % 3`, and an
    /// unbound claim of the `WaitForFirstConsumer` class.
    pub fn volume(self, namespace: &str, name: &str, i: usize) -> Option<(PersistentVolume, PersistentVolumeClaim)> {
        if self != Workload::Volumes {
            return None;
        }
        let pv = json!({"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": format!("{namespace}-{name}")},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                "persistentVolumeReclaimPolicy": "Retain", "storageClassName": WAIT_FOR_FIRST_CONSUMER,
                "hostPath": {"path": format!("/tmp/{namespace}-{name}")},
                "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [format!("zone-{}", i % 3)]}]}]}}}});
        let pvc = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": WAIT_FOR_FIRST_CONSUMER,
                "resources": {"requests": {"storage": "1Gi"}}}});
        let pv = serde_json::from_value(pv).unwrap_or_else(|e| panic!("the volume template: {e}"));
        let pvc = serde_json::from_value(pvc).unwrap_or_else(|e| panic!("the claim template: {e}"));
        Some((pv, pvc))
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
            (Workload::Volumes, _) => {
                pod["spec"]["volumes"] = json!([{"name": "data", "persistentVolumeClaim": {"claimName": name}}]);
                pod["spec"]["containers"][0]["volumeMounts"] = json!([{"name": "data", "mountPath": "/data"}]);
            }
            _ => {}
        }
        serde_json::from_value(pod).unwrap_or_else(|e| panic!("the {self:?} pod template: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::Workload;

    #[test]
    fn anti_affinity_refuses_more_pods_than_nodes() {
        assert_eq!(Workload::AntiAffinity.check_size(1000, 200, 800), Ok(()));
        let refused = Workload::AntiAffinity.check_size(1000, 1000, 2000);
        assert!(refused.is_err_and(|why| why.contains("1000 initial + 2000 measured pods do not fit on 1000 nodes")));
        assert_eq!(Workload::Basic.check_size(1000, 1000, 2000), Ok(()));
    }
}
