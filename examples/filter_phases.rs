//! Where the time of one `/filter` goes, phase by phase, on a generated cluster: decoding the
//! request, resolving `NodeNames` against the model, the predicates' per-request states, the node loop,
//! and building and encoding the answer; and decoding a `Nodes` request of realistic nodes.
//!
//! `cargo run --release --example filter_phases -- [NODES] [PODS_PER_NODE]` (default 5000 20)
//!
//! Medians of repeated runs in one process; the criterion benches and `bench/load.sh` give the
//! figures of docs/performance.md, this splits them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a measuring tool of generated input: a panic is its error report

mod common;

use clap::Parser;
use common::ClusterSize;
use std::time::{Duration, Instant};

use gen_cluster::api_objects;
use gen_cluster::generate::{generate, node_name, ClusterSpec, Rng};
use predicate_engine::cluster::Snapshot;
use predicate_engine::engine::evaluator::default_parallelism;
use predicate_engine::engine::{filter, CancelFlag, Candidate, ClusterView, Evaluator, Prepared};
use predicate_engine::policy::Plan;
use predicate_extender::server::filter_result::filter_result;
use predicate_extender::wire::{Candidates, ExtenderArgs};
use serde_json::json;

// As the server binary runs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn time<R>(rounds: usize, mut f: impl FnMut() -> R) -> Duration {
    median(
        (0..rounds)
            .map(|_| {
                let started = Instant::now();
                std::hint::black_box(f());
                started.elapsed()
            })
            .collect(),
    )
}

/// Where the time of one /filter goes, phase by phase, on a generated cluster.
#[derive(Debug, Parser)]
struct Args {
    #[command(flatten)]
    size: ClusterSize,
}

fn main() {
    let spec = Args::parse().size.spec();
    let nodes_only = std::env::var_os("NODES_DECODE_ONLY").is_some();
    let (nodes, pods) = if nodes_only { Default::default() } else { generate(&spec) };
    let snapshot = Snapshot::build(nodes, pods);
    let evaluator = Evaluator::new(default_parallelism()).expect("evaluator pool");
    let plan = Plan::default_plan();

    // The pending pod as the API server sends it: an app replica with anti-affinity per host.
    let mut pending = api_objects::pod(&spec, &mut Rng::new(7), "pending", "");
    pending["spec"]["affinity"] =
        serde_json::to_value(gen_cluster::generate::anti_affinity_to("app-3")).expect("affinity as JSON");
    pending["metadata"]["labels"]["app"] = json!("app-3");
    let names: Vec<String> = (0..spec.nodes).map(node_name).collect();
    let body = serde_json::to_vec(&json!({"Pod": pending, "NodeNames": names})).expect("body");

    if nodes_only {
        return nodes_decode(&spec, &pending, 30);
    }
    let rounds = std::env::var("ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(30);
    let decode = time(rounds, || ExtenderArgs::decode(&body).map(|a| a.pod.metadata.name.len()));
    let args = ExtenderArgs::decode(&body).expect("decodes");
    let Candidates::Names(names) = args.nodes else { panic!("NodeNames") };
    let resolve = time(rounds, || names.iter().map(|n| Candidate::by_name(&snapshot, n.clone())).collect::<Vec<_>>());
    let candidates: Vec<Candidate> = names.iter().map(|n| Candidate::by_name(&snapshot, n.clone())).collect();
    let view = ClusterView::of(&snapshot);
    let prepare = time(rounds, || Prepared::new(&plan, args.pod.clone(), &view));
    let ctx = Prepared::new(&plan, args.pod.clone(), &view);
    let evaluate = time(rounds, || filter(&evaluator, &plan, &ctx, &candidates, &CancelFlag::new(), false));
    let verdicts =
        filter(&evaluator, &plan, &ctx, &candidates, &CancelFlag::new(), false).expect("not cancelled").verdicts;
    let answer =
        || serde_json::to_vec(&filter_result(&candidates, &verdicts, None, "default/pending")).map(|b| b.len());
    let encode = time(rounds, answer);
    let feasible = verdicts.iter().filter(|v| v.fits()).count();
    println!(
        "/filter, {} NodeNames ({feasible} feasible), {} pods; medians of {rounds}:",
        spec.nodes,
        snapshot.pod_count()
    );
    for (phase, d) in [
        ("decode ExtenderArgs", decode),
        ("resolve NodeNames", resolve),
        ("Prepared::new", prepare),
        ("node loop (evaluator)", evaluate),
        ("build + encode answer", encode),
    ] {
        println!("  {phase:<26} {:>9.3} ms", d.as_secs_f64() * 1e3);
    }
    println!("  {:<26} {:>9.3} ms", "sum", (decode + resolve + prepare + evaluate + encode).as_secs_f64() * 1e3);

    if std::env::var_os("NODE_NAMES_ONLY").is_none() {
        nodes_decode(&spec, &pending, 5);
    }
}

/// Nodes mode: realistic node objects, as kube-scheduler sends them.
fn nodes_decode(spec: &ClusterSpec, pending: &serde_json::Value, rounds: usize) {
    let mut rng = Rng::new(spec.seed);
    let items: Vec<serde_json::Value> = (0..spec.nodes).map(|i| api_objects::node(spec, &mut rng, i)).collect();
    let body = serde_json::to_vec(&json!({"Pod": pending, "Nodes": {"metadata": {}, "items": items}})).expect("body");
    drop(items);
    let decode = time(rounds, || ExtenderArgs::decode(&body).map(|a| a.pod.metadata.name.len()));
    println!(
        "/filter, {} Nodes: decode {:.1} ms for {:.1} MB ({:.0} MB/s); median of {rounds}",
        spec.nodes,
        decode.as_secs_f64() * 1e3,
        body.len() as f64 / 1e6,
        body.len() as f64 / 1e6 / decode.as_secs_f64()
    );
}
