//! PodToleratesNodeTaints and PodToleratesNodeNoExecuteTaints: every `NoSchedule` and `NoExecute`
//! taint of the node (only `NoExecute` for the second) must be tolerated. `PreferNoSchedule` never
//! filters.

use crate::cluster::NodeInfo;
use crate::framework::PodContext;
use crate::framework::{ArgumentError, Cause, ClusterView, Failures, Predicate, PredicateArgs, Reason, ReasonKind};
use crate::plugin_helpers::tolerations::{first_untolerated, TaintEffects};
use std::sync::Arc;

/// Upstream's `ErrTaintsTolerationsNotMatch`.
const MESSAGE: &str = "node(s) had taints that the pod didn't tolerate";

/// The words and kind of every reason both predicates give, and equal to each of them (reasons are
/// equal by their words): what the tests expect. The reason a node gets also names its first
/// untolerated taint ([`untolerated`]).
#[cfg(test)]
const ERR_TAINTS_TOLERATIONS_NOT_MATCH: Reason = Reason::unresolvable(MESSAGE);

/// The reason for a node whose taint `taint` (its index in `spec.taints`), among those with
/// `effects`, the pod does not tolerate.
pub const fn untolerated(effects: TaintEffects, taint: u32) -> Reason {
    Reason::of(Cause::UntoleratedTaint { effects, taint }, ReasonKind::Unresolvable, MESSAGE)
}

/// One predicate type for both names: they differ only in which effects they look at.
#[derive(Debug)]
pub struct PodToleratesNodeTaints {
    name: &'static str,
    effects: TaintEffects,
}

impl PodToleratesNodeTaints {
    /// PodToleratesNodeTaints: `NoSchedule` and `NoExecute` taints.
    pub fn all() -> Self {
        PodToleratesNodeTaints { name: NAME, effects: TaintEffects::DoNotSchedule }
    }

    /// PodToleratesNodeNoExecuteTaints: `NoExecute` taints only.
    pub fn no_execute() -> Self {
        PodToleratesNodeTaints { name: NO_EXECUTE_NAME, effects: TaintEffects::NoExecute }
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
        if let Some(taint) = first_untolerated(&pod.pod, node, self.effects) {
            reasons.push(untolerated(self.effects, u32::try_from(taint).unwrap_or(u32::MAX)));
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

    /// The reason names the first taint the pod does not tolerate, by its index on the node, and
    /// the effects the predicate looks at.
    #[test]
    fn the_reason_names_the_first_untolerated_taint() {
        let node = node_with(&[("soft", "", "PreferNoSchedule"), ("a", "1", "NoSchedule"), ("b", "", "NoExecute")]);
        let cause = |p: &PodToleratesNodeTaints, pod: PodBuilder| {
            let reasons = reasons_of(p, pod.build(), &node);
            assert_eq!(reasons, vec![ERR_TAINTS_TOLERATIONS_NOT_MATCH]);
            reasons[0].cause.clone()
        };
        let all = PodToleratesNodeTaints::all();
        let first = cause(&all, PodBuilder::new("p"));
        assert_eq!(first, Cause::UntoleratedTaint { effects: TaintEffects::DoNotSchedule, taint: 1 });
        assert_eq!(node.node().spec.taints[1].key, "a");
        let tolerating_a = PodBuilder::new("p").toleration("a", "Equal", "1", "NoSchedule");
        assert_eq!(
            cause(&all, tolerating_a),
            Cause::UntoleratedTaint { effects: TaintEffects::DoNotSchedule, taint: 2 }
        );
        let no_execute = cause(&PodToleratesNodeTaints::no_execute(), PodBuilder::new("p"));
        assert_eq!(no_execute, Cause::UntoleratedTaint { effects: TaintEffects::NoExecute, taint: 2 });
        assert_eq!(untolerated(TaintEffects::NoExecute, 2).cause, no_execute);
    }
}
