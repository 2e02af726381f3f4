//! The priority functions of `/prioritize`: one file each, written against
//! [`crate::framework::Priority`] and listed in [`crate::registry`]. A priority prepares what it
//! needs once per request (cluster-wide counts, and what upstream counts over the candidate
//! nodes), scores every candidate node on the evaluator (`score`, the map), and may rescale all
//! scores to 0..=10 afterwards (`normalize`, the reduce). What several share lives here.

use std::sync::Arc;

use crate::cluster::NodeInfo;
pub use crate::framework::candidate::known_nodes;
pub use crate::framework::MAX_PRIORITY;
use crate::framework::{ArgumentError, Candidate, ClusterView, PodContext, Priority, PriorityArgs, Scorer};

pub mod balanced_resource_allocation;
pub mod equal;
pub mod even_pods_spread;
pub mod image_locality;
pub mod inter_pod_affinity;
pub mod least_requested;
pub mod most_requested;
pub mod node_affinity;
pub mod node_label;
pub mod node_prefer_avoid_pods;
pub mod requested_to_capacity_ratio;
pub mod resource_allocation;
pub mod resource_limits;
pub mod selector_spread;
pub mod service_anti_affinity;
pub mod service_spreading;
pub mod spreading;
pub mod taint_toleration;

/// A priority that prepares nothing: its name and a score of one node. Most classic priorities
/// (the resource ones, EqualPriority) are this.
#[derive(Debug, Clone, Copy)]
pub struct NodeScore {
    pub name: &'static str,
    pub score: fn(&PodContext, &NodeInfo) -> i64,
}

impl NodeScore {
    /// Builds it for a Policy entry (the registry makes sure it carries no argument).
    pub fn build(self, _args: &PriorityArgs<'_>) -> Result<Arc<dyn Priority>, ArgumentError> {
        Ok(Arc::new(self))
    }
}

impl Priority for NodeScore {
    fn name(&self) -> &str {
        self.name
    }

    fn prepare(&self, _pod: &PodContext, _view: &ClusterView<'_>, _candidates: &[Candidate]) -> Box<dyn Scorer> {
        Box::new(*self)
    }
}

impl Scorer for NodeScore {
    fn score(&self, pod: &PodContext, node: &NodeInfo) -> i64 {
        (self.score)(pod, node)
    }
}

/// Scores clamped to the protocol's range.
pub fn clamp(score: i64) -> i64 {
    score.clamp(0, MAX_PRIORITY)
}

/// Rescales raw scores so the highest becomes 10 (`DefaultNormalizeScore`, not reversed): all 0
/// stays 0.
pub fn normalize_to_max(scores: &mut [i64]) {
    let max = scores.iter().copied().max().unwrap_or(0);
    for s in scores.iter_mut() {
        *s = if max > 0 { *s * MAX_PRIORITY / max } else { 0 };
    }
}

/// Rescales raw scores so the lowest becomes 10 and the highest 0 (reversed
/// `DefaultNormalizeScore`): all equal gives 10 everywhere.
pub fn normalize_reversed(scores: &mut [i64]) {
    let max = scores.iter().copied().max().unwrap_or(0);
    for s in scores.iter_mut() {
        *s = if max > 0 { MAX_PRIORITY - *s * MAX_PRIORITY / max } else { MAX_PRIORITY };
    }
}

/// Test helpers shared by the priorities' tests.
#[cfg(test)]
pub mod testing {
    use crate::cluster::Snapshot;
    use crate::framework::{Candidate, ClusterView, PodContext, Priority};

    /// The named nodes of the snapshot as candidates, in order (each must exist).
    pub fn candidates(snapshot: &Snapshot, names: &[&str]) -> Vec<Candidate> {
        names
            .iter()
            .map(|n| {
                let (node, nominated) = snapshot.candidate(n).unwrap_or_else(|| panic!("no node {n}"));
                Candidate::Known(node, nominated)
            })
            .collect()
    }

    /// The scores of the named candidates, in order: prepared over them, scored, normalised.
    pub fn scores(priority: &dyn Priority, ctx: &PodContext, snapshot: &Snapshot, names: &[&str]) -> Vec<i64> {
        let candidates = candidates(snapshot, names);
        let scorer = priority.prepare(ctx, &ClusterView::of(snapshot), &candidates);
        let mut s: Vec<i64> = candidates
            .iter()
            .map(|c| match c {
                Candidate::Known(node, _) => scorer.score(ctx, node),
                Candidate::Unknown(_) => unreachable!(),
            })
            .collect();
        scorer.normalize(&mut s);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizers() {
        let mut s = [0, 5, 10, 20];
        normalize_to_max(&mut s);
        assert_eq!(s, [0, 2, 5, 10]);
        let mut s = [0, 5, 10, 20];
        normalize_reversed(&mut s);
        assert_eq!(s, [10, 8, 5, 0]);
        let mut s = [0, 0];
        normalize_to_max(&mut s);
        assert_eq!(s, [0, 0]);
        let mut s = [0, 0];
        normalize_reversed(&mut s);
        assert_eq!(s, [10, 10]);
    }
}
