//! The kinds the live source watches, each decoded into what the model keeps, with the parts the
//! engine never reads stripped before they are stored.

use std::fmt::Debug;

use k8s_openapi::api::apps::v1::{ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{Namespace, PersistentVolume, PersistentVolumeClaim, ReplicationController, Service};
use k8s_openapi::api::storage::v1::{CSINode, StorageClass};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use serde::de::DeserializeOwned;

use crate::cluster::source::kube::lean::{LeanNode, LeanPod};
use crate::cluster::{ClusterObject, ObjectKind};

/// A resource the live source lists and watches.
pub trait WatchedKind: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + 'static {
    const KIND: ObjectKind;
    /// The object as the model keeps it.
    fn into_object(self) -> ClusterObject;
}

/// Drops what no predicate or priority reads from an object's metadata.
fn strip_meta(meta: &mut ObjectMeta, keep_annotations: bool) {
    meta.managed_fields = None;
    meta.resource_version = None;
    if !keep_annotations {
        meta.annotations = None;
    }
}

impl WatchedKind for LeanPod {
    const KIND: ObjectKind = ObjectKind::Pod;
    fn into_object(self) -> ClusterObject {
        ClusterObject::Pod(self.object)
    }
}

impl WatchedKind for LeanNode {
    const KIND: ObjectKind = ObjectKind::Node;
    fn into_object(self) -> ClusterObject {
        ClusterObject::Node(self.object)
    }
}

impl WatchedKind for Namespace {
    const KIND: ObjectKind = ObjectKind::Namespace;
    /// namespaceSelector reads the labels only.
    fn into_object(mut self) -> ClusterObject {
        strip_meta(&mut self.metadata, false);
        self.spec = None;
        self.status = None;
        ClusterObject::Namespace(Box::new(self))
    }
}

impl WatchedKind for Service {
    const KIND: ObjectKind = ObjectKind::Service;
    fn into_object(mut self) -> ClusterObject {
        strip_meta(&mut self.metadata, false);
        self.status = None;
        ClusterObject::Service(Box::new(self))
    }
}

/// The volume predicates read annotations (storage class, selected node) and status phases.
impl WatchedKind for PersistentVolume {
    const KIND: ObjectKind = ObjectKind::PersistentVolume;
    fn into_object(mut self) -> ClusterObject {
        strip_meta(&mut self.metadata, true);
        ClusterObject::PersistentVolume(Box::new(self))
    }
}

impl WatchedKind for PersistentVolumeClaim {
    const KIND: ObjectKind = ObjectKind::PersistentVolumeClaim;
    fn into_object(mut self) -> ClusterObject {
        strip_meta(&mut self.metadata, true);
        ClusterObject::PersistentVolumeClaim(Box::new(self))
    }
}

impl WatchedKind for StorageClass {
    const KIND: ObjectKind = ObjectKind::StorageClass;
    fn into_object(mut self) -> ClusterObject {
        strip_meta(&mut self.metadata, true);
        ClusterObject::StorageClass(Box::new(self))
    }
}

impl WatchedKind for CSINode {
    const KIND: ObjectKind = ObjectKind::CSINode;
    fn into_object(mut self) -> ClusterObject {
        strip_meta(&mut self.metadata, true);
        ClusterObject::CSINode(Box::new(self))
    }
}

/// The spreading priorities read a controller's selector only: the pod template, often the
/// largest part, goes.
impl WatchedKind for ReplicaSet {
    const KIND: ObjectKind = ObjectKind::ReplicaSet;
    fn into_object(mut self) -> ClusterObject {
        strip_meta(&mut self.metadata, false);
        self.spec.template = None;
        self.status = None;
        ClusterObject::ReplicaSet(Box::new(self))
    }
}

impl WatchedKind for ReplicationController {
    const KIND: ObjectKind = ObjectKind::ReplicationController;
    fn into_object(mut self) -> ClusterObject {
        strip_meta(&mut self.metadata, false);
        if let Some(spec) = &mut self.spec {
            spec.template = None;
        }
        self.status = None;
        ClusterObject::ReplicationController(Box::new(self))
    }
}

impl WatchedKind for StatefulSet {
    const KIND: ObjectKind = ObjectKind::StatefulSet;
    fn into_object(mut self) -> ClusterObject {
        strip_meta(&mut self.metadata, false);
        self.spec.template = Default::default();
        self.spec.volume_claim_templates = None;
        self.status = None;
        ClusterObject::StatefulSet(Box::new(self))
    }
}
