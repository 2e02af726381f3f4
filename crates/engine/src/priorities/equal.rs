//! EqualPriority: every node gets the same score, 1, as upstream's `EqualPriorityMap`.

use std::sync::Arc;

use crate::cluster::NodeInfo;
use crate::framework::PodContext;
use crate::framework::{ArgumentError, Priority, PriorityArgs};
use crate::priorities::NodeScore;

/// The registry name.
pub const NAME: &str = "EqualPriority";

pub fn build(args: &PriorityArgs<'_>) -> Result<Arc<dyn Priority>, ArgumentError> {
    NodeScore { name: NAME, score }.build(args)
}

/// The score of one node.
fn score(_pod: &PodContext, _node: &NodeInfo) -> i64 {
    1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::Snapshot;
    use crate::priorities::testing::candidates;
    use crate::testing::{NodeBuilder, PodBuilder};

    #[test]
    fn every_node_scores_one() {
        let snapshot =
            Snapshot::build([NodeBuilder::new("a").build(), NodeBuilder::new("b").unschedulable().build()], []);
        let ctx = PodContext::new(PodBuilder::new("p").build());
        let priority =
            build(&PriorityArgs { name: "EqualPriority", argument: None, hard_pod_affinity_symmetric_weight: 1 })
                .unwrap();
        let scorer =
            priority.prepare(&ctx, &crate::framework::ClusterView::of(&snapshot), &candidates(&snapshot, &["a", "b"]));
        let scores: Vec<i64> = ["a", "b"].iter().map(|n| scorer.score(&ctx, &snapshot.node_info(n).unwrap())).collect();
        assert_eq!(scores, [1, 1]);
    }
}
