//! Nodes and Pods straight off the watch into the model's lean types.
//!
//! kube's list and watch decode into any type that says which resource it is (`kube::Resource`).
//! [`Lean`] is that type for the lean `Node` and `Pod`: it borrows the resource's identity (path,
//! kind, version) from the k8s-openapi type and decodes the body into the lean type, so the fields
//! the engine never reads (managedFields, env, probes, most of status) are skipped while parsing
//! instead of being built and dropped. It keeps the identity kube needs (name, namespace, uid,
//! resourceVersion) beside it.

use std::borrow::Cow;
use std::marker::PhantomData;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use serde::{Deserialize, Deserializer};

use predicate_engine::cluster::objects;

/// The identity of a lean object, as kube reads it: namespace, name, uid and resourceVersion. The
/// model keeps the resourceVersion too: a relist leaves the objects whose version it already has
/// as they are.
pub trait LeanObject: Sized {
    fn identity(&self) -> (&str, &str, &str, &str);
}

impl LeanObject for objects::Pod {
    fn identity(&self) -> (&str, &str, &str, &str) {
        let m = &self.metadata;
        (&m.namespace, &m.name, &m.uid, &m.resource_version)
    }
}

impl LeanObject for objects::Node {
    fn identity(&self) -> (&str, &str, &str, &str) {
        let m = &self.metadata;
        ("", &m.name, &m.uid, &m.resource_version)
    }
}

/// A lean object `L` standing for the API resource `K`.
pub struct Lean<K, L> {
    pub object: L,
    meta: ObjectMeta,
    _resource: PhantomData<fn() -> K>,
}

impl<K, L: std::fmt::Debug> std::fmt::Debug for Lean<K, L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.object.fmt(f)
    }
}

impl<K, L: Clone> Clone for Lean<K, L> {
    fn clone(&self) -> Self {
        Lean { object: self.object.clone(), meta: self.meta.clone(), _resource: PhantomData }
    }
}

impl<'de, K, L> Deserialize<'de> for Lean<K, L>
where
    L: LeanObject + Deserialize<'de> + Default,
{
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let objects::Object(object) = objects::Object::<L>::deserialize(d)?;
        let (namespace, name, uid, resource_version) = object.identity();
        let meta = ObjectMeta {
            name: Some(name.to_string()),
            namespace: (!namespace.is_empty()).then(|| namespace.to_string()),
            uid: (!uid.is_empty()).then(|| uid.to_string()),
            resource_version: Some(resource_version.to_string()),
            ..ObjectMeta::default()
        };
        Ok(Lean { object, meta, _resource: PhantomData })
    }
}

impl<K, L> Resource for Lean<K, L>
where
    K: Resource<DynamicType = ()>,
{
    type DynamicType = ();
    type Scope = K::Scope;

    fn kind(dt: &()) -> Cow<'_, str> {
        K::kind(dt)
    }
    fn group(dt: &()) -> Cow<'_, str> {
        K::group(dt)
    }
    fn version(dt: &()) -> Cow<'_, str> {
        K::version(dt)
    }
    fn plural(dt: &()) -> Cow<'_, str> {
        K::plural(dt)
    }
    fn meta(&self) -> &ObjectMeta {
        &self.meta
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.meta
    }
}

/// A Pod as the model keeps it.
pub type LeanPod = Lean<k8s_openapi::api::core::v1::Pod, objects::Pod>;
/// A Node as the model keeps it.
pub type LeanNode = Lean<k8s_openapi::api::core::v1::Node, objects::Node>;

#[cfg(test)]
mod tests {
    use super::*;
    use kube::ResourceExt;

    #[test]
    fn a_pod_decodes_lean_with_its_identity_and_path() {
        let pod: LeanPod = serde_json::from_value(serde_json::json!({
            "kind": "Pod", "apiVersion": "v1",
            "metadata": {"name": "web-1", "namespace": "shop", "uid": "u-1", "resourceVersion": "42",
                         "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}]},
            "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "nginx",
                     "env": [{"name": "A", "value": "x"}],
                     "resources": {"requests": {"cpu": "250m"}}}]},
            "status": {"phase": "Running", "nominatedNodeName": ""}
        }))
        .unwrap();
        assert_eq!(pod.resource_version().as_deref(), Some("42"));
        assert_eq!(pod.name_any(), "web-1");
        assert_eq!(pod.namespace().as_deref(), Some("shop"));
        assert_eq!(pod.object.spec.node_name, "n1");
        assert_eq!(pod.object.metadata.resource_version, "42", "the model keeps it, for relists");
        assert_eq!(LeanPod::url_path(&(), None), "/api/v1/pods");
        assert!(!pod.object.is_terminating());
        let terminating: LeanPod = serde_json::from_value(serde_json::json!({
            "kind": "Pod", "apiVersion": "v1",
            "metadata": {"name": "web-2", "namespace": "shop", "deletionTimestamp": "2024-05-01T10:00:00Z"}
        }))
        .unwrap();
        assert!(terminating.object.is_terminating(), "the model keeps deletionTimestamp");
        assert_eq!(LeanNode::url_path(&(), None), "/api/v1/nodes");
    }
}
