//! Nodes and pods as the API server sends them (JSON with managedFields, status, probes, env,
//! image lists), for measurements that must go through decoding: the memory the model holds after
//! a watch delivered a cluster, and snapshot files of realistic size.
//!
//! A node is about 9.8 KB of JSON (1.9 KB of managedFields, 5.5 KB of images); a pod 5 to 8 KB.

use serde_json::{json, Value};

use crate::testing::generate::{node_name, ClusterSpec, Rng};

const APPS: u64 = 40;
const TIME: &str = "2026-11-01T08:00:00Z";

fn managed_field(manager: &str, operation: &str, subresource: Option<&str>, fields: Value) -> Value {
    let mut entry = json!({
        "manager": manager, "operation": operation, "apiVersion": "v1", "time": TIME,
        "fieldsType": "FieldsV1", "fieldsV1": fields,
    });
    if let Some(s) = subresource {
        entry["subresource"] = json!(s);
    }
    entry
}

/// The `i`th node of a cluster of this shape.
pub fn node(spec: &ClusterSpec, rng: &mut Rng, i: usize) -> Value {
    let name = node_name(i);
    let zone = format!("zone-{}", i % spec.zones.max(1));
    let taints = if rng.percent(spec.tainted_percent) {
        json!([{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}])
    } else {
        json!([])
    };
    let resources = json!({"cpu": "15890m", "memory": "61731392Ki", "ephemeral-storage": "98566324Ki",
                           "hugepages-1Gi": "0", "hugepages-2Mi": "0", "pods": "110"});
    let capacity = json!({"cpu": "16", "memory": "65842176Ki", "ephemeral-storage": "101445540Ki",
                          "hugepages-1Gi": "0", "hugepages-2Mi": "0", "pods": "110"});
    let condition = |t: &str, s: &str, reason: &str, message: &str| {
        json!({"type": t, "status": s, "lastHeartbeatTime": TIME, "lastTransitionTime": TIME,
               "reason": reason, "message": message})
    };
    let images: Vec<Value> = (0..20 + rng.below(20))
        .map(|img| {
            let repo = format!("registry.example.com/team-{}/app-{img}", img % 7);
            let digest = format!("{:016x}{:016x}{:016x}{:016x}", rng.next_u64(), rng.next_u64(), img, i);
            json!({"names": [format!("{repo}@sha256:{digest}"), format!("{repo}:v1.{}.{}", rng.below(10), rng.below(30))],
                   "sizeBytes": 50_000_000 + rng.below(500_000_000)})
        })
        .collect();
    let label_fields = json!({"f:metadata": {"f:labels": {".": {}, "f:beta.kubernetes.io/arch": {},
        "f:beta.kubernetes.io/os": {}, "f:kubernetes.io/arch": {}, "f:kubernetes.io/hostname": {},
        "f:kubernetes.io/os": {}, "f:node.kubernetes.io/instance-type": {}, "f:topology.kubernetes.io/region": {},
        "f:topology.kubernetes.io/zone": {}}, "f:annotations": {".": {}, "f:volumes.kubernetes.io/controller-managed-attach-detach": {}}}});
    let status_fields = json!({"f:status": {"f:allocatable": {"f:cpu": {}, "f:ephemeral-storage": {}, "f:memory": {}},
        "f:capacity": {"f:cpu": {}, "f:ephemeral-storage": {}, "f:memory": {}},
        "f:conditions": {"k:{\"type\":\"DiskPressure\"}": {"f:lastHeartbeatTime": {}, "f:lastTransitionTime": {}, "f:message": {}, "f:reason": {}, "f:status": {}},
            "k:{\"type\":\"MemoryPressure\"}": {"f:lastHeartbeatTime": {}, "f:lastTransitionTime": {}, "f:message": {}, "f:reason": {}, "f:status": {}},
            "k:{\"type\":\"PIDPressure\"}": {"f:lastHeartbeatTime": {}, "f:lastTransitionTime": {}, "f:message": {}, "f:reason": {}, "f:status": {}},
            "k:{\"type\":\"Ready\"}": {"f:lastHeartbeatTime": {}, "f:lastTransitionTime": {}, "f:message": {}, "f:reason": {}, "f:status": {}}},
        "f:daemonEndpoints": {"f:kubeletEndpoint": {"f:Port": {}}}, "f:images": {}, "f:nodeInfo": {"f:architecture": {},
            "f:bootID": {}, "f:containerRuntimeVersion": {}, "f:kernelVersion": {}, "f:kubeProxyVersion": {},
            "f:kubeletVersion": {}, "f:machineID": {}, "f:operatingSystem": {}, "f:osImage": {}, "f:systemUUID": {}}}});
    json!({
        "kind": "Node", "apiVersion": "v1",
        "metadata": {
            "name": name, "uid": format!("{:016x}-node-{i}", rng.next_u64()), "resourceVersion": format!("{}", 1000 + i),
            "creationTimestamp": TIME,
            "labels": {"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                       "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                       "node.kubernetes.io/instance-type": "standard-16", "topology.kubernetes.io/region": "region-1",
                       "topology.kubernetes.io/zone": zone},
            "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                            "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                            "csi.volume.kubernetes.io/nodeid": format!("{{\"pd.csi.storage.gke.io\":\"projects/p/zones/z/instances/{name}\"}}")},
            "managedFields": [
                managed_field("kubelet", "Update", None, label_fields),
                managed_field("kube-controller-manager", "Update", None,
                    json!({"f:metadata": {"f:annotations": {"f:node.alpha.kubernetes.io/ttl": {}}}, "f:spec": {"f:podCIDR": {}, "f:podCIDRs": {".": {}, "v:\"10.4.0.0/24\"": {}}}})),
                managed_field("kubelet", "Update", Some("status"), status_fields),
            ]
        },
        "spec": {"podCIDR": format!("10.{}.{}.0/24", i / 256, i % 256), "podCIDRs": [format!("10.{}.{}.0/24", i / 256, i % 256)],
                 "providerID": format!("gce://project/zone/{name}"), "taints": taints},
        "status": {
            "capacity": capacity, "allocatable": resources,
            "conditions": [
                condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                condition("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
            ],
            "addresses": [{"type": "InternalIP", "address": format!("10.128.{}.{}", i / 256, i % 256)},
                          {"type": "Hostname", "address": name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {"machineID": format!("{:032x}", rng.next_u64()), "systemUUID": format!("{:032x}", rng.next_u64()),
                         "bootID": format!("{:032x}", rng.next_u64()), "kernelVersion": "6.1.0-18-cloud-amd64",
                         "osImage": "Debian GNU/Linux 12 (bookworm)", "containerRuntimeVersion": "containerd://1.7.13",
                         "kubeletVersion": "v1.33.1", "kubeProxyVersion": "v1.33.1", "operatingSystem": "linux",
                         "architecture": "amd64"},
            "images": images,
        }
    })
}

/// Where a generated pod is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement<'a> {
    /// Running on this node (`spec.nodeName`).
    Bound(&'a str),
    /// Waiting, nominated to this node by a preemption (`status.nominatedNodeName`).
    Nominated(&'a str),
    /// Waiting, with no node.
    Pending,
}

/// A pod of a random app on `node` ("" for pending), with 1-3 containers.
pub fn pod(spec: &ClusterSpec, rng: &mut Rng, name: &str, node: &str) -> Value {
    let placement = if node.is_empty() { Placement::Pending } else { Placement::Bound(node) };
    placed_pod(spec, rng, name, placement)
}

/// A pod of a random app, placed as told, with 1-3 containers.
pub fn placed_pod(spec: &ClusterSpec, rng: &mut Rng, name: &str, placement: Placement<'_>) -> Value {
    let node = match placement {
        Placement::Bound(node) => node,
        Placement::Nominated(_) | Placement::Pending => "",
    };
    let app = format!("app-{}", rng.below(APPS));
    let namespace = format!("team-{}", app.len() % 5);
    let anti_affinity = rng.percent(spec.anti_affinity_percent);
    let containers: Vec<Value> = (0..1 + rng.below(3))
        .map(|c| {
            let cpu = format!("{}m", 25 + rng.below(8) * 25);
            let memory = format!("{}Mi", 64 + rng.below(8) * 64);
            json!({
                "name": format!("c{c}"), "image": format!("registry.example.com/team-{}/{app}:v1.{}", c, rng.below(10)),
                "imagePullPolicy": "IfNotPresent",
                "ports": [{"name": "http", "containerPort": 8080 + c, "protocol": "TCP"}],
                "env": [{"name": "APP", "value": app}, {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
                        {"name": "LOG_LEVEL", "value": "info"}],
                "resources": {"requests": {"cpu": cpu, "memory": memory}, "limits": {"memory": memory}},
                "volumeMounts": [{"name": "kube-api-access", "readOnly": true, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"},
                                 {"name": "config", "mountPath": "/etc/app"}],
                "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080 + c, "scheme": "HTTP"}, "timeoutSeconds": 1,
                                  "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3},
                "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080 + c, "scheme": "HTTP"}, "timeoutSeconds": 1,
                                   "periodSeconds": 5, "successThreshold": 1, "failureThreshold": 3},
                "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
                "securityContext": {"allowPrivilegeEscalation": false, "runAsNonRoot": true, "capabilities": {"drop": ["ALL"]}}
            })
        })
        .collect();
    let statuses: Vec<Value> = containers
        .iter()
        .map(|c| {
            json!({"name": c["name"], "image": c["image"], "imageID": format!("{}@sha256:{:016x}{:016x}", c["image"].as_str().unwrap_or(""), rng.next_u64(), rng.next_u64()),
                   "containerID": format!("containerd://{:016x}{:016x}", rng.next_u64(), rng.next_u64()),
                   "ready": true, "restartCount": 0, "started": true, "state": {"running": {"startedAt": TIME}},
                   "lastState": {}})
        })
        .collect();
    let mut pod = json!({
        "kind": "Pod", "apiVersion": "v1",
        "metadata": {
            "name": name, "generateName": format!("{app}-7d4b9c-"), "namespace": namespace,
            "uid": format!("{:016x}-{name}", rng.next_u64()), "resourceVersion": format!("{}", rng.below(1 << 30)),
            "creationTimestamp": TIME,
            "labels": {"app": app, "pod-template-hash": "7d4b9c", "app.kubernetes.io/part-of": "shop"},
            "annotations": {"kubectl.kubernetes.io/restartedAt": TIME, "prometheus.io/scrape": "true"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": format!("{app}-7d4b9c"),
                                 "uid": format!("uid-rs-{app}"), "controller": true, "blockOwnerDeletion": true}],
            "managedFields": [
                managed_field("kube-controller-manager", "Update", None, json!({"f:metadata": {"f:generateName": {}, "f:labels": {".": {}, "f:app": {}, "f:pod-template-hash": {}},
                    "f:ownerReferences": {".": {}, "k:{\"uid\":\"x\"}": {}}}, "f:spec": {"f:containers": {"k:{\"name\":\"c0\"}": {".": {}, "f:env": {}, "f:image": {}, "f:imagePullPolicy": {},
                    "f:livenessProbe": {}, "f:name": {}, "f:ports": {}, "f:readinessProbe": {}, "f:resources": {}, "f:securityContext": {}, "f:terminationMessagePath": {},
                    "f:volumeMounts": {}}}, "f:dnsPolicy": {}, "f:enableServiceLinks": {}, "f:restartPolicy": {}, "f:schedulerName": {}, "f:securityContext": {},
                    "f:terminationGracePeriodSeconds": {}, "f:volumes": {}}})),
                managed_field("kubelet", "Update", Some("status"), json!({"f:status": {"f:conditions": {"k:{\"type\":\"ContainersReady\"}": {}, "k:{\"type\":\"Initialized\"}": {},
                    "k:{\"type\":\"Ready\"}": {}}, "f:containerStatuses": {}, "f:hostIP": {}, "f:phase": {}, "f:podIP": {}, "f:podIPs": {}, "f:startTime": {}}})),
            ]
        },
        "spec": {
            "volumes": [
                {"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                    {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}]}},
                {"name": "config", "configMap": {"name": format!("{app}-config"), "defaultMode": 420}}
            ],
            "containers": containers,
            "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default", "serviceAccount": "default", "securityContext": {},
            "schedulerName": "default-scheduler", "priority": 0, "enableServiceLinks": true, "preemptionPolicy": "PreemptLowerPriority",
            "tolerations": [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
            ]
        },
        "status": {"phase": if node.is_empty() { "Pending" } else { "Running" }, "qosClass": "Burstable"}
    });
    if anti_affinity {
        pod["spec"]["affinity"] = json!({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}]}});
    }
    if !node.is_empty() {
        pod["spec"]["nodeName"] = json!(node);
        pod["status"] = json!({
            "phase": "Running", "qosClass": "Burstable", "hostIP": "10.128.0.1", "podIP": "10.4.0.17",
            "podIPs": [{"ip": "10.4.0.17"}], "startTime": TIME,
            "conditions": [{"type": "Initialized", "status": "True", "lastProbeTime": null, "lastTransitionTime": TIME},
                           {"type": "Ready", "status": "True", "lastProbeTime": null, "lastTransitionTime": TIME},
                           {"type": "ContainersReady", "status": "True", "lastProbeTime": null, "lastTransitionTime": TIME},
                           {"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": TIME}],
            "containerStatuses": statuses,
        });
    }
    if let Placement::Nominated(node) = placement {
        pod["status"] = json!({
            "phase": "Pending", "qosClass": "Burstable", "nominatedNodeName": node,
            "conditions": [{"type": "PodScheduled", "status": "False", "lastProbeTime": null, "lastTransitionTime": TIME,
                            "reason": "Unschedulable",
                            "message": "0/5000 nodes are available: 5000 Insufficient cpu. preemption: 1 node is nominated"}],
        });
    }
    pod
}

// Each object draws from a generator of its own (`Rng::derive`), so a node or a pod can be
// generated without the objects before it: `gen-cluster` writes the nodes of a request without
// generating 100,000 pods, and the generation runs in parallel.
const NODE_STREAM: u64 = 1;
const POD_STREAM: u64 = 2;
const PENDING_STREAM: u64 = 3;
/// For callers that need further pods of the same shape (the pod-event benchmark).
pub const EXTRA_POD_STREAM: u64 = 4;

/// Node `i` of the cluster.
pub fn cluster_node(spec: &ClusterSpec, i: usize) -> Value {
    node(spec, &mut Rng::derive(spec.seed, NODE_STREAM, i as u64), i)
}

/// Whether pod `j` of node `i` is one of the `spec.nominated` pods: they are spread evenly over
/// the cluster's pods, exactly `spec.nominated` of them (all when it is larger).
pub fn is_nominated(spec: &ClusterSpec, i: usize, j: usize) -> bool {
    let total = (spec.nodes * spec.pods_per_node) as u128;
    let k = spec.nominated as u128;
    let g = (i * spec.pods_per_node + j) as u128;
    // Pod g is picked when the running count of picks, floor(g * k / total), steps at it.
    total > 0 && ((g + 1) * k / total) > (g * k / total)
}

/// Pod `j` of node `i`: running on it, or nominated to it (see [`is_nominated`]).
pub fn cluster_pod(spec: &ClusterSpec, i: usize, j: usize) -> Value {
    let node = node_name(i);
    let placement = if is_nominated(spec, i, j) { Placement::Nominated(&node) } else { Placement::Bound(&node) };
    let g = (i * spec.pods_per_node + j) as u64;
    placed_pod(spec, &mut Rng::derive(spec.seed, POD_STREAM, g), &format!("pod-{i}-{j}"), placement)
}

/// The app of the pending pod; no pod of the cluster has it.
pub const PENDING_APP: &str = "checkout-api";

/// The pod waiting to be scheduled: the first replica of a new deployment, with requests that fit
/// on every untainted node (500m cpu, 1Gi), required anti-affinity to its own app per host and a
/// zone spread of its app (maxSkew 1, DoNotSchedule). Nothing in the cluster matches either term
/// yet, so they cost their full evaluation without failing nodes; the tainted nodes fail.
pub fn pending_pod(spec: &ClusterSpec) -> Value {
    let mut rng = Rng::derive(spec.seed, PENDING_STREAM, 0);
    let mut pod = placed_pod(spec, &mut rng, "checkout-api-6c9f7d5b8-x2x7q", Placement::Pending);
    let selector = json!({"matchLabels": {"app": PENDING_APP}});
    pod["metadata"]["namespace"] = json!("shop");
    pod["metadata"]["generateName"] = json!("checkout-api-6c9f7d5b8-");
    pod["metadata"]["labels"] =
        json!({"app": PENDING_APP, "pod-template-hash": "6c9f7d5b8", "app.kubernetes.io/part-of": "shop"});
    pod["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "checkout-api-6c9f7d5b8",
        "uid": "uid-rs-checkout-api", "controller": true, "blockOwnerDeletion": true}]);
    pod["spec"]["containers"][0]["resources"] =
        json!({"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"memory": "1Gi"}});
    pod["spec"]["affinity"] = json!({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": selector, "topologyKey": "kubernetes.io/hostname"}]}});
    pod["spec"]["topologySpreadConstraints"] = json!([{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "DoNotSchedule", "labelSelector": selector}]);
    pod
}

/// The whole cluster as API objects: every node, and every node's pods.
pub fn cluster(spec: &ClusterSpec) -> (Vec<Value>, Vec<Value>) {
    let nodes = (0..spec.nodes).map(|i| cluster_node(spec, i)).collect();
    let pods = (0..spec.nodes).flat_map(|i| (0..spec.pods_per_node).map(move |j| cluster_pod(spec, i, j))).collect();
    (nodes, pods)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::objects::{Node, Object, Pod};

    fn json_len(v: &Value) -> usize {
        serde_json::to_vec(v).unwrap().len()
    }

    #[test]
    fn objects_are_realistically_sized_and_decode_into_the_model_types() {
        let spec = ClusterSpec { nodes: 20, pods_per_node: 5, ..ClusterSpec::default() };
        let (nodes, pods) = cluster(&spec);
        let node_bytes = nodes.iter().map(json_len).sum::<usize>() / nodes.len();
        let managed = nodes.iter().map(|n| json_len(&n["metadata"]["managedFields"])).sum::<usize>() / nodes.len();
        let images = nodes.iter().map(|n| json_len(&n["status"]["images"])).sum::<usize>() / nodes.len();
        let pod_bytes = pods.iter().map(json_len).sum::<usize>() / pods.len();
        assert!((9_000..11_000).contains(&node_bytes), "node {node_bytes} bytes");
        assert!((1_700..2_200).contains(&managed), "node managedFields {managed} bytes");
        assert!((4_800..6_200).contains(&images), "node images {images} bytes");
        assert!((4_000..9_000).contains(&pod_bytes), "pod {pod_bytes} bytes");
        for n in &nodes {
            let node: Object<Node> = serde_json::from_value(n.clone()).unwrap();
            assert!((20..40).contains(&node.0.status.images.len()));
        }
        for p in &pods {
            let pod: Object<Pod> = serde_json::from_value(p.clone()).unwrap();
            assert!(!pod.0.spec.node_name.is_empty());
            assert!(!pod.0.spec.containers.is_empty());
        }
        assert_eq!(cluster(&spec), (nodes, pods), "deterministic");
    }

    #[test]
    fn any_object_can_be_generated_alone() {
        let spec = ClusterSpec { nodes: 30, pods_per_node: 4, ..ClusterSpec::default() };
        let (nodes, pods) = cluster(&spec);
        assert_eq!(cluster_node(&spec, 17), nodes[17]);
        assert_eq!(cluster_pod(&spec, 17, 3), pods[17 * 4 + 3]);
        let other_seed = ClusterSpec { seed: 2, ..spec };
        assert_ne!(cluster_node(&other_seed, 17), nodes[17]);
    }

    #[test]
    fn exactly_the_asked_number_of_pods_are_nominated_and_not_bound() {
        for nominated in [0, 1, 7, 120, 500] {
            let spec = ClusterSpec { nodes: 30, pods_per_node: 4, nominated, ..ClusterSpec::default() };
            let (_, pods) = cluster(&spec);
            let decoded: Vec<Pod> =
                pods.into_iter().map(|p| serde_json::from_value::<Object<Pod>>(p).unwrap().0).collect();
            let waiting: Vec<&Pod> = decoded.iter().filter(|p| !p.status.nominated_node_name.is_empty()).collect();
            assert_eq!(waiting.len(), nominated.min(120), "nominated {nominated}");
            assert!(waiting.iter().all(|p| p.spec.node_name.is_empty() && p.status.phase == "Pending"));
            let bound = decoded.iter().filter(|p| !p.spec.node_name.is_empty()).count();
            assert_eq!(bound + waiting.len(), 120);
        }
    }

    #[test]
    fn the_pending_pod_waits_with_its_terms() {
        let spec = ClusterSpec::default();
        let pod: Pod = serde_json::from_value::<Object<Pod>>(pending_pod(&spec)).unwrap().0;
        assert!(pod.spec.node_name.is_empty());
        assert_eq!(pod.metadata.labels.get("app").map(|v| v.as_str()), Some(PENDING_APP));
        assert!(pod.has_pod_affinity_terms());
        assert_eq!(pod.spec.topology_spread_constraints.len(), 1);
        assert_eq!(pending_pod(&spec), pending_pod(&spec));
    }
}
