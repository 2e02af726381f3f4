//! The comparison of one case (issue 37): the Policy accepted or refused by both (and a refused
//! file's error naming the same entry), every node's verdict and resolvability (as against v1.37,
//! [`crate::oracle::compare`]), each priority plugin's scores, and the ranking.
//!
//! Scores. v1.22's plugins score 0..=100, the classic priorities 0..=10. Several Policy entries may
//! be one v1.22 plugin (every `labelPreference` is NodeLabel, scored as their average with the
//! weight times their number). So scores are compared per v1.22 plugin, as weighted contributions:
//! the extender's Σ weight × score over the entries the plugin stands for, times 10, against
//! v1.22's weight × score. Both truncate to integers on their own scale, so they agree when they
//! are less than [`POINTS`] classic points per unit of weight apart; the largest gap seen is printed
//! by the long run. The ranking agrees when the extender's best node is within the same tolerance,
//! summed over the plugins, of v1.22's best total.

use std::collections::{BTreeMap, BTreeSet};

use crate::oracle::{compare_verdicts, reason_gaps, Disagreement, OracleNode};
use serde_json::Value;

use crate::policy_oracle::policies::{ONE_SIDED_PREDICATES, ONE_SIDED_PRIORITIES};
use crate::policy_oracle::{case_facts, Answer, Ours, PolicyCase};
use predicate_engine::predicates::no_volume_zone_conflict::ERR_VOLUME_ZONE_CONFLICT;

/// How far apart (in classic points, 0..=10 per priority, per unit of weight) the two sides' scores
/// of one plugin may be: each side truncates its own scale, and averages of truncated parts
/// (LeastRequested's two resources, NodeLabel's labels) add a point.
pub const POINTS: i64 = 2;

/// v1.22 plugins whose scores are not compared: v1.22 computes them with formulas that changed
/// after the classic releases the extender follows (docs/semantics.md, "Scores v1.22 computes
/// otherwise"). Each is left out of the ranking too.
pub const SCORES_NOT_COMPARED: &[(&str, &str)] = &[
    ("NodeResourcesBalancedAllocation", "1 - |cpu - memory| / 2 with fractions capped at 1 (classic: 1 - |cpu - memory|, 0 at or over capacity)"),
    ("NodeResourcesMostAllocated", "a request over capacity counts as the capacity (classic: the resource scores 0)"),
    ("PodTopologySpread", "SelectorSpreadPriority is PodTopologySpread's system-default spreading (DefaultPodTopologySpread), and EvenPodsSpreadPriority scores by the 1.18 algorithm"),
    ("InterPodAffinity", "normalised between the feasible nodes' smallest and largest counts (classic: between 0 and them)"),
    ("ImageLocality", "the upper threshold grows with the number of containers (classic: fixed at 1000 MB)"),
];

fn not_compared(plugin: &str) -> bool {
    SCORES_NOT_COMPARED.iter().any(|(p, _)| *p == plugin)
}

/// The v1.22 plugin a classic priority (its registry row) is scored by; `None` for EqualPriority,
/// which v1.22 skips (it adds the same to every node).
pub fn plugin_of(row: &str, selector_spread: &'static str) -> Option<&'static str> {
    Some(match row {
        "SelectorSpreadPriority" | "ServiceSpreadingPriority" => selector_spread,
        "InterPodAffinityPriority" => "InterPodAffinity",
        "LeastRequestedPriority" => "NodeResourcesLeastAllocated",
        "MostRequestedPriority" => "NodeResourcesMostAllocated",
        "BalancedResourceAllocation" => "NodeResourcesBalancedAllocation",
        "RequestedToCapacityRatioPriority" => "RequestedToCapacityRatio",
        "NodePreferAvoidPodsPriority" => "NodePreferAvoidPods",
        "NodeAffinityPriority" => "NodeAffinity",
        "TaintTolerationPriority" => "TaintToleration",
        "ImageLocalityPriority" => "ImageLocality",
        "EvenPodsSpreadPriority" => "PodTopologySpread",
        "NodeLabelPriority" => "NodeLabel",
        "ServiceAntiAffinityPriority" => "ServiceAffinity",
        "ResourceLimitsPriority" => "ResourceLimits",
        _ => return None,
    })
}

/// How one case disagrees.
#[derive(Debug, Clone)]
pub enum Finding {
    /// One side loads the Policy, the other refuses it.
    Acceptance {
        extender: Option<String>,
        v1_22: Option<String>,
    },
    /// Both refuse it, but not for the same entry.
    RefusedEntry {
        extender: String,
        v1_22: String,
    },
    Verdict(Disagreement),
    /// A plugin's weighted scores of a node are too far apart.
    Score {
        plugin: String,
        node: String,
        extender: i64,
        v1_22: i64,
        weight: i64,
    },
    /// A plugin scored on one side only.
    PluginMissing {
        plugin: String,
        side: &'static str,
    },
    /// A v1.22 Filter plugin failed with an error, ending its cycle.
    CycleError(String),
    /// v1.22's PreScore or Score failed (it would not place the pod).
    ScoreError(String),
    /// The extender's best node is not among v1.22's best.
    Ranking {
        extender_best: Vec<String>,
        v1_22_best: Vec<String>,
        tolerance: i64,
    },
}

impl Finding {
    /// The kind of disagreement, for counting.
    pub fn kind(&self) -> String {
        match self {
            Finding::Acceptance { extender: Some(_), .. } => "policy: extender refuses, v1.22 accepts".into(),
            Finding::Acceptance { .. } => "policy: extender accepts, v1.22 refuses".into(),
            Finding::RefusedEntry { .. } => "policy: refused for another entry".into(),
            Finding::Verdict(d) => format!("verdict: {}", d.what),
            Finding::Score { plugin, .. } => format!("score: {plugin}"),
            Finding::PluginMissing { plugin, side } => format!("score: {plugin} only on the {side}"),
            Finding::ScoreError(_) => "score: v1.22 fails".into(),
            Finding::CycleError(_) => "filter: v1.22 fails".into(),
            Finding::Ranking { .. } => "ranking: best node".into(),
        }
    }
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Finding::Acceptance { extender, v1_22 } => {
                write!(f, "policy: extender {:?}, v1.22 {:?}", extender.as_deref(), v1_22.as_deref())
            }
            Finding::RefusedEntry { extender, v1_22 } => {
                write!(f, "policy refused: extender {extender:?}, v1.22 {v1_22:?}")
            }
            Finding::Verdict(d) => {
                write!(f, "node {} {}: extender {:?}, v1.22 {:?}", d.node, d.what, d.extender.reasons, d.oracle.reasons)
            }
            Finding::Score { plugin, node, extender, v1_22, weight } => {
                write!(f, "score {plugin} on {node}: extender ×10 {extender}, v1.22 {v1_22} (weight {weight})")
            }
            Finding::PluginMissing { plugin, side } => write!(f, "score plugin {plugin} only on the {side}"),
            Finding::ScoreError(e) => write!(f, "v1.22 failed to score: {e}"),
            Finding::CycleError(e) => write!(f, "v1.22 ended the cycle: {e}"),
            Finding::Ranking { extender_best, v1_22_best, tolerance } => {
                write!(f, "best nodes: extender {extender_best:?}, v1.22 {v1_22_best:?} (tolerance {tolerance})")
            }
        }
    }
}

/// The names in double quotes in a message.
fn quoted(message: &str) -> BTreeSet<&str> {
    message.split('"').skip(1).step_by(2).collect()
}

/// Both refuse: the entry the extender names (`predicates[2] ("Name")`), or the v1.22 plugin it
/// stands for, is among the names v1.22's message quotes, when it quotes any.
fn same_entry(extender: &str, v1_22: &str, policy: &Value) -> bool {
    let theirs = quoted(v1_22);
    let mut ours: BTreeSet<String> = quoted(extender).into_iter().map(String::from).collect();
    for list in ["predicates", "priorities"] {
        for entry in policy[list].as_array().into_iter().flatten() {
            let name = entry["name"].as_str().unwrap_or_default();
            if !ours.contains(name) {
                continue;
            }
            let row = if list == "predicates" {
                predicate_engine::registry::validate::predicate_plugin(name, entry.get("argument"))
            } else {
                predicate_engine::registry::validate::priority_plugin(name, entry.get("argument"))
            };
            if let Some(plugin) = row.and_then(|r| plugin_of(r, "SelectorSpread")) {
                ours.insert(plugin.to_string());
            }
        }
    }
    theirs.is_empty()
        || ours.is_empty()
        || ours.iter().any(|n| theirs.contains(n.as_str()))
        // v1.22's validation names priorities without quotes: "priority X should have ...".
        || ours.iter().any(|n| v1_22.contains(&format!(" {n} ")))
}

/// The file has more than one bad entry and each side names the first it meets: an entry v1.22's
/// message quotes is one the extender refuses on its own too.
fn refused_alone(v1_22: &str, policy: &Value) -> bool {
    let names = quoted(v1_22);
    ["predicates", "priorities"].iter().any(|list| {
        policy[*list].as_array().into_iter().flatten().any(|entry| {
            let named = entry["name"].as_str().is_some_and(|n| names.contains(n));
            let alone = serde_json::json!({"kind": "Policy", "apiVersion": "v1", *list: [entry]});
            named && predicate_engine::policy::parse("alone", alone.to_string().as_bytes(), Default::default()).is_err()
        })
    })
}

/// The Policy's `requestedToCapacityRatioArguments` lists its resources (without them v1.22
/// scores nothing; docs/semantics.md).
fn ratio_has_resources(policy: &Value) -> bool {
    policy["priorities"].as_array().into_iter().flatten().all(|e| {
        let a = &e["argument"]["requestedToCapacityRatioArguments"];
        a.is_null() || a["resources"].as_array().is_some_and(|r| !r.is_empty())
    })
}

/// The steepest part of the Policy's utilisation shape, in score points per percent (rounded
/// up): the classic releases round the utilisation up (`100 - free * 100 / capacity`), v1.22 down
/// (`requested * 100 / capacity`), so the two may read the shape one percent apart
/// (docs/semantics.md, "RequestedToCapacityRatio reads the utilisation one percent apart").
fn ratio_slope(policy: &Value) -> i64 {
    let mut steepest = 0;
    for e in policy["priorities"].as_array().into_iter().flatten() {
        let shape = e["argument"]["requestedToCapacityRatioArguments"]["shape"].as_array().cloned().unwrap_or_default();
        for pair in shape.windows(2) {
            let (u0, s0) = (pair[0]["utilization"].as_i64().unwrap_or(0), pair[0]["score"].as_i64().unwrap_or(0));
            let (u1, s1) = (pair[1]["utilization"].as_i64().unwrap_or(0), pair[1]["score"].as_i64().unwrap_or(0));
            if u1 > u0 {
                steepest = steepest.max(((s1 - s0).abs() + (u1 - u0) - 1) / (u1 - u0));
            }
        }
    }
    steepest
}

/// Some point of the Policy's utilisation shape scores 0, so a resource may score 0.
fn shape_reaches_zero(policy: &Value) -> bool {
    policy["priorities"].as_array().into_iter().flatten().any(|e| {
        let shape = &e["argument"]["requestedToCapacityRatioArguments"]["shape"];
        shape.as_array().into_iter().flatten().any(|p| p["score"] == 0)
    })
}

/// The resources a pod requests (any container, init container or overhead), by name.
fn requested_resources(pod: &Value) -> BTreeSet<String> {
    let spec = &pod["spec"];
    let mut out = BTreeSet::new();
    for list in ["containers", "initContainers"] {
        for c in spec[list].as_array().into_iter().flatten() {
            for (name, q) in c["resources"]["requests"].as_object().into_iter().flatten() {
                if q != "0" {
                    out.insert(name.clone());
                }
            }
        }
    }
    out.extend(spec["overhead"].as_object().into_iter().flatten().map(|(k, _)| k.clone()));
    out
}

/// Every heading [`documented`] answers: a `###` heading of docs/semantics.md ("Against v1.22 with
/// a Policy").
pub const DOCUMENTED: &[&str] = &[
    "Classic names v1.22 no longer registers",
    "Checks v1.22 added",
    "Stricter than v1.22",
    "Resources the pod does not request",
    "Pod overhead in the resource scores",
    "RequestedToCapacityRatio averages a resource scoring 0",
    "CheckServiceAffinity's first pod",
    "NoVolumeZoneConflict is today's VolumeZone",
    "EvenPodsSpread counts only the nodes it spreads over",
    "v1.22's ServiceAffinity and nominated pods",
];

/// The heading of docs/semantics.md ("Against v1.22 with a Policy") that lists this difference,
/// if one does.
pub fn documented(finding: &Finding, case: &PolicyCase) -> Option<&'static str> {
    let not_found = |t: &str, names: &[&str]| names.iter().any(|n| t.contains(&format!("type not found for \"{n}\"")));
    match finding {
        Finding::Acceptance { extender: None, v1_22: Some(t) } => {
            if not_found(t, ONE_SIDED_PREDICATES) || not_found(t, ONE_SIDED_PRIORITIES) {
                Some("Classic names v1.22 no longer registers")
            } else if ["conflict with absentLabels", "has a different weight with", "redeclares custom priority"]
                .iter()
                .any(|m| t.contains(m))
            {
                Some("Checks v1.22 added")
            } else {
                None
            }
        }
        Finding::Acceptance { extender: Some(e), v1_22: None } => {
            if e.contains("(\"MaxCinderVolumeCount\"): unknown predicate") {
                Some("Classic names v1.22 no longer registers")
            } else if [
                "listed twice",
                "takes only ignoredResources",
                "takes no argument",
                "takes no such argument",
                "must list at least one label",
                "kind: must be \"Policy\"",
                "apiVersion: must be \"v1\"",
            ]
            .iter()
            .any(|m| e.contains(m))
            {
                Some("Stricter than v1.22")
            } else {
                None
            }
        }
        // Both refuse, each for a difference listed above (the file has more than one bad entry).
        Finding::RefusedEntry { extender, v1_22 } => {
            documented(&Finding::Acceptance { extender: Some(extender.clone()), v1_22: None }, case)
                .or_else(|| documented(&Finding::Acceptance { extender: None, v1_22: Some(v1_22.clone()) }, case))
        }
        Finding::Verdict(d) if d.what == "extender fits, oracle rejects" && overcommitted(d, case) => {
            Some("Resources the pod does not request")
        }
        // The same, in the pass with the nominated pods: v1.22 stops there, the extender goes on to
        // the pass without them and reports what fails in it.
        Finding::Verdict(d) if d.what == "resolvable differs" && overcommitted(d, case) && has_nominated(case) => {
            Some("Resources the pod does not request")
        }
        // With `--reasons`: v1.22 adds the over-committed resource to reasons both give.
        Finding::Verdict(d) if d.what == "reasons differ" && overcommitted_beside_the_same_reasons(d, case) => {
            Some("Resources the pod does not request")
        }
        Finding::Verdict(d) => verdict_difference(d, case),
        Finding::CycleError(e)
            if e.contains("running \"ServiceAffinity\" filter plugin") && e.contains("node not found") =>
        {
            Some("v1.22's ServiceAffinity and nominated pods")
        }
        Finding::Score { plugin, .. } if plugin == "RequestedToCapacityRatio" && shape_reaches_zero(&case.policy) => {
            Some("RequestedToCapacityRatio averages a resource scoring 0")
        }
        Finding::Score { plugin, .. }
            if ["NodeResourcesLeastAllocated", "RequestedToCapacityRatio"].contains(&plugin.as_str())
                && case.case.pod["spec"]["overhead"].get("cpu").is_some() =>
        {
            Some("Pod overhead in the resource scores")
        }
        _ => None,
    }
}

/// v1.22's reasons agree with the extender's (as `--reasons` compares them: each rejecting plugin
/// has a classic message, each message a plugin) once the insufficiencies of resources the pod
/// does not request, which only v1.22 gives, are left out.
fn overcommitted_beside_the_same_reasons(d: &Disagreement, case: &PolicyCase) -> bool {
    let requested = requested_resources(&case.case.pod);
    let (extra, rest): (Vec<&String>, Vec<&String>) =
        d.oracle.reasons.iter().partition(|r| unrequested_insufficiency(r, &requested));
    let plugins: Vec<Value> = rest
        .iter()
        .filter_map(|r| r.split_once(": "))
        .map(|(plugin, message)| serde_json::json!({"plugin": plugin, "code": "Unschedulable", "reasons": [message]}))
        .collect();
    let Ok(without) = serde_json::from_value::<OracleNode>(serde_json::json!({"fits": false, "plugins": plugins}))
    else {
        return false;
    };
    !extra.is_empty() && reason_gaps(&d.extender.reasons, &without).is_empty()
}

/// The case has a pod nominated to a node: the filter runs twice.
fn has_nominated(case: &PolicyCase) -> bool {
    case.case
        .objects
        .iter()
        .any(|o| o["kind"] == "Pod" && o["status"]["nominatedNodeName"].as_str().is_some_and(|n| !n.is_empty()))
}

/// v1.22's reason says a resource the pod does not request is insufficient (the node's pods
/// already request more of it than it has).
fn unrequested_insufficiency(reason: &str, requested: &BTreeSet<String>) -> bool {
    reason.strip_prefix("NodeResourcesFit: Insufficient ").is_some_and(|name| !requested.contains(name))
}

/// The message of one of v1.22's `plugin: message` reasons.
fn message_of(reason: &str) -> &str {
    reason.split_once(": ").map_or(reason, |(_, message)| message)
}

/// v1.22 rejects the node only for resources the pod does not request, on a node already over
/// its allocatable in them.
fn overcommitted(d: &Disagreement, case: &PolicyCase) -> bool {
    let requested = requested_resources(&case.case.pod);
    !d.oracle.reasons.is_empty() && d.oracle.reasons.iter().all(|r| unrequested_insufficiency(r, &requested))
}

/// The claim lookups NoVolumeZoneConflict fails a pod with (today's VolumeZone PreFilter, and
/// v1.22's Filter on a node with topology labels).
fn claim_lookup_failure(reason: &str) -> bool {
    let missing = ["persistentvolumeclaim \"", "persistentvolume \"", "storageclass.storage.k8s.io \""]
        .iter()
        .any(|p| reason.starts_with(p) && reason.ends_with("not found"));
    missing
        || reason.starts_with("PersistentVolumeClaim had no")
        || reason == "PersistentVolume had no name"
        || reason.starts_with("VolumeBindingMode not set for StorageClass")
}

/// Only the spread constraints reject the node, on the side that rejects it (on v1.22's side, with
/// resources the pod does not request beside them: "Resources the pod does not request").
fn spread_only(d: &Disagreement, case: &PolicyCase) -> bool {
    let requested = requested_resources(&case.case.pod);
    (d.what == "extender fits, oracle rejects"
        && d.oracle.reasons.iter().any(|r| r.starts_with("PodTopologySpread: "))
        && d.oracle
            .reasons
            .iter()
            .all(|r| r.starts_with("PodTopologySpread: ") || unrequested_insufficiency(r, &requested)))
        || (d.what == "extender rejects, oracle fits"
            && d.extender.reasons.iter().all(|r| r == "node(s) didn't match pod topology spread constraints"))
}

/// The verdict differences whose cause the case shows (docs/semantics.md).
fn verdict_difference(d: &Disagreement, case: &PolicyCase) -> Option<&'static str> {
    let both = || d.extender.reasons.iter().chain(&d.oracle.reasons);
    // v1.22 passes a node without topology labels before it looks the claims up.
    let unlabelled_node_passes = || {
        d.extender.reasons.iter().any(|r| claim_lookup_failure(r))
            && !d.oracle.reasons.iter().any(|r| claim_lookup_failure(message_of(r)))
            && case_facts::node_without_topology_labels(case, &d.node)
    };
    // v1.22 matches a beta volume label against the same key only.
    let beta_label_conflicts = || {
        d.oracle.reasons.iter().any(|r| r == "VolumeZone: node(s) had no available volume zone")
            && !d.extender.reasons.iter().any(|r| *r == ERR_VOLUME_ZONE_CONFLICT.to_string())
            && case_facts::beta_volume_label_on_ga_node(case, &d.node)
    };
    if both().any(|r| r.contains("service affinity")) && case_facts::service_pods_disagree_on_labels(case) {
        Some("CheckServiceAffinity's first pod")
    } else if spread_only(d, case) && case_facts::spread_counts_left_out_nodes(case) {
        Some("EvenPodsSpread counts only the nodes it spreads over")
    } else if unlabelled_node_passes() || beta_label_conflicts() {
        Some("NoVolumeZoneConflict is today's VolumeZone")
    } else {
        None
    }
}

/// The weighted contributions of the extender's priorities, per v1.22 plugin: (Σ weight, per node
/// Σ weight × score × 10).
pub fn contributions(
    ours: &Ours,
    selector_spread: &'static str,
) -> BTreeMap<&'static str, (i64, BTreeMap<String, i64>)> {
    let mut out: BTreeMap<&'static str, (i64, BTreeMap<String, i64>)> = BTreeMap::new();
    for p in &ours.priorities {
        let Some(plugin) = plugin_of(p.row, selector_spread) else { continue };
        let slot = out.entry(plugin).or_default();
        slot.0 += p.weight;
        for (node, score) in &p.scores {
            *slot.1.entry(node.clone()).or_default() += p.weight * score * 10;
        }
    }
    out
}

/// One case compared: the disagreements docs/semantics.md does not list, and the listed ones
/// met (by the heading that lists them).
#[derive(Debug, Default)]
pub struct Compared {
    pub findings: Vec<Finding>,
    pub documented: Vec<&'static str>,
}

/// Compares one case; `reasons`: the messages too.
pub fn compare(case: &PolicyCase, ours: &Ours, answer: &Answer, reasons: bool) -> Compared {
    let mut out = Compared::default();
    for finding in compare_raw(case, ours, answer, reasons) {
        let heading = documented(&finding, case);
        debug_assert!(heading.is_none_or(|h| DOCUMENTED.contains(&h)), "{heading:?}");
        match heading {
            Some(heading) => out.documented.push(heading),
            None => out.findings.push(finding),
        }
    }
    out
}

/// Every disagreement of one case, documented or not; empty when they agree.
fn compare_raw(case: &PolicyCase, ours: &Ours, answer: &Answer, reasons: bool) -> Vec<Finding> {
    let v1_22_error = (!answer.policy_error.is_empty()).then(|| answer.policy_error.clone());
    match (&ours.policy_error, &v1_22_error) {
        (None, None) => {}
        (Some(e), Some(t)) => {
            return if same_entry(e, t, &case.policy) || refused_alone(t, &case.policy) {
                Vec::new()
            } else {
                vec![Finding::RefusedEntry { extender: e.clone(), v1_22: t.clone() }]
            };
        }
        (e, t) => return vec![Finding::Acceptance { extender: e.clone(), v1_22: t.clone() }],
    }
    if !answer.cycle_error.is_empty() {
        return vec![Finding::CycleError(answer.cycle_error.clone())];
    }
    // Without alwaysCheckAllPredicates each side reports only its first failing check, and the
    // two order them differently (GeneralPredicates is one predicate here, four plugins there):
    // only fits or not is compared then.
    let check_all = case.policy["alwaysCheckAllPredicates"] == true;
    let mut out: Vec<Finding> = compare_verdicts(&ours.verdicts, &answer.nodes, reasons && check_all)
        .into_iter()
        .filter(|d| check_all || d.what != "resolvable differs")
        .map(Finding::Verdict)
        .collect();
    if !out.is_empty() {
        // Scores of different feasible sets say nothing more.
        return out;
    }
    if !answer.score_error.is_empty() {
        return vec![Finding::ScoreError(answer.score_error.clone())];
    }
    let ours_by_plugin = contributions(ours, answer.selector_spread());
    let feasible: Vec<&String> = ours.verdicts.iter().filter(|(_, v)| v.fits).map(|(n, _)| n).collect();
    let mut tolerance = 0;
    // The plugins whose scores are compared, and so ranked.
    let mut compared: BTreeSet<&str> = BTreeSet::new();
    for (plugin, (weight, scores)) in &ours_by_plugin {
        if not_compared(plugin) || (*plugin == "RequestedToCapacityRatio" && !ratio_has_resources(&case.policy)) {
            continue;
        }
        let Some(theirs) = answer.scores.get(*plugin) else {
            // A plugin of equal scores changes no ranking (e.g. no service selects the pod).
            let distinct: BTreeSet<&i64> = scores.values().collect();
            if distinct.len() > 1 {
                out.push(Finding::PluginMissing { plugin: plugin.to_string(), side: "extender" });
            }
            continue;
        };
        let their_weight = answer.weights.get(*plugin).copied().unwrap_or(0);
        compared.insert(plugin);
        let points = if *plugin == "RequestedToCapacityRatio" { POINTS + ratio_slope(&case.policy) } else { POINTS };
        let allowed = points * 10 * weight;
        tolerance += allowed;
        for node in &feasible {
            let e = scores.get(*node).copied().unwrap_or(0);
            let t = their_weight * theirs.get(*node).copied().unwrap_or(0);
            if (t - e).abs() >= allowed {
                out.push(Finding::Score {
                    plugin: plugin.to_string(),
                    node: node.to_string(),
                    extender: e,
                    v1_22: t,
                    weight: *weight,
                });
            }
        }
    }
    for (plugin, scores) in &answer.scores {
        if !ours_by_plugin.contains_key(plugin.as_str()) && !not_compared(plugin) {
            let distinct: BTreeSet<&i64> = scores.values().collect();
            if distinct.len() > 1 {
                out.push(Finding::PluginMissing { plugin: plugin.clone(), side: "v1.22" });
            }
        }
    }
    if out.is_empty() && feasible.len() > 1 {
        let ours_total = |n: &str| {
            ours_by_plugin
                .iter()
                .filter(|(p, _)| compared.contains(**p))
                .map(|(_, (_, s))| s.get(n).copied().unwrap_or(0))
                .sum::<i64>()
        };
        let best = |f: &dyn Fn(&str) -> i64| -> Vec<String> {
            let max = feasible.iter().map(|n| f(n)).max().unwrap_or(0);
            feasible.iter().filter(|n| f(n) == max).map(|n| n.to_string()).collect()
        };
        // v1.22's total over the compared plugins.
        let theirs_total = |n: &str| {
            answer
                .scores
                .iter()
                .filter(|(p, _)| compared.contains(p.as_str()))
                .map(|(p, s)| answer.weights.get(p).copied().unwrap_or(0) * s.get(n).copied().unwrap_or(0))
                .sum::<i64>()
        };
        let extender_best = best(&ours_total);
        let their_max = feasible.iter().map(|n| theirs_total(n)).max().unwrap_or(0);
        if extender_best.iter().any(|n| theirs_total(n) + tolerance < their_max) {
            out.push(Finding::Ranking { extender_best, v1_22_best: best(&theirs_total), tolerance });
        }
    }
    out
}

/// The largest gap between the two sides' weighted scores of each plugin, per unit of weight, in
/// v1.22's points (0..=100 scale), over the feasible nodes of a case whose verdicts agree.
pub fn gaps(ours: &Ours, answer: &Answer) -> BTreeMap<String, i64> {
    let mut out = BTreeMap::new();
    if !answer.policy_error.is_empty() || ours.policy_error.is_some() {
        return out;
    }
    for (plugin, (weight, scores)) in contributions(ours, answer.selector_spread()) {
        let (Some(theirs), Some(w)) = (answer.scores.get(plugin), answer.weights.get(plugin)) else { continue };
        if weight == 0 {
            continue;
        }
        for (node, e) in &scores {
            if let Some(t) = theirs.get(node) {
                let gap = (w * t - e).abs() / weight;
                let slot = out.entry(plugin.to_string()).or_insert(0);
                *slot = (*slot).max(gap);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::{NodeVerdict, OracleNode};
    use crate::policy_oracle::Scored;

    fn fits() -> NodeVerdict {
        NodeVerdict { fits: true, unresolvable: false, reasons: Vec::new() }
    }

    fn oracle_fits() -> OracleNode {
        serde_json::from_value(serde_json::json!({"fits": true})).unwrap()
    }

    /// Two nodes both sides keep; the extender's LeastRequested (weight 2) and two label
    /// preferences (weight 1 each, one NodeLabel plugin of weight 2 in v1.22).
    fn case() -> PolicyCase {
        crate::policy_oracle::generate(1)
    }

    fn sides(ours_least: [i64; 2], theirs_least: [i64; 2]) -> (Ours, Answer) {
        let nodes = ["n0", "n1"];
        let by_node = |s: [i64; 2]| nodes.iter().map(|n| n.to_string()).zip(s).collect::<BTreeMap<_, _>>();
        let ours = Ours {
            policy_error: None,
            verdicts: nodes.iter().map(|n| (n.to_string(), fits())).collect(),
            priorities: vec![
                Scored { row: "LeastRequestedPriority", weight: 2, scores: by_node(ours_least) },
                Scored { row: "NodeLabelPriority", weight: 1, scores: by_node([10, 0]) },
                Scored { row: "NodeLabelPriority", weight: 1, scores: by_node([10, 10]) },
                Scored { row: "EqualPriority", weight: 7, scores: by_node([1, 1]) },
            ],
        };
        let answer = Answer {
            nodes: nodes.iter().map(|n| (n.to_string(), oracle_fits())).collect(),
            scores: [
                ("NodeResourcesLeastAllocated".to_string(), by_node(theirs_least)),
                ("NodeLabel".to_string(), by_node([100, 50])),
            ]
            .into(),
            weights: [("NodeResourcesLeastAllocated".to_string(), 2), ("NodeLabel".to_string(), 2)].into(),
            totals: by_node([2 * theirs_least[0] + 200, 2 * theirs_least[1] + 100]),
            ..Answer::default()
        };
        (ours, answer)
    }

    #[test]
    fn label_preferences_are_one_plugin_and_scores_agree_within_the_rounding() {
        let (ours, answer) = sides([7, 4], [79, 40]);
        let by_plugin = contributions(&ours, "SelectorSpread");
        assert_eq!(by_plugin["NodeLabel"], (2, [("n0".to_string(), 200), ("n1".to_string(), 100)].into()));
        assert!(!by_plugin.contains_key("EqualPriority"));
        assert!(compare(&case(), &ours, &answer, false).findings.is_empty());
    }

    #[test]
    fn scores_two_points_apart_disagree_and_so_does_the_best_node() {
        // 2 × 7 × 10 = 140 against 2 × 98 = 196: 2.8 points per unit of weight.
        let (ours, answer) = sides([7, 4], [98, 40]);
        let found = compare(&case(), &ours, &answer, false).findings;
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].kind(), "score: NodeResourcesLeastAllocated");
        // Every score within its tolerance (under 40 per plugin of weight 2), the gaps adding up:
        // n1 best for the extender (80 + 200 against 200 + 100), n0 best in v1.22 (118 + 238
        // against 162 + 62), beyond the summed tolerance of 80.
        let (ours, mut answer) = sides([4, 10], [59, 81]);
        answer.scores.insert("NodeLabel".to_string(), [("n0".to_string(), 119), ("n1".to_string(), 31)].into());
        let found = compare(&case(), &ours, &answer, false).findings;
        assert_eq!(found.iter().map(Finding::kind).collect::<Vec<_>>(), ["ranking: best node"]);
    }

    #[test]
    fn every_documented_difference_is_in_semantics_md() {
        let doc = include_str!("../../../../docs/semantics.md");
        let section = &doc[doc.find("## Against v1.22 with a Policy").unwrap()..];
        for heading in DOCUMENTED {
            assert!(
                section.contains(&format!("### {heading}\n")) || section.contains(&format!("**{heading}.**")),
                "{heading}"
            );
        }
        for (plugin, _) in SCORES_NOT_COMPARED {
            assert!(section.contains(&format!("- {plugin}: ")), "{plugin}");
        }
    }

    #[test]
    fn refusals_agree_when_they_name_the_same_entry() {
        let policy = serde_json::json!({"priorities": [{"name": "BadShape", "weight": 1,
            "argument": {"requestedToCapacityRatioArguments": {"shape": []}}}]});
        let same_entry = |a: &str, b: &str| same_entry(a, b, &policy);
        // v1.22 names the plugin the entry stands for.
        assert!(same_entry(
            "policy: priorities[0] (\"BadShape\"): argument.requestedToCapacityRatioArguments.shape: must not be empty",
            "initializing plugin \"RequestedToCapacityRatio\": shape: Required value"
        ));
        let ours = "policy: priorities[2] (\"Prefer7\"): argument.labelPreference.label: must not be empty";
        assert!(same_entry(ours, "LabelPreference  priority \"Prefer7\" has a different weight with \"Prefer3\""));
        assert!(same_entry(ours, "priority Prefer7 should have a positive weight applied to it or it has overflown"));
        assert!(!same_entry(ours, "predicate type not found for \"Other\""));
        // A message that names no entry (a decoding error) agrees with any.
        assert!(same_entry(ours, "couldn't decode: json: cannot unmarshal number"));
    }
}
