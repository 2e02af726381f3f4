//! What every benchmark measures on: the cluster `gen-cluster` writes (the same generator, seed
//! and shape: 20 pods per node, 3 zones, 10% tainted nodes, 10% of pods with required
//! anti-affinity), its pending pod and its `/filter` request bodies, at 100, 1,000 and 5,000 nodes.
//!
//! A fixture is built on first use and kept, so `cargo bench -- filter/node_names/100` never
//! builds the 5,000-node one.
#![allow(dead_code)] // each bench binary uses a different part of this

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, SamplingMode};
use gen_cluster::api_objects::{cluster_node, cluster_pod, pending_pod};
use gen_cluster::generate::{node_name, ClusterSpec};
use gen_cluster::write::{extender_args, ArgsMode};
use predicate_engine::cluster::objects::{Node, Object, Pod};
use predicate_engine::cluster::Snapshot;
use predicate_engine::engine::evaluator::default_parallelism;
use predicate_engine::engine::{CancelFlag, Candidate, Evaluator, RequestJob};
use predicate_engine::policy::Plan;
use rayon::prelude::*;

/// The allocator the server runs with (`src/main.rs`), so the benches time what it does.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The cluster sizes every group measures by default.
pub const SIZES: [usize; 3] = [100, 1000, 5000];

/// The sizes to measure: `BENCH_NODES` ("15000", "1000 5000") when set, else [`SIZES`]. A value
/// that is not a number stops the bench with its name.
pub fn sizes() -> Vec<usize> {
    match std::env::var("BENCH_NODES") {
        Ok(list) => list
            .split_whitespace()
            .map(|n| n.parse().unwrap_or_else(|_| panic!("BENCH_NODES: {n:?} is not a node count")))
            .collect(),
        Err(_) => SIZES.to_vec(),
    }
}

/// The shape `gen-cluster` writes by default (seed 1), at `nodes` nodes.
pub fn spec(nodes: usize) -> ClusterSpec {
    ClusterSpec { nodes, ..ClusterSpec::default() }
}

pub struct Fixture {
    pub spec: ClusterSpec,
    pub snapshot: Arc<Snapshot>,
    /// The pending pod, decoded.
    pub pending: Pod,
    /// Every node's name, in order: the `NodeNames` of the request.
    pub names: Vec<String>,
    /// `ExtenderArgs` with every node in `NodeNames`, as `gen-cluster --extender-args node-names`.
    pub names_body: Vec<u8>,
    /// `ExtenderArgs` with every node in `Nodes`, as `gen-cluster --extender-args nodes`.
    pub nodes_body: Vec<u8>,
    pub plan: Arc<Plan>,
}

fn decode<T: serde::de::DeserializeOwned + Default>(value: serde_json::Value) -> T {
    serde_json::from_value::<Object<T>>(value).expect("generated objects decode").0
}

fn build(nodes: usize) -> Fixture {
    build_spec(spec(nodes))
}

/// A fixture of any generated shape (not cached).
pub fn build_spec(spec: ClusterSpec) -> Fixture {
    let started = Instant::now();
    let nodes = spec.nodes;
    let node_objects: Vec<Node> = (0..nodes).into_par_iter().map(|i| decode(cluster_node(&spec, i))).collect();
    let pods: Vec<Pod> = (0..nodes * spec.pods_per_node)
        .into_par_iter()
        .map(|g| decode(cluster_pod(&spec, g / spec.pods_per_node, g % spec.pods_per_node)))
        .collect();
    let snapshot = Arc::new(Snapshot::build(node_objects, pods));
    let fixture = Fixture {
        spec,
        snapshot,
        pending: decode(pending_pod(&spec)),
        names: (0..nodes).map(node_name).collect(),
        names_body: extender_args(&spec, ArgsMode::NodeNames, nodes).expect("NodeNames body"),
        nodes_body: extender_args(&spec, ArgsMode::Nodes, nodes).expect("Nodes body"),
        plan: Arc::new(Plan::default_plan()),
    };
    eprintln!(
        "fixture: {nodes} nodes, {} pods, Nodes body {} bytes, built in {:.1}s",
        fixture.snapshot.pod_count(),
        fixture.nodes_body.len(),
        started.elapsed().as_secs_f64()
    );
    fixture
}

/// The fixture at `nodes` nodes, built on first use.
pub fn fixture(nodes: usize) -> &'static Fixture {
    static CACHE: Mutex<BTreeMap<usize, &'static Fixture>> = Mutex::new(BTreeMap::new());
    let mut cache = CACHE.lock();
    cache.entry(nodes).or_insert_with(|| Box::leak(Box::new(build(nodes))))
}

/// The evaluator the server starts with (the default `--parallelism`: the CPUs, at most 16).
pub fn evaluator() -> &'static Evaluator {
    static EVALUATOR: OnceLock<Evaluator> = OnceLock::new();
    EVALUATOR.get_or_init(|| Evaluator::new(default_parallelism()).expect("evaluator pool"))
}

impl Fixture {
    /// A filter/prioritize job for the pending pod, as the handler prepares one.
    pub fn job(&self, candidates: Vec<Candidate>, from_request_nodes: bool) -> RequestJob {
        RequestJob {
            plan: Arc::clone(&self.plan),
            pod: self.pending.clone(),
            snapshot: Arc::clone(&self.snapshot),
            candidates,
            from_request_nodes,
            cancel: CancelFlag::new(),
            timed: false.into(),
        }
    }

    /// Every node as a `NodeNames` candidate, resolved against the model.
    pub fn candidates_by_name(&self) -> Vec<Candidate> {
        self.names.iter().map(|n| Candidate::by_name(&self.snapshot, n.clone())).collect()
    }
}

/// Sampling for a group at this size: the 5,000-node cases take tens to hundreds of
/// milliseconds an iteration, so they run 10 flat samples instead of criterion's 100 growing ones
/// and `cargo bench` stays within minutes.
pub fn configure(group: &mut BenchmarkGroup<'_, WallTime>, nodes: usize) {
    group.warm_up_time(Duration::from_secs(1));
    if nodes >= 5000 {
        group.sampling_mode(SamplingMode::Flat).sample_size(10).measurement_time(Duration::from_secs(8));
    } else if nodes >= 1000 {
        group.sampling_mode(SamplingMode::Auto).sample_size(20).measurement_time(Duration::from_secs(4));
    } else {
        group.sampling_mode(SamplingMode::Auto).sample_size(50).measurement_time(Duration::from_secs(3));
    }
}
