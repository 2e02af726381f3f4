//! /preempt over HTTP against the real server on the demo cluster: which candidate nodes stay, with
//! which victims, in every argument form kube-scheduler sends.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod common;

use common::{config, TestServer};
use predicate_extender::server::ClusterSource;
use serde_json::{json, Value};

const BATCH_1: &str = "0b7f2a10-1111-4c3e-8a55-00000000b201"; // node-b2, 3 cpu, priority 100
const WEB_1: &str = "0b7f2a10-1111-4c3e-8a55-00000000a101"; // node-a1, 1 cpu
const INGRESS_1: &str = "0b7f2a10-1111-4c3e-8a55-00000000b301"; // node-b3, 500m
const CACHE_1: &str = "0b7f2a10-1111-4c3e-8a55-00000000b101"; // node-b1

/// The README's request: report-job (priority 500, 1500m cpu, 1Gi).
fn example() -> Value {
    let text = std::fs::read_to_string(common::fixture_path("../../examples/demo/preempt-report-job.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn report_job() -> Value {
    example()["Pod"].clone()
}

/// A pod of the demo cluster as its full object, found by UID.
fn demo_pod(uid: &str) -> Value {
    let yaml: serde_json::Value = serde_saphyr::from_str(predicate_engine::cluster::source::demo::DEMO_YAML).unwrap();
    let pod = yaml["items"].as_array().unwrap().iter().find(|i| i["kind"] == "Pod" && i["metadata"]["uid"] == uid);
    serde_json::to_value(pod.unwrap_or_else(|| panic!("no demo pod {uid}"))).unwrap()
}

/// `{node: ([uids], NumPDBViolations)}` as `NodeNameToMetaVictims`.
fn meta(victims: &[(&str, &[&str], i64)]) -> Value {
    let mut map = serde_json::Map::new();
    for (node, uids, pdb) in victims {
        let pods: Vec<Value> = uids.iter().map(|u| json!({"UID": u})).collect();
        map.insert(node.to_string(), json!({"Pods": pods, "NumPDBViolations": pdb}));
    }
    Value::Object(map)
}

/// The same victims as full pods (`NodeNameToVictims`).
fn full(victims: &[(&str, &[&str], i64)]) -> Value {
    let mut map = serde_json::Map::new();
    for (node, uids, pdb) in victims {
        let pods: Vec<Value> = uids.iter().map(|u| demo_pod(u)).collect();
        map.insert(node.to_string(), json!({"Pods": pods, "NumPDBViolations": pdb}));
    }
    Value::Object(map)
}

async fn preempt(server: &TestServer, body: Value) -> Value {
    let (status, answer) = server.post("/preempt", body.to_string()).await;
    assert_eq!(status, 200, "{answer}");
    answer
}

#[tokio::test(flavor = "multi_thread")]
async fn every_argument_form_and_casing_gets_the_same_meta_victims() {
    let server = TestServer::demo().await;
    let victims: &[(&str, &[&str], i64)] = &[
        // Feasible after evicting batch-1 (critical-job, nominated there, still takes 1 of the 4 cpu).
        ("node-b2", &[BATCH_1], 1),
        // Fits as it is: web-1 is reprieved.
        ("node-a1", &[WEB_1], 0),
        // Tainted dedicated=gpu: evicting nothing helps.
        ("node-a3", &[], 0),
    ];
    let want = json!({"NodeNameToMetaVictims": {
        "node-a1": {"Pods": [], "NumPDBViolations": 0},
        "node-b2": {"Pods": [{"UID": BATCH_1}], "NumPDBViolations": 1},
    }});
    let lower_meta = {
        let mut m = serde_json::Map::new();
        for (node, uids, pdb) in victims {
            let pods: Vec<Value> = uids.iter().map(|u| json!({"uid": u})).collect();
            m.insert(node.to_string(), json!({"pods": pods, "numpdbviolations": pdb}));
        }
        Value::Object(m)
    };
    let bodies = [
        (
            "NodeNameToMetaVictims",
            json!({"Pod": report_job(), "NodeNameToVictims": null, "NodeNameToMetaVictims": meta(victims)}),
        ),
        ("nodenametometavictims", json!({"pod": report_job(), "nodenametometavictims": lower_meta})),
        (
            "NodeNameToVictims",
            json!({"Pod": report_job(), "NodeNameToVictims": full(victims), "NodeNameToMetaVictims": null}),
        ),
        ("nodeToVictims (kube-scheduler 1.13)", json!({"pod": report_job(), "nodeToVictims": full(victims)})),
    ];
    for (form, body) in bodies {
        assert_eq!(preempt(&server, body).await, want, "{form}");
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_node_stays_only_if_the_pod_fits_once_its_victims_are_gone() {
    let server = TestServer::demo().await;
    let body = |victims: &[(&str, &[&str], i64)]| json!({"Pod": report_job(), "NodeNameToMetaVictims": meta(victims)});
    // node-b2 without evicting batch-1: 1 cpu free, and critical-job takes it.
    let answer = preempt(&server, body(&[("node-b2", &[], 0)])).await;
    assert_eq!(answer, json!({"NodeNameToMetaVictims": {}}));
    // node-b1: cache-1 requests nothing; node-b1's memory pressure only refuses BestEffort pods,
    // so report-job fits without evicting it: cache-1 is reprieved.
    let answer = preempt(&server, body(&[("node-b1", &[CACHE_1], 3)])).await;
    assert_eq!(answer, json!({"NodeNameToMetaVictims": {"node-b1": {"Pods": [], "NumPDBViolations": 0}}}));
    // node-a2 is cordoned: dropped whatever is evicted.
    let answer = preempt(&server, body(&[("node-a2", &[], 0)])).await;
    assert_eq!(answer, json!({"NodeNameToMetaVictims": {}}));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn victims_not_needed_are_reprieved() {
    let server = TestServer::demo().await;
    // A 2-cpu pod on node-b3 (2 cpu, ingress-1 holds 500m) needs ingress-1 gone.
    let mut big = report_job();
    big["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("2");
    let answer =
        preempt(&server, json!({"Pod": big, "NodeNameToMetaVictims": meta(&[("node-b3", &[INGRESS_1], 0)])})).await;
    assert_eq!(answer["NodeNameToMetaVictims"]["node-b3"]["Pods"], json!([{"UID": INGRESS_1}]));
    // The 1500m report-job fits beside it: ingress-1 is reprieved.
    let answer =
        preempt(&server, json!({"Pod": report_job(), "NodeNameToMetaVictims": meta(&[("node-b3", &[INGRESS_1], 0)])}))
            .await;
    assert_eq!(answer["NodeNameToMetaVictims"]["node-b3"]["Pods"], json!([]));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_nodes_and_victims_are_left_out() {
    let server = TestServer::demo().await;
    let answer = preempt(
        &server,
        json!({"Pod": report_job(), "NodeNameToMetaVictims": meta(&[
            ("node-z9", &[BATCH_1], 0),
            // WEB_1 runs on node-a1, not node-b2: never named as node-b2's victim.
            ("node-b2", &[BATCH_1, "no-such-uid", WEB_1], 0),
        ])}),
    )
    .await;
    assert_eq!(
        answer,
        json!({"NodeNameToMetaVictims": {"node-b2": {"Pods": [{"UID": BATCH_1}], "NumPDBViolations": 0}}})
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn no_candidates_no_nodes() {
    let server = TestServer::demo().await;
    for body in [json!({"Pod": report_job()}), json!({"Pod": report_job(), "NodeNameToMetaVictims": {}})] {
        assert_eq!(preempt(&server, body).await, json!({"NodeNameToMetaVictims": {}}));
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_requests_get_400_with_the_result_and_an_error() {
    let server = TestServer::start(config(ClusterSource::Demo)).await;
    let cases = [
        (r#"{"NodeNameToMetaVictims":{}}"#, "ExtenderPreemptionArgs.Pod: missing field"),
        (
            r#"{"Pod":{},"NodeNameToMetaVictims":{"node-b2":{"Pods":[{}]}}}"#,
            "ExtenderPreemptionArgs.NodeNameToMetaVictims.node-b2.Pods[0].UID: missing field",
        ),
        (
            r#"{"Pod":{},"NodeNameToVictims":{},"NodeNameToMetaVictims":{}}"#,
            "ExtenderPreemptionArgs: both NodeNameToVictims and NodeNameToMetaVictims are set; send one",
        ),
    ];
    for (body, error) in cases {
        let (status, answer) = server.post("/preempt", body).await;
        assert_eq!((status, answer), (400, json!({"NodeNameToMetaVictims": {}, "Error": error})), "{body}");
    }
    let (status, text) = server.post_text("/preempt", "{not json").await;
    assert_eq!(status, 400);
    assert!(text.starts_with(r#"{"NodeNameToMetaVictims":{},"Error":"ExtenderPreemptionArgs"#), "{text}");
    server.stop().await;
}
