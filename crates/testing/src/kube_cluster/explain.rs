//! `predicate-extender explain` against a live test cluster, and what kube-scheduler said of the
//! same pod: its FailedScheduling event, whose text before the PostFilter plugins' messages
//! explain's first line must be.
#![allow(dead_code)] // each test binary uses a different part of this

use std::path::Path;

use k8s_openapi::api::core::v1::{Event, Pod};
use kube::api::ListParams;
use kube::Api;
use serde_json::Value;

use super::{Cluster, DEADLINE};

/// `explain --format json` for the pod as the API server has it now, against the live cluster,
/// told of kube-scheduler as the extender is (its version and configuration), under `policy`
/// (the default plan when `None`).
pub fn explain(cluster: &Cluster, pod: &Pod, policy: Option<&Path>) -> Value {
    let name = pod.metadata.name.as_deref().unwrap_or_default();
    let file = cluster.dir.join(format!("explain-{name}.json"));
    std::fs::write(&file, serde_json::to_string(pod).unwrap()).unwrap();
    let mut command = std::process::Command::new(super::extender_binary());
    command
        .arg("explain")
        .arg(format!("--kubeconfig={}", cluster.admin_kubeconfig.display()))
        .arg(format!("--pod={}", file.display()))
        .arg("--format=json")
        .args(cluster.kube_scheduler_args());
    if let Some(policy) = policy {
        command.arg(format!("--policy={}", policy.display()));
    }
    let out = command.output().unwrap();
    assert!(out.status.success(), "explain failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The FailedScheduling events of a pod, oldest first.
pub async fn failed_scheduling(cluster: &Cluster, namespace: &str, name: &str) -> Vec<String> {
    let events: Api<Event> = Api::namespaced(cluster.client.clone(), namespace);
    let params = ListParams::default().fields(&format!("involvedObject.name={name}"));
    let mut list = events.list(&params).await.unwrap().items;
    list.sort_by_key(|e| e.last_timestamp.clone().map(|t| t.0));
    list.into_iter().filter(|e| e.reason.as_deref() == Some("FailedScheduling")).filter_map(|e| e.message).collect()
}

/// kube-scheduler's event text up to its PostFilter plugins' messages (`preemption: ...`, and
/// before it, in 1.35 and 1.36, DynamicResources' "no new claims to deallocate,"): what its
/// filters and the extender said of the nodes (`FitError.Error()`'s first part).
pub fn filter_part(event: &str) -> &str {
    let before = event.split(" preemption:").next().unwrap_or(event);
    before.strip_suffix(" no new claims to deallocate,").unwrap_or(before)
}

/// The pod stays Pending with a FailedScheduling event, and explain's first line (`summary`)
/// is that event's filter part, word for word. Returns the line.
pub async fn assert_explain_says_what_kube_scheduler_says(
    cluster: &Cluster,
    namespace: &str,
    name: &str,
    policy: Option<&Path>,
) -> String {
    let pods: Api<Pod> = Api::namespaced(cluster.client.clone(), namespace);
    // The newest event describes the cluster once it stops changing: read it again until explain
    // agrees or the deadline passes, then show the last pair read.
    let start = std::time::Instant::now();
    let mut last = (String::new(), String::new());
    loop {
        let events = failed_scheduling(cluster, namespace, name).await;
        if let (Some(event), Ok(pod)) = (events.last(), pods.get(name).await) {
            let bound = pod.spec.as_ref().and_then(|s| s.node_name.as_ref());
            assert!(bound.is_none(), "{namespace}/{name} was bound to {bound:?}; it was expected to stay Pending");
            let line = explain(cluster, &pod, policy)["summary"].as_str().unwrap_or_default().to_string();
            if filter_part(event) == line {
                return line;
            }
            last = (filter_part(event).to_string(), line);
        }
        assert!(
            start.elapsed() < DEADLINE,
            "explain's first line for {namespace}/{name} is not kube-scheduler's:\n  event:   {}\n  explain: {}",
            last.0,
            last.1
        );
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
}
