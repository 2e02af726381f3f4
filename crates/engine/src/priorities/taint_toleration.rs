//! TaintTolerationPriority: the number of a node's `PreferNoSchedule` taints that the pod does not
//! tolerate, reversed and normalised so the nodes with the fewest get 10 (upstream's
//! `ComputeTaintTolerationPriorityMap` with `NormalizeReduce(MaxPriority, true)`).
//!
//! Only the pod's tolerations whose effect is `PreferNoSchedule` or empty count
//! (`getAllTolerationPreferNoSchedule`); they are picked once per request.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Toleration;

use crate::cluster::NodeInfo;
use crate::framework::ClusterView;
use crate::framework::{ArgumentError, Candidate, PodContext};
use crate::framework::{Priority, PriorityArgs, Scorer};
use crate::plugin_helpers::tolerations::{untolerated, TaintEffects, PREFER_NO_SCHEDULE};
use crate::priorities::normalize_reversed;

#[derive(Debug, Clone)]
pub struct TaintTolerationPriority;

/// The registry name.
pub const NAME: &str = "TaintTolerationPriority";

pub fn build(_args: &PriorityArgs<'_>) -> Result<Arc<dyn Priority>, ArgumentError> {
    Ok(Arc::new(TaintTolerationPriority))
}

/// The pod's tolerations that can tolerate a `PreferNoSchedule` taint.
struct TaintTolerationScorer {
    tolerations: Vec<Toleration>,
}

impl Priority for TaintTolerationPriority {
    fn name(&self) -> &str {
        NAME
    }

    fn prepare(&self, pod: &PodContext, _view: &ClusterView<'_>, _candidates: &[Candidate]) -> Box<dyn Scorer> {
        let tolerations = pod
            .pod
            .spec
            .tolerations
            .iter()
            .filter(|t| matches!(t.effect.as_deref(), None | Some("") | Some(PREFER_NO_SCHEDULE)))
            .cloned()
            .collect();
        Box::new(TaintTolerationScorer { tolerations })
    }
}

impl Scorer for TaintTolerationScorer {
    fn score(&self, _pod: &PodContext, node: &NodeInfo) -> i64 {
        let intolerable =
            untolerated(&node.node().spec.taints, &self.tolerations, TaintEffects::PreferNoSchedule).count();
        i64::try_from(intolerable).unwrap_or(i64::MAX)
    }

    fn normalize(&self, scores: &mut [i64]) {
        normalize_reversed(scores);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::objects::Pod;
    use crate::cluster::Snapshot;
    use crate::priorities::testing::candidates;
    use crate::testing::{NodeBuilder, PodBuilder};

    fn scores(pod: Pod, snapshot: &Snapshot, nodes: &[&str]) -> (Vec<i64>, Vec<i64>) {
        let ctx = PodContext::new(pod);
        let scorer = TaintTolerationPriority.prepare(&ctx, &ClusterView::of(snapshot), &candidates(snapshot, nodes));
        let raw: Vec<i64> = nodes.iter().map(|n| scorer.score(&ctx, &snapshot.node_info(n).unwrap())).collect();
        let mut normalized = raw.clone();
        scorer.normalize(&mut normalized);
        (raw, normalized)
    }

    fn cluster() -> Snapshot {
        Snapshot::build(
            [
                NodeBuilder::new("n1").taint("foo", "bar", "PreferNoSchedule").build(),
                NodeBuilder::new("n2")
                    .taint("foo", "bar", "PreferNoSchedule")
                    .taint("cpu", "high", "PreferNoSchedule")
                    .taint("disk", "ssd", "NoSchedule")
                    .build(),
                NodeBuilder::new("n3").build(),
                NodeBuilder::new("n4")
                    .taint("a", "b", "PreferNoSchedule")
                    .taint("c", "d", "PreferNoSchedule")
                    .taint("e", "f", "PreferNoSchedule")
                    .build(),
            ],
            [],
        )
    }

    #[test]
    fn counts_intolerable_prefer_no_schedule_taints_and_reverses() {
        let pod = PodBuilder::new("p")
            .toleration("foo", "Equal", "bar", "PreferNoSchedule")
            // A NoSchedule toleration does not count for PreferNoSchedule taints.
            .toleration("cpu", "Exists", "", "NoSchedule")
            // An empty effect tolerates every effect, PreferNoSchedule included.
            .toleration("a", "Exists", "", "")
            .build();
        let (raw, normalized) = scores(pod, &cluster(), &["n1", "n2", "n3", "n4"]);
        // n1: foo tolerated -> 0. n2: foo tolerated, cpu not, disk is NoSchedule (ignored) -> 1.
        // n3: no taints -> 0. n4: a tolerated, c and e not -> 2.
        assert_eq!(raw, [0, 1, 0, 2]);
        // Reversed over max 2: 10 - 0 = 10, 10 - 1*10/2 = 5, 10, 10 - 2*10/2 = 0.
        assert_eq!(normalized, [10, 5, 10, 0]);
    }

    #[test]
    fn no_tolerations() {
        let (raw, normalized) = scores(PodBuilder::new("p").build(), &cluster(), &["n1", "n2", "n3", "n4"]);
        // n1: 1, n2: 2 (disk is NoSchedule), n3: 0, n4: 3.
        assert_eq!(raw, [1, 2, 0, 3]);
        // Max 3: 10 - 10/3 = 10 - 3 = 7, 10 - 20/3 = 10 - 6 = 4, 10, 10 - 10 = 0.
        assert_eq!(normalized, [7, 4, 10, 0]);
    }

    #[test]
    fn tolerating_everything_gives_ten_everywhere() {
        let pod = PodBuilder::new("p").toleration("", "Exists", "", "").build();
        let (raw, normalized) = scores(pod, &cluster(), &["n1", "n2", "n3", "n4"]);
        assert_eq!(raw, [0, 0, 0, 0]);
        // All zero: reversed normalisation gives 10 to all.
        assert_eq!(normalized, [10, 10, 10, 10]);
        let pod = PodBuilder::new("p").toleration("", "Exists", "", "NoExecute").build();
        assert_eq!(scores(pod, &cluster(), &["n1", "n2", "n3", "n4"]).0, [1, 2, 0, 3]);
    }
}
