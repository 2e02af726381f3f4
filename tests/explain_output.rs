//! `predicate-extender explain` on snapshot fixtures: the whole output, table (without colour) and
//! JSON, compared with the files in tests/fixtures/explain/. `UPDATE_EXPLAIN_FIXTURES=1 cargo test
//! --test explain_output` rewrites them (review the diff).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_predicate-extender");

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/explain").join(name)
}

/// What `predicate-extender explain` with these arguments prints (its stdout is a pipe: no colour).
fn explain(args: &[String]) -> String {
    let out = Command::new(BIN).current_dir(root()).arg("explain").args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {:?}: {stderr}", out.status);
    assert!(stderr.is_empty(), "{args:?}: nothing on stderr: {stderr}");
    String::from_utf8(out.stdout).unwrap()
}

fn check(expected_file: &str, got: &str) {
    let path = fixture(expected_file);
    if std::env::var_os("UPDATE_EXPLAIN_FIXTURES").is_some() {
        std::fs::write(&path, got).unwrap();
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(got, want, "explain output differs from {expected_file}");
}

fn args(pod: &str, extra: &[&str]) -> Vec<String> {
    let mut a = vec![
        "--cluster-snapshot".to_string(),
        fixture("cluster.yaml").display().to_string(),
        "--pod".to_string(),
        fixture(pod).display().to_string(),
        "--policy".to_string(),
        fixture("policy.json").display().to_string(),
    ];
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

// The full report is `--all` now (the default is the overview below); its fixtures are unchanged.
#[test]
fn double_pass_where_no_node_fits_table() {
    // n1: affinity to the nominated db holds in pass 1 only; n2 tainted; n3 full.
    check("needs-db.txt", &explain(&args("pod-needs-db.yaml", &["--all"])));
}

#[test]
fn double_pass_where_no_node_fits_overview() {
    check("needs-db-overview.txt", &explain(&args("pod-needs-db.yaml", &[])));
}

#[test]
fn double_pass_where_no_node_fits_json() {
    check("needs-db.json", &explain(&args("pod-needs-db.yaml", &["--format", "json"])));
}

#[test]
fn feasible_nodes_with_scores_table() {
    check("small.txt", &explain(&args("pod-small.yaml", &["--all"])));
}

#[test]
fn feasible_nodes_with_scores_overview() {
    let got = explain(&args("pod-small.yaml", &[]));
    check("small-overview.txt", &got);
    assert!(got.starts_with("1/3 nodes are available: "), "the summary line first:\n{got}");
}

#[test]
fn named_nodes_in_full_with_the_clusters_summary_and_ranking() {
    // n1 fits (rank 1 of 1), n3 does not: both are shown with every predicate, both passes.
    let got = explain(&args("pod-small.yaml", &["--node", "n3", "--node", "n1"]));
    check("small-nodes-n1-n3.txt", &got);
    let json = explain(&args("pod-small.yaml", &["--node", "n3", "--format", "json"]));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["nodes"].as_array().map(Vec::len), Some(1), "only the named node in full");
    assert_eq!(v["nodes"][0]["node"], "n3");
    assert_eq!(v["feasible"], serde_json::json!(["n1"]), "the cluster's feasible nodes");
    assert!(v["summary"].as_str().unwrap().starts_with("1/3 nodes are available"));
}

#[test]
fn feasible_nodes_with_scores_json() {
    let got = explain(&args("pod-small.yaml", &["--format", "json"]));
    check("small.json", &got);
    let v: serde_json::Value = serde_json::from_str(&got).unwrap();
    assert_eq!(v["feasible"], serde_json::json!(["n1"]));
    assert_eq!(v["scores"]["nodes"][0]["node"], "n1");
}

#[test]
fn default_policy_on_the_demo_for_one_node() {
    let demo = |extra: &[&str]| {
        let mut a: Vec<String> =
            ["--demo", "--pod", "examples/demo/pod-web-2.yaml"].iter().map(|s| s.to_string()).collect();
        a[2] = root().join(&a[2]).display().to_string();
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    check("demo-node-b2.txt", &explain(&demo(&["--node", "node-b2"])));
    // --top ranks more or fewer of the feasible nodes (the demo has two: node-b1, node-b3).
    let top1 = explain(&demo(&["--top", "1"]));
    assert!(top1.contains("Top 1 of 2 feasible nodes"), "{top1}");
    let ranked =
        |out: &str| out.lines().filter(|l| l.starts_with(|c: char| c.is_ascii_digit()) && l.contains("node-")).count();
    assert_eq!(ranked(&top1), 1, "{top1}");
    assert_eq!(ranked(&explain(&demo(&[]))), 2);
}

#[test]
fn flags_that_would_be_ignored_are_refused() {
    let demo = |extra: &[&str]| {
        let mut a: Vec<String> = vec!["explain".into(), "--demo".into(), "--pod".into()];
        a.push(root().join("examples/demo/pod-web-2.yaml").display().to_string());
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    for (extra, want) in [
        (vec!["--all", "--node", "node-b1"], "--all and --node do not go together"),
        (vec!["--all", "--top", "3"], "--all and --top do not go together"),
        (vec!["--top", "3", "--format", "json"], "--top is for the table"),
        (vec!["--all", "--format", "json"], "--all is for the table"),
    ] {
        let out = Command::new(BIN).current_dir(root()).args(demo(&extra)).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.starts_with(&format!("predicate-extender: {want}")), "{extra:?}: {stderr}");
    }
    let out = Command::new(BIN).current_dir(root()).args(demo(&["--top", "0"])).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--top <N>"), "clap names the flag");
}

/// The explain example of docs/explain.md, replayed with the real binary (its stdout is a pipe, so
/// no colour), prints exactly what the page shows.
#[test]
fn docs_example_prints_what_the_page_shows() {
    let page = std::fs::read_to_string(root().join("docs/explain.md")).unwrap();
    let mut lines = page.lines();
    let command = lines
        .by_ref()
        .find_map(|l| l.strip_prefix("$ predicate-extender explain "))
        .expect("docs/explain.md has a `$ predicate-extender explain` example");
    let shown: Vec<&str> = lines.take_while(|l| !l.starts_with("```")).collect();
    let out = Command::new(BIN).current_dir(root()).arg("explain").args(command.split_whitespace()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(!stdout.contains('\x1b'), "no colour on a pipe");
    assert_eq!(stdout.lines().collect::<Vec<_>>(), shown);
}

#[test]
fn the_binary_reports_bad_flags_and_files() {
    let run = |args: &[&str]| {
        Command::new(BIN)
            .current_dir(root())
            .env_remove("KUBERNETES_SERVICE_HOST")
            .arg("explain")
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&["--demo", "--pod", "examples/demo/pod-web-2.yaml", "--node", "node-z9"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "predicate-extender: --node node-z9: the cluster has no such node\n"
    );
    let out = run(&["--demo", "--pod", "no-such-pod.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-pod.yaml: cannot read"));
    let out = run(&["--pod", "examples/demo/pod-web-2.yaml"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--cluster-snapshot"), "a cluster source is required");
    // NO_COLOR is honoured even where colour would otherwise apply; on a pipe there is none anyway.
    let out = Command::new(BIN)
        .current_dir(root())
        .env("NO_COLOR", "1")
        .args(["explain", "--demo", "--pod", "examples/demo/pod-web-2.yaml", "--format", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["feasible"], serde_json::json!(["node-b1", "node-b3"]));
}
