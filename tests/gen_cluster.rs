//! `gen-cluster`'s clusters in the extender: the snapshot loads with `serve`'s loader and has the
//! asked shape, a server on it answers the generated requests, and on 1,000 generated nodes its
//! `/prioritize` answers rank the nodes as the classic weighted sum. The files are written by the
//! generator `gen-cluster` runs (its command line: crates/gen-cluster/tests/cli.rs).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use common::{config, feasible, TestServer};
use gen_cluster::{ArgsMode, ClusterSpec, Output};
use predicate_engine::cluster::objects::PREFER_AVOID_PODS_ANNOTATION;
use predicate_engine::cluster::source::load_file;
use predicate_engine::cluster::{ClusterObject, ObjectKind};
use predicate_extender::server::ClusterSource;
use predicate_extender::wire::{Candidates, ExtenderArgs};

/// The shape of the cluster: `--nodes 60 --pods-per-node 10 --zones 3 --nominated 5`.
const SHAPE: ClusterSpec = ClusterSpec {
    nodes: 60,
    pods_per_node: 10,
    zones: 3,
    nominated: 5,
    anti_affinity_percent: 10,
    tainted_percent: 10,
    seed: 1,
};

/// Writes `output` of `spec` into `dir/file`, as `gen-cluster` does.
fn gen_ok(dir: &Path, file: &str, spec: &ClusterSpec, output: Output) -> PathBuf {
    let path = dir.join(file);
    let summary = gen_cluster::run(spec, output, &path).unwrap_or_else(|e| panic!("gen-cluster {file}: {e}"));
    assert!(summary.contains("wrote"), "{summary}");
    path
}

/// `--extender-args node-names` (with `--candidates`).
fn node_names(candidates: Option<usize>) -> Output {
    Output::ExtenderArgs { mode: ArgsMode::NodeNames, candidates }
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_snapshot_loads_with_the_shape_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen_ok(dir.path(), "cluster.json", &SHAPE, Output::Cluster);
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
    let cluster = gen_ok(dir.path(), "cluster.json", &SHAPE, Output::Cluster);
    let pod: serde_json::Value =
        serde_json::from_slice(&read(&gen_ok(dir.path(), "pod.json", &SHAPE, Output::PendingPod)))
            .expect("the pending pod is JSON");
    assert_eq!(pod["kind"], "Pod");
    assert!(pod["spec"]["nodeName"].is_null());
    let names = read(&gen_ok(dir.path(), "names.json", &SHAPE, node_names(None)));
    let sample = read(&gen_ok(dir.path(), "sample.json", &SHAPE, node_names(Some(20))));
    let nodes_args = Output::ExtenderArgs { mode: ArgsMode::Nodes, candidates: None };
    let nodes = read(&gen_ok(dir.path(), "nodes.json", &SHAPE, nodes_args));

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
    // `gen-cluster --nodes 1000 --pods-per-node 5 --nominated 10`, its defaults otherwise.
    let spec = ClusterSpec { nodes: 1000, pods_per_node: 5, nominated: 10, ..ClusterSpec::default() };
    let cluster = gen_ok(dir.path(), "cluster.json", &spec, Output::Cluster);
    let names = read(&gen_ok(dir.path(), "names.json", &spec, node_names(None)));
    let pod = read(&gen_ok(dir.path(), "pod.json", &spec, Output::PendingPod));

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

/// The requests `gen-cluster --extender-args` writes decode as the extender's wire types.
#[test]
fn extender_args_decode_in_both_modes() {
    let spec = ClusterSpec { nodes: 12, pods_per_node: 2, ..ClusterSpec::default() };
    let names = gen_cluster::write::extender_args(&spec, ArgsMode::NodeNames, 5).unwrap();
    match ExtenderArgs::decode(&names).unwrap().nodes {
        Candidates::Names(n) => assert_eq!(n.len(), 5),
        Candidates::Nodes(_) => panic!("expected NodeNames"),
    }
    let nodes = gen_cluster::write::extender_args(&spec, ArgsMode::Nodes, 12).unwrap();
    let args = ExtenderArgs::decode(&nodes).unwrap();
    assert_eq!(args.pod.metadata.labels.get("app").map(|v| v.as_str()), Some("checkout-api"));
    match args.nodes {
        Candidates::Nodes(list) => {
            assert_eq!(list.items.len(), 12);
            assert_eq!(list.items[11].node.metadata.name, gen_cluster::generate::node_name(11));
        }
        Candidates::Names(_) => panic!("expected Nodes"),
    }
}
