//! What a generated cluster holds, decided per object from the seed: each node and pod can be made
//! alone (in parallel, in any order), and the two renderings of it agree, `generate` (model
//! objects, for tests and examples) and `api_objects` (the API server's JSON, for `gen-cluster`
//! and the benchmarks).
//!
//! The cluster is shaped like one people run:
//! - nodes of four instance types (4, 8, 16 and 32 cores, 4 GiB a core), allocatable after the
//!   kubelet's usual reservations, in `spec.zones` zones round-robin;
//! - the pods of a node request a share of its allocatable that differs by node (about 10-85% of
//!   the cpu, the memory share near it), split unevenly among them;
//! - 40 apps in five namespaces, some far more common than others (weights 40 down to 1), each
//!   with a Service and a ReplicaSet; the apps of namespace `shop` carry the mesh sidecar;
//! - a node's images are the system images, its pods' images and earlier ones (other apps, older
//!   versions), largest first and at most 50 (the kubelet's `nodeStatusMaxImages`); an image has
//!   one size and one digest on every node;
//! - the pending pod's app, `checkout-api` in `shop`, is rolling out: its new ReplicaSet's pods are
//!   uneven over the zones (most in the first), the old ReplicaSet's make up the rest, so that
//!   every zone holds as many of its pods (its zone spread allows a skew of 1), one per node;
//! - about 2% of the nodes ask to avoid the new ReplicaSet's pods (`preferAvoidPods`), 1% another
//!   app's.

use std::fmt::Write as _;

use crate::generate::{node_name, ClusterSpec, Rng};

/// Streams of [`Rng::derive`]: every object draws from a generator of its own.
pub const NODE_STREAM: u64 = 1;
pub const POD_STREAM: u64 = 2;
pub const PENDING_STREAM: u64 = 3;
/// For callers that need further pods of the same shape (the pod-event benchmark).
pub const EXTRA_POD_STREAM: u64 = 4;
const APP_STREAM: u64 = 5;
const IMAGE_STREAM: u64 = 6;
const CONTROLLER_STREAM: u64 = 7;

/// A machine type: its cores and memory, and the percentage of the nodes that have it.
#[derive(Debug, PartialEq, Eq)]
pub struct InstanceType {
    pub name: &'static str,
    pub cores: i64,
    pub memory_gib: i64,
    share: u64,
}

pub const INSTANCE_TYPES: [InstanceType; 4] = [
    InstanceType { name: "standard-4", cores: 4, memory_gib: 16, share: 25 },
    InstanceType { name: "standard-8", cores: 8, memory_gib: 32, share: 35 },
    InstanceType { name: "standard-16", cores: 16, memory_gib: 64, share: 25 },
    InstanceType { name: "standard-32", cores: 32, memory_gib: 128, share: 15 },
];

impl InstanceType {
    /// Allocatable cpu in millicores: the cores less the kubelet's reservation (GKE's: 6% of the
    /// first core, 1% of the second, 0.5% of the next two, 0.25% of each further one).
    pub fn cpu_milli(&self) -> i64 {
        self.cores * 1000 - (80 + (self.cores - 4).max(0) * 5 / 2)
    }

    /// Memory capacity in KiB: what the kernel leaves of the machine's memory (about 98%).
    pub fn memory_capacity_ki(&self) -> i64 {
        self.memory_gib * 1024 * 1024 * 981 / 1000
    }

    /// Allocatable memory in KiB: capacity less the kubelet's reservation (GKE's: 25% of the
    /// first 4 GiB, 20% of the next 4, 10% of the next 8, 6% up to 128 GiB, 2% above) and the
    /// 100Mi eviction threshold.
    pub fn memory_ki(&self) -> i64 {
        let tiers = [(4, 25), (4, 20), (8, 10), (112, 6), (i64::MAX / 2, 2)];
        let (mut left, mut reserved) = (self.memory_gib, 0);
        for (gib, percent) in tiers {
            let take = left.min(gib);
            reserved += take * 1024 * 1024 * percent / 100;
            left -= take;
        }
        self.memory_capacity_ki() - reserved - 100 * 1024
    }
}

/// A ReplicaSet (or the Service of an app), as owner references and the preferAvoidPods
/// annotation name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Controller {
    pub name: String,
    pub namespace: &'static str,
    pub uid: String,
}

/// A container image: one size and one digest wherever it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    pub repo: String,
    pub tag: String,
    pub size: i64,
    pub digest: String,
}

impl Image {
    fn new(seed: u64, repo: String, tag: String, size: i64) -> Self {
        let mut rng = Rng::derive(seed, IMAGE_STREAM, fnv1a(&format!("{repo}:{tag}")));
        let mut digest = String::with_capacity(64);
        for _ in 0..4 {
            let _ = write!(digest, "{:016x}", rng.next_u64());
        }
        Image { repo, tag, size, digest }
    }

    /// `repo:tag`, as a container names it.
    pub fn reference(&self) -> String {
        format!("{}:{}", self.repo, self.tag)
    }

    /// The names a node lists it under: by digest, then by tag.
    pub fn names(&self) -> [String; 2] {
        [format!("{}@sha256:{}", self.repo, self.digest), self.reference()]
    }
}

fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// A version-4 UUID from the generator.
pub fn uuid(rng: &mut Rng) -> String {
    let (a, b) = (rng.next_u64(), rng.next_u64());
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        0x8000 | ((b >> 48) & 0x3fff),
        b & 0xffff_ffff_ffff
    )
}

/// The characters of generated names (Kubernetes' `rand.String`: no vowels, no 0, 1 or 3).
const NAME_CHARS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

fn random_chars(rng: &mut Rng, n: usize) -> String {
    (0..n).map(|_| NAME_CHARS[rng.below(NAME_CHARS.len() as u64) as usize] as char).collect()
}

/// The five-character suffix of the `g`th pod's name: a bijection of `g` onto the 27^5 suffixes,
/// so no two pods of a cluster share one (the largest cluster has 11 million pods).
fn pod_suffix(seed: u64, g: u64) -> String {
    const SPACE: u64 = 27 * 27 * 27 * 27 * 27;
    // 7,654,321 is prime to 27, so multiplying by it permutes 0..SPACE.
    let mut k = (g % SPACE * 7_654_321 + seed % SPACE) % SPACE;
    let mut out = [0u8; 5];
    for c in out.iter_mut().rev() {
        *c = NAME_CHARS[(k % 27) as usize];
        k /= 27;
    }
    out.iter().map(|&c| c as char).collect()
}

// ---- The images every node has.

fn system_images(seed: u64) -> Vec<Image> {
    [
        ("registry.k8s.io/pause", "3.10", 320_368),
        ("registry.k8s.io/kube-proxy", "v1.33.1", 31_540_271),
        ("registry.example.com/platform/cni-agent", "v1.15.6", 163_212_809),
        ("registry.example.com/platform/node-exporter", "v1.8.2", 23_112_430),
        ("registry.example.com/platform/log-agent", "v3.1.9", 96_431_002),
    ]
    .into_iter()
    .map(|(repo, tag, size)| Image::new(seed, repo.to_string(), tag.to_string(), size))
    .collect()
}

/// The mesh sidecar of the apps in `shop` (and of the pending pod): current and previous version.
pub fn mesh_proxy(seed: u64, previous: bool) -> Image {
    let tag = if previous { "v1.22.2" } else { "v1.22.3" };
    let size = if previous { 182_904_112 } else { 183_552_919 };
    Image::new(seed, "registry.example.com/platform/mesh-proxy".to_string(), tag.to_string(), size)
}

// ---- Apps.

const APPS: usize = 40;
const NAMESPACES: [&str; 5] = ["search", "media", "accounts", "shop", "payments"];
/// The namespace whose pods carry the mesh sidecar.
const MESHED_NAMESPACE: &str = "shop";

/// How common app `a` is: weights 40 down to 1.
fn popularity(a: usize) -> u64 {
    (APPS - a) as u64
}

fn pick_app(rng: &mut Rng) -> usize {
    let total: u64 = (0..APPS).map(popularity).sum();
    let mut r = rng.below(total);
    for a in 0..APPS {
        let w = popularity(a);
        if r < w {
            return a;
        }
        r -= w;
    }
    APPS - 1
}

/// A container of an app: its name, its image and its share (percent) of the pod's requests.
#[derive(Debug, Clone)]
pub struct AppContainer {
    pub name: String,
    pub image: Image,
    /// The image the app ran before its last rollout (cached on some nodes).
    pub previous: Image,
    share: i64,
}

/// One of the cluster's apps: a Deployment's current ReplicaSet and its Service.
#[derive(Debug, Clone)]
pub struct App {
    pub name: String,
    pub namespace: &'static str,
    /// `pod-template-hash`.
    pub hash: String,
    pub replica_set: Controller,
    pub service_uid: String,
    pub deployment_uid: String,
    pub containers: Vec<AppContainer>,
}

fn version(rng: &mut Rng) -> (u64, u64, u64) {
    (1 + rng.below(3), rng.below(30), 1 + rng.below(12))
}

/// App `a` (`app-<a>`).
pub fn app(seed: u64, a: usize) -> App {
    let mut rng = Rng::derive(seed, APP_STREAM, a as u64);
    let name = format!("app-{a}");
    let namespace = NAMESPACES[a % NAMESPACES.len()];
    let length = 9 + rng.below(2) as usize;
    let hash = random_chars(&mut rng, length);
    let replica_set = Controller { name: format!("{name}-{hash}"), namespace, uid: uuid(&mut rng) };
    let service_uid = uuid(&mut rng);
    let deployment_uid = uuid(&mut rng);
    let (major, minor, patch) = version(&mut rng);
    let image = |repo: String, size: i64| AppContainer {
        name: repo.rsplit('/').next().unwrap_or_default().to_string(),
        image: Image::new(seed, repo.clone(), format!("v{major}.{minor}.{patch}"), size),
        previous: Image::new(seed, repo, format!("v{major}.{minor}.{}", patch - 1), size - 1_048_576),
        share: 0,
    };
    let main_size = 80_000_000 + rng.below(820_000_000) as i64;
    let mut containers = vec![image(format!("registry.example.com/{namespace}/{name}"), main_size)];
    if rng.percent(40) {
        let size = 40_000_000 + rng.below(260_000_000) as i64;
        containers.push(image(format!("registry.example.com/{namespace}/{name}-worker"), size));
        containers[0].share = 70;
        containers[1].share = 30;
    } else {
        containers[0].share = 100;
    }
    if namespace == MESHED_NAMESPACE {
        containers[0].share -= 10;
        containers.push(AppContainer {
            name: "mesh-proxy".to_string(),
            image: mesh_proxy(seed, false),
            previous: mesh_proxy(seed, true),
            share: 10,
        });
    }
    App { name, namespace, hash, replica_set, service_uid, deployment_uid, containers }
}

// ---- checkout-api, the pending pod's app.

pub const CHECKOUT_APP: &str = "checkout-api";
pub const CHECKOUT_NAMESPACE: &str = "shop";
/// The `pod-template-hash` of the new ReplicaSet (the pending pod's) and of the old one.
pub const CHECKOUT_HASH: &str = "6c9f7d5b8";
pub const CHECKOUT_OLD_HASH: &str = "5f8d6c4b7";
/// The pending pod's name.
pub const PENDING_NAME: &str = "checkout-api-6c9f7d5b8-x2x7q";
/// cpu (millicores) and memory (MiB) requests of checkout-api's container and of its sidecar.
pub const CHECKOUT_REQUESTS: [(i64, i64); 2] = [(500, 1024), (100, 128)];

/// Which ReplicaSet of checkout-api a pod belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rollout {
    New,
    Old,
}

impl Rollout {
    pub fn hash(self) -> &'static str {
        match self {
            Rollout::New => CHECKOUT_HASH,
            Rollout::Old => CHECKOUT_OLD_HASH,
        }
    }

    pub fn replica_set(self, seed: u64) -> Controller {
        let index = match self {
            Rollout::New => 0,
            Rollout::Old => 1,
        };
        Controller {
            name: format!("{CHECKOUT_APP}-{}", self.hash()),
            namespace: CHECKOUT_NAMESPACE,
            uid: uuid(&mut Rng::derive(seed, CONTROLLER_STREAM, index)),
        }
    }

    pub fn image(self, seed: u64) -> Image {
        let (tag, size) = match self {
            Rollout::New => ("v2.14.3", 612_448_256),
            Rollout::Old => ("v2.14.2", 611_803_904),
        };
        Image::new(seed, format!("registry.example.com/{CHECKOUT_NAMESPACE}/{CHECKOUT_APP}"), tag.to_string(), size)
    }
}

/// The uids of checkout-api's Service and Deployment.
pub fn checkout_uids(seed: u64) -> (String, String) {
    (uuid(&mut Rng::derive(seed, CONTROLLER_STREAM, 2)), uuid(&mut Rng::derive(seed, CONTROLLER_STREAM, 3)))
}

/// The zone the pending pod prefers (soft node affinity): the second one, near its database.
pub fn preferred_zone(spec: &ClusterSpec) -> String {
    format!("zone-{}", 1 % spec.zones.max(1))
}

/// Where checkout-api's pods run: `per_zone` of them in each zone that has nodes, at evenly
/// spaced positions among the zone's nodes; in zone `z` of `Z` the first `per_zone * (Z - z) / Z`
/// are the new ReplicaSet's.
struct CheckoutLayout {
    zones: usize,
    per_zone: usize,
    stride: usize,
}

impl CheckoutLayout {
    fn of(spec: &ClusterSpec) -> Option<Self> {
        if spec.nodes == 0 || spec.pods_per_node == 0 {
            return None;
        }
        let zones = spec.zones.max(1).min(spec.nodes);
        let smallest_zone = spec.nodes / zones;
        // About one pod per 40 nodes of a zone.
        let per_zone = (smallest_zone / 40).max(1);
        Some(CheckoutLayout { zones, per_zone, stride: smallest_zone / per_zone })
    }

    /// The checkout-api pod on node `i`, if there is one.
    fn at(&self, i: usize) -> Option<Rollout> {
        let (zone, position) = (i % self.zones, i / self.zones);
        let replica = position / self.stride;
        if position % self.stride != self.stride / 2 || replica >= self.per_zone {
            return None;
        }
        let new = self.per_zone * (self.zones - zone) / self.zones;
        Some(if replica < new { Rollout::New } else { Rollout::Old })
    }

    /// How many pods each ReplicaSet has.
    fn counts(&self) -> (usize, usize) {
        let new: usize = (0..self.zones).map(|z| self.per_zone * (self.zones - z) / self.zones).sum();
        (new, self.zones * self.per_zone - new)
    }
}

/// The checkout-api pod on node `i` (in its last pod slot), if there is one.
pub fn checkout_at(spec: &ClusterSpec, i: usize) -> Option<Rollout> {
    CheckoutLayout::of(spec).and_then(|l| l.at(i))
}

/// How many pods checkout-api's new and old ReplicaSets have in the cluster.
pub fn checkout_counts(spec: &ClusterSpec) -> (usize, usize) {
    CheckoutLayout::of(spec).map_or((0, 0), |l| l.counts())
}

// ---- Nodes.

/// What a node is: everything but its images (which follow from its pods, [`node_images`]).
#[derive(Debug, Clone)]
pub struct NodeShape {
    pub index: usize,
    pub name: String,
    pub uid: String,
    pub zone: String,
    pub instance: &'static InstanceType,
    /// `dedicated=batch:NoSchedule`. Nodes running checkout-api never have it.
    pub tainted: bool,
    /// The share (percent) of its allocatable cpu and memory that its pods request.
    pub cpu_percent: i64,
    pub memory_percent: i64,
    /// The ReplicaSet its `preferAvoidPods` annotation names, if it has one.
    pub avoids: Option<Controller>,
}

/// Node `i`, and its generator for what follows (images, then the rendering's own fields).
pub fn node_shape(spec: &ClusterSpec, i: usize) -> (NodeShape, Rng) {
    let mut rng = Rng::derive(spec.seed, NODE_STREAM, i as u64);
    let tainted = rng.percent(spec.tainted_percent) && checkout_at(spec, i).is_none();
    let mut r = rng.below(100);
    let instance = INSTANCE_TYPES
        .iter()
        .find(|t| {
            let hit = r < t.share;
            r = r.saturating_sub(t.share);
            hit
        })
        .unwrap_or(&INSTANCE_TYPES[1]);
    // Mostly 30-65%, a few nodes nearly empty or nearly full.
    let cpu_percent = 10 + (rng.below(76) + rng.below(76)) as i64 / 2;
    let memory_percent = (cpu_percent + rng.below(41) as i64 - 20).clamp(5, 90);
    let avoids = match rng.below(100) {
        0 | 1 => Some(Rollout::New.replica_set(spec.seed)),
        2 => Some(app(spec.seed, pick_app(&mut rng)).replica_set),
        _ => None,
    };
    let uid = uuid(&mut rng);
    let name = node_name(i);
    let zone = format!("zone-{}", i % spec.zones.max(1));
    (NodeShape { index: i, name, uid, zone, instance, tainted, cpu_percent, memory_percent, avoids }, rng)
}

impl NodeShape {
    /// Its labels, as the kubelet sets them.
    pub fn labels(&self) -> Vec<(&'static str, String)> {
        vec![
            ("beta.kubernetes.io/arch", "amd64".to_string()),
            ("beta.kubernetes.io/os", "linux".to_string()),
            ("kubernetes.io/arch", "amd64".to_string()),
            ("kubernetes.io/hostname", self.name.clone()),
            ("kubernetes.io/os", "linux".to_string()),
            ("node.kubernetes.io/instance-type", self.instance.name.to_string()),
            ("topology.kubernetes.io/region", "region-1".to_string()),
            ("topology.kubernetes.io/zone", self.zone.clone()),
        ]
    }

    /// Allocatable and capacity, as the kubelet reports them.
    pub fn resources(&self) -> [Vec<(&'static str, String)>; 2] {
        let t = self.instance;
        let common = |cpu: String, memory: i64, storage: &str| {
            vec![
                ("cpu", cpu),
                ("ephemeral-storage", storage.to_string()),
                ("hugepages-1Gi", "0".to_string()),
                ("hugepages-2Mi", "0".to_string()),
                ("memory", format!("{memory}Ki")),
                ("pods", "110".to_string()),
            ]
        };
        [
            common(format!("{}m", t.cpu_milli()), t.memory_ki(), "98566324Ki"),
            common(t.cores.to_string(), t.memory_capacity_ki(), "101445540Ki"),
        ]
    }
}

/// The value of the `scheduler.alpha.kubernetes.io/preferAvoidPods` annotation that avoids `rs`.
pub fn avoid_annotation(rs: &Controller) -> String {
    serde_json::json!({"preferAvoidPods": [{
        "podSignature": {"podController": {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs.name,
            "uid": rs.uid, "controller": true}},
        "evictionTime": "2026-11-01T07:30:00Z", "reason": "Draining",
        "message": format!("{} is being moved off this node", rs.name)}]})
    .to_string()
}

/// The images node `i` lists: the system images, its pods' images, images of earlier pods up to
/// 20-40 in all; largest first and at most 50.
pub fn node_images(spec: &ClusterSpec, shape: &NodeShape, rng: &mut Rng) -> Vec<Image> {
    let seed = spec.seed;
    let mut images = system_images(seed);
    let add = |images: &mut Vec<Image>, image: Image| {
        if !images.iter().any(|i| i.repo == image.repo && i.tag == image.tag) {
            images.push(image);
        }
    };
    for j in 0..spec.pods_per_node {
        match slot(spec, shape.index, j) {
            Slot::Checkout(rollout) => {
                add(&mut images, rollout.image(seed));
                add(&mut images, mesh_proxy(seed, false));
            }
            Slot::App(a) => {
                for c in app(seed, a).containers {
                    add(&mut images, c.image);
                }
            }
        }
    }
    let wanted = 20 + rng.below(21) as usize;
    // Earlier pods: other apps, older versions. Bounded, as apps repeat.
    for _ in 0..2 * wanted {
        if images.len() >= wanted {
            break;
        }
        let roll = rng.below(100);
        let image = if roll < 2 {
            Rollout::Old.image(seed)
        } else {
            let app = app(seed, pick_app(rng));
            let c = &app.containers[rng.below(app.containers.len() as u64) as usize];
            if roll < 40 {
                c.previous.clone()
            } else {
                c.image.clone()
            }
        };
        add(&mut images, image);
    }
    images.sort_by(|a, b| b.size.cmp(&a.size).then_with(|| a.repo.cmp(&b.repo)).then_with(|| a.tag.cmp(&b.tag)));
    images.truncate(50);
    images
}

// ---- Pods.

/// What runs in pod slot `j` of a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    App(usize),
    Checkout(Rollout),
}

/// Pod slot `j` of node `i`: checkout-api in the last slot of the nodes that run it (the last one
/// not nominated, so that its pods stay as many in every zone), else an app by popularity.
pub fn slot(spec: &ClusterSpec, i: usize, j: usize) -> Slot {
    if let Some(rollout) = checkout_at(spec, i) {
        let last = (0..spec.pods_per_node).rev().find(|&k| !is_nominated(spec, i, k));
        if last.unwrap_or(spec.pods_per_node.saturating_sub(1)) == j {
            return Slot::Checkout(rollout);
        }
    }
    Slot::App(pick_app(&mut pod_rng(spec, i, j)))
}

fn pod_rng(spec: &ClusterSpec, i: usize, j: usize) -> Rng {
    Rng::derive(spec.seed, POD_STREAM, (i * spec.pods_per_node + j) as u64)
}

/// A container of a pod: requests and memory limit in millicores and MiB.
#[derive(Debug, Clone)]
pub struct ContainerShape {
    pub name: String,
    pub image: Image,
    pub cpu_milli: i64,
    pub memory_mi: i64,
    pub memory_limit_mi: i64,
}

/// What a pod is.
#[derive(Debug, Clone)]
pub struct PodShape {
    pub name: String,
    pub namespace: &'static str,
    pub uid: String,
    pub app: String,
    /// `pod-template-hash`.
    pub hash: String,
    pub owner: Controller,
    pub containers: Vec<ContainerShape>,
    /// Required anti-affinity to its own app per host (a share of the apps' pods).
    pub anti_affinity: bool,
    /// checkout-api's pods carry its affinity and zone spread ([`checkout_terms`]).
    pub checkout: bool,
}

impl PodShape {
    pub fn labels(&self) -> Vec<(&'static str, String)> {
        vec![
            ("app", self.app.clone()),
            ("app.kubernetes.io/part-of", self.namespace.to_string()),
            ("pod-template-hash", self.hash.clone()),
        ]
    }
}

/// The requests a pod of a node shares out: cpu millicores and memory MiB, for each pod.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    cpu_milli: i64,
    memory_mi: i64,
    /// The most one pod may take (so the node's pods never ask for more than 95% of it).
    cpu_cap: i64,
    memory_cap: i64,
}

impl Budget {
    /// A pod's budget on this node.
    pub fn on(spec: &ClusterSpec, node: &NodeShape) -> Self {
        let t = node.instance;
        let memory_mi = t.memory_ki() / 1024;
        let (mut cpu_target, mut memory_target) =
            (t.cpu_milli() * node.cpu_percent / 100, memory_mi * node.memory_percent / 100);
        let (mut cpu_max, mut memory_max) = (t.cpu_milli() * 95 / 100, memory_mi * 95 / 100);
        let mut pods = spec.pods_per_node as i64;
        if checkout_at(spec, node.index).is_some() {
            let (cpu, memory): (i64, i64) =
                (CHECKOUT_REQUESTS.iter().map(|r| r.0).sum(), CHECKOUT_REQUESTS.iter().map(|r| r.1).sum());
            cpu_target = (cpu_target - cpu).max(0);
            memory_target = (memory_target - memory).max(0);
            cpu_max = (cpu_max - cpu).max(0);
            memory_max = (memory_max - memory).max(0);
            pods -= 1;
        }
        let pods = pods.max(1);
        Budget {
            cpu_milli: cpu_target / pods,
            memory_mi: memory_target / pods,
            cpu_cap: cpu_max / pods,
            memory_cap: memory_max / pods,
        }
    }

    /// For a pod outside the slots: as on a 16-core node at 40% with 20 pods.
    pub fn typical() -> Self {
        let t = &INSTANCE_TYPES[2];
        let memory_mi = t.memory_ki() / 1024;
        Budget {
            cpu_milli: t.cpu_milli() * 40 / 100 / 20,
            memory_mi: memory_mi * 40 / 100 / 20,
            cpu_cap: t.cpu_milli() / 20,
            memory_cap: memory_mi / 20,
        }
    }
}

/// A pod of an app drawn by popularity (the first draw of `rng`), with requests drawn from
/// `budget`. `g` numbers the pod for its name.
pub fn app_pod_shape(spec: &ClusterSpec, rng: &mut Rng, budget: Budget, name: Option<String>, g: u64) -> PodShape {
    let a = pick_app(rng);
    pod_of_app(spec, rng, a, budget, name, g)
}

/// A pod of app `a` (see [`app_pod_shape`]).
pub fn pod_of_app(
    spec: &ClusterSpec,
    rng: &mut Rng,
    a: usize,
    budget: Budget,
    name: Option<String>,
    g: u64,
) -> PodShape {
    let app = app(spec.seed, a.min(APPS - 1));
    let anti_affinity = rng.percent(spec.anti_affinity_percent);
    // This pod's share of the node's requests: half to one and a half of the even share.
    let jitter = 50 + rng.below(101) as i64;
    let cpu = (budget.cpu_milli * jitter / 100).min(budget.cpu_cap);
    let memory = (budget.memory_mi * jitter / 100).min(budget.memory_cap);
    let containers = app
        .containers
        .iter()
        .map(|c| {
            let memory_mi = (memory * c.share / 100 / 4 * 4).max(16);
            ContainerShape {
                name: c.name.clone(),
                image: c.image.clone(),
                cpu_milli: (cpu * c.share / 100 / 5 * 5).max(5),
                memory_mi,
                memory_limit_mi: memory_mi,
            }
        })
        .collect();
    let uid = uuid(rng);
    PodShape {
        name: name.unwrap_or_else(|| format!("{}-{}", app.replica_set.name, pod_suffix(spec.seed, g))),
        namespace: app.namespace,
        uid,
        app: app.name,
        hash: app.hash,
        owner: app.replica_set,
        containers,
        anti_affinity,
        checkout: false,
    }
}

/// A pod of checkout-api's ReplicaSet `rollout`.
pub fn checkout_pod_shape(spec: &ClusterSpec, rng: &mut Rng, rollout: Rollout, name: String) -> PodShape {
    let seed = spec.seed;
    let images = [rollout.image(seed), mesh_proxy(seed, false)];
    let names = [CHECKOUT_APP, "mesh-proxy"];
    let limits = [1024, 256];
    let containers = (0..2)
        .map(|c| ContainerShape {
            name: names[c].to_string(),
            image: images[c].clone(),
            cpu_milli: CHECKOUT_REQUESTS[c].0,
            memory_mi: CHECKOUT_REQUESTS[c].1,
            memory_limit_mi: limits[c],
        })
        .collect();
    PodShape {
        name,
        namespace: CHECKOUT_NAMESPACE,
        uid: uuid(rng),
        app: CHECKOUT_APP.to_string(),
        hash: rollout.hash().to_string(),
        owner: rollout.replica_set(seed),
        containers,
        anti_affinity: false,
        checkout: true,
    }
}

/// Pod `j` of node `i`, and its generator for the rendering's own fields.
pub fn pod_shape(spec: &ClusterSpec, i: usize, j: usize) -> (PodShape, Rng) {
    pod_shape_on(spec, &node_shape(spec, i).0, j)
}

/// Pod `j` of this node (as [`pod_shape`], for a caller that has the node's shape).
pub fn pod_shape_on(spec: &ClusterSpec, node: &NodeShape, j: usize) -> (PodShape, Rng) {
    let i = node.index;
    let g = (i * spec.pods_per_node + j) as u64;
    let mut rng = pod_rng(spec, i, j);
    let shape = match slot(spec, i, j) {
        Slot::Checkout(rollout) => {
            let name = format!("{CHECKOUT_APP}-{}-{}", rollout.hash(), pod_suffix(spec.seed, g));
            checkout_pod_shape(spec, &mut rng, rollout, name)
        }
        Slot::App(_) => app_pod_shape(spec, &mut rng, Budget::on(spec, node), None, g),
    };
    (shape, rng)
}

/// Whether pod `j` of node `i` is one of the `spec.nominated` pods (nominated to the node,
/// `status.nominatedNodeName`, instead of running on it): they are spread evenly over the
/// cluster's pods, exactly `spec.nominated` of them (all when it is larger).
pub fn is_nominated(spec: &ClusterSpec, i: usize, j: usize) -> bool {
    let total = (spec.nodes * spec.pods_per_node) as u128;
    let k = spec.nominated as u128;
    let g = (i * spec.pods_per_node + j) as u128;
    // Pod g is picked when the running count of picks, floor(g * k / total), steps at it.
    total > 0 && ((g + 1) * k / total) > (g * k / total)
}

/// The pending pod: the next pod of checkout-api's new ReplicaSet.
pub fn pending_shape(spec: &ClusterSpec) -> (PodShape, Rng) {
    let mut rng = Rng::derive(spec.seed, PENDING_STREAM, 0);
    let shape = checkout_pod_shape(spec, &mut rng, Rollout::New, PENDING_NAME.to_string());
    (shape, rng)
}

/// checkout-api's scheduling terms, as JSON (its pods and the pending pod carry them), as a
/// Helm chart's defaults make them: soft anti-affinity to its own pods per host, a soft
/// preference for the zone of its database, and a zone spread (maxSkew 1, DoNotSchedule).
pub fn checkout_terms(spec: &ClusterSpec) -> (serde_json::Value, serde_json::Value) {
    let selector = serde_json::json!({"matchLabels": {"app": CHECKOUT_APP}});
    let affinity = serde_json::json!({
        "nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 50, "preference": {
            "matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": [preferred_zone(spec)]}]}}]},
        "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm":
            {"labelSelector": selector, "topologyKey": "kubernetes.io/hostname"}}]}});
    let spread = serde_json::json!([{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "DoNotSchedule", "labelSelector": selector}]);
    (affinity, spread)
}

// ---- Controllers.

/// Every app's pods in the cluster, counted over the slots (for the ReplicaSets' replicas).
pub fn app_replicas(spec: &ClusterSpec) -> Vec<usize> {
    let mut counts = vec![0; APPS];
    for i in 0..spec.nodes {
        for j in 0..spec.pods_per_node {
            if let Slot::App(a) = slot(spec, i, j) {
                counts[a] += 1;
            }
        }
    }
    counts
}

/// Every app of the catalogue.
pub fn apps(seed: u64) -> Vec<App> {
    (0..APPS).map(|a| app(seed, a)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_types_have_the_usual_allocatable() {
        let cpu: Vec<i64> = INSTANCE_TYPES.iter().map(InstanceType::cpu_milli).collect();
        assert_eq!(cpu, [3920, 7910, 15890, 31850]);
        // 16 GiB: capacity 16,458,448 KiB, less 25% of 4 GiB, 20% of 4 GiB, 10% of 8 GiB and 100Mi.
        assert_eq!(INSTANCE_TYPES[0].memory_ki(), 16_458_448 - 1_048_576 - 838_860 - 838_860 - 102_400);
        for t in &INSTANCE_TYPES {
            let share = t.memory_ki() as f64 / (t.memory_gib * 1024 * 1024) as f64;
            assert!((0.80..0.95).contains(&share), "{}: {share}", t.name);
        }
        assert_eq!(INSTANCE_TYPES.iter().map(|t| t.share).sum::<u64>(), 100);
    }

    #[test]
    fn pod_suffixes_never_repeat() {
        let mut seen = std::collections::BTreeSet::new();
        for g in 0..200_000 {
            assert!(seen.insert(pod_suffix(1, g)), "{g}");
        }
        assert!(!seen.contains("x2x7q"), "the pending pod's suffix");
    }

    #[test]
    fn checkout_api_has_as_many_pods_in_every_zone_and_more_new_ones_in_the_first() {
        for (nodes, zones) in [(1000, 3), (5000, 3), (60, 3), (100, 3), (2, 3), (7, 1), (1000, 7)] {
            let spec = ClusterSpec { nodes, zones, ..ClusterSpec::default() };
            let used = zones.min(nodes);
            let mut per_zone = vec![(0, 0); used];
            for i in 0..nodes {
                match checkout_at(&spec, i) {
                    Some(Rollout::New) => per_zone[i % used].0 += 1,
                    Some(Rollout::Old) => per_zone[i % used].1 += 1,
                    None => {}
                }
                if checkout_at(&spec, i).is_some() {
                    assert!(!node_shape(&spec, i).0.tainted);
                }
            }
            let totals: Vec<usize> = per_zone.iter().map(|(n, o)| n + o).collect();
            assert!(totals.iter().all(|t| *t == totals[0] && *t >= 1), "{nodes}/{zones}: {per_zone:?}");
            let (new, old) = checkout_counts(&spec);
            assert_eq!((new, old), per_zone.iter().fold((0, 0), |s, z| (s.0 + z.0, s.1 + z.1)));
            assert!(per_zone.windows(2).all(|w| w[0].0 >= w[1].0), "{per_zone:?}");
        }
        // Never nominated (docs/explain.md's example nominates 10 of 5,000 pods): they all run.
        let spec = ClusterSpec { nodes: 1000, pods_per_node: 5, nominated: 10, ..ClusterSpec::default() };
        let mut running = 0;
        for i in 0..spec.nodes {
            for j in 0..spec.pods_per_node {
                if let Slot::Checkout(_) = slot(&spec, i, j) {
                    assert!(!is_nominated(&spec, i, j), "node {i} slot {j}");
                    running += 1;
                }
            }
        }
        assert_eq!(running, 24);
    }
}
