//! /prioritize over HTTP: a score per candidate, in request order, in both nodeCacheCapable modes.

mod common;

use common::{cluster, config, policy, TestServer};
use predicate_extender::server::ClusterSource;
use serde_json::{json, Value};

const DEMO_NODES: [&str; 6] = ["node-a1", "node-a2", "node-a3", "node-b1", "node-b2", "node-b3"];

fn web_2() -> Value {
    let text = std::fs::read_to_string(common::fixture_path("../../examples/demo/filter-web-2.json")).unwrap();
    serde_json::from_str::<Value>(&text).unwrap()["Pod"].clone()
}

fn hosts(answer: &Value) -> Vec<String> {
    answer.as_array().unwrap().iter().map(|e| e["Host"].as_str().unwrap().to_string()).collect()
}

fn scores(answer: &Value) -> Vec<i64> {
    answer.as_array().unwrap().iter().map(|e| e["Score"].as_i64().unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn one_entry_per_candidate_in_request_order_in_both_modes() {
    let server = TestServer::demo().await;
    let order = ["node-b3", "node-a1", "node-b1", "node-a3"];
    let (status, by_names) = server.post("/prioritize", json!({"Pod": web_2(), "NodeNames": order}).to_string()).await;
    assert_eq!(status, 200, "{by_names}");
    assert_eq!(hosts(&by_names), order);
    assert!(scores(&by_names).iter().all(|s| (0..=10).contains(s)), "{by_names}");
    // Every entry has exactly Go's field names.
    for entry in by_names.as_array().unwrap() {
        assert_eq!(entry.as_object().unwrap().keys().collect::<Vec<_>>(), ["Host", "Score"]);
    }

    // The same nodes as objects (as kube-scheduler sends them without nodeCacheCapable).
    let yaml: serde_yaml::Value = serde_yaml::from_str(predicate_extender::cluster::source::demo::DEMO_YAML).unwrap();
    let mut items = Vec::new();
    for name in order {
        let node = yaml["items"]
            .as_sequence()
            .unwrap()
            .iter()
            .find(|i| i["kind"] == "Node" && i["metadata"]["name"] == name)
            .unwrap();
        items.push(serde_json::to_value(node).unwrap());
    }
    let (status, by_nodes) = server
        .post("/prioritize", json!({"pod": web_2(), "nodes": {"metadata": {}, "items": items}}).to_string())
        .await;
    assert_eq!(status, 200, "{by_nodes}");
    assert_eq!(by_nodes, by_names, "the same nodes score the same either way");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_nodes_score_zero() {
    let server = TestServer::demo().await;
    let body = json!({"Pod": web_2(), "NodeNames": ["node-new", "node-b1"]}).to_string();
    let (status, answer) = server.post("/prioritize", body).await;
    assert_eq!(status, 200);
    assert_eq!(hosts(&answer), ["node-new", "node-b1"]);
    assert_eq!(answer[0]["Score"], 0);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_requests_get_400_with_an_error() {
    let server = TestServer::demo().await;
    let (status, answer) = server.post("/prioritize", r#"{"NodeNames":["node-a1"]}"#).await;
    assert_eq!(status, 400);
    assert_eq!(answer, json!({"Error": "ExtenderArgs.Pod: missing field"}));
    server.stop().await;
}

const TWO_NODES: &str = r#"
apiVersion: v1
kind: List
items:
- kind: Node
  metadata: {name: labelled, labels: {ssd: "true"}}
  status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
- kind: Node
  metadata: {name: plain}
  status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
"#;

#[tokio::test(flavor = "multi_thread")]
async fn a_policy_weights_its_priorities() {
    let mut c = config(cluster(TWO_NODES));
    // EqualPriority scores 1 everywhere; with weight 1 against an empty set it is the whole score.
    c.policy = policy(r#"{"kind":"Policy","apiVersion":"v1","priorities":[{"name":"EqualPriority","weight":3}]}"#);
    let server = TestServer::start(c).await;
    let pod = json!({"metadata": {"name": "p", "namespace": "default"}, "spec": {"containers": [{"name": "c"}]}});
    let (status, answer) =
        server.post("/prioritize", json!({"Pod": pod, "NodeNames": ["plain", "labelled"]}).to_string()).await;
    assert_eq!(status, 200);
    assert_eq!(answer, json!([{"Host": "plain", "Score": 1}, {"Host": "labelled", "Score": 1}]));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_empty_priorities_list_scores_zero() {
    let mut c = config(ClusterSource::Demo);
    c.policy = policy(r#"{"kind":"Policy","apiVersion":"v1","priorities":[]}"#);
    let server = TestServer::start(c).await;
    let (_, answer) = server.post("/prioritize", json!({"Pod": web_2(), "NodeNames": DEMO_NODES}).to_string()).await;
    assert_eq!(scores(&answer), [0; 6]);
    server.stop().await;
}
