//! Kubernetes objects for the end-to-end tests: applying the project's manifests, and nodes and
//! pods built as scheduler_perf builds them (a Node created with its status, which the API server
//! keeps on create; no kubelet ever reports).

use std::path::Path;

use kube::api::{DeleteParams, DynamicObject, PostParams};
use kube::core::GroupVersionKind;
use kube::discovery::{pinned_kind, Scope};
use kube::{Api, Client};
use serde_json::{json, Value};

/// Creates every document of a YAML file (an object that already exists is left as it is).
pub async fn apply_file(client: &Client, path: &Path) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let docs: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    for doc in docs.into_iter().filter(|d| d.is_object()) {
        create(client, doc).await;
    }
}

fn api_for(
    client: &Client,
    resource: &kube::discovery::ApiResource,
    scope: &Scope,
    namespace: Option<&str>,
) -> Api<DynamicObject> {
    match (scope, namespace) {
        (Scope::Namespaced, Some(ns)) => Api::namespaced_with(client.clone(), ns, resource),
        (Scope::Namespaced, None) => Api::default_namespaced_with(client.clone(), resource),
        (Scope::Cluster, _) => Api::all_with(client.clone(), resource),
    }
}

fn gvk_of(object: &Value) -> GroupVersionKind {
    let api_version = object["apiVersion"].as_str().unwrap_or_else(|| panic!("no apiVersion: {object}"));
    let kind = object["kind"].as_str().unwrap_or_else(|| panic!("no kind: {object}"));
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    GroupVersionKind::gvk(group, version, kind)
}

/// Creates one object of any kind; an existing one (409) is left alone. Returns it as created.
pub async fn create(client: &Client, object: Value) -> Value {
    let gvk = gvk_of(&object);
    let (resource, capabilities) =
        pinned_kind(client, &gvk).await.unwrap_or_else(|e| panic!("discovery of {gvk:?}: {e}"));
    let namespace = object.pointer("/metadata/namespace").and_then(Value::as_str).map(str::to_string);
    let api = api_for(client, &resource, &capabilities.scope, namespace.as_deref());
    let dynamic: DynamicObject = serde_json::from_value(object.clone()).unwrap_or_else(|e| panic!("{e}: {object}"));
    match api.create(&PostParams::default(), &dynamic).await {
        Ok(created) => serde_json::to_value(created).unwrap_or_default(),
        Err(kube::Error::Api(s)) if s.code == 409 => object,
        Err(e) => panic!("create {gvk:?} {}: {e}", object["metadata"]["name"]),
    }
}

/// Deletes a pod at once (grace period 0): nothing here runs kubelet to finish a graceful one.
pub async fn delete_pod_now(client: &Client, namespace: &str, name: &str) {
    let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(client.clone(), namespace);
    match pods.delete(name, &DeleteParams { grace_period_seconds: Some(0), ..DeleteParams::default() }).await {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.code == 404 => {}
        Err(e) => panic!("delete pod {namespace}/{name}: {e}"),
    }
}

/// A Ready node as scheduler_perf's node-default template makes it, in `zone`, with `cpu` and
/// `memory` (110 pods), labelled with its hostname and zone.
pub fn node(name: &str, zone: &str, cpu: &str, memory: &str) -> Value {
    let resources = json!({"cpu": cpu, "memory": memory, "pods": "110", "ephemeral-storage": "100Gi"});
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "topology.kubernetes.io/zone": zone,
            },
        },
        "spec": {},
        "status": {
            "capacity": resources,
            "allocatable": resources,
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "e2e"}],
            "phase": "Running",
        },
    })
}

/// The scheduler name of the shipped profile (config/scheduler-config.yaml).
pub const SCHEDULER_NAME: &str = "predicate-scheduler";

/// A pod for the shipped profile asking for `cpu` (and 128Mi), in `namespace`, with one
/// container; terminationGracePeriodSeconds 0, so that a deletion (preemption included) is final
/// at once without kubelet.
pub fn pod(namespace: &str, name: &str, cpu: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": name}},
        "spec": {
            "schedulerName": SCHEDULER_NAME,
            "terminationGracePeriodSeconds": 0,
            "containers": [{
                "name": "c",
                "image": "registry.k8s.io/pause:3.10",
                "resources": {"requests": {"cpu": cpu, "memory": "128Mi"}},
            }],
        },
    })
}

/// An object's `kind/namespace/name` (the namespace empty for a cluster-scoped one).
pub fn key(object: &Value) -> String {
    format!(
        "{}/{}/{}",
        object["kind"].as_str().unwrap_or_default(),
        object["metadata"]["namespace"].as_str().unwrap_or_default(),
        object["metadata"]["name"].as_str().unwrap_or_default()
    )
}

/// The objects of a multi-document YAML stream (what kustomize and helm render), by [`key`].
pub fn by_key(yaml: &str) -> std::collections::BTreeMap<String, Value> {
    let docs: Vec<Value> = serde_saphyr::from_multiple(yaml).unwrap_or_else(|e| panic!("{e}:\n{yaml}"));
    docs.into_iter().filter(Value::is_object).map(|d| (key(&d), d)).collect()
}
