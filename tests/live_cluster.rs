//! The live cluster source against a fake API server on 127.0.0.1: sync and readiness, watch
//! events reaching the next `/filter`, recovery from dropped watches and `410 Gone`, binding
//! through the API server with its error mapping, and the assume cache.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod common;
use predicate_extender_testing::fake_apiserver;

use std::collections::BTreeMap;
use std::time::Duration;

use common::{config, feasible, TestServer};
use fake_apiserver::{node_json, pod_json, FakeApiServer};
use predicate_extender::server::{ClusterSource, ServeConfig};
use predicate_extender::source::kube::Connection;
use predicate_extender_testing::eventually;
use serde_json::{json, Value};

/// Long enough for a watch event on a loaded 2-core machine; conditions are polled, never slept on.
const DEADLINE: Duration = Duration::from_secs(20);

fn live_config(api: &FakeApiServer) -> ServeConfig {
    let mut c = config(ClusterSource::Kube(Connection::Kubeconfig(api.kubeconfig_path())));
    // Small pages so the tests list in several pages, as a big cluster does.
    c.watch.page_size = 3;
    c
}

/// A fake cluster of two 4-cpu nodes, and the extender watching it, synced.
async fn cluster() -> (FakeApiServer, TestServer) {
    let api = FakeApiServer::start().await;
    api.apply(node_json("n1", "4", "8Gi", "110"));
    api.apply(node_json("n2", "4", "8Gi", "110"));
    api.apply(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}}));
    let server = TestServer::start(live_config(&api)).await;
    wait_ready(&server).await;
    (api, server)
}

async fn wait_ready(server: &TestServer) {
    let url = format!("{}/readyz", server.admin);
    eventually("readyz 200", DEADLINE, || async { (server.get(&url).await.0 == 200).then_some(()) }).await;
}

/// A pending pod asking for `cpu`, as kube-scheduler sends it.
fn incoming(name: &str, cpu: &str) -> Value {
    pod_json("default", name, "", cpu)
}

/// The feasible nodes for a pod, in NodeNames mode.
async fn feasible_for(server: &TestServer, pod: &Value) -> Vec<String> {
    let body = json!({"Pod": pod, "NodeNames": ["n1", "n2"]});
    let (status, answer) = server.post("/filter", body.to_string()).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["Error"].as_str().unwrap_or(""), "", "{answer}");
    feasible(&answer)
}

/// Waits until the filter answer for `pod` is `want`.
async fn until_feasible(server: &TestServer, pod: &Value, want: &[&str], what: &str) {
    eventually(what, DEADLINE, || async {
        let got = feasible_for(server, pod).await;
        (got == want).then_some(())
    })
    .await;
}

/// The model's pods as `namespace/name -> node`, to compare with the API server's truth.
fn model_pods(server: &TestServer) -> BTreeMap<String, String> {
    let snapshot = server.store().snapshot();
    snapshot
        .keys(predicate_engine::cluster::ObjectKind::Pod)
        .into_iter()
        .map(|(ns, name)| {
            let node = snapshot.pod(&ns, &name).map(|p| p.pod.spec.node_name.clone()).unwrap_or_default();
            (format!("{ns}/{name}"), node)
        })
        .collect()
}

fn truth_pods(api: &FakeApiServer) -> BTreeMap<String, String> {
    api.list("Pod")
        .iter()
        .filter(|p| !matches!(p["status"]["phase"].as_str(), Some("Succeeded" | "Failed")))
        .map(|p| {
            let key = format!(
                "{}/{}",
                p["metadata"]["namespace"].as_str().unwrap_or(""),
                p["metadata"]["name"].as_str().unwrap_or("")
            );
            (key, p["spec"]["nodeName"].as_str().unwrap_or("").to_string())
        })
        .collect()
}

async fn bind(server: &TestServer, pod: &str, uid: &str, node: &str) -> String {
    let body = json!({"PodName": pod, "PodNamespace": "default", "PodUID": uid, "Node": node});
    let (status, answer) = server.post("/bind", body.to_string()).await;
    assert_eq!(status, 200, "{answer}");
    answer["Error"].as_str().unwrap_or("").to_string()
}

fn uid_of(api: &FakeApiServer, pod: &str) -> String {
    api.get("Pod", "default", pod).and_then(|p| p["metadata"]["uid"].as_str().map(str::to_string)).unwrap_or_default()
}

#[tokio::test]
async fn not_ready_and_no_answers_until_every_watch_has_listed() {
    let api = FakeApiServer::start().await;
    api.apply(node_json("n1", "4", "8Gi", "110"));
    api.set_delay(Duration::from_millis(600)); // a slow API server: the first lists take a while
    let server = TestServer::start(live_config(&api)).await;

    let (status, body) = server.get(&format!("{}/readyz", server.admin)).await;
    assert_eq!(status, 503, "{body}");
    let report: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(report["ready"], false);
    let waiting: Vec<&str> = report["notSynced"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(waiting.contains(&"pods") && waiting.contains(&"nodes"), "{body}");
    let (status, _) = server.get(&format!("{}/healthz", server.admin)).await;
    assert_eq!(status, 200, "healthz answers while the cache syncs");

    let (status, answer) =
        server.post("/filter", json!({"Pod": incoming("p", "1"), "NodeNames": ["n1"]}).to_string()).await;
    assert_eq!(status, 200);
    let error = answer["Error"].as_str().unwrap();
    assert!(error.contains("has not synced with the API server yet (waiting for"), "{answer}");
    // /prioritize's 200 answer is a HostPriorityList: not synced is a 503 with the reason.
    let (status, answer) =
        server.post("/prioritize", json!({"Pod": incoming("p", "1"), "NodeNames": ["n1"]}).to_string()).await;
    assert_eq!(status, 503, "{answer}");
    assert!(answer["Error"].as_str().unwrap().contains("has not synced"), "{answer}");

    wait_ready(&server).await;
    assert_eq!(feasible_for(&server, &incoming("p", "1")).await, ["n1"]);
}

#[tokio::test]
async fn pod_events_reach_the_next_filter() {
    let (api, server) = cluster().await;
    let pod = incoming("incoming", "1");
    until_feasible(&server, &pod, &["n1", "n2"], "both nodes free").await;

    // Added: n1 is full.
    api.apply(pod_json("default", "big", "n1", "3500m"));
    until_feasible(&server, &pod, &["n2"], "the added pod fills n1").await;

    // Modified: a higher-priority pending pod is nominated to n2, then its nomination cleared.
    let mut nominated = pod_json("default", "vip", "", "3500m");
    nominated["spec"]["priority"] = json!(1000);
    nominated["status"]["nominatedNodeName"] = json!("n2");
    api.apply(nominated.clone());
    until_feasible(&server, &pod, &[], "the nominated pod holds n2").await;
    nominated["status"]["nominatedNodeName"] = json!("");
    api.apply(nominated);
    until_feasible(&server, &pod, &["n2"], "the nomination cleared").await;

    // Succeeded: the pod leaves n1.
    let mut done = pod_json("default", "big", "n1", "3500m");
    done["status"]["phase"] = json!("Succeeded");
    api.apply(done);
    until_feasible(&server, &pod, &["n1", "n2"], "the succeeded pod left n1").await;

    // Re-created, then deleted.
    api.apply(pod_json("default", "big", "n1", "3500m"));
    until_feasible(&server, &pod, &["n2"], "the re-created pod fills n1").await;
    assert!(api.delete("Pod", "default", "big"));
    until_feasible(&server, &pod, &["n1", "n2"], "the deleted pod left n1").await;
}

#[tokio::test]
async fn node_taint_and_untaint_reach_the_next_filter() {
    let (api, server) = cluster().await;
    let pod = incoming("incoming", "1");
    let mut n1 = node_json("n1", "4", "8Gi", "110");
    n1["spec"]["taints"] = json!([{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]);
    api.apply(n1);
    until_feasible(&server, &pod, &["n2"], "the taint on n1").await;
    let body = json!({"Pod": pod, "NodeNames": ["n1", "n2"]});
    let (_, answer) = server.post("/filter", body.to_string()).await;
    let reason = answer["FailedAndUnresolvableNodes"]["n1"].as_str().or(answer["FailedNodes"]["n1"].as_str());
    assert!(reason.unwrap_or("").contains("taint"), "{answer}");
    api.apply(node_json("n1", "4", "8Gi", "110"));
    until_feasible(&server, &pod, &["n1", "n2"], "n1 untainted").await;
}

#[tokio::test]
async fn dropped_watches_and_410_gone_lose_and_duplicate_nothing() {
    let (api, server) = cluster().await;
    for i in 0..7 {
        api.apply(pod_json("default", &format!("p{i}"), if i % 2 == 0 { "n1" } else { "n2" }, "100m"));
    }
    eventually("initial pods", DEADLINE, || async { (model_pods(&server) == truth_pods(&api)).then_some(()) }).await;
    let watches_before = api.watch_count("Pod");
    let lists_before = api.list_count("Pod");

    // A watch dropped mid-stream, with changes made while it is down.
    api.drop_watches();
    api.apply(pod_json("default", "p7", "n1", "100m"));
    api.delete("Pod", "default", "p0");
    api.apply(pod_json("default", "p1", "n1", "100m"));
    eventually("the model after a dropped watch", DEADLINE, || async {
        (model_pods(&server) == truth_pods(&api)).then_some(())
    })
    .await;
    eventually("a new pod watch", DEADLINE, || async { (api.watch_count("Pod") > watches_before).then_some(()) }).await;

    // History compacted: the resumed watch gets 410 Gone and the source lists again.
    api.expire_history();
    api.apply(pod_json("default", "p8", "n2", "100m"));
    api.delete("Pod", "default", "p2");
    eventually("a relist of pods", DEADLINE, || async { (api.list_count("Pod") > lists_before).then_some(()) }).await;
    eventually("the model after 410 Gone", DEADLINE, || async {
        (model_pods(&server) == truth_pods(&api)).then_some(())
    })
    .await;

    // And the requested CPU on each node is exactly the truth's: nothing counted twice.
    let snapshot = server.store().snapshot();
    let truth = truth_pods(&api);
    for node in ["n1", "n2"] {
        let want = truth.values().filter(|n| *n == node).count() as i64 * 100;
        assert_eq!(snapshot.node_info(node).unwrap().pods.requested().milli_cpu, want, "{node}");
    }
}

#[tokio::test]
async fn bind_goes_through_the_api_server_and_maps_its_answers() {
    let (api, server) = cluster().await;
    api.apply(pod_json("default", "pending", "", "1"));
    api.apply(pod_json("default", "running", "n2", "1"));
    api.apply(pod_json("default", "other", "", "1"));
    eventually("pods known", DEADLINE, || async { (model_pods(&server).len() == 3).then_some(()) }).await;
    let uid = uid_of(&api, "pending");

    // Success: the Binding names the pod, its UID and the node, in protobuf as kube-scheduler's
    // binder sends it.
    assert_eq!(bind(&server, "pending", &uid, "n1").await, "");
    assert_eq!(api.get("Pod", "default", "pending").unwrap()["spec"]["nodeName"], "n1");
    let sent = api.requests().into_iter().rfind(|r| r.path.ends_with("/pods/pending/binding")).unwrap();
    assert_eq!(sent.content_type, "application/vnd.kubernetes.protobuf");
    let binding: Value = serde_json::from_str(&sent.body).unwrap();
    assert_eq!(binding["metadata"]["name"], "pending");
    assert_eq!(binding["metadata"]["uid"], json!(uid));
    assert_eq!(binding["target"], json!({"kind": "Node", "name": "n1"}));

    // kube-scheduler retries a bind whose answer it lost: already bound to that node is success.
    assert_eq!(bind(&server, "pending", &uid, "n1").await, "");

    let cases = [
        ("ghost", String::new(), "n1", "pod default/ghost was not found by the API server (404)"),
        ("running", String::new(), "n1", "pod default/running is already bound to node n2, not n1"),
        ("other", "not-its-uid".to_string(), "n1", "has UID"),
    ];
    for (pod, uid, node, want) in cases {
        let error = bind(&server, pod, &uid, node).await;
        assert!(error.contains(want), "{pod}: {error}");
    }
    let error = bind(&server, "other", "not-its-uid", "n1").await;
    assert!(error.contains("deleted and re-created since it was scheduled"), "{error}");

    api.forbid("create", "pods/binding");
    let error = bind(&server, "other", "", "n1").await;
    assert!(error.contains("(403)"), "{error}");
    assert!(error.contains(r#"RBAC verb "create" on resource "pods/binding" in namespace default"#), "{error}");
    assert!(error.contains("cannot create resource"), "the API server's own words: {error}");
    api.allow("create", "pods/binding");
    assert_eq!(bind(&server, "other", "", "n1").await, "");
}

#[tokio::test]
async fn a_bind_is_assumed_at_once_and_two_pods_cannot_both_take_the_last_cpu() {
    let (api, server) = cluster().await;
    api.apply(pod_json("default", "fill-n1", "n1", "3"));
    api.apply(pod_json("default", "fill-n2", "n2", "3500m"));
    api.apply(pod_json("default", "a", "", "1"));
    api.apply(pod_json("default", "b", "", "1"));
    eventually("pods known", DEADLINE, || async { (model_pods(&server).len() == 4).then_some(()) }).await;
    let (a, b) = (incoming("a", "1"), incoming("b", "1"));
    // Both pods see the last cpu of n1.
    assert_eq!(feasible_for(&server, &a).await, ["n1"]);
    assert_eq!(feasible_for(&server, &b).await, ["n1"]);

    // The watch is held back: only the assumption can tell the next filter about the bind.
    api.hold_events(true);
    assert_eq!(bind(&server, "a", &uid_of(&api, "a"), "n1").await, "");
    assert_eq!(feasible_for(&server, &b).await, Vec::<String>::new(), "b no longer gets n1");
    api.hold_events(false);
}

/// kube-scheduler's order (assume, then bind, forget on failure; `schedule_one.go`): the pod
/// counts on its node while the Binding is in flight, which is when kube-scheduler is already
/// filtering the next pod, and stops counting the moment the binding fails.
#[tokio::test]
async fn a_pod_counts_on_its_node_while_its_binding_is_in_flight_and_not_after_it_fails() {
    let (api, server) = cluster().await;
    api.apply(pod_json("default", "fill-n1", "n1", "3"));
    api.apply(pod_json("default", "a", "", "1"));
    eventually("pods known", DEADLINE, || async { (model_pods(&server).len() == 2).then_some(()) }).await;
    let b = incoming("b", "1");
    assert_eq!(feasible_for(&server, &b).await, ["n1", "n2"]);
    api.bind_faults(Some(Box::new(|_, _| Some(fake_apiserver::BindFault::HangThenFail(Duration::from_secs(2))))));
    let uid = uid_of(&api, "a");
    let answered = std::sync::atomic::AtomicBool::new(false);
    let binding = async {
        let error = bind(&server, "a", &uid, "n1").await;
        answered.store(true, std::sync::atomic::Ordering::SeqCst);
        error
    };
    let meanwhile = async {
        until_feasible(&server, &b, &["n2"], "a assumed on n1 while its binding hangs").await;
        answered.load(std::sync::atomic::Ordering::SeqCst)
    };
    let (error, answered_first) = tokio::join!(binding, meanwhile);
    assert!(!answered_first, "the assumption showed only after the binding answered");
    assert!(!error.is_empty(), "the binding failed");
    assert_eq!(feasible_for(&server, &b).await, ["n1", "n2"], "forgotten at once, not after the TTL");
    assert_eq!(model_pods(&server)["default/a"], "", "a is pending again");
}

#[tokio::test]
async fn an_assumption_the_watch_never_confirms_expires() {
    let api = FakeApiServer::start().await;
    api.apply(node_json("n1", "4", "8Gi", "110"));
    api.apply(node_json("n2", "4", "8Gi", "110"));
    api.apply(pod_json("default", "a", "", "3"));
    let mut c = live_config(&api);
    c.assume_ttl = Duration::from_millis(500);
    let server = TestServer::start(c).await;
    wait_ready(&server).await;
    let b = incoming("b", "2");
    until_feasible(&server, &b, &["n1", "n2"], "both free").await;

    api.hold_events(true);
    assert_eq!(bind(&server, "a", &uid_of(&api, "a"), "n1").await, "");
    assert_eq!(feasible_for(&server, &b).await, ["n2"], "assumed on n1");
    // No watch event confirms it: after the TTL the model goes back to what the watch said.
    until_feasible(&server, &b, &["n1", "n2"], "the assumption expired").await;
    // The held event arrives: the pod is on n1 for real.
    api.hold_events(false);
    until_feasible(&server, &b, &["n2"], "the watch confirmed the binding").await;
}

#[tokio::test]
async fn readyz_turns_503_while_a_watch_keeps_failing_and_recovers() {
    let api = FakeApiServer::start().await;
    api.apply(node_json("n1", "4", "8Gi", "110"));
    let mut c = live_config(&api);
    c.max_cache_staleness = Duration::from_millis(300);
    let server = TestServer::start(c).await;
    wait_ready(&server).await;

    api.forbid("watch", "nodes");
    api.forbid("list", "nodes");
    api.drop_watches();
    let url = format!("{}/readyz", server.admin);
    let body = eventually("readyz 503", DEADLINE, || async {
        let (status, body) = server.get(&url).await;
        (status == 503).then_some(body)
    })
    .await;
    let report: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(report["stale"][0]["resource"], "nodes", "{body}");
    assert!(report["stale"][0]["lastError"].as_str().unwrap().contains("forbidden"), "{body}");
    assert!(report.get("notSynced").is_none(), "synced once, now stale: {body}");

    api.allow("watch", "nodes");
    api.allow("list", "nodes");
    wait_ready(&server).await;
}

#[tokio::test]
async fn bind_reports_a_slow_api_server_and_an_unreachable_one() {
    // Slow: no answer within the deadline; the binding may have happened, so no retry here.
    let api = FakeApiServer::start().await;
    api.apply(node_json("n1", "4", "8Gi", "110"));
    api.apply(pod_json("default", "p", "", "1"));
    let mut c = live_config(&api);
    c.request_timeout = Duration::from_millis(400);
    let server = TestServer::start(c).await;
    wait_ready(&server).await;
    api.set_delay(Duration::from_secs(2));
    let error = bind(&server, "p", "", "n1").await;
    assert!(error.contains("the API server did not answer within 400ms"), "{error}");
    let posts = api.requests().iter().filter(|r| r.path.ends_with("/binding")).count();
    assert_eq!(posts, 1, "a timed-out bind is not retried");

    // Unreachable: nothing listens at the address; connection errors are retried, then reported.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters: [{{name: c, cluster: {{server: 'http://{closed}'}}}}]\n\
             users: [{{name: u, user: {{token: t}}}}]\ncontexts: [{{name: x, context: {{cluster: c, user: u}}}}]\n\
             current-context: x\n"
        ),
    )
    .unwrap();
    let server = TestServer::start(config(ClusterSource::Kube(Connection::Kubeconfig(kubeconfig)))).await;
    let error = bind(&server, "p", "", "n1").await;
    assert!(error.contains("the API server is unreachable after 3 attempts"), "{error}");
}

#[tokio::test]
async fn explain_lists_a_live_cluster_once() {
    let api = FakeApiServer::start().await;
    api.apply(node_json("n1", "4", "8Gi", "110"));
    api.apply(node_json("n2", "4", "8Gi", "110"));
    api.apply(pod_json("default", "big", "n1", "3500m"));
    let dir = tempfile::tempdir().unwrap();
    let pod_file = dir.path().join("pod.json");
    std::fs::write(&pod_file, incoming("incoming", "1").to_string()).unwrap();
    let kubeconfig = api.kubeconfig_path();
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_predicate-extender"))
            .args(["explain", "--format", "json", "--pod"])
            .arg(&pod_file)
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = report.to_string();
    assert!(text.contains("Insufficient cpu"), "n1 is full in the listed cluster: {text}");
    assert!(text.contains("1/2 nodes are available"), "{text}");
}

#[tokio::test]
async fn a_pod_the_watch_has_not_delivered_is_read_from_the_api_server_and_assumed() {
    let (api, server) = cluster().await;
    api.apply(pod_json("default", "fill", "n1", "3"));
    eventually("fill known", DEADLINE, || async { (model_pods(&server).len() == 1).then_some(()) }).await;
    // The watch lags: the new pod never reaches the extender before its bind.
    api.hold_events(true);
    api.apply(pod_json("default", "late", "", "1"));
    assert_eq!(bind(&server, "late", &uid_of(&api, "late"), "n1").await, "");
    assert_eq!(feasible_for(&server, &incoming("b", "1")).await, ["n2"], "late's cpu counts on n1");
    api.hold_events(false);
    eventually("the model catches up", DEADLINE, || async { (model_pods(&server) == truth_pods(&api)).then_some(()) })
        .await;
    assert_eq!(feasible_for(&server, &incoming("b", "1")).await, ["n2"]);
}
