//! Deterministic synthetic clusters for benchmarks, scale tests and `gen-cluster`: the shape and
//! the generator of random numbers, and the cluster as model objects. What the cluster holds is
//! decided in `cluster_shape`; `api_objects` writes the same cluster as the API server's JSON.

use predicate_engine::cluster::shared_list::SharedList;
use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Affinity, ContainerImage, PodAffinityTerm, PodAntiAffinity, Taint, Toleration};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, OwnerReference};
use rayon::prelude::*;

use crate::api_objects::{self, Placement};
use crate::cluster_shape::{
    avoid_annotation, checkout_terms, is_nominated, node_images, node_shape, pod_of_app, pod_shape_on, Budget, Image,
    NodeShape, PodShape,
};
use predicate_engine::cluster::objects::{
    Container, Node, NodeCondition, Pod, ResourceRequirements, PREFER_AVOID_PODS_ANNOTATION,
};
use predicate_engine::cluster::{ClusterObject, Snapshot};
use predicate_engine::quantity::Quantity;

/// The shape of a generated cluster.
#[derive(Debug, Clone, Copy)]
pub struct ClusterSpec {
    pub nodes: usize,
    pub pods_per_node: usize,
    pub zones: usize,
    /// Percentage (0..=100) of the apps' pods with required anti-affinity to their own app per
    /// host.
    pub anti_affinity_percent: u32,
    /// Percentage (0..=100) of nodes with a `dedicated=batch:NoSchedule` taint (never the nodes
    /// that run the pending pod's app).
    pub tainted_percent: u32,
    /// How many of the pods are nominated to their node (`status.nominatedNodeName`, no
    /// `spec.nodeName`) instead of running on it.
    pub nominated: usize,
    pub seed: u64,
}

impl Default for ClusterSpec {
    fn default() -> Self {
        ClusterSpec {
            nodes: 100,
            pods_per_node: 20,
            zones: 3,
            anti_affinity_percent: 10,
            tainted_percent: 10,
            nominated: 0,
            seed: 1,
        }
    }
}

/// A small xorshift generator: the same seed gives the same cluster on every platform and version.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// A generator of its own for object `index` of `stream` under `seed` (splitmix64 of the
    /// three), so any object can be generated alone, in any order or in parallel.
    pub fn derive(seed: u64, stream: u64, index: u64) -> Self {
        let mut z = seed ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03) ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Rng::new(z ^ (z >> 31))
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// One of `items`, uniformly (`items` must not be empty).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    /// True with probability `percent`/100.
    pub fn percent(&mut self, percent: u32) -> bool {
        self.below(100) < u64::from(percent)
    }
}

fn q(s: &str) -> Quantity {
    Quantity::parse(s).unwrap_or_default()
}

fn labels(pairs: &[(&str, String)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
}

/// When every generated object was created and started.
pub const TIME: &str = "2026-11-01T08:00:00Z";

/// The name of the `i`th node.
pub fn node_name(i: usize) -> String {
    format!("node-{i:05}")
}

/// Required anti-affinity to pods of `app` on the same host.
pub fn anti_affinity_to(app: &str) -> Affinity {
    Affinity {
        pod_anti_affinity: Some(PodAntiAffinity {
            required_during_scheduling_ignored_during_execution: Some(vec![PodAffinityTerm {
                label_selector: Some(LabelSelector {
                    match_labels: Some(labels(&[("app", app.to_string())])),
                    match_expressions: None,
                }),
                topology_key: "kubernetes.io/hostname".to_string(),
                ..Default::default()
            }]),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn default_tolerations() -> Vec<Toleration> {
    ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"]
        .iter()
        .map(|k| Toleration {
            key: Some(k.to_string()),
            operator: Some("Exists".to_string()),
            effect: Some("NoExecute".to_string()),
            toleration_seconds: Some(300),
            value: None,
        })
        .collect()
}

/// A pod of `app` (one of the generated apps, `app-0` to `app-39`) with the requests of a pod on a
/// typical node, on `node` ("" for pending).
pub fn app_pod(rng: &mut Rng, name: &str, app: &str, node: &str, anti_affinity: bool) -> Pod {
    let spec = ClusterSpec { anti_affinity_percent: 0, ..ClusterSpec::default() };
    let a = app.strip_prefix("app-").and_then(|n| n.parse().ok()).unwrap_or(0);
    let mut shape = pod_of_app(&spec, rng, a, Budget::typical(), Some(name.to_string()), 0);
    shape.anti_affinity = anti_affinity;
    let placement = if node.is_empty() { Placement::Pending } else { Placement::Bound(node) };
    model_pod(&spec, &shape, placement)
}

/// A node as the model holds it.
pub fn model_node(shape: &NodeShape, images: &[Image]) -> Node {
    let mut node = Node::default();
    node.metadata.name = shape.name.clone();
    node.metadata.uid = shape.uid.clone();
    node.metadata.labels = labels(&shape.labels());
    if let Some(rs) = &shape.avoids {
        node.metadata.annotations.insert(PREFER_AVOID_PODS_ANNOTATION.to_string(), avoid_annotation(rs));
    }
    if shape.tainted {
        node.spec.taints.push(Taint {
            key: "dedicated".to_string(),
            value: Some("batch".to_string()),
            effect: "NoSchedule".to_string(),
            time_added: None,
        });
    }
    let [allocatable, _] = shape.resources();
    node.status.allocatable = allocatable.iter().map(|(k, v)| (k.to_string(), q(v))).collect();
    for (t, s) in [("MemoryPressure", "False"), ("DiskPressure", "False"), ("PIDPressure", "False"), ("Ready", "True")]
    {
        node.status.conditions.push(NodeCondition { type_: t.to_string(), status: s.to_string() });
    }
    node.status.images =
        images.iter().map(|i| ContainerImage { names: Some(i.names().to_vec()), size_bytes: Some(i.size) }).collect();
    node
}

/// A pod as the model holds it.
pub fn model_pod(spec: &ClusterSpec, shape: &PodShape, placement: Placement<'_>) -> Pod {
    let mut pod = Pod::default();
    pod.metadata.name = shape.name.clone();
    pod.metadata.namespace = shape.namespace.to_string();
    pod.metadata.uid = shape.uid.clone();
    pod.metadata.labels = labels(&shape.labels()).into();
    pod.metadata.owner_references = SharedList::new(vec![OwnerReference {
        api_version: "apps/v1".to_string(),
        kind: "ReplicaSet".to_string(),
        name: shape.owner.name.clone(),
        uid: shape.owner.uid.clone(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }]);
    for c in &shape.containers {
        let requests = [("cpu", format!("{}m", c.cpu_milli)), ("memory", format!("{}Mi", c.memory_mi))];
        pod.spec.containers.push(Container {
            name: c.name.clone(),
            image: c.image.reference(),
            resources: ResourceRequirements {
                requests: requests.iter().map(|(k, v)| (k.to_string(), q(v))).collect(),
                limits: std::iter::once(("memory".to_string(), q(&format!("{}Mi", c.memory_limit_mi)))).collect(),
            },
            ..Container::default()
        });
    }
    pod.spec.tolerations = default_tolerations().into();
    pod.spec.priority = Some(0);
    pod.spec.scheduler_name =
        predicate_engine::cluster::intern::IStr::new(predicate_engine::cluster::objects::DEFAULT_SCHEDULER);
    if shape.anti_affinity {
        pod.spec.affinity = Some(anti_affinity_to(&shape.app));
    }
    if shape.checkout {
        let (affinity, spread) = checkout_terms(spec);
        pod.spec.affinity = serde_json::from_value(affinity).ok();
        pod.spec.topology_spread_constraints = serde_json::from_value(spread).unwrap_or_default();
    }
    // As the API server sets it (api_objects writes the same): every generated pod requests cpu.
    pod.status.qos_class = "Burstable".to_string();
    match placement {
        Placement::Bound(node) => {
            pod.spec.node_name = node.to_string();
            pod.status.phase = "Running".to_string();
            pod.status.start_time = humantime::parse_rfc3339(TIME).ok();
        }
        Placement::Nominated(node) => {
            pod.status.phase = "Pending".to_string();
            pod.status.nominated_node_name = node.to_string();
        }
        Placement::Pending => pod.status.phase = "Pending".to_string(),
    }
    pod
}

/// Generates the cluster as model objects: nodes, and the pods running on (or nominated to)
/// them, the same as `gen-cluster` writes (see `cluster_shape`). Services and ReplicaSets:
/// [`controllers`]; all of it: [`snapshot`].
pub fn generate(spec: &ClusterSpec) -> (Vec<Node>, Vec<Pod>) {
    let per_node: Vec<(Node, Vec<Pod>)> = (0..spec.nodes)
        .into_par_iter()
        .map(|i| {
            let (shape, mut rng) = node_shape(spec, i);
            let node = model_node(&shape, &node_images(spec, &shape, &mut rng));
            let pods = (0..spec.pods_per_node)
                .map(|j| {
                    let (pod, _) = pod_shape_on(spec, &shape, j);
                    let placement = if is_nominated(spec, i, j) {
                        Placement::Nominated(&shape.name)
                    } else {
                        Placement::Bound(&shape.name)
                    };
                    model_pod(spec, &pod, placement)
                })
                .collect();
            (node, pods)
        })
        .collect();
    let mut nodes = Vec::with_capacity(spec.nodes);
    let mut pods = Vec::with_capacity(spec.nodes * spec.pods_per_node);
    for (node, node_pods) in per_node {
        nodes.push(node);
        pods.extend(node_pods);
    }
    (nodes, pods)
}

/// The cluster's Services and ReplicaSets, as `gen-cluster` writes them.
pub fn controllers(spec: &ClusterSpec) -> Vec<ClusterObject> {
    let mut objects = Vec::new();
    for object in api_objects::controllers(spec) {
        let object = match object["kind"].as_str() {
            Some("Service") => serde_json::from_value(object).map(|s| ClusterObject::Service(Box::new(s))),
            _ => serde_json::from_value(object).map(|rs| ClusterObject::ReplicaSet(Box::new(rs))),
        };
        // The generator's own objects always decode; the tests compare them with gen-cluster's.
        if let Ok(object) = object {
            objects.push(object);
        }
    }
    objects
}

/// The whole generated cluster as a snapshot: nodes, pods, Services and ReplicaSets.
pub fn snapshot(spec: &ClusterSpec) -> Snapshot {
    let (nodes, pods) = generate(spec);
    let mut snapshot = Snapshot::build(nodes, pods);
    for object in controllers(spec) {
        snapshot.upsert(object);
    }
    snapshot
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_cluster() {
        let spec = ClusterSpec { nodes: 20, ..ClusterSpec::default() };
        let (n1, p1) = generate(&spec);
        let (n2, p2) = generate(&spec);
        assert_eq!(n1.len(), 20);
        assert_eq!(p1.len(), 400);
        assert_eq!(format!("{n1:?}{p1:?}"), format!("{n2:?}{p2:?}"));
        let anti = p1.iter().filter(|p| p.has_pod_affinity_terms()).count();
        assert!((10..=80).contains(&anti), "about 10% anti-affinity, got {anti}");
    }

    #[test]
    fn every_service_and_replica_set_gen_cluster_writes_decodes() {
        let spec = ClusterSpec { nodes: 50, ..ClusterSpec::default() };
        let objects = controllers(&spec);
        assert_eq!(objects.len(), api_objects::controllers(&spec).len());
        let snapshot = snapshot(&spec);
        assert_eq!(snapshot.services_in("shop").count(), 9, "the apps of shop and checkout-api");
        let checkout: Vec<String> = snapshot
            .replica_sets_in("shop")
            .filter_map(|rs| rs.metadata.name.clone())
            .filter(|n| n.starts_with("checkout-api-"))
            .collect();
        assert_eq!(checkout.len(), 2, "{checkout:?}");
    }

    #[test]
    fn nodes_differ_in_size_and_load_and_their_pods_never_ask_for_more_than_95_percent() {
        let spec = ClusterSpec { nodes: 300, nominated: 40, ..ClusterSpec::default() };
        let (nodes, pods) = generate(&spec);
        let mut asked: BTreeMap<&str, (i64, i64)> = BTreeMap::new();
        for pod in &pods {
            let node =
                if pod.spec.node_name.is_empty() { &pod.status.nominated_node_name } else { &pod.spec.node_name };
            let entry = asked.entry(node.as_str()).or_default();
            for c in &pod.spec.containers {
                entry.0 += c.resources.requests.get("cpu").map_or(0, Quantity::milli_value);
                entry.1 += c.resources.requests.get("memory").map_or(0, Quantity::value);
            }
        }
        let mut types = std::collections::BTreeSet::new();
        let mut cpu_shares = Vec::new();
        for node in &nodes {
            types.insert(node.metadata.labels["node.kubernetes.io/instance-type"].clone());
            let (cpu, memory) = asked[node.metadata.name.as_str()];
            let alloc = &node.status.allocatable;
            let (alloc_cpu, alloc_memory) = (alloc["cpu"].milli_value(), alloc["memory"].value());
            assert!(cpu * 100 <= alloc_cpu * 95 && memory * 100 <= alloc_memory * 95, "{}", node.metadata.name);
            cpu_shares.push(cpu * 100 / alloc_cpu);
        }
        assert_eq!(types.len(), 4, "{types:?}");
        let (low, high) = (cpu_shares.iter().min().unwrap(), cpu_shares.iter().max().unwrap());
        assert!(*low < 25 && *high > 75, "requested cpu from {low}% to {high}%");
    }
}
