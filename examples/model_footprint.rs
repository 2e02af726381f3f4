//! What the live cluster model costs: the memory it holds for a cluster delivered by the watches,
//! and the time to apply pod events to it.
//!
//! `cargo run --release --example model_footprint -- [NODES] [PODS_PER_NODE]` (default 5000 20)
//!
//! Every node and pod is generated as the API server sends it (`gen_cluster::api_objects`: managedFields,
//! status, probes, 20-40 images per node), serialised, and decoded exactly as the watch decodes it
//! (`LeanNode`, `LeanPod`), then listed into the model through `ModelWriter::replace`. A counting
//! allocator reports the bytes held once the JSON is gone. Then 10,000 pod events (adds of new
//! pods, then their deletes) are applied one per snapshot, as a watch delivering them one at a time
//! would, and 100 per snapshot, as the watch applies events that arrive together; the median of 5
//! rounds is printed.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a measuring tool of generated input: a panic is its error report
#![allow(unsafe_code)] // the counting allocator below (GlobalAlloc is an unsafe trait)

mod common;

use clap::Parser;
use common::ClusterSize;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use gen_cluster::api_objects;
use gen_cluster::generate::{node_name, Rng};
use predicate_engine::cluster::model_writer::{Change, ModelWriter};
use predicate_engine::cluster::source::kinds::ModelKind as _;
use predicate_engine::cluster::{ClusterObject, ClusterStore, ObjectKind, Snapshot};
use predicate_extender::source::kube::kinds::WatchedKind;
use predicate_extender::source::kube::lean::{LeanNode, LeanPod};

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: forwards to the system allocator and only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size as isize - layout.size() as isize, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn live() -> isize {
    LIVE.load(Ordering::Relaxed)
}

fn rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .unwrap_or(0.0);
    kib / 1024.0
}

fn decode<K: WatchedKind>(value: &serde_json::Value) -> (K, usize) {
    let bytes = serde_json::to_vec(value).expect("serialise");
    let object: K = serde_json::from_slice(&bytes).expect("decode");
    (object, bytes.len())
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    xs[xs.len() / 2]
}

/// What the live cluster model costs on a generated cluster: the memory it holds, the time per pod event.
#[derive(Debug, Parser)]
struct Args {
    #[command(flatten)]
    size: ClusterSize,
}

fn main() {
    let spec = Args::parse().size.spec();
    let before = live();
    let store = Arc::new(ClusterStore::new(Snapshot::default()));
    let writer = ModelWriter::new(Arc::clone(&store));

    let mut rng = Rng::new(spec.seed);
    let (mut nodes, mut pods) = (Vec::new(), Vec::new());
    let (mut node_json_bytes, mut pod_json_bytes) = (0usize, 0usize);
    for i in 0..spec.nodes {
        let (node, n) = decode::<LeanNode>(&api_objects::node(&spec, &mut rng, i));
        node_json_bytes += n;
        nodes.push(node.into_object());
        for j in 0..spec.pods_per_node {
            let (pod, n) =
                decode::<LeanPod>(&api_objects::pod(&spec, &mut rng, &format!("pod-{i}-{j}"), &node_name(i)));
            pod_json_bytes += n;
            pods.push(pod.into_object());
        }
    }
    let pod_count = pods.len();
    if std::env::var_os("FOOTPRINT_DETAIL").is_some() {
        println!("decoded objects before the model: {:.1} MiB", (live() - before) as f64 / (1 << 20) as f64);
    }
    let started = Instant::now();
    writer.replace(ObjectKind::Node, nodes);
    writer.replace(ObjectKind::Pod, pods);
    let list_seconds = started.elapsed().as_secs_f64();
    let held = (live() - before) as f64;
    let snapshot = store.snapshot();
    assert_eq!(snapshot.pod_count(), pod_count);
    drop(snapshot);

    println!("cluster: {} nodes, {} pods", spec.nodes, pod_count);
    println!(
        "as JSON from the API server: {:.0} MiB (node {:.1} KB, pod {:.1} KB on average)",
        (node_json_bytes + pod_json_bytes) as f64 / (1 << 20) as f64,
        node_json_bytes as f64 / spec.nodes.max(1) as f64 / 1000.0,
        pod_json_bytes as f64 / pod_count.max(1) as f64 / 1000.0
    );
    println!(
        "model held: {:.1} MiB ({:.2} KiB per pod, nodes included); process RSS {:.0} MiB",
        held / (1 << 20) as f64,
        held / pod_count.max(1) as f64 / 1024.0,
        rss_mib()
    );
    println!("listing it into the model (replace nodes, replace pods): {:.2} s", list_seconds);

    // 10,000 new pods on random nodes, decoded as the watch would.
    let events = 10_000;
    let mut rng = Rng::new(99);
    let new_pods: Vec<ClusterObject> = (0..events)
        .map(|k| {
            let node = node_name(rng.below(spec.nodes as u64) as usize);
            let (pod, _) = decode::<LeanPod>(&api_objects::pod(&spec, &mut rng, &format!("new-{k}"), &node));
            pod.into_object()
        })
        .collect();
    let keys: Vec<(String, String)> = new_pods.iter().map(ClusterObject::key).collect();
    let (mut adds, mut deletes) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let batch: Vec<ClusterObject> = new_pods.clone();
        let t = Instant::now();
        for pod in batch {
            writer.apply(vec![Change::Upsert(pod)]);
        }
        adds.push(t.elapsed().as_secs_f64() * 1e6 / events as f64);
        let t = Instant::now();
        for key in &keys {
            writer.apply(vec![Change::Delete(ObjectKind::Pod, key.clone())]);
        }
        deletes.push(t.elapsed().as_secs_f64() * 1e6 / events as f64);
    }
    assert_eq!(store.snapshot().pod_count(), pod_count);
    println!(
        "pod events, one snapshot each (median of 5 rounds of {events}): add {:.1} us/event, delete {:.1} us/event",
        median(adds),
        median(deletes)
    );

    // The same events as a watch under load delivers them: whatever has arrived, here 100 at a
    // time, applied as one snapshot.
    let (mut adds, mut deletes) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let mut batch: Vec<Change> = new_pods.iter().cloned().map(Change::Upsert).collect();
        let t = Instant::now();
        while !batch.is_empty() {
            let hundred = batch.split_off(batch.len().saturating_sub(100));
            writer.apply(hundred);
        }
        adds.push(t.elapsed().as_secs_f64() * 1e6 / events as f64);
        let mut batch: Vec<Change> = keys.iter().map(|k| Change::Delete(ObjectKind::Pod, k.clone())).collect();
        let t = Instant::now();
        while !batch.is_empty() {
            let hundred = batch.split_off(batch.len().saturating_sub(100));
            writer.apply(hundred);
        }
        deletes.push(t.elapsed().as_secs_f64() * 1e6 / events as f64);
    }
    assert_eq!(store.snapshot().pod_count(), pod_count);
    println!(
        "pod events, 100 per snapshot (median of 5 rounds of {events}): add {:.1} us/event, delete {:.1} us/event",
        median(adds),
        median(deletes)
    );
}
