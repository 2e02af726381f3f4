//! The priority functions of `/prioritize`: one file each. A priority prepares what it needs once
//! per request (cluster-wide counts, and what upstream counts over the candidate nodes), scores
//! every candidate node on the evaluator (`score`, the map), and may rescale all scores to 0..=10
//! afterwards (`normalize`, the reduce).

use std::fmt;
use std::sync::Arc;

use crate::cluster::NodeInfo;
use crate::engine::view::ClusterView;
use crate::engine::{Candidate, PodContext};

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

/// The highest score a priority gives (`MaxPriority`, and the extender protocol's
/// `MaxExtenderPriority`).
pub const MAX_PRIORITY: i64 = 10;

/// A priority function.
pub trait Priority: Send + Sync + fmt::Debug {
    /// The name it has in the Policy file.
    fn name(&self) -> &str;

    /// Prepares scoring for this pod, once per request, and returns the scorer. `candidates` are
    /// the nodes being scored, in request order: what upstream computes over them (domain counts,
    /// the highest count, per-zone sums) is computed here, over the `Known` ones only (unknown
    /// nodes take no part in scoring); most priorities ignore them.
    fn prepare(&self, pod: &PodContext, view: &ClusterView<'_>, candidates: &[Candidate]) -> Box<dyn Scorer>;
}

/// Scores the nodes of one request.
pub trait Scorer: Send + Sync {
    /// The score of one node: 0..=10, or a raw value that `normalize` rescales. Called per node on
    /// the evaluator, so it should be cheap: lookups in what `prepare` computed.
    fn score(&self, pod: &PodContext, node: &NodeInfo) -> i64;

    /// Rescales the scores of the known candidates (in candidate order) to 0..=10; the default
    /// keeps them as they are.
    fn normalize(&self, _scores: &mut [i64]) {}
}

/// The candidates the model knows, in order: the nodes that are scored and normalised.
pub fn known_nodes(candidates: &[Candidate]) -> impl Iterator<Item = &NodeInfo> {
    candidates.iter().filter_map(|c| match c {
        Candidate::Known(node, _) => Some(node),
        Candidate::Unknown(_) => None,
    })
}

/// A priority that prepares nothing: its name and a score of one node. Most classic priorities
/// (the resource ones, EqualPriority) are this.
#[derive(Debug, Clone, Copy)]
pub struct NodeScore {
    pub name: &'static str,
    pub score: fn(&PodContext, &NodeInfo) -> i64,
}

impl NodeScore {
    /// Builds it for a Policy entry, which must carry no argument.
    pub fn build(self, args: &PriorityArgs<'_>) -> Result<Arc<dyn Priority>, String> {
        if args.argument.is_some() {
            return Err(format!("argument: {} takes none", self.name));
        }
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

/// What a priority is built from: its Policy entry's name, its argument (the value under the
/// argument's key, e.g. the `labelPreference` object) and the Policy-wide settings.
#[derive(Debug, Clone, Copy)]
pub struct PriorityArgs<'a> {
    pub name: &'a str,
    pub argument: Option<&'a serde_json::Value>,
    /// `hardPodAffinitySymmetricWeight` (1 unless the Policy sets it).
    pub hard_pod_affinity_symmetric_weight: i64,
}

/// Builds a priority, or says what is wrong with its argument.
pub type Builder = fn(&PriorityArgs<'_>) -> Result<Arc<dyn Priority>, String>;

/// Every classic priority: its Policy name, its builder, the argument key that selects it for a
/// custom name (if it takes one), and its weight in the default set (if it is in it).
pub const PRIORITIES: &[(&str, Builder, Option<&str>, Option<i64>)] = &[
    ("SelectorSpreadPriority", selector_spread::build, None, Some(1)),
    ("ServiceSpreadingPriority", service_spreading::build, None, None),
    ("InterPodAffinityPriority", inter_pod_affinity::build, None, Some(1)),
    ("LeastRequestedPriority", least_requested::build, None, Some(1)),
    ("MostRequestedPriority", most_requested::build, None, None),
    ("BalancedResourceAllocation", balanced_resource_allocation::build, None, Some(1)),
    (
        "RequestedToCapacityRatioPriority",
        requested_to_capacity_ratio::build,
        Some("requestedToCapacityRatioArguments"),
        None,
    ),
    ("NodePreferAvoidPodsPriority", node_prefer_avoid_pods::build, None, Some(10000)),
    ("NodeAffinityPriority", node_affinity::build, None, Some(1)),
    ("TaintTolerationPriority", taint_toleration::build, None, Some(1)),
    ("ImageLocalityPriority", image_locality::build, None, Some(1)),
    ("EvenPodsSpreadPriority", even_pods_spread::build, None, None),
    ("NodeLabelPriority", node_label::build, Some("labelPreference"), None),
    ("ServiceAntiAffinityPriority", service_anti_affinity::build, Some("serviceAntiAffinity"), None),
    ("ResourceLimitsPriority", resource_limits::build, None, None),
    ("EqualPriority", equal::build, None, None),
];

/// The builder for a Policy name.
pub fn builder_for_name(name: &str) -> Option<Builder> {
    PRIORITIES.iter().find(|(n, ..)| *n == name).map(|(_, b, ..)| *b)
}

/// The builder and Policy name a custom-named entry gets from its argument's key.
pub fn builder_for_argument(key: &str) -> Option<(&'static str, Builder)> {
    PRIORITIES.iter().find(|(_, _, k, _)| *k == Some(key)).map(|(n, b, ..)| (*n, *b))
}

/// The argument key a priority takes, if any.
pub fn argument_key(name: &str) -> Option<&'static str> {
    PRIORITIES.iter().find(|(n, ..)| *n == name).and_then(|(_, _, k, _)| *k)
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
    use super::Priority;
    use crate::cluster::Snapshot;
    use crate::engine::view::ClusterView;
    use crate::engine::{Candidate, PodContext};

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

    #[test]
    fn names_are_unique_and_argument_keys_unique() {
        for (i, (name, _, key, _)) in PRIORITIES.iter().enumerate() {
            assert!(PRIORITIES[..i].iter().all(|(n, ..)| n != name), "{name}");
            if let Some(k) = key {
                assert!(PRIORITIES[..i].iter().all(|(_, _, k2, _)| k2 != &Some(*k)), "{k}");
            }
        }
    }
}
