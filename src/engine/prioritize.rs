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

#[cfg(test)]
mod scale_tests {
    use super::*;
    use crate::cluster::Snapshot;
    use crate::gen_cluster::generate::{app_pod, generate, node_name, ClusterSpec, Rng};

    #[test]
    fn parallelism_1_and_16_give_identical_scores_on_5000_nodes() {
        let spec = ClusterSpec { nodes: 5000, pods_per_node: 4, ..ClusterSpec::default() };
        let (nodes, pods) = generate(&spec);
        let snapshot = Snapshot::build(nodes, pods);
        let mut names: Vec<String> = (0..spec.nodes).map(node_name).collect();
        names.reverse(); // request order, not the snapshot's, must be kept
        let candidates: Vec<Candidate> = names
            .iter()
            .map(|n| {
                let (node, nominated) = snapshot.candidate(n).unwrap();
                Candidate::Known(node, nominated)
            })
            .collect();
        let plan = Plan::default_plan();
        assert!(!plan.priorities.is_empty());
        let pod = PodContext::new(app_pod(&mut Rng::new(3), "incoming", "app-7", "", true));
        let view = ClusterView::of(&snapshot);
        let serial =
            prioritize(&Evaluator::new(1).unwrap(), &plan, &pod, &view, &candidates, &CancelFlag::new()).unwrap();
        let parallel =
            prioritize(&Evaluator::new(16).unwrap(), &plan, &pod, &view, &candidates, &CancelFlag::new()).unwrap();
        assert_eq!(serial, parallel);
        assert!(serial.iter().all(|s| (0..=10).contains(s)));
    }

    /// Issue 14, item 9: with the default priorities on a generated 1,000-node cluster, the
    /// answers rank the nodes as the classic weighted sum does and carry information. The cluster
    /// and the pod are `gen-cluster`'s, untouched (`generate::snapshot` builds the model objects
    /// `gen-cluster --nodes 1000` writes, Services and ReplicaSets included, and the pending pod
    /// is the one `--pending-pod` writes). The classic sum is computed here from each priority's
    /// score and the classic weights, not by `combine`.
    #[test]
    fn default_priorities_on_1000_generated_nodes_rank_as_the_classic_weighted_sum() {
        use crate::cluster::objects::{Object, Pod};
        use crate::gen_cluster::api_objects;

        let spec = ClusterSpec { nodes: 1000, ..ClusterSpec::default() };
        let snapshot = crate::gen_cluster::generate::snapshot(&spec);
        let pending = serde_json::from_value::<Object<Pod>>(api_objects::pending_pod(&spec)).unwrap().0;
        let pod = PodContext::new(pending);
        let candidates: Vec<Candidate> = (0..spec.nodes).map(|i| Candidate::by_name(&snapshot, node_name(i))).collect();
        let plan = Plan::default_plan();
        let view = ClusterView::of(&snapshot);
        let ev = Evaluator::new(2).unwrap();
        let answers = prioritize(&ev, &plan, &pod, &view, &candidates, &CancelFlag::new()).unwrap();

        // The classic weighted sum, from each priority's scores and the weights of kube-scheduler's
        // classic default provider (1.12-1.17 `algorithmprovider/defaults`), written here.
        let classic_weight = |name: &str| match name {
            "NodePreferAvoidPodsPriority" => 10000,
            "SelectorSpreadPriority"
            | "InterPodAffinityPriority"
            | "LeastRequestedPriority"
            | "BalancedResourceAllocation"
            | "NodeAffinityPriority"
            | "TaintTolerationPriority"
            | "ImageLocalityPriority" => 1,
            other => panic!("{other} is not a default priority"),
        };
        assert_eq!(plan.priorities.len(), 8, "the classic default priorities");
        let per_priority = breakdown(&ev, &plan, &pod, &view, &candidates, &CancelFlag::new()).unwrap();
        let classic: Vec<i64> = (0..candidates.len())
            .map(|c| {
                plan.priorities
                    .iter()
                    .zip(&per_priority)
                    .map(|(p, s)| classic_weight(p.priority.name()) * s[c].unwrap())
                    .sum()
            })
            .collect();
        let avoid_slot =
            plan.priorities.iter().position(|p| p.priority.name() == "NodePreferAvoidPodsPriority").unwrap();
        let avoided: Vec<bool> = per_priority[avoid_slot].iter().map(|s| *s == Some(0)).collect();
        let avoided_count = avoided.iter().filter(|a| **a).count();
        assert!((1..=50).contains(&avoided_count), "about 2% of the nodes avoid the pod: {avoided_count}");
        // One point of the answer's scale in the classic sum: the weights other than the avoid veto's.
        let point = 7;
        let mut apart = 0;
        for i in 0..answers.len() {
            for j in 0..answers.len() {
                // Never ordered against the classic sum (a tie is allowed) ...
                if classic[i] > classic[j] {
                    assert!(
                        answers[i] >= answers[j],
                        "{} ({}) vs {} ({})",
                        classic[i],
                        answers[i],
                        classic[j],
                        answers[j]
                    );
                }
                // ... and one point apart there, two nodes not avoided are apart in the answers.
                if classic[i] - classic[j] >= point && !avoided[i] && !avoided[j] {
                    assert!(
                        answers[i] > answers[j],
                        "{} ({}) vs {} ({})",
                        classic[i],
                        answers[i],
                        classic[j],
                        answers[j]
                    );
                    apart += 1;
                }
            }
        }
        assert!(apart > 100_000, "only {apart} pairs a point apart");
        for (answer, avoided) in answers.iter().zip(&avoided) {
            assert_eq!(*answer == 0, *avoided, "avoided nodes, and only they, answer 0");
        }
        let distinct: std::collections::BTreeSet<i64> = answers.iter().copied().collect();
        assert!(distinct.len() >= 4, "answers {distinct:?}");
    }
}
