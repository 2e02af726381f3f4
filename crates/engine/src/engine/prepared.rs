//! What one request prepares before it looks at any node: the pod ([`PodContext`]) and, by plan
//! slot, each predicate's state ([`States`]). The engine keeps the states without knowing their
//! types; the nominated-pod pass and preemption ask them how pods placed on or taken off a node
//! change them.

use std::sync::Arc;

use crate::cluster::objects::Pod;
use crate::cluster::{NodeInfo, PodInfo};
use crate::engine::Plan;
use crate::framework::{AnyState, ClusterView, PodChange, PodContext};

/// Each predicate's state, by plan slot (`None`: the predicate keeps none).
#[derive(Debug, Clone, Default)]
pub struct States(Vec<Option<Arc<dyn AnyState>>>);

impl States {
    /// Every predicate of `plan` prepared for `pod`, once.
    pub fn prepare(plan: &Plan, pod: &PodContext, view: &ClusterView<'_>) -> States {
        States(plan.predicates.iter().map(|p| p.prepare(pod, view)).collect())
    }

    /// No state for any slot: a predicate that needs one fails the request ([`MissingState`]).
    ///
    /// [`MissingState`]: crate::framework::MissingState
    pub fn none() -> States {
        States::default()
    }

    /// The state of a plan slot.
    pub fn get(&self, slot: usize) -> Option<&dyn AnyState> {
        self.0.get(slot).and_then(|s| s.as_deref())
    }

    /// The states with `pods` placed on `node` (`Add`) or taken off it (`Remove`); `None` when no
    /// predicate keeps a state, so these can be used as they are.
    fn changed(&self, pod: &PodContext, node: &NodeInfo, pods: &[&Arc<PodInfo>], change: PodChange) -> Option<States> {
        if pods.is_empty() || self.0.iter().all(Option::is_none) {
            return None;
        }
        Some(States(self.0.iter().map(|s| s.as_ref().map(|s| s.changed(pod, node, pods, change))).collect()))
    }
}

/// The pod being scheduled and what the plan's predicates prepared for it.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub pod: Arc<PodContext>,
    pub states: States,
    /// The order this request runs the predicates in, loaded once ([`Plan::current_order`]);
    /// `None`: plan order.
    pub order: Option<Arc<Vec<usize>>>,
}

impl Prepared {
    /// The pod, with every predicate of `plan` prepared over `view` (once per request).
    pub fn new(plan: &Plan, pod: Pod, view: &ClusterView<'_>) -> Prepared {
        let pod = PodContext::for_version(pod, view.snapshot.scheduler_version());
        let states = States::prepare(plan, &pod, view);
        Prepared { pod: Arc::new(pod), states, order: plan.current_order() }
    }

    /// The pod alone, no predicate prepared: for the predicates that keep no state.
    pub fn unprepared(pod: Pod) -> Prepared {
        Prepared { pod: Arc::new(PodContext::new(pod)), states: States::none(), order: None }
    }

    /// As if `added` ran on `node` too: what the first pass of the nominated-pod double pass
    /// checks against (upstream's `AddPod`). `None` when no state changes.
    pub fn with_added_pods(&self, node: &NodeInfo, added: &[&Arc<PodInfo>]) -> Option<Prepared> {
        self.with_changed(node, added, PodChange::Add)
    }

    /// As if `removed` no longer ran on `node`: what preemption checks once the victims are gone
    /// (upstream's `RemovePod`). `None` when no state changes.
    pub fn with_removed_pods(&self, node: &NodeInfo, removed: &[&Arc<PodInfo>]) -> Option<Prepared> {
        self.with_changed(node, removed, PodChange::Remove)
    }

    /// The plan slot that runs `at`-th.
    pub fn slot_at(&self, at: usize) -> usize {
        match &self.order {
            Some(order) => order.get(at).copied().unwrap_or(at),
            None => at,
        }
    }

    fn with_changed(&self, node: &NodeInfo, pods: &[&Arc<PodInfo>], change: PodChange) -> Option<Prepared> {
        let states = self.states.changed(&self.pod, node, pods, change)?;
        Some(Prepared { pod: Arc::clone(&self.pod), states, order: self.order.clone() })
    }
}
