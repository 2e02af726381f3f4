//! `predicate-extender gen-cluster`: the same seed writes the same bytes, the snapshot loads with
//! `serve`'s loader and has the asked shape, a server on it answers the generated requests, and on
//! 1,000 generated nodes its `/prioritize` answers rank the nodes as the classic weighted sum.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{config, feasible, TestServer};
use predicate_extender::cluster::objects::PREFER_AVOID_PODS_ANNOTATION;
use predicate_extender::cluster::source::load_file;
use predicate_extender::cluster::{ClusterObject, ObjectKind};
use predicate_extender::server::ClusterSource;

const BIN: &str = env!("CARGO_BIN_EXE_predicate-extender");
const SHAPE: [&str; 8] = ["--nodes", "60", "--pods-per-node", "10", "--zones", "3", "--nominated", "5"];

/// Runs `gen-cluster` with these arguments; returns the exit code and stderr.
fn gen(args: &[&str]) -> (i32, String) {
    let out = Command::new(BIN).arg("gen-cluster").args(args).output().expect("run the binary");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).to_string())
}

fn gen_ok(dir: &Path, file: &str, extra: &[&str]) -> PathBuf {
    let path = dir.join(file);
    let mut args: Vec<&str> = SHAPE.to_vec();
    args.extend_from_slice(extra);
    let out = path.to_str().expect("utf-8 temp path");
    args.extend_from_slice(&["--out", out]);
    let (code, stderr) = gen(&args);
    assert_eq!(code, 0, "gen-cluster {args:?}: {stderr}");
    assert!(stderr.contains("wrote"), "{stderr}");
    path
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_same_seed_writes_the_same_bytes_and_another_seed_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let a = read(&gen_ok(dir.path(), "a.json", &["--seed", "7"]));
    let b = read(&gen_ok(dir.path(), "b.json", &["--seed", "7"]));
    let c = read(&gen_ok(dir.path(), "c.json", &["--seed", "8"]));
    assert!(a.len() > 60 * 12_000, "{} bytes", a.len());
    assert!(a == b, "same seed, different bytes");
    assert!(a != c, "another seed, same bytes");
    for mode in ["node-names", "nodes"] {
        let x = read(&gen_ok(dir.path(), "x.json", &["--seed", "7", "--extender-args", mode]));
        let y = read(&gen_ok(dir.path(), "y.json", &["--seed", "7", "--extender-args", mode]));
        assert!(x == y, "{mode}: same seed, different bytes");
    }
}

#[test]
fn the_snapshot_loads_with_the_shape_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen_ok(dir.path(), "cluster.json", &[]);
    let objects = load_file(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(objects.nodes.len(), 60);
    assert_eq!(objects.pods.len(), 600);
    assert!(objects.skipped.is_empty(), "{:?}", objects.skipped);
    // A Service and a ReplicaSet per app (40), and checkout-api's Service and two ReplicaSets.
    let kinds: Vec<ObjectKind> = objects.others.iter().map(ClusterObject::kind).collect();
    assert_eq!(kinds.iter().filter(|k| **k == ObjectKind::Service).count(), 41);
    assert_eq!(kinds.iter().filter(|k| **k == ObjectKind::ReplicaSet).count(), 42);
    assert_eq!(kinds.len(), 83);
    let types: BTreeSet<&str> = objects
        .nodes
        .iter()
        .filter_map(|n| n.metadata.labels.get("node.kubernetes.io/instance-type").map(String::as_str))
        .collect();
    assert!(types.len() >= 3, "nodes of several sizes: {types:?}");

    let tainted = objects.nodes.iter().filter(|n| !n.spec.taints.is_empty()).count();
    assert!((1..=15).contains(&tainted), "about 10% of 60 nodes tainted, got {tainted}");
    let zones: BTreeSet<&str> = objects
        .nodes
        .iter()
        .filter_map(|n| n.metadata.labels.get("topology.kubernetes.io/zone").map(String::as_str))
        .collect();
    assert_eq!(zones, BTreeSet::from(["zone-0", "zone-1", "zone-2"]));
    assert!(objects.nodes.iter().all(|n| (20..=50).contains(&n.status.images.len())));

    let anti = objects.pods.iter().filter(|p| p.has_pod_affinity_terms()).count();
    assert!((30..=95).contains(&anti), "about 10% of 600 pods with anti-affinity, got {anti}");
    let nominated: Vec<_> = objects.pods.iter().filter(|p| !p.status.nominated_node_name.is_empty()).collect();
    assert_eq!(nominated.len(), 5);
    assert!(nominated.iter().all(|p| p.spec.node_name.is_empty()));
    assert_eq!(objects.pods.iter().filter(|p| !p.spec.node_name.is_empty()).count(), 595);

    let snapshot = objects.into_snapshot();
    assert_eq!((snapshot.node_count(), snapshot.pod_count()), (60, 600));
}

#[tokio::test]
async fn a_server_on_the_snapshot_answers_the_generated_requests() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = gen_ok(dir.path(), "cluster.json", &[]);
    let pod: serde_json::Value = serde_json::from_slice(&read(&gen_ok(dir.path(), "pod.json", &["--pending-pod"])))
        .expect("the pending pod is JSON");
    assert_eq!(pod["kind"], "Pod");
    assert!(pod["spec"]["nodeName"].is_null());
    let names = read(&gen_ok(dir.path(), "names.json", &["--extender-args", "node-names"]));
    let sample = read(&gen_ok(dir.path(), "sample.json", &["--extender-args", "node-names", "--candidates", "20"]));
    let nodes = read(&gen_ok(dir.path(), "nodes.json", &["--extender-args", "nodes"]));

    let server = TestServer::start(config(ClusterSource::File(cluster))).await;
    for (what, body, candidates) in [("NodeNames", &names, 60), ("20 NodeNames", &sample, 20), ("Nodes", &nodes, 60)] {
        let (status, answer) = server.post("/filter", body.clone()).await;
        assert_eq!(status, 200, "{what}: {answer}");
        assert_eq!(answer["Error"], "", "{what}: {answer}");
        let fits = feasible(&answer).len();
        let failed = answer["FailedNodes"].as_object().map_or(0, |m| m.len())
            + answer["FailedAndUnresolvableNodes"].as_object().map_or(0, |m| m.len());
        assert_eq!(fits + failed, candidates, "{what}: every candidate answered");
        // The pending pod fits every untainted node: most of them.
        assert!(fits * 10 >= candidates * 7, "{what}: {fits} of {candidates} fit");
    }
    let (status, answer) = server.post("/prioritize", names.clone()).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer.as_array().map(Vec::len), Some(60));
    server.stop().await;
}

/// The default priorities and their weights in kube-scheduler's classic default provider
/// (1.12-1.17 `algorithmprovider/defaults`), written here rather than read from the extender.
const CLASSIC_WEIGHTS: [(&str, i64); 8] = [
    ("SelectorSpreadPriority", 1),
    ("InterPodAffinityPriority", 1),
    ("LeastRequestedPriority", 1),
    ("BalancedResourceAllocation", 1),
    ("NodePreferAvoidPodsPriority", 10000),
    ("NodeAffinityPriority", 1),
    ("TaintTolerationPriority", 1),
    ("ImageLocalityPriority", 1),
];

/// Issue 14, item 9, as a new user meets it: `gen-cluster` writes a 1,000-node cluster and its
/// NodeNames body (the flags of docs/performance.md, "Measuring"), `serve` loads the cluster,
/// `/filter` keeps the nodes that fit and `/prioritize` scores those, as kube-scheduler sends them.
/// The answers rank the nodes as the classic weighted sum does (computed here from each priority's
/// score, which `POST /explain` reports, and the classic weights): a pair the sum orders is never
/// ordered the other way, and a pair one point of the mean apart (the weights of the priorities
/// other than NodePreferAvoidPodsPriority) is apart in the answers unless a node is avoided. The
/// answers use at least 4 distinct values, and 0 is exactly the nodes whose preferAvoidPods
/// annotation names the pod's ReplicaSet (read here from the file).
#[tokio::test]
async fn prioritize_on_a_generated_1000_node_cluster_ranks_as_the_classic_weighted_sum() {
    let dir = tempfile::tempdir().unwrap();
    let write = |file: &str, extra: &[&str]| {
        let path = dir.path().join(file);
        let mut args = vec!["--nodes", "1000", "--pods-per-node", "5", "--nominated", "10"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--out", path.to_str().expect("utf-8 temp path")]);
        let (code, stderr) = gen(&args);
        assert_eq!(code, 0, "gen-cluster {args:?}: {stderr}");
        path
    };
    let cluster = write("cluster.json", &[]);
    let names = read(&write("names.json", &["--extender-args", "node-names"]));
    let pod = read(&write("pod.json", &["--pending-pod"]));

    let mut body: serde_json::Value = serde_json::from_slice(&names).unwrap();
    let owner = body["Pod"]["metadata"]["ownerReferences"][0]["uid"].as_str().unwrap().to_string();
    let objects = load_file(&cluster).unwrap_or_else(|e| panic!("{e}"));
    let avoiding: BTreeSet<String> = objects
        .nodes
        .iter()
        .filter(|n| n.metadata.annotations.get(PREFER_AVOID_PODS_ANNOTATION).is_some_and(|a| a.contains(&owner)))
        .map(|n| n.metadata.name.clone())
        .collect();
    assert!((1..=50).contains(&avoiding.len()), "a few nodes avoid the pod: {}", avoiding.len());

    let server = TestServer::start(config(ClusterSource::File(cluster))).await;
    let (status, filtered) = server.post("/filter", names).await;
    assert_eq!(status, 200, "{filtered}");
    let fits = feasible(&filtered);
    assert!((800..1000).contains(&fits.len()), "{} of 1000 nodes fit", fits.len());
    body["NodeNames"] = serde_json::json!(fits);
    let (status, answer) = server.post("/prioritize", body.to_string()).await;
    assert_eq!(status, 200, "{answer}");
    let answers: BTreeMap<String, i64> = answer
        .as_array()
        .expect("a HostPriorityList")
        .iter()
        .map(|e| (e["Host"].as_str().unwrap().to_string(), e["Score"].as_i64().unwrap()))
        .collect();
    assert_eq!(answers.keys().cloned().collect::<BTreeSet<_>>(), fits.iter().cloned().collect());

    // Each priority's score of each feasible node, from /explain (of the pod as `--pending-pod`
    // writes it, which the 1,000-node example of docs/explain.md uses).
    let explained = server
        .client
        .post(format!("{}/explain", server.base))
        .header("Accept", "application/json")
        .body(pod)
        .send()
        .await
        .unwrap();
    let status = explained.status().as_u16();
    let explained: serde_json::Value = explained.json().await.unwrap();
    assert_eq!(status, 200, "{explained}");
    server.stop().await;
    let weights: BTreeMap<&str, i64> = CLASSIC_WEIGHTS.into_iter().collect();
    let scored = explained["scores"]["nodes"].as_array().unwrap();
    assert_eq!(scored.len(), fits.len());
    let mut nodes = Vec::new(); // (node, classic weighted sum, avoided, answer)
    for node in scored {
        let name = node["node"].as_str().unwrap();
        let mut sum = 0;
        let mut seen = BTreeSet::new();
        let mut avoided = false;
        for p in node["priorities"].as_array().unwrap() {
            let (priority, score) = (p["name"].as_str().unwrap(), p["score"].as_i64().unwrap());
            assert!((0..=10).contains(&score), "{name} {priority}: {score}");
            sum += weights.get(priority).unwrap_or_else(|| panic!("{priority} is not a default priority")) * score;
            seen.insert(priority);
            avoided |= priority == "NodePreferAvoidPodsPriority" && score == 0;
        }
        assert_eq!(seen.len(), weights.len(), "{name}: every default priority scored");
        assert_eq!(avoided, avoiding.contains(name), "{name}: NodePreferAvoidPodsPriority");
        nodes.push((name, sum, avoided, answers[name]));
    }
    assert!(nodes.iter().any(|n| n.2), "an avoided node fits");

    // One point of the answer's scale in the classic sum: the weights other than the avoid veto's.
    let point: i64 = CLASSIC_WEIGHTS.iter().filter(|(n, _)| *n != "NodePreferAvoidPodsPriority").map(|(_, w)| w).sum();
    let mut apart = 0;
    for (a, a_sum, a_avoided, a_answer) in &nodes {
        assert_eq!(*a_answer == 0, *a_avoided, "{a}: answer {a_answer}");
        for (b, b_sum, b_avoided, b_answer) in &nodes {
            if a_sum > b_sum {
                assert!(
                    a_answer >= b_answer,
                    "{a} (sum {a_sum}, answer {a_answer}) vs {b} (sum {b_sum}, answer {b_answer})"
                );
            }
            if a_sum - b_sum >= point && !a_avoided && !b_avoided {
                assert!(
                    a_answer > b_answer,
                    "{a} (sum {a_sum}, answer {a_answer}) vs {b} (sum {b_sum}, answer {b_answer})"
                );
                apart += 1;
            }
        }
    }
    assert!(apart > 10_000, "only {apart} pairs a point apart");
    let distinct: BTreeSet<i64> = answers.values().copied().collect();
    assert!(distinct.len() >= 4, "distinct scores {distinct:?}");
}

#[test]
fn bad_flags_and_unwritable_files_exit_2_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-dir").join("c.json");
    for (args, expect) in [
        (vec!["--nodes", "10", "--out", missing.to_str().unwrap()], "cannot create"),
        (vec!["--nodes", "ten", "--out", "x.json"], "--nodes"),
        (vec!["--nodes", "2", "--pods-per-node", "2", "--nominated", "5", "--out", "x.json"], "--nominated 5"),
    ] {
        let (code, stderr) = gen(&args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(expect), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    assert!(!Path::new("x.json").exists());
}
