//! The framework: the types plugins are written against, and nothing else. The pod being
//! scheduled ([`PodContext`], pod data only), what a request sees of the cluster ([`ClusterView`]),
//! a candidate node ([`Candidate`]), why a pod does not fit ([`Reason`]: what it is, as a
//! [`Cause`], in upstream's words, resolvable by preemption or not), and the [`Predicate`] and [`Priority`] traits with what they are built from.
//!
//! Predicates, priorities and the engine import this module; it imports none of them (nor the
//! Policy parser or the registry): `tests/layering.rs` keeps that true.

pub mod candidate;
pub mod domain_verdicts;
pub mod plugin_args;
pub mod pod;
pub mod predicate;
pub mod priority;
pub mod reason;
pub mod view;

pub use candidate::Candidate;
pub use domain_verdicts::DomainVerdicts;
pub use plugin_args::{ArgumentError, PolicyArguments, PredicateArgs, PriorityArgs};
pub use pod::PodContext;
pub use predicate::{AnyPredicate, AnyState, Failures, MissingState, PodChange, Predicate, PredicateState};
pub use priority::{Priority, Scorer, MAX_PRIORITY};
pub use reason::{Cause, Pressure, Reason, ReasonKind, ResourceName, TaintEffects};
pub use view::ClusterView;
