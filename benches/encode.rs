//! Encoding the answers: the `ExtenderFilterResult` of `/filter` for the pending pod, built from
//! the verdicts by the handler's own `server::filter_result` (feasible names, or the request's own
//! node bytes, and the failure reasons), and the `HostPriorityList` of `/prioritize`.
//!
//! `cargo bench --bench encode` (ids `encode/filter_node_names/N`, `encode/filter_nodes/N`,
//! `encode/prioritize/N`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark of generated input: a panic is its error report

mod common;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use predicate_engine::engine::Candidate;
use predicate_extender::server::filter_result::filter_result;
use predicate_extender::wire::{Candidates, ExtenderArgs, HostPriority};
use serde_json::value::RawValue;

fn bench_encode(c: &mut Criterion) {
    let mut group = c.benchmark_group("encode");
    for nodes in common::sizes() {
        common::configure(&mut group, nodes);
        group.bench_function(BenchmarkId::new("filter_node_names", nodes), |b| {
            let f = common::fixture(nodes);
            let job = f.job(f.candidates_by_name(), false);
            let verdicts = job.filter(common::evaluator()).expect("not cancelled").verdicts;
            b.iter(|| {
                let result = filter_result(&job.candidates, &verdicts, None, "default/pending");
                std::hint::black_box(serde_json::to_vec(&result).expect("encodes"))
            })
        });
        group.bench_function(BenchmarkId::new("filter_nodes", nodes), |b| {
            let f = common::fixture(nodes);
            let list = match ExtenderArgs::decode(&f.nodes_body).expect("decodes").nodes {
                Candidates::Nodes(list) => list,
                Candidates::Names(_) => unreachable!("a Nodes body"),
            };
            let metadata = list.metadata;
            let raws: Vec<&RawValue> = list.items.iter().map(|item| item.raw).collect();
            let candidates = list
                .items
                .into_iter()
                .map(|item| {
                    let (info, nominated) = f.snapshot.candidate_for(item.node);
                    Candidate::Known(info, nominated)
                })
                .collect();
            let job = f.job(candidates, true);
            let verdicts = job.filter(common::evaluator()).expect("not cancelled").verdicts;
            b.iter(|| {
                let result = filter_result(&job.candidates, &verdicts, Some((metadata, &raws)), "default/pending");
                std::hint::black_box(serde_json::to_vec(&result).expect("encodes"))
            })
        });
        group.bench_function(BenchmarkId::new("prioritize", nodes), |b| {
            let f = common::fixture(nodes);
            let job = f.job(f.candidates_by_name(), false);
            let scores = job.prioritize(common::evaluator()).expect("not cancelled");
            b.iter(|| {
                let list: Vec<HostPriority> = job
                    .candidates
                    .iter()
                    .zip(&scores)
                    .map(|(c, &score)| HostPriority { host: c.name().to_string(), score })
                    .collect();
                std::hint::black_box(serde_json::to_vec(&list).expect("encodes"))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_encode);
criterion_main!(benches);
