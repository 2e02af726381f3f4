//! `predicate-extender whatif` and `POST <urlPrefix>/whatif` on the cluster of
//! `tests/fixtures/whatif/`: a Policy that adds a label-presence predicate names the running pod on
//! the node without the label, the pending pods' feasible nodes under both Policies, the per
//! predicate rejections; the same report over HTTP against the served Policy; bad input answered
//! 4xx with what is wrong; only one at a time; only on the verbs listener.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod common;

use std::process::Command;
use std::time::Duration;

use common::{cluster, config, fixture_path, TestServer};
use gen_cluster::generate::{generate, ClusterSpec};
use predicate_engine::cluster::Snapshot;
use predicate_extender::server::ClusterSource;
use serde_json::{json, Value};

fn whatif_fixture(name: &str) -> String {
    let path = fixture_path("whatif").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn cli(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_predicate-extender")).arg("whatif").args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

fn cli_report() -> Value {
    let (cluster, policy) =
        (fixture_path("whatif").join("cluster.yaml"), fixture_path("whatif").join("needs-ssd.json"));
    let (ok, out, err) = cli(&[
        "--policy",
        policy.to_str().unwrap(),
        "--cluster-snapshot",
        cluster.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert!(ok, "{err}");
    json(&out)
}

#[test]
fn a_label_presence_predicate_names_the_running_pod_on_the_node_without_the_label() {
    let r = cli_report();
    assert_eq!(r["scheduler"], "predicate-scheduler");
    assert_eq!(r["current"]["source"], "default, no Policy");
    assert_eq!(r["nodes"], 3);
    // Running: web-1 (a), web-2 (b), big (c); `other` is default-scheduler's and not looked at.
    let running = &r["running"];
    assert_eq!(running["checked"], 3);
    assert_eq!(
        running["stopFitting"],
        json!([{"pod": "shop/web-2", "node": "b", "fitsElsewhere": 1,
                "rejectedBy": [{"predicate": "NeedsSSD", "reason": "node(s) didn't have the requested labels"}]}]),
        "web-2 fits a elsewhere; c is full"
    );
    assert_eq!(
        running["stopFittingByReason"],
        json!([{"predicate": "NeedsSSD", "reason": "node(s) didn't have the requested labels", "pods": 1,
                "fitNowhere": 0, "examples": ["shop/web-2"]}])
    );
    assert_eq!((running["notFittingNow"].as_u64(), running["startFitting"].as_u64()), (Some(0), Some(0)));
    // Pending: wait-1 (500m) fits a and b now, only a after; wait-2 (1500m) fits a only, both times.
    let pending = &r["pending"];
    assert_eq!(pending["checked"], 2);
    let pods: Vec<(String, u64, u64)> = pending["pods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["pod"].as_str().unwrap().to_string(),
                p["before"]["feasible"].as_u64().unwrap(),
                p["after"]["feasible"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(pods, [("shop/wait-1".to_string(), 2, 1), ("shop/wait-2".to_string(), 1, 1)]);
    assert_eq!(
        pending["pods"][0]["after"]["summary"],
        "1/3 nodes are available: 1 Insufficient cpu, 1 node(s) didn't have the requested labels."
    );
    assert_eq!(pending["becomeUnschedulable"], json!([]));
    // Node checks: NeedsSSD rejects b for wait-1 and wait-2 and web-2's own node b; GeneralPredicates
    // rejects c for both pending pods and b for wait-2, under both plans.
    let needs_ssd = r["predicates"].as_array().unwrap().iter().find(|p| p["predicate"] == "NeedsSSD").unwrap();
    assert_eq!(needs_ssd, &json!({"predicate": "NeedsSSD", "before": null, "after": 3}));
    let general = r["predicates"].as_array().unwrap().iter().find(|p| p["predicate"] == "GeneralPredicates").unwrap();
    assert_eq!(general, &json!({"predicate": "GeneralPredicates", "before": 3, "after": 3}));
    assert_eq!(r["priorities"]["weights"][2], json!({"name": "LeastRequestedPriority", "before": 1, "after": 1}));
}

#[test]
fn the_table_leads_with_the_summary_as_docs_whatif_md_shows() {
    // Run as docs/whatif.md shows it, from the repository's root.
    let out = Command::new(env!("CARGO_BIN_EXE_predicate-extender"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["whatif", "--policy", "tests/fixtures/whatif/needs-ssd.json"])
        .args(["--cluster-snapshot", "tests/fixtures/whatif/cluster.yaml", "--all"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[2], "Pending 2 pods: 0 become unschedulable, 0 become schedulable, 0 get another best node.");
    assert_eq!(lines[3], "Running 3 pods: 1 would no longer fit where they run, 0 of them on no other node.");
    assert!(
        out.contains("shop/web-2 on b: NeedsSSD: node(s) didn't have the requested labels; fits 1 other node(s)"),
        "{out}"
    );
    let doc = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/whatif.md")).unwrap();
    let shown = doc.split("--cluster-snapshot tests/fixtures/whatif/cluster.yaml --all\n").nth(1).unwrap();
    let shown = shown.split("\n...\n").next().unwrap();
    assert!(out.starts_with(shown), "docs/whatif.md's example is stale:\n{shown}\n---- the command prints:\n{out}");
}

/// README's `whatif --demo` example prints what the README shows (the start of the report), and
/// without `--scheduler` the report says whose pods the demo cluster has.
#[test]
fn the_readmes_demo_example_prints_what_it_shows_and_an_empty_report_says_why() {
    let readme = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let mut lines = readme.lines().skip_while(|l| !l.starts_with("$ predicate-extender whatif --demo "));
    let command = lines.next().expect("README has the whatif --demo example");
    let args: Vec<&str> = command.split_whitespace().skip(3).collect(); // after `$ predicate-extender whatif`
    let shown: Vec<&str> = lines.take_while(|l| !l.starts_with("```")).collect();
    assert!(shown.len() >= 4, "{shown:?}");
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_predicate-extender"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("NO_COLOR", "1")
            .arg("whatif")
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let out = run(&args);
    let printed: Vec<&str> = out.lines().take(shown.len()).collect();
    assert_eq!(printed, shown, "README's whatif example is stale:\n{out}");

    let without: Vec<&str> = args.iter().copied().take_while(|a| *a != "--scheduler").collect();
    let out = run(&without);
    assert!(
        out.contains(
            "No pod of this cluster is predicate-scheduler's; there are default-scheduler's 7 pods: --scheduler NAME looks at another scheduler's."
        ),
        "{out}"
    );
    let with_pods = run(&args);
    assert!(!with_pods.contains("No pod of this cluster"), "{with_pods}");
}

#[test]
fn bad_flags_and_files_are_named() {
    let (ok, _, err) = cli(&["--policy", "/nonexistent/new.json", "--demo"]);
    assert!(!ok);
    assert!(err.contains("--policy: /nonexistent/new.json"), "{err}");
    let policy = fixture_path("whatif").join("needs-ssd.json");
    let (ok, _, err) = cli(&["--policy", policy.to_str().unwrap(), "--against", "/nonexistent/old.json", "--demo"]);
    assert!(!ok);
    assert!(err.contains("--against: /nonexistent/old.json"), "{err}");
}

async fn post(server: &TestServer, path: &str, accept: &str, body: String) -> (u16, String) {
    let resp =
        server.client.post(format!("{}{path}", server.base)).header("Accept", accept).body(body).send().await.unwrap();
    (resp.status().as_u16(), resp.text().await.unwrap_or_default())
}

#[tokio::test]
async fn over_http_the_report_is_the_clis_against_the_served_policy() {
    let server = TestServer::start(config(cluster(&whatif_fixture("cluster.yaml")))).await;
    let (status, body) = post(&server, "/whatif", "application/json", whatif_fixture("needs-ssd.json")).await;
    assert_eq!(status, 200, "{body}");
    let mut http = json(&body);
    let mut cli = cli_report();
    // The server serves no Policy: its plan is the CLI's default; only the names of the sources differ.
    assert_eq!(http["current"]["source"], "served");
    assert_eq!(http["new"]["source"], "request body");
    for r in [&mut http, &mut cli] {
        r["current"]["source"] = Value::Null;
        r["new"]["source"] = Value::Null;
    }
    assert_eq!(http, cli);

    let (status, table) = post(&server, "/whatif?all", "text/plain", whatif_fixture("needs-ssd.json")).await;
    assert_eq!(status, 200, "{table}");
    assert!(table.contains("shop/web-2 on b: NeedsSSD"), "{table}");
    server.stop().await;
}

#[tokio::test]
async fn bad_input_is_answered_4xx_with_what_is_wrong() {
    let server = TestServer::start(config(cluster(&whatif_fixture("cluster.yaml")))).await;
    let bad_policy = r#"{"kind": "Policy", "apiVersion": "v1", "predicates": [{"name": "NoSuchPredicate"}]}"#;
    let (status, body) = post(&server, "/whatif", "application/json", bad_policy.to_string()).await;
    assert_eq!(status, 400, "{body}");
    let error = json(&body)["Error"].as_str().unwrap().to_string();
    assert!(error.starts_with("request body: ") && error.contains("NoSuchPredicate"), "{error}");
    let (status, body) = post(&server, "/whatif?sample=lots", "application/json", String::new()).await;
    assert_eq!((status, json(&body)["Error"].as_str().unwrap()), (400, "sample=lots: expected a whole number of pods"));
    let (status, _) = post(&server, "/whatif", "image/png", whatif_fixture("needs-ssd.json")).await;
    assert_eq!(status, 406);
    // Not on the admin listener.
    let admin = server.client.post(format!("{}/whatif", server.admin)).body("{}").send().await.unwrap();
    assert_eq!(admin.status().as_u16(), 404);
    server.stop().await;
}

#[tokio::test]
async fn one_at_a_time_under_its_own_deadline() {
    // 1,000 nodes with 20,000 running pods: the report takes far longer than 1 ms.
    let spec = ClusterSpec { nodes: 1000, pods_per_node: 20, ..ClusterSpec::default() };
    let (nodes, pods) = generate(&spec);
    let mut c = config(ClusterSource::Snapshot(Box::new(Snapshot::build(nodes, pods))));
    c.whatif_timeout = Duration::from_millis(300);
    let server = TestServer::start(c).await;
    let policy = whatif_fixture("needs-ssd.json");
    let first = post(&server, "/whatif?scheduler=default-scheduler", "application/json", policy.clone());
    let second = async {
        // Sent while the first runs: refused, not queued.
        tokio::time::sleep(Duration::from_millis(100)).await;
        post(&server, "/whatif?scheduler=default-scheduler", "application/json", policy.clone()).await
    };
    let ((status1, body1), (status2, body2)) = tokio::join!(first, second);
    assert_eq!(status2, 429, "{body2}");
    assert!(body2.contains("another whatif is running"), "{body2}");
    assert_eq!(status1, 503, "{body1}");
    assert_eq!(json(&body1)["Error"], "the what-if report did not finish within --whatif-timeout 300ms");
    // Once the cancelled report has stopped, the next one runs.
    let next =
        predicate_extender_testing::eventually("the cancelled whatif stopped", Duration::from_secs(20), || async {
            let (status, body) = post(&server, "/whatif?scheduler=nobody", "application/json", policy.clone()).await;
            (status != 429).then_some((status, body))
        })
        .await;
    assert_eq!(next.0, 200, "{}", next.1);
    server.stop().await;
}

/// Pending pods that a Policy change leaves without a node are listed by the node each fits best
/// now and what kube-scheduler would say of that node under the new Policy, one line per group,
/// not one line of every name.
#[test]
fn the_pods_that_become_unschedulable_are_grouped_by_node_and_reason() {
    // The fixture's cluster with node a full: the pending pods fit b only, the one node without
    // disktype, which NeedsSSD rejects.
    let cluster = whatif_fixture("cluster.yaml").replace(
        "spec: {schedulerName: predicate-scheduler, nodeName: a, containers: [{name: c, resources: {requests: {cpu: 500m}}}]}",
        "spec: {schedulerName: predicate-scheduler, nodeName: a, containers: [{name: c, resources: {requests: {cpu: \"2\"}}}]}",
    );
    let wait_2 = "{name: wait-2, namespace: shop, uid: u-wait-2}\n  spec: {schedulerName: predicate-scheduler, containers: [{name: c, resources: {requests: {cpu: 1500m}}}]}";
    assert!(cluster.contains(wait_2));
    let cluster = cluster.replace(wait_2, "{name: wait-2, namespace: shop, uid: u-wait-2}\n  spec: {schedulerName: predicate-scheduler, containers: [{name: c, resources: {requests: {cpu: 900m}}}]}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cluster.yaml");
    std::fs::write(&file, cluster).unwrap();
    let policy = fixture_path("whatif").join("needs-ssd.json");
    let args = ["--policy", policy.to_str().unwrap(), "--cluster-snapshot", file.to_str().unwrap()];
    let (ok, out, err) = cli(&[&args[..], &["--format", "json"]].concat());
    assert!(ok, "{err}");
    let r = json(&out);
    assert_eq!(r["pending"]["becomeUnschedulable"], json!(["shop/wait-1", "shop/wait-2"]), "{r}");
    assert_eq!(
        r["pending"]["becomeUnschedulableByReason"],
        json!([{"node": "b", "reason": "Extender: node(s) didn't have the requested labels", "pods": ["shop/wait-1", "shop/wait-2"]}])
    );
    let (ok, table, err) = cli(&args);
    assert!(ok, "{err}");
    let header = "Pending pods that become unschedulable, by the node each fits best now, and why kube-scheduler would reject that node under the new Policy:";
    assert!(table.contains(header), "{table}");
    let row = table.lines().skip_while(|l| *l != header).nth(3).unwrap_or_default();
    assert_eq!(
        row.split_whitespace().collect::<Vec<_>>().join(" "),
        "b Extender: node(s) didn't have the requested labels 2 shop/wait-1, shop/wait-2",
        "{table}"
    );
}
