//! Tolerations against taints, one implementation for every plugin that reads them
//! (PodToleratesNodeTaints, PodToleratesNodeNoExecuteTaints, CheckNodeUnschedulable,
//! TaintTolerationPriority, the spread constraints' `nodeTaintsPolicy: Honor`) and for `explain`'s
//! hints: upstream's `Toleration.ToleratesTaint` and `FindMatchingUntoleratedTaint` with its taint
//! filters (`k8s.io/component-helpers/scheduling/corev1`, `plugins/helper/taint.go`).

use k8s_openapi::api::core::v1::{Taint, Toleration};

use crate::cluster::objects::Pod;
use crate::cluster::NodeInfo;
/// Which of a node's taints a check looks at; in the framework, as a reason's cause names it.
pub use crate::framework::TaintEffects;

pub const NO_SCHEDULE: &str = "NoSchedule";
pub const PREFER_NO_SCHEDULE: &str = "PreferNoSchedule";
pub const NO_EXECUTE: &str = "NoExecute";

impl TaintEffects {
    pub fn includes(self, effect: &str) -> bool {
        match self {
            TaintEffects::DoNotSchedule => effect == NO_SCHEDULE || effect == NO_EXECUTE,
            TaintEffects::NoExecute => effect == NO_EXECUTE,
            TaintEffects::PreferNoSchedule => effect == PREFER_NO_SCHEDULE,
        }
    }
}

/// Whether a toleration tolerates a taint, as `Toleration.ToleratesTaint`: an empty effect matches
/// every effect, an empty key (with `Exists`) every key; `Equal` (or no operator) compares values.
pub fn tolerates(t: &Toleration, taint: &Taint) -> bool {
    tolerates_parts(t, &taint.key, taint.value.as_deref().unwrap_or(""), &taint.effect)
}

/// [`tolerates`] for a taint given by its parts.
pub fn tolerates_parts(t: &Toleration, key: &str, value: &str, effect: &str) -> bool {
    let t_effect = t.effect.as_deref().unwrap_or("");
    if !t_effect.is_empty() && t_effect != effect {
        return false;
    }
    let t_key = t.key.as_deref().unwrap_or("");
    if !t_key.is_empty() && t_key != key {
        return false;
    }
    match t.operator.as_deref().unwrap_or("") {
        "" | "Equal" => t.value.as_deref().unwrap_or("") == value,
        "Exists" => true,
        _ => false,
    }
}

/// Whether `taint` has one of `effects` and none of `tolerations` tolerates it.
fn is_untolerated(taint: &Taint, tolerations: &[Toleration], effects: TaintEffects) -> bool {
    effects.includes(&taint.effect) && !tolerations.iter().any(|t| tolerates(t, taint))
}

/// The taints with one of `effects` that none of `tolerations` tolerates, in the node's order (the
/// first is what upstream's `FindMatchingUntoleratedTaint` finds).
pub fn untolerated<'a>(
    taints: &'a [Taint],
    tolerations: &'a [Toleration],
    effects: TaintEffects,
) -> impl Iterator<Item = &'a Taint> + 'a {
    taints.iter().filter(move |taint| is_untolerated(taint, tolerations, effects))
}

/// Whether `tolerations` tolerate every taint with one of `effects`.
pub fn tolerates_all(taints: &[Taint], tolerations: &[Toleration], effects: TaintEffects) -> bool {
    untolerated(taints, tolerations, effects).next().is_none()
}

/// The first taint of the node with one of `effects` that the pod does not tolerate (upstream's
/// `FindMatchingUntoleratedTaint`), by its index in the node's `spec.taints`; `None` when the pod
/// tolerates them all.
pub fn first_untolerated(pod: &Pod, node: &NodeInfo, effects: TaintEffects) -> Option<usize> {
    node.node().spec.taints.iter().position(|taint| is_untolerated(taint, &pod.spec.tolerations, effects))
}

/// Whether the pod tolerates every taint of the node with one of `effects`.
pub fn tolerates_node(pod: &Pod, node: &NodeInfo, effects: TaintEffects) -> bool {
    tolerates_all(&node.node().spec.taints, &pod.spec.tolerations, effects)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{NodeBuilder, PodBuilder};

    #[test]
    fn effects_pick_the_taints_a_check_reads() {
        let node = NodeBuilder::new("n")
            .taint("a", "", NO_SCHEDULE)
            .taint("b", "", PREFER_NO_SCHEDULE)
            .taint("c", "", NO_EXECUTE);
        let taints = node.build().spec.taints;
        let keys = |effects| untolerated(&taints, &[], effects).map(|t| t.key.as_str()).collect::<Vec<_>>();
        assert_eq!(keys(TaintEffects::DoNotSchedule), ["a", "c"]);
        assert_eq!(keys(TaintEffects::NoExecute), ["c"]);
        assert_eq!(keys(TaintEffects::PreferNoSchedule), ["b"]);
    }

    #[test]
    fn the_first_untolerated_taint_by_its_index() {
        let node = NodeBuilder::new("n")
            .taint("soft", "", PREFER_NO_SCHEDULE)
            .taint("a", "1", NO_SCHEDULE)
            .taint("c", "", NO_EXECUTE)
            .info();
        let tolerating_a = PodBuilder::new("p").toleration("a", "Equal", "1", "").build();
        assert_eq!(first_untolerated(&PodBuilder::new("p").build(), &node, TaintEffects::DoNotSchedule), Some(1));
        assert_eq!(first_untolerated(&tolerating_a, &node, TaintEffects::DoNotSchedule), Some(2));
        assert_eq!(first_untolerated(&PodBuilder::new("p").build(), &node, TaintEffects::NoExecute), Some(2));
        let all = PodBuilder::new("p").toleration("", "Exists", "", "").build();
        assert_eq!(first_untolerated(&all, &node, TaintEffects::DoNotSchedule), None);
        assert!(tolerates_node(&all, &node, TaintEffects::DoNotSchedule));
    }

    #[test]
    fn every_taint_must_be_tolerated_by_some_toleration() {
        let taints =
            NodeBuilder::new("n").taint("a", "1", NO_SCHEDULE).taint("b", "2", NO_SCHEDULE).build().spec.taints;
        let a = PodBuilder::new("p").toleration("a", "Equal", "1", "");
        let both = a.clone().toleration("b", "Exists", "", NO_SCHEDULE);
        assert!(!tolerates_all(&taints, &a.build().spec.tolerations, TaintEffects::DoNotSchedule));
        assert!(tolerates_all(&taints, &both.build().spec.tolerations, TaintEffects::DoNotSchedule));
        assert!(tolerates_all(&taints, &[], TaintEffects::NoExecute));
        assert!(tolerates_all(&[], &[], TaintEffects::DoNotSchedule));
    }
}
