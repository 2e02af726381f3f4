//! Whether a pod fits one node: the predicate loop, and upstream's `podFitsOnNode` double pass
//! around it for nominated pods.

use std::sync::Arc;
use std::time::Instant;

use crate::cluster::{NodeInfo, PodInfo};
use crate::engine::observe::{Outcome, Rejected, Timing};
use crate::engine::{Plan, Prepared};
use crate::framework::{AnyPredicate, MissingState, Reason};

/// Runs the plan's predicates in the request's order ([`Prepared::order`]), telling `seen` each predicate that ran (its plan slot,
/// itself, and the reasons it gave: none when it passed). Stops at the first predicate that fails
/// unless the plan says `alwaysCheckAllPredicates`. The one predicate loop: `/filter`, `/preempt`
/// and `explain` all run it.
pub fn run_predicates_observed(
    plan: &Plan,
    prepared: &Prepared,
    node: &NodeInfo,
    reasons: &mut Vec<Reason>,
    mut seen: impl FnMut(usize, &dyn AnyPredicate, &[Reason]),
) -> Result<(), MissingState> {
    for at in 0..plan.predicates.len() {
        let slot = prepared.slot_at(at);
        let Some(predicate) = plan.predicates.get(slot) else { continue };
        let before = reasons.len();
        predicate.check(&prepared.pod, prepared.states.get(slot), node, reasons)?;
        let failed = reasons.len() > before;
        seen(slot, predicate.as_ref(), &reasons[before..]);
        if failed && !plan.always_check_all {
            break;
        }
    }
    Ok(())
}

/// [`run_predicates_observed`] without an observer: the reasons; none means the pod fits.
pub fn run_predicates(plan: &Plan, prepared: &Prepared, node: &NodeInfo) -> Result<Vec<Reason>, MissingState> {
    let mut reasons = Vec::new();
    run_predicates_observed(plan, prepared, node, &mut reasons, |_, _, _| {})?;
    Ok(reasons)
}

/// Nominated pods that pass 1 adds to a node: those of priority >= the pod's own, never the pod
/// itself (a pod may be nominated to the very node it is being checked against).
pub fn nominated_to_add<'a>(
    prepared: &'a Prepared,
    nominated: &'a [Arc<PodInfo>],
) -> impl Iterator<Item = &'a Arc<PodInfo>> {
    let pod = &prepared.pod;
    nominated.iter().filter(move |n| n.pod.priority() >= pod.priority && !n.pod.is_same_pod(&pod.pod))
}

/// What the passes of [`double_pass`] produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Passes<R> {
    /// No nominated pod was added: one pass, on the node as it is.
    Single(R),
    /// Pass 1 with the nominated pods added; pass 2 on the node as it is, run only if pass 1
    /// passed.
    Double { with_nominated: R, without: Option<R> },
}

impl<R> Passes<R> {
    /// The pass that decides the node: the single pass; or pass 2 if it ran, else the failed pass 1.
    pub fn deciding(self) -> R {
        match self {
            Passes::Single(r) => r,
            Passes::Double { with_nominated, without } => without.unwrap_or(with_nominated),
        }
    }

    /// Whether a second pass ran.
    pub fn ran_twice(&self) -> bool {
        matches!(self, Passes::Double { without: Some(_), .. })
    }
}

/// Upstream's `podFitsOnNode` double pass, over any `run` of the predicates (`passed` says whether
/// a pass let the pod fit): pass 1 on a copy of the node with the nominated pods of equal or
/// higher priority added, and the predicates' states updated for them; if it fails, the node
/// fails. If no pods were added there is no pass 2. Otherwise pass 2 runs on the node as it is
/// (the nominated pods may never land, and affinity to them must not be counted on).
pub fn double_pass<R>(
    prepared: &Prepared,
    node: &NodeInfo,
    nominated: &[Arc<PodInfo>],
    mut run: impl FnMut(&Prepared, &NodeInfo) -> R,
    passed: impl Fn(&R) -> bool,
) -> Passes<R> {
    let added: Vec<&Arc<PodInfo>> = nominated_to_add(prepared, nominated).collect();
    if added.is_empty() {
        return Passes::Single(run(prepared, node));
    }
    let with_nominated = node.with_added_pods(added.iter().copied());
    // States that depend on other pods (topology counts) see the nominated pods too.
    let prepared_with_nominated = prepared.with_added_pods(node, &added);
    let first = run(prepared_with_nominated.as_ref().unwrap_or(prepared), &with_nominated);
    let without = passed(&first).then(|| run(prepared, node));
    Passes::Double { with_nominated: first, without }
}

/// Checks a pod against a node as kube-scheduler's `podFitsOnNode` ([`double_pass`] over
/// [`run_predicates`]): the node fits only if every pass that ran did. Returns the reasons of the
/// pass that decided; none means the pod fits.
pub fn fits_on_node(
    plan: &Plan,
    prepared: &Prepared,
    node: &NodeInfo,
    nominated: &[Arc<PodInfo>],
) -> Result<Vec<Reason>, MissingState> {
    let passed = |r: &Result<Vec<Reason>, MissingState>| r.as_ref().is_ok_and(Vec::is_empty);
    double_pass(prepared, node, nominated, |p, n| run_predicates(plan, p, n), passed).deciding()
}

/// What `/filter` learns of one node: the reasons of the deciding pass, which predicates
/// rejected it there, whether a second pass ran, and on a sampled node how long each
/// predicate took (both passes).
#[derive(Debug, Default)]
pub(crate) struct NodeRun {
    pub reasons: Vec<Reason>,
    pub rejected: Rejected,
    pub second_pass: bool,
    pub timings: Vec<Timing>,
}

/// [`fits_on_node`], noting what the report needs; with `timed`, one clock read per predicate (a
/// predicate's end is the next one's start).
pub(crate) fn run_node(
    plan: &Plan,
    prepared: &Prepared,
    node: &NodeInfo,
    nominated: &[Arc<PodInfo>],
    timed: bool,
) -> Result<NodeRun, MissingState> {
    // One allocation for a sampled node's timings (a second pass may add to it), none otherwise.
    let mut timings = if timed { Vec::with_capacity(plan.predicates.len()) } else { Vec::new() };
    let pass = |p: &Prepared, n: &NodeInfo| -> Result<(Vec<Reason>, Rejected), MissingState> {
        let mut reasons = Vec::new();
        let mut rejected = Rejected::None;
        let mut started = timed.then(Instant::now);
        run_predicates_observed(plan, p, n, &mut reasons, |slot, _, given| {
            if !given.is_empty() {
                rejected.add(slot);
            }
            if let Some(start) = started.as_mut() {
                let now = Instant::now();
                timings.push(Timing { slot, outcome: Outcome::of(given), took: now.saturating_duration_since(*start) });
                *start = now;
            }
        })?;
        Ok((reasons, rejected))
    };
    let passes =
        double_pass(prepared, node, nominated, pass, |r| r.as_ref().is_ok_and(|(reasons, _)| reasons.is_empty()));
    let second_pass = passes.ran_twice();
    let (reasons, rejected) = passes.deciding()?;
    Ok(NodeRun { reasons, rejected, second_pass, timings })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::{ClusterView, Failures, PodContext, Predicate, PredicateState};
    use crate::predicates::pod_fits_resources::ERR_INSUFFICIENT_CPU;
    use crate::testing::{NodeBuilder, PodBuilder};

    fn plan(names: &[&str], always_check_all: bool) -> Plan {
        let predicates = names.iter().map(|n| crate::registry::predicate(n).unwrap()).collect();
        Plan { always_check_all, ..Plan::of_predicates(predicates) }
    }

    fn resources_plan() -> Plan {
        plan(&["PodFitsResources"], false)
    }

    /// A 4-cpu node with 3 cpu in use.
    fn node() -> NodeInfo {
        NodeInfo::from_parts(
            NodeBuilder::new("n1").build(),
            [PodBuilder::new("busy").node("n1").req(&[("cpu", "3")]).build()],
        )
    }

    fn nominated(name: &str, priority: i32, cpu: &str) -> Arc<PodInfo> {
        Arc::new(PodInfo::new(PodBuilder::new(name).nominated("n1").priority(priority).req(&[("cpu", cpu)]).build()))
    }

    fn incoming(priority: i32) -> Prepared {
        Prepared::unprepared(PodBuilder::new("incoming").priority(priority).req(&[("cpu", "1")]).build())
    }

    #[test]
    fn higher_priority_nominated_pod_takes_the_last_cpu() {
        let reasons = fits_on_node(&resources_plan(), &incoming(0), &node(), &[nominated("vip", 100, "1")]).unwrap();
        assert_eq!(reasons, vec![ERR_INSUFFICIENT_CPU]);
    }

    #[test]
    fn equal_priority_nominated_pod_counts_too() {
        let reasons = fits_on_node(&resources_plan(), &incoming(5), &node(), &[nominated("peer", 5, "1")]).unwrap();
        assert_eq!(reasons, vec![ERR_INSUFFICIENT_CPU]);
    }

    #[test]
    fn lower_priority_nominated_pod_is_ignored() {
        let reasons = fits_on_node(&resources_plan(), &incoming(10), &node(), &[nominated("low", 1, "1")]).unwrap();
        assert!(reasons.is_empty());
    }

    #[test]
    fn the_pods_own_nomination_is_ignored() {
        let own = Arc::new(PodInfo::new(
            PodBuilder::new("incoming").nominated("n1").priority(0).req(&[("cpu", "1")]).build(),
        ));
        assert!(fits_on_node(&resources_plan(), &incoming(0), &node(), &[own]).unwrap().is_empty());
    }

    #[test]
    fn own_nomination_is_matched_by_namespace_and_name_without_uids() {
        let mut own = PodBuilder::new("incoming").nominated("n1").req(&[("cpu", "1")]).build();
        own.metadata.uid.clear();
        let mut pod = PodBuilder::new("incoming").req(&[("cpu", "1")]).build();
        pod.metadata.uid.clear();
        let reasons =
            fits_on_node(&resources_plan(), &Prepared::unprepared(pod), &node(), &[Arc::new(PodInfo::new(own))])
                .unwrap();
        assert!(reasons.is_empty());
    }

    #[test]
    fn a_different_pod_with_the_same_name_in_another_namespace_counts() {
        let other = Arc::new(PodInfo::new(
            PodBuilder::new("incoming").namespace("other").uid("").nominated("n1").req(&[("cpu", "1")]).build(),
        ));
        let mut pod = PodBuilder::new("incoming").req(&[("cpu", "1")]).build();
        pod.metadata.uid.clear();
        let reasons = fits_on_node(&resources_plan(), &Prepared::unprepared(pod), &node(), &[other]).unwrap();
        assert_eq!(reasons, vec![ERR_INSUFFICIENT_CPU]);
    }

    #[test]
    fn no_nominated_pods_is_a_single_pass() {
        assert!(fits_on_node(&resources_plan(), &incoming(0), &node(), &[]).unwrap().is_empty());
    }

    /// Counts the nodes it is called with: shows how many passes ran and what each saw.
    #[derive(Debug, Default)]
    struct PodCounter(parking_lot::Mutex<Vec<usize>>);

    impl Predicate for PodCounter {
        type State = ();
        fn name(&self) -> &str {
            "PodCounter"
        }
        fn failures(&self) -> Failures {
            Failures::Unresolvable
        }
        fn prepare(&self, _pod: &PodContext, _view: &ClusterView<'_>) {}
        fn check(&self, _pod: &PodContext, _state: &(), node: &NodeInfo, _reasons: &mut Vec<Reason>) {
            self.0.lock().push(node.pods.pods().len());
        }
    }

    #[test]
    fn pass_two_runs_on_the_node_without_the_nominated_pods() {
        let counter = Arc::new(PodCounter::default());
        let plan = Plan::of_predicates(vec![counter.clone()]);
        assert!(fits_on_node(&plan, &incoming(0), &node(), &[nominated("vip", 100, "100m")]).unwrap().is_empty());
        assert_eq!(*counter.0.lock(), vec![2, 1], "pass 1 with the nominated pod, pass 2 without");

        let counter = Arc::new(PodCounter::default());
        let plan = Plan::of_predicates(vec![counter.clone()]);
        fits_on_node(&plan, &incoming(0), &node(), &[]).unwrap();
        assert_eq!(*counter.0.lock(), vec![1], "no nominated pods: one pass");
    }

    #[test]
    fn pass_two_failure_fails_the_node() {
        // A predicate that fails only when the node has exactly its own pods (pass 2): stands for
        // affinity that the nominated pods satisfied in pass 1.
        #[derive(Debug)]
        struct NeedsTwoPods;
        impl Predicate for NeedsTwoPods {
            type State = ();
            fn name(&self) -> &str {
                "NeedsTwoPods"
            }
            fn failures(&self) -> Failures {
                Failures::Unresolvable
            }
            fn prepare(&self, _pod: &PodContext, _view: &ClusterView<'_>) {}
            fn check(&self, _pod: &PodContext, _state: &(), node: &NodeInfo, reasons: &mut Vec<Reason>) {
                if node.pods.pods().len() < 2 {
                    reasons.push(Reason::unresolvable("needs two pods"));
                }
            }
        }
        let plan = Plan::of_predicates(vec![Arc::new(NeedsTwoPods)]);
        let reasons = fits_on_node(&plan, &incoming(0), &node(), &[nominated("vip", 100, "100m")]).unwrap();
        assert_eq!(reasons, vec![Reason::unresolvable("needs two pods")]);
    }

    #[test]
    fn observed_run_reports_each_predicate_that_ran() {
        let tainted = NodeInfo::from_parts(
            NodeBuilder::new("n1").taint("a", "", "NoSchedule").condition("Ready", "False").build(),
            [],
        );
        let kinds = ["CheckNodeUnschedulable", "CheckNodeCondition", "PodToleratesNodeTaints"];
        for (always, want) in [
            (false, vec![("CheckNodeUnschedulable", 0), ("CheckNodeCondition", 1)]),
            (true, vec![("CheckNodeUnschedulable", 0), ("CheckNodeCondition", 1), ("PodToleratesNodeTaints", 1)]),
        ] {
            let mut seen = Vec::new();
            let mut reasons = Vec::new();
            run_predicates_observed(&plan(&kinds, always), &incoming(0), &tainted, &mut reasons, |_, p, r| {
                seen.push((p.name().to_string(), r.len()))
            })
            .unwrap();
            let want: Vec<_> = want.into_iter().map(|(n, c)| (n.to_string(), c)).collect();
            assert_eq!(seen, want, "always_check_all {always}");
            assert_eq!(reasons.len(), want.iter().map(|w| w.1).sum::<usize>());
        }
    }

    #[test]
    fn double_pass_shows_both_passes() {
        let count = |_: &Prepared, n: &NodeInfo| n.pods.pods().len();
        let passes = double_pass(&incoming(0), &node(), &[nominated("vip", 100, "1")], count, |_| true);
        assert_eq!(passes, Passes::Double { with_nominated: 2, without: Some(1) });
        let passes = double_pass(&incoming(0), &node(), &[nominated("vip", 100, "1")], count, |_| false);
        assert_eq!(passes, Passes::Double { with_nominated: 2, without: None }, "pass 1 failed: no pass 2");
        let passes = double_pass(&incoming(0), &node(), &[nominated("low", -1, "1")], count, |_| true);
        assert_eq!(passes, Passes::Single(1));
    }

    #[test]
    fn first_failure_stops_unless_always_check_all() {
        let tainted = NodeInfo::from_parts(
            NodeBuilder::new("n1").taint("a", "", "NoSchedule").condition("Ready", "False").build(),
            [],
        );
        let kinds = ["CheckNodeCondition", "PodToleratesNodeTaints"];
        let pod = incoming(0);
        assert_eq!(run_predicates(&plan(&kinds, false), &pod, &tainted).unwrap().len(), 1);
        assert_eq!(run_predicates(&plan(&kinds, true), &pod, &tainted).unwrap().len(), 2);
    }

    /// A predicate whose state counts the pods added to the node it was prepared for.
    #[derive(Debug)]
    struct CountsAdded;

    #[derive(Debug, Clone)]
    struct Added(usize);

    impl PredicateState for Added {
        fn add_pod(&mut self, _pod: &PodContext, _added: &PodInfo, _node: &NodeInfo) {
            self.0 += 1;
        }
        fn remove_pod(&mut self, _pod: &PodContext, _removed: &PodInfo, _node: &NodeInfo) {
            self.0 -= 1;
        }
    }

    impl Predicate for CountsAdded {
        type State = Added;
        fn name(&self) -> &str {
            "CountsAdded"
        }
        fn failures(&self) -> Failures {
            Failures::MaybeResolvable
        }
        fn prepare(&self, _pod: &PodContext, _view: &ClusterView<'_>) -> Added {
            Added(0)
        }
        /// Fails while it has seen no added pod.
        fn check(&self, _pod: &PodContext, state: &Added, _node: &NodeInfo, reasons: &mut Vec<Reason>) {
            if state.0 == 0 {
                reasons.push(Reason::resolvable("nothing added"));
            }
        }
    }

    #[test]
    fn a_missing_state_is_an_error_never_a_pass() {
        let plan = Plan::of_predicates(vec![Arc::new(CountsAdded)]);
        let got = fits_on_node(&plan, &incoming(0), &node(), &[]);
        assert_eq!(got, Err(MissingState { predicate: "CountsAdded".to_string() }));
        // Prepared, it runs, and pass 1 sees the nominated pod through add_pod.
        let snapshot = crate::cluster::Snapshot::build([NodeBuilder::new("n1").build()], []);
        let pod = PodBuilder::new("incoming").build();
        let prepared = Prepared::new(&plan, pod, &ClusterView::of(&snapshot));
        assert_eq!(fits_on_node(&plan, &prepared, &node(), &[]).unwrap(), [Reason::resolvable("nothing added")]);
        let passes = double_pass(
            &prepared,
            &node(),
            &[nominated("vip", 100, "1")],
            |p, n| run_predicates(&plan, p, n).unwrap(),
            |_| true,
        );
        assert_eq!(
            passes,
            Passes::Double { with_nominated: vec![], without: Some(vec![Reason::resolvable("nothing added")]) }
        );
        // Preemption's victims go through remove_pod, on a copy.
        let added = prepared.with_added_pods(&node(), &[&nominated("x", 0, "1")]).unwrap();
        assert!(run_predicates(&plan, &added, &node()).unwrap().is_empty());
        let removed = added.with_removed_pods(&node(), &[&nominated("x", 0, "1")]).unwrap();
        assert_eq!(run_predicates(&plan, &removed, &node()).unwrap(), [Reason::resolvable("nothing added")]);
        assert!(run_predicates(&plan, &added, &node()).unwrap().is_empty(), "the copy left the original as it was");
    }

    #[test]
    fn run_node_notes_the_rejecting_slots_the_second_pass_and_the_timings() {
        let tainted = NodeInfo::from_parts(
            NodeBuilder::new("n1").taint("a", "", "NoSchedule").condition("Ready", "False").build(),
            [],
        );
        let names = ["CheckNodeUnschedulable", "CheckNodeCondition", "PodToleratesNodeTaints"];
        let run = run_node(&plan(&names, false), &incoming(0), &tainted, &[], true).unwrap();
        assert_eq!((run.rejected, run.second_pass, run.timings.len()), (Rejected::One(1), false, 2));
        let run = run_node(&plan(&names, true), &incoming(0), &tainted, &[], false).unwrap();
        assert_eq!((run.rejected, run.timings.len()), (Rejected::Many(vec![1, 2]), 0));
        // A pod that fits beside the nominated pod: both passes run, both timed.
        let small = Prepared::unprepared(PodBuilder::new("small").build());
        let run = run_node(&resources_plan(), &small, &node(), &[nominated("vip", 100, "100m")], true).unwrap();
        assert_eq!((run.rejected, run.second_pass, run.timings.len()), (Rejected::None, true, 2));
    }
}
