//! PodToleratesNodeTaints and PodToleratesNodeNoExecuteTaints: every `NoSchedule` and `NoExecute`
//! taint of the node (only `NoExecute` for the second) must be tolerated. `PreferNoSchedule` never
//! filters.

use k8s_openapi::api::core::v1::{Taint, Toleration};

use crate::cluster::NodeInfo;
use crate::framework::PodContext;
use crate::framework::{ArgumentError, ClusterView, Failures, Predicate, PredicateArgs, Reason};
use std::sync::Arc;

pub const ERR_TAINTS_TOLERATIONS_NOT_MATCH: Reason =
    Reason::unresolvable("node(s) had taints that the pod didn't tolerate");

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

/// One predicate type for both names: they differ only in which effects they look at.
#[derive(Debug)]
pub struct PodToleratesNodeTaints {
    name: &'static str,
    no_execute_only: bool,
}

impl PodToleratesNodeTaints {
    /// PodToleratesNodeTaints: `NoSchedule` and `NoExecute` taints.
    pub fn all() -> Self {
        PodToleratesNodeTaints { name: NAME, no_execute_only: false }
    }

    /// PodToleratesNodeNoExecuteTaints: `NoExecute` taints only.
    pub fn no_execute() -> Self {
        PodToleratesNodeTaints { name: NO_EXECUTE_NAME, no_execute_only: true }
    }

    fn filters(&self, effect: &str) -> bool {
        effect == "NoExecute" || (!self.no_execute_only && effect == "NoSchedule")
    }
}

/// The registry names: the predicate for both effects, and the one for `NoExecute` only.
pub const NAME: &str = "PodToleratesNodeTaints";
pub const NO_EXECUTE_NAME: &str = "PodToleratesNodeNoExecuteTaints";

/// Builds [`PodToleratesNodeTaints::all`] (it takes no argument).
pub fn build(_args: &PredicateArgs<'_>) -> Result<Arc<dyn crate::framework::AnyPredicate>, ArgumentError> {
    Ok(Arc::new(PodToleratesNodeTaints::all()))
}

/// Builds [`PodToleratesNodeTaints::no_execute`] (it takes no argument).
pub fn build_no_execute(_args: &PredicateArgs<'_>) -> Result<Arc<dyn crate::framework::AnyPredicate>, ArgumentError> {
    Ok(Arc::new(PodToleratesNodeTaints::no_execute()))
}

impl Predicate for PodToleratesNodeTaints {
    type State = ();

    fn name(&self) -> &str {
        self.name
    }

    fn failures(&self) -> Failures {
        Failures::Unresolvable
    }

    fn prepare(&self, _pod: &PodContext, _view: &ClusterView<'_>) {}

    fn check(&self, pod: &PodContext, _state: &(), node: &NodeInfo, reasons: &mut Vec<Reason>) {
        let tolerations = &pod.pod.spec.tolerations;
        let untolerated = node
            .node()
            .spec
            .taints
            .iter()
            .filter(|taint| self.filters(&taint.effect))
            .any(|taint| !tolerations.iter().any(|t| tolerates(t, taint)));
        if untolerated {
            reasons.push(ERR_TAINTS_TOLERATIONS_NOT_MATCH);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predicates::reasons_of;
    use crate::testing::{NodeBuilder, PodBuilder};

    fn node_with(taints: &[(&str, &str, &str)]) -> NodeInfo {
        let mut b = NodeBuilder::new("n");
        for (k, v, e) in taints {
            b = b.taint(k, v, e);
        }
        NodeInfo::from_parts(b.build(), [])
    }

    #[test]
    fn taints_and_tolerations() {
        let fail = vec![ERR_TAINTS_TOLERATIONS_NOT_MATCH];
        let gpu = [("dedicated", "gpu", "NoSchedule")];
        type Taints<'a> = &'a [(&'a str, &'a str, &'a str)];
        let cases: Vec<(&str, Taints, PodBuilder, Vec<Reason>)> = vec![
            ("no taints", &[], PodBuilder::new("p"), vec![]),
            ("untolerated NoSchedule", &gpu, PodBuilder::new("p"), fail.clone()),
            (
                "Equal with the value",
                &gpu,
                PodBuilder::new("p").toleration("dedicated", "Equal", "gpu", "NoSchedule"),
                vec![],
            ),
            (
                "no operator means Equal",
                &gpu,
                PodBuilder::new("p").toleration("dedicated", "", "gpu", "NoSchedule"),
                vec![],
            ),
            (
                "Equal with another value",
                &gpu,
                PodBuilder::new("p").toleration("dedicated", "Equal", "cpu", "NoSchedule"),
                fail.clone(),
            ),
            (
                "Exists ignores the value",
                &gpu,
                PodBuilder::new("p").toleration("dedicated", "Exists", "", "NoSchedule"),
                vec![],
            ),
            (
                "empty effect matches all effects",
                &gpu,
                PodBuilder::new("p").toleration("dedicated", "Exists", "", ""),
                vec![],
            ),
            (
                "empty key with Exists tolerates everything",
                &gpu,
                PodBuilder::new("p").toleration("", "Exists", "", ""),
                vec![],
            ),
            (
                "empty key with Equal compares the value only",
                &gpu,
                PodBuilder::new("p").toleration("", "Equal", "gpu", ""),
                vec![],
            ),
            (
                "other effect",
                &gpu,
                PodBuilder::new("p").toleration("dedicated", "Exists", "", "NoExecute"),
                fail.clone(),
            ),
            (
                "unknown operator tolerates nothing",
                &gpu,
                PodBuilder::new("p").toleration("dedicated", "Gte", "gpu", ""),
                fail.clone(),
            ),
            (
                "PreferNoSchedule never filters",
                &[("dedicated", "gpu", "PreferNoSchedule")],
                PodBuilder::new("p"),
                vec![],
            ),
            (
                "NoExecute filters",
                &[("node.kubernetes.io/unreachable", "", "NoExecute")],
                PodBuilder::new("p"),
                fail.clone(),
            ),
            (
                "every taint must be tolerated",
                &[("a", "", "NoSchedule"), ("b", "", "NoSchedule")],
                PodBuilder::new("p").toleration("a", "Exists", "", ""),
                fail.clone(),
            ),
        ];
        for (name, taints, pod, want) in cases {
            assert_eq!(reasons_of(&PodToleratesNodeTaints::all(), pod.build(), &node_with(taints)), want, "{name}");
        }
    }

    #[test]
    fn no_execute_variant_ignores_no_schedule() {
        let p = PodToleratesNodeTaints::no_execute();
        let pod = || PodBuilder::new("p").build();
        assert!(reasons_of(&p, pod(), &node_with(&[("a", "", "NoSchedule")])).is_empty());
        assert_eq!(
            reasons_of(&p, pod(), &node_with(&[("a", "", "NoExecute")])),
            vec![ERR_TAINTS_TOLERATIONS_NOT_MATCH]
        );
        assert_eq!(p.name(), "PodToleratesNodeNoExecuteTaints");
    }
}
