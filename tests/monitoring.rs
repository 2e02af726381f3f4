//! manifests/monitoring/: every series the alert rules and the Grafana dashboard query is one a
//! running extender exports, by its exact sample name (a counter's `_total`, a histogram's
//! `_bucket`/`_sum`/`_count`, an info's `_info`), checked against a scrape of a server on a live
//! source (a fake API server), which exports every family the extender has.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod common;
use predicate_extender_testing::fake_apiserver;

use std::collections::BTreeSet;
use std::time::Duration;

use common::{config, TestServer};
use fake_apiserver::{node_json, FakeApiServer};
use predicate_extender::server::ClusterSource;
use predicate_extender::source::kube::Connection;
use predicate_extender_testing::eventually;
use serde_json::Value;

fn repo_file(path: &str) -> String {
    let full = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The sample names a scrape allows: from each `# TYPE` line by the OpenMetrics naming of its type
/// (so a family with no sample yet counts too), and every sample line's name.
fn exported(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap();
            let suffixes: &[&str] = match kind {
                "counter" => &["_total", "_created"],
                "histogram" => &["_bucket", "_sum", "_count", "_created"],
                "gaugehistogram" => &["_gbucket", "_gsum", "_gcount"],
                "summary" => &["", "_sum", "_count", "_created"],
                "info" => &["_info"],
                _ => &[""],
            };
            names.extend(suffixes.iter().map(|s| format!("{name}{s}")));
        } else if !line.starts_with('#') && !line.is_empty() {
            let end = line.find(['{', ' ']).unwrap_or(line.len());
            names.insert(line[..end].to_string());
        }
    }
    names
}

/// PromQL keywords that look like names.
const KEYWORDS: [&str; 11] =
    ["and", "or", "unless", "bool", "offset", "inf", "nan", "Inf", "NaN", "group_left", "group_right"];
/// Modifiers followed by a list of label names in parentheses.
const LABEL_LISTS: [&str; 6] = ["by", "without", "on", "ignoring", "group_left", "group_right"];

/// The metric names an expression reads, roughly parsed: strings, `{...}` matchers, `[...]`
/// ranges, Grafana's `$variables` and the label lists of `by (...)` and the like are dropped;
/// of the names left, those followed by `(` are functions or aggregations.
fn metric_names(expr: &str) -> Vec<String> {
    // Strings, matchers and ranges out (strings first: they may hold braces).
    let mut plain = String::new();
    let mut chars = expr.chars().peekable();
    let (mut braces, mut brackets) = (0usize, 0usize);
    while let Some(c) = chars.next() {
        match c {
            '"' | '\'' | '`' => {
                while let Some(d) = chars.next() {
                    if d == '\\' && c != '`' {
                        chars.next();
                    } else if d == c {
                        break;
                    }
                }
            }
            '{' => braces += 1,
            '}' => braces = braces.saturating_sub(1),
            '[' => brackets += 1,
            ']' => brackets = brackets.saturating_sub(1),
            '$' => {
                // $name or ${name}: a Grafana variable, not a metric.
                if chars.peek() == Some(&'{') {
                    for d in chars.by_ref() {
                        if d == '}' {
                            break;
                        }
                    }
                } else {
                    while chars.peek().is_some_and(|d| d.is_ascii_alphanumeric() || *d == '_') {
                        chars.next();
                    }
                }
            }
            _ if braces == 0 && brackets == 0 => plain.push(c),
            _ => {}
        }
    }
    let bytes = plain.as_bytes();
    let is_start = |b: u8| b.is_ascii_alphabetic() || b == b'_' || b == b':';
    let is_part = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b':';
    let next_non_space = |mut i: usize| {
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        i
    };
    let mut names = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_digit() || b == b'.' {
            // A number or a duration (0.99, 1e3, 5m): skip it whole.
            while i < bytes.len() && (is_part(bytes[i]) || bytes[i] == b'.') {
                i += 1;
            }
            continue;
        }
        if !is_start(b) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && is_part(bytes[i]) {
            i += 1;
        }
        let word = &plain[start..i];
        let after = next_non_space(i);
        // `f(`, or an aggregation with its clause first: `sum by (x) (`.
        let clause = ["by", "without"].iter().any(|k| {
            plain[after..]
                .strip_prefix(k)
                .is_some_and(|rest| !rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
        });
        let called = bytes.get(after) == Some(&b'(') || clause;
        if LABEL_LISTS.contains(&word) && called {
            let close = plain[after..].find(')').map_or(bytes.len(), |c| after + c + 1);
            i = close;
        } else if !called && !KEYWORDS.contains(&word) {
            names.push(word.to_string());
        }
    }
    names
}

/// Grafana's `label_values(metric{...}, label)`: the metric part.
fn templating_expr(query: &str) -> &str {
    match query.trim().strip_prefix("label_values(").and_then(|q| q.strip_suffix(')')) {
        Some(inner) => inner.rsplit_once(',').map_or(inner, |(metric, _label)| metric),
        None => query,
    }
}

#[test]
fn the_parser_finds_the_metric_names_and_nothing_else() {
    let cases: [(&str, &[&str]); 6] = [
        (
            r#"histogram_quantile(0.99, sum by (namespace, pod, verb, le) (rate(a_seconds_bucket{verb=~"filter|bind"}[5m]))) > 3"#,
            &["a_seconds_bucket"],
        ),
        (
            r#"sum by (plugin) (label_replace(rate(x_total{pod=~"$pod"}[$__rate_interval]), "plugin", "$1", "predicate", "(.*)")) / sum by (plugin) (rate(y_total[1m] offset 5m))"#,
            &["x_total", "y_total"],
        ),
        (
            "sum by (ns, outcome) (rate(b_total{outcome!=\"success\"}[15m])) / ignoring (outcome) group_left sum by (ns) (rate(b_total[15m])) > 0.1",
            &["b_total", "b_total"],
        ),
        ("min by (resource) (c == bool 0) and on (pod) d unless e", &["c", "d", "e"]),
        ("count(f{a=\"}{\"}) or vector(0)", &["f"]),
        ("1e3 * g:recorded:rate5m", &["g:recorded:rate5m"]),
    ];
    for (expr, want) in cases {
        assert_eq!(metric_names(expr), want.to_vec(), "{expr}");
    }
    assert_eq!(
        templating_expr(r#"label_values(m_info{namespace=~"$namespace"}, pod)"#),
        r#"m_info{namespace=~"$namespace"}"#
    );
}

#[test]
fn the_names_are_checked_by_their_type() {
    let text = "# TYPE p_requests counter\n# TYPE p_seconds histogram\n# TYPE p_objects gauge\n# TYPE p_build info\np_requests_total{a=\"b\"} 1\n";
    let names = exported(text);
    for ok in ["p_requests_total", "p_seconds_bucket", "p_seconds_count", "p_objects", "p_build_info"] {
        assert!(names.contains(ok), "{ok}");
    }
    for wrong in ["p_requests", "p_requests_bucket", "p_seconds", "p_seconds_total", "p_objects_total", "p_build"] {
        assert!(!names.contains(wrong), "{wrong}");
    }
}

/// Every `expr` of the PrometheusRule.
fn rule_exprs() -> Vec<(String, String)> {
    let rule: Value = serde_saphyr::from_str(&repo_file("manifests/monitoring/prometheus-rule.yaml")).unwrap();
    assert_eq!(rule["apiVersion"], "monitoring.coreos.com/v1");
    assert_eq!(rule["kind"], "PrometheusRule");
    let mut out = Vec::new();
    for group in rule["spec"]["groups"].as_array().unwrap() {
        for r in group["rules"].as_array().unwrap() {
            let name = r["alert"].as_str().or(r["record"].as_str()).unwrap().to_string();
            out.push((name, r["expr"].as_str().unwrap().to_string()));
        }
    }
    out
}

/// Every query of the dashboard: each panel's targets (rows' panels too) and the templating.
fn dashboard_exprs() -> Vec<(String, String)> {
    let dashboard: Value = serde_json::from_str(&repo_file("manifests/monitoring/grafana-dashboard.json")).unwrap();
    let mut out = Vec::new();
    let mut panels: Vec<&Value> = dashboard["panels"].as_array().unwrap().iter().collect();
    while let Some(panel) = panels.pop() {
        panels.extend(panel["panels"].as_array().into_iter().flatten());
        for target in panel["targets"].as_array().into_iter().flatten() {
            out.push((panel["title"].as_str().unwrap().to_string(), target["expr"].as_str().unwrap().to_string()));
        }
    }
    for variable in dashboard["templating"]["list"].as_array().unwrap() {
        if let Some(query) = variable["query"]["query"].as_str() {
            out.push((format!("${}", variable["name"].as_str().unwrap()), templating_expr(query).to_string()));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn every_series_the_rules_and_the_dashboard_query_is_exported() {
    let api = FakeApiServer::start().await;
    api.apply(node_json("n1", "4", "8Gi", "110"));
    let mut serve = config(ClusterSource::Kube(Connection::Kubeconfig(api.kubeconfig_path())));
    // The shipped scheduler configuration: its Lease gives the leader and standby series.
    serve.scheduler_config =
        Some(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config/scheduler-config.yaml"));
    let server = TestServer::start(serve).await;
    let readyz = format!("{}/readyz", server.admin);
    eventually("the live source to sync", Duration::from_secs(20), || async { server.get(&readyz).await.0 == 200 })
        .await;
    // Request series appear with their first request; predicate timings on a random 10% of
    // /filter requests (bounded: 1,000 requests miss with probability 0.9^1000).
    let pod = fake_apiserver::pod_json("default", "p", "", "100m");
    let body = serde_json::json!({"Pod": pod, "NodeNames": ["n1"]}).to_string();
    let (status, answer) = server.post("/prioritize", body.clone()).await;
    assert_eq!(status, 200, "{answer}");
    let bind = r#"{"PodName":"ghost","PodNamespace":"default","PodUID":"","Node":"n1"}"#;
    server.post("/bind", bind).await;
    let mut text = String::new();
    for _ in 0..1000 {
        let (status, answer) = server.post("/filter", body.clone()).await;
        assert_eq!(status, 200, "{answer}");
        text = server.get(&format!("{}/metrics", server.admin)).await.1;
        if text.contains("# TYPE predicate_extender_plugin_execution_duration_seconds histogram") {
            break;
        }
    }
    let names = exported(&text);

    let rules = rule_exprs();
    let queries = dashboard_exprs();
    assert!(rules.len() >= 10 && queries.len() >= 20, "{} rules, {} queries", rules.len(), queries.len());
    let mut checked = BTreeSet::new();
    let mut unknown = Vec::new();
    for (what, expr) in rules.iter().chain(&queries) {
        let used = metric_names(expr);
        assert!(!used.is_empty(), "{what}: no metric in {expr}");
        for name in used {
            if names.contains(&name) {
                checked.insert(name);
            } else {
                unknown.push(format!("{what}: {name}"));
            }
        }
    }
    assert!(unknown.is_empty(), "not exported by the extender:\n{}\n\nexported:\n{names:#?}", unknown.join("\n"));
    // What an operator pages on is there (a rule file that lost its alerts would pass the above).
    for name in [
        "predicate_extender_http_request_duration_seconds_bucket",
        "predicate_extender_framework_extension_point_duration_seconds_count",
        "predicate_extender_request_timeouts_total",
        "predicate_extender_cache_synced",
        "predicate_extender_cache_stale",
        "predicate_extender_bind_total",
        "predicate_extender_policy_last_reload_successful",
        "predicate_extender_predicate_rejections_total",
        "predicate_extender_plugin_execution_duration_seconds_bucket",
        "predicate_extender_nominated_second_passes_total",
        "predicate_extender_watch_last_event_age_seconds",
        "predicate_extender_leader",
        "predicate_extender_standby_requests_total",
        "predicate_extender_lease_read_errors_total",
    ] {
        assert!(checked.contains(name), "nothing queries {name}");
    }
    server.stop().await;
}
