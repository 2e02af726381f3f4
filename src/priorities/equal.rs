//! EqualPriority: every node gets the same score, 1, as upstream's `EqualPriorityMap`.

use std::sync::Arc;

use crate::cluster::NodeInfo;
use crate::engine::view::ClusterView;
use crate::engine::{Candidate, PodContext};
use crate::priorities::{Priority, PriorityArgs, Scorer};

#[derive(Debug, Clone)]
pub struct EqualPriority;

pub fn build(args: &PriorityArgs<'_>) -> Result<Arc<dyn Priority>, String> {
    if args.argument.is_some() {
        return Err("argument: EqualPriority takes none".to_string());
    }
    Ok(Arc::new(EqualPriority))
}

impl Priority for EqualPriority {
    fn name(&self) -> &str {
        "EqualPriority"
    }

    fn prepare(&self, _pod: &PodContext, _view: &ClusterView<'_>, _candidates: &[Candidate]) -> Box<dyn Scorer> {
        Box::new(EqualPriority)
    }
}

impl Scorer for EqualPriority {
    fn score(&self, _pod: &PodContext, _node: &NodeInfo) -> i64 {
        1
    }
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
        let scorer = EqualPriority.prepare(&ctx, &ClusterView::of(&snapshot), &candidates(&snapshot, &["a", "b"]));
        let scores: Vec<i64> = ["a", "b"].iter().map(|n| scorer.score(&ctx, &snapshot.node_info(n).unwrap())).collect();
        assert_eq!(scores, [1, 1]);
    }
}
