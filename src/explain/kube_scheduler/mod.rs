//! What kube-scheduler says of a pod that fits no node: its FailedScheduling event begins with
//! `0/N nodes are available: ` and one count per reason, each node counted once, by the status
//! kube-scheduler gave it (`FitError.Error()`, `pkg/scheduler/framework/types.go`):
//!
//! - a PreFilter plugin that rejects the pod gives the whole line (`0/N nodes are available:
//!   <message>.`); one that narrows the nodes (NodeName from 1.37, NodeAffinity's `metadata.name`
//!   fields) counts the others as "node(s) didn't satisfy plugin(s) [Plugin]";
//! - a node its own Filter plugins reject counts under the reasons of the first plugin, in the
//!   profile's order, that rejects it (both passes of the nominated pods, as
//!   `RunFilterPluginsWithNominatedPods`);
//! - a node they pass counts under what the extender's `/filter` answered for it, one string (the
//!   extender joins its reasons with `, `), as `findNodesThatPassExtenders` records it.
//!
//! The classic predicates stand in for the plugins, in the plugins' words (`stand_ins`); which
//! plugins run is the profile's (`profile`: the shipped configuration, or a
//! KubeSchedulerConfiguration that turns some off, such as the `policy-only` overlay's).
//!
//! Every node is counted. kube-scheduler stops filtering once it has found
//! `numFeasibleNodesToFind` nodes its plugins pass (at least 100; 10% of 5,000 nodes by default) and
//! then asks the extender about those only: where more nodes than that pass its plugins and the
//! extender rejects them all, its counts cover the nodes it looked at, and this line's cover all.

pub mod profile;
pub mod stand_ins;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;

use crate::cluster::objects::Pod;
use crate::cluster::Snapshot;
use crate::engine::fits::{double_pass, run_predicates_observed};
use crate::engine::{filter, CancelFlag, EvaluationError, Evaluator, Plan, Prepared, Verdict};
use crate::framework::{AnyPredicate, Candidate, ClusterView, MissingState, Reason};

pub use profile::{ConfigError, Plugin, Profile};
use stand_ins::{prefilter_failure, prefilter_nodes, StandIn};

/// Who rejected a node in kube-scheduler's view, and the reasons it counts.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct NodeStatus {
    pub node: String,
    /// One of kube-scheduler's plugins, `Extender`, or the plugin whose PreFilter rejected the pod;
    /// empty when the framework rejected it itself (the PreFilter plugins' nodes have nothing in
    /// common).
    pub by: String,
    pub reasons: Vec<String>,
}

/// kube-scheduler's view of the pod: its summary line and every node's status.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct KubeSchedulerView {
    /// `0/N nodes are available: ...`: the FailedScheduling event's text before the PostFilter
    /// plugins' (`preemption: ...`). When some nodes fit, kube-scheduler reports nothing; the line
    /// then starts with their count. (The report's `summary`: not written twice.)
    #[serde(skip)]
    pub summary: String,
    /// The PreFilter plugin that rejected the pod, and why: no node was filtered.
    pub prefilter: Option<NodeStatus>,
    /// The nodes rejected, by name.
    pub rejected: Vec<NodeStatus>,
    /// The nodes its plugins and the extender pass, by name.
    pub feasible: Vec<String>,
}

/// The extender joins a node's reasons into one string (`server::filter_result`), which
/// kube-scheduler counts as one reason.
pub fn extender_reason(reasons: &[Reason]) -> String {
    crate::framework::reason::joined(reasons).into_owned()
}

/// kube-scheduler's view of `pod` on `snapshot`, with its plugins as `profile` runs them and the
/// extender as `extender` (the Policy in force) answers.
pub fn evaluate(
    profile: &Profile,
    extender: &Plan,
    pod: &Pod,
    snapshot: &Snapshot,
    evaluator: &Evaluator,
    cancel: &CancelFlag,
) -> Result<KubeSchedulerView, EvaluationError> {
    let plugins = profile.filters();
    let stand_ins: Vec<Arc<dyn AnyPredicate>> =
        plugins.iter().filter_map(|p| StandIn::new(*p)).map(|s| Arc::new(s) as Arc<dyn AnyPredicate>).collect();
    let plan = Plan::of_predicates(stand_ins);
    let view = ClusterView::of(snapshot);
    let prepared = Prepared::new(&plan, pod.clone(), &view);
    let all = snapshot.node_count();

    // PreFilter, in the profile's order: a rejection ends the cycle; a PreFilterResult narrows
    // the nodes (`RunPreFilterPlugins`).
    let mut narrowed: Option<(Vec<String>, Vec<&'static str>)> = None;
    for plugin in &plugins {
        let rejection =
            |message: String| NodeStatus { node: String::new(), by: plugin.name().to_string(), reasons: vec![message] };
        if let Some(message) = prefilter_failure(*plugin, &prepared.pod, &view) {
            return Ok(prefilter_rejected(rejection(message), all));
        }
        let Some(names) = prefilter_nodes(*plugin, &prepared.pod, profile.version) else { continue };
        if names.is_empty() {
            return Ok(prefilter_rejected(rejection("pod affinity terms conflict".to_string()), all));
        }
        let (nodes, by) = narrowed.get_or_insert_with(|| (names.clone(), Vec::new()));
        nodes.retain(|n| names.contains(n));
        by.push(plugin.name());
        if nodes.is_empty() {
            by.sort_unstable();
            let message = match by.as_slice() {
                [one] => format!("node(s) didn't satisfy plugin {one}"),
                many => format!("node(s) didn't satisfy plugin(s) [{}] simultaneously", many.join(" ")),
            };
            // The framework's own status: it names no plugin (`RunPreFilterPlugins`).
            let status = NodeStatus { node: String::new(), by: String::new(), reasons: vec![message] };
            return Ok(prefilter_rejected(status, all));
        }
    }

    let mut names: Vec<String> = snapshot.node_names().into_iter().map(str::to_string).collect();
    let mut absent = None;
    if let Some((nodes, mut by)) = narrowed {
        names.retain(|n| nodes.contains(n));
        by.sort_unstable();
        absent = Some(format!("node(s) didn't satisfy plugin(s) [{}]", by.join(" ")));
    }
    let candidates: Vec<Candidate> = names.into_iter().map(|n| Candidate::by_name(snapshot, n)).collect();
    let statuses = evaluator.map(&candidates, cancel, |c| match c {
        Candidate::Known(node, nominated) => first_rejection(&plan, &prepared, node, nominated).map(Some),
        Candidate::Unknown(_) => Ok(None),
    })?;

    let mut rejected = Vec::new();
    let mut passed = Vec::new();
    for (candidate, status) in candidates.into_iter().zip(statuses) {
        match status? {
            Some(Some((by, reasons))) => rejected.push(NodeStatus { node: candidate.name().to_string(), by, reasons }),
            Some(None) => passed.push(candidate),
            // A name the model does not know: kube-scheduler's snapshot has no such node either.
            None => {}
        }
    }

    // The extender, asked about the nodes kube-scheduler's plugins passed, as `/filter` answers.
    let mut feasible = Vec::new();
    if !passed.is_empty() {
        let asked = Prepared::new(extender, pod.clone(), &view);
        let filtered = filter(evaluator, extender, &asked, &passed, cancel, false)?;
        for (candidate, verdict) in passed.iter().zip(filtered.verdicts) {
            match verdict {
                Verdict::Fails(reasons) => rejected.push(NodeStatus {
                    node: candidate.name().to_string(),
                    by: "Extender".to_string(),
                    reasons: vec![extender_reason(&reasons)],
                }),
                _ => feasible.push(candidate.name().to_string()),
            }
        }
    }
    rejected.sort_by(|a, b| a.node.cmp(&b.node));
    let absent = absent.map(|reason| (reason, all - rejected.len() - feasible.len()));
    let summary = summary_line(feasible.len(), all, &rejected, absent.as_ref());
    Ok(KubeSchedulerView { summary, prefilter: None, rejected, feasible })
}

/// The first of kube-scheduler's plugins to reject the node in the pass that decides it, and its
/// reasons; `None` when they all pass.
fn first_rejection(
    plan: &Plan,
    prepared: &Prepared,
    node: &crate::cluster::NodeInfo,
    nominated: &[Arc<crate::cluster::PodInfo>],
) -> Result<Option<(String, Vec<String>)>, MissingState> {
    let run = |p: &Prepared, n: &crate::cluster::NodeInfo| -> Result<Option<(String, Vec<String>)>, MissingState> {
        let mut reasons = Vec::new();
        let mut first: Option<String> = None;
        run_predicates_observed(plan, p, n, &mut reasons, |_, predicate, failed| {
            if !failed.is_empty() && first.is_none() {
                first = Some(predicate.name().to_string());
            }
        })?;
        Ok(first.map(|by| (by, reasons.iter().map(|r| r.message.to_string()).collect())))
    };
    let passed = |r: &Result<Option<(String, Vec<String>)>, MissingState>| matches!(r, Ok(None));
    double_pass(prepared, node, nominated, run, passed).deciding()
}

fn prefilter_rejected(status: NodeStatus, all: usize) -> KubeSchedulerView {
    let summary = format!("0/{all} nodes are available: {}.", status.reasons.join(", "));
    KubeSchedulerView { summary, prefilter: Some(status), rejected: Vec::new(), feasible: Vec::new() }
}

/// `FitError.Error()`'s histogram: every reason of every rejected node counted, the nodes left
/// out by a PreFilterResult counted under `absent`'s reason, the `"<count> <reason>"` strings
/// sorted as strings (so "10 ..." sorts before "2 ...").
fn summary_line(feasible: usize, all: usize, rejected: &[NodeStatus], absent: Option<&(String, usize)>) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for status in rejected {
        for reason in &status.reasons {
            *counts.entry(reason.as_str()).or_default() += 1;
        }
    }
    if let Some((reason, n)) = absent.filter(|(_, n)| *n > 0) {
        *counts.entry(reason.as_str()).or_default() += n;
    }
    let mut histogram: Vec<String> = counts.into_iter().map(|(reason, n)| format!("{n} {reason}")).collect();
    histogram.sort();
    let head = format!("{feasible}/{all} nodes are available");
    if histogram.is_empty() {
        format!("{head}.")
    } else {
        format!("{head}: {}.", histogram.join(", "))
    }
}
