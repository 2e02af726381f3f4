//! The explanation of one pod: what the table prints, and, serialised, the `--format json` output
//! (documented in `docs/explain-json.md`; field names and meanings are stable).

use std::sync::Arc;

use serde::Serialize;

use crate::cluster::objects::Pod;
use crate::cluster::{NodeInfo, PodInfo, Snapshot};
use crate::engine::fits::{double_pass, nominated_to_add, run_predicates_observed, Passes};
use crate::engine::prioritize::{breakdown, combine};
use crate::engine::{CancelFlag, Candidate, ClusterView, Evaluator, PodContext};
use crate::explain::summary::summary_line;
use crate::explain::ExplainError;
use crate::policy::Plan;
use crate::predicates::Reason;

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// `namespace/name`.
    pub pod: String,
    /// The plan's predicates, in the order they run.
    pub predicates: Vec<String>,
    /// One entry per node, by name.
    pub nodes: Vec<NodeReport>,
    /// The nodes the pod fits, by name.
    pub feasible: Vec<String>,
    /// kube-scheduler's summary: `0/6 nodes are available: 2 Insufficient cpu, ....`
    pub summary: String,
    /// The priorities' scores of the feasible nodes; `null` when the plan has no priorities.
    pub scores: Option<Scores>,
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
    pub reasons: Vec<String>,
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

/// One pass: the verdict of each predicate that ran, and all its reasons.
struct Pass {
    verdicts: Vec<PredicateVerdict>,
    reasons: Vec<Reason>,
}

fn messages(reasons: &[Reason]) -> Vec<String> {
    reasons.iter().map(|r| r.message.to_string()).collect()
}

/// Runs every predicate of `plan` on `node` through the engine's double pass, recording each.
fn explain_node(plan: &Plan, pod: &PodContext, node: &NodeInfo, nominated: &[Arc<PodInfo>]) -> NodeReport {
    let run = |ctx: &PodContext, node: &NodeInfo| {
        let mut reasons = Vec::new();
        let mut verdicts = Vec::new();
        run_predicates_observed(plan, ctx, node, &mut reasons, |p, r| {
            verdicts.push(PredicateVerdict {
                predicate: p.name().to_string(),
                fits: r.is_empty(),
                reasons: messages(r),
            })
        });
        Pass { verdicts, reasons }
    };
    let passes = double_pass(pod, node, nominated, run, |p| p.reasons.is_empty());
    let nominated_pods = match &passes {
        Passes::Single(_) => Vec::new(),
        Passes::Double { .. } => nominated_to_add(pod, nominated).map(|p| p.pod.key()).collect(),
    };
    let (pass1, pass2, deciding) = match passes {
        Passes::Single(p) => (p.verdicts, None, p.reasons),
        Passes::Double { with_nominated, without: None } => (with_nominated.verdicts, None, with_nominated.reasons),
        Passes::Double { with_nominated, without: Some(without) } => {
            (with_nominated.verdicts, Some(without.verdicts), without.reasons)
        }
    };
    NodeReport {
        node: node.name().to_string(),
        fits: deciding.is_empty(),
        reasons: messages(&deciding),
        nominated_pods,
        pass1,
        pass2,
    }
}

/// Explains `pod` on every node of the snapshot (or only `only`), with `alwaysCheckAllPredicates`
/// on, and scores the feasible nodes.
pub fn build(plan: &Plan, pod: Pod, snapshot: &Snapshot, only: Option<&str>) -> Result<Report, ExplainError> {
    let plan = Plan { always_check_all: true, ..plan.clone() };
    let mut names: Vec<String> = snapshot.node_names().into_iter().map(str::to_string).collect();
    names.sort();
    if let Some(only) = only {
        if !snapshot.has_node(only) {
            return Err(ExplainError::UnknownNode(only.to_string()));
        }
        names = vec![only.to_string()];
    }
    let candidates: Vec<Candidate> = names.into_iter().map(|n| Candidate::by_name(snapshot, n)).collect();
    let view = ClusterView::of(snapshot);
    let evaluator = Evaluator::new(4).map_err(|e| ExplainError::Evaluator(e.to_string()))?;
    let cancel = CancelFlag::new();
    let cancelled = || ExplainError::Evaluator("the evaluation was cancelled".to_string());

    let ctx = PodContext::for_request(pod.clone(), &view, &plan);
    let nodes: Vec<NodeReport> = evaluator
        .map(&candidates, &cancel, |c| match c {
            Candidate::Known(node, nominated) => Some(explain_node(&plan, &ctx, node, nominated)),
            Candidate::Unknown(_) => None,
        })
        .map_err(|_| cancelled())?
        .into_iter()
        .flatten()
        .collect();
    let feasible: Vec<String> = nodes.iter().filter(|n| n.fits).map(|n| n.node.clone()).collect();
    let summary = summary_line(&nodes);

    let scores = if plan.priorities.is_empty() {
        None
    } else {
        let feasible_candidates: Vec<Candidate> =
            candidates.into_iter().filter(|c| feasible.iter().any(|f| f == c.name())).collect();
        // Scored as `/prioritize` scores: the pod alone, with the volume objects.
        let mut scoring = PodContext::new(pod.clone());
        scoring.volumes = snapshot.volumes().clone();
        let per_priority =
            breakdown(&evaluator, &plan, &scoring, &view, &feasible_candidates, &cancel).map_err(|_| cancelled())?;
        let combined = combine(&plan, &per_priority, feasible_candidates.len());
        let nodes = feasible_candidates
            .iter()
            .enumerate()
            .map(|(i, c)| NodeScores {
                node: c.name().to_string(),
                score: combined[i],
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

    Ok(Report {
        pod: pod.key(),
        predicates: plan.predicates.iter().map(|p| p.name().to_string()).collect(),
        nodes,
        feasible,
        summary,
        scores,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predicates::Kind;
    use crate::testing::{NodeBuilder, PodBuilder};

    fn plan(kinds: &[Kind]) -> Plan {
        Plan { predicates: kinds.iter().filter_map(|k| k.instantiate()).collect(), ..Plan::default() }
    }

    #[test]
    fn every_predicate_is_reported_even_after_a_failure() {
        let snapshot =
            Snapshot::build([NodeBuilder::new("n1").unschedulable().taint("a", "", "NoSchedule").build()], []);
        let plan = plan(&[Kind::CheckNodeUnschedulable, Kind::PodToleratesNodeTaints, Kind::CheckNodeCondition]);
        let report = build(&plan, PodBuilder::new("p").build(), &snapshot, None).unwrap();
        let n = &report.nodes[0];
        let verdicts: Vec<_> = n.pass1.iter().map(|v| (v.predicate.as_str(), v.fits)).collect();
        assert_eq!(
            verdicts,
            [("CheckNodeUnschedulable", false), ("PodToleratesNodeTaints", false), ("CheckNodeCondition", true)]
        );
        assert_eq!(n.reasons.len(), 2);
        assert!(!n.fits && n.pass2.is_none() && n.nominated_pods.is_empty());
        assert!(report.scores.is_none(), "no priorities in the plan");
        assert_eq!(
            report.summary,
            "0/1 nodes are available: 1 node(s) had taints that the pod didn't tolerate, 1 node(s) were unschedulable."
        );
    }

    #[test]
    fn both_passes_are_kept_when_nominated_pods_are_added() {
        let nodes = [NodeBuilder::new("n1").alloc(&[("cpu", "2")]).build()];
        let vip = PodBuilder::new("vip").nominated("n1").priority(10).req(&[("cpu", "1")]).build();
        let snapshot = Snapshot::build(nodes, [vip]);
        let plan = plan(&[Kind::PodFitsResources]);
        let fits = build(&plan, PodBuilder::new("p").req(&[("cpu", "1")]).build(), &snapshot, None).unwrap();
        let n = &fits.nodes[0];
        assert_eq!(n.nominated_pods, ["default/vip"]);
        assert!(n.fits && n.pass2.is_some());
        let big = build(&plan, PodBuilder::new("p").req(&[("cpu", "1500m")]).build(), &snapshot, None).unwrap();
        let n = &big.nodes[0];
        assert!(!n.fits && n.pass2.is_none(), "pass 1 failed: no pass 2");
        assert_eq!(n.reasons, ["Insufficient cpu"]);
    }

    #[test]
    fn only_one_node_when_asked() {
        let snapshot = Snapshot::build([NodeBuilder::new("a").build(), NodeBuilder::new("b").build()], []);
        let report = build(&plan(&[]), PodBuilder::new("p").build(), &snapshot, Some("b")).unwrap();
        assert_eq!(report.feasible, ["b"]);
        let e = build(&plan(&[]), PodBuilder::new("p").build(), &snapshot, Some("z")).unwrap_err();
        assert_eq!(e.to_string(), "--node z: the cluster has no such node");
    }

    /// ResourceLimitsPriority and PodFitsResources' ignored resources, from a Policy, and the
    /// SCORE row `/prioritize` would answer (the same combine).
    #[test]
    fn a_policy_with_resource_limits_and_ignored_resources() {
        let plan = crate::policy::parse_policy(
            "policy.json",
            r#"{"kind":"Policy","apiVersion":"v1",
                "predicates":[{"name":"PodFitsResources","argument":{"ignoredResources":["example.com/foo"]}}],
                "priorities":[{"name":"ResourceLimitsPriority","weight":2},{"name":"EqualPriority","weight":1}]}"#,
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
        let report = build(&plan, pod, &snapshot, None).unwrap();
        assert_eq!(report.feasible, ["big", "small"], "example.com/foo is not checked");
        let scores = report.scores.unwrap();
        let limits: Vec<i64> = scores.nodes.iter().map(|n| n.priorities[0].score).collect();
        assert_eq!(limits, [1, 0], "only big's 8 cpu cover the 2-cpu limit; 64Gi fits neither");
        // big: (2*1 + 1*1) / 3 = 1; small: (0 + 1) / 3 = 0.33 -> 0.
        let totals: Vec<i64> = scores.nodes.iter().map(|n| n.score).collect();
        assert_eq!(totals, [1, 0]);
    }
}
