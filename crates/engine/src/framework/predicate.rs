//! The [`Predicate`] trait, what a predicate may compute once per request (its
//! [`PredicateState`], kube-scheduler's PreFilter result in `CycleState`), and the object-safe
//! [`AnyPredicate`] the engine holds.
//!
//! A predicate `prepare`s once per request, from the pod and the cluster view, and gets that
//! state back in `check`, once per node (twice with nominated pods). The engine keeps the states
//! by plan slot; it never knows their types. For the nominated-pod pass and for preemption
//! victims it asks each state how pods placed on or taken off a node change it (`add_pod`,
//! `remove_pod`). A stateless predicate's state is `()`. A state that is missing, or of another
//! type, is an error ([`MissingState`]), never a pass.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use crate::cluster::{NodeInfo, PodInfo};
use crate::framework::{ClusterView, PodContext, Reason};

/// What a predicate's failures can be: what orders it in the tiers of dynamic ordering, where
/// every predicate that can only fail unresolvably runs before any other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Failures {
    /// Every reason it gives is unresolvable.
    Unresolvable,
    /// Some reasons it gives are resolvable (preemption could fix them).
    MaybeResolvable,
}

/// A predicate, as a plugin writes it.
pub trait Predicate: Send + Sync + fmt::Debug + 'static {
    /// What `prepare` computes for a request; `()` for a predicate that needs nothing.
    type State: PredicateState;

    /// The name it has in the Policy file.
    fn name(&self) -> &str;

    /// The classic predicate it is (its registry name): the same as `name` unless the Policy
    /// registered it under a custom name.
    fn plugin(&self) -> &str {
        self.name()
    }

    /// What its failures can be (checked in debug builds against every reason it gives).
    fn failures(&self) -> Failures;

    /// Computes the state for this pod, once per request (the cluster-wide counts, the pod's
    /// claims resolved).
    fn prepare(&self, pod: &PodContext, view: &ClusterView<'_>) -> Self::State;

    /// Pushes onto `reasons` why the pod does not fit the node; pushes nothing when it fits.
    /// Called once per node (twice with nominated pods); must not allocate when the pod fits.
    fn check(&self, pod: &PodContext, state: &Self::State, node: &NodeInfo, reasons: &mut Vec<Reason>);
}

/// Whether pods are placed on a node or taken off it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PodChange {
    /// The nominated-pod pass: pods of equal or higher priority nominated to the node.
    Add,
    /// Preemption: the victims.
    Remove,
}

/// What a predicate prepares once per request. `add_pod` and `remove_pod` update it as if a pod
/// ran on a node too, or no longer did (upstream's `AddPod`/`RemovePod`); a state that does not
/// depend on other pods keeps the defaults, which change nothing.
pub trait PredicateState: Clone + Send + Sync + fmt::Debug + 'static {
    fn add_pod(&mut self, _pod: &PodContext, _added: &PodInfo, _node: &NodeInfo) {}
    fn remove_pod(&mut self, _pod: &PodContext, _removed: &PodInfo, _node: &NodeInfo) {}
}

/// A stateless predicate's state.
impl PredicateState for () {}

/// A predicate's state was not there when it checked a node: the request is an error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("predicate {predicate}: its per-request state is missing (it was not prepared for this plan slot)")]
pub struct MissingState {
    pub predicate: String,
}

/// A prepared state, its type erased: what the engine keeps by plan slot.
pub trait AnyState: Send + Sync + fmt::Debug {
    fn as_any(&self) -> &dyn Any;

    /// A copy with `pods` placed on `node` (`Add`) or taken off it (`Remove`).
    fn changed(
        &self,
        pod: &PodContext,
        node: &NodeInfo,
        pods: &[&Arc<PodInfo>],
        change: PodChange,
    ) -> Arc<dyn AnyState>;
}

impl<S: PredicateState> AnyState for S {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn changed(
        &self,
        pod: &PodContext,
        node: &NodeInfo,
        pods: &[&Arc<PodInfo>],
        change: PodChange,
    ) -> Arc<dyn AnyState> {
        let mut state = self.clone();
        for p in pods {
            match change {
                PodChange::Add => state.add_pod(pod, p, node),
                PodChange::Remove => state.remove_pod(pod, p, node),
            }
        }
        Arc::new(state)
    }
}

/// A predicate with its state type erased: what a plan holds and the engine runs. Every
/// [`Predicate`] is one.
pub trait AnyPredicate: Send + Sync + fmt::Debug {
    fn name(&self) -> &str;
    fn plugin(&self) -> &str;
    fn failures(&self) -> Failures;

    /// The state for this request; `None` for a stateless predicate.
    fn prepare(&self, pod: &PodContext, view: &ClusterView<'_>) -> Option<Arc<dyn AnyState>>;

    /// [`Predicate::check`] with the state `prepare` gave (`None`: it gave none). A missing state,
    /// or one of another type, is an error.
    fn check(
        &self,
        pod: &PodContext,
        state: Option<&dyn AnyState>,
        node: &NodeInfo,
        reasons: &mut Vec<Reason>,
    ) -> Result<(), MissingState>;
}

impl<P: Predicate> AnyPredicate for P {
    fn name(&self) -> &str {
        Predicate::name(self)
    }

    fn plugin(&self) -> &str {
        Predicate::plugin(self)
    }

    fn failures(&self) -> Failures {
        Predicate::failures(self)
    }

    fn prepare(&self, pod: &PodContext, view: &ClusterView<'_>) -> Option<Arc<dyn AnyState>> {
        let state = Predicate::prepare(self, pod, view);
        // A stateless predicate's `()` is not kept: `check` finds it without a slot.
        let any: &dyn Any = &state;
        if any.is::<()>() {
            None
        } else {
            Some(Arc::new(state))
        }
    }

    fn check(
        &self,
        pod: &PodContext,
        state: Option<&dyn AnyState>,
        node: &NodeInfo,
        reasons: &mut Vec<Reason>,
    ) -> Result<(), MissingState> {
        let any: &dyn Any = match state {
            Some(s) => s.as_any(),
            None => &(),
        };
        let Some(state) = any.downcast_ref::<P::State>() else {
            return Err(MissingState { predicate: Predicate::name(self).to_string() });
        };
        let before = reasons.len();
        Predicate::check(self, pod, state, node, reasons);
        debug_assert!(
            Predicate::failures(self) != Failures::Unresolvable || reasons[before..].iter().all(|r| !r.is_resolvable()),
            "{} declares Failures::Unresolvable but gave {:?}",
            Predicate::name(self),
            &reasons[before..]
        );
        Ok(())
    }
}
