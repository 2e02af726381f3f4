//! Applying pod events to the cluster model: 10,000 events (5,000 new pods added on random nodes,
//! then deleted) to the snapshot of the generated cluster, each keeping node sums, the nominated
//! pods and the label indexes in step. Divide the time by 10,000 for the cost of one event.
//!
//! `cargo bench --bench cluster_events` (ids `cluster_events/5000_adds_5000_deletes/N`).
//!
//! `cluster_events/published_500_adds_500_deletes/N`: 1,000 events, each applied to a copy of the
//! snapshot the previous one published (as `ClusterStore::update` does in live mode when every
//! event is its own change), so each pays for copying the paths it touches. Divide by 1,000.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark of generated input: a panic is its error report

mod common;

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use gen_cluster::api_objects::{placed_pod, Placement, EXTRA_POD_STREAM};
use gen_cluster::generate::{node_name, Rng};
use predicate_engine::cluster::objects::{Object, Pod};

const ADDS: usize = 5_000;

/// `ADDS` pods of the cluster's shape, each on a random node, as the watch decodes them.
fn new_pods(nodes: usize) -> Vec<Pod> {
    let spec = common::spec(nodes);
    (0..ADDS)
        .map(|k| {
            let mut rng = Rng::derive(spec.seed, EXTRA_POD_STREAM, k as u64);
            let node = node_name(rng.below(nodes as u64) as usize);
            let value = placed_pod(&spec, &mut rng, &format!("new-{k}"), Placement::Bound(&node));
            serde_json::from_value::<Object<Pod>>(value).expect("generated pods decode").0
        })
        .collect()
}

fn bench_events(c: &mut Criterion) {
    let mut group = c.benchmark_group("cluster_events");
    for nodes in common::sizes() {
        common::configure(&mut group, nodes);
        group.throughput(Throughput::Elements(2 * ADDS as u64));
        group.bench_function(BenchmarkId::new("5000_adds_5000_deletes", nodes), |b| {
            let f = common::fixture(nodes);
            let pods = new_pods(nodes);
            let keys: Vec<(String, String)> =
                pods.iter().map(|p| (p.metadata.namespace.clone(), p.metadata.name.clone())).collect();
            // The copies of the snapshot and the pods are made, and the result dropped, untimed.
            b.iter_batched(
                || ((*f.snapshot).clone(), pods.clone()),
                |(mut snapshot, pods)| {
                    for pod in pods {
                        snapshot.upsert_pod(pod);
                    }
                    for key in &keys {
                        snapshot.remove_pod(key);
                    }
                    snapshot
                },
                BatchSize::PerIteration,
            )
        });
        group.throughput(Throughput::Elements(2 * PUBLISHED as u64));
        group.bench_function(BenchmarkId::new("published_500_adds_500_deletes", nodes), |b| {
            let f = common::fixture(nodes);
            let pods: Vec<Pod> = new_pods(nodes).into_iter().take(PUBLISHED).collect();
            let keys: Vec<(String, String)> =
                pods.iter().map(|p| (p.metadata.namespace.clone(), p.metadata.name.clone())).collect();
            b.iter_batched(
                || pods.clone(),
                |pods| {
                    let mut published = std::sync::Arc::clone(&f.snapshot);
                    for pod in pods {
                        let mut next = (*published).clone();
                        next.upsert_pod(pod);
                        published = std::sync::Arc::new(next);
                    }
                    for key in &keys {
                        let mut next = (*published).clone();
                        next.remove_pod(key);
                        published = std::sync::Arc::new(next);
                    }
                    published
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

/// Events of the published variant: each is its own published snapshot.
const PUBLISHED: usize = 500;

criterion_group!(benches, bench_events);
criterion_main!(benches);
