//! The engine path of `/filter` for the pending pod: resolving the candidates (from `NodeNames`
//! against the model, or from the request's decoded `Nodes`), preparing the request (the pod and
//! each predicate's state, including the cluster-wide counts) and checking every node on the
//! evaluator with the default predicates.
//!
//! `cargo bench --bench filter` (ids `filter/node_names/N`, `filter/nodes/N`, and
//! `filter/node_names_without_MatchInterPodAffinity/N`, which shows that predicate's share).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark of generated input: a panic is its error report

mod common;

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};
use predicate_extender::cluster::{ClusterStore, Snapshot};
use predicate_extender::engine::Candidate;
use predicate_extender::metrics::Metrics;
use predicate_extender::policy::Plan;
use predicate_extender::wire::{Candidates, ExtenderArgs};

fn bench_filter(c: &mut Criterion) {
    let mut group = c.benchmark_group("filter");
    for nodes in common::SIZES {
        common::configure(&mut group, nodes);
        group.bench_function(BenchmarkId::new("node_names", nodes), |b| {
            let f = common::fixture(nodes);
            b.iter(|| {
                let job = f.job(f.candidates_by_name(), false);
                let filtered = job.filter(common::evaluator()).expect("not cancelled");
                std::hint::black_box(filtered.verdicts.len())
            })
        });
        group.bench_function(BenchmarkId::new("node_names_without_MatchInterPodAffinity", nodes), |b| {
            let f = common::fixture(nodes);
            let mut plan = Plan::default_plan();
            plan.predicates.retain(|p| p.plugin() != "MatchInterPodAffinity");
            let plan = std::sync::Arc::new(plan);
            b.iter(|| {
                let mut job = f.job(f.candidates_by_name(), false);
                job.plan = std::sync::Arc::clone(&plan);
                let filtered = job.filter(common::evaluator()).expect("not cancelled");
                std::hint::black_box(filtered.verdicts.len())
            })
        });
        // As the handler runs it, the report going to the metrics: 90% of requests unsampled, 10%
        // with every predicate timed on every node (upstream's pluginMetricsSamplePercent).
        for (label, timed) in [("node_names_metrics_unsampled", false), ("node_names_metrics_sampled", true)] {
            group.bench_function(BenchmarkId::new(label, nodes), |b| {
                let f = common::fixture(nodes);
                let store = std::sync::Arc::new(ClusterStore::new(Snapshot::default()));
                let metrics = Metrics::new(&f.plan, store, None);
                b.iter(|| {
                    let mut job = f.job(f.candidates_by_name(), false);
                    job.timed = timed;
                    let filtered = job.filter(common::evaluator()).expect("not cancelled");
                    metrics.predicates.record(&f.plan, &filtered.report);
                    std::hint::black_box(filtered.verdicts.len())
                })
            });
        }
        group.bench_function(BenchmarkId::new("nodes", nodes), |b| {
            let f = common::fixture(nodes);
            let request_nodes = match ExtenderArgs::decode(&f.nodes_body).expect("decodes").nodes {
                Candidates::Nodes(list) => list.items.into_iter().map(|item| item.node).collect::<Vec<_>>(),
                Candidates::Names(_) => unreachable!("a Nodes body"),
            };
            // The handler moves the decoded nodes into the candidates; the copy is made untimed.
            b.iter_batched(
                || request_nodes.clone(),
                |decoded| {
                    let candidates = decoded
                        .into_iter()
                        .map(|node| {
                            let (info, nominated) = f.snapshot.candidate_for(node);
                            Candidate::Known(info, nominated)
                        })
                        .collect();
                    let job = f.job(candidates, true);
                    let filtered = job.filter(common::evaluator()).expect("not cancelled");
                    std::hint::black_box((job, filtered))
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, bench_filter);
criterion_main!(benches);
