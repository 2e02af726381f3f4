//! Whether a pod fits one node: the ordered predicate loop, and upstream's `podFitsOnNode` double
//! pass around it for nominated pods.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::cluster::{NodeInfo, PodInfo};
use crate::engine::PodContext;
use crate::policy::Plan;
use crate::predicates::{Predicate, Reason, NO_SLOT};

/// Runs the plan's predicates in order. Stops at the first predicate that fails unless the plan
/// says `alwaysCheckAllPredicates`. Returns the reasons; none means the pod fits.
pub fn run_predicates(plan: &Plan, pod: &PodContext, node: &NodeInfo) -> Vec<Reason> {
    let mut reasons = Vec::new();
    run_predicates_observed(plan, pod, node, &mut reasons, |_, _| {});
    reasons
}

/// [`run_predicates`], telling `seen` each predicate that ran and the reasons it gave (none: it
/// passed), in order: the one predicate loop, which `explain` watches.
pub fn run_predicates_observed(
    plan: &Plan,
    pod: &PodContext,
    node: &NodeInfo,
    reasons: &mut Vec<Reason>,
    mut seen: impl FnMut(&dyn Predicate, &[Reason]),
) {
    for (slot, predicate) in plan.predicates.iter().enumerate() {
        let before = reasons.len();
        predicate.check(pod, node, reasons);
        let failed = reasons.len() > before;
        if failed {
            let slot = u32::try_from(slot).unwrap_or(NO_SLOT);
            reasons[before..].iter_mut().for_each(|r| r.slot = slot);
        }
        seen(predicate.as_ref(), &reasons[before..]);
        if failed && !plan.always_check_all {
            break;
        }
    }
}

/// How long one predicate took on one node, with its plan slot and the reasons it gave. One
/// observer per node, so it records into memory of its own, shared with no other thread.
pub type TimedObserver<'a> = dyn FnMut(usize, &[Reason], Duration) + 'a;

/// [`run_predicates`] timing each predicate (one clock read each: a predicate's end is the next
/// one's start): for the sampled requests whose per-predicate durations the metrics record, never
/// for every request.
pub fn run_predicates_timed(
    plan: &Plan,
    pod: &PodContext,
    node: &NodeInfo,
    observe: &mut TimedObserver<'_>,
) -> Vec<Reason> {
    let mut reasons = Vec::new();
    let mut slot = 0;
    let mut started = Instant::now();
    run_predicates_observed(plan, pod, node, &mut reasons, |_, given| {
        let now = Instant::now();
        observe(slot, given, now.saturating_duration_since(started));
        slot += 1;
        started = now;
    });
    reasons
}

/// Second passes of the nominated-pod double pass, process-wide: counted where one runs (it
/// costs a node copy, so one relaxed add there is noise), read by the metrics at scrape time.
pub static SECOND_PASSES: AtomicU64 = AtomicU64::new(0);

/// Nominated pods that pass 1 adds to a node: those of priority >= the pod's own, never the pod
/// itself (a pod may be nominated to the very node it is being checked against).
pub fn nominated_to_add<'a>(
    pod: &'a PodContext,
    nominated: &'a [Arc<PodInfo>],
) -> impl Iterator<Item = &'a Arc<PodInfo>> {
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
}

/// Upstream's `podFitsOnNode` double pass, over any `run` of the predicates (`passed` says whether
/// a pass let the pod fit): pass 1 on a copy of the node with the nominated pods of equal or
/// higher priority added, and the pod's cluster-wide counts updated for them; if it fails, the
/// node fails. If no pods were added there is no pass 2. Otherwise pass 2 runs on the node as it
/// is (the nominated pods may never land, and affinity to them must not be counted on).
pub fn double_pass<R>(
    pod: &PodContext,
    node: &NodeInfo,
    nominated: &[Arc<PodInfo>],
    mut run: impl FnMut(&PodContext, &NodeInfo) -> R,
    passed: impl Fn(&R) -> bool,
) -> Passes<R> {
    let added: Vec<&Arc<PodInfo>> = nominated_to_add(pod, nominated).collect();
    if added.is_empty() {
        return Passes::Single(run(pod, node));
    }
    let with_nominated = node.with_added_pods(added.iter().copied());
    // Counts that depend on other pods (inter-pod affinity, spread) see the nominated pods too.
    let pod_with_nominated = pod.with_added_pods(node, &added);
    let first = run(pod_with_nominated.as_ref().unwrap_or(pod), &with_nominated);
    let without = passed(&first).then(|| {
        SECOND_PASSES.fetch_add(1, Ordering::Relaxed);
        run(pod, node)
    });
    Passes::Double { with_nominated: first, without }
}

/// Checks a pod against a node as kube-scheduler's `podFitsOnNode` ([`double_pass`] over
/// [`run_predicates`]): the node fits only if every pass that ran did. Returns the reasons of the
/// pass that failed; none means the pod fits.
pub fn fits_on_node(plan: &Plan, pod: &PodContext, node: &NodeInfo, nominated: &[Arc<PodInfo>]) -> Vec<Reason> {
    double_pass(pod, node, nominated, |p, n| run_predicates(plan, p, n), Vec::is_empty).deciding()
}

/// [`fits_on_node`] over [`run_predicates_timed`].
pub fn fits_on_node_timed(
    plan: &Plan,
    pod: &PodContext,
    node: &NodeInfo,
    nominated: &[Arc<PodInfo>],
    observe: &mut TimedObserver<'_>,
) -> Vec<Reason> {
    double_pass(pod, node, nominated, |p, n| run_predicates_timed(plan, p, n, observe), Vec::is_empty).deciding()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predicates::pod_fits_resources::ERR_INSUFFICIENT_CPU;
    use crate::predicates::Kind;
    use crate::testing::{NodeBuilder, PodBuilder};

    fn plan(kinds: &[Kind], always_check_all: bool) -> Plan {
        Plan { predicates: kinds.iter().filter_map(|k| k.instantiate()).collect(), always_check_all, ..Plan::default() }
    }

    fn resources_plan() -> Plan {
        plan(&[Kind::PodFitsResources], false)
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

    fn incoming(priority: i32) -> PodContext {
        PodContext::new(PodBuilder::new("incoming").priority(priority).req(&[("cpu", "1")]).build())
    }

    #[test]
    fn higher_priority_nominated_pod_takes_the_last_cpu() {
        let reasons = fits_on_node(&resources_plan(), &incoming(0), &node(), &[nominated("vip", 100, "1")]);
        assert_eq!(reasons, vec![ERR_INSUFFICIENT_CPU]);
    }

    #[test]
    fn equal_priority_nominated_pod_counts_too() {
        let reasons = fits_on_node(&resources_plan(), &incoming(5), &node(), &[nominated("peer", 5, "1")]);
        assert_eq!(reasons, vec![ERR_INSUFFICIENT_CPU]);
    }

    #[test]
    fn lower_priority_nominated_pod_is_ignored() {
        let reasons = fits_on_node(&resources_plan(), &incoming(10), &node(), &[nominated("low", 1, "1")]);
        assert!(reasons.is_empty());
    }

    #[test]
    fn the_pods_own_nomination_is_ignored() {
        let own = Arc::new(PodInfo::new(
            PodBuilder::new("incoming").nominated("n1").priority(0).req(&[("cpu", "1")]).build(),
        ));
        assert!(fits_on_node(&resources_plan(), &incoming(0), &node(), &[own]).is_empty());
    }

    #[test]
    fn own_nomination_is_matched_by_namespace_and_name_without_uids() {
        let mut own = PodBuilder::new("incoming").nominated("n1").req(&[("cpu", "1")]).build();
        own.metadata.uid.clear();
        let mut pod = PodBuilder::new("incoming").req(&[("cpu", "1")]).build();
        pod.metadata.uid.clear();
        let reasons = fits_on_node(&resources_plan(), &PodContext::new(pod), &node(), &[Arc::new(PodInfo::new(own))]);
        assert!(reasons.is_empty());
    }

    #[test]
    fn a_different_pod_with_the_same_name_in_another_namespace_counts() {
        let other = Arc::new(PodInfo::new(
            PodBuilder::new("incoming").namespace("other").uid("").nominated("n1").req(&[("cpu", "1")]).build(),
        ));
        let mut pod = PodBuilder::new("incoming").req(&[("cpu", "1")]).build();
        pod.metadata.uid.clear();
        let reasons = fits_on_node(&resources_plan(), &PodContext::new(pod), &node(), &[other]);
        assert_eq!(reasons, vec![ERR_INSUFFICIENT_CPU]);
    }

    #[test]
    fn no_nominated_pods_is_a_single_pass() {
        assert!(fits_on_node(&resources_plan(), &incoming(0), &node(), &[]).is_empty());
    }

    /// Counts the nodes it is called with: shows how many passes ran and what each saw.
    #[derive(Debug, Default)]
    struct PodCounter(std::sync::Mutex<Vec<usize>>);

    impl crate::predicates::Predicate for PodCounter {
        fn name(&self) -> &str {
            "PodCounter"
        }
        fn check(&self, _pod: &PodContext, node: &NodeInfo, _reasons: &mut Vec<Reason>) {
            self.0.lock().unwrap().push(node.pods.pods().len());
        }
    }

    #[test]
    fn pass_two_runs_on_the_node_without_the_nominated_pods() {
        let counter = Arc::new(PodCounter::default());
        let plan = Plan { predicates: vec![counter.clone()], ..Plan::default() };
        assert!(fits_on_node(&plan, &incoming(0), &node(), &[nominated("vip", 100, "100m")]).is_empty());
        assert_eq!(*counter.0.lock().unwrap(), vec![2, 1], "pass 1 with the nominated pod, pass 2 without");

        let counter = Arc::new(PodCounter::default());
        let plan = Plan { predicates: vec![counter.clone()], ..Plan::default() };
        fits_on_node(&plan, &incoming(0), &node(), &[]);
        assert_eq!(*counter.0.lock().unwrap(), vec![1], "no nominated pods: one pass");
    }

    #[test]
    fn pass_two_failure_fails_the_node() {
        // A predicate that fails only when the node has exactly its own pods (pass 2): stands for
        // affinity that the nominated pods satisfied in pass 1.
        #[derive(Debug)]
        struct NeedsTwoPods;
        impl crate::predicates::Predicate for NeedsTwoPods {
            fn name(&self) -> &str {
                "NeedsTwoPods"
            }
            fn check(&self, _pod: &PodContext, node: &NodeInfo, reasons: &mut Vec<Reason>) {
                if node.pods.pods().len() < 2 {
                    reasons.push(Reason::unresolvable("needs two pods"));
                }
            }
        }
        let plan = Plan { predicates: vec![Arc::new(NeedsTwoPods)], ..Plan::default() };
        let reasons = fits_on_node(&plan, &incoming(0), &node(), &[nominated("vip", 100, "100m")]);
        assert_eq!(reasons, vec![Reason::unresolvable("needs two pods")]);
    }

    #[test]
    fn observed_run_reports_each_predicate_that_ran() {
        let tainted = NodeInfo::from_parts(
            NodeBuilder::new("n1").taint("a", "", "NoSchedule").condition("Ready", "False").build(),
            [],
        );
        let kinds = [Kind::CheckNodeUnschedulable, Kind::CheckNodeCondition, Kind::PodToleratesNodeTaints];
        for (always, want) in [
            (false, vec![("CheckNodeUnschedulable", 0), ("CheckNodeCondition", 1)]),
            (true, vec![("CheckNodeUnschedulable", 0), ("CheckNodeCondition", 1), ("PodToleratesNodeTaints", 1)]),
        ] {
            let mut seen = Vec::new();
            let mut reasons = Vec::new();
            run_predicates_observed(&plan(&kinds, always), &incoming(0), &tainted, &mut reasons, |p, r| {
                seen.push((p.name().to_string(), r.len()))
            });
            let want: Vec<_> = want.into_iter().map(|(n, c)| (n.to_string(), c)).collect();
            assert_eq!(seen, want, "always_check_all {always}");
            assert_eq!(reasons.len(), want.iter().map(|w| w.1).sum::<usize>());
        }
    }

    #[test]
    fn double_pass_shows_both_passes() {
        let count = |_: &PodContext, n: &NodeInfo| n.pods.pods().len();
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
        let kinds = [Kind::CheckNodeCondition, Kind::PodToleratesNodeTaints];
        let pod = incoming(0);
        assert_eq!(run_predicates(&plan(&kinds, false), &pod, &tainted).len(), 1);
        assert_eq!(run_predicates(&plan(&kinds, true), &pod, &tainted).len(), 2);
    }
}
