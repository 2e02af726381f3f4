//! The engine path of `/filter` on a generated cluster: preparing the pod (`PodContext`, including
//! the cluster-wide counts) and checking every node on the evaluator, with the default predicates
//! with and without MatchInterPodAffinity.
//!
//! `cargo bench --bench filter` (5,000 nodes x 20 pods, 10% of pods with required anti-affinity).

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use predicate_extender::cluster::{ClusterStore, Snapshot};
use predicate_extender::engine::{filter, CancelFlag, Candidate, ClusterView, Evaluator, PodContext, RequestJob};
use predicate_extender::metrics::Metrics;
use predicate_extender::policy::Plan;
use predicate_extender::predicates::Kind;
use predicate_extender::testing::generate::{app_pod, generate, node_name, ClusterSpec, Rng};

fn plan(with_inter_pod_affinity: bool) -> Plan {
    let predicates = Kind::ALL
        .iter()
        .filter(|k| k.in_default_set())
        .filter(|k| with_inter_pod_affinity || **k != Kind::MatchInterPodAffinity)
        .filter_map(|k| k.instantiate())
        .collect();
    Plan { predicates, ..Plan::default() }
}

fn bench_filter(c: &mut Criterion) {
    let spec =
        ClusterSpec { nodes: 5000, pods_per_node: 20, zones: 3, anti_affinity_percent: 10, ..Default::default() };
    let (nodes, pods) = generate(&spec);
    let snapshot = Snapshot::build(nodes, pods);
    let names: Vec<String> = (0..spec.nodes).map(node_name).collect();
    // The pending pod: an app replica with required anti-affinity to its own app per host.
    let pod = app_pod(&mut Rng::new(7), "pending", "app-3", "", true);
    let evaluator = Arc::new(Evaluator::new(16).expect("evaluator pool"));

    let mut group = c.benchmark_group("filter_engine_5000_nodes");
    group.sample_size(20);
    for with_affinity in [false, true] {
        let plan = plan(with_affinity);
        let label = if with_affinity { "default_predicates" } else { "default_without_MatchInterPodAffinity" };
        group.bench_function(BenchmarkId::from_parameter(label), |b| {
            b.iter(|| {
                let candidates: Vec<Candidate> =
                    names.iter().map(|n| Candidate::by_name(&snapshot, n.clone())).collect();
                let view = ClusterView::of(&snapshot);
                let ctx = PodContext::for_request(pod.clone(), &view, &plan);
                let verdicts = filter(&evaluator, &plan, &ctx, &candidates, &CancelFlag::new());
                std::hint::black_box(verdicts.map(|v| v.len()).unwrap_or(0))
            })
        });
    }
    group.finish();
}

/// The /filter engine path as the handler runs it with metrics: through `PredicateMetrics::filter`
/// and `record_filter`, unsampled (90% of requests) and sampled (10%: every predicate timed).
fn bench_filter_metrics(c: &mut Criterion) {
    let spec =
        ClusterSpec { nodes: 5000, pods_per_node: 20, zones: 3, anti_affinity_percent: 10, ..Default::default() };
    let (nodes, pods) = generate(&spec);
    let snapshot = Arc::new(Snapshot::build(nodes, pods));
    let names: Vec<String> = (0..spec.nodes).map(node_name).collect();
    let pod = app_pod(&mut Rng::new(7), "pending", "app-3", "", true);
    let evaluator = Arc::new(Evaluator::new(16).expect("evaluator pool"));
    let plan = Arc::new(plan(true));
    let store = Arc::new(ClusterStore::new(Snapshot::default()));

    let mut group = c.benchmark_group("filter_with_metrics_5000_nodes");
    group.sample_size(20);
    for percent in [0, 100] {
        let metrics = Metrics::with_sample_percent(&plan, Arc::clone(&store), None, percent);
        let label = if percent == 0 { "default_predicates_unsampled" } else { "default_predicates_sampled" };
        group.bench_function(BenchmarkId::from_parameter(label), |b| {
            b.iter(|| {
                let candidates: Vec<Candidate> =
                    names.iter().map(|n| Candidate::by_name(&snapshot, n.clone())).collect();
                let job = RequestJob {
                    plan: Arc::clone(&plan),
                    pod: pod.clone(),
                    snapshot: Arc::clone(&snapshot),
                    candidates,
                    from_request_nodes: false,
                    cancel: CancelFlag::new(),
                };
                let verdicts = metrics.predicates.filter(&job, &evaluator).unwrap_or_default();
                metrics.predicates.record_filter(&verdicts);
                std::hint::black_box(verdicts.len())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_filter, bench_filter_metrics);
criterion_main!(benches);
