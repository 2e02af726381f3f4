//! The kinds the live source watches: the engine's [`ModelKind`]s that kube can list and watch, and
//! the lean Node and Pod decoded straight into the model's types.

use std::fmt::Debug;

use kube::Resource;
use predicate_engine::cluster::source::kinds::ModelKind;
use predicate_engine::cluster::{ClusterObject, ObjectKind};
use serde::de::DeserializeOwned;

use crate::source::kube::lean::{LeanNode, LeanPod};

/// A resource the live source lists and watches: one kube can list and watch, which the model
/// keeps (the engine's [`ModelKind`]).
pub trait WatchedKind:
    Resource<DynamicType = ()> + ModelKind + Clone + DeserializeOwned + Debug + Send + 'static
{
}

impl<K> WatchedKind for K where
    K: Resource<DynamicType = ()> + ModelKind + Clone + DeserializeOwned + Debug + Send + 'static
{
}

impl ModelKind for LeanPod {
    const KIND: ObjectKind = ObjectKind::Pod;
    fn into_object(self) -> ClusterObject {
        ClusterObject::Pod(self.object)
    }
}

impl ModelKind for LeanNode {
    const KIND: ObjectKind = ObjectKind::Node;
    fn into_object(self) -> ClusterObject {
        ClusterObject::Node(self.object)
    }
}
