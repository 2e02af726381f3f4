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
//!   extender joins its reasons with `, `), as `findNodesThatPassExtenders` records it; or, with
//!   the engine inside kube-scheduler (the `PredicateEngine` plugin, docs/in-process.md), what the
//!   plugin answered, the same string.
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

use predicate_engine::cluster::objects::Pod;
use predicate_engine::cluster::Snapshot;
use predicate_engine::engine::fits::{double_pass, run_predicates_observed};
use predicate_engine::engine::{filter_unobserved, CancelFlag, EvaluationError, Evaluator, Plan, Prepared, Verdict};
use predicate_engine::framework::{AnyPredicate, Candidate, ClusterView, MissingState, Reason};

pub use profile::{ConfigError, KubeSchedulerConfig, Plugin, Profile};
use stand_ins::{prefilter_failure, prefilter_nodes, StandIn};

/// kube-scheduler's whole message when the cluster has no node (`ErrNoNodesAvailable`,
/// `pkg/scheduler/scheduler.go`, returned by `schedulePod` in `schedule_one.go`).
pub const NO_NODES: &str = "no nodes available to schedule pods";

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
    predicate_engine::framework::reason::joined(reasons).into_owned()
}

/// kube-scheduler's view of `pod` on `snapshot`, with its plugins as `profile` runs them, in the
/// order of the minor the snapshot is counted for, and the extender as `extender` (the Policy in
/// force) answers.
pub fn evaluate(
    profile: &Profile,
    extender: &Plan,
    pod: &Pod,
    snapshot: &Snapshot,
    evaluator: &Evaluator,
    cancel: &CancelFlag,
) -> Result<KubeSchedulerView, EvaluationError> {
    let version = snapshot.scheduler_version();
    let plugins = profile.filters(version);
    let stand_ins: Vec<Arc<dyn AnyPredicate>> =
        plugins.iter().filter_map(|p| StandIn::new(*p)).map(|s| Arc::new(s) as Arc<dyn AnyPredicate>).collect();
    let plan = Plan::of_predicates(stand_ins);
    let view = ClusterView::of(snapshot);
    let prepared = Prepared::new(&plan, pod.clone(), &view);
    let all = snapshot.node_count();
    if all == 0 {
        // `schedulePod` gives up before any plugin runs (`ErrNoNodesAvailable`).
        let summary = NO_NODES.to_string();
        return Ok(KubeSchedulerView { summary, prefilter: None, rejected: Vec::new(), feasible: Vec::new() });
    }

    // PreFilter, in the profile's order: a rejection ends the cycle; a PreFilterResult narrows
    // the nodes (`RunPreFilterPlugins`).
    let mut narrowed: Option<(Vec<String>, Vec<&'static str>)> = None;
    for plugin in &profile.pre_filters(version) {
        let rejection =
            |message: String| NodeStatus { node: String::new(), by: plugin.name().to_string(), reasons: vec![message] };
        if let Some(message) = prefilter_failure(*plugin, &prepared.pod, &view) {
            return Ok(prefilter_rejected(rejection(message), all));
        }
        let Some(names) = prefilter_nodes(*plugin, &prepared.pod, version) else { continue };
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
        let filtered = filter_unobserved(evaluator, extender, &asked, &passed, cancel, false)?;
        for (candidate, verdict) in passed.iter().zip(filtered.verdicts) {
            match verdict {
                Verdict::Fails(reasons) => rejected.push(NodeStatus {
                    node: candidate.name().to_string(),
                    by: profile.engine_name().to_string(),
                    reasons: vec![extender_reason(&reasons)],
                }),
                Verdict::Fits => feasible.push(candidate.name().to_string()),
                // `passed` holds nodes the model knows only.
                Verdict::Unknown => {}
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
    node: &predicate_engine::cluster::NodeInfo,
    nominated: &[Arc<predicate_engine::cluster::PodInfo>],
) -> Result<Option<(String, Vec<String>)>, MissingState> {
    let run = |p: &Prepared,
               n: &predicate_engine::cluster::NodeInfo|
     -> Result<Option<(String, Vec<String>)>, MissingState> {
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

#[cfg(test)]
mod tests {
    use super::*;

    use predicate_engine::cluster::SchedulerVersion;
    use predicate_engine::testing::{field_term, requirement, NodeBuilder, PodBuilder};

    fn status(node: &str, reason: &str) -> NodeStatus {
        NodeStatus { node: node.to_string(), by: "P".to_string(), reasons: vec![reason.to_string()] }
    }

    /// `FitError.Error()` sorts the `"<count> <reason>"` strings (`pkg/scheduler/framework/types.go`),
    /// so a count of 10 comes before a count of 2.
    #[test]
    fn the_histogram_is_sorted_as_strings() {
        let mut rejected: Vec<NodeStatus> = (0..10).map(|i| status(&format!("z{i}"), "z")).collect();
        rejected.extend([status("a0", "a"), status("a1", "a")]);
        assert_eq!(summary_line(0, 12, &rejected, None), "0/12 nodes are available: 10 z, 2 a.");
        let absent = ("node(s) didn't satisfy plugin(s) [NodeName]".to_string(), 3);
        assert_eq!(
            summary_line(0, 5, &rejected[..2], Some(&absent)),
            "0/5 nodes are available: 2 z, 3 node(s) didn't satisfy plugin(s) [NodeName]."
        );
        assert_eq!(summary_line(3, 3, &[], None), "3/3 nodes are available.");
        assert_eq!(summary_line(2, 3, &[], Some(&("left out".to_string(), 0))), "2/3 nodes are available.");
    }

    fn view(
        version: SchedulerVersion,
        pod: Pod,
        nodes: Vec<predicate_engine::cluster::objects::Node>,
    ) -> KubeSchedulerView {
        let snapshot = Snapshot::build_for(version, nodes, []);
        let evaluator = Evaluator::new(2).unwrap();
        evaluate(&Profile::DEFAULT, &Plan::default(), &pod, &snapshot, &evaluator, &CancelFlag::new()).unwrap()
    }

    fn three_nodes() -> Vec<predicate_engine::cluster::objects::Node> {
        vec![
            NodeBuilder::new("n1").build(),
            NodeBuilder::new("n2").unschedulable().build(),
            NodeBuilder::new("n3").build(),
        ]
    }

    #[test]
    fn an_empty_cluster_has_no_nodes_available() {
        let view = view(SchedulerVersion::V1_37, PodBuilder::new("p").build(), Vec::new());
        assert_eq!(view.summary, "no nodes available to schedule pods");
        assert!(view.rejected.is_empty() && view.feasible.is_empty() && view.prefilter.is_none());
    }

    /// NodeName's PreFilter (1.37, `nodename/node_name.go`) leaves the other nodes out, counted
    /// under `SetAbsentNodesStatus`'s reason; before it, its Filter rejects them one by one.
    #[test]
    fn a_pod_with_a_node_name_narrows_the_nodes_from_1_37() {
        let pod = PodBuilder::new("p").node("n2").build();
        let newest = view(SchedulerVersion::V1_37, pod.clone(), three_nodes());
        assert_eq!(
            newest.summary,
            "0/3 nodes are available: 1 node(s) were unschedulable, 2 node(s) didn't satisfy plugin(s) [NodeName]."
        );
        assert_eq!(newest.rejected.iter().map(|s| s.node.as_str()).collect::<Vec<_>>(), ["n2"]);
        let older = view(SchedulerVersion::V1_36, pod, three_nodes());
        assert_eq!(
            older.summary,
            "0/3 nodes are available: 1 node(s) were unschedulable, 2 node(s) didn't match the requested node name."
        );
        assert_eq!(older.rejected.len(), 3);
    }

    /// NodeAffinity's PreFilter narrows to the `metadata.name` fields on every minor
    /// (`nodeaffinity/node_affinity.go`).
    #[test]
    fn match_fields_on_the_name_narrow_the_nodes() {
        let pod =
            PodBuilder::new("p").node_affinity_term(field_term(vec![requirement("metadata.name", "In", &["n1"])]));
        for version in SchedulerVersion::ALL {
            let view = view(version, pod.clone().build(), three_nodes());
            assert_eq!(view.summary, "1/3 nodes are available: 2 node(s) didn't satisfy plugin(s) [NodeAffinity].");
            assert_eq!(view.feasible, ["n1"]);
        }
    }

    /// Two PreFilterResults with nothing in common end the cycle with the framework's own status
    /// (`RunPreFilterPlugins`, `pkg/scheduler/framework/runtime/framework.go`); a term whose name
    /// requirements conflict is NodeAffinity's own rejection (`errReasonConflict`).
    #[test]
    fn prefilter_results_that_conflict_reject_the_pod() {
        let elsewhere = field_term(vec![requirement("metadata.name", "In", &["n3"])]);
        let pod = PodBuilder::new("p").node("n1").node_affinity_term(elsewhere).build();
        let view37 = view(SchedulerVersion::V1_37, pod, three_nodes());
        assert_eq!(
            view37.summary,
            "0/3 nodes are available: node(s) didn't satisfy plugin(s) [NodeAffinity NodeName] simultaneously."
        );
        assert_eq!(view37.prefilter.as_ref().map(|s| s.by.as_str()), Some(""));

        let conflict =
            field_term(vec![requirement("metadata.name", "In", &["n1"]), requirement("metadata.name", "In", &["n3"])]);
        let pod = PodBuilder::new("p").node_affinity_term(conflict).build();
        let view = view(SchedulerVersion::V1_36, pod, three_nodes());
        assert_eq!(view.summary, "0/3 nodes are available: pod affinity terms conflict.");
        assert_eq!(view.prefilter.map(|s| s.by), Some("NodeAffinity".to_string()));
    }
}
