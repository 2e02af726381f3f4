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
    for nodes in common::SIZES {
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

/// One parser against another on the same bytes: every node of the `Nodes` body decoded in turn,
/// on one thread, into the type `/filter` decodes it into (issue 17.5).
fn bench_node_items(c: &mut Criterion) {
    use predicate_extender::cluster::objects::{Node, Object};
    use predicate_extender::wire::Candidates;
    let mut group = c.benchmark_group("decode");
    for nodes in common::SIZES {
        common::configure(&mut group, nodes);
        group.throughput(Throughput::Elements(nodes as u64));
        let f = common::fixture(nodes);
        let args = ExtenderArgs::decode(&f.nodes_body).unwrap();
        let Candidates::Nodes(list) = &args.nodes else { panic!("a Nodes body") };
        let items: Vec<&str> = list.items.iter().map(|n| n.raw.get()).collect();
        group.bench_function(BenchmarkId::new("node_items_serde_json", nodes), |b| {
            b.iter(|| {
                for item in &items {
                    let node: Object<Node> = serde_json::from_str(item).unwrap();
                    std::hint::black_box(node);
                }
            })
        });
        group.bench_function(BenchmarkId::new("node_items_simd_json", nodes), |b| {
            b.iter(|| {
                for item in &items {
                    // simd-json parses in place: the bytes are copied first, as the server would.
                    let mut bytes = item.as_bytes().to_vec();
                    let node: Object<Node> = simd_json::serde::from_slice(&mut bytes).unwrap();
                    std::hint::black_box(node);
                }
            })
        });
        group.bench_function(BenchmarkId::new("node_items_sonic_rs", nodes), |b| {
            b.iter(|| {
                for item in &items {
                    let node: Object<Node> = sonic_rs::from_str(item).unwrap();
                    std::hint::black_box(node);
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_decode, bench_node_items);
criterion_main!(benches);
