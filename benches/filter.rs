//! The engine path of `/filter` for the pending pod: resolving the candidates (from `NodeNames`
//! against the model, or from the request's decoded `Nodes`), preparing the request (the pod and
//! each predicate's state, including the cluster-wide counts) and checking every node on the
//! evaluator with the default predicates.
//!
//! `cargo bench --bench filter` (ids `filter/node_names/N`, `filter/nodes/N`, and
//! `filter/node_names_without_MatchInterPodAffinity/N`, which shows that predicate's share).
//!
//! `cargo bench --bench filter -- resolve_names` (ids `filter/resolve_names/N`): resolving every
//! node's name against the model into candidates and dropping them, nothing else (the part of
//! `filter/node_names/N` that dense node slots serve); `filter/lookup_names/N`, the same names
//! only looked up (no candidate made, so no reference counts taken or dropped).
//!
//! `cargo bench --bench filter -- zone_terms` (ids `filter/zone_terms/N` and
//! `filter/zone_terms_affinity_and_spread_only/N`): the pending pod with required zone affinity
//! to its app and zone anti-affinity, beside its zone spread, on the generated cluster without
//! hostname anti-affinity (so every term has the zone key and the verdicts are kept per zone).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark of generated input: a panic is its error report

mod common;

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};
use gen_cluster::api_objects::PENDING_APP;
use gen_cluster::generate::ClusterSpec;
use k8s_openapi::api::core::v1::Affinity;
use predicate_engine::cluster::objects::Pod;
use predicate_engine::cluster::{ClusterStore, Snapshot};
use predicate_engine::engine::{Candidate, Timed, Verdict};
use predicate_engine::policy::Plan;
use predicate_extender::metrics::Metrics;
use predicate_extender::wire::{Candidates, ExtenderArgs};

fn bench_filter(c: &mut Criterion) {
    let mut group = c.benchmark_group("filter");
    for nodes in common::sizes() {
        common::configure(&mut group, nodes);
        group.bench_function(BenchmarkId::new("node_names", nodes), |b| {
            let f = common::fixture(nodes);
            b.iter(|| {
                let job = f.job(f.candidates_by_name(), false);
                let filtered = job.filter(common::evaluator()).expect("not cancelled");
                std::hint::black_box(filtered.verdicts.len())
            })
        });
        group.bench_function(BenchmarkId::new("resolve_names", nodes), |b| {
            let f = common::fixture(nodes);
            // The names are copied untimed: the handler moves the decoded names in.
            b.iter_batched(
                || f.names.clone(),
                |names| {
                    let candidates: Vec<Candidate> =
                        names.into_iter().map(|n| Candidate::by_name(&f.snapshot, n)).collect();
                    let known = candidates.iter().filter(|c| c.node().is_some()).count();
                    drop(candidates);
                    std::hint::black_box(known)
                },
                BatchSize::LargeInput,
            )
        });
        group.bench_function(BenchmarkId::new("lookup_names", nodes), |b| {
            let f = common::fixture(nodes);
            b.iter_batched(
                || f.names.clone(),
                |names| {
                    let known = names.iter().filter(|n| f.snapshot.has_node(n)).count();
                    drop(names);
                    std::hint::black_box(known)
                },
                BatchSize::LargeInput,
            )
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
        // As the handler runs it, the report going to the metrics: one candidate in ten timed
        // (the server's sample), against none and against every candidate.
        let sampled = Timed::OneIn { stride: 10, offset: 3 };
        let cases = [
            ("node_names_metrics_untimed", Timed::Never),
            ("node_names_metrics_sampled", sampled),
            ("node_names_metrics_every", Timed::Every),
        ];
        for (label, timed) in cases {
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

/// The pending pod with required pod affinity to its app's zones and anti-affinity to another
/// app's zones (both on the zone key; its zone spread stays).
fn with_zone_terms(pending: &Pod) -> Pod {
    const ZONE: &str = "topology.kubernetes.io/zone";
    let terms: Affinity = serde_json::from_value(serde_json::json!({
        "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": PENDING_APP}}, "topologyKey": ZONE}]},
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "batch-reports"}}, "topologyKey": ZONE}]}
    }))
    .expect("affinity terms");
    let mut pod = pending.clone();
    let affinity = pod.spec.affinity.get_or_insert_with(Affinity::default);
    affinity.pod_affinity = terms.pod_affinity;
    affinity.pod_anti_affinity = terms.pod_anti_affinity;
    pod
}

fn bench_zone_terms(c: &mut Criterion) {
    let mut group = c.benchmark_group("filter");
    for nodes in [1000, 5000] {
        common::configure(&mut group, nodes);
        let f = common::build_spec(ClusterSpec { nodes, anti_affinity_percent: 0, ..common::spec(nodes) });
        let pod = with_zone_terms(&f.pending);
        let mut only = Plan::default_plan();
        only.predicates.retain(|p| ["MatchInterPodAffinity", "EvenPodsSpread"].contains(&p.plugin()));
        let only = Arc::new(only);
        for (label, plan) in [("zone_terms", &f.plan), ("zone_terms_affinity_and_spread_only", &only)] {
            let mut job = f.job(f.candidates_by_name(), false);
            job.plan = Arc::clone(plan);
            job.pod = pod.clone();
            let verdicts = job.filter(common::evaluator()).expect("not cancelled").verdicts;
            let fit = verdicts.iter().filter(|v| matches!(v, Verdict::Fits)).count();
            eprintln!("{label}/{nodes}: {fit} of {} nodes fit", verdicts.len());
            group.bench_function(BenchmarkId::new(label, nodes), |b| {
                b.iter(|| {
                    let mut job = f.job(f.candidates_by_name(), false);
                    job.plan = Arc::clone(plan);
                    job.pod = pod.clone();
                    let filtered = job.filter(common::evaluator()).expect("not cancelled");
                    std::hint::black_box(filtered.verdicts.len())
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench_filter, bench_zone_terms);
criterion_main!(benches);
