//! /filter and /bind over HTTP against the real server.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod common;

use common::{cluster, config, demo_node_list, feasible, policy, web_2, TestServer, DEMO_NODES};
use predicate_extender::server::ClusterSource;
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread")]
async fn names_and_nodes_modes_agree_in_both_key_casings() {
    let server = TestServer::demo().await;
    let by_names = json!({"Pod": web_2(), "Nodes": null, "NodeNames": DEMO_NODES});
    let by_nodes = json!({"Pod": web_2(), "Nodes": demo_node_list(), "NodeNames": null});
    let old_names = json!({"pod": web_2(), "nodenames": DEMO_NODES});
    let old_nodes = json!({"pod": web_2(), "nodes": demo_node_list()});

    let (status, names_answer) = server.post("/filter", by_names.to_string()).await;
    assert_eq!(status, 200);
    assert_eq!(feasible(&names_answer), ["node-b1", "node-b3"]);
    assert_eq!(names_answer["Nodes"], Value::Null);

    for body in [&by_nodes, &old_nodes] {
        let (status, answer) = server.post("/filter", body.to_string()).await;
        assert_eq!(status, 200);
        assert_eq!(feasible(&answer), ["node-b1", "node-b3"]);
        assert_eq!(answer["NodeNames"], Value::Null, "Nodes in, Nodes out");
        assert_eq!(answer["Nodes"]["metadata"], json!({"resourceVersion": "42"}));
        assert_eq!(answer["FailedNodes"], names_answer["FailedNodes"]);
        assert_eq!(answer["FailedAndUnresolvableNodes"], names_answer["FailedAndUnresolvableNodes"]);
        // The node objects come back unchanged.
        assert_eq!(answer["Nodes"]["items"][0], demo_node_list()["items"][3]);
    }
    let (status, answer) = server.post("/filter", old_names.to_string()).await;
    assert_eq!(status, 200);
    assert_eq!(answer, names_answer);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn reasons_split_by_whether_preemption_can_help() {
    let server = TestServer::demo().await;
    let (_, answer) = server.post("/filter", json!({"Pod": web_2(), "NodeNames": DEMO_NODES}).to_string()).await;
    assert_eq!(
        answer["FailedNodes"],
        json!({
            "node-a1": "node(s) didn't have free ports for the requested pod ports",
            "node-b2": "Insufficient cpu",
        })
    );
    assert_eq!(
        answer["FailedAndUnresolvableNodes"],
        json!({
            "node-a2": "node(s) were unschedulable",
            "node-a3": "node(s) had taints that the pod didn't tolerate",
        })
    );
    assert_eq!(answer["Error"], "");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_node_names_fail_without_failing_the_request() {
    let server = TestServer::demo().await;
    let (status, answer) =
        server.post("/filter", json!({"Pod": web_2(), "NodeNames": ["node-b1", "node-new"]}).to_string()).await;
    assert_eq!(status, 200);
    assert_eq!(feasible(&answer), ["node-b1"]);
    assert_eq!(answer["FailedNodes"]["node-new"], "node is not in the extender's cluster cache yet");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn no_fitting_node_still_answers_an_empty_list_of_the_request_mode() {
    let server = TestServer::demo().await;
    let (_, answer) = server.post("/filter", json!({"Pod": web_2(), "NodeNames": ["node-a2"]}).to_string()).await;
    assert_eq!(answer["NodeNames"], json!([]));
    let (_, answer) = server.post("/filter", json!({"Pod": web_2(), "NodeNames": []}).to_string()).await;
    assert_eq!(answer["NodeNames"], json!([]));
    let (_, answer) =
        server.post("/filter", json!({"Pod": web_2(), "Nodes": {"metadata": {}, "items": []}}).to_string()).await;
    assert_eq!(answer["Nodes"], json!({"metadata": {}, "items": []}));
    let (_, answer) = server.post("/filter", json!({"Pod": web_2(), "Nodes": {"items": null}}).to_string()).await;
    assert_eq!(answer["Nodes"]["items"], json!([]));
    server.stop().await;
}

/// One node that fails three predicates at once: not ready, tainted, and short of cpu.
const TROUBLED: &str = r#"
apiVersion: v1
kind: List
items:
- kind: Node
  metadata: {name: troubled}
  spec:
    taints: [{key: dedicated, value: gpu, effect: NoSchedule}]
  status:
    allocatable: {cpu: "1", memory: 1Gi, pods: "10"}
    conditions: [{type: Ready, status: "False"}]
- kind: Node
  metadata: {name: fine}
  status:
    allocatable: {cpu: "8", memory: 8Gi, pods: "10"}
    conditions: [{type: Ready, status: "True"}]
"#;

fn big_pod_args() -> String {
    json!({
        "Pod": {"metadata": {"name": "big", "namespace": "default"},
                "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]}},
        "NodeNames": ["troubled", "fine"],
    })
    .to_string()
}

async fn troubled_answer(policy_text: &str) -> Value {
    let mut c = config(cluster(TROUBLED));
    c.policy = policy(policy_text);
    let server = TestServer::start(c).await;
    let (status, answer) = server.post("/filter", big_pod_args()).await;
    assert_eq!(status, 200);
    assert_eq!(feasible(&answer), ["fine"]);
    server.stop().await;
    answer
}

#[tokio::test(flavor = "multi_thread")]
async fn policy_order_decides_which_reason_is_reported() {
    let static_order = r#"{"kind":"Policy","apiVersion":"v1","predicates":[
        {"name":"PodFitsResources"},{"name":"PodToleratesNodeTaints"},{"name":"CheckNodeCondition"}]}"#;
    let answer = troubled_answer(static_order).await;
    assert_eq!(answer["FailedAndUnresolvableNodes"], json!({"troubled": "node(s) were not ready"}));
    assert_eq!(answer["FailedNodes"], json!({}));

    let resources_first = r#"{"kind":"Policy","apiVersion":"v1","predicates":[
        {"name":"PodFitsResources","order":1},{"name":"PodToleratesNodeTaints"},{"name":"CheckNodeCondition"}]}"#;
    let answer = troubled_answer(resources_first).await;
    assert_eq!(answer["FailedNodes"], json!({"troubled": "Insufficient cpu"}), "resolvable alone");
    assert_eq!(answer["FailedAndUnresolvableNodes"], json!({}));

    let taints_first = r#"{"kind":"Policy","apiVersion":"v1","predicates":[
        {"name":"PodFitsResources","order":2},{"name":"PodToleratesNodeTaints","order":1},{"name":"CheckNodeCondition"}]}"#;
    let answer = troubled_answer(taints_first).await;
    assert_eq!(
        answer["FailedAndUnresolvableNodes"],
        json!({"troubled": "node(s) had taints that the pod didn't tolerate"})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn always_check_all_predicates_reports_every_reason_in_order() {
    let all = r#"{"kind":"Policy","apiVersion":"v1","alwaysCheckAllPredicates":true,"predicates":[
        {"name":"PodFitsResources","order":1},{"name":"PodToleratesNodeTaints"},{"name":"CheckNodeCondition"}]}"#;
    let answer = troubled_answer(all).await;
    assert_eq!(
        answer["FailedAndUnresolvableNodes"],
        json!({"troubled": "Insufficient cpu, node(s) were not ready, node(s) had taints that the pod didn't tolerate"}),
        "any unresolvable reason makes the node unresolvable"
    );
    assert_eq!(answer["FailedNodes"], json!({}));
}

#[tokio::test(flavor = "multi_thread")]
async fn url_prefix_moves_the_verbs_and_unknown_verbs_are_404() {
    let mut c = config(ClusterSource::Demo);
    c.url_prefix = "/scheduler".to_string();
    let server = TestServer::start(c).await;
    let body = json!({"Pod": web_2(), "NodeNames": ["node-b1"]}).to_string();
    let (status, answer) = server.post("/scheduler/filter", body.clone()).await;
    assert_eq!((status, feasible(&answer)), (200, vec!["node-b1".to_string()]));
    let (status, _) = server.post_text("/filter", body.clone()).await;
    assert_eq!(status, 404);
    let (status, _) = server.post_text("/scheduler/preempt", r#"{"Pod":{}}"#).await;
    assert_eq!(status, 200, "/preempt moves under the prefix too");
    let (status, text) = server.post_text("/preempt", r#"{"Pod":{}}"#).await;
    assert_eq!((status, text.as_str()), (404, ""));
    let (status, text) = server.post_text("/scheduler/unknown", body.clone()).await;
    assert_eq!((status, text.as_str()), (404, ""), "verbs that do not exist are 404");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bind_outcomes() {
    let server = TestServer::demo().await;
    let bind = |pod: &str, uid: &str, node: &str| {
        json!({"PodName": pod, "PodNamespace": "default", "PodUID": uid, "Node": node}).to_string()
    };
    let uid = "0b7f2a10-1111-4c3e-8a55-00000000a102";
    let cases = [
        (bind("web-2", "wrong-uid", "node-b3"), "pod default/web-2 has UID 0b7f2a10-1111-4c3e-8a55-00000000a102, not wrong-uid: it was deleted and re-created since it was scheduled"),
        (bind("web-2", uid, "node-z9"), "node node-z9 is not known to the extender"),
        (bind("ghost", "", "node-b3"), "pod default/ghost is not known to the extender"),
        (bind("web-2", uid, "node-b3"), ""),
        (bind("web-2", uid, "node-b3"), ""),
        (bind("web-2", "", "node-b1"), "pod default/web-2 is already bound to node node-b3, not node-b1"),
        (bind("web-1", "", "node-a1"), ""),
    ];
    for (body, want) in cases {
        let (status, answer) = server.post("/bind", body.clone()).await;
        assert_eq!((status, answer), (200, json!({"Error": want})), "{body}");
    }
    // The bound pod now holds its cpu and port on node-b3.
    let (_, answer) = server.post("/filter", json!({"Pod": web_2(), "NodeNames": ["node-b3"]}).to_string()).await;
    assert_eq!(
        answer["FailedNodes"]["node-b3"],
        "Insufficient cpu, node(s) didn't have free ports for the requested pod ports"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_example_policy_file_reorders_the_demo_answers() {
    let mut c = config(ClusterSource::Demo);
    c.policy =
        predicate_extender::server::PolicySource::File(common::fixture_path("../../examples/demo/policy-ordered.json"));
    let server = TestServer::start(c).await;
    let (_, answer) = server.post("/filter", json!({"Pod": web_2(), "NodeNames": DEMO_NODES}).to_string()).await;
    assert_eq!(
        answer["FailedAndUnresolvableNodes"]["node-a2"], "node(s) had taints that the pod didn't tolerate",
        "PodToleratesNodeTaints has order 1, so it reports before CheckNodeUnschedulable"
    );
    assert_eq!(feasible(&answer), ["node-b1", "node-b3"]);
    server.stop().await;
}
