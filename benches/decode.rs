//! Decoding a `/filter` body (`ExtenderArgs::decode`): the pod and every node as `NodeNames`, or
//! as full `Nodes` (about 9.9 KB of JSON each, 49.5 MB at 5,000 nodes).
//!
//! `cargo bench --bench decode` (ids `decode/node_names/N`, `decode/nodes/N`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark of generated input: a panic is its error report

mod common;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use predicate_extender::wire::ExtenderArgs;

fn bench_decode(c: &mut Criterion) {
    let mut group = c.benchmark_group("decode");
    for nodes in common::sizes() {
        common::configure(&mut group, nodes);
        for (mode, body) in [("node_names", false), ("nodes", true)] {
            // The body's size is known only once the fixture is built: throughput is in elements
            // (nodes), and the fixture line printed before the run gives the bytes.
            group.throughput(Throughput::Elements(nodes as u64));
            group.bench_function(BenchmarkId::new(mode, nodes), |b| {
                let f = common::fixture(nodes);
                let bytes = if body { &f.nodes_body } else { &f.names_body };
                b.iter(|| match ExtenderArgs::decode(bytes) {
                    Ok(args) => std::hint::black_box(args),
                    Err(e) => panic!("generated body does not decode: {e}"),
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench_decode);
criterion_main!(benches);
