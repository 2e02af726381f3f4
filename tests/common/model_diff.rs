//! The cluster model compared object by object with the API server's truth: the keys of every
//! watched kind, every node and pod as the model keeps it (the lean decode), each node's pods and
//! the sum of their requests (kept incrementally by the model, computed afresh for the truth), and
//! the pods nominated to each node.

use std::collections::BTreeSet;

use k8s_openapi::api::apps::v1::{ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{Namespace, PersistentVolume, PersistentVolumeClaim, ReplicationController, Service};
use k8s_openapi::api::storage::v1::{CSINode, StorageClass};
use predicate_engine::cluster::{ClusterObject, ObjectKind, Snapshot};
use predicate_extender::source::kube::kinds::WatchedKind;
use predicate_extender::source::kube::lean::{LeanNode, LeanPod};
use predicate_extender::source::kube::WATCHED_KINDS;
use serde_json::Value;

fn decode<K: WatchedKind>(values: Vec<Value>) -> Vec<ClusterObject> {
    values
        .into_iter()
        .map(|v| {
            let object: K = serde_json::from_value(v).unwrap_or_else(|e| panic!("{:?}: undecodable: {e}", K::KIND));
            object.into_object()
        })
        .collect()
}

/// The model the truth makes: each kind's objects (as `list(kind name)` gives them) decoded as the
/// watches decode them.
pub fn truth_snapshot(list: impl Fn(&str) -> Vec<Value>) -> Snapshot {
    let mut snapshot = Snapshot::default();
    for kind in WATCHED_KINDS {
        let values = list(kind.kind_name());
        let objects = match kind {
            ObjectKind::Node => decode::<LeanNode>(values),
            ObjectKind::Pod => decode::<LeanPod>(values),
            ObjectKind::Namespace => decode::<Namespace>(values),
            ObjectKind::Service => decode::<Service>(values),
            ObjectKind::PersistentVolume => decode::<PersistentVolume>(values),
            ObjectKind::PersistentVolumeClaim => decode::<PersistentVolumeClaim>(values),
            ObjectKind::StorageClass => decode::<StorageClass>(values),
            ObjectKind::CSINode => decode::<CSINode>(values),
            ObjectKind::ReplicaSet => decode::<ReplicaSet>(values),
            ObjectKind::ReplicationController => decode::<ReplicationController>(values),
            ObjectKind::StatefulSet => decode::<StatefulSet>(values),
        };
        snapshot.replace(kind, objects);
    }
    snapshot
}

/// Where `model` differs from `truth` (empty when they are equal), at most `limit` lines.
pub fn differences(model: &Snapshot, truth: &Snapshot, limit: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut note = |line: String| {
        if out.len() < limit {
            out.push(line);
        }
    };
    for kind in WATCHED_KINDS {
        let have: BTreeSet<_> = model.keys(kind).into_iter().collect();
        let want: BTreeSet<_> = truth.keys(kind).into_iter().collect();
        for key in want.difference(&have) {
            note(format!("{kind:?} {key:?}: missing from the model"));
        }
        for key in have.difference(&want) {
            note(format!("{kind:?} {key:?}: in the model, not in the API server"));
        }
    }
    for (namespace, name) in truth.keys(ObjectKind::Pod) {
        let (Some(have), Some(want)) = (model.pod(&namespace, &name), truth.pod(&namespace, &name)) else { continue };
        if format!("{:?}", have.pod) != format!("{:?}", want.pod) {
            note(format!("pod {namespace}/{name}: model {:?}\n  API server {:?}", have.pod, want.pod));
        }
    }
    let names: BTreeSet<String> = truth.node_names().into_iter().map(str::to_string).collect();
    for name in &names {
        let (Some(have), Some(want)) = (model.node_info(name), truth.node_info(name)) else { continue };
        if format!("{:?}", have.node()) != format!("{:?}", want.node()) {
            note(format!("node {name}: model {:?}\n  API server {:?}", have.node(), want.node()));
        }
        let pods = |info: &predicate_engine::cluster::NodeInfo| -> BTreeSet<String> {
            info.pods.pods().iter().map(|p| p.pod.key()).collect()
        };
        if pods(&have) != pods(&want) {
            note(format!("node {name}: pods {:?} in the model, {:?} in the API server", pods(&have), pods(&want)));
        }
        if format!("{:?}", have.pods.requested()) != format!("{:?}", want.pods.requested()) {
            note(format!(
                "node {name}: requests {:?} in the model, {:?} in the API server",
                have.pods.requested(),
                want.pods.requested()
            ));
        }
        let nominated =
            |s: &Snapshot| -> BTreeSet<String> { s.nominated_on(name).iter().map(|p| p.pod.key()).collect() };
        if nominated(model) != nominated(truth) {
            note(format!(
                "node {name}: nominated {:?} in the model, {:?} in the API server",
                nominated(model),
                nominated(truth)
            ));
        }
    }
    out
}
