//! kube-scheduler's own code as the oracle (issue 25): random small clusters and pods in the domain
//! the classic predicates and today's Filter plugins share, the extender's verdicts on them, the
//! oracle's (`e2e/kube/oracle`, the pinned kube-scheduler's default profile), the comparison and a
//! shrinker. Driven by `examples/oracle-compare.rs` (N cases) and `tests/oracle_smoke.rs` (CI).
//!
//! What is left out of the generated domain, and why, is docs/semantics.md.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde::Deserialize;
use serde_json::{json, Value};

use gen_cluster::generate::Rng;
use predicate_engine::cluster::objects::Pod;
use predicate_engine::cluster::pod_requests::{requests_to_place, requests_to_score};
use predicate_engine::cluster::resources::{NonZero, Resource};
use predicate_engine::cluster::source::file::parse_objects;
use predicate_engine::cluster::{SchedulerVersion, Snapshot};
use predicate_engine::engine::{filter, CancelFlag, Candidate, ClusterView, Evaluator, Prepared, Verdict};
use predicate_engine::policy::Plan;

/// One generated case: the cluster's objects and the pod to schedule, and the seed that made it.
#[derive(Debug, Clone)]
pub struct Case {
    pub seed: u64,
    pub objects: Vec<Value>,
    pub pod: Value,
}

impl Case {
    /// The oracle's input line.
    pub fn to_line(&self) -> String {
        json!({"objects": self.objects, "pod": self.pod}).to_string()
    }

    /// The node names, in object order.
    pub fn node_names(&self) -> Vec<String> {
        self.objects
            .iter()
            .filter(|o| o["kind"] == "Node")
            .filter_map(|o| o["metadata"]["name"].as_str())
            .map(String::from)
            .collect()
    }
}

/// A node's verdict, on either side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeVerdict {
    pub fits: bool,
    /// Some reason (extender) or some plugin's status (oracle) says preemption cannot help.
    pub unresolvable: bool,
    /// The extender's messages, or the oracle's `plugin: reason` strings.
    pub reasons: Vec<String>,
}

/// The oracle's answer for one node, as it prints it.
#[derive(Debug, Clone, Deserialize)]
pub struct OracleNode {
    pub fits: bool,
    #[serde(default)]
    pub code: String,
    #[serde(default)]
    pub plugin: String,
    #[serde(default)]
    pub reasons: Vec<String>,
    #[serde(default)]
    pub plugins: Vec<OraclePlugin>,
    /// Rejected in PreFilter (the whole pod, or the node left out of a PreFilterResult): no Filter
    /// plugin ran on it, so the extender's other failures have nothing to match.
    #[serde(default)]
    pub prefilter: bool,
}

#[derive(Debug, Clone, Deserialize)]
pub struct OraclePlugin {
    pub plugin: String,
    pub code: String,
    #[serde(default)]
    pub reasons: Vec<String>,
}

/// The oracle's answer for a case: per node its verdict, per pod what kube-scheduler counts of it.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct OracleAnswer {
    #[serde(default)]
    pub nodes: BTreeMap<String, OracleNode>,
    /// By `namespace/name`; the pod to schedule under "".
    #[serde(default)]
    pub requests: BTreeMap<String, PodResources>,
    #[serde(default)]
    error: String,
}

/// A pod's requests in the scheduler's units, and the non-zero cpu and memory the resource scores
/// count: for a pod of the cluster what its node's sums add up (`PodInfo.CalculateResource`), for
/// the pod to schedule what NodeResourcesFit's PreFilter and its scores compute.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodResources {
    #[serde(rename = "milliCPU")]
    pub milli_cpu: i64,
    pub memory: i64,
    pub ephemeral_storage: i64,
    /// Extended resources and hugepages; zero amounts are left out.
    #[serde(default, deserialize_with = "without_zeros")]
    pub scalar: BTreeMap<String, i64>,
    #[serde(rename = "nonZeroCPU")]
    pub non_zero_cpu: i64,
    pub non_zero_memory: i64,
}

fn without_zeros<'de, D: serde::Deserializer<'de>>(d: D) -> Result<BTreeMap<String, i64>, D::Error> {
    let mut m = BTreeMap::<String, i64>::deserialize(d)?;
    m.retain(|_, v| *v != 0);
    Ok(m)
}

impl PodResources {
    fn of(requests: &Resource, non_zero: NonZero) -> PodResources {
        PodResources {
            milli_cpu: requests.milli_cpu,
            memory: requests.memory,
            ephemeral_storage: requests.ephemeral_storage,
            scalar: requests.scalar.iter().filter(|(_, v)| *v != 0).cloned().collect(),
            non_zero_cpu: non_zero.milli_cpu,
            non_zero_memory: non_zero.memory,
        }
    }
}

const UNRESOLVABLE: &str = "UnschedulableAndUnresolvable";

impl OracleNode {
    pub fn verdict(&self) -> NodeVerdict {
        let mut reasons = Vec::new();
        for p in &self.plugins {
            for r in &p.reasons {
                reasons.push(format!("{}: {r}", p.plugin));
            }
        }
        NodeVerdict {
            fits: self.fits,
            unresolvable: self.plugins.iter().any(|p| p.code == UNRESOLVABLE && !resolvable_by_choice(p)),
            reasons,
        }
    }
}

/// Today's NodeResourcesFit calls a request larger than the node's whole allocatable
/// unresolvable; the classic PodFitsResources calls every shortage resolvable (docs/semantics.md,
/// "Insufficient resources are always resolvable").
fn resolvable_by_choice(p: &OraclePlugin) -> bool {
    p.plugin == "NodeResourcesFit"
}

/// Runs `e2e/build.sh ARG` (progress on the terminal; a cold build takes minutes) and returns the
/// directory it prints on its last line: what the end-to-end tests and the oracle comparisons
/// build their binaries with.
pub fn e2e_build(arg: Option<&str>) -> Result<std::path::PathBuf, String> {
    let script = crate::workspace_root().join("e2e/build.sh");
    let out = Command::new("bash")
        .arg(&script)
        .args(arg)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("{}: {e}", script.display()))?;
    if !out.status.success() {
        return Err(format!("{} {} failed ({})", script.display(), arg.unwrap_or_default(), out.status));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    Ok(std::path::PathBuf::from(stdout.lines().last().map(str::trim).unwrap_or_default()))
}

/// The oracle process: one case per line in, one answer per line out.
pub struct Oracle {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Oracle {
    pub fn start(binary: &Path) -> Result<Oracle, String> {
        let mut child = Command::new(binary)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("{}: {e}", binary.display()))?;
        let stdin = child.stdin.take().ok_or("oracle: no stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("oracle: no stdout")?);
        Ok(Oracle { child, stdin, stdout })
    }

    /// The oracle's answers for a batch of cases.
    pub fn run(&mut self, cases: &[Case]) -> Result<Vec<OracleAnswer>, String> {
        let lines: Vec<String> = cases.iter().map(Case::to_line).collect();
        let answers = self.exchange(&lines)?;
        let mut out = Vec::with_capacity(cases.len());
        for (case, line) in cases.iter().zip(answers) {
            let answer: OracleAnswer =
                serde_json::from_str(&line).map_err(|e| format!("oracle answer for seed {}: {e}", case.seed))?;
            if !answer.error.is_empty() {
                return Err(format!("oracle error for seed {}: {}", case.seed, answer.error));
            }
            out.push(answer);
        }
        Ok(out)
    }

    /// One answer line per input line (the input written from a second thread while the answers
    /// are read, so neither pipe fills up).
    pub fn exchange(&mut self, lines: &[String]) -> Result<Vec<String>, String> {
        let stdin = &mut self.stdin;
        let stdout = &mut self.stdout;
        std::thread::scope(|scope| {
            let writer = scope.spawn(move || -> Result<(), String> {
                let mut text = String::new();
                for line in lines {
                    text.push_str(line);
                    text.push('\n');
                }
                stdin.write_all(text.as_bytes()).and_then(|()| stdin.flush()).map_err(|e| format!("oracle stdin: {e}"))
            });
            let mut answers = Vec::with_capacity(lines.len());
            for _ in lines {
                let mut line = String::new();
                let n = stdout.read_line(&mut line).map_err(|e| format!("oracle stdout: {e}"))?;
                if n == 0 {
                    return Err("the oracle exited".to_string());
                }
                answers.push(line);
            }
            writer.join().map_err(|_| "oracle writer panicked".to_string())??;
            Ok(answers)
        })
    }
}

impl Drop for Oracle {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The extender's plan for the comparison: the default predicates, every one checked on every
/// node (`alwaysCheckAllPredicates`), so that a node's reasons do not depend on the order.
pub fn plan() -> Plan {
    Plan { always_check_all: true, ..Plan::default_plan() }
}

/// The model the extender builds from a case's objects (as a snapshot file would), counted as
/// `version`'s kube-scheduler counts, and its pod.
pub fn model(case: &Case, version: SchedulerVersion) -> Result<(Snapshot, Pod), String> {
    let list = json!({"apiVersion": "v1", "kind": "List", "items": case.objects}).to_string();
    let snapshot = parse_objects("case", &list).map_err(|e| e.to_string())?.into_snapshot_for(version);
    let pod_list = json!({"apiVersion": "v1", "kind": "List", "items": [case.pod]}).to_string();
    let pod = parse_objects("pod", &pod_list).map_err(|e| e.to_string())?.pods.pop().ok_or("no pod")?;
    Ok((snapshot, pod))
}

/// The extender's answer for a case: its verdicts per node and what it counts of each pod.
#[derive(Debug, Clone, Default)]
pub struct ExtenderAnswer {
    pub nodes: BTreeMap<String, NodeVerdict>,
    /// As [`OracleAnswer::requests`].
    pub requests: BTreeMap<String, PodResources>,
    /// kube-scheduler's own filters as explain reproduces them (`explain::kube_scheduler`): per
    /// node, the plugin that rejects it and its reasons, sorted; `None` where they all pass.
    pub kube_scheduler: BTreeMap<String, FilterStatus>,
}

/// The plugin that rejects a node and its reasons, sorted; `None` where every plugin passes it.
pub type FilterStatus = Option<(String, Vec<String>)>;

/// A node left out by a PreFilterResult, on either side.
const LEFT_OUT: &str = "PreFilterResult";

/// explain's view of kube-scheduler's filters for the case, without the extender (an empty plan).
fn kube_scheduler_view(
    snapshot: &Snapshot,
    pod: &Pod,
    names: &[String],
    evaluator: &Evaluator,
) -> Result<BTreeMap<String, FilterStatus>, String> {
    let view = predicate_extender::explain::kube_scheduler::evaluate(
        &predicate_extender::explain::kube_scheduler::Profile::DEFAULT,
        &Plan::default(),
        pod,
        snapshot,
        evaluator,
        &CancelFlag::new(),
    )
    .map_err(|e| e.to_string())?;
    let mut out: BTreeMap<String, FilterStatus> =
        names.iter().map(|n| (n.clone(), Some((LEFT_OUT.to_string(), Vec::new())))).collect();
    if let Some(p) = &view.prefilter {
        for status in out.values_mut() {
            *status = Some((p.by.clone(), p.reasons.clone()));
        }
        return Ok(out);
    }
    for status in &view.rejected {
        let mut reasons = status.reasons.clone();
        reasons.sort();
        out.insert(status.node.clone(), Some((status.by.clone(), reasons)));
    }
    for node in &view.feasible {
        out.insert(node.clone(), None);
    }
    Ok(out)
}

impl OracleNode {
    /// The status kube-scheduler's filter run gave the node, as [`ExtenderAnswer::kube_scheduler`].
    fn kube_scheduler(&self) -> FilterStatus {
        if self.fits {
            return None;
        }
        if self.prefilter && self.plugin == LEFT_OUT {
            return Some((LEFT_OUT.to_string(), Vec::new()));
        }
        let mut reasons = self.reasons.clone();
        reasons.sort();
        Some((self.plugin.clone(), reasons))
    }
}

/// The extender's answer for a case: the engine directly on the model built from the same
/// objects (as a snapshot file would) and counted as `version`'s kube-scheduler counts, every node
/// as a `NodeNames` candidate.
pub fn extender_verdicts(
    plan: &Plan,
    evaluator: &Evaluator,
    case: &Case,
    version: SchedulerVersion,
) -> Result<ExtenderAnswer, String> {
    let (snapshot, pod) = model(case, version)?;
    let mut requests = BTreeMap::new();
    for o in case.objects.iter().filter(|o| o["kind"] == "Pod") {
        let (ns, name) =
            (o["metadata"]["namespace"].as_str().unwrap_or("default"), o["metadata"]["name"].as_str().unwrap_or(""));
        if let Some(info) = snapshot.pod(ns, name) {
            requests.insert(format!("{ns}/{name}"), PodResources::of(&info.requests, info.non_zero));
        }
    }
    requests.insert(String::new(), PodResources::of(&requests_to_place(&pod), requests_to_score(&pod, version)));
    let names = case.node_names();
    let kube_scheduler = kube_scheduler_view(&snapshot, &pod, &names, evaluator)?;
    let candidates: Vec<Candidate> = names.iter().map(|n| Candidate::by_name(&snapshot, n.clone())).collect();
    let prepared = Prepared::new(plan, pod, &ClusterView::of(&snapshot));
    let filtered =
        filter(evaluator, plan, &prepared, &candidates, &CancelFlag::new(), false).map_err(|e| e.to_string())?;
    let mut out = BTreeMap::new();
    for (name, verdict) in names.into_iter().zip(filtered.verdicts) {
        let v = match verdict {
            Verdict::Fits => NodeVerdict { fits: true, unresolvable: false, reasons: Vec::new() },
            Verdict::Fails(reasons) => NodeVerdict {
                fits: false,
                unresolvable: reasons.iter().any(|r| !r.is_resolvable()),
                reasons: reasons.iter().map(|r| r.message.to_string()).collect(),
            },
            Verdict::Unknown => return Err(format!("node {name} unknown to the model")),
        };
        out.insert(name, v);
    }
    Ok(ExtenderAnswer { nodes: out, requests, kube_scheduler })
}

/// How the two sides disagree on one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disagreement {
    pub node: String,
    pub what: &'static str,
    pub extender: NodeVerdict,
    pub oracle: NodeVerdict,
}

/// The classic messages each of today's plugins may answer with: a node rejected by the plugin
/// must have one of these among the extender's reasons (a prefix of the message).
pub const REASON_MAP: &[(&str, &[&str])] = &[
    ("NodeName", &["node(s) didn't match the requested node name", "node(s) didn't match the requested hostname"]),
    // NodeName's PreFilter narrows the nodes to `spec.nodeName` (nodename/node_name.go, PreFilter).
    (
        "PreFilterResult",
        &["node(s) didn't match the requested node name", "node(s) didn't match the requested hostname"],
    ),
    ("NodeUnschedulable", &["node(s) were unschedulable"]),
    // The not-ready taints stand for the Ready condition CheckNodeCondition reads
    // (docs/semantics.md, "Node conditions, not the taints derived from them").
    (
        "TaintToleration",
        &["node(s) had taints that the pod didn't tolerate", "node(s) had untolerated taint", "node(s) were not ready"],
    ),
    ("NodeAffinity", &["node(s) didn't match node selector", "node(s) didn't match Pod's node affinity"]),
    ("NodePorts", &["node(s) didn't have free ports for the requested pod ports"]),
    ("NodeResourcesFit", &["Insufficient ", "Too many pods"]),
    (
        "VolumeRestrictions",
        &["node(s) had no available disk", "node(s) had volume node affinity conflict", "persistentvolumeclaim "],
    ),
    ("NodeVolumeLimits", &["node(s) exceed max volume count"]),
    (
        "VolumeBinding",
        &[
            // The classic message for today's "node(s) didn't match PersistentVolume's node affinity"
            // (docs/semantics.md, "Messages kept from the classic predicates").
            "node(s) had volume node affinity conflict",
            "node(s) didn't find available persistent volumes to bind",
            "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)",
            "pod has unbound immediate PersistentVolumeClaims",
            "persistentvolumeclaim ",
            "VolumeBindingMode not set",
        ],
    ),
    (
        "VolumeZone",
        &[
            "node(s) had no available volume zone",
            "persistentvolumeclaim ",
            "persistentvolume ",
            "storageclass.storage.k8s.io ",
            "PersistentVolumeClaim had no",
            "PersistentVolume had no name",
            "VolumeBindingMode not set",
        ],
    ),
    ("PodTopologySpread", &["node(s) didn't match pod topology spread constraints"]),
    // v1.22's plugins for the custom `labelsPresence` and `serviceAffinity` predicates (the Policy
    // comparison; today's kube-scheduler has neither).
    ("NodeLabel", &["node(s) didn't have the requested labels"]),
    ("ServiceAffinity", &["node(s) didn't match service affinity"]),
    (
        "InterPodAffinity",
        &[
            "node(s) didn't match pod affinity rules",
            "node(s) didn't match pod anti-affinity rules",
            "node(s) didn't satisfy existing pods anti-affinity rules",
            "node(s) didn't match pod affinity/anti-affinity",
        ],
    ),
];

/// Compares the verdicts and the pods' requests of one case; an empty list when they agree.
pub fn compare(extender: &ExtenderAnswer, oracle: &OracleAnswer, check_reasons: bool) -> Vec<Disagreement> {
    let mut out = compare_requests(&extender.requests, &oracle.requests);
    out.extend(compare_verdicts(&extender.nodes, &oracle.nodes, check_reasons));
    out.extend(compare_kube_scheduler(&extender.kube_scheduler, &oracle.nodes));
    out
}

/// explain's view of kube-scheduler's filters against kube-scheduler's own, node by node.
fn compare_kube_scheduler(
    extender: &BTreeMap<String, FilterStatus>,
    oracle: &BTreeMap<String, OracleNode>,
) -> Vec<Disagreement> {
    let show = |s: &FilterStatus| NodeVerdict {
        fits: s.is_none(),
        unresolvable: false,
        reasons: s.iter().map(|(by, reasons)| format!("{by}: {reasons:?}")).collect(),
    };
    let mut out = Vec::new();
    for (node, e) in extender {
        let o = oracle.get(node).and_then(OracleNode::kube_scheduler);
        let missing = !oracle.contains_key(node);
        if missing || *e != o {
            out.push(Disagreement {
                node: node.clone(),
                what: "kube-scheduler's view differs",
                extender: show(e),
                oracle: show(&o),
            });
        }
    }
    out
}

/// Each pod's requests as kube-scheduler counts them against the extender's count.
fn compare_requests(
    extender: &BTreeMap<String, PodResources>,
    oracle: &BTreeMap<String, PodResources>,
) -> Vec<Disagreement> {
    let mut out = Vec::new();
    for (pod, o) in oracle {
        let e = extender.get(pod);
        if e != Some(o) {
            let show = |r: Option<&PodResources>| NodeVerdict {
                fits: false,
                unresolvable: false,
                reasons: vec![format!("{r:?}")],
            };
            let node = if pod.is_empty() { "(the pod to schedule)".to_string() } else { pod.clone() };
            out.push(Disagreement { node, what: "requests differ", extender: show(e), oracle: show(Some(o)) });
        }
    }
    out
}

/// Compares the verdicts of one case node by node; an empty list when they agree.
pub fn compare_verdicts(
    extender: &BTreeMap<String, NodeVerdict>,
    oracle: &BTreeMap<String, OracleNode>,
    check_reasons: bool,
) -> Vec<Disagreement> {
    let mut out = Vec::new();
    for (node, e) in extender {
        let Some(o) = oracle.get(node) else {
            let missing = NodeVerdict { fits: false, unresolvable: false, reasons: vec!["(no answer)".into()] };
            out.push(Disagreement { node: node.clone(), what: "node missing", extender: e.clone(), oracle: missing });
            continue;
        };
        let ov = o.verdict();
        let what = if e.fits != ov.fits {
            Some(if e.fits { "extender fits, oracle rejects" } else { "extender rejects, oracle fits" })
        } else if !e.fits && e.unresolvable != ov.unresolvable && !affinity_order(e, o) {
            Some("resolvable differs")
        } else if !e.fits && check_reasons && !reasons_agree(&e.reasons, o) {
            Some("reasons differ")
        } else {
            None
        };
        if let Some(what) = what {
            out.push(Disagreement { node: node.clone(), what, extender: e.clone(), oracle: ov });
        }
    }
    out
}

/// The classic MatchInterPodAffinity checks existing pods' anti-affinity first and stops there (a
/// resolvable failure); today's InterPodAffinity checks the pod's own affinity first (unresolvable).
/// docs/semantics.md, "Inter-pod affinity: which rule is reported".
fn affinity_order(extender: &NodeVerdict, oracle: &OracleNode) -> bool {
    let only_affinity = oracle.plugins.iter().filter(|p| p.code == UNRESOLVABLE && !resolvable_by_choice(p)).all(|p| {
        p.plugin == "InterPodAffinity" && p.reasons.iter().all(|r| r == "node(s) didn't match pod affinity rules")
    });
    !extender.unresolvable
        && only_affinity
        && extender.reasons.iter().any(|r| r == "node(s) didn't satisfy existing pods anti-affinity rules")
}

/// Every plugin that rejects the node has a matching classic message, and every classic message
/// is one some rejecting plugin may give (unless the oracle rejected the node in PreFilter, where
/// no Filter plugin ran).
fn reasons_agree(extender: &[String], oracle: &OracleNode) -> bool {
    reason_gaps(extender, oracle).is_empty()
}

fn expected(plugin: &str) -> &'static [&'static str] {
    REASON_MAP.iter().find(|(p, _)| *p == plugin).map(|(_, m)| *m).unwrap_or(&[])
}

/// What keeps the reasons from agreeing: `plugin P: no classic message` for a rejecting plugin
/// without a matching message, `message M: no plugin` for a classic message no rejecting plugin
/// may give. Empty when they agree; `--reasons` counts these by kind.
pub fn reason_gaps(extender: &[String], oracle: &OracleNode) -> Vec<String> {
    let mut gaps = Vec::new();
    for p in &oracle.plugins {
        if !extender.iter().any(|m| expected(&p.plugin).iter().any(|prefix| m.starts_with(prefix))) {
            gaps.push(format!("plugin {}: no classic message ({:?})", p.plugin, p.reasons));
        }
    }
    if !oracle.prefilter {
        for m in extender {
            if !oracle.plugins.iter().any(|p| expected(&p.plugin).iter().any(|prefix| m.starts_with(prefix))) {
                let plugins: Vec<&str> = oracle.plugins.iter().map(|p| p.plugin.as_str()).collect();
                gaps.push(format!("message {m:?}: no plugin (oracle: {plugins:?})"));
            }
        }
    }
    gaps
}

// ----- the generator -----

const NAMESPACES: &[&str] = &["default", "team1", "team2"];
const APPS: &[&str] = &["a", "b", "c"];
const ZONE: &str = "topology.kubernetes.io/zone";
const HOSTNAME: &str = "kubernetes.io/hostname";

/// What the generator may draw; the CI smoke and the long run use [`Domain::shared`].
#[derive(Debug, Clone, Copy)]
pub struct Domain {
    /// Largest cluster (nodes).
    pub max_nodes: u64,
    /// The kube-scheduler (and API server) the cases are for: what its API server stores of a pod
    /// (`oracle_resources`) and how the extender counts it.
    pub version: SchedulerVersion,
}

impl Domain {
    /// The shared domain for the newest tested minor.
    pub fn shared() -> Domain {
        Domain::for_version(SchedulerVersion::default())
    }

    pub fn for_version(version: SchedulerVersion) -> Domain {
        Domain { max_nodes: 40, version }
    }
}

struct Gen {
    rng: Rng,
    nodes: Vec<String>,
}

impl Gen {
    fn node(&mut self, name: &str) -> Value {
        let rng = &mut self.rng;
        let mut labels = serde_json::Map::new();
        labels.insert(HOSTNAME.into(), json!(name));
        if rng.percent(85) {
            labels.insert(ZONE.into(), json!(format!("z{}", rng.below(3))));
        }
        if rng.percent(50) {
            labels.insert("disk".into(), json!(rng.pick(&["ssd", "hdd"])));
        }
        if rng.percent(40) {
            labels.insert("size".into(), json!((1 + rng.below(8)).to_string()));
        }
        let mut allocatable = json!({
            "cpu": rng.pick(&["1", "2", "4", "1500m"]),
            "memory": rng.pick(&["1Gi", "2Gi", "4Gi"]),
            "pods": (1 + rng.below(8)).to_string(),
            "ephemeral-storage": "10Gi",
        });
        if rng.percent(30) {
            allocatable["example.com/gpu"] = json!(rng.below(3).to_string());
        }
        let mut taints = Vec::new();
        let mut spec = json!({});
        let ready = !rng.percent(8);
        if !ready {
            // As the node lifecycle controller sets them for a node that is not Ready.
            taints.push(json!({"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}));
            taints.push(json!({"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}));
        }
        if rng.percent(8) {
            spec["unschedulable"] = json!(true);
            taints.push(json!({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}));
        }
        if rng.percent(20) {
            taints.push(
                rng.pick(&[
                    json!({"key": "dedicated", "value": "a", "effect": "NoSchedule"}),
                    json!({"key": "dedicated", "value": "b", "effect": "NoExecute"}),
                    json!({"key": "spot", "effect": "PreferNoSchedule"}),
                    json!({"key": "gpu", "value": "true", "effect": "NoSchedule"}),
                ])
                .clone(),
            );
        }
        if !taints.is_empty() {
            spec["taints"] = json!(taints);
        }
        json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": labels},
            "spec": spec,
            "status": {
                "capacity": allocatable.clone(),
                "allocatable": allocatable,
                "conditions": [{"type": "Ready", "status": if ready {"True"} else {"False"}}],
            },
        })
    }

    fn requests(&mut self, gpu: bool) -> Value {
        let rng = &mut self.rng;
        let mut r = serde_json::Map::new();
        if rng.percent(80) {
            r.insert("cpu".into(), json!(rng.pick(&["100m", "500m", "1", "2", "1200m"])));
        }
        if rng.percent(60) {
            r.insert("memory".into(), json!(rng.pick(&["256Mi", "1Gi", "3Gi"])));
        }
        let mut res = json!({"requests": r});
        if gpu && rng.percent(12) {
            let n = json!((1 + rng.below(2)).to_string());
            res["requests"]["example.com/gpu"] = n.clone();
            res["limits"] = json!({"example.com/gpu": n});
        }
        res
    }

    fn selector(&mut self) -> Value {
        let rng = &mut self.rng;
        match rng.below(4) {
            0 => json!({"matchLabels": {"app": rng.pick(APPS)}}),
            1 => {
                json!({"matchExpressions": [{"key": "app", "operator": "In", "values": [rng.pick(APPS), rng.pick(APPS)]}]})
            }
            2 => json!({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": [rng.pick(APPS)]}]}),
            _ => json!({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}),
        }
    }

    fn affinity_term(&mut self) -> Value {
        let mut term = json!({"labelSelector": self.selector()});
        let rng = &mut self.rng;
        term["topologyKey"] = json!(if rng.percent(60) { HOSTNAME } else { ZONE });
        match rng.below(6) {
            0 => term["namespaces"] = json!([rng.pick(NAMESPACES)]),
            1 => term["namespaceSelector"] = json!({}),
            2 => term["namespaceSelector"] = json!({"matchLabels": {"team": rng.pick(&["1", "2"])}}),
            3 => {
                term["namespaces"] = json!([rng.pick(NAMESPACES)]);
                term["namespaceSelector"] = json!({"matchLabels": {"team": "1"}});
            }
            _ => {}
        }
        term
    }

    fn pod_affinity(&mut self, affinity: bool, anti: bool) -> Option<Value> {
        let mut a = serde_json::Map::new();
        if affinity {
            let terms: Vec<Value> = (0..1 + self.rng.below(2)).map(|_| self.affinity_term()).collect();
            a.insert("podAffinity".into(), json!({"requiredDuringSchedulingIgnoredDuringExecution": terms}));
        }
        if anti {
            let terms: Vec<Value> = (0..1 + self.rng.below(2)).map(|_| self.affinity_term()).collect();
            a.insert("podAntiAffinity".into(), json!({"requiredDuringSchedulingIgnoredDuringExecution": terms}));
        }
        (!a.is_empty()).then_some(Value::Object(a))
    }

    fn ports(&mut self) -> Option<Value> {
        let rng = &mut self.rng;
        if !rng.percent(20) {
            return None;
        }
        let port = *rng.pick(&[80, 8080]);
        let mut p = json!({"containerPort": port, "hostPort": port, "protocol": rng.pick(&["TCP", "UDP"])});
        if rng.percent(30) {
            p["hostIP"] = json!(rng.pick(&["127.0.0.1", "10.0.0.1", "0.0.0.0"]));
        }
        Some(json!([p]))
    }

    fn volumes(&mut self) -> Option<Value> {
        let rng = &mut self.rng;
        if !rng.percent(10) {
            return None;
        }
        Some(
            json!([{"name": "pd", "gcePersistentDisk": {"pdName": rng.pick(&["pd1", "pd2"]), "readOnly": rng.percent(50)}}]),
        )
    }

    fn labels(&mut self) -> Value {
        let rng = &mut self.rng;
        let mut l = json!({"app": rng.pick(APPS)});
        if rng.percent(40) {
            l["tier"] = json!(rng.pick(&["web", "db"]));
        }
        l
    }

    /// An existing or nominated pod: labels, requests, ports, disks, required (anti-)affinity.
    fn other_pod(&mut self, name: &str, node: Option<&str>, nominated: Option<&str>) -> Value {
        let ns = *self.rng.pick(NAMESPACES);
        let mut container = json!({"name": "c", "image": "busybox", "resources": self.requests(true)});
        if let Some(ports) = self.ports() {
            container["ports"] = ports;
        }
        let mut spec = json!({"containers": [container], "priority": self.rng.pick(&[0, 10, 100])});
        if let Some(n) = node {
            spec["nodeName"] = json!(n);
        }
        if let Some(v) = self.volumes() {
            spec["volumes"] = v;
        }
        let (aff, anti) = (self.rng.percent(10), self.rng.percent(15));
        if let Some(a) = self.pod_affinity(aff, anti) {
            spec["affinity"] = a;
        }
        let mut status = json!({"phase": if node.is_some() {"Running"} else {"Pending"}});
        if let Some(n) = nominated {
            status["nominatedNodeName"] = json!(n);
        }
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "uid": format!("uid-{name}"), "labels": self.labels()},
            "spec": spec, "status": status,
        })
    }

    fn node_affinity(&mut self) -> Value {
        let rng = &mut self.rng;
        let mut terms = Vec::new();
        for _ in 0..1 + rng.below(2) {
            let mut exprs = Vec::new();
            for _ in 0..1 + rng.below(2) {
                exprs.push(match rng.below(6) {
                    0 => json!({"key": ZONE, "operator": "In", "values": [format!("z{}", rng.below(3)), format!("z{}", rng.below(3))]}),
                    1 => json!({"key": ZONE, "operator": "NotIn", "values": [format!("z{}", rng.below(3))]}),
                    2 => json!({"key": "disk", "operator": rng.pick(&["Exists", "DoesNotExist"])}),
                    3 => json!({"key": "size", "operator": rng.pick(&["Gt", "Lt"]), "values": [rng.below(9).to_string()]}),
                    4 => json!({"key": "disk", "operator": "In", "values": ["ssd"]}),
                    _ => json!({"key": ZONE, "operator": "Exists"}),
                });
            }
            terms.push(json!({"matchExpressions": exprs}));
        }
        json!({"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}})
    }

    fn tolerations(&mut self) -> Value {
        let rng = &mut self.rng;
        let all = [
            json!({"key": "dedicated", "operator": "Equal", "value": "a", "effect": "NoSchedule"}),
            json!({"key": "dedicated", "operator": "Exists"}),
            json!({"key": "dedicated", "operator": "Equal", "value": "b"}),
            json!({"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}),
            json!({"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}),
        ];
        // No toleration of node.kubernetes.io/unschedulable: CheckNodeCondition rejects a cordoned
        // node whatever the pod tolerates (docs/semantics.md).
        let t: Vec<Value> = all.iter().filter(|_| rng.percent(35)).cloned().collect();
        json!(t)
    }

    fn spread(&mut self) -> Value {
        let mut cs = Vec::new();
        for _ in 0..1 + self.rng.below(2) {
            let selector = self.selector();
            let rng = &mut self.rng;
            let hard = rng.percent(80);
            let mut key = if rng.percent(50) { ZONE } else { HOSTNAME };
            // The API server refuses two constraints with the same topologyKey and
            // whenUnsatisfiable (`ValidateSpreadConstraintNotRepeat`, "Duplicate value"): the
            // second takes the other key.
            let when = if hard { "DoNotSchedule" } else { "ScheduleAnyway" };
            if cs.iter().any(|c: &Value| c["topologyKey"] == key && c["whenUnsatisfiable"] == when) {
                key = if key == ZONE { HOSTNAME } else { ZONE };
            }
            let mut c = json!({
                "maxSkew": 1 + rng.below(2),
                "topologyKey": key,
                "whenUnsatisfiable": when,
                "labelSelector": selector,
            });
            if hard && rng.percent(25) {
                c["minDomains"] = json!(2 + rng.below(3));
            }
            if rng.percent(25) {
                c["nodeAffinityPolicy"] = json!(rng.pick(&["Honor", "Ignore"]));
            }
            if rng.percent(25) {
                c["nodeTaintsPolicy"] = json!(rng.pick(&["Honor", "Ignore"]));
            }
            cs.push(c);
        }
        json!(cs)
    }

    /// The pod to schedule.
    fn pending_pod(&mut self) -> Value {
        let ns = *self.rng.pick(NAMESPACES);
        let mut containers = Vec::new();
        for i in 0..1 + self.rng.below(2) {
            let mut c = json!({"name": format!("c{i}"), "image": "busybox", "resources": self.requests(true)});
            if let Some(p) = self.ports() {
                c["ports"] = p;
            }
            containers.push(c);
        }
        let mut spec = json!({"containers": containers, "priority": self.rng.pick(&[0, 10, 100])});
        if self.rng.percent(20) {
            let mut init = json!({"name": "init", "image": "busybox", "resources": self.requests(false)});
            if self.rng.percent(50) {
                init["restartPolicy"] = json!("Always");
            }
            spec["initContainers"] = json!([init]);
        }
        if self.rng.percent(10) {
            spec["overhead"] = json!({"cpu": self.rng.pick(&["100m", "1"])});
        }
        if let Some(v) = self.volumes() {
            spec["volumes"] = v;
        }
        if self.rng.percent(20) {
            spec["nodeSelector"] = match self.rng.below(2) {
                0 => json!({"disk": "ssd"}),
                _ => json!({ZONE: format!("z{}", self.rng.below(3))}),
            };
        }
        let mut affinity = serde_json::Map::new();
        if self.rng.percent(20) {
            affinity.insert("nodeAffinity".into(), self.node_affinity());
        }
        let (aff, anti) = (self.rng.percent(20), self.rng.percent(20));
        if let Some(Value::Object(a)) = self.pod_affinity(aff, anti) {
            affinity.extend(a);
        }
        if !affinity.is_empty() {
            spec["affinity"] = Value::Object(affinity);
        }
        if self.rng.percent(35) {
            spec["tolerations"] = self.tolerations();
        }
        if self.rng.percent(25) {
            spec["topologySpreadConstraints"] = self.spread();
        }
        if self.rng.percent(4) {
            let n = if self.rng.percent(80) { self.rng.pick(&self.nodes).clone() } else { "elsewhere".into() };
            spec["nodeName"] = json!(n);
        }
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "pending", "namespace": ns, "uid": "uid-pending", "labels": self.labels()},
            "spec": spec, "status": {"phase": "Pending"},
        })
    }
}

/// The case of `seed`: the same seed gives the same case on every machine.
pub fn generate(domain: &Domain, seed: u64) -> Case {
    let mut rng = Rng::derive(seed, 25, 0);
    // Mostly small clusters, where pods and constraints meet; now and then up to the maximum.
    let n = if rng.percent(80) { 1 + rng.below(8) } else { 1 + rng.below(domain.max_nodes) };
    let nodes: Vec<String> = (0..n).map(|i| format!("n{i}")).collect();
    let mut g = Gen { rng, nodes: nodes.clone() };
    let mut objects = vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}}),
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team1", "labels": {"team": "1"}}}),
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team2", "labels": {"team": "2"}}}),
    ];
    for name in &nodes {
        objects.push(g.node(name));
    }
    let mut k = 0;
    for name in &nodes {
        for _ in 0..g.rng.below(4) {
            objects.push(g.other_pod(&format!("p{k}"), Some(name), None));
            k += 1;
        }
    }
    let nominated = if g.rng.percent(30) { 1 + g.rng.below(3) } else { 0 };
    for _ in 0..nominated {
        let node = g.rng.pick(&nodes).clone();
        objects.push(g.other_pod(&format!("nominee{k}"), None, Some(&node)));
        k += 1;
    }
    let mut pod = g.pending_pod();
    super::oracle_volumes::add_storage(seed, &nodes, &mut objects, &mut pod);
    super::oracle_label_keys::add_match_label_keys(seed, &mut objects, &mut pod);
    super::oracle_resources::add_resource_shapes(seed, domain.version, &mut objects, &mut pod);
    super::oracle_fields::add_fields(seed, domain.version, &nodes, &mut objects, &mut pod);
    let affinity = &pod["spec"]["affinity"];
    if affinity.get("podAffinity").is_none() && affinity.get("podAntiAffinity").is_none() {
        // Today's InterPodAffinity skips its Filter for the whole cycle (nominated pass included)
        // when the pod has no terms and no placed pod's anti-affinity selects it, so a nominated
        // pod's anti-affinity is not seen; the classic predicate sees it (docs/semantics.md).
        for o in objects.iter_mut().filter(|o| o["status"].get("nominatedNodeName").is_some()) {
            if let Some(a) = o["spec"].get_mut("affinity").and_then(Value::as_object_mut) {
                a.remove("podAntiAffinity");
            }
        }
    }
    Case { seed, objects, pod }
}

// ----- the shrinker -----

/// A smaller case that still fails `fails`: objects dropped one at a time, then the pending pod's
/// and the remaining objects' optional fields, until nothing more can go.
pub fn shrink(case: &Case, fails: &mut dyn FnMut(&Case) -> bool) -> Case {
    let mut best = case.clone();
    loop {
        let mut progressed = false;
        let mut i = 0;
        while i < best.objects.len() {
            let mut c = best.clone();
            c.objects.remove(i);
            if !c.node_names().is_empty() && fails(&c) {
                best = c;
                progressed = true;
            } else {
                i += 1;
            }
        }
        // Optional parts of the pod and of every object: each removed alone.
        for target in 0..=best.objects.len() {
            for path in removable_paths(if target == best.objects.len() { &best.pod } else { &best.objects[target] }) {
                let mut c = best.clone();
                let v = if target == c.objects.len() { &mut c.pod } else { &mut c.objects[target] };
                if remove_path(v, &path) && fails(&c) {
                    best = c;
                    progressed = true;
                }
            }
        }
        if !progressed {
            return best;
        }
    }
}

/// Paths (object keys and array indexes) whose removal leaves a valid object.
fn removable_paths(v: &Value) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let keep = ["apiVersion", "kind", "metadata", "name", "namespace", "uid", "nodeName", "containers", "status"];
    fn walk(v: &Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>, keep: &[&str]) {
        match v {
            Value::Object(m) => {
                for (k, child) in m {
                    path.push(k.clone());
                    if !keep.contains(&k.as_str()) || path.len() > 3 {
                        out.push(path.clone());
                    }
                    walk(child, path, out, keep);
                    path.pop();
                }
            }
            Value::Array(a) if a.len() > 1 => {
                for (i, child) in a.iter().enumerate().rev() {
                    path.push(i.to_string());
                    out.push(path.clone());
                    walk(child, path, out, keep);
                    path.pop();
                }
            }
            Value::Array(a) => {
                if let Some(child) = a.first() {
                    path.push("0".into());
                    walk(child, path, out, keep);
                    path.pop();
                }
            }
            _ => {}
        }
    }
    walk(v, &mut Vec::new(), &mut out, &keep);
    // Deepest first would find less; whole blocks first.
    out.sort_by_key(Vec::len);
    out
}

fn remove_path(v: &mut Value, path: &[String]) -> bool {
    let Some((last, parents)) = path.split_last() else { return false };
    let mut cur = v;
    for p in parents {
        cur = match cur {
            Value::Object(m) => match m.get_mut(p) {
                Some(c) => c,
                None => return false,
            },
            Value::Array(a) => match p.parse::<usize>().ok().and_then(|i| a.get_mut(i)) {
                Some(c) => c,
                None => return false,
            },
            _ => return false,
        };
    }
    match cur {
        Value::Object(m) => m.remove(last).is_some(),
        Value::Array(a) => match last.parse::<usize>() {
            Ok(i) if i < a.len() => {
                a.remove(i);
                true
            }
            _ => false,
        },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pods carry only spread constraints the API server admits: no two with the same
    /// topologyKey and whenUnsatisfiable (v1.22 `validation.go`, `ValidateSpreadConstraintNotRepeat`).
    /// Such a pair, which the generator once drew, counts the pods of both selectors into one
    /// domain in v1.22 and the classic predicate alike (their state is per topology key).
    #[test]
    fn no_pod_has_two_spread_constraints_on_one_key_and_action() {
        let mut with_two = 0;
        for seed in 0..3000 {
            let case = generate(&Domain::shared(), seed);
            for pod in case.objects.iter().chain(std::iter::once(&case.pod)) {
                let constraints = pod["spec"]["topologySpreadConstraints"].as_array().cloned().unwrap_or_default();
                let pairs: std::collections::BTreeSet<String> =
                    constraints.iter().map(|c| format!("{}/{}", c["topologyKey"], c["whenUnsatisfiable"])).collect();
                assert_eq!(pairs.len(), constraints.len(), "seed {seed}: {constraints:?}");
                with_two += usize::from(constraints.len() > 1);
            }
        }
        assert!(with_two > 100, "only {with_two} pods with two constraints");
    }
}
