//! The engine path of `/prioritize` for the pending pod: resolving `NodeNames` against the model
//! and scoring every node with the default priorities on the evaluator.
//!
//! `cargo bench --bench prioritize` (ids `prioritize/node_names/N`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark of generated input: a panic is its error report

mod common;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

fn bench_prioritize(c: &mut Criterion) {
    let mut group = c.benchmark_group("prioritize");
    for nodes in common::sizes() {
        common::configure(&mut group, nodes);
        group.bench_function(BenchmarkId::new("node_names", nodes), |b| {
            let f = common::fixture(nodes);
            b.iter(|| {
                let job = f.job(f.candidates_by_name(), false);
                let scores = job.prioritize(common::evaluator()).expect("not cancelled");
                std::hint::black_box(scores.len())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_prioritize);
criterion_main!(benches);
