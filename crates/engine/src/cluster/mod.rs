//! The cluster model: nodes with the pods on them and their sums, the nominated pods, and immutable
//! snapshots that requests read while changes build the next one.

pub mod host_ports;
pub mod intern;
pub mod label_index;
pub mod labels;
#[cfg(test)]
mod model_props;
pub mod model_writer;
pub mod node_counts;
pub mod node_images;
pub mod node_info;
pub mod node_zone;
pub mod objects;
pub mod pod_ident;
pub mod pod_requests;
pub mod pod_terms;
pub mod resource_list;
pub mod resources;
pub mod scheduler_version;
pub mod shared_list;
pub mod snapshot;
pub mod source;
pub mod store;
pub mod topology_labels;
pub mod volumes;

pub use intern::IStr;
pub use labels::Labels;
pub use node_info::{ConditionFailure, NodeConditions, NodeInfo, NodePods, NodeState, PodInfo};
pub use scheduler_version::SchedulerVersion;
pub use snapshot::Snapshot;
pub use store::ClusterStore;

use k8s_openapi::api::apps::v1::{ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{Namespace, PersistentVolume, PersistentVolumeClaim, ReplicationController, Service};
use k8s_openapi::api::storage::v1::{CSINode, StorageClass};

/// Any object the cluster model keeps. The k8s-openapi types are boxed: some are kilobytes, and
/// every pod event would otherwise move an enum of that size. Nodes and pods, the hot ones, are
/// kept inline: boxing them would cost an allocation per event to save a few hundred bytes.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)]
pub enum ClusterObject {
    Node(objects::Node),
    Pod(objects::Pod),
    Namespace(Box<Namespace>),
    Service(Box<Service>),
    PersistentVolume(Box<PersistentVolume>),
    PersistentVolumeClaim(Box<PersistentVolumeClaim>),
    StorageClass(Box<StorageClass>),
    CSINode(Box<CSINode>),
    ReplicaSet(Box<ReplicaSet>),
    ReplicationController(Box<ReplicationController>),
    StatefulSet(Box<StatefulSet>),
}

/// The kinds of object the cluster model keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ObjectKind {
    Node,
    Pod,
    Namespace,
    Service,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    CSINode,
    ReplicaSet,
    ReplicationController,
    StatefulSet,
}

impl ObjectKind {
    /// Every kind, in declaration order.
    pub const ALL: [ObjectKind; 11] = [
        ObjectKind::Node,
        ObjectKind::Pod,
        ObjectKind::Namespace,
        ObjectKind::Service,
        ObjectKind::PersistentVolume,
        ObjectKind::PersistentVolumeClaim,
        ObjectKind::StorageClass,
        ObjectKind::CSINode,
        ObjectKind::ReplicaSet,
        ObjectKind::ReplicationController,
        ObjectKind::StatefulSet,
    ];

    /// The object's `kind`, as a manifest spells it.
    pub fn kind_name(self) -> &'static str {
        match self {
            ObjectKind::Node => "Node",
            ObjectKind::Pod => "Pod",
            ObjectKind::Namespace => "Namespace",
            ObjectKind::Service => "Service",
            ObjectKind::PersistentVolume => "PersistentVolume",
            ObjectKind::PersistentVolumeClaim => "PersistentVolumeClaim",
            ObjectKind::StorageClass => "StorageClass",
            ObjectKind::CSINode => "CSINode",
            ObjectKind::ReplicaSet => "ReplicaSet",
            ObjectKind::ReplicationController => "ReplicationController",
            ObjectKind::StatefulSet => "StatefulSet",
        }
    }

    /// The resource name, as RBAC rules and `kubectl get` spell it.
    pub fn resource(self) -> &'static str {
        match self {
            ObjectKind::Node => "nodes",
            ObjectKind::Pod => "pods",
            ObjectKind::Namespace => "namespaces",
            ObjectKind::Service => "services",
            ObjectKind::PersistentVolume => "persistentvolumes",
            ObjectKind::PersistentVolumeClaim => "persistentvolumeclaims",
            ObjectKind::StorageClass => "storageclasses.storage.k8s.io",
            ObjectKind::CSINode => "csinodes.storage.k8s.io",
            ObjectKind::ReplicaSet => "replicasets.apps",
            ObjectKind::ReplicationController => "replicationcontrollers",
            ObjectKind::StatefulSet => "statefulsets.apps",
        }
    }
}

/// `(namespace, name)` of an object; the namespace is empty for cluster-scoped kinds.
pub type ObjectKey = (String, String);

impl ClusterObject {
    pub fn kind(&self) -> ObjectKind {
        match self {
            ClusterObject::Node(_) => ObjectKind::Node,
            ClusterObject::Pod(_) => ObjectKind::Pod,
            ClusterObject::Namespace(_) => ObjectKind::Namespace,
            ClusterObject::Service(_) => ObjectKind::Service,
            ClusterObject::PersistentVolume(_) => ObjectKind::PersistentVolume,
            ClusterObject::PersistentVolumeClaim(_) => ObjectKind::PersistentVolumeClaim,
            ClusterObject::StorageClass(_) => ObjectKind::StorageClass,
            ClusterObject::CSINode(_) => ObjectKind::CSINode,
            ClusterObject::ReplicaSet(_) => ObjectKind::ReplicaSet,
            ClusterObject::ReplicationController(_) => ObjectKind::ReplicationController,
            ClusterObject::StatefulSet(_) => ObjectKind::StatefulSet,
        }
    }

    /// Its `(namespace, name)`.
    pub fn key(&self) -> ObjectKey {
        let meta = |m: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta| {
            (m.namespace.clone().unwrap_or_default(), m.name.clone().unwrap_or_default())
        };
        match self {
            ClusterObject::Node(n) => (String::new(), n.metadata.name.clone()),
            ClusterObject::Pod(p) => (p.metadata.namespace.clone(), p.metadata.name.clone()),
            ClusterObject::Namespace(o) => meta(&o.metadata),
            ClusterObject::Service(o) => meta(&o.metadata),
            ClusterObject::PersistentVolume(o) => meta(&o.metadata),
            ClusterObject::PersistentVolumeClaim(o) => meta(&o.metadata),
            ClusterObject::StorageClass(o) => meta(&o.metadata),
            ClusterObject::CSINode(o) => meta(&o.metadata),
            ClusterObject::ReplicaSet(o) => meta(&o.metadata),
            ClusterObject::ReplicationController(o) => meta(&o.metadata),
            ClusterObject::StatefulSet(o) => meta(&o.metadata),
        }
    }
}
