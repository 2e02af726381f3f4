//! How the priorities' scores of a node become the one 0..=10 score `/prioritize` answers (and
//! `explain` shows).
//!
//! Classic kube-scheduler adds the priorities up as a weighted sum. With its default weights the
//! priority that avoids nodes for a controller (weight 10000; `Priority::vetoes` says which) is a
//! near-veto there: an avoided node loses to every other node, and the other priorities (each of
//! weight 1) rank the rest. A plain weighted *mean* on the
//! extender's 0..10 scale loses that ranking: 10000 swamps the mean, and every node not avoided
//! answers 9 or 10 whatever the other priorities say.
//!
//! So the veto is kept as a veto: when the vetoing priority's weight is at least the sum of
//! the other weights (the only case where it is one in the classic sum: an avoided node then scores
//! at most 10 x the others' weights, a node not avoided at least 10 x its weight), a node it scores
//! 0 answers 0, and every other node answers the weighted mean of the *other* priorities. With a
//! smaller weight it is an ordinary term of the mean, as every priority is. The mean is rounded to
//! the nearest integer (half up), not floored. Both keep the classic ranking: the answer never
//! orders two nodes against their classic weighted sum (ties aside). kube-scheduler multiplies the
//! answer by the extender's `weight`; set it to the sum of the other priorities' weights to get
//! back the classic weighted sum (to rounding).

use crate::engine::Plan;

/// The combined score of each candidate from `scores` (per priority of the plan, in plan order, the
/// score of each candidate; `None` for a node the model does not know, which answers 0). All 0
/// without priorities.
pub fn combine(plan: &Plan, scores: &[Vec<Option<i64>>], candidates: usize) -> Vec<i64> {
    let veto = veto_slot(plan);
    let mean_of: Vec<(usize, i64)> = plan
        .priorities
        .iter()
        .enumerate()
        .filter(|(slot, _)| Some(*slot) != veto)
        .map(|(slot, p)| (slot, p.weight))
        .collect();
    let total_weight: i128 = mean_of.iter().map(|(_, w)| i128::from(*w)).sum();
    (0..candidates)
        .map(|c| {
            let score = |slot: usize| scores.get(slot).and_then(|s| s.get(c)).copied().flatten();
            let known = plan.priorities.is_empty() || score(0).is_some();
            let vetoed = veto.is_some_and(|slot| score(slot) == Some(0));
            if !known || vetoed || total_weight == 0 {
                return 0;
            }
            let sum: i128 =
                mean_of.iter().map(|(slot, w)| i128::from(*w) * i128::from(score(*slot).unwrap_or(0))).sum();
            // round(sum / total_weight) for non-negative values: half rounds up.
            i64::try_from((2 * sum + total_weight) / (2 * total_weight)).unwrap_or(0)
        })
        .collect()
}

/// The plan slot of the priority that vetoes (`Priority::vetoes`) when it acts as a veto: listed
/// with a weight at least the sum of the others', and with others to rank the nodes it does not
/// avoid.
fn veto_slot(plan: &Plan) -> Option<usize> {
    let slot = plan.priorities.iter().position(|p| p.priority.vetoes())?;
    let others: i64 = plan.priorities.iter().enumerate().filter(|(i, _)| *i != slot).map(|(_, p)| p.weight).sum();
    (others > 0 && plan.priorities[slot].weight >= others).then_some(slot)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use crate::engine::WeightedPriority;
    use crate::framework::Priority;

    fn priority(name: &str) -> Arc<dyn Priority> {
        crate::registry::priority(name).unwrap()
    }

    fn plan(entries: &[(&str, i64)]) -> Plan {
        let priorities =
            entries.iter().map(|(n, weight)| WeightedPriority { priority: priority(n), weight: *weight }).collect();
        Plan { priorities, ..Plan::default() }
    }

    const AVOID: &str = "NodePreferAvoidPodsPriority";
    const LEAST: &str = "LeastRequestedPriority";
    const BALANCED: &str = "BalancedResourceAllocation";

    #[test]
    fn rounded_weighted_mean_without_a_veto() {
        // (1*2 + 3*5) / 4 = 4.25 -> 4; (1*4 + 3*5) / 4 = 4.75 -> 5 (a floor gave 4);
        // (1*8 + 3*10) / 4 = 9.5 -> 10 (half up; a floor gave 9).
        let p = plan(&[(LEAST, 1), (BALANCED, 3)]);
        let scores = vec![vec![Some(2), Some(4), Some(8)], vec![Some(5), Some(5), Some(10)]];
        assert_eq!(combine(&p, &scores, 3), [4, 5, 10]);
    }

    #[test]
    fn an_avoided_node_answers_zero_and_the_others_the_mean_of_the_rest() {
        // Default-like weights: the avoid priority outweighs the others together.
        let p = plan(&[(LEAST, 1), (AVOID, 10000), (BALANCED, 1)]);
        let scores = vec![
            vec![Some(7), Some(7), Some(3), None],
            vec![Some(10), Some(0), Some(10), None],
            vec![Some(8), Some(10), Some(4), None],
        ];
        // a: (7+8)/2 = 7.5 -> 8; b: avoided -> 0; c: (3+4)/2 = 3.5 -> 4; unknown -> 0.
        assert_eq!(combine(&p, &scores, 4), [8, 0, 4, 0]);
    }

    #[test]
    fn the_veto_needs_a_weight_at_least_the_sum_of_the_others() {
        let scores = vec![vec![Some(9), Some(1)], vec![Some(0), Some(10)], vec![Some(9), Some(1)]];
        // Weight 2 = 1 + 1: still a veto (classic sums 18 + 0 = 18 against 2 + 20 = 22 for b: the
        // avoided node a loses, as the veto says).
        assert_eq!(combine(&plan(&[(LEAST, 1), (AVOID, 2), (BALANCED, 1)]), &scores, 2), [0, 1]);
        // Weight 1 < 2: an ordinary term. Classic sums: a 9+0+9 = 18, b 1+10+1 = 12: a ranks first
        // although avoided, and the mean says so too: a 18/3 = 6, b 12/3 = 4.
        assert_eq!(combine(&plan(&[(LEAST, 1), (AVOID, 1), (BALANCED, 1)]), &scores, 2), [6, 4]);
    }

    #[test]
    fn alone_the_avoid_priority_is_its_own_score() {
        let p = plan(&[(AVOID, 10000)]);
        assert_eq!(combine(&p, &[vec![Some(10), Some(0)]], 2), [10, 0]);
    }

    #[test]
    fn no_priorities_answer_zero() {
        assert_eq!(combine(&Plan::default(), &[], 3), [0, 0, 0]);
    }
}
