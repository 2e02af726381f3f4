//! Deterministic synthetic clusters for benchmarks and scale tests: nodes in zones, some tainted,
//! pods of a few dozen apps with requests, host ports and, for a share of them, required
//! anti-affinity to their own app per host.

use crate::cluster::shared_list::SharedList;
use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Affinity, ContainerImage, PodAffinityTerm, PodAntiAffinity, Taint, Toleration};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, OwnerReference};

use crate::cluster::objects::{Container, Node, NodeCondition, Pod, ResourceRequirements};
use crate::quantity::Quantity;

/// The shape of a generated cluster.
#[derive(Debug, Clone, Copy)]
pub struct ClusterSpec {
    pub nodes: usize,
    pub pods_per_node: usize,
    pub zones: usize,
    /// Percentage (0..=100) of pods with required anti-affinity to their own app per host.
    pub anti_affinity_percent: u32,
    /// Percentage (0..=100) of nodes with a `dedicated=batch:NoSchedule` taint.
    pub tainted_percent: u32,
    /// How many of the pods are nominated to their node (`status.nominatedNodeName`, no
    /// `spec.nodeName`) instead of running on it. Only the API-object generator reads it.
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

impl ClusterSpec {
    /// The default shape at `[NODES] [PODS_PER_NODE]` from a tool's command line (5000 and 20 when
    /// absent or not numbers), as the examples take them.
    pub fn from_args(args: impl IntoIterator<Item = String>) -> Self {
        let numbers: Vec<usize> = args.into_iter().filter_map(|a| a.parse().ok()).collect();
        ClusterSpec {
            nodes: numbers.first().copied().unwrap_or(5000),
            pods_per_node: numbers.get(1).copied().unwrap_or(20),
            ..ClusterSpec::default()
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

const APPS: usize = 40;

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

/// A pod of `app` requesting cpu and memory in 1-3 containers.
pub fn app_pod(rng: &mut Rng, name: &str, app: &str, node: &str, anti_affinity: bool) -> Pod {
    let mut pod = Pod::default();
    pod.metadata.name = name.to_string();
    pod.metadata.namespace = format!("team-{}", app.len() % 5);
    pod.metadata.uid = format!("uid-{name}");
    pod.metadata.labels = labels(&[("app", app.to_string()), ("pod-template-hash", "7d4b9c".to_string())]).into();
    pod.metadata.owner_references = SharedList::new(vec![OwnerReference {
        api_version: "apps/v1".to_string(),
        kind: "ReplicaSet".to_string(),
        name: format!("{app}-7d4b9c"),
        uid: format!("uid-rs-{app}"),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }]);
    pod.spec.node_name = node.to_string();
    for c in 0..1 + rng.below(3) {
        let mut requests = BTreeMap::new();
        requests.insert("cpu".to_string(), q(&format!("{}m", 25 + rng.below(8) * 25)));
        requests.insert("memory".to_string(), q(&format!("{}Mi", 64 + rng.below(8) * 64)));
        pod.spec.containers.push(Container {
            name: format!("c{c}"),
            resources: ResourceRequirements { requests: requests.into_iter().collect(), limits: Default::default() },
            ..Container::default()
        });
    }
    pod.spec.tolerations = default_tolerations().into();
    if anti_affinity {
        pod.spec.affinity = Some(anti_affinity_to(app));
    }
    pod.status.phase = if node.is_empty() { "Pending" } else { "Running" }.to_string();
    pod
}

/// Generates the cluster: nodes, and the pods running on them.
pub fn generate(spec: &ClusterSpec) -> (Vec<Node>, Vec<Pod>) {
    let mut rng = Rng::new(spec.seed);
    let mut nodes = Vec::with_capacity(spec.nodes);
    let mut pods = Vec::with_capacity(spec.nodes * spec.pods_per_node);
    for i in 0..spec.nodes {
        let name = node_name(i);
        let zone = format!("zone-{}", i % spec.zones.max(1));
        let mut node = Node::default();
        node.metadata.name = name.clone();
        node.metadata.uid = format!("uid-{name}");
        node.metadata.labels = labels(&[
            ("kubernetes.io/hostname", name.clone()),
            ("kubernetes.io/os", "linux".to_string()),
            ("kubernetes.io/arch", "amd64".to_string()),
            ("topology.kubernetes.io/zone", zone),
            ("topology.kubernetes.io/region", "region-1".to_string()),
            ("node.kubernetes.io/instance-type", "standard-16".to_string()),
        ]);
        if rng.percent(spec.tainted_percent) {
            node.spec.taints.push(Taint {
                key: "dedicated".to_string(),
                value: Some("batch".to_string()),
                effect: "NoSchedule".to_string(),
                time_added: None,
            });
        }
        for (k, v) in [("cpu", "15890m"), ("memory", "59Gi"), ("ephemeral-storage", "94Gi"), ("pods", "110")] {
            node.status.allocatable.insert(k.to_string(), q(v));
        }
        for (t, s) in
            [("Ready", "True"), ("MemoryPressure", "False"), ("DiskPressure", "False"), ("PIDPressure", "False")]
        {
            node.status.conditions.push(NodeCondition { type_: t.to_string(), status: s.to_string() });
        }
        for img in 0..20 + rng.below(20) {
            node.status.images.push(ContainerImage {
                names: Some(vec![format!("registry.example.com/app-{img}:v1.{}", rng.below(10))]),
                size_bytes: Some(50_000_000 + rng.below(500_000_000) as i64),
            });
        }
        for j in 0..spec.pods_per_node {
            let app = format!("app-{}", rng.below(APPS as u64));
            let anti = rng.percent(spec.anti_affinity_percent);
            pods.push(app_pod(&mut rng, &format!("{app}-{i}-{j}"), &app, &name, anti));
        }
        nodes.push(node);
    }
    (nodes, pods)
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
}
