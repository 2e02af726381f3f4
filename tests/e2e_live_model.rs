//! The live cluster model against a real kube-apiserver (on a real etcd, built by e2e/build.sh):
//! lists in pages, watches through the API server's own timeouts and bookmarks, status-subresource
//! updates, deletions with and without grace, and a watch whose resourceVersion etcd compacted
//! (410 Gone, then a relist). The extender runs in process here, so each test can shorten the page
//! size and the watch timeout and compare its model object by object with the API server's truth.
//! The fake API server (crates/testing/src/fake_apiserver) stays for the faults a real one cannot be made to
//! produce on demand.
//!
//! Without Go these tests say SKIPPED on the terminal and pass; `.ci/run` (CI=true) makes that a
//! failure.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod common;
use predicate_extender_testing::kube_cluster;

use std::collections::BTreeMap;
use std::time::Duration;

use common::model_diff::{differences, truth_snapshot};
use common::{config, TestServer};
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use kube::core::GroupVersionKind;
use kube::discovery::pinned_kind;
use kube::Api;
use kube_cluster::objects::{create, delete_pod_now, node, pod};
use kube_cluster::{metric_sum, Cluster, Options, DEADLINE};
use predicate_extender::server::ClusterSource;
use predicate_extender::source::kube::{Connection, WATCHED_KINDS};
use predicate_extender_testing::eventually;
use serde_json::{json, Value};

const NS: &str = "e2e";

/// The API server alone: no extender binary, no kube-scheduler.
fn api_only(apiserver_args: &[&str]) -> Options {
    Options {
        extender: false,
        schedulers: 0,
        apiserver_args: apiserver_args.iter().map(|a| a.to_string()).collect(),
        ..Options::default()
    }
}

/// The extender in process on the cluster, under its service account: pages of 3 objects, and
/// watches the API server ends after `watch_timeout` seconds (then resumed from the last version).
async fn extender(cluster: &Cluster, watch_timeout: u32) -> TestServer {
    let mut c = config(ClusterSource::Kube(Connection::Kubeconfig(cluster.service_account_kubeconfig.clone())));
    c.watch.page_size = 3;
    c.watch.watch_timeout_seconds = watch_timeout;
    let server = TestServer::start(c).await;
    let url = format!("{}/readyz", server.admin);
    eventually("the extender ready", DEADLINE, || async { (server.get(&url).await.0 == 200).then_some(()) }).await;
    server
}

/// The group, version and kind of a watched kind's API name.
fn gvk(kind: &str) -> GroupVersionKind {
    match kind {
        "StorageClass" | "CSINode" => GroupVersionKind::gvk("storage.k8s.io", "v1", kind),
        "ReplicaSet" | "StatefulSet" => GroupVersionKind::gvk("apps", "v1", kind),
        _ => GroupVersionKind::gvk("", "v1", kind),
    }
}

/// Every watched kind's objects as the API server lists them now (with apiVersion and kind, as a
/// watch event's object carries them).
async fn truth(cluster: &Cluster) -> BTreeMap<&'static str, Vec<Value>> {
    let mut out = BTreeMap::new();
    for kind in WATCHED_KINDS {
        let name = kind.kind_name();
        let gvk = gvk(name);
        let (resource, _) = pinned_kind(&cluster.client, &gvk).await.unwrap();
        let api: Api<DynamicObject> = Api::all_with(cluster.client.clone(), &resource);
        let items = api.list(&ListParams::default()).await.unwrap().items;
        let values = items
            .into_iter()
            .map(|o| {
                let mut v = serde_json::to_value(o).unwrap();
                v["apiVersion"] = json!(resource.api_version);
                v["kind"] = json!(name);
                v
            })
            .collect();
        out.insert(name, values);
    }
    out
}

/// Waits until the extender's model equals the API server's truth, object by object; panics
/// with the differences after a minute.
async fn assert_model_equals_truth(cluster: &Cluster, server: &TestServer, when: &str) {
    eventually(&format!("the model to equal the API server {when}"), Duration::from_secs(60), || async {
        let truth = truth(cluster).await;
        let truth = truth_snapshot(|kind| truth.get(kind).cloned().unwrap_or_default());
        let differ = differences(&server.store().snapshot(), &truth, 20);
        if differ.is_empty() {
            Ok(())
        } else {
            Err(differ.join("\n"))
        }
    })
    .await;
}

async fn lists_of(server: &TestServer, resource: &str) -> f64 {
    let (_, text) = server.get(&format!("{}/metrics", server.admin)).await;
    metric_sum(&text, "predicate_extender_watch_lists_total", &[&format!("resource=\"{resource}\"")])
}

/// The extender's list requests of `resource` in the audit log (its User-Agent), as request URIs.
fn extender_lists(cluster: &Cluster, resource: &str) -> Vec<String> {
    cluster
        .audit_events()
        .into_iter()
        .filter(|e| e["stage"] == "ResponseComplete" && e["verb"] == "list" && e["objectRef"]["resource"] == resource)
        .filter(|e| e["userAgent"].as_str().unwrap_or_default().starts_with("predicate-extender/"))
        .map(|e| e["requestURI"].as_str().unwrap_or_default().to_string())
        .collect()
}

predicate_extender_testing::on_each_minor!(
    the_model_follows_the_real_api_server_through_pages_watch_timeouts_and_status_updates
);

/// The model follows the real API server: the first list in pages of 3 (`limit` and `continue`), then
/// watches the API server ends every few seconds and the extender resumes (bookmarks on) without a
/// relist; node status through the status subresource, labels through the main resource, pods
/// created, bound, nominated, deleted at once and deleted with a grace period (which, with no
/// kubelet, leaves them terminating). After each step the model equals the API server.
async fn the_model_follows_the_real_api_server_through_pages_watch_timeouts_and_status_updates(minor: &str) {
    let Some(cluster) = Cluster::start_on(minor, "live-model", api_only(&[])).await else { return };
    let c = &cluster.client;
    create(c, json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})).await;
    for i in 0..7 {
        create(c, node(&format!("n{i}"), if i % 2 == 0 { "zone-a" } else { "zone-b" }, "4", "16Gi")).await;
    }
    for i in 0..8 {
        let mut p = pod(NS, &format!("placed-{i}"), "100m");
        p["spec"]["nodeName"] = json!(format!("n{}", i % 7));
        create(c, p).await;
    }
    create(c, pod(NS, "pending", "100m")).await;
    create(
        c,
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc", "namespace": NS},
        "spec": {"selector": {"app": "placed-1"}, "ports": [{"port": 80}]}}),
    )
    .await;

    let server = extender(&cluster, 3).await;
    assert_model_equals_truth(&cluster, &server, "after the first list").await;
    let node_lists = extender_lists(&cluster, "nodes");
    assert!(node_lists.iter().all(|uri| uri.contains("limit=3")), "{node_lists:?}");
    assert!(node_lists.iter().any(|uri| uri.contains("continue=")), "7 nodes in pages of 3: {node_lists:?}");

    let nodes: Api<Node> = Api::all(c.clone());
    let pods: Api<Pod> = Api::namespaced(c.clone(), NS);
    // Node status through its subresource (what kubelet does): n1 loses cpu and reports pressure.
    let status = json!({"status": {"allocatable": {"cpu": "1", "memory": "16Gi", "pods": "110"},
        "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "e2e"},
                       {"type": "MemoryPressure", "status": "True", "reason": "e2e", "message": "e2e"}]}});
    nodes.patch_status("n1", &PatchParams::default(), &Patch::Merge(&status)).await.unwrap();
    // Labels and taints through the main resource.
    let spec = json!({"metadata": {"labels": {"disk": "ssd"}},
        "spec": {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]}});
    nodes.patch("n2", &PatchParams::default(), &Patch::Merge(&spec)).await.unwrap();
    // A nomination (status subresource, as kube-scheduler writes it), a pod deleted at once, one
    // deleted with a grace period (terminating for good: no kubelet), a new one bound.
    let nominate = json!({"status": {"nominatedNodeName": "n3"}});
    pods.patch_status("pending", &PatchParams::default(), &Patch::Merge(&nominate)).await.unwrap();
    delete_pod_now(c, NS, "placed-0").await;
    pods.delete("placed-1", &DeleteParams { grace_period_seconds: Some(300), ..DeleteParams::default() })
        .await
        .unwrap();
    let mut late = pod(NS, "late", "100m");
    late["spec"]["nodeName"] = json!("n4");
    create(c, late).await;
    assert_model_equals_truth(&cluster, &server, "after status, label, nomination and deletion changes").await;
    let terminating = pods.get("placed-1").await.unwrap();
    assert!(terminating.metadata.deletion_timestamp.is_some(), "a graceful deletion without kubelet stays terminating");

    // Across several watch timeouts (3 s each), with bookmarks asked for: the model stays equal
    // and no resource was listed again.
    tokio::time::sleep(Duration::from_secs(8)).await;
    let mut p = pod(NS, "after-timeouts", "100m");
    p["spec"]["nodeName"] = json!("n5");
    create(c, p).await;
    assert_model_equals_truth(&cluster, &server, "after several watch timeouts").await;
    for kind in WATCHED_KINDS {
        assert_eq!(lists_of(&server, kind.resource()).await, 1.0, "{} was listed again", kind.resource());
    }
    server.stop().await;
}

/// The current etcd revision, through etcd's JSON gateway (a range over one key).
async fn etcd_revision(cluster: &Cluster) -> i64 {
    let http = reqwest::Client::new();
    // "/" base64: any key answers with the header's revision.
    let answer: Value = http
        .post(format!("{}/v3/kv/range", cluster.etcd_url))
        .json(&json!({"key": "Lw=="}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    answer["header"]["revision"].as_str().and_then(|r| r.parse().ok()).unwrap()
}

predicate_extender_testing::on_each_minor!(
    a_watch_resumed_after_etcd_compacted_its_version_is_answered_410_and_relisted
);

/// With the API server's watch cache off (every watch is an etcd watch), a watch resumed from a
/// resourceVersion that etcd has compacted away is answered 410 Gone; the extender lists that
/// resource again, and its model equals the API server, changes made meanwhile included.
async fn a_watch_resumed_after_etcd_compacted_its_version_is_answered_410_and_relisted(minor: &str) {
    let Some(cluster) = Cluster::start_on(minor, "compaction", api_only(&["--watch-cache=false"])).await else {
        return;
    };
    let c = &cluster.client;
    create(c, json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})).await;
    create(c, node("n1", "zone-a", "4", "16Gi")).await;
    let mut p = pod(NS, "first", "100m");
    p["spec"]["nodeName"] = json!("n1");
    create(c, p).await;

    let server = extender(&cluster, 2).await;
    assert_model_equals_truth(&cluster, &server, "after the first list").await;
    assert_eq!(lists_of(&server, "persistentvolumes").await, 1.0);
    // Writes elsewhere move etcd's revision past every version the extender's persistentvolumes
    // watch knows (no PV exists, so that watch sees none of them); then etcd compacts up to now.
    for i in 0..5 {
        create(c, json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("bump-{i}"), "namespace": NS}}))
            .await;
    }
    let revision = etcd_revision(&cluster).await;
    let http = reqwest::Client::new();
    let compacted = http
        .post(format!("{}/v3/kv/compaction", cluster.etcd_url))
        .json(&json!({"revision": revision.to_string(), "physical": true}))
        .send()
        .await
        .unwrap();
    assert!(compacted.status().is_success(), "compaction: {}", compacted.text().await.unwrap_or_default());

    // The watch ends within its 2 s timeout, resumes from a compacted version, meets 410, relists.
    eventually("persistentvolumes listed again after 410 Gone", DEADLINE, || async {
        (lists_of(&server, "persistentvolumes").await >= 2.0).then_some(())
    })
    .await;
    create(
        c,
        json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-after"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/tmp/x"}}}),
    )
    .await;
    assert_model_equals_truth(&cluster, &server, "after the relist").await;
    server.stop().await;
}
