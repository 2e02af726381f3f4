//! The cluster model: nodes with the pods on them and their sums, the nominated pods, and immutable
//! snapshots that requests read while changes build the next one.

pub mod host_ports;
pub mod label_index;
pub mod node_info;
pub mod objects;
pub mod resources;
pub mod snapshot;
pub mod source;
pub mod store;
pub mod volumes;

pub use node_info::{NodeConditions, NodeInfo, NodePods, NodeState, PodInfo};
pub use snapshot::Snapshot;
pub use store::ClusterStore;

use k8s_openapi::api::apps::v1::{ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{Namespace, PersistentVolume, PersistentVolumeClaim, ReplicationController, Service};
use k8s_openapi::api::storage::v1::{CSINode, StorageClass};

/// Any object the cluster model keeps. Moved once, from a source into the snapshot, so the size
/// difference of the variants costs nothing worth a box.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)]
pub enum ClusterObject {
    Node(objects::Node),
    Pod(objects::Pod),
    Namespace(Namespace),
    Service(Service),
    PersistentVolume(PersistentVolume),
    PersistentVolumeClaim(PersistentVolumeClaim),
    StorageClass(StorageClass),
    CSINode(CSINode),
    ReplicaSet(ReplicaSet),
    ReplicationController(ReplicationController),
    StatefulSet(StatefulSet),
}
