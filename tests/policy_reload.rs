//! The `--policy` file changes while the server runs, written the way the kubelet updates a
//! ConfigMap volume (the new contents in a fresh timestamped directory, then the `..data` symlink
//! swapped to it with one rename): the next /filter runs the predicates in the new order, the next
//! /prioritize uses the new weights; a change that does not load keeps the old answers and is
//! counted as an error; a request in flight during a swap answers with one plan.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod common;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{cluster, config, TestServer};
use predicate_extender::server::PolicySource;
use predicate_extender_testing::eventually;
use serde_json::{json, Value};

/// A directory laid out as the kubelet lays out a ConfigMap volume:
/// `policy.json -> ..data/policy.json`, `..data -> ..<version>`, `..<version>/policy.json`.
struct ConfigMapVolume {
    dir: tempfile::TempDir,
    version: usize,
}

impl ConfigMapVolume {
    fn new(contents: &str) -> Self {
        let volume = ConfigMapVolume { dir: tempfile::tempdir().unwrap(), version: 0 };
        let data = volume.write_version(contents);
        std::os::unix::fs::symlink(&data, volume.dir.path().join("..data")).unwrap();
        std::os::unix::fs::symlink("..data/policy.json", volume.policy()).unwrap();
        volume
    }

    /// The path the server is given.
    fn policy(&self) -> PathBuf {
        self.dir.path().join("policy.json")
    }

    fn write_version(&self, contents: &str) -> String {
        let name = format!("..2026_01_01_00_00_00.{:06}", self.version);
        std::fs::create_dir(self.dir.path().join(&name)).unwrap();
        std::fs::write(self.dir.path().join(&name).join("policy.json"), contents).unwrap();
        name
    }

    /// The kubelet's update: new directory, a `..data_tmp` symlink to it renamed over `..data`,
    /// the old directory removed.
    fn update(&mut self, contents: &str) {
        let old = std::fs::read_link(self.dir.path().join("..data")).unwrap();
        self.version += 1;
        let data = self.write_version(contents);
        let tmp = self.dir.path().join("..data_tmp");
        std::os::unix::fs::symlink(&data, &tmp).unwrap();
        std::fs::rename(&tmp, self.dir.path().join("..data")).unwrap();
        std::fs::remove_dir_all(self.dir.path().join(old)).unwrap();
    }
}

/// Two predicates a node fails both of; the first to run decides the reason. Two label
/// priorities, one for the `ssd` label and one against it.
fn policy(taints_first: bool, prefer_ssd: i64, avoid_ssd: i64) -> String {
    let (taints, resources) = if taints_first { (1, 2) } else { (2, 1) };
    json!({
        "kind": "Policy",
        "apiVersion": "v1",
        "predicates": [
            {"name": "PodFitsResources", "order": resources},
            {"name": "PodToleratesNodeTaints", "order": taints},
        ],
        "priorities": [
            {"name": "PreferSSD", "weight": prefer_ssd, "argument": {"labelPreference": {"label": "ssd", "presence": true}}},
            {"name": "AvoidSSD", "weight": avoid_ssd, "argument": {"labelPreference": {"label": "ssd", "presence": false}}},
        ],
    })
    .to_string()
}

const TAINTS: &str = "node(s) had taints that the pod didn't tolerate";
const CPU: &str = "Insufficient cpu";

/// `nodes` nodes of 1 cpu, all tainted, every other one labelled `ssd` (`ssd-N` / `plain-N`).
fn nodes(nodes: usize) -> (String, Vec<String>) {
    let names: Vec<String> =
        (0..nodes).map(|i| if i % 2 == 0 { format!("ssd-{i}") } else { format!("plain-{i}") }).collect();
    let items: Vec<Value> = names
        .iter()
        .map(|name| {
            let labels = if name.starts_with("ssd") { json!({"ssd": "true"}) } else { json!({}) };
            json!({
                "kind": "Node",
                "metadata": {"name": name, "labels": labels},
                "spec": {"taints": [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]},
                "status": {"allocatable": {"cpu": "1", "memory": "8Gi", "pods": "110"}},
            })
        })
        .collect();
    (json!({"kind": "List", "apiVersion": "v1", "items": items}).to_string(), names)
}

/// A pod that fits no node: 2 cpu, no toleration.
fn request(names: &[String]) -> String {
    let pod = json!({
        "metadata": {"name": "big", "namespace": "default", "uid": "big-1"},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]},
    });
    json!({"Pod": pod, "NodeNames": names}).to_string()
}

async fn start(volume: &ConfigMapVolume, cluster_text: &str, reload_interval: Duration) -> TestServer {
    let mut c = config(cluster(cluster_text));
    c.policy = PolicySource::File(volume.policy());
    c.reload_interval = reload_interval;
    TestServer::start(c).await
}

/// The reason of each failed node of a /filter answer.
async fn reasons(server: &TestServer, body: &str) -> Vec<(String, String)> {
    let (status, answer) = server.post("/filter", body.to_string()).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["Error"], "", "{answer}");
    let mut failed: Vec<(String, String)> = answer["FailedNodes"]
        .as_object()
        .unwrap_or_else(|| panic!("no FailedNodes: {answer}"))
        .iter()
        .chain(answer["FailedAndUnresolvableNodes"].as_object().into_iter().flatten())
        .map(|(node, reason)| (node.clone(), reason.as_str().unwrap().to_string()))
        .collect();
    failed.sort();
    failed
}

async fn scores(server: &TestServer, body: &str) -> Vec<(String, i64)> {
    let (status, answer) = server.post("/prioritize", body.to_string()).await;
    assert_eq!(status, 200, "{answer}");
    answer
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["Host"].as_str().unwrap().to_string(), e["Score"].as_i64().unwrap()))
        .collect()
}

/// A series' value in the server's /metrics, 0 when absent.
async fn metric(server: &TestServer, series: &str) -> f64 {
    let (_, text) = server.get(&format!("{}/metrics", server.admin)).await;
    text.lines()
        .find_map(|l| l.strip_prefix(series).and_then(|rest| rest.strip_prefix(' ')))
        .map_or(0.0, |v| v.parse().unwrap())
}

/// The `sha256` label of `predicate_extender_policy_info`.
async fn active_sha256(server: &TestServer) -> String {
    let (_, text) = server.get(&format!("{}/metrics", server.admin)).await;
    let line = text.lines().find(|l| l.starts_with("predicate_extender_policy_info{")).expect("policy_info");
    line.split("sha256=\"").nth(1).and_then(|rest| rest.split('"').next()).unwrap().to_string()
}

fn sha256(text: &str) -> String {
    ring::digest::digest(&ring::digest::SHA256, text.as_bytes()).as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// How long a reload may take to show.
const WAIT: Duration = Duration::from_secs(10);

const SUCCESS: &str = "predicate_extender_policy_reload_total{result=\"success\"}";
const ERROR: &str = "predicate_extender_policy_reload_total{result=\"error\"}";
const LAST_OK: &str = "predicate_extender_policy_last_reload_successful";

fn all(names: &[String], reason: &str) -> Vec<(String, String)> {
    let mut v: Vec<_> = names.iter().map(|n| (n.clone(), reason.to_string())).collect();
    v.sort();
    v
}

#[tokio::test(flavor = "multi_thread")]
async fn a_configmap_update_changes_the_next_answers_without_a_restart() {
    let (text, names) = nodes(2); // ssd-0, plain-1
    let body = request(&names);
    let (a, b) = (policy(true, 4, 1), policy(false, 1, 4));
    let mut volume = ConfigMapVolume::new(&a);
    let server = start(&volume, &text, Duration::from_millis(50)).await;

    // Policy A: taints first; PreferSSD 4, AvoidSSD 1: ssd (4*10 + 1*0)/5 = 8, plain (0 + 10)/5 = 2.
    assert_eq!(reasons(&server, &body).await, all(&names, TAINTS));
    assert_eq!(scores(&server, &body).await, [("ssd-0".into(), 8), ("plain-1".into(), 2)]);
    assert_eq!(active_sha256(&server).await, sha256(&a));
    assert_eq!(metric(&server, SUCCESS).await, 0.0);

    volume.update(&b);
    eventually("the new order", WAIT, || async { reasons(&server, &body).await != all(&names, TAINTS) }).await;
    // Policy B: resources first; PreferSSD 1, AvoidSSD 4: ssd 10/5 = 2, plain 40/5 = 8.
    assert_eq!(reasons(&server, &body).await, all(&names, CPU));
    assert_eq!(scores(&server, &body).await, [("ssd-0".into(), 2), ("plain-1".into(), 8)]);
    assert_eq!(active_sha256(&server).await, sha256(&b));
    assert_eq!(metric(&server, SUCCESS).await, 1.0);
    assert_eq!(metric(&server, ERROR).await, 0.0);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_invalid_update_keeps_the_old_plan_and_counts_an_error() {
    let (text, names) = nodes(2);
    let body = request(&names);
    let a = policy(true, 4, 1);
    let mut volume = ConfigMapVolume::new(&a);
    let server = start(&volume, &text, Duration::from_millis(20)).await;

    // Valid JSON, a weight that is not: the whole file is refused, its valid order change too.
    let invalid = policy(false, 1, 4).replace("\"weight\":4", "\"weight\":-4");
    assert_ne!(invalid, policy(false, 1, 4));
    volume.update(&invalid);
    eventually("the error counted", WAIT, || async { metric(&server, ERROR).await == 1.0 }).await;
    assert_eq!(reasons(&server, &body).await, all(&names, TAINTS), "the old order");
    assert_eq!(scores(&server, &body).await, [("ssd-0".into(), 8), ("plain-1".into(), 2)], "the old weights");
    assert_eq!(active_sha256(&server).await, sha256(&a), "the file in force is still the old one");
    let (status, _) = server.get(&format!("{}/readyz", server.admin)).await;
    assert_eq!(status, 200, "still serving a valid plan: ready");
    // Many polls later the same broken file is still one error, not one per poll.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(metric(&server, ERROR).await, 1.0);
    assert_eq!(metric(&server, SUCCESS).await, 0.0);
    assert_eq!(metric(&server, LAST_OK).await, 0.0);

    // Fixed: it loads.
    let b = policy(false, 1, 4);
    volume.update(&b);
    eventually("the fixed file loaded", WAIT, || async { metric(&server, SUCCESS).await == 1.0 }).await;
    assert_eq!(metric(&server, LAST_OK).await, 1.0);
    assert_eq!(reasons(&server, &body).await, all(&names, CPU));
    assert_eq!(active_sha256(&server).await, sha256(&b));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sighup_reads_the_file_at_once() {
    let (text, names) = nodes(2);
    let body = request(&names);
    let mut volume = ConfigMapVolume::new(&policy(true, 4, 1));
    // Polled once an hour: only the signal can make the change seen within the test.
    let server = start(&volume, &text, Duration::from_secs(3600)).await;
    volume.update(&policy(false, 1, 4));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(reasons(&server, &body).await, all(&names, TAINTS), "not polled yet");
    let kill = std::process::Command::new("kill").args(["-HUP", &std::process::id().to_string()]).status().unwrap();
    assert!(kill.success());
    eventually("SIGHUP's reload", WAIT, || async { reasons(&server, &body).await == all(&names, CPU) }).await;
    server.stop().await;
}

/// Which plan a whole answer came from, or `None` if it mixes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plan {
    A,
    B,
}

fn filter_plan(reasons: &[(String, String)], nodes: usize) -> Option<Plan> {
    assert_eq!(reasons.len(), nodes, "every node fails");
    if reasons.iter().all(|(_, r)| r == TAINTS) {
        Some(Plan::A)
    } else if reasons.iter().all(|(_, r)| r == CPU) {
        Some(Plan::B)
    } else {
        None
    }
}

/// Plan A scores ssd 8, plain 2. Plan B ([AvoidSSD 3, EqualPriority 2]) scores ssd
/// (0 + 2*1)/5 = 0, plain (3*10 + 2*1)/5 = 6. A's scores under B's weights or B's under A's
/// make (6, 4) or (0, 8); a per-node mix makes both columns uneven.
fn prioritize_plan(scores: &[(String, i64)]) -> Option<Plan> {
    let column = |prefix: &str| -> Vec<i64> {
        let mut v: Vec<i64> = scores.iter().filter(|(h, _)| h.starts_with(prefix)).map(|(_, s)| *s).collect();
        v.dedup();
        v
    };
    match (column("ssd").as_slice(), column("plain").as_slice()) {
        ([8], [2]) => Some(Plan::A),
        ([0], [6]) => Some(Plan::B),
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_in_flight_during_a_swap_answers_with_one_plan() {
    const NODES: usize = 3000;
    let (text, names) = nodes(NODES);
    let body = request(&names);
    let a = policy(true, 4, 1);
    let b = json!({
        "kind": "Policy",
        "apiVersion": "v1",
        "predicates": [{"name": "PodFitsResources", "order": 1}, {"name": "PodToleratesNodeTaints", "order": 2}],
        "priorities": [
            {"name": "AvoidSSD", "weight": 3, "argument": {"labelPreference": {"label": "ssd", "presence": false}}},
            {"name": "EqualPriority", "weight": 2},
        ],
    })
    .to_string();
    let volume = ConfigMapVolume::new(&a);
    let server = start(&volume, &text, Duration::from_millis(1)).await;

    // Swap A and B back and forth, as fast as the kubelet could, until the requests are done.
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let stop = Arc::clone(&stop);
        let (a, b) = (a.clone(), b.clone());
        std::thread::spawn(move || {
            let mut volume = volume;
            let mut swaps = 0usize;
            while !stop.load(Ordering::Relaxed) {
                volume.update(if swaps.is_multiple_of(2) { &b } else { &a });
                swaps += 1;
                std::thread::sleep(Duration::from_millis(2));
            }
            (swaps, volume) // the directory lives on while the server still reads it
        })
    };

    // Each request is bracketed by the reload counter: when it moved, a new plan came into force
    // while the request was in flight.
    let mut seen = [(0usize, 0usize); 2]; // (plan A answers, plan B answers) for /filter, /prioritize
    let mut overlapped = [0usize; 2];
    let started = Instant::now();
    for round in 0..400 {
        let verb = round % 2;
        let before = metric(&server, SUCCESS).await;
        let plan = if verb == 0 {
            let r = reasons(&server, &body).await;
            filter_plan(&r, NODES).unwrap_or_else(|| panic!("a /filter answer mixes the plans: {:?}", summary(&r)))
        } else {
            let s = scores(&server, &body).await;
            prioritize_plan(&s).unwrap_or_else(|| panic!("a /prioritize answer mixes the plans: {:?}", &s[..8]))
        };
        if metric(&server, SUCCESS).await > before {
            overlapped[verb] += 1;
        }
        match plan {
            Plan::A => seen[verb].0 += 1,
            Plan::B => seen[verb].1 += 1,
        }
        let enough = seen.iter().all(|&(a, b)| a >= 5 && b >= 5) && overlapped.iter().all(|&o| o >= 20);
        if enough || started.elapsed() > Duration::from_secs(60) {
            break;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let (swaps, _volume) = swapper.join().unwrap();
    assert_eq!(metric(&server, ERROR).await, 0.0, "every swap loaded");
    // The test proves something only if swaps really fell inside requests, under both plans.
    assert!(
        overlapped.iter().all(|&o| o >= 20),
        "requests with a reload while in flight: {overlapped:?} ({swaps} swaps)"
    );
    assert!(seen.iter().all(|&(a, b)| a >= 5 && b >= 5), "answers per plan: {seen:?}");
    server.stop().await;
}

/// How many nodes got each reason.
fn summary(reasons: &[(String, String)]) -> Vec<(String, usize)> {
    let mut counts = std::collections::BTreeMap::new();
    for (_, r) in reasons {
        *counts.entry(r.clone()).or_insert(0) += 1;
    }
    counts.into_iter().collect()
}
