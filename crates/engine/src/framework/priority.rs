//! The [`Priority`] trait: a priority prepares what it needs once per request (cluster-wide
//! counts, and what upstream counts over the candidate nodes), scores every candidate node on the
//! evaluator (`score`, the map), and may rescale all scores to 0..=10 afterwards (`normalize`, the
//! reduce).

use std::fmt;

use crate::cluster::NodeInfo;
use crate::framework::{Candidate, ClusterView, PodContext};

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

    /// Whether a score of 0 from it is a veto when its weight is at least the others' together
    /// (it then decides alone in the classic weighted sum; see `engine::combine`).
    fn vetoes(&self) -> bool {
        false
    }
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
