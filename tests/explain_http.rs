//! `POST <urlPrefix>/explain` against the real server: the same report as `explain` on the command
//! line (JSON or table, chosen by `Accept`), `?node=`, bad input answered 4xx with what is wrong,
//! the deadline, and only on the verbs listener.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod common;

use std::time::Duration;

use common::{cluster, config, fixture_path, policy, TestServer};
use gen_cluster::api_objects::pending_pod;
use gen_cluster::generate::{generate, ClusterSpec};
use predicate_engine::cluster::Snapshot;
use predicate_extender::server::ClusterSource;
use serde_json::Value;

fn explain_fixture(name: &str) -> String {
    let path = fixture_path("explain").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The server on the cluster and Policy of `tests/fixtures/explain/`, which the CLI fixtures use.
async fn server() -> TestServer {
    let mut c = config(cluster(&explain_fixture("cluster.yaml")));
    c.policy = policy(&explain_fixture("policy.json"));
    TestServer::start(c).await
}

/// POSTs `body` to `path` with this `Accept` (none when `None`): status, content type, body.
async fn post(
    server: &TestServer,
    path: &str,
    accept: Option<&str>,
    body: impl Into<reqwest::Body>,
) -> (u16, String, String) {
    let mut request = server.client.post(format!("{}{path}", server.base)).body(body);
    if let Some(accept) = accept {
        request = request.header("Accept", accept);
    }
    let resp = request.send().await.unwrap_or_else(|e| panic!("POST {path}: {e}"));
    let status = resp.status().as_u16();
    let content_type = resp.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
    (status, content_type, resp.text().await.unwrap_or_default())
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

#[tokio::test]
async fn json_through_accept_is_the_report_the_cli_prints() {
    let server = server().await;
    let (status, content_type, body) =
        post(&server, "/explain", Some("application/json"), explain_fixture("pod-small.yaml")).await;
    assert_eq!((status, content_type.as_str()), (200, "application/json"), "{body}");
    // The CLI's JSON for the same cluster, Policy and pod (tests/explain_output.rs checks it).
    assert_eq!(json(&body), json(&explain_fixture("small.json")));

    // The pod as JSON, the way `kubectl get pod -o json` prints it, reads the same.
    let pod_json = r#"{"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "small", "namespace": "default", "uid": "u-small", "labels": {"app": "small"}},
        "spec": {"priority": 0, "containers": [{"name": "c", "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}}}]}}"#;
    let (status, _, body) = post(&server, "/explain?node=n3", Some("application/json"), pod_json).await;
    assert_eq!(status, 200, "{body}");
    let v = json(&body);
    assert_eq!(v["nodes"].as_array().map(Vec::len), Some(1), "only the named node in full: {v}");
    assert_eq!(v["nodes"][0]["reasons"], serde_json::json!(["Insufficient cpu"]));
    assert_eq!(v["feasible"], serde_json::json!(["n1"]));
    server.stop().await;
}

#[tokio::test]
async fn the_table_through_accept_is_the_cli_overview() {
    let server = server().await;
    let cli = explain_fixture("small-overview.txt");
    let (cli_body, cli_more) = cli.trim_end().rsplit_once('\n').unwrap();
    for accept in [Some("text/plain"), None, Some("*/*"), Some("text/html, text/plain;q=0.9, application/json;q=0.5")] {
        let (status, content_type, body) = post(&server, "/explain", accept, explain_fixture("pod-small.yaml")).await;
        assert_eq!((status, content_type.as_str()), (200, "text/plain; charset=utf-8"), "{accept:?}: {body}");
        // The same table; only the closing line spells the options as the query does.
        let (body, more) = body.trim_end().rsplit_once('\n').unwrap();
        assert_eq!(body, cli_body, "{accept:?}");
        assert_eq!(cli_more, "More: --node NAME for every predicate on a node, --top N for more of the ranking, --all for every node in full.");
        assert_eq!(more, "More: ?node=NAME for every predicate on a node, ?top=N for more of the ranking, ?all for every node in full.");
    }
    // ?node= twice: the named nodes in full, as `--node n3 --node n1`.
    let (status, _, body) =
        post(&server, "/explain?node=n3&node=n1", Some("text/plain"), explain_fixture("pod-small.yaml")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body, explain_fixture("small-nodes-n1-n3.txt"));
    // ?all: the full report, as `--all`.
    let (_, _, body) = post(&server, "/explain?all", None, explain_fixture("pod-small.yaml")).await;
    assert_eq!(body, explain_fixture("small.txt"));
    server.stop().await;
}

#[tokio::test]
async fn a_pod_the_cluster_already_has_is_explained_as_if_pending() {
    let server = server().await;
    // busy (1 cpu) runs on n3 (1 cpu): as itself pending, it fits n3 again.
    let busy = "kind: Pod\nmetadata: {name: busy, namespace: default, uid: u-busy}\n\
                spec: {nodeName: n3, containers: [{name: c, resources: {requests: {cpu: '1', memory: 1Gi}}}]}\n";
    let (status, _, body) = post(&server, "/explain", Some("application/json"), busy).await;
    assert_eq!(status, 200, "{body}");
    let feasible = json(&body)["feasible"].clone();
    assert!(feasible.as_array().unwrap().contains(&Value::from("n3")), "{feasible}");
    // The served model still has it: a /filter for another pod still sees n3 full.
    let filter = r#"{"Pod": {"metadata": {"name": "x", "namespace": "default"}, "spec": {"containers": [{"name": "c",
        "resources": {"requests": {"cpu": "500m"}}}]}}, "NodeNames": ["n3"]}"#;
    let (_, answer) = server.post("/filter", filter).await;
    assert_eq!(answer["FailedNodes"]["n3"], "Insufficient cpu", "{answer}");
    server.stop().await;
}

#[tokio::test]
async fn bad_input_is_answered_4xx_with_what_is_wrong() {
    let mut c = config(cluster(&explain_fixture("cluster.yaml")));
    c.max_body_bytes = 4096;
    let server = TestServer::start(c).await;
    let pod = explain_fixture("pod-small.yaml");
    let node = "{\"kind\": \"Node\", \"metadata\": {\"name\": \"n9\"}}";
    let negative =
        "{\"kind\": \"Pod\", \"metadata\": {\"name\": \"p\"}, \"spec\": {\"containers\": [{\"name\": \"c\", \
                    \"resources\": {\"requests\": {\"cpu\": \"-1\"}}}]}}";
    let cases: Vec<(&str, Option<&str>, String, u16, &str)> = vec![
        ("/explain", Some("application/json"), "{".to_string(), 400, "request body: "),
        ("/explain", Some("application/json"), node.to_string(), 400, "request body: holds no Pod (kind: Pod)"),
        ("/explain", Some("application/json"), String::new(), 400, "request body: holds no Pod (kind: Pod)"),
        (
            "/explain",
            Some("application/json"),
            negative.to_string(),
            400,
            "request body: object (Pod p): spec.containers[0].resources.requests.cpu",
        ),
        ("/explain?node=n9", Some("application/json"), pod.clone(), 400, "node=n9: the cluster has no such node"),
        (
            "/explain?top=0",
            Some("application/json"),
            pod.clone(),
            400,
            "top=0: expected a whole number of nodes, at least 1",
        ),
        ("/explain?top=3", Some("application/json"), pod.clone(), 400, "?top is for the table"),
        ("/explain?all&node=n1", None, pod.clone(), 400, "?all and ?node do not go together"),
        ("/explain?nodes=n1", None, pod.clone(), 400, "unknown query parameter \"nodes\": expected node, top or all"),
        (
            "/explain",
            Some("image/png"),
            pod.clone(),
            406,
            "Accept: image/png: the report is text/plain (a table) or application/json",
        ),
        (
            "/explain",
            Some("application/json"),
            "x".repeat(5000),
            413,
            "request body: request body of 5000 bytes is over the limit",
        ),
    ];
    for (path, accept, body, want_status, want) in cases {
        let (status, content_type, answer) = post(&server, path, accept, body).await;
        assert_eq!(status, want_status, "{path} {accept:?}: {answer}");
        let message = if content_type == "application/json" {
            json(&answer)["Error"].as_str().unwrap_or_default().to_string()
        } else {
            assert_eq!(content_type, "text/plain; charset=utf-8", "{path} {accept:?}");
            answer
        };
        assert!(message.starts_with(want), "{path} {accept:?}: {message}");
    }
    let (status, _) = server.get(&format!("{}/explain", server.base)).await;
    assert_eq!(status, 405, "POST only");
    server.stop().await;
}

/// Told of kube-scheduler's configuration (the shipped one: one profile, `predicate-scheduler`),
/// the server explains a pod of that profile, and answers a pod no profile schedules with a 400
/// that names its `schedulerName`.
#[tokio::test]
async fn a_pod_no_profile_schedules_is_the_requests_error() {
    let mut c = config(cluster(&explain_fixture("cluster.yaml")));
    c.policy = policy(&explain_fixture("policy.json"));
    c.scheduler_config = Some(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config/scheduler-config.yaml"));
    let server = TestServer::start(c).await;
    let pod = |scheduler: &str| {
        format!(
            r#"{{"kind": "Pod", "metadata": {{"name": "p", "namespace": "default"}},
                "spec": {{"schedulerName": "{scheduler}", "containers": [{{"name": "c"}}]}}}}"#
        )
    };
    let (status, _, body) = post(&server, "/explain", Some("application/json"), pod("predicate-scheduler")).await;
    assert_eq!(status, 200, "{body}");
    assert!(json(&body)["summary"].as_str().is_some_and(|s| s.contains("nodes are available")), "{body}");
    let (status, _, body) = post(&server, "/explain", Some("application/json"), pod("default-scheduler")).await;
    assert_eq!(status, 400, "{body}");
    let message = json(&body)["Error"].as_str().unwrap_or_default().to_string();
    assert!(
        message.starts_with("spec.schedulerName: ")
            && message.contains("no profile schedules pods of schedulerName \"default-scheduler\"")
            && message.contains("its profiles: predicate-scheduler"),
        "{message}"
    );
    server.stop().await;
}

#[tokio::test]
async fn only_on_the_verbs_listener_under_the_url_prefix() {
    let mut c = config(cluster(&explain_fixture("cluster.yaml")));
    c.url_prefix = "/scheduler".to_string();
    let server = TestServer::start(c).await;
    let pod = explain_fixture("pod-small.yaml");
    let (status, _, body) = post(&server, "/scheduler/explain", None, pod.clone()).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.starts_with("1/3 nodes are available"), "{body}");
    let (status, _, _) = post(&server, "/explain", None, pod.clone()).await;
    assert_eq!(status, 404, "not outside the prefix");
    let admin =
        server.client.post(format!("{}/scheduler/explain", server.admin)).body(pod.clone()).send().await.unwrap();
    assert_eq!(admin.status().as_u16(), 404, "not on the admin listener");
    let admin = server.client.post(format!("{}/explain", server.admin)).body(pod).send().await.unwrap();
    assert_eq!(admin.status().as_u16(), 404, "not on the admin listener");
    server.stop().await;
}

#[tokio::test]
async fn an_explain_slower_than_the_request_timeout_is_answered_503() {
    // 1,000 nodes with 20,000 pods, every predicate on every node: far more than 1 ms, even in
    // release, so the deadline always passes first.
    let spec = ClusterSpec { nodes: 1000, pods_per_node: 20, ..ClusterSpec::default() };
    let (nodes, pods) = generate(&spec);
    let mut c = config(ClusterSource::Snapshot(Box::new(Snapshot::build(nodes, pods))));
    c.request_timeout = Duration::from_millis(1);
    let server = TestServer::start(c).await;
    let pod = pending_pod(&spec).to_string();
    let (status, content_type, body) = post(&server, "/explain", Some("application/json"), pod).await;
    assert_eq!((status, content_type.as_str()), (503, "application/json"), "{body}");
    let error = json(&body)["Error"].as_str().unwrap_or_default().to_string();
    assert!(
        error.contains("the explain of pod shop/checkout-api-6c9f7d5b8-x2x7q over 1000 nodes did not finish within the request timeout of 1ms")
            || error.contains("the explain request was still being decoded when the request timeout of 1ms passed"),
        "{error}"
    );
    server.stop().await;
}
