//! Who bound which pod: the pods' `spec.nodeName` from the API server and the bindings in the
//! audit log, for the scheduling tests on 127.0.0.1 and on the real node alike.

use std::collections::BTreeSet;

use crate::eventually;
use k8s_openapi::api::core::v1::Pod;
use kube::Api;

use super::{Cluster, DEADLINE};

/// The node a pod is bound to, once the API server says it is (spec.nodeName set by the binding,
/// and PodScheduled True).
pub async fn wait_bound(cluster: &Cluster, namespace: &str, name: &str) -> String {
    let api: Api<Pod> = Api::namespaced(cluster.client.clone(), namespace);
    eventually(&format!("pod {namespace}/{name} bound"), DEADLINE, || async {
        let pod = api.get_opt(name).await.ok()??;
        let node = pod.spec.as_ref()?.node_name.clone()?;
        let scheduled =
            pod.status.as_ref()?.conditions.as_ref()?.iter().any(|c| c.type_ == "PodScheduled" && c.status == "True");
        scheduled.then_some(node)
    })
    .await
}

/// A successful pods/binding creation, as the audit log has it.
#[derive(Debug, Clone)]
pub struct Binding {
    pub pod: String,
    pub user_agent: String,
    /// When the API server answered it (`stageTimestamp`, RFC 3339 with microseconds).
    pub at: String,
}

/// The audit log's successful pods/binding creations in `namespace`, in the log's order.
pub fn binding_events(cluster: &Cluster, namespace: &str) -> Vec<Binding> {
    let text = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
    cluster
        .audit_events()
        .into_iter()
        .filter(|e| e["stage"] == "ResponseComplete" && e["verb"] == "create")
        .filter(|e| e["objectRef"]["resource"] == "pods" && e["objectRef"]["subresource"] == "binding")
        .filter(|e| e["objectRef"]["namespace"] == namespace)
        .filter(|e| e["responseStatus"]["code"].as_u64().is_some_and(|c| c < 300))
        .map(|e| Binding {
            pod: text(&e["objectRef"]["name"]),
            user_agent: text(&e["userAgent"]),
            at: text(&e["stageTimestamp"]),
        })
        .collect()
}

/// The audit log's successful pods/binding creations in `namespace`: (pod, user agent).
pub fn bindings(cluster: &Cluster, namespace: &str) -> Vec<(String, String)> {
    binding_events(cluster, namespace).into_iter().map(|b| (b.pod, b.user_agent)).collect()
}

/// The user agent of the extender's requests begins with this.
pub const EXTENDER: &str = "predicate-extender/";

/// The user agent of kube-scheduler's requests begins with this.
pub const KUBE_SCHEDULER: &str = "kube-scheduler/";

/// `expected` pods of `namespace` were bound, every binding by the extender, no pod twice.
pub async fn assert_bound_once_each_by_the_extender(cluster: &Cluster, namespace: &str, expected: usize) {
    assert_bound_once_each_by(cluster, namespace, expected, EXTENDER).await
}

/// `expected` pods of `namespace` were bound, every binding by the client whose user agent begins
/// with `binder`, no pod twice. The audit event of a binding is written once its response is (a
/// client can see the pod bound a moment before the event is in the log): the count is awaited.
pub async fn assert_bound_once_each_by(cluster: &Cluster, namespace: &str, expected: usize, binder: &str) {
    let all = eventually(&format!("{expected} bindings in {namespace} in the audit log"), DEADLINE, || async {
        let all = bindings(cluster, namespace);
        (all.len() >= expected).then_some(all)
    })
    .await;
    let by_other: Vec<_> = all.iter().filter(|(_, agent)| !agent.starts_with(binder)).collect();
    assert!(by_other.is_empty(), "bindings not made by {binder}: {by_other:?}");
    let mut seen = BTreeSet::new();
    let twice: Vec<_> = all.iter().filter(|(pod, _)| !seen.insert(pod.clone())).collect();
    assert!(twice.is_empty(), "pods bound more than once: {twice:?}");
    assert_eq!(all.len(), expected, "bindings in {namespace}: {all:?}");
}
