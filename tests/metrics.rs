//! `/metrics` on the admin listener: the series exist with their labels, and requests move them by
//! exactly what they did.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod common;

use std::collections::BTreeMap;

use common::{demo_node_list, web_2, TestServer, DEMO_NODES};
use serde_json::json;

/// One scrape: each sample by its name and sorted labels, e.g. `x_total{code="200",verb="bind"}`.
struct Scrape {
    content_type: String,
    text: String,
    samples: BTreeMap<String, f64>,
}

/// The key of a sample line's series: its name, then its labels sorted.
fn series_key(series: &str) -> String {
    match series.split_once('{') {
        None => series.to_string(),
        Some((name, labels)) => {
            let mut labels: Vec<&str> = labels.trim_end_matches('}').split(',').collect();
            labels.sort_unstable();
            format!("{name}{{{}}}", labels.join(","))
        }
    }
}

fn key(name: &str, labels: &[(&str, &str)]) -> String {
    if labels.is_empty() {
        return name.to_string();
    }
    let labels: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
    series_key(&format!("{name}{{{}}}", labels.join(",")))
}

impl Scrape {
    async fn take(server: &TestServer) -> Scrape {
        let url = format!("{}/metrics", server.admin);
        let resp = server.client.get(&url).send().await.unwrap_or_else(|e| panic!("GET {url}: {e}"));
        assert_eq!(resp.status().as_u16(), 200, "GET {url}");
        let content_type =
            resp.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
        let text = resp.text().await.unwrap_or_else(|e| panic!("GET {url}: {e}"));
        let mut samples = BTreeMap::new();
        for line in text.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
            let (series, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("not a sample: {line}"));
            let value: f64 = value.parse().unwrap_or_else(|e| panic!("{line}: {e}"));
            samples.insert(series_key(series), value);
        }
        Scrape { content_type, text, samples }
    }

    /// A sample's value; 0 for a series not made yet.
    fn value(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.samples.get(&key(name, labels)).copied().unwrap_or(0.0)
    }

    fn has(&self, name: &str, labels: &[(&str, &str)]) -> bool {
        self.samples.contains_key(&key(name, labels))
    }
}

/// A sample's name, its labels, and how much it should move.
type Check<'a> = (&'a str, &'a [(&'a str, &'a str)], f64);

/// How much each of these samples moved between two scrapes.
fn deltas(before: &Scrape, after: &Scrape, checks: &[Check<'_>]) {
    for (name, labels, want) in checks {
        let moved = after.value(name, labels) - before.value(name, labels);
        assert_eq!(moved, *want, "{}", key(name, labels));
    }
}

const P: &str = "predicate_extender_";
const PROFILE: (&str, &str) = ("profile", "predicate-extender");

#[tokio::test(flavor = "multi_thread")]
async fn series_exist_and_move_by_what_the_requests_did() {
    let server = TestServer::demo().await;
    let before = Scrape::take(&server).await;
    assert!(before.content_type.starts_with("application/openmetrics-text"), "{}", before.content_type);
    assert!(before.text.ends_with("# EOF\n"));
    for name in before.samples.keys() {
        assert!(name.starts_with(P), "{name}: every series has the prefix");
        for banned in ["node=", "pod="] {
            assert!(!name.contains(banned), "{name}: no per-node or per-pod label");
        }
    }
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        before
            .samples
            .keys()
            .any(|k| k.starts_with(&format!("{P}build_info{{")) && k.contains(&format!("version=\"{version}\""))),
        "build_info with the version"
    );
    assert_eq!(before.value(&format!("{P}cache_objects"), &[("resource", "nodes")]), 6.0);
    assert!(before.value(&format!("{P}cache_objects"), &[("resource", "pods")]) > 0.0);
    assert!(before.has(&format!("{P}cache_objects"), &[("resource", "csinodes.storage.k8s.io")]));
    assert!(before.has(&format!("{P}bind_total"), &[("outcome", "forbidden")]), "every bind outcome from the start");
    assert!(before.has(&format!("{P}nominated_second_passes_total"), &[]));

    // web-2 by names and by Nodes: node-a1 (host port) and node-b2 (cpu) fail GeneralPredicates,
    // node-a2 (cordoned) CheckNodeCondition, node-a3 PodToleratesNodeTaints; node-b1 and node-b3 fit.
    let (status, answer) = server.post("/filter", json!({"Pod": web_2(), "NodeNames": DEMO_NODES}).to_string()).await;
    assert_eq!((status, common::feasible(&answer)), (200, vec!["node-b1".to_string(), "node-b3".to_string()]));
    let (status, answer) = server.post("/filter", json!({"Pod": web_2(), "Nodes": demo_node_list()}).to_string()).await;
    assert_eq!((status, common::feasible(&answer)), (200, vec!["node-b1".to_string(), "node-b3".to_string()]));
    let (status, _) = server.post_text("/filter", "{").await;
    assert_eq!(status, 400);
    let (status, _) = server.post("/prioritize", json!({"Pod": web_2(), "NodeNames": DEMO_NODES}).to_string()).await;
    assert_eq!(status, 200);
    let bind = |pod: &str, uid: &str| {
        json!({"PodName": pod, "PodNamespace": "default", "PodUID": uid, "Node": "node-b3"}).to_string()
    };
    let (_, ok) = server.post("/bind", bind("web-2", "0b7f2a10-1111-4c3e-8a55-00000000a102")).await;
    assert_eq!(ok, json!({"Error": ""}));
    let (_, ghost) = server.post("/bind", bind("ghost", "")).await;
    assert_ne!(ghost["Error"], "");

    let after = Scrape::take(&server).await;
    // A family shows once it has a series.
    for (kind, name) in [
        ("histogram", "framework_extension_point_duration_seconds"),
        ("histogram", "http_request_duration_seconds"),
        ("histogram", "evaluated_nodes"),
        ("histogram", "request_phase_duration_seconds"),
        ("counter", "http_requests"),
        ("counter", "plugin_evaluation"),
        ("counter", "predicate_rejections"),
        ("counter", "bind"),
        ("gauge", "cache_objects"),
        ("info", "build"),
    ] {
        assert!(after.text.contains(&format!("# TYPE {P}{name} {kind}\n")), "{name} is a {kind}");
    }
    let requests = format!("{P}http_requests_total");
    let durations = format!("{P}http_request_duration_seconds_count");
    let extension = format!("{P}framework_extension_point_duration_seconds_count");
    let evaluations = format!("{P}plugin_evaluation_total");
    let rejections = format!("{P}predicate_rejections_total");
    let filter = ("extension_point", "Filter");
    let plugin = |name| [("plugin", name), filter, PROFILE];
    deltas(
        &before,
        &after,
        &[
            (&requests, &[("verb", "filter"), ("code", "200")], 2.0),
            (&requests, &[("verb", "filter"), ("code", "400")], 1.0),
            (&requests, &[("verb", "prioritize"), ("code", "200")], 1.0),
            (&requests, &[("verb", "bind"), ("code", "200")], 2.0),
            (&requests, &[("verb", "preempt"), ("code", "200")], 0.0),
            (&durations, &[("verb", "filter"), ("code", "200")], 2.0),
            (&durations, &[("verb", "filter"), ("code", "400")], 1.0),
            (&extension, &[filter, ("status", "Success"), PROFILE], 2.0),
            (&extension, &[filter, ("status", "Error"), PROFILE], 1.0),
            (&extension, &[("extension_point", "Score"), ("status", "Success"), PROFILE], 1.0),
            (&extension, &[("extension_point", "Bind"), ("status", "Success"), PROFILE], 1.0),
            (&extension, &[("extension_point", "Bind"), ("status", "Error"), PROFILE], 1.0),
            // Six nodes ran the first predicate, five the next two, three the next two.
            (&evaluations, &plugin("CheckNodeCondition"), 12.0),
            (&evaluations, &plugin("CheckNodeUnschedulable"), 10.0),
            (&evaluations, &plugin("GeneralPredicates"), 10.0),
            (&evaluations, &plugin("PodToleratesNodeTaints"), 6.0),
            (&evaluations, &plugin("MatchInterPodAffinity"), 4.0),
            (&rejections, &[("predicate", "CheckNodeCondition")], 2.0),
            (&rejections, &[("predicate", "CheckNodeUnschedulable")], 0.0),
            (&rejections, &[("predicate", "GeneralPredicates")], 4.0),
            (&rejections, &[("predicate", "PodToleratesNodeTaints")], 2.0),
            (&format!("{P}evaluated_nodes_count"), &[("verb", "filter")], 2.0),
            (&format!("{P}evaluated_nodes_sum"), &[("verb", "filter")], 12.0),
            (&format!("{P}evaluated_nodes_count"), &[("verb", "prioritize")], 1.0),
            // Each request answered on the pool is split into its phases once; the malformed one
            // too (it stopped at decode), the binds are not.
            (&format!("{P}request_phase_duration_seconds_count"), &[("verb", "filter"), ("phase", "evaluate")], 3.0),
            (&format!("{P}request_phase_duration_seconds_count"), &[("verb", "prioritize"), ("phase", "decode")], 1.0),
            (&format!("{P}request_phase_duration_seconds_count"), &[("verb", "bind"), ("phase", "read")], 0.0),
            (&format!("{P}bind_total"), &[("outcome", "success")], 1.0),
            (&format!("{P}bind_total"), &[("outcome", "unknown_pod")], 1.0),
            (&format!("{P}bind_total"), &[("outcome", "conflict")], 0.0),
        ],
    );
    // web-2 failed node-b2's first pass (with the nominated pod): no second pass.
    deltas(&before, &after, &[(&format!("{P}nominated_second_passes_total"), &[], 0.0)]);

    // A pod that requests nothing fits node-b2 beside its nominated pod (which takes the node's
    // last cpu), so node-b2 is checked again without it.
    let tiny = json!({
        "metadata": {"name": "tiny", "namespace": "default", "uid": "tiny-uid"},
        "spec": {"containers": [{"name": "c", "image": "x"}]}
    });
    let (status, answer) = server.post("/filter", json!({"Pod": tiny, "NodeNames": ["node-b2"]}).to_string()).await;
    assert_eq!((status, common::feasible(&answer)), (200, vec!["node-b2".to_string()]));
    let last = Scrape::take(&server).await;
    deltas(&after, &last, &[(&format!("{P}nominated_second_passes_total"), &[], 1.0)]);

    // Every /filter times its predicates on one candidate in ten (from a random offset): of 200
    // requests of six candidates, none timing node-b1 (first, passes CheckNodeCondition) has
    // probability 0.9^200 (< 1e-9).
    let timed = format!("{P}plugin_execution_duration_seconds_count");
    let success = [("plugin", "CheckNodeCondition"), filter, ("status", "Success")];
    // The requests above may have been sampled too (other node lists): count from here.
    let earlier = last.value(&timed, &success);
    let mut sampled = 0.0;
    for _ in 0..10 {
        for _ in 0..20 {
            server.post("/filter", json!({"Pod": web_2(), "NodeNames": DEMO_NODES}).to_string()).await;
        }
        sampled = Scrape::take(&server).await.value(&timed, &success) - earlier;
        if sampled > 0.0 {
            break;
        }
    }
    // CheckNodeCondition passes on five demo nodes (node-a2 is cordoned), so 200 requests time at
    // most 1,000 of its successes; about a tenth of them.
    assert!(sampled > 0.0 && sampled < 1000.0, "{timed}{success:?} = {sampled}");
    server.stop().await;
}
