//! /prioritize over HTTP: a score per candidate, in request order, in both nodeCacheCapable modes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod common;

use common::{cluster, config, policy, web_2, TestServer};
use predicate_extender::server::ClusterSource;
use serde_json::{json, Value};

const DEMO_NODES: [&str; 6] = ["node-a1", "node-a2", "node-a3", "node-b1", "node-b2", "node-b3"];

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
    let yaml: serde_json::Value = serde_saphyr::from_str(predicate_engine::cluster::source::demo::DEMO_YAML).unwrap();
    let mut items = Vec::new();
    for name in order {
        let node = yaml["items"]
            .as_array()
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
    // Two NodeLabelPriority entries that disagree: PreferSSD scores 10 on `labelled`, 0 on `plain`;
    // AvoidSSD the reverse. By hand, (4 * PreferSSD + 1 * AvoidSSD) / 5:
    //   labelled (4*10 + 1*0) / 5 = 8, plain (4*0 + 1*10) / 5 = 2 (exact: floor and round agree).
    // Weights ignored would give 5 and 5, weights swapped 2 and 8.
    c.policy = policy(
        r#"{"kind":"Policy","apiVersion":"v1","priorities":[
            {"name":"PreferSSD","weight":4,"argument":{"labelPreference":{"label":"ssd","presence":true}}},
            {"name":"AvoidSSD","weight":1,"argument":{"labelPreference":{"label":"ssd","presence":false}}}
        ]}"#,
    );
    let server = TestServer::start(c).await;
    let pod = json!({"metadata": {"name": "p", "namespace": "default"}, "spec": {"containers": [{"name": "c"}]}});
    let (status, answer) =
        server.post("/prioritize", json!({"Pod": pod, "NodeNames": ["plain", "labelled"]}).to_string()).await;
    assert_eq!(status, 200);
    assert_eq!(answer, json!([{"Host": "plain", "Score": 2}, {"Host": "labelled", "Score": 8}]));
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

#[tokio::test(flavor = "multi_thread")]
async fn the_example_priorities_policy_on_the_demo() {
    let mut c = config(ClusterSource::Demo);
    c.policy = predicate_extender::server::PolicySource::File(common::fixture_path(
        "../../examples/demo/policy-priorities.json",
    ));
    let server = TestServer::start(c).await;
    let (status, answer) =
        server.post("/prioritize", json!({"Pod": web_2(), "NodeNames": DEMO_NODES}).to_string()).await;
    assert_eq!(status, 200);
    // web-2 asks 1 cpu / 1Gi. Two nodes by hand (LeastRequested w2, Balanced w1, ImageLocality w1,
    // PreferAvoid w4, PreferSSD w2; sum 10). PreferAvoid's weight 4 is less than the others' 6, so
    // it is an ordinary term of the mean, not a veto (see engine::combine); means round to nearest:
    // node-a1: non-zero requested with the pod 2100m of 4 cpu, 3272Mi of 8Gi -> LeastRequested
    //   ((4000-2100)*10/4000=4 + (8192-3272)*10/8192=6)/2 = 5; Balanced 10-|0.525-0.399|*10 = 8;
    //   nginx is on 2 of 6 nodes: 72MB*2/6 = 24MB < 23MiB threshold -> 0; not avoided 10; ssd 10
    //   -> (2*5 + 8 + 0 + 4*10 + 2*10) / 10 = 7.8 -> 8.
    // node-b1: 1100m, 1224Mi -> LeastRequested (7+8)/2 = 7; Balanced 8; image 0; avoided 0; ssd 10
    //   -> (14 + 8 + 0 + 0 + 20) / 10 = 4.2 -> 4.
    assert_eq!(scores(&answer), [8, 8, 7, 4, 6, 7]);
    server.stop().await;
}
