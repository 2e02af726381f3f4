//! The explanation of one pod: what the tables print, and, serialised, the `--format json` output
//! (documented in `docs/explain-json.md`; field names and meanings are stable, fields are only
//! added). Every node of the cluster is evaluated, so the summary, the failure groups, the hints
//! and the ranking are the cluster's even when only some nodes are shown in full (`--node`).

use std::sync::Arc;

use serde::Serialize;

use crate::explain::failures::{group, FailureGroup};
use crate::explain::hints::{hints, Hint};
use crate::explain::kube_scheduler::{self, KubeSchedulerConfig, KubeSchedulerView};
use crate::explain::node_facts::NodeFacts;
use crate::explain::ExplainError;
use predicate_engine::cluster::objects::Pod;
use predicate_engine::cluster::{NodeInfo, PodInfo, Snapshot};
use predicate_engine::engine::fits::{double_pass, nominated_to_add, run_predicates_observed, Passes};
use predicate_engine::engine::prioritize::{breakdown, combine};
use predicate_engine::engine::{CancelFlag, Evaluator, OrderingMode, Plan, Prepared};
use predicate_engine::framework::{Candidate, ClusterView, MissingState, PodContext, Reason};

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// `namespace/name`.
    pub pod: String,
    /// The plan's predicates, in the order they run.
    pub predicates: Vec<String>,
    /// Under dynamic ordering, the order `/filter` runs them in now (explain itself runs every
    /// predicate, in plan order); absent under static ordering, where that is `predicates`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filter_order: Option<Vec<String>>,
    /// One entry per node, by name; only the nodes asked for in full when some were (`--node`).
    pub nodes: Vec<NodeReport>,
    /// The nodes of the cluster the pod fits, by name.
    pub feasible: Vec<String>,
    /// What kube-scheduler's FailedScheduling event says, up to its PostFilter plugins:
    /// `0/6 nodes are available: 2 Insufficient cpu, ....`, each node counted once
    /// ([`KubeSchedulerView::summary`]).
    pub summary: String,
    /// How kube-scheduler's own filters and then the extender decide each node.
    pub kube_scheduler: KubeSchedulerView,
    /// The priorities' scores of the feasible nodes; `null` when the plan has no priorities.
    pub scores: Option<Scores>,
    /// The failing nodes grouped by the predicate and reason that decided them, largest first.
    pub failures: Vec<FailureGroup>,
    /// What would change the answer, for the largest groups where the data says it.
    pub hints: Vec<Hint>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct NodeReport {
    pub node: String,
    pub fits: bool,
    /// The reasons of the pass that decided, as `/filter` reports them.
    pub reasons: Vec<String>,
    /// The nominated pods (`namespace/name`) pass 1 adds; empty: a single pass.
    pub nominated_pods: Vec<String>,
    /// Every predicate of the first (or only) pass.
    pub pass1: Vec<PredicateVerdict>,
    /// Every predicate of pass 2, on the node without the nominated pods; `null` when there is a
    /// single pass or pass 1 failed (pass 2 then does not run).
    pub pass2: Option<Vec<PredicateVerdict>>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct PredicateVerdict {
    pub predicate: String,
    pub fits: bool,
    /// The predicate's reasons: serialised as their messages; read by their causes.
    #[serde(serialize_with = "serialize_messages")]
    pub reasons: Vec<Reason>,
}

impl PredicateVerdict {
    /// The reasons' messages, joined with `separator`, as a person reads them.
    pub fn messages(&self, separator: &str) -> String {
        self.reasons.iter().map(|r| r.message.as_ref()).collect::<Vec<_>>().join(separator)
    }
}

/// Reasons as their messages: what the JSON output has always had.
fn serialize_messages<S: serde::Serializer>(reasons: &[Reason], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(reasons.iter().map(|r| r.message.as_ref()))
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Scores {
    /// The plan's priorities and weights, in order.
    pub priorities: Vec<PriorityWeight>,
    /// One entry per feasible node, in the order of `feasible`.
    pub nodes: Vec<NodeScores>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct PriorityWeight {
    pub name: String,
    pub weight: i64,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct NodeScores {
    pub node: String,
    /// What `/prioritize` answers (`engine::combine`): the weighted mean rounded to nearest, or 0
    /// on a node NodePreferAvoidPodsPriority vetoes; 0..10.
    pub score: i64,
    /// 1 for the best: the highest score; on equal scores, the larger sum of `weighted` (the score
    /// before the rounding), then the name.
    pub rank: usize,
    /// Per priority, in the order of `priorities`.
    pub priorities: Vec<PriorityScore>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct PriorityScore {
    pub name: String,
    /// 0..10, normalised over the feasible nodes.
    pub score: i64,
    /// weight x score: this priority's contribution to the sum.
    pub weighted: i64,
}

/// One pass: the verdict of each predicate that ran, all its reasons, and, when it failed, what
/// the hints need of the node as this pass saw it.
struct Pass {
    verdicts: Vec<PredicateVerdict>,
    reasons: Vec<Reason>,
    facts: NodeFacts,
}

/// A node as `build` evaluated it: the node, its report, and the facts of the deciding pass.
#[derive(Debug, Clone)]
pub struct EvaluatedNode {
    pub node: NodeInfo,
    pub report: NodeReport,
    pub facts: NodeFacts,
}

fn messages(reasons: &[Reason]) -> Vec<String> {
    reasons.iter().map(|r| r.message.to_string()).collect()
}

/// Runs every predicate of `plan` on `node` through the engine's double pass, recording each.
pub fn explain_node(
    plan: &Plan,
    pod: &Prepared,
    node: &NodeInfo,
    nominated: &[Arc<PodInfo>],
) -> Result<EvaluatedNode, MissingState> {
    let run = |ctx: &Prepared, node: &NodeInfo| -> Result<Pass, MissingState> {
        let mut reasons = Vec::new();
        let mut verdicts = Vec::new();
        run_predicates_observed(plan, ctx, node, &mut reasons, |_, p, r| {
            verdicts.push(PredicateVerdict { predicate: p.name().to_string(), fits: r.is_empty(), reasons: r.to_vec() })
        })?;
        let facts = if reasons.is_empty() { NodeFacts::default() } else { NodeFacts::of(&ctx.pod, node) };
        Ok(Pass { verdicts, reasons, facts })
    };
    let passes = double_pass(pod, node, nominated, run, |p| p.as_ref().is_ok_and(|p| p.reasons.is_empty()));
    let passes = match passes {
        Passes::Single(p) => Passes::Single(p?),
        Passes::Double { with_nominated, without } => {
            Passes::Double { with_nominated: with_nominated?, without: without.transpose()? }
        }
    };
    let nominated_pods = match &passes {
        Passes::Single(_) => Vec::new(),
        Passes::Double { .. } => nominated_to_add(pod, nominated).map(|p| p.pod.key()).collect(),
    };
    let (pass1, pass2, deciding, facts) = match passes {
        Passes::Single(p) => (p.verdicts, None, p.reasons, p.facts),
        Passes::Double { with_nominated, without: None } => {
            (with_nominated.verdicts, None, with_nominated.reasons, with_nominated.facts)
        }
        Passes::Double { with_nominated, without: Some(without) } => {
            (with_nominated.verdicts, Some(without.verdicts), without.reasons, without.facts)
        }
    };
    let report = NodeReport {
        node: node.name().to_string(),
        fits: deciding.is_empty(),
        reasons: messages(&deciding),
        nominated_pods,
        pass1,
        pass2,
    };
    Ok(EvaluatedNode { node: node.clone(), report, facts })
}

/// What to explain a pod against: the plan in force, the cluster, and kube-scheduler's filters in
/// front of the extender.
#[derive(Clone, Copy)]
pub struct Against<'a> {
    pub plan: &'a Plan,
    pub snapshot: &'a Snapshot,
    pub kube_scheduler: &'a KubeSchedulerConfig,
}

impl<'a> Against<'a> {
    /// Against the shipped configuration (tests and tools).
    pub fn shipped(plan: &'a Plan, snapshot: &'a Snapshot) -> Against<'a> {
        static SHIPPED: KubeSchedulerConfig = KubeSchedulerConfig::shipped();
        Against { plan, snapshot, kube_scheduler: &SHIPPED }
    }
}

/// Explains `pod` on every node of the snapshot, with `alwaysCheckAllPredicates` on, groups the
/// failures, looks for hints and scores the feasible nodes, on `evaluator`; and says what
/// kube-scheduler reports (`kube_scheduler`). `detail` names the nodes `nodes` keeps (all of them
/// when empty); each must exist.
pub fn build(
    against: Against<'_>,
    pod: Pod,
    detail: &[String],
    evaluator: &Evaluator,
    cancel: &CancelFlag,
) -> Result<Report, ExplainError> {
    let Against { plan, snapshot, kube_scheduler: config } = against;
    if let Some(unknown) = detail.iter().find(|n| !snapshot.has_node(n)) {
        return Err(ExplainError::UnknownNode(unknown.clone()));
    }
    let kube_scheduler = kube_scheduler::evaluate(config.profile_for(&pod)?, plan, &pod, snapshot, evaluator, cancel)?;
    let filter_order = (plan.ordering.mode() == OrderingMode::Dynamic)
        .then(|| plan.ordered_predicate_names().into_iter().map(str::to_string).collect());
    let plan = Plan { always_check_all: true, ..plan.clone() };
    let names: Vec<String> = snapshot.node_names().into_iter().map(str::to_string).collect();
    let candidates: Vec<Candidate> = names.into_iter().map(|n| Candidate::by_name(snapshot, n)).collect();
    let view = ClusterView::of(snapshot);

    let ctx = Prepared::new(&plan, pod.clone(), &view);
    let results = evaluator.map(&candidates, cancel, |c| match c {
        Candidate::Known(node, nominated) => explain_node(&plan, &ctx, node, nominated).map(Some),
        Candidate::Unknown(_) => Ok(None),
    })?;
    let mut evaluated: Vec<EvaluatedNode> = Vec::with_capacity(results.len());
    let mut feasible_candidates: Vec<Candidate> = Vec::new();
    for (candidate, result) in candidates.into_iter().zip(results) {
        let Some(e) = result? else { continue };
        if e.report.fits {
            feasible_candidates.push(candidate);
        }
        evaluated.push(e);
    }
    let feasible: Vec<String> = feasible_candidates.iter().map(|c| c.name().to_string()).collect();
    let failures = group(evaluated.iter().map(|e| &e.report));
    let hints = hints(&ctx.pod, &evaluated, &failures);

    let scores = if plan.priorities.is_empty() {
        None
    } else {
        // Scored as `/prioritize` scores.
        let scoring = PodContext::for_version(pod.clone(), snapshot.scheduler_version());
        let per_priority = breakdown(evaluator, &plan, &scoring, &view, &feasible_candidates, cancel)?;
        let combined = combine(&plan, &per_priority, feasible_candidates.len());
        let sums: Vec<i64> = (0..feasible_candidates.len())
            .map(|i| {
                plan.priorities
                    .iter()
                    .zip(&per_priority)
                    .map(|(w, s)| w.weight * s.get(i).copied().flatten().unwrap_or(0))
                    .sum()
            })
            .collect();
        let ranks = ranks(&combined, &sums);
        let nodes = feasible_candidates
            .iter()
            .enumerate()
            .map(|(i, c)| NodeScores {
                node: c.name().to_string(),
                score: combined[i],
                rank: ranks[i],
                priorities: plan
                    .priorities
                    .iter()
                    .zip(&per_priority)
                    .map(|(w, scores)| {
                        let score = scores.get(i).copied().flatten().unwrap_or(0);
                        PriorityScore { name: w.priority.name().to_string(), score, weighted: w.weight * score }
                    })
                    .collect(),
            })
            .collect();
        let priorities = plan
            .priorities
            .iter()
            .map(|w| PriorityWeight { name: w.priority.name().to_string(), weight: w.weight })
            .collect();
        Some(Scores { priorities, nodes })
    };

    let nodes =
        evaluated.into_iter().map(|e| e.report).filter(|n| detail.is_empty() || detail.contains(&n.node)).collect();
    Ok(Report {
        pod: pod.key(),
        predicates: plan.predicates.iter().map(|p| p.name().to_string()).collect(),
        filter_order,
        nodes,
        feasible,
        summary: kube_scheduler.summary.clone(),
        kube_scheduler,
        scores,
        failures,
        hints,
    })
}

/// The rank of each candidate (in name order) by score, then by the weighted sum before rounding,
/// then by name: 1 for the best.
fn ranks(scores: &[i64], sums: &[i64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[b].cmp(&scores[a]).then(sums[b].cmp(&sums[a])).then(a.cmp(&b)));
    let mut ranks = vec![0; scores.len()];
    for (rank, i) in order.into_iter().enumerate() {
        ranks[i] = rank + 1;
    }
    ranks
}

#[cfg(test)]
mod tests {
    use super::*;

    use predicate_engine::testing::{NodeBuilder, PodBuilder};

    fn plan(names: &[&str]) -> Plan {
        Plan::of_predicates(names.iter().map(|n| predicate_engine::registry::predicate(n).unwrap()).collect())
    }

    fn run(plan: &Plan, pod: Pod, snapshot: &Snapshot, detail: &[&str]) -> Result<Report, ExplainError> {
        let detail: Vec<String> = detail.iter().map(|n| n.to_string()).collect();
        build(Against::shipped(plan, snapshot), pod, &detail, &Evaluator::new(2).unwrap(), &CancelFlag::new())
    }

    #[test]
    fn every_predicate_is_reported_even_after_a_failure() {
        let snapshot =
            Snapshot::build([NodeBuilder::new("n1").unschedulable().taint("a", "", "NoSchedule").build()], []);
        let plan = plan(&["CheckNodeUnschedulable", "PodToleratesNodeTaints", "CheckNodeCondition"]);
        let report = run(&plan, PodBuilder::new("p").build(), &snapshot, &[]).unwrap();
        let n = &report.nodes[0];
        let verdicts: Vec<_> = n.pass1.iter().map(|v| (v.predicate.as_str(), v.fits)).collect();
        // CheckNodeCondition refuses a cordoned node too (1.12's CheckNodeConditionPredicate).
        assert_eq!(
            verdicts,
            [("CheckNodeUnschedulable", false), ("PodToleratesNodeTaints", false), ("CheckNodeCondition", false)]
        );
        assert_eq!(n.reasons.len(), 3);
        assert!(!n.fits && n.pass2.is_none() && n.nominated_pods.is_empty());
        assert!(report.scores.is_none(), "no priorities in the plan");
        // kube-scheduler counts the node once, under its first plugin to reject it:
        // NodeUnschedulable, before TaintToleration.
        assert_eq!(report.summary, "0/1 nodes are available: 1 node(s) were unschedulable.");
        assert_eq!(report.kube_scheduler.rejected[0].by, "NodeUnschedulable");
    }

    #[test]
    fn both_passes_are_kept_when_nominated_pods_are_added() {
        let nodes = [NodeBuilder::new("n1").alloc(&[("cpu", "2")]).build()];
        let vip = PodBuilder::new("vip").nominated("n1").priority(10).req(&[("cpu", "1")]).build();
        let snapshot = Snapshot::build(nodes, [vip]);
        let plan = plan(&["PodFitsResources"]);
        let fits = run(&plan, PodBuilder::new("p").req(&[("cpu", "1")]).build(), &snapshot, &[]).unwrap();
        let n = &fits.nodes[0];
        assert_eq!(n.nominated_pods, ["default/vip"]);
        assert!(n.fits && n.pass2.is_some());
        let big = run(&plan, PodBuilder::new("p").req(&[("cpu", "1500m")]).build(), &snapshot, &[]).unwrap();
        let n = &big.nodes[0];
        assert!(!n.fits && n.pass2.is_none(), "pass 1 failed: no pass 2");
        assert_eq!(n.reasons, ["Insufficient cpu"]);
    }

    #[test]
    fn named_nodes_are_kept_in_full_while_the_rest_still_counts() {
        let snapshot = Snapshot::build(
            [
                NodeBuilder::new("a").build(),
                NodeBuilder::new("b").build(),
                NodeBuilder::new("c").unschedulable().build(),
            ],
            [],
        );
        let plan = plan(&["CheckNodeUnschedulable"]);
        let report = run(&plan, PodBuilder::new("p").build(), &snapshot, &["b"]).unwrap();
        let kept: Vec<&str> = report.nodes.iter().map(|n| n.node.as_str()).collect();
        assert_eq!(kept, ["b"]);
        assert_eq!(report.feasible, ["a", "b"], "the cluster's feasible nodes, not only the named ones");
        assert_eq!(report.summary, "2/3 nodes are available: 1 node(s) were unschedulable.");
        assert_eq!(report.failures.len(), 1);
        let e = run(&plan, PodBuilder::new("p").build(), &snapshot, &["b", "z"]).unwrap_err();
        assert_eq!(e.to_string(), "--node z: the cluster has no such node");
    }

    #[test]
    fn feasible_nodes_are_ranked_by_score_then_name() {
        assert_eq!(ranks(&[5, 9, 5, 10, 0], &[50, 90, 50, 100, 0]), [3, 2, 4, 1, 5]);
        assert_eq!(ranks(&[5, 5, 5], &[50, 59, 50]), [2, 1, 3], "equal scores: the larger sum, then the name");
        assert_eq!(ranks(&[], &[]), Vec::<usize>::new());
        // LeastRequested: the emptier node scores higher, so it ranks first whatever its name.
        let snapshot = Snapshot::build(
            [NodeBuilder::new("a").build(), NodeBuilder::new("b").build()],
            [PodBuilder::new("busy").node("a").req(&[("cpu", "3"), ("memory", "12Gi")]).build()],
        );
        let mut plan = plan(&[]);
        plan.priorities = Plan::default_plan()
            .priorities
            .into_iter()
            .filter(|w| w.priority.name() == "LeastRequestedPriority")
            .collect();
        let report = run(&plan, PodBuilder::new("p").req(&[("cpu", "100m")]).build(), &snapshot, &[]).unwrap();
        let scores = report.scores.unwrap();
        let ranked: Vec<(&str, usize)> = scores.nodes.iter().map(|n| (n.node.as_str(), n.rank)).collect();
        assert_eq!(ranked, [("a", 2), ("b", 1)]);
    }

    /// ResourceLimitsPriority and PodFitsResources' ignored resources, from a Policy, and the
    /// SCORE row `/prioritize` would answer (the same combine).
    #[test]
    fn a_policy_with_resource_limits_and_ignored_resources() {
        let plan = predicate_engine::policy::parse(
            "policy.json",
            r#"{"kind":"Policy","apiVersion":"v1",
                "predicates":[{"name":"PodFitsResources","argument":{"ignoredResources":["example.com/foo"]}}],
                "priorities":[{"name":"ResourceLimitsPriority","weight":2},{"name":"EqualPriority","weight":1}]}"#
                .as_bytes(),
            predicate_engine::policy::Overrides::default(),
        )
        .unwrap();
        let snapshot = Snapshot::build(
            [
                NodeBuilder::new("big").alloc(&[("cpu", "8")]).build(),
                NodeBuilder::new("small").alloc(&[("cpu", "1")]).build(),
            ],
            [],
        );
        let pod: Pod = serde_json::from_value(serde_json::json!({"metadata": {"name": "p"}, "spec": {"containers": [
            {"name": "c", "resources": {"requests": {"example.com/foo": "1"}, "limits": {"cpu": "2", "memory": "64Gi"}}}]}}))
        .unwrap();
        let report = run(&plan, pod, &snapshot, &[]).unwrap();
        assert_eq!(report.feasible, ["big", "small"], "example.com/foo is not checked");
        let scores = report.scores.unwrap();
        let limits: Vec<i64> = scores.nodes.iter().map(|n| n.priorities[0].score).collect();
        assert_eq!(limits, [1, 0], "only big's 8 cpu cover the 2-cpu limit; 64Gi fits neither");
        // big: (2*1 + 1*1) / 3 = 1; small: (0 + 1) / 3 = 0.33 -> 0.
        let totals: Vec<i64> = scores.nodes.iter().map(|n| n.score).collect();
        assert_eq!(totals, [1, 0]);
    }
}
