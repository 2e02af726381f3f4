//! EvenPodsSpread: topologySpreadConstraints with whenUnsatisfiable DoNotSchedule.
//!
//! SKELETON: not implemented yet (AVAILABLE is false, so a Policy naming it is refused).

use std::sync::Arc;

use crate::cluster::objects::Pod;
use crate::cluster::{NodeInfo, PodInfo};
use crate::engine::view::ClusterView;
use crate::engine::PodContext;
use crate::predicates::{Predicate, Reason};

/// Whether this version has the predicate.
pub const AVAILABLE: bool = false;

/// What the predicate computes once per request.
#[derive(Debug, Clone, Default)]
pub struct State {}

impl State {
    /// Computes the state for the incoming pod over the whole cluster.
    pub fn compute(_pod: &PodContext, _view: &ClusterView<'_>) -> Self {
        State {}
    }

    /// Updates the state as if `added` ran on `node` (the nominated-pod pass).
    pub fn add_pod(&mut self, _incoming: &Pod, _added: &Arc<PodInfo>, _node: &NodeInfo) {}
}

#[derive(Debug)]
pub struct EvenPodsSpread;

impl Predicate for EvenPodsSpread {
    fn name(&self) -> &str {
        "EvenPodsSpread"
    }

    fn check(&self, _pod: &PodContext, _node: &NodeInfo, _reasons: &mut Vec<Reason>) {}
}
