//! What more than one plugin reads the same way, in one place (kube-scheduler's
//! `pkg/scheduler/framework/plugins/helper` is the model): tolerations against taints, the pod's
//! node selector and required node affinity, pod (anti-)affinity terms, topology spread
//! constraints, the Services that select a pod. `explain` reads them too, so its hints agree with the plugins.
//!
//! The helpers are written against `framework` and `cluster` as the plugins are; they import no
//! plugin, and neither `framework` nor `cluster` imports them. Label syntax and selectors sit
//! lower, in [`crate::labels`], where the cluster model reaches them too.

pub mod affinity_terms;
pub mod node_affinity;
pub mod services;
pub mod tolerations;
pub mod topology_spread;
