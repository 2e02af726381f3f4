//! What each of the in-process plugin's calls costs inside the engine (docs/in-process.md, "Where
//! the boundary is"), on a model of 5,000 nodes and 3,000 pods fed as the informers feed it (JSON):
//! an informer's pod upsert, a cycle's start (the pod from the model by key), Filter of one node,
//! the scores of 500 feasible nodes, Reserve. The C ABI's shims add a few string checks to each.
//!
//! `cargo bench -p predicate-engine-ffi --bench in_process` (ids `in_process/<call>`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark of generated input: a panic is its error report

use criterion::{criterion_group, criterion_main, Criterion};
use predicate_engine::cluster::ObjectKind;
use predicate_engine_ffi::engine::InProcess;

const NODES: usize = 5_000;
const PODS: usize = 3_000;

fn node(i: usize) -> String {
    format!(
        r#"{{"metadata":{{"name":"node-{i}","resourceVersion":"1","labels":{{"topology.kubernetes.io/zone":"z{}","kubernetes.io/hostname":"node-{i}"}}}},
  "status":{{"allocatable":{{"cpu":"4","memory":"32Gi","pods":"110"}},"conditions":[{{"type":"Ready","status":"True"}}]}}}}"#,
        i % 3
    )
}

fn pod(i: usize, node: &str) -> String {
    format!(
        r#"{{"metadata":{{"name":"p-{i}","namespace":"default","uid":"u{i}","resourceVersion":"1","labels":{{"app":"x"}}}},
  "spec":{{"nodeName":"{node}","containers":[{{"name":"c","image":"i","resources":{{"requests":{{"cpu":"100m","memory":"500Mi"}}}}}}]}}}}"#
    )
}

fn model() -> InProcess {
    let engine = InProcess::new(br#"{"schedulerVersion":"v1.37.2"}"#).unwrap();
    for i in 0..NODES {
        engine.upsert(ObjectKind::Node, node(i).as_bytes()).unwrap();
    }
    for i in 0..PODS {
        engine.upsert(ObjectKind::Pod, pod(i, &format!("node-{}", i % NODES)).as_bytes()).unwrap();
    }
    engine.upsert(ObjectKind::Pod, pod(PODS, "").as_bytes()).unwrap();
    engine
}

fn bench(c: &mut Criterion) {
    let engine = model();
    let pending = format!("p-{PODS}");
    let mut group = c.benchmark_group("in_process");
    let mut i = 0;
    group.bench_function("upsert_pod", |b| {
        b.iter(|| {
            i += 1;
            engine.upsert(ObjectKind::Pod, pod(PODS + 1 + i % 1000, "").as_bytes()).unwrap();
        })
    });
    group.bench_function("cycle", |b| b.iter(|| engine.cycle("default", &pending, "1", None).unwrap()));
    let cycle = engine.cycle("default", &pending, "1", None).unwrap();
    let names: Vec<String> = (0..NODES).map(|i| format!("node-{i}")).collect();
    let mut n = 0;
    group.bench_function("filter_one_node", |b| {
        b.iter(|| {
            n = (n + 1) % NODES;
            cycle.filter(&names[n])
        })
    });
    let feasible: Vec<&str> = names.iter().take(500).map(String::as_str).collect();
    group.bench_function("scores_500_nodes", |b| b.iter(|| cycle.scores(&engine, &feasible)));
    group.bench_function("reserve", |b| b.iter(|| engine.reserve(&cycle, "node-7")));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
