//! `explain` on the demo cluster against numbers worked out by hand from its YAML
//! (`crates/engine/src/cluster/source/demo.yaml`), not from anything the code wrote: the golden files of
//! `tests/explain_output.rs` are the code's own output, reviewed once; these expectations are
//! derived from the cluster and the predicates' rules, with the arithmetic in the comments.
//!
//! `explain` runs every predicate on every node (alwaysCheckAllPredicates) under the default
//! Policy, with the nominated pods of equal or higher priority added in pass 1. The summary line is
//! kube-scheduler's (`FitError.Error()`): each node counted once, under the reasons of the first of
//! kube-scheduler's own filters to reject it, in v1.37's default order (NodeName,
//! NodeUnschedulable, TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit, ...,
//! VolumeBinding, VolumeZone, ..., InterPodAffinity), in their words; a node they all pass under
//! what the extender's `/filter` answers (the default Policy stops at the first failing
//! predicate). The demo's nodes carry no condition taints: kube-scheduler's filters do not see
//! node-b1's memory pressure.
//!
//! The demo cluster, as far as these pods are concerned:
//! - node-a1, zone-a, ssd, 4 cpu / 8Gi: web-1 (1 cpu, 2Gi, hostPort 80), db-1 (no requests).
//! - node-a2, zone-a, ssd, 2 cpu / 4Gi: `spec.unschedulable` and the taint
//!   `node.kubernetes.io/unschedulable:NoSchedule`; empty.
//! - node-a3, zone-a, no disktype, 8 cpu / 32Gi: taint `dedicated=gpu:NoSchedule`; empty.
//! - node-b1, zone-b, ssd, 4 cpu / 8Gi: MemoryPressure=True; cache-1 (no requests; required
//!   anti-affinity to `app=frontend` pods of namespace default, topology key zone).
//! - node-b2, zone-b, hdd, 4 cpu / 8Gi: batch-1 (3 cpu, 4Gi); critical-job (priority 1000, 1 cpu,
//!   1Gi) nominated here.
//! - node-b3, zone-b, hdd, 2 cpu / 4Gi: ingress-1 (500m, 512Mi, hostPort 443); the only local
//!   PersistentVolume (50Gi, class `local`, node affinity to node-b3).
//! - PVC `reports` is bound to a GCE PD PersistentVolume labelled zone-b; PVC `scratch` (class
//!   `local`, WaitForFirstConsumer, 20Gi) is unbound.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_predicate-extender");

const CPU: &str = "Insufficient cpu";
const PORTS: &str = "node(s) didn't have free ports for the requested pod ports";
const TAINTS: &str = "node(s) had taints that the pod didn't tolerate";
const UNSCHEDULABLE: &str = "node(s) were unschedulable";
const SELECTOR: &str = "node(s) didn't match node selector";
const MEMORY_PRESSURE: &str = "node(s) had memory pressure";
const AFFINITY: &str = "node(s) didn't match pod affinity/anti-affinity";
const EXISTING_ANTI_AFFINITY: &str = "node(s) didn't satisfy existing pods anti-affinity rules";
const VOLUME_ZONE: &str = "node(s) had no available volume zone";
const NO_PV_TO_BIND: &str = "node(s) didn't find available persistent volumes to bind";
// kube-scheduler's own words for the same failures (its plugins' reasons).
const UNTOLERATED: &str = "node(s) had untolerated taint(s)";
const NODE_AFFINITY: &str = "node(s) didn't match Pod's node affinity/selector";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `explain --demo --format json` for the pod in `pod_file`.
fn explain(pod_file: &Path) -> Value {
    let out = Command::new(BIN)
        .current_dir(root())
        .env_remove("KUBERNETES_SERVICE_HOST")
        .args(["explain", "--demo", "--format", "json", "--pod"])
        .arg(pod_file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The pod of one of the README's request bodies (`examples/demo/filter-*.json`), as a file.
fn pod_of_request(dir: &Path, request: &str) -> std::path::PathBuf {
    let text = std::fs::read_to_string(root().join("examples/demo").join(request)).unwrap();
    let args: Value = serde_json::from_str(&text).unwrap();
    let mut pod = args["Pod"].clone();
    // A pod file names its kind (the wire leaves it out).
    pod["apiVersion"] = "v1".into();
    pod["kind"] = "Pod".into();
    let path = dir.join(request);
    std::fs::write(&path, pod.to_string()).unwrap();
    path
}

/// Each node's reasons, sorted (a reason twice when two predicates give it).
type PerNode = BTreeMap<String, Vec<String>>;

fn per_node(report: &Value) -> PerNode {
    report["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            let mut reasons: Vec<String> =
                n["reasons"].as_array().unwrap().iter().map(|r| r.as_str().unwrap().to_string()).collect();
            reasons.sort();
            (n["node"].as_str().unwrap().to_string(), reasons)
        })
        .collect()
}

fn expected(table: &[(&str, &[&str])]) -> PerNode {
    table
        .iter()
        .map(|(node, reasons)| {
            let mut reasons: Vec<String> = reasons.iter().map(|r| r.to_string()).collect();
            reasons.sort();
            (node.to_string(), reasons)
        })
        .collect()
}

/// The summary line's numbers: `"1/6 nodes are available: 2 a, 1 b."` is `(1, 6, {a: 2, b: 1})`.
fn summary_counts(report: &Value) -> (usize, usize, BTreeMap<String, usize>) {
    parse_summary(report["summary"].as_str().unwrap())
}

fn parse_summary(summary: &str) -> (usize, usize, BTreeMap<String, usize>) {
    let (head, rest) = summary.split_once(" nodes are available").unwrap();
    let (fit, all) = head.split_once('/').unwrap();
    let counts = rest
        .trim_start_matches(':')
        .trim_end_matches('.')
        .split(", ")
        .filter(|s| !s.trim().is_empty())
        .map(|entry| {
            let (n, reason) = entry.trim().split_once(' ').unwrap();
            (reason.to_string(), n.parse().unwrap())
        })
        .collect();
    (fit.parse().unwrap(), all.parse().unwrap(), counts)
}

/// The counts a summary line must carry, from a hand-made table of `(reason, nodes)`.
fn counts(table: &[(&str, usize)]) -> BTreeMap<String, usize> {
    table.iter().map(|(reason, n)| (reason.to_string(), *n)).collect()
}

/// Checks the report against the hand-made tables: each node's reasons and the feasible nodes
/// (those without a reason); and, for the summary line, who rejects each node in kube-scheduler's
/// view (one of its plugins, or `Extender`) with the reason it counts, `None` for a node it would
/// bind to. The summary's counts are counted over that table.
fn check(pod: &str, report: &Value, table: &[(&str, &[&str])], kube_scheduler: &[(&str, Option<(&str, &str)>)]) {
    let want = expected(table);
    assert_eq!(per_node(report), want, "{pod}: reasons per node");
    let feasible: Vec<&str> = want.iter().filter(|(_, r)| r.is_empty()).map(|(n, _)| n.as_str()).collect();
    let got_feasible: Vec<&str> = report["feasible"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert_eq!(got_feasible, feasible, "{pod}: feasible nodes");
    let statuses: Vec<(String, String, Vec<String>)> = report["kubeScheduler"]["rejected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let reasons = s["reasons"].as_array().unwrap().iter().map(|r| r.as_str().unwrap().to_string()).collect();
            (s["node"].as_str().unwrap().to_string(), s["by"].as_str().unwrap().to_string(), reasons)
        })
        .collect();
    let want_statuses: Vec<(String, String, Vec<String>)> = kube_scheduler
        .iter()
        .filter_map(|(node, status)| {
            status.map(|(by, reason)| (node.to_string(), by.to_string(), vec![reason.to_string()]))
        })
        .collect();
    assert_eq!(statuses, want_statuses, "{pod}: kube-scheduler's view");
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for (_, status) in kube_scheduler {
        if let Some((_, reason)) = status {
            *counts.entry(reason.to_string()).or_default() += 1;
        }
    }
    let binds = kube_scheduler.iter().filter(|(_, s)| s.is_none()).count();
    assert_eq!(summary_counts(report), (binds, 6, counts), "{pod}: the summary line");
}

/// web-2 (default, app=web, priority 0): one container asking 1 cpu and 1Gi, hostPort 80.
#[test]
fn web_2_by_hand() {
    let report = explain(&root().join("examples/demo/pod-web-2.yaml"));
    // node-a1: web-1 holds hostPort 80 (TCP, 0.0.0.0): ports. Resources fit: cpu 1 + 1 = 2 of 4,
    //          memory 2Gi + 1Gi = 3Gi of 8Gi.
    // node-a2: CheckNodeCondition and CheckNodeUnschedulable both see `spec.unschedulable`
    //          (unschedulable twice), and web-2 tolerates no taint (taints).
    // node-a3: dedicated=gpu:NoSchedule, not tolerated: taints. 8 cpu free, no ports in use.
    // node-b1: MemoryPressure refuses BestEffort pods only, and web-2 asks for cpu: fits; cpu
    //          0 + 1 of 4 (cache-1 asks for nothing); cache-1's anti-affinity is to app=frontend.
    // node-b2: pass 1 adds critical-job (priority 1000 >= 0): cpu 3 + 1 + 1 = 5 > 4: cpu.
    //          Memory 4Gi + 1Gi + 1Gi = 6Gi of 8Gi fits.
    // node-b3: cpu 0.5 + 1 = 1.5 of 2, memory 512Mi + 1Gi of 4Gi, hostPort 443 != 80: fits.
    // kube-scheduler: a1 NodePorts, a2 NodeUnschedulable (before TaintToleration), a3
    // TaintToleration, b2 NodeResourcesFit (the nominated critical-job counts in its pass 1 too);
    // b1 and b3 pass its filters and the extender's.
    // Summary: 2/6; cpu 1, ports 1, untolerated taint 1, unschedulable 1.
    check(
        "web-2",
        &report,
        &[
            ("node-a1", &[PORTS]),
            ("node-a2", &[UNSCHEDULABLE, UNSCHEDULABLE, TAINTS]),
            ("node-a3", &[TAINTS]),
            ("node-b1", &[]),
            ("node-b2", &[CPU]),
            ("node-b3", &[]),
        ],
        &[
            ("node-a1", Some(("NodePorts", PORTS))),
            ("node-a2", Some(("NodeUnschedulable", UNSCHEDULABLE))),
            ("node-a3", Some(("TaintToleration", UNTOLERATED))),
            ("node-b1", None),
            ("node-b2", Some(("NodeResourcesFit", CPU))),
            ("node-b3", None),
        ],
    );
}

/// frontend-1 (default, app=frontend): one container asking 250m cpu, no ports.
#[test]
fn frontend_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let report = explain(&pod_of_request(dir.path(), "filter-frontend.json"));
    // cache-1 (on node-b1, zone-b) has required anti-affinity to app=frontend pods of namespace
    // default across the zone: every zone-b node fails MatchInterPodAffinity with its two reasons
    // (affinity/anti-affinity, existing pods' anti-affinity rules); zone-a nodes are clear of it.
    // node-a1: cpu 1 + 0.25 of 4, no host ports asked: fits.
    // node-a2: unschedulable twice, taints (as for web-2).
    // node-a3: taints.
    // node-b1: zone-b: the two anti-affinity reasons. Memory pressure does not refuse it (it asks
    //          for cpu, so it is not BestEffort).
    // node-b2: cpu 3 + 1 (critical-job, nominated, priority 1000 >= 0) + 0.25 = 4.25 > 4: cpu;
    //          and zone-b: the two anti-affinity reasons.
    // node-b3: cpu 0.5 + 0.25 of 2 fits; zone-b: the two anti-affinity reasons.
    // kube-scheduler: a2 NodeUnschedulable, a3 TaintToleration, b2 NodeResourcesFit (before
    // InterPodAffinity); b1 and b3 InterPodAffinity, whose one reason is the existing pods'
    // anti-affinity (the pod has no terms of its own).
    // Summary: 1/6; cpu 1, existing anti-affinity 2, untolerated taint 1, unschedulable 1.
    let zone_b: &[&str] = &[AFFINITY, EXISTING_ANTI_AFFINITY];
    check(
        "frontend-1",
        &report,
        &[
            ("node-a1", &[]),
            ("node-a2", &[UNSCHEDULABLE, UNSCHEDULABLE, TAINTS]),
            ("node-a3", &[TAINTS]),
            ("node-b1", zone_b),
            ("node-b2", &[CPU, AFFINITY, EXISTING_ANTI_AFFINITY]),
            ("node-b3", zone_b),
        ],
        &[
            ("node-a1", None),
            ("node-a2", Some(("NodeUnschedulable", UNSCHEDULABLE))),
            ("node-a3", Some(("TaintToleration", UNTOLERATED))),
            ("node-b1", Some(("InterPodAffinity", EXISTING_ANTI_AFFINITY))),
            ("node-b2", Some(("NodeResourcesFit", CPU))),
            ("node-b3", Some(("InterPodAffinity", EXISTING_ANTI_AFFINITY))),
        ],
    );
}

/// debug (default, no labels): BestEffort (no requests), `nodeSelector: {disktype: ssd}`.
#[test]
fn best_effort_with_a_node_selector_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let report = explain(&pod_of_request(dir.path(), "filter-debug-pod.json"));
    // disktype=ssd: node-a1, node-a2, node-b1; node-a3 has no disktype, node-b2 and node-b3 are
    // hdd: selector on those three.
    // node-a1: ssd, no requests (0 cpu, 0 memory fit anywhere), no ports: fits.
    // node-a2: ssd; unschedulable twice, taints.
    // node-a3: selector, taints.
    // node-b1: ssd; MemoryPressure=True refuses a BestEffort pod: memory pressure.
    // node-b2: selector. Resources: 3 + 1 (critical-job) + 0 = 4 of 4 cpu: fits (not over).
    // node-b3: selector.
    // kube-scheduler: a2 NodeUnschedulable, a3 TaintToleration (before NodeAffinity), b2 and b3
    // NodeAffinity; b1 passes its filters (no memory-pressure taint), and the extender's
    // CheckNodeMemoryPressure refuses the BestEffort pod there.
    // Summary: 1/6; node affinity 2, memory pressure 1, untolerated taint 1, unschedulable 1.
    check(
        "debug",
        &report,
        &[
            ("node-a1", &[]),
            ("node-a2", &[UNSCHEDULABLE, UNSCHEDULABLE, TAINTS]),
            ("node-a3", &[SELECTOR, TAINTS]),
            ("node-b1", &[MEMORY_PRESSURE]),
            ("node-b2", &[SELECTOR]),
            ("node-b3", &[SELECTOR]),
        ],
        &[
            ("node-a1", None),
            ("node-a2", Some(("NodeUnschedulable", UNSCHEDULABLE))),
            ("node-a3", Some(("TaintToleration", UNTOLERATED))),
            ("node-b1", Some(("Extender", MEMORY_PRESSURE))),
            ("node-b2", Some(("NodeAffinity", NODE_AFFINITY))),
            ("node-b3", Some(("NodeAffinity", NODE_AFFINITY))),
        ],
    );
}

/// report-1 (default): 100m cpu; PVC `reports` (bound, GCE PD in zone-b) and PVC `scratch`
/// (class local, WaitForFirstConsumer, 20Gi, unbound).
#[test]
fn volumes_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let report = explain(&pod_of_request(dir.path(), "filter-reports.json"));
    // NoVolumeZoneConflict: the bound PV is labelled zone-b, so every zone-a node (a1, a2, a3)
    // has no available volume zone.
    // CheckVolumeBinding: `scratch` waits for its first consumer and the only `local` PV
    // (50Gi >= 20Gi) has node affinity to node-b3: every other node (a1, a2, a3, b1, b2) finds no
    // persistent volume to bind.
    // node-a1: volume zone, no PV to bind.
    // node-a2: unschedulable twice, taints, volume zone, no PV to bind.
    // node-a3: taints, volume zone, no PV to bind.
    // node-b1: no PV to bind (zone-b matches the PV; 100m asked: not BestEffort under pressure).
    // node-b2: cpu 3 + 1 (critical-job) + 0.1 = 4.1 > 4: cpu; no PV to bind.
    // node-b3: the local PV is there, zone-b, cpu 0.5 + 0.1 of 2: fits.
    // kube-scheduler: a2 NodeUnschedulable, a3 TaintToleration, b2 NodeResourcesFit; a1 and b1
    // VolumeBinding (no PV for `scratch`), which runs before VolumeZone.
    // Summary: 1/6; no PV to bind 2, cpu 1, untolerated taint 1, unschedulable 1.
    check(
        "report-1",
        &report,
        &[
            ("node-a1", &[VOLUME_ZONE, NO_PV_TO_BIND]),
            ("node-a2", &[UNSCHEDULABLE, UNSCHEDULABLE, TAINTS, VOLUME_ZONE, NO_PV_TO_BIND]),
            ("node-a3", &[TAINTS, VOLUME_ZONE, NO_PV_TO_BIND]),
            ("node-b1", &[NO_PV_TO_BIND]),
            ("node-b2", &[CPU, NO_PV_TO_BIND]),
            ("node-b3", &[]),
        ],
        &[
            ("node-a1", Some(("VolumeBinding", NO_PV_TO_BIND))),
            ("node-a2", Some(("NodeUnschedulable", UNSCHEDULABLE))),
            ("node-a3", Some(("TaintToleration", UNTOLERATED))),
            ("node-b1", Some(("VolumeBinding", NO_PV_TO_BIND))),
            ("node-b2", Some(("NodeResourcesFit", CPU))),
            ("node-b3", None),
        ],
    );
}

/// The golden files of `tests/explain_output.rs` were written by the code; their summary lines
/// are checked here against counts made by hand, so a golden cannot quietly hold a wrong answer.
#[test]
fn the_goldens_summary_lines_agree_with_the_hand_counts() {
    let golden = |name: &str| std::fs::read_to_string(root().join("tests/fixtures/explain").join(name)).unwrap();
    let first_line = |name: &str| golden(name).lines().next().unwrap().to_string();
    let json_summary = |name: &str| {
        let v: Value = serde_json::from_str(&golden(name)).unwrap();
        v["summary"].as_str().unwrap().to_string()
    };

    // The demo, web-2: as `web_2_by_hand` above.
    let web_2 = (2, 6, counts(&[(CPU, 1), (PORTS, 1), (UNTOLERATED, 1), (UNSCHEDULABLE, 1)]));
    assert_eq!(parse_summary(&first_line("demo-node-b2.txt")), web_2);

    // tests/fixtures/explain/cluster.yaml under its policy.json (PodToleratesNodeTaints,
    // PodFitsResources, MatchInterPodAffinity):
    //   n1  zone-a  2 cpu  db-0 (priority 100, app=db, 500m) nominated here
    //   n2  zone-b  4 cpu  tainted dedicated=gpu:NoSchedule
    //   n3  zone-b  1 cpu  runs busy (1 cpu)
    // pod-small (500m, priority 0):
    //   n1: pass 1 adds db-0 (100 >= 0): 0.5 + 0.5 = 1 of 2 cpu: fits; pass 2 without it fits too.
    //   n2: taints (TaintToleration). n3: 1 + 0.5 = 1.5 > 1: cpu (NodeResourcesFit).
    let small = (1, 3, counts(&[(CPU, 1), (UNTOLERATED, 1)]));
    assert_eq!(parse_summary(&first_line("small-overview.txt")), small);
    assert_eq!(parse_summary(&json_summary("small.json")), small);

    // pod-needs-db (500m, required pod affinity to app=db in its zone). No db pod runs anywhere;
    // db-0 is only nominated to n1.
    //   n1: pass 1 (db-0 added on n1, zone-a) satisfies the affinity; pass 2 (without it) does not:
    //       both MatchInterPodAffinity reasons. Cpu 0.5 + 0.5 of 2 fits.
    //   n2: no db in zone-b: both affinity reasons; and taints.
    //   n3: no db in zone-b: both affinity reasons; and cpu (1 + 0.5 > 1).
    // kube-scheduler: n1 InterPodAffinity (pass 2, its one reason), n2 TaintToleration and n3
    // NodeResourcesFit, both before InterPodAffinity.
    // Summary: 0/3; affinity rules 1, cpu 1, untolerated taint 1.
    const AFFINITY_RULES: &str = "node(s) didn't match pod affinity rules";
    let needs_db = (0, 3, counts(&[(CPU, 1), (UNTOLERATED, 1), (AFFINITY_RULES, 1)]));
    assert_eq!(parse_summary(&first_line("needs-db-overview.txt")), needs_db);
    assert_eq!(parse_summary(&json_summary("needs-db.json")), needs_db);
}
