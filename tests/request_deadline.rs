//! `--request-timeout`: a `/filter` whose evaluation outlasts the deadline is cancelled and
//! answered 200 with an `Error` that says so, as kube-scheduler reads it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod common;

use std::time::Duration;

use common::{config, TestServer};
use gen_cluster::api_objects;
use gen_cluster::generate::{generate, node_name, ClusterSpec, Rng};
use predicate_engine::cluster::Snapshot;
use predicate_extender::server::ClusterSource;
use serde_json::json;

#[tokio::test]
async fn a_filter_slower_than_the_request_timeout_answers_200_with_an_error() {
    // 3,000 nodes with 60,000 pods, MatchInterPodAffinity included: in the debug build tests run in
    // the second request below takes hundreds of milliseconds, and even a release build needs
    // milliseconds (docs/performance.md, the `filter/node_names` bench), against a 1 ms deadline,
    // so the deadline always passes first.
    let spec = ClusterSpec { nodes: 3000, pods_per_node: 20, ..ClusterSpec::default() };
    let (nodes, pods) = generate(&spec);
    let snapshot = Snapshot::build(nodes, pods);
    let pod = api_objects::pod(&ClusterSpec { anti_affinity_percent: 100, ..spec }, &mut Rng::new(7), "pending", "");
    let names: Vec<String> = (0..spec.nodes).map(node_name).collect();
    let body = json!({"Pod": pod, "NodeNames": names}).to_string();

    let mut c = config(ClusterSource::Snapshot(Box::new(snapshot.clone())));
    c.request_timeout = Duration::from_millis(1);
    let server = TestServer::start(c).await;
    let (status, answer) = server.post("/filter", body.clone()).await;
    assert_eq!(status, 200, "{answer}");
    let error = answer["Error"].as_str().unwrap_or_default();
    // Decoding runs under the deadline too: the 1 ms may pass while the body is still decoded.
    assert!(
        error.contains("over 3000 nodes did not finish within the request timeout of 1ms")
            || error.contains("still being decoded when the request timeout of 1ms passed"),
        "{answer}"
    );
    assert!(answer["NodeNames"].is_null() || answer["NodeNames"] == json!([]), "{answer}");
    server.stop().await;

    // The same request with the default deadline is answered: it was the deadline, not the request.
    let server = TestServer::start(config(ClusterSource::Snapshot(Box::new(snapshot)))).await;
    let (status, answer) = server.post("/filter", body).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["Error"], "", "{answer}");
    server.stop().await;
}

#[tokio::test]
async fn decoding_a_large_nodes_body_counts_against_the_request_timeout() {
    // 2,000 full Node objects (about 20 MB): decoding alone takes far longer than 1 ms.
    let spec = ClusterSpec { nodes: 2000, pods_per_node: 1, ..ClusterSpec::default() };
    let nodes: Vec<serde_json::Value> = (0..spec.nodes).map(|i| api_objects::cluster_node(&spec, i)).collect();
    let pod = api_objects::pending_pod(&spec);
    let body = json!({"Pod": pod, "Nodes": {"items": nodes}}).to_string();
    let mut c = config(ClusterSource::Snapshot(Box::default()));
    c.request_timeout = Duration::from_millis(1);
    c.max_body_bytes = 64 << 20;
    let server = TestServer::start(c).await;
    let (status, answer) = server.post("/filter", body).await;
    assert_eq!(status, 200, "{answer}");
    let error = answer["Error"].as_str().unwrap_or_default();
    // Before, decoding ran ahead of the deadline and the message named the 2,000 decoded nodes.
    assert!(error.contains("still being decoded when the request timeout of 1ms passed"), "{answer}");
    assert!(answer["Nodes"].is_null(), "{answer}");
    server.stop().await;
}
