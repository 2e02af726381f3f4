//! The engine path of `/prioritize` on a generated cluster: building the candidates from
//! `NodeNames` and scoring them with the default priorities on the evaluator.
//!
//! `cargo bench --bench prioritize` (5,000 nodes x 20 pods, 10% of pods with required anti-affinity).

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use predicate_extender::cluster::Snapshot;
use predicate_extender::engine::prioritize::prioritize;
use predicate_extender::engine::{CancelFlag, Candidate, ClusterView, Evaluator, PodContext};
use predicate_extender::policy::Plan;
use predicate_extender::testing::generate::{app_pod, generate, node_name, ClusterSpec, Rng};

fn bench_prioritize(c: &mut Criterion) {
    let spec =
        ClusterSpec { nodes: 5000, pods_per_node: 20, zones: 3, anti_affinity_percent: 10, ..Default::default() };
    let (nodes, pods) = generate(&spec);
    let snapshot = Snapshot::build(nodes, pods);
    let names: Vec<String> = (0..spec.nodes).map(node_name).collect();
    let pod = app_pod(&mut Rng::new(7), "pending", "app-3", "", true);
    let evaluator = Arc::new(Evaluator::new(16).expect("evaluator pool"));
    let plan = Plan::default_plan();

    let mut group = c.benchmark_group("prioritize_engine_5000_nodes");
    group.sample_size(20);
    group.bench_function("default_priorities", |b| {
        b.iter(|| {
            let candidates: Vec<Candidate> = names.iter().map(|n| Candidate::by_name(&snapshot, n.clone())).collect();
            let view = ClusterView::of(&snapshot);
            let ctx = PodContext::new(pod.clone());
            let scores = prioritize(&evaluator, &plan, &ctx, &view, &candidates, &CancelFlag::new());
            std::hint::black_box(scores.map(|s| s.len()).unwrap_or(0))
        })
    });
    group.finish();
}

criterion_group!(benches, bench_prioritize);
criterion_main!(benches);
