//! `--inline-max-bytes`: a /filter or /prioritize body up to that size is answered on the thread
//! that read it, one node after another, instead of on the evaluator's pool. Both ways give the
//! same bytes, the counter says which way a request went, and the deadline holds inline too.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod common;

use std::time::Duration;

use common::{config, TestServer};
use gen_cluster::api_objects;
use gen_cluster::generate::{generate, node_name, ClusterSpec, Rng};
use predicate_engine::cluster::Snapshot;
use predicate_extender::server::{ClusterSource, ServeConfig};
use serde_json::json;

/// The generated cluster's nodes and pods, some pods nominated (the double pass), a tenth with
/// required anti-affinity and a tenth of the nodes tainted.
fn cluster(spec: &ClusterSpec) -> Snapshot {
    let (nodes, pods) = generate(spec);
    Snapshot::build(nodes, pods)
}

fn serving(snapshot: &Snapshot, inline_max_bytes: usize) -> ServeConfig {
    let mut c = config(ClusterSource::Snapshot(Box::new(snapshot.clone())));
    c.inline_max_bytes = inline_max_bytes;
    c
}

async fn inline_requests(server: &TestServer, verb: &str) -> f64 {
    let (_, text) = server.get(&format!("{}/metrics", server.admin)).await;
    let line = format!("predicate_extender_inline_requests_total{{verb=\"{verb}\"}} ");
    text.lines().find_map(|l| l.strip_prefix(&line)).unwrap_or_else(|| panic!("no {line} in {text}")).parse().unwrap()
}

#[tokio::test]
async fn inline_and_pooled_answers_are_the_same_bytes() {
    let spec =
        ClusterSpec { nodes: 300, pods_per_node: 10, anti_affinity_percent: 30, nominated: 40, ..Default::default() };
    let snapshot = cluster(&spec);
    let names: Vec<String> = (0..spec.nodes).map(node_name).collect();
    let mut rng = Rng::new(11);
    let mut bodies = Vec::new();
    for i in 0..12 {
        let pod = api_objects::pod(&ClusterSpec { anti_affinity_percent: 50, ..spec }, &mut rng, &format!("p{i}"), "");
        // NodeNames of every node, and of a few (with a name the model does not have).
        bodies.push(json!({"Pod": pod, "NodeNames": names}).to_string());
        let few: Vec<&str> = names.iter().step_by(37).map(String::as_str).chain(["no-such-node"]).collect();
        bodies.push(json!({"Pod": pod, "NodeNames": few}).to_string());
        // Whole Nodes, as kube-scheduler sends them without nodeCacheCapable.
        let nodes: Vec<_> = (0..spec.nodes).step_by(29).map(|n| api_objects::cluster_node(&spec, n)).collect();
        bodies.push(json!({"Pod": pod, "Nodes": {"items": nodes}}).to_string());
    }
    let largest = bodies.iter().map(String::len).max().unwrap();

    let inline = TestServer::start(serving(&snapshot, largest)).await;
    let pooled = TestServer::start(serving(&snapshot, 0)).await;
    for verb in ["/filter", "/prioritize"] {
        for body in &bodies {
            let (a, b) = (inline.post_text(verb, body.clone()).await, pooled.post_text(verb, body.clone()).await);
            assert_eq!(a, b, "{verb} {body}");
            assert_eq!(a.0, 200, "{verb}: {}", a.1);
        }
    }
    let asked = bodies.len() as f64;
    for verb in ["filter", "prioritize"] {
        assert_eq!(inline_requests(&inline, verb).await, asked, "{verb}");
        assert_eq!(inline_requests(&pooled, verb).await, 0.0, "{verb}");
    }
    inline.stop().await;
    pooled.stop().await;
}

#[tokio::test]
async fn an_inline_filter_slower_than_the_request_timeout_answers_200_with_an_error() {
    // As tests/request_deadline.rs, inline: 3,000 nodes of 20 pods each, a pod with required
    // anti-affinity, a 1 ms deadline; nothing but the deadline itself can stop the loop.
    let spec = ClusterSpec { nodes: 3000, pods_per_node: 20, ..ClusterSpec::default() };
    let snapshot = cluster(&spec);
    let pod = api_objects::pod(&ClusterSpec { anti_affinity_percent: 100, ..spec }, &mut Rng::new(7), "pending", "");
    let names: Vec<String> = (0..spec.nodes).map(node_name).collect();
    let body = json!({"Pod": pod, "NodeNames": names}).to_string();

    let mut c = serving(&snapshot, body.len());
    c.request_timeout = Duration::from_millis(1);
    let server = TestServer::start(c).await;
    let (status, answer) = server.post("/filter", body.clone()).await;
    assert_eq!(status, 200, "{answer}");
    let error = answer["Error"].as_str().unwrap_or_default();
    assert!(error.contains("over 3000 nodes did not finish within the request timeout of 1ms"), "{answer}");
    assert!(answer["NodeNames"].is_null() || answer["NodeNames"] == json!([]), "{answer}");
    assert_eq!(inline_requests(&server, "filter").await, 1.0);
    let (_, metrics) = server.get(&format!("{}/metrics", server.admin)).await;
    assert!(metrics.contains("predicate_extender_request_timeouts_total{verb=\"filter\"} 1"), "{metrics}");
    server.stop().await;
}
