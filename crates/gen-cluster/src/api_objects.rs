//! Nodes, pods, Services and ReplicaSets as the API server sends them (JSON with managedFields,
//! status, probes, env, image lists), for what must go through decoding: snapshot files of
//! realistic size (`gen-cluster`), the memory the model holds after a watch delivered a cluster,
//! the benchmarks. What each object is comes from `cluster_shape`, the same as `generate`'s model
//! objects; this adds the fields the extender skips.
//!
//! A node is about 10 KB of JSON (1.9 KB of managedFields, 4 to 8 KB of images); a pod 5 to 8 KB.

use serde_json::{json, Value};

use crate::cluster_shape::{
    app_pod_shape, app_replicas, apps, avoid_annotation, checkout_counts, checkout_terms, checkout_uids, mesh_proxy,
    node_images, node_shape, pending_shape, pod_shape, Budget, Image, NodeShape, PodShape, Rollout, CHECKOUT_APP,
    CHECKOUT_NAMESPACE,
};
pub use crate::cluster_shape::{is_nominated, EXTRA_POD_STREAM};
use crate::generate::{ClusterSpec, Rng, TIME};

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

fn object_map(pairs: Vec<(&'static str, String)>) -> Value {
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), json!(v))).collect())
}

/// The `i`th node of a cluster of this shape; `rng` draws its identifiers (machine and boot ids).
pub fn node(spec: &ClusterSpec, rng: &mut Rng, i: usize) -> Value {
    let (shape, mut shape_rng) = node_shape(spec, i);
    let images = node_images(spec, &shape, &mut shape_rng);
    node_json(&shape, &images, rng)
}

fn node_json(shape: &NodeShape, images: &[Image], rng: &mut Rng) -> Value {
    let (i, name) = (shape.index, &shape.name);
    let taints =
        if shape.tainted { json!([{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]) } else { json!([]) };
    let [allocatable, capacity] = shape.resources();
    let condition = |t: &str, s: &str, reason: &str, message: &str| {
        json!({"type": t, "status": s, "lastHeartbeatTime": TIME, "lastTransitionTime": TIME,
               "reason": reason, "message": message})
    };
    let images: Vec<Value> =
        images.iter().map(|image| json!({"names": image.names(), "sizeBytes": image.size})).collect();
    let mut annotations = json!({"node.alpha.kubernetes.io/ttl": "0",
        "volumes.kubernetes.io/controller-managed-attach-detach": "true",
        "csi.volume.kubernetes.io/nodeid": format!("{{\"pd.csi.storage.gke.io\":\"projects/p/zones/z/instances/{name}\"}}")});
    if let Some(rs) = &shape.avoids {
        annotations["scheduler.alpha.kubernetes.io/preferAvoidPods"] = json!(avoid_annotation(rs));
    }
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
            "name": name, "uid": shape.uid, "resourceVersion": format!("{}", 1000 + i),
            "creationTimestamp": TIME,
            "labels": object_map(shape.labels()),
            "annotations": annotations,
            "managedFields": [
                managed_field("kubelet", "Update", None, label_fields),
                managed_field("kube-controller-manager", "Update", None,
                    json!({"f:metadata": {"f:annotations": {"f:node.alpha.kubernetes.io/ttl": {}}}, "f:spec": {"f:podCIDR": {}, "f:podCIDRs": {".": {}, "v:\"10.4.0.0/24\"": {}}}})),
                managed_field("kubelet", "Update", Some("status"), status_fields),
            ]
        },
        "spec": {"podCIDR": format!("10.{}.{}.0/24", i / 256, i % 256), "podCIDRs": [format!("10.{}.{}.0/24", i / 256, i % 256)],
                 "providerID": format!("gce://project/{}/{name}", shape.zone), "taints": taints},
        "status": {
            "capacity": object_map(capacity), "allocatable": object_map(allocatable),
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

/// A pod of a random app (by popularity) on `node` ("" for pending), with the requests of a pod
/// on a typical node.
pub fn pod(spec: &ClusterSpec, rng: &mut Rng, name: &str, node: &str) -> Value {
    let placement = if node.is_empty() { Placement::Pending } else { Placement::Bound(node) };
    placed_pod(spec, rng, name, placement)
}

/// A pod of a random app (by popularity), placed as told, with the requests of a pod on a
/// typical node.
pub fn placed_pod(spec: &ClusterSpec, rng: &mut Rng, name: &str, placement: Placement<'_>) -> Value {
    let shape = app_pod_shape(spec, rng, Budget::typical(), Some(name.to_string()), 0);
    pod_json(spec, &shape, placement, rng)
}

fn pod_json(spec: &ClusterSpec, shape: &PodShape, placement: Placement<'_>, rng: &mut Rng) -> Value {
    let (name, app) = (&shape.name, &shape.app);
    let containers: Vec<Value> = shape
        .containers
        .iter()
        .enumerate()
        .map(|(c, container)| {
            let memory = format!("{}Mi", container.memory_mi);
            json!({
                "name": container.name, "image": container.image.reference(),
                "imagePullPolicy": "IfNotPresent",
                "ports": [{"name": "http", "containerPort": 8080 + c, "protocol": "TCP"}],
                "env": [{"name": "APP", "value": app}, {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
                        {"name": "LOG_LEVEL", "value": "info"}],
                "resources": {"requests": {"cpu": format!("{}m", container.cpu_milli), "memory": memory},
                              "limits": {"memory": format!("{}Mi", container.memory_limit_mi)}},
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
    let statuses: Vec<Value> = shape
        .containers
        .iter()
        .map(|c| {
            json!({"name": c.name, "image": c.image.reference(), "imageID": c.image.names()[0],
                   "containerID": format!("containerd://{:016x}{:016x}", rng.next_u64(), rng.next_u64()),
                   "ready": true, "restartCount": 0, "started": true, "state": {"running": {"startedAt": TIME}},
                   "lastState": {}})
        })
        .collect();
    let mut pod = json!({
        "kind": "Pod", "apiVersion": "v1",
        "metadata": {
            "name": name, "generateName": format!("{}-", shape.owner.name), "namespace": shape.namespace,
            "uid": shape.uid, "resourceVersion": format!("{}", rng.below(1 << 30)),
            "creationTimestamp": TIME,
            "labels": object_map(shape.labels()),
            "annotations": {"kubectl.kubernetes.io/restartedAt": TIME, "prometheus.io/scrape": "true"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": shape.owner.name,
                                 "uid": shape.owner.uid, "controller": true, "blockOwnerDeletion": true}],
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
        "status": {"phase": "Pending", "qosClass": "Burstable"}
    });
    if shape.anti_affinity {
        pod["spec"]["affinity"] = json!({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}]}});
    }
    if shape.checkout {
        let (affinity, spread) = checkout_terms(spec);
        pod["spec"]["affinity"] = affinity;
        pod["spec"]["topologySpreadConstraints"] = spread;
    }
    match placement {
        Placement::Bound(node) => {
            let ip = format!("10.4.{}.{}", rng.below(256), 2 + rng.below(250));
            pod["spec"]["nodeName"] = json!(node);
            pod["status"] = json!({
                "phase": "Running", "qosClass": "Burstable", "hostIP": "10.128.0.1", "podIP": ip,
                "podIPs": [{"ip": ip}], "startTime": TIME,
                "conditions": [{"type": "Initialized", "status": "True", "lastProbeTime": null, "lastTransitionTime": TIME},
                               {"type": "Ready", "status": "True", "lastProbeTime": null, "lastTransitionTime": TIME},
                               {"type": "ContainersReady", "status": "True", "lastProbeTime": null, "lastTransitionTime": TIME},
                               {"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": TIME}],
                "containerStatuses": statuses,
            });
        }
        Placement::Nominated(node) => {
            pod["status"] = json!({
                "phase": "Pending", "qosClass": "Burstable", "nominatedNodeName": node,
                "conditions": [{"type": "PodScheduled", "status": "False", "lastProbeTime": null, "lastTransitionTime": TIME,
                                "reason": "Unschedulable",
                                "message": format!("0/{} nodes are available: {} Insufficient cpu. preemption: 1 node is nominated", spec.nodes, spec.nodes)}],
            });
        }
        Placement::Pending => {}
    }
    pod
}

/// Node `i` of the cluster.
pub fn cluster_node(spec: &ClusterSpec, i: usize) -> Value {
    let (shape, mut rng) = node_shape(spec, i);
    let images = node_images(spec, &shape, &mut rng);
    node_json(&shape, &images, &mut rng)
}

/// Pod `j` of node `i`: running on it, or nominated to it (see [`is_nominated`]).
pub fn cluster_pod(spec: &ClusterSpec, i: usize, j: usize) -> Value {
    let (shape, mut rng) = pod_shape(spec, i, j);
    let node = crate::generate::node_name(i);
    let placement = if is_nominated(spec, i, j) { Placement::Nominated(&node) } else { Placement::Bound(&node) };
    pod_json(spec, &shape, placement, &mut rng)
}

/// The app of the pending pod.
pub const PENDING_APP: &str = CHECKOUT_APP;

/// The pod waiting to be scheduled: the next replica of `checkout-api` (in namespace `shop`),
/// whose Deployment is rolling out. Its container asks for 500m cpu and 1Gi, its mesh sidecar
/// for 100m and 128Mi; it prefers nodes without its own pods and one zone, and spreads its app
/// over the zones (maxSkew 1, DoNotSchedule). Its app's pods are as many in every zone, so the
/// spread fails no zone.
pub fn pending_pod(spec: &ClusterSpec) -> Value {
    let (shape, mut rng) = pending_shape(spec);
    pod_json(spec, &shape, Placement::Pending, &mut rng)
}

fn service(name: &str, namespace: &str, uid: &str, app: &str, k: usize) -> Value {
    let ip = format!("10.96.{}.{}", k / 200, 10 + k % 200);
    json!({
        "kind": "Service", "apiVersion": "v1",
        "metadata": {"name": name, "namespace": namespace, "uid": uid, "resourceVersion": format!("{}", 500 + k),
                     "creationTimestamp": TIME, "labels": {"app": app}},
        "spec": {"selector": {"app": app}, "ports": [{"name": "http", "protocol": "TCP", "port": 80, "targetPort": 8080}],
                 "type": "ClusterIP", "clusterIP": ip, "clusterIPs": [ip], "sessionAffinity": "None",
                 "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack", "internalTrafficPolicy": "Cluster"},
        "status": {"loadBalancer": {}}
    })
}

/// A ReplicaSet of a Deployment `app`: `(name, uid)`, its pods' template hash and images, how
/// many replicas, the Deployment's uid, its revision.
struct ReplicaSetJson<'a> {
    name: &'a str,
    namespace: &'a str,
    uid: &'a str,
    app: &'a str,
    hash: &'a str,
    images: Vec<(String, String)>,
    replicas: usize,
    deployment_uid: &'a str,
    revision: usize,
}

fn replica_set(rs: ReplicaSetJson<'_>, k: usize) -> Value {
    let labels = json!({"app": rs.app, "app.kubernetes.io/part-of": rs.namespace, "pod-template-hash": rs.hash});
    let containers: Vec<Value> = rs
        .images
        .iter()
        .map(|(name, image)| json!({"name": name, "image": image, "imagePullPolicy": "IfNotPresent"}))
        .collect();
    json!({
        "kind": "ReplicaSet", "apiVersion": "apps/v1",
        "metadata": {"name": rs.name, "namespace": rs.namespace, "uid": rs.uid, "resourceVersion": format!("{}", 800 + k),
                     "generation": 1, "creationTimestamp": TIME, "labels": labels,
                     "annotations": {"deployment.kubernetes.io/desired-replicas": rs.replicas.to_string(),
                                     "deployment.kubernetes.io/revision": rs.revision.to_string()},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": rs.app,
                                          "uid": rs.deployment_uid, "controller": true, "blockOwnerDeletion": true}]},
        "spec": {"replicas": rs.replicas,
                 "selector": {"matchLabels": {"app": rs.app, "pod-template-hash": rs.hash}},
                 "template": {"metadata": {"labels": labels}, "spec": {"containers": containers}}},
        "status": {"replicas": rs.replicas, "fullyLabeledReplicas": rs.replicas, "readyReplicas": rs.replicas,
                   "availableReplicas": rs.replicas, "observedGeneration": 1}
    })
}

/// The Services and ReplicaSets of the cluster's apps: each app's Service (selecting `app`) and
/// current ReplicaSet, and checkout-api's Service and its new and old ReplicaSets (the new one
/// wants one more pod: the pending one).
pub fn controllers(spec: &ClusterSpec) -> Vec<Value> {
    let replicas = app_replicas(spec);
    let mut out = Vec::new();
    for (a, app) in apps(spec.seed).iter().enumerate() {
        out.push(service(&app.name, app.namespace, &app.service_uid, &app.name, a));
        let images = app.containers.iter().map(|c| (c.name.clone(), c.image.reference())).collect();
        out.push(replica_set(
            ReplicaSetJson {
                name: &app.replica_set.name,
                namespace: app.namespace,
                uid: &app.replica_set.uid,
                app: &app.name,
                hash: &app.hash,
                images,
                replicas: replicas[a],
                deployment_uid: &app.deployment_uid,
                revision: 1,
            },
            a,
        ));
    }
    let (service_uid, deployment_uid) = checkout_uids(spec.seed);
    let k = replicas.len();
    out.push(service(CHECKOUT_APP, CHECKOUT_NAMESPACE, &service_uid, CHECKOUT_APP, k));
    let (new, old) = checkout_counts(spec);
    for (n, (rollout, count, revision)) in [(Rollout::Old, old, 6), (Rollout::New, new + 1, 7)].into_iter().enumerate()
    {
        let rs = rollout.replica_set(spec.seed);
        let images = vec![
            (CHECKOUT_APP.to_string(), rollout.image(spec.seed).reference()),
            ("mesh-proxy".to_string(), mesh_proxy(spec.seed, false).reference()),
        ];
        out.push(replica_set(
            ReplicaSetJson {
                name: &rs.name,
                namespace: CHECKOUT_NAMESPACE,
                uid: &rs.uid,
                app: CHECKOUT_APP,
                hash: rollout.hash(),
                images,
                replicas: count,
                deployment_uid: &deployment_uid,
                revision,
            },
            k + 1 + n,
        ));
    }
    out
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
    use predicate_engine::cluster::objects::{Node, Object, Pod};

    fn json_len(v: &Value) -> usize {
        serde_json::to_vec(v).unwrap().len()
    }

    #[test]
    fn objects_are_realistically_sized_and_decode_into_the_model_types() {
        let spec = ClusterSpec { nodes: 30, ..ClusterSpec::default() };
        let (nodes, pods) = cluster(&spec);
        let node_bytes = nodes.iter().map(json_len).sum::<usize>() / nodes.len();
        let managed = nodes.iter().map(|n| json_len(&n["metadata"]["managedFields"])).sum::<usize>() / nodes.len();
        let images = nodes.iter().map(|n| json_len(&n["status"]["images"])).sum::<usize>() / nodes.len();
        let pod_bytes = pods.iter().map(json_len).sum::<usize>() / pods.len();
        assert!((9_000..12_000).contains(&node_bytes), "node {node_bytes} bytes");
        assert!((1_700..2_200).contains(&managed), "node managedFields {managed} bytes");
        assert!((4_800..7_500).contains(&images), "node images {images} bytes");
        assert!((4_000..9_000).contains(&pod_bytes), "pod {pod_bytes} bytes");
        for n in &nodes {
            let node: Object<Node> = serde_json::from_value(n.clone()).unwrap();
            // The kubelet reports at most 50 (nodeStatusMaxImages).
            assert!((20..=50).contains(&node.0.status.images.len()));
        }
        for p in &pods {
            let pod: Object<Pod> = serde_json::from_value(p.clone()).unwrap();
            assert!(!pod.0.spec.node_name.is_empty());
            assert!(!pod.0.spec.containers.is_empty());
        }
        assert_eq!(cluster(&spec), (nodes, pods), "deterministic");
    }

    /// `generate` builds the model objects directly; they must be what decoding this JSON gives
    /// (the model does not keep `resourceVersion`, the JSON sets it).
    #[test]
    fn the_model_generator_makes_the_same_cluster() {
        let spec = ClusterSpec { nodes: 45, pods_per_node: 6, nominated: 7, ..ClusterSpec::default() };
        let (nodes, pods) = cluster(&spec);
        let (model_nodes, model_pods) = crate::generate::generate(&spec);
        let unversioned = |mut meta: predicate_engine::cluster::objects::ObjectMeta| {
            meta.resource_version.clear();
            meta
        };
        assert_eq!(nodes.len(), model_nodes.len());
        for (json, model) in nodes.into_iter().zip(model_nodes) {
            let mut decoded: Node = serde_json::from_value::<Object<Node>>(json).unwrap().0;
            decoded.metadata = unversioned(decoded.metadata);
            assert_eq!(format!("{decoded:?}"), format!("{model:?}"));
        }
        assert_eq!(pods.len(), model_pods.len());
        for (json, model) in pods.into_iter().zip(model_pods) {
            let mut decoded: Pod = serde_json::from_value::<Object<Pod>>(json).unwrap().0;
            decoded.metadata.resource_version.clear();
            assert_eq!(format!("{decoded:?}"), format!("{model:?}"));
        }
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
