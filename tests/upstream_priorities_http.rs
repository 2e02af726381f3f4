//! Issue 14 through the running server, in both nodeCacheCapable modes (candidates as `NodeNames`,
//! and as `Nodes` objects): explicit zero requests in the resource priorities, ResourceLimitsPriority,
//! PodFitsResources' ignored extended resources, and how /prioritize combines the default
//! priorities. The expected numbers are upstream's (named at each case) or worked out by hand in
//! the comments.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod common;

use common::{cluster, config, feasible, policy, TestServer};
use serde_json::{json, Value};

/// A node with this allocatable cpu and memory (upstream's `makeNode`, memory in bytes).
fn node(name: &str, cpu: &str, memory: &str) -> Value {
    json!({"kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
           "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"},
                      "conditions": [{"type": "Ready", "status": "True"}]}})
}

/// A pod; `node` "" for the pending one. `containers` are the containers' `resources`.
fn pod(name: &str, node: &str, containers: &[Value]) -> Value {
    let containers: Vec<Value> =
        containers.iter().enumerate().map(|(i, r)| json!({"name": format!("c{i}"), "resources": r})).collect();
    let mut pod = json!({"kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}")},
                         "spec": {"containers": containers}});
    if !node.is_empty() {
        pod["spec"]["nodeName"] = json!(node);
    }
    pod
}

fn requests(cpu: &str, memory: &str) -> Value {
    json!({"requests": {"cpu": cpu, "memory": memory}})
}

/// A server on a cluster of these nodes and pods, with this Policy (`None`: the defaults).
async fn start_server(nodes: &[Value], pods: &[Value], policy_text: Option<&str>) -> TestServer {
    let items: Vec<Value> = nodes.iter().chain(pods).cloned().collect();
    let mut c = config(cluster(&json!({"kind": "List", "apiVersion": "v1", "items": items}).to_string()));
    if let Some(text) = policy_text {
        c.policy = policy(text);
    }
    TestServer::start(c).await
}

/// The two bodies for `pod` over `nodes`: by name, and as node objects.
fn both_modes(pending: &Value, nodes: &[Value]) -> [(&'static str, String); 2] {
    let names: Vec<&Value> = nodes.iter().map(|n| &n["metadata"]["name"]).collect();
    [
        ("NodeNames", json!({"Pod": pending, "NodeNames": names}).to_string()),
        ("Nodes", json!({"Pod": pending, "Nodes": {"metadata": {}, "items": nodes}}).to_string()),
    ]
}

/// /prioritize's scores, the same in both modes.
async fn prioritize(server: &TestServer, pending: &Value, nodes: &[Value]) -> Vec<i64> {
    let mut answers = Vec::new();
    for (mode, body) in both_modes(pending, nodes) {
        let (status, answer) = server.post("/prioritize", body).await;
        assert_eq!(status, 200, "{mode}: {answer}");
        let hosts: Vec<&Value> = answer.as_array().unwrap().iter().map(|e| &e["Host"]).collect();
        let names: Vec<&Value> = nodes.iter().map(|n| &n["metadata"]["name"]).collect();
        assert_eq!(hosts, names, "{mode}");
        answers.push(answer.as_array().unwrap().iter().map(|e| e["Score"].as_i64().unwrap()).collect::<Vec<_>>());
    }
    assert_eq!(answers[0], answers[1], "NodeNames and Nodes score the same");
    answers.swap_remove(0)
}

/// /filter's feasible nodes and FailedNodes, the same in both modes.
async fn filter(server: &TestServer, pending: &Value, nodes: &[Value]) -> (Vec<String>, Value) {
    let mut answers = Vec::new();
    for (mode, body) in both_modes(pending, nodes) {
        let (status, answer) = server.post("/filter", body).await;
        assert_eq!(status, 200, "{mode}: {answer}");
        assert_eq!(answer["Error"], "", "{mode}: {answer}");
        answers.push((feasible(&answer), answer["FailedNodes"].clone()));
    }
    assert_eq!(answers[0], answers[1], "NodeNames and Nodes filter the same");
    answers.swap_remove(0)
}

/// Item 1. upstream: TestLeastRequested / TestMostRequested / TestBalancedResourceAllocation
/// (1.12-1.16), case "no resources requested, pods scheduled with resources": the placed `cpuOnly`
/// pods write memory as "0", which counts as zero (not as the 200Mi default). Upstream expects 7
/// and 5 (LeastRequested), 3 and 4 (MostRequested), 4 and 6 (Balanced).
#[tokio::test(flavor = "multi_thread")]
async fn explicit_zero_requests_count_as_zero_in_the_resource_priorities() {
    let nodes = [node("machine1", "10000m", "20000"), node("machine2", "10000m", "20000")];
    let cpu_only = |name: &str, node: &str| pod(name, node, &[requests("1000m", "0"), requests("2000m", "0")]);
    let cpu_and_memory = pod("d", "machine2", &[requests("1000m", "2000"), requests("2000m", "3000")]);
    let placed = [cpu_only("a", "machine1"), cpu_only("b", "machine1"), cpu_only("c", "machine2"), cpu_and_memory];
    let no_resources = pod("p", "", &[]);
    for (priority, want) in
        [("LeastRequestedPriority", [7, 5]), ("MostRequestedPriority", [3, 4]), ("BalancedResourceAllocation", [4, 6])]
    {
        let text =
            format!(r#"{{"kind":"Policy","apiVersion":"v1","priorities":[{{"name":"{priority}","weight":1}}]}}"#);
        let server = start_server(&nodes, &placed, Some(&text)).await;
        assert_eq!(prioritize(&server, &no_resources, &nodes).await, want, "{priority}");
        server.stop().await;
    }
}

/// Item 6. upstream: TestResourceLimistPriority (1.11-1.16), cases "pod only specifies  cpu
/// limits" (1, 0) and "pod specifies both cpu and  mem limits" (1, 1); and a pod without limits
/// scores 0 everywhere.
#[tokio::test(flavor = "multi_thread")]
async fn resource_limits_priority_in_a_policy() {
    let text = r#"{"kind":"Policy","apiVersion":"v1","priorities":[{"name":"ResourceLimitsPriority","weight":1}]}"#;
    let limits = |cpu: &str, memory: &str| json!({"limits": {"cpu": cpu, "memory": memory}});
    let cpu_only = pod("p", "", &[limits("1000m", "0"), limits("2000m", "0")]);
    let nodes = [node("machine1", "3000m", "10000"), node("machine2", "2000m", "10000")];
    let server = start_server(&nodes, &[], Some(text)).await;
    assert_eq!(prioritize(&server, &cpu_only, &nodes).await, [1, 0], "pod only specifies cpu limits");
    assert_eq!(prioritize(&server, &pod("q", "", &[requests("1", "1Gi")]), &nodes).await, [0, 0], "no limits");
    server.stop().await;

    let both = pod("p", "", &[limits("1000m", "2000"), limits("2000m", "3000")]);
    let nodes = [node("machine1", "4000m", "4000"), node("machine2", "5000m", "10000")];
    let server = start_server(&nodes, &[], Some(text)).await;
    assert_eq!(prioritize(&server, &both, &nodes).await, [1, 1], "pod specifies both cpu and mem limits");
    server.stop().await;
}

/// Item 7. upstream: TestPodFitsResources "skip checking ignored extended resource" (1.12-1.17)
/// and TestEnoughRequests "skip checking ignored extended resource via resource groups" (1.20).
/// GeneralPredicates, listed too, skips the same resources.
#[tokio::test(flavor = "multi_thread")]
async fn pod_fits_resources_skips_ignored_extended_resources() {
    let nodes = [
        node("n1", "4", "8Gi"),
        json!({"kind": "Node", "metadata": {"name": "n2"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110", "example.com/ccc": "1"}}}),
    ];
    let asking = |resources: &[(&str, &str)]| {
        let mut r = json!({"cpu": "1m", "memory": "1"});
        for (k, v) in resources {
            r[*k] = json!(v);
        }
        pod("p", "", &[json!({"requests": r})])
    };
    let ignored = r#"{"ignoredResources":["example.com/bbb"],"ignoredResourceGroups":["devices.example.org"]}"#;
    for predicates in [
        format!(r#"[{{"name":"PodFitsResources","argument":{ignored}}}]"#),
        format!(r#"[{{"name":"GeneralPredicates"}},{{"name":"PodFitsResources","argument":{ignored}}}]"#),
    ] {
        let text = format!(r#"{{"kind":"Policy","apiVersion":"v1","predicates":{predicates}}}"#);
        let server = start_server(&nodes, &[], Some(&text)).await;
        let (fits, failed) =
            filter(&server, &asking(&[("example.com/bbb", "1"), ("devices.example.org/fpga", "2")]), &nodes).await;
        assert_eq!(fits, ["n1", "n2"], "{predicates}: ignored resources are not checked ({failed})");
        let (fits, failed) =
            filter(&server, &asking(&[("example.com/bbb", "1"), ("example.com/ccc", "1")]), &nodes).await;
        assert_eq!(fits, ["n2"], "{predicates}");
        assert_eq!(failed, json!({"n1": "Insufficient example.com/ccc"}), "{predicates}");
        server.stop().await;
    }
    // Without the argument the same pod fits nowhere.
    let server = start_server(&nodes, &[], None).await;
    let (fits, failed) =
        filter(&server, &asking(&[("example.com/bbb", "1"), ("devices.example.org/fpga", "2")]), &nodes).await;
    assert!(fits.is_empty(), "{failed}");
    server.stop().await;
}

/// Item 9. The default priorities on four 4-cpu, 16Gi nodes, the pod asking 1 cpu and 2Gi. Nothing
/// selects the pod, so SelectorSpreadPriority gives 10 everywhere; TaintTolerationPriority 10;
/// InterPodAffinity, NodeAffinity and ImageLocality 0. The answer is the rounded mean of those 7
/// weights, except on n4, whose preferAvoidPods annotation names the pod's ReplicaSet: NodePreferAvoid
/// weighs 10000 >= 7, a veto, so 0.
/// - n1 empty: cpu 1000/4000, memory 2Gi/16Gi. LeastRequested (7 + 8) / 2 = 7; Balanced
///   (1 - |0.25 - 0.125|) * 10 = 8. (10 + 0 + 7 + 8 + 0 + 10 + 0) / 7 = 35/7 = 5.
/// - n2 with a 2-cpu, 2Gi pod: cpu 3000, memory 4Gi. LeastRequested (2 + 7) / 2 = 4; Balanced
///   (1 - 0.5) * 10 = 5. 29/7 = 4.14 -> 4.
/// - n3 with a 1-cpu, 4Gi pod: cpu 2000, memory 6Gi. LeastRequested (5 + 6) / 2 = 5; Balanced
///   (1 - 0.125) * 10 = 8. 33/7 = 4.71 -> 5 (the floor gave 4).
///
/// The classic weighted sums are 100035, 100029, 100033 and 35: the answers 5, 4, 5, 0 keep that
/// order (n1 and n3 tie, less than one point apart). Before, every node not avoided answered 9.
#[tokio::test(flavor = "multi_thread")]
async fn default_priorities_veto_avoided_nodes_and_rank_the_rest() {
    let sized = |name: &str| node(name, "4", "16Gi");
    let mut avoided = sized("n4");
    let annotation = json!({"preferAvoidPods": [{"podSignature": {"podController": {"apiVersion": "apps/v1",
        "kind": "ReplicaSet", "name": "web-7d4b9c", "uid": "uid-rs-web", "controller": true}}, "reason": "draining"}]});
    avoided["metadata"]["annotations"] =
        json!({"scheduler.alpha.kubernetes.io/preferAvoidPods": annotation.to_string()});
    let nodes = [sized("n1"), sized("n2"), sized("n3"), avoided];
    let placed = [pod("x", "n2", &[requests("2", "2Gi")]), pod("y", "n3", &[requests("1", "4Gi")])];
    let mut web = pod("web-1", "", &[requests("1", "2Gi")]);
    web["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d4b9c",
        "uid": "uid-rs-web", "controller": true}]);
    let server = start_server(&nodes, &placed, None).await;
    assert_eq!(prioritize(&server, &web, &nodes).await, [5, 4, 5, 0]);
    server.stop().await;
}
