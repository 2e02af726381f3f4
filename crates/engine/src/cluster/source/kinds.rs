//! The kinds of objects the model keeps besides nodes and pods, each reduced to what the engine
//! reads: the parts no predicate or priority reads are stripped before they are stored. The file
//! source and the live source (the extender's watches) both store objects through it.

use k8s_openapi::api::apps::v1::{ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{Namespace, PersistentVolume, PersistentVolumeClaim, ReplicationController, Service};
use k8s_openapi::api::storage::v1::{CSINode, StorageClass};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::cluster::{ClusterObject, ObjectKind};

/// An object the model keeps: its kind, and the object as the model keeps it.
pub trait ModelKind: Sized {
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

impl ModelKind for Namespace {
    const KIND: ObjectKind = ObjectKind::Namespace;
    /// namespaceSelector reads the labels only.
    fn into_object(mut self) -> ClusterObject {
        strip_meta(&mut self.metadata, false);
        self.spec = None;
        self.status = None;
        ClusterObject::Namespace(Box::new(self))
    }
}

impl ModelKind for Service {
    const KIND: ObjectKind = ObjectKind::Service;
    fn into_object(mut self) -> ClusterObject {
        strip_meta(&mut self.metadata, false);
        self.status = None;
        ClusterObject::Service(Box::new(self))
    }
}

/// The volume predicates read annotations (storage class, selected node) and status phases.
impl ModelKind for PersistentVolume {
    const KIND: ObjectKind = ObjectKind::PersistentVolume;
    fn into_object(mut self) -> ClusterObject {
        strip_meta(&mut self.metadata, true);
        ClusterObject::PersistentVolume(Box::new(self))
    }
}

impl ModelKind for PersistentVolumeClaim {
    const KIND: ObjectKind = ObjectKind::PersistentVolumeClaim;
    fn into_object(mut self) -> ClusterObject {
        strip_meta(&mut self.metadata, true);
        ClusterObject::PersistentVolumeClaim(Box::new(self))
    }
}

impl ModelKind for StorageClass {
    const KIND: ObjectKind = ObjectKind::StorageClass;
    fn into_object(mut self) -> ClusterObject {
        strip_meta(&mut self.metadata, true);
        ClusterObject::StorageClass(Box::new(self))
    }
}

impl ModelKind for CSINode {
    const KIND: ObjectKind = ObjectKind::CSINode;
    fn into_object(mut self) -> ClusterObject {
        strip_meta(&mut self.metadata, true);
        ClusterObject::CSINode(Box::new(self))
    }
}

/// The spreading priorities read a controller's selector only: the pod template, often the
/// largest part, goes.
impl ModelKind for ReplicaSet {
    const KIND: ObjectKind = ObjectKind::ReplicaSet;
    fn into_object(mut self) -> ClusterObject {
        strip_meta(&mut self.metadata, false);
        self.spec.template = None;
        self.status = None;
        ClusterObject::ReplicaSet(Box::new(self))
    }
}

impl ModelKind for ReplicationController {
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

impl ModelKind for StatefulSet {
    const KIND: ObjectKind = ObjectKind::StatefulSet;
    fn into_object(mut self) -> ClusterObject {
        strip_meta(&mut self.metadata, false);
        self.spec.template = Default::default();
        self.spec.volume_claim_templates = None;
        self.status = None;
        ClusterObject::StatefulSet(Box::new(self))
    }
}
