//! The scenario of issue 48, over HTTP against the real server: a node of 7910m cpu filled by a pod
//! whose only requests are pod-level (`spec.resources.requests.cpu: 7710m`), and a second pod of
//! 500m pinned to it. kube-scheduler v1.37.2 leaves that pod Pending with `1 Insufficient cpu`;
//! the extender's `/filter` and `/explain` must say the same, and LeastRequestedPriority must
//! score the node as nearly full, not as empty (it scored 9 of 10 when the pod-level requests were
//! not read).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod common;

use common::{cluster, config, policy, TestServer};
use serde_json::{json, Value};

const CLUSTER: &str = r#"{"apiVersion": "v1", "kind": "List", "items": [
  {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "busy", "labels": {"kubernetes.io/hostname": "busy"}},
   "status": {"allocatable": {"cpu": "7910m", "memory": "32Gi", "pods": "110"}}},
  {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "idle", "labels": {"kubernetes.io/hostname": "idle"}},
   "status": {"allocatable": {"cpu": "7910m", "memory": "32Gi", "pods": "110"}}},
  {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pod-level", "namespace": "default", "uid": "u1"},
   "spec": {"nodeName": "busy", "containers": [{"name": "c", "image": "app"}],
            "resources": {"requests": {"cpu": "7710m"}}},
   "status": {"phase": "Running", "qosClass": "Burstable"}}
]}"#;

/// The second pod, 500m, pinned to the busy node by its hostname label.
fn pinned() -> Value {
    json!({"metadata": {"name": "next", "namespace": "default", "uid": "u2"},
           "spec": {"nodeSelector": {"kubernetes.io/hostname": "busy"},
                    "containers": [{"name": "c", "image": "app", "resources": {"requests": {"cpu": "500m"}}}]}})
}

async fn server() -> TestServer {
    let mut c = config(cluster(CLUSTER));
    c.policy = policy(
        r#"{"kind": "Policy", "apiVersion": "v1",
            "predicates": [{"name": "GeneralPredicates"}],
            "priorities": [{"name": "LeastRequestedPriority", "weight": 1}]}"#,
    );
    TestServer::start(c).await
}

async fn post(server: &TestServer, verb: &str, body: &Value) -> Value {
    let resp = server
        .client
        .post(format!("{}/{verb}", server.base))
        .header("Accept", "application/json")
        .json(body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200, "/{verb}");
    resp.json().await.unwrap()
}

#[tokio::test]
async fn a_node_filled_by_pod_level_requests_rejects_the_next_pod_and_scores_as_full() {
    let server = server().await;
    let filtered = post(&server, "filter", &json!({"Pod": pinned(), "NodeNames": ["busy", "idle"]})).await;
    assert_eq!(filtered["FailedNodes"]["busy"], "Insufficient cpu", "{filtered}");

    // kube-scheduler's line: the busy node fails NodeResourcesFit; the idle one NodeAffinity.
    let explained = post(
        &server,
        "explain",
        &json!({"apiVersion": "v1", "kind": "Pod", "metadata": pinned()["metadata"], "spec": pinned()["spec"]}),
    )
    .await;
    assert_eq!(
        explained["summary"],
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match Pod's node affinity/selector.",
        "{explained}"
    );

    // An unpinned pod of 100m and 1Gi: LeastRequested averages what is left of cpu and memory,
    // each scored out of 10 and rounded down. Busy: cpu (7910 - 7710 - 100) / 7910 gives 0; memory
    // (32Gi - 200Mi, the scoring default for the pod-level pod that asks none, - 1Gi) / 32Gi
    // gives 9; (0 + 9) / 2 = 4. Idle: cpu 9, memory 9: 9.
    let small = json!({"metadata": {"name": "small", "namespace": "default"},
                       "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m", "memory": "1Gi"}}}]}});
    let scores = post(&server, "prioritize", &json!({"Pod": small, "NodeNames": ["busy", "idle"]})).await;
    assert_eq!(scores, json!([{"Host": "busy", "Score": 4}, {"Host": "idle", "Score": 9}]), "{scores}");
}
