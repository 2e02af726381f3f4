//! `/filter` and `/prioritize` on the clusters the throughput harness builds
//! (`e2e/throughput.sh`, docs/throughput.md), as the extender sees them at the end of a run: the
//! workloads whose extender time stood out there.
//!
//! `cargo bench --bench throughput_workloads` (ids `throughput/<workload>_<verb>/N`):
//! - `anti_affinity`: 5,000 nodes, 3,000 placed pods (1,000 initial and 2,000 measured), each on a
//!   node of its own with a required anti-affinity to every other per hostname, and one more such
//!   pod to place; the 500 names kube-scheduler's adaptive `percentageOfNodesToScore` sends.
//! - `spread`: 5,000 nodes, 3,000 placed pods spread over the three zones, one more to place; 500
//!   names.
//! - `volumes`: 500 nodes, 200 placed pods with bound claims and 400 more volumes available, one
//!   pod to place whose claim is unbound (`WaitForFirstConsumer`); 250 names.
//!
//! The pods, nodes and volumes are the harness's own templates (crates/testing/src/kube_cluster/workloads.rs).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark of generated input: a panic is its error report

mod common;

use predicate_extender_testing::kube_cluster::workloads;

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use k8s_openapi::api::core::v1::{ObjectReference, PersistentVolumeStatus};
use predicate_engine::cluster::objects::{Node, Object, Pod};
use predicate_engine::cluster::{ClusterObject, Snapshot};
use predicate_engine::engine::{CancelFlag, Candidate, RequestJob};
use predicate_engine::policy::Plan;
use serde::de::DeserializeOwned;
use serde::Serialize;
use workloads::{Phase, Workload};

fn convert<T: DeserializeOwned + Default>(value: &impl Serialize) -> T {
    serde_json::from_value::<Object<T>>(serde_json::to_value(value).expect("encodes")).expect("decodes").0
}

/// The cluster at the end of a run: `placed` pods bound one to a node (the first `placed` nodes,
/// as anti-affinity forces and as good as any placement for the others), and the pod to place.
struct Shape {
    snapshot: Arc<Snapshot>,
    pod: Pod,
    names: Vec<String>,
}

fn shape(workload: Workload, nodes: usize, placed: usize, volumes: usize, candidates: usize) -> Shape {
    let node_objects: Vec<Node> = (0..nodes).map(|i| convert(&workload.node(i))).collect();
    let names: Vec<String> = node_objects.iter().map(|n| n.metadata.name.to_string()).collect();
    let mut snapshot = Snapshot::build(node_objects, []);
    for object in workload.setup() {
        snapshot.upsert(ClusterObject::StorageClass(Box::new(serde_json::from_value(object).expect("a class"))));
    }
    for i in 0..volumes.max(placed + 1) {
        let name = format!("pod-{i}");
        if let Some((mut pv, mut pvc)) = workload.volume("measured", &name, i) {
            // The phase the PV controller gives a volume, which the binder's matching reads.
            let phase = if i < placed { "Bound" } else { "Available" };
            pv.status = Some(PersistentVolumeStatus { phase: Some(phase.into()), ..Default::default() });
            if i < placed {
                // Bound as the PV binder leaves them once the pod is placed.
                pvc.spec.get_or_insert_with(Default::default).volume_name = pv.metadata.name.clone();
                pv.spec.get_or_insert_with(Default::default).claim_ref = Some(ObjectReference {
                    namespace: Some("measured".into()),
                    name: Some(name.clone()),
                    ..Default::default()
                });
            }
            snapshot.upsert(ClusterObject::PersistentVolume(Box::new(pv)));
            snapshot.upsert(ClusterObject::PersistentVolumeClaim(Box::new(pvc)));
        }
    }
    for i in 0..placed {
        let mut pod: Pod = convert(&workload.pod(Phase::Initial, "measured", &format!("pod-{i}")));
        pod.spec.node_name = names[i % nodes].as_str().into();
        snapshot.upsert_pod(pod);
    }
    let pod = convert(&workload.pod(Phase::Measured, "measured", &format!("pod-{placed}")));
    // Candidates from across the cluster, as kube-scheduler's rotating start index gives them.
    let step = (nodes / candidates).max(1);
    let names = names.into_iter().step_by(step).take(candidates).collect();
    Shape { snapshot: Arc::new(snapshot), pod, names }
}

impl Shape {
    fn job(&self, plan: &Arc<Plan>) -> RequestJob {
        RequestJob {
            plan: Arc::clone(plan),
            pod: self.pod.clone(),
            snapshot: Arc::clone(&self.snapshot),
            candidates: self.names.iter().map(|n| Candidate::by_name(&self.snapshot, n.clone())).collect(),
            from_request_nodes: false,
            cancel: CancelFlag::new(),
            timed: false.into(),
        }
    }
}

fn bench_workloads(c: &mut Criterion) {
    let plan = Arc::new(Plan::default_plan());
    let mut group = c.benchmark_group("throughput");
    for (label, workload, nodes, placed, volumes, candidates) in [
        ("anti_affinity", Workload::AntiAffinity, 5000, 3000, 0, 500),
        ("spread", Workload::Spread, 5000, 3000, 0, 500),
        ("volumes", Workload::Volumes, 500, 200, 600, 250),
    ] {
        let shape = shape(workload, nodes, placed, volumes, candidates);
        let fit = shape.job(&plan).filter(common::evaluator()).expect("not cancelled");
        eprintln!(
            "{label}: {} candidates, {} fit; the first verdict {:?}",
            shape.names.len(),
            fit.verdicts.iter().filter(|v| v.fits()).count(),
            fit.verdicts.first()
        );
        common::configure(&mut group, nodes);
        group.bench_function(BenchmarkId::new(format!("{label}_filter"), nodes), |b| {
            b.iter(|| {
                let filtered = shape.job(&plan).filter(common::evaluator()).expect("not cancelled");
                std::hint::black_box(filtered.verdicts.len())
            })
        });
        group.bench_function(BenchmarkId::new(format!("{label}_prioritize"), nodes), |b| {
            b.iter(|| {
                let scores = shape.job(&plan).prioritize(common::evaluator()).expect("not cancelled");
                std::hint::black_box(scores.len())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_workloads);
criterion_main!(benches);
