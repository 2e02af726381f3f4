//! NodeAffinityPriority: the sum of the weights of the pod's
//! `preferredDuringSchedulingIgnoredDuringExecution` node affinity terms that a node matches,
//! normalised so the best node gets 10 (upstream's `CalculateNodeAffinityPriorityMap` with
//! `NormalizeReduce(MaxPriority, false)`).
//!
//! Each term's `preference` is matched as one node selector term with the semantics of
//! [`NodeSelectorTerms`] (the component-helpers `PreferredSchedulingTerms` of later releases): its
//! `matchExpressions` and `matchFields` are ANDed, an empty term matches nothing, and one that does
//! not convert to a selector (see [`crate::labels::selectors`]: bad key or value syntax, operator rules)
//! matches nothing. (1.12's `CalculateNodeAffinityPriorityMap` returned the conversion error and
//! failed the whole priority; the extender scores the other terms.) Terms of weight 0 are skipped. The terms are compiled once per request.

use std::sync::Arc;

use crate::cluster::NodeInfo;
use crate::framework::ClusterView;
use crate::framework::{ArgumentError, Candidate, PodContext};
use crate::framework::{Priority, PriorityArgs, Scorer};
use crate::labels::selectors::NodeSelectorTerms;
use crate::priorities::normalize_to_max;

#[derive(Debug, Clone)]
pub struct NodeAffinityPriority;

/// The registry name.
pub const NAME: &str = "NodeAffinityPriority";

pub fn build(_args: &PriorityArgs<'_>) -> Result<Arc<dyn Priority>, ArgumentError> {
    Ok(Arc::new(NodeAffinityPriority))
}

/// The pod's preferred terms, compiled: `(weight, term)`.
struct NodeAffinityScorer {
    terms: Vec<(i64, NodeSelectorTerms)>,
}

impl Priority for NodeAffinityPriority {
    fn name(&self) -> &str {
        NAME
    }

    fn prepare(&self, pod: &PodContext, _view: &ClusterView<'_>, _candidates: &[Candidate]) -> Box<dyn Scorer> {
        let preferred = pod
            .pod
            .spec
            .affinity
            .as_ref()
            .and_then(|a| a.node_affinity.as_ref())
            .and_then(|na| na.preferred_during_scheduling_ignored_during_execution.as_deref())
            .unwrap_or_default();
        let terms = preferred
            .iter()
            .filter(|t| t.weight != 0)
            .map(|t| (i64::from(t.weight), NodeSelectorTerms::compile(std::slice::from_ref(&t.preference))))
            .collect();
        Box::new(NodeAffinityScorer { terms })
    }
}

impl Scorer for NodeAffinityScorer {
    fn score(&self, _pod: &PodContext, node: &NodeInfo) -> i64 {
        self.terms.iter().filter(|(_, term)| term.matches(node.name(), &*node.state)).map(|(w, _)| *w).sum()
    }

    fn normalize(&self, scores: &mut [i64]) {
        normalize_to_max(scores);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::objects::Pod;
    use crate::cluster::Snapshot;
    use crate::priorities::testing::candidates;
    use crate::testing::{field_term, requirement as req, term, NodeBuilder, PodBuilder};
    use k8s_openapi::api::core::v1::{Affinity, NodeAffinity, NodeSelectorTerm, PreferredSchedulingTerm};

    fn with_preferred(mut pod: Pod, terms: Vec<(i32, NodeSelectorTerm)>) -> Pod {
        let affinity = pod.spec.affinity.get_or_insert_with(Affinity::default);
        let na = affinity.node_affinity.get_or_insert_with(NodeAffinity::default);
        na.preferred_during_scheduling_ignored_during_execution = Some(
            terms.into_iter().map(|(weight, preference)| PreferredSchedulingTerm { weight, preference }).collect(),
        );
        pod
    }

    fn scores(pod: Pod, snapshot: &Snapshot, nodes: &[&str]) -> (Vec<i64>, Vec<i64>) {
        let ctx = PodContext::new(pod);
        let scorer = NodeAffinityPriority.prepare(&ctx, &ClusterView::of(snapshot), &candidates(snapshot, nodes));
        let raw: Vec<i64> = nodes.iter().map(|n| scorer.score(&ctx, &snapshot.node_info(n).unwrap())).collect();
        let mut normalized = raw.clone();
        scorer.normalize(&mut normalized);
        (raw, normalized)
    }

    fn cluster() -> Snapshot {
        Snapshot::build(
            [
                NodeBuilder::new("n1").label("zone", "a").build(),
                NodeBuilder::new("n2").label("zone", "a").label("disk", "ssd").build(),
                NodeBuilder::new("n3").label("disk", "hdd").build(),
                NodeBuilder::new("n4").build(),
            ],
            [],
        )
    }

    #[test]
    fn sums_the_weights_of_matching_terms_and_normalizes_to_the_best() {
        let pod = with_preferred(
            PodBuilder::new("p").build(),
            vec![
                (2, term(vec![req("zone", "In", &["a"])])),
                (5, term(vec![req("disk", "Exists", &[])])),
                // Weight 0: skipped.
                (0, term(vec![req("zone", "In", &["a"])])),
                // An empty preference matches nothing.
                (3, NodeSelectorTerm::default()),
                (3, term(vec![])),
                // An invalid requirement matches nothing: an unknown operator, or a value that is
                // no label value (NotIn would otherwise match n3 and n4, which have no zone).
                (6, term(vec![req("zone", "Bogus", &["a"])])),
                (6, term(vec![req("zone", "NotIn", &["invalid value: ___@#$%^"])])),
                // matchFields on the node name.
                (4, field_term(vec![req("metadata.name", "In", &["n3"])])),
                // ANDed requirements: only n2 has both.
                (1, term(vec![req("zone", "In", &["a"]), req("disk", "In", &["ssd"])])),
            ],
        );
        let (raw, normalized) = scores(pod, &cluster(), &["n1", "n2", "n3", "n4"]);
        // n1: zone=a -> 2. n2: 2 + disk exists 5 + both 1 = 8. n3: disk 5 + name 4 = 9. n4: 0.
        assert_eq!(raw, [2, 8, 9, 0]);
        // Max 9: 2*10/9 = 2, 8*10/9 = 8, 9*10/9 = 10, 0.
        assert_eq!(normalized, [2, 8, 10, 0]);
    }

    #[test]
    fn no_preferred_terms_scores_zero_everywhere() {
        let (raw, normalized) = scores(PodBuilder::new("p").build(), &cluster(), &["n1", "n2", "n3", "n4"]);
        assert_eq!(raw, [0, 0, 0, 0]);
        assert_eq!(normalized, [0, 0, 0, 0]);
        // Required affinity alone does not score.
        let pod = PodBuilder::new("p").node_affinity_term(term(vec![req("zone", "In", &["a"])])).build();
        assert_eq!(scores(pod, &cluster(), &["n1", "n4"]).1, [0, 0]);
    }

    #[test]
    fn one_matching_term_gives_ten_to_every_matching_node() {
        let pod = with_preferred(PodBuilder::new("p").build(), vec![(7, term(vec![req("zone", "NotIn", &["a"])]))]);
        // NotIn matches nodes without the label: n3, n4 -> 7 each; max 7 -> 10.
        assert_eq!(scores(pod, &cluster(), &["n1", "n2", "n3", "n4"]).1, [0, 0, 10, 10]);
    }
}
