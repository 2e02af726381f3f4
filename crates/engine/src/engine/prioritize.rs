//! Scoring: every priority of the plan scores every candidate on the evaluator, is normalised over
//! the candidates, and the scores combine into one per node (see [`combine`](super::combine)).

pub use crate::engine::combine::combine;
use crate::engine::evaluator::{CancelFlag, Cancelled, Evaluator};
use crate::engine::Plan;
use crate::framework::{Candidate, ClusterView, PodContext, MAX_PRIORITY};

/// The combined 0..=10 score of each candidate, in candidate order. Nodes the model does not know
/// score 0 and take no part in normalisation.
pub fn prioritize(
    evaluator: &Evaluator,
    plan: &Plan,
    pod: &PodContext,
    view: &ClusterView<'_>,
    candidates: &[Candidate],
    cancel: &CancelFlag,
) -> Result<Vec<i64>, Cancelled> {
    let scores = breakdown(evaluator, plan, pod, view, candidates, cancel)?;
    Ok(combine(plan, &scores, candidates.len()))
}

/// Each priority's score of each candidate: per priority of the plan, in plan order, the
/// normalised score clamped to 0..=10 of each candidate in candidate order (`None` for a node the
/// model does not know). What `prioritize` combines and `explain` shows.
pub fn breakdown(
    evaluator: &Evaluator,
    plan: &Plan,
    pod: &PodContext,
    view: &ClusterView<'_>,
    candidates: &[Candidate],
    cancel: &CancelFlag,
) -> Result<Vec<Vec<Option<i64>>>, Cancelled> {
    let scorers: Vec<_> = plan.priorities.iter().map(|w| w.priority.prepare(pod, view, candidates)).collect();
    let mut out = Vec::with_capacity(scorers.len());
    // Up to SCORED_TOGETHER priorities score a node in the same task: one fork-join over the pool
    // per request (per group of them), not one per priority (at 100 nodes those were most of a
    // /prioritize). The scores of a node stay on the stack.
    for group in scorers.chunks(SCORED_TOGETHER) {
        let raw: Vec<Option<[i64; SCORED_TOGETHER]>> = evaluator.map(candidates, cancel, |c| match c {
            Candidate::Known(node, _) => {
                let mut scores = [0; SCORED_TOGETHER];
                for (slot, scorer) in scores.iter_mut().zip(group) {
                    *slot = scorer.score(pod, node);
                }
                Some(scores)
            }
            Candidate::Unknown(_) => None,
        })?;
        for (i, scorer) in group.iter().enumerate() {
            let mut known: Vec<i64> = raw.iter().flatten().map(|scores| scores[i]).collect();
            scorer.normalize(&mut known);
            let mut known = known.into_iter();
            out.push(raw.iter().map(|r| r.as_ref().map(|_| clamp(known.next().unwrap_or(0)))).collect());
        }
    }
    Ok(out)
}

/// Scores clamped to the protocol's range.
fn clamp(score: i64) -> i64 {
    score.clamp(0, MAX_PRIORITY)
}

/// How many priorities score a node in one task (the classic set has 14).
const SCORED_TOGETHER: usize = 16;

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use crate::cluster::{NodeInfo, Snapshot};
    use crate::engine::WeightedPriority;
    use crate::framework::{Priority, Scorer};
    use crate::testing::{NodeBuilder, PodBuilder};

    /// Scores a node by the number in its name ("n7" -> 7), normalised to the maximum if asked.
    #[derive(Debug, Clone)]
    struct ByName(bool);

    impl Priority for ByName {
        fn name(&self) -> &str {
            "ByName"
        }
        fn prepare(&self, _pod: &PodContext, _view: &ClusterView<'_>, _candidates: &[Candidate]) -> Box<dyn Scorer> {
            Box::new(self.clone())
        }
    }

    impl Scorer for ByName {
        fn score(&self, _pod: &PodContext, node: &NodeInfo) -> i64 {
            node.name()[1..].parse().unwrap_or(0)
        }
        fn normalize(&self, scores: &mut [i64]) {
            if self.0 {
                let max = scores.iter().copied().max().unwrap_or(0);
                scores.iter_mut().for_each(|s| *s = if max > 0 { *s * 10 / max } else { 0 });
            }
        }
    }

    fn run(priorities: Vec<(ByName, i64)>, names: &[&str], parallelism: usize) -> Vec<i64> {
        let nodes: Vec<_> = names.iter().filter(|n| **n != "unknown").map(|n| NodeBuilder::new(n).build()).collect();
        let snapshot = Snapshot::build(nodes, []);
        let candidates: Vec<Candidate> = names.iter().map(|n| Candidate::by_name(&snapshot, n.to_string())).collect();
        let plan = Plan {
            priorities: priorities
                .into_iter()
                .map(|(p, weight)| WeightedPriority { priority: Arc::new(p) as Arc<dyn Priority>, weight })
                .collect(),
            ..Plan::default()
        };
        let pod = PodContext::new(PodBuilder::new("p").build());
        let ev = Evaluator::new(parallelism).unwrap();
        prioritize(&ev, &plan, &pod, &ClusterView::of(&snapshot), &candidates, &CancelFlag::new()).unwrap()
    }

    #[test]
    fn weighted_rounded_average_in_candidate_order() {
        // raw 2, 4, 8; normalised to max: 2, 5, 10. (1*raw + 3*normalised) / 4, rounded to
        // nearest: 8/4 = 2, 19/4 = 4.75 -> 5, 38/4 = 9.5 -> 10.
        let got = run(vec![(ByName(false), 1), (ByName(true), 3)], &["n2", "n4", "n8"], 4);
        assert_eq!(got, [2, 5, 10]);
    }

    #[test]
    fn scores_are_clamped_to_the_protocols_range() {
        assert_eq!(run(vec![(ByName(false), 1)], &["n3", "n42"], 1), [3, 10]);
    }

    #[test]
    fn unknown_nodes_score_zero_and_stay_out_of_normalisation() {
        assert_eq!(run(vec![(ByName(true), 1)], &["n5", "unknown", "n10"], 2), [5, 0, 10]);
    }

    #[test]
    fn breakdown_gives_each_priority_its_own_scores() {
        let nodes: Vec<_> = ["n2", "n4"].iter().map(|n| NodeBuilder::new(n).build()).collect();
        let snapshot = Snapshot::build(nodes, []);
        let candidates: Vec<Candidate> =
            ["n2", "unknown", "n4"].iter().map(|n| Candidate::by_name(&snapshot, n.to_string())).collect();
        let plan = Plan {
            priorities: vec![
                WeightedPriority { priority: Arc::new(ByName(false)), weight: 1 },
                WeightedPriority { priority: Arc::new(ByName(true)), weight: 3 },
            ],
            ..Plan::default()
        };
        let pod = PodContext::new(PodBuilder::new("p").build());
        let ev = Evaluator::new(2).unwrap();
        let scores = breakdown(&ev, &plan, &pod, &ClusterView::of(&snapshot), &candidates, &CancelFlag::new()).unwrap();
        assert_eq!(scores, vec![vec![Some(2), None, Some(4)], vec![Some(5), None, Some(10)]]);
        // 17/4 = 4.25 -> 4; 34/4 = 8.5 -> 9 (rounded to nearest).
        assert_eq!(combine(&plan, &scores, 3), [4, 0, 9]);
    }

    #[test]
    fn no_priorities_score_zero() {
        assert_eq!(run(vec![], &["n5", "n10"], 2), [0, 0]);
    }
}
