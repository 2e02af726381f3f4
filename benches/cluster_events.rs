//! Applying pod events to the cluster model: 10,000 pods added to (and then deleted from) a
//! snapshot of 5,000 nodes x 20 pods, each event keeping node sums, the nominated pods and the
//! label indexes in step. Divide the time by 20,000 for the cost of one event.
//!
//! `cargo bench --bench cluster_events`

use criterion::{criterion_group, criterion_main, Criterion};
use predicate_extender::cluster::Snapshot;
use predicate_extender::testing::generate::{app_pod, generate, node_name, ClusterSpec, Rng};

fn bench_events(c: &mut Criterion) {
    let spec = ClusterSpec { nodes: 5000, pods_per_node: 20, ..Default::default() };
    let (nodes, pods) = generate(&spec);
    let base = Snapshot::build(nodes, pods);
    let mut rng = Rng::new(11);
    let new_pods: Vec<_> = (0..10_000)
        .map(|i| {
            let node = node_name(rng.below(spec.nodes as u64) as usize);
            let app = format!("app-{}", rng.below(40));
            let anti = rng.percent(10);
            app_pod(&mut rng, &format!("new-{i}"), &app, &node, anti)
        })
        .collect();
    let keys: Vec<(String, String)> =
        new_pods.iter().map(|p| (p.metadata.namespace.clone(), p.metadata.name.clone())).collect();

    let mut group = c.benchmark_group("cluster_events_5000_nodes");
    group.sample_size(10);
    group.bench_function("10000_pod_adds_then_10000_deletes", |b| {
        b.iter(|| {
            let mut s = base.clone();
            for p in &new_pods {
                s.upsert_pod(p.clone());
            }
            for k in &keys {
                s.remove_pod(k);
            }
            std::hint::black_box(s.pod_count())
        })
    });
    group.finish();
}

criterion_group!(benches, bench_events);
criterion_main!(benches);
