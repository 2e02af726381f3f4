//! Dynamic predicate ordering over HTTP: Policy `predicateOrdering`, the `--predicate-ordering`
//! override, `GET /debug/ordering` and the ordering series on `/metrics` (admin listener).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod common;

use common::TestServer;
use predicate_engine::engine::OrderingMode;
use predicate_extender::server::ClusterSource;
use serde_json::Value;

const DYNAMIC: &str = r#"{"kind":"Policy","apiVersion":"v1","predicateOrdering":"dynamic"}"#;

async fn ordering(server: &TestServer) -> Value {
    let (status, text) = server.get(&format!("{}/debug/ordering", server.admin)).await;
    assert_eq!(status, 200, "{text}");
    serde_json::from_str(&text).unwrap()
}

fn names(v: &Value) -> Vec<String> {
    v.as_array().unwrap().iter().map(|n| n.as_str().unwrap().to_string()).collect()
}

fn web_2_filter() -> Vec<u8> {
    std::fs::read(common::fixture_path("../../examples/demo/filter-web-2.json")).unwrap()
}

#[tokio::test]
async fn the_default_is_static_in_plan_order() {
    let server = TestServer::demo().await;
    let got = ordering(&server).await;
    assert_eq!(got["ordering"], "static");
    let order = names(&got["order"]);
    assert_eq!(order.first().map(String::as_str), Some("CheckNodeCondition"));
    assert_eq!(order.get(2).map(String::as_str), Some("GeneralPredicates"));
    assert!(got["predicates"][0].get("rejectionRate").is_none(), "static keeps no counts: {got}");
    server.stop().await;
}

#[tokio::test]
async fn dynamic_ordering_runs_unresolvable_only_predicates_first_and_answers_the_same_nodes() {
    let mut config = common::config(ClusterSource::Demo);
    config.policy = common::policy(DYNAMIC);
    let dynamic = TestServer::start(config).await;
    let fixed = TestServer::demo().await;

    let got = ordering(&dynamic).await;
    assert_eq!(got["ordering"], "dynamic");
    let order = names(&got["order"]);
    let tier =
        |name: &str| got["predicates"].as_array().unwrap().iter().find(|p| p["name"] == name).unwrap()["tier"].clone();
    let first_resolvable = order.iter().position(|n| tier(n) == "maybeResolvable").unwrap();
    assert!(first_resolvable > 0, "{order:?}");
    assert!(order[first_resolvable..].iter().all(|n| tier(n) == "maybeResolvable"), "tiers: {order:?}");
    assert!(got["predicates"][0]["rejectionRate"].is_number(), "{got}");

    for _ in 0..5 {
        let (s1, a) = dynamic.post("/filter", web_2_filter()).await;
        let (s2, b) = fixed.post("/filter", web_2_filter()).await;
        assert_eq!((s1, s2), (200, 200));
        assert_eq!(common::feasible(&a), common::feasible(&b));
        assert!(!common::feasible(&a).is_empty());
    }
    let (_, metrics) = dynamic.get(&format!("{}/metrics", dynamic.admin)).await;
    assert!(
        metrics.contains(
            r#"predicate_extender_predicate_order_position{predicate="CheckNodeCondition",ordering="dynamic"} 0"#
        ),
        "{metrics}"
    );
    assert!(metrics.contains("# TYPE predicate_extender_predicate_rejection_rate gauge"), "{metrics}");
    assert!(metrics.contains(r#"predicate_extender_predicate_rejection_rate{predicate="GeneralPredicates"}"#));
    dynamic.stop().await;
    fixed.stop().await;
}

#[tokio::test]
async fn the_flag_overrides_the_policy() {
    let mut config = common::config(ClusterSource::Demo);
    config.policy = common::policy(DYNAMIC);
    config.predicate_ordering = Some(OrderingMode::Static);
    let server = TestServer::start(config).await;
    assert_eq!(ordering(&server).await["ordering"], "static");
    server.stop().await;
}
