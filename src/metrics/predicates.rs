//! Per-predicate series: evaluations and rejections counted once per /filter request from its
//! verdicts (no counter is touched per node), and durations timed on sampled requests only.
//!
//! The series of a plan's predicates are resolved once per plan (by slot, so a request never
//! hashes labels) and swapped with it on a Policy reload; a request still running with the plan
//! it started with counts into that plan's series.

use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use arc_swap::ArcSwap;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::exponential_buckets;
use prometheus_client::registry::{Registry, Unit};

use crate::engine::{Cancelled, Evaluator, RequestJob, Verdict};
use crate::metrics::duration_histogram::{DurationHistogram, Tally};
use crate::metrics::PROFILE;
use crate::policy::Plan;
use crate::predicates::{Predicate, Reason};

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EvaluationLabels {
    plugin: String,
    extension_point: &'static str,
    profile: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DurationLabels {
    plugin: String,
    extension_point: &'static str,
    status: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RejectionLabels {
    predicate: String,
}

/// Upstream's buckets for `plugin_execution_duration_seconds`.
fn plugin_buckets() -> DurationHistogram {
    DurationHistogram::new(exponential_buckets(0.00001, 1.5, 20))
}

/// Upstream's status codes, by what a predicate said about one node.
const STATUSES: [&str; 3] = ["Success", "Unschedulable", "UnschedulableAndUnresolvable"];

fn status_of(reasons: &[Reason]) -> usize {
    match reasons {
        [] => 0,
        _ if reasons.iter().all(|r| r.resolvable) => 1,
        _ => 2,
    }
}

/// The classic predicate name: the kind's, so custom Policy names of `CheckNodeLabelPresence`
/// and `CheckServiceAffinity` entries do not each make a series.
fn plugin_name(predicate: &dyn Predicate) -> &str {
    predicate.kind().map_or_else(|| predicate.name(), |k| k.name())
}

/// The series of one predicate of the plan, resolved once so a request never hashes labels.
#[derive(Debug)]
struct Slot {
    plugin: String,
    evaluations: Counter,
    rejections: Counter,
    /// By [`STATUSES`]; made on first use so statuses never seen make no series.
    durations: [OnceLock<DurationHistogram>; 3],
}

/// Picks `percent`% of requests at random (a counter hashed with a per-process random key).
#[derive(Debug)]
struct Sampler {
    percent: u32,
    next: AtomicU64,
    key: std::hash::RandomState,
}

impl Sampler {
    fn sample(&self) -> bool {
        match self.percent {
            0 => false,
            p if p >= 100 => true,
            p => self.key.hash_one(self.next.fetch_add(1, Ordering::Relaxed)) % 100 < u64::from(p),
        }
    }
}

/// The series of one plan's predicates, by slot.
#[derive(Debug)]
struct PlanSeries {
    slots: Vec<Slot>,
    always_check_all: bool,
}

impl PlanSeries {
    /// Whether these are the series of `plan`: the same predicates in the same slots.
    fn serves(&self, plan: &Plan) -> bool {
        self.always_check_all == plan.always_check_all
            && self.slots.len() == plan.predicates.len()
            && self.slots.iter().zip(&plan.predicates).all(|(s, p)| s.plugin == plugin_name(p.as_ref()))
    }
}

#[derive(Debug)]
pub struct PredicateMetrics {
    evaluations: Family<EvaluationLabels, Counter>,
    rejections: Family<RejectionLabels, Counter>,
    durations: Family<DurationLabels, DurationHistogram, fn() -> DurationHistogram>,
    /// The series of the plan in force.
    current: ArcSwap<PlanSeries>,
    sampler: Sampler,
}

impl PredicateMetrics {
    pub(super) fn register(registry: &mut Registry, plan: &Plan, sample_percent: u32) -> Self {
        let evaluations = Family::<EvaluationLabels, Counter>::default();
        let rejections = Family::<RejectionLabels, Counter>::default();
        let durations: Family<DurationLabels, DurationHistogram, fn() -> DurationHistogram> =
            Family::new_with_constructor(plugin_buckets);
        registry.register(
            "plugin_evaluation",
            "As kube-scheduler's: predicate evaluations (one per predicate per node it ran on), counted from each /filter request's verdicts",
            evaluations.clone(),
        );
        registry.register(
            "predicate_rejections",
            "Nodes a predicate rejected in /filter requests (each predicate that gave a node a reason counts once)",
            rejections.clone(),
        );
        registry.register_with_unit(
            "plugin_execution_duration",
            "As kube-scheduler's: time one predicate took on one node, on a sample of /filter requests",
            Unit::Seconds,
            durations.clone(),
        );
        let sampler = Sampler { percent: sample_percent, next: AtomicU64::new(0), key: Default::default() };
        let current = ArcSwap::from_pointee(PlanSeries { slots: Vec::new(), always_check_all: false });
        let metrics = PredicateMetrics { evaluations, rejections, durations, current, sampler };
        metrics.use_plan(plan);
        metrics
    }

    /// Resolves the series of `plan`, the plan in force from now on.
    pub fn use_plan(&self, plan: &Plan) {
        self.current.store(Arc::new(self.series_of(plan)));
    }

    fn series_of(&self, plan: &Plan) -> PlanSeries {
        let slots = plan
            .predicates
            .iter()
            .map(|p| {
                let plugin = plugin_name(p.as_ref()).to_string();
                let evaluation =
                    EvaluationLabels { plugin: plugin.clone(), extension_point: "Filter", profile: PROFILE };
                Slot {
                    evaluations: self.evaluations.get_or_create_owned(&evaluation),
                    rejections: self.rejections.get_or_create_owned(&RejectionLabels { predicate: plugin.clone() }),
                    plugin,
                    durations: Default::default(),
                }
            })
            .collect();
        PlanSeries { slots, always_check_all: plan.always_check_all }
    }

    /// The series of `plan`: those in force, or (a request that started before a reload) its own.
    fn series(&self, plan: &Plan) -> Arc<PlanSeries> {
        let current = self.current.load_full();
        if current.serves(plan) {
            current
        } else {
            Arc::new(self.series_of(plan))
        }
    }

    /// Runs a /filter job's predicates on the evaluator: on a sampled request, timing each
    /// predicate on each node into `plugin_execution_duration_seconds`.
    pub fn filter(&self, job: &RequestJob, evaluator: &Evaluator) -> Result<Vec<Verdict>, Cancelled> {
        if !self.sampler.sample() {
            return job.filter(evaluator);
        }
        // Each node keeps its own timings; they are tallied here, on one thread, and each
        // histogram touched once per request.
        let record = |timings: &mut Vec<(usize, usize, Duration)>, slot: usize, reasons: &[Reason], took| {
            timings.push((slot, status_of(reasons), took));
        };
        let timed = job.filter_timed(evaluator, &record)?;
        let series = self.series(&job.plan);
        let mut tallies: Vec<Option<Tally>> = (0..series.slots.len() * STATUSES.len()).map(|_| None).collect();
        for &(slot, status, took) in timed.iter().flat_map(|(_, timings)| timings) {
            let Some(tally) = tallies.get_mut(slot * STATUSES.len() + status) else { continue };
            if tally.is_none() {
                *tally = self.histogram(&series, slot, status).map(DurationHistogram::tally);
            }
            if let Some(t) = tally {
                t.observe(took);
            }
        }
        tallies.into_iter().flatten().for_each(Tally::commit);
        Ok(timed.into_iter().map(|(verdict, _)| verdict).collect())
    }

    /// The duration histogram of a predicate (its plan slot) and status, made on first use.
    fn histogram<'a>(&self, series: &'a PlanSeries, slot: usize, status: usize) -> Option<&'a DurationHistogram> {
        let s = series.slots.get(slot)?;
        let label = *STATUSES.get(status)?;
        Some(s.durations[status].get_or_init(|| {
            let labels = DurationLabels { plugin: s.plugin.clone(), extension_point: "Filter", status: label };
            self.durations.get_or_create_owned(&labels)
        }))
    }

    /// Counts a /filter request's evaluations and rejections from its verdicts under `plan`, in
    /// one pass over them and one counter add per predicate.
    pub fn record_filter(&self, plan: &Plan, verdicts: &[Verdict]) {
        let series = self.series(plan);
        let n = series.slots.len();
        let Some(last) = n.checked_sub(1) else { return };
        // ran_through[j]: nodes whose evaluation ended with predicate j.
        let mut ran_through = vec![0u64; n];
        let mut rejected = vec![0u64; n];
        for verdict in verdicts {
            match verdict {
                Verdict::Unknown => {}
                Verdict::Fits => ran_through[last] += 1,
                Verdict::Fails(reasons) => {
                    let mut previous = None;
                    for r in reasons {
                        let slot = r.slot as usize;
                        if previous != Some(slot) && slot < n {
                            rejected[slot] += 1;
                        }
                        previous = Some(slot);
                    }
                    let first = reasons.first().map_or(last, |r| (r.slot as usize).min(last));
                    ran_through[if series.always_check_all { last } else { first }] += 1;
                }
            }
        }
        let mut ran = 0;
        for (slot, (through, rejections)) in series.slots.iter().zip(ran_through.iter().zip(&rejected)).rev() {
            ran += through;
            if ran > 0 {
                slot.evaluations.inc_by(ran);
            }
            if *rejections > 0 {
                slot.rejections.inc_by(*rejections);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predicates::Kind;

    fn plan(kinds: &[Kind], always_check_all: bool) -> Plan {
        Plan { predicates: kinds.iter().filter_map(|k| k.instantiate()).collect(), always_check_all, ..Plan::default() }
    }

    fn reason(slot: u32, resolvable: bool) -> Reason {
        let mut r = if resolvable { Reason::resolvable("r") } else { Reason::unresolvable("u") };
        r.slot = slot;
        r
    }

    fn counts(m: &PredicateMetrics) -> Vec<(u64, u64)> {
        m.current.load().slots.iter().map(|s| (s.evaluations.get(), s.rejections.get())).collect()
    }

    const KINDS: [Kind; 3] = [Kind::CheckNodeCondition, Kind::PodFitsResources, Kind::PodToleratesNodeTaints];

    #[test]
    fn evaluations_and_rejections_come_from_the_verdicts() {
        let plan = plan(&KINDS, false);
        let m = PredicateMetrics::register(&mut Registry::default(), &plan, 0);
        m.record_filter(
            &plan,
            &[
                Verdict::Fits,
                Verdict::Unknown,
                Verdict::Fails(vec![reason(0, false)]),
                // Two reasons of one predicate reject the node once.
                Verdict::Fails(vec![reason(1, true), reason(1, true)]),
                Verdict::Fails(vec![reason(2, false)]),
            ],
        );
        // Slot 0 ran on the 4 known nodes, slot 1 on the 3 that passed slot 0, slot 2 on 2.
        assert_eq!(counts(&m), vec![(4, 1), (3, 1), (2, 1)]);
    }

    #[test]
    fn always_check_all_runs_every_predicate_on_every_known_node() {
        let plan = plan(&KINDS, true);
        let m = PredicateMetrics::register(&mut Registry::default(), &plan, 0);
        m.record_filter(
            &plan,
            &[Verdict::Fits, Verdict::Fails(vec![reason(0, false), reason(2, false)]), Verdict::Unknown],
        );
        assert_eq!(counts(&m), vec![(2, 1), (2, 0), (2, 1)]);
    }

    #[test]
    fn a_request_counts_into_the_series_of_its_own_plan_across_a_reload() {
        let (old, new) = (plan(&KINDS, false), plan(&[Kind::PodToleratesNodeTaints, Kind::CheckNodeCondition], false));
        let m = PredicateMetrics::register(&mut Registry::default(), &old, 0);
        m.use_plan(&new);
        // A request that started under the old plan: slot 1 is PodFitsResources there.
        m.record_filter(&old, &[Verdict::Fails(vec![reason(1, true)])]);
        // One under the new plan: slot 1 is CheckNodeCondition.
        m.record_filter(&new, &[Verdict::Fails(vec![reason(1, false)])]);
        let plugin = |name: &str| {
            let series = m.series(&old);
            let slot = series.slots.iter().find(|s| s.plugin == name).unwrap();
            (slot.evaluations.get(), slot.rejections.get())
        };
        assert_eq!(plugin("CheckNodeCondition"), (2, 1));
        assert_eq!(plugin("PodFitsResources"), (1, 1));
        assert_eq!(plugin("PodToleratesNodeTaints"), (1, 0));
        assert_eq!(counts(&m), vec![(1, 0), (2, 1)], "the new plan's series are in force");
    }

    #[test]
    fn the_sampler_keeps_about_its_share() {
        let sampler = |percent| Sampler { percent, next: AtomicU64::new(0), key: Default::default() };
        let (none, all, tenth) = (sampler(0), sampler(100), sampler(10));
        assert!((0..1000).all(|_| !none.sample()));
        assert!((0..1000).all(|_| all.sample()));
        let kept = (0..10_000).filter(|_| tenth.sample()).count();
        assert!((700..1300).contains(&kept), "10% of 10,000 requests sampled, got {kept}");
    }

    /// A /filter job of the demo's pending pod web-2 over the demo's six nodes.
    fn demo_job(plan: &Plan) -> RequestJob {
        let snapshot = std::sync::Arc::new(crate::cluster::source::demo::demo_objects().unwrap().into_snapshot());
        let pod = crate::testing::PodBuilder::new("web-2").req(&[("cpu", "1")]).build();
        let candidates = snapshot
            .node_names()
            .into_iter()
            .map(|n| crate::engine::Candidate::by_name(&snapshot, n.to_string()))
            .collect();
        RequestJob {
            plan: std::sync::Arc::new(plan.clone()),
            pod,
            snapshot,
            candidates,
            from_request_nodes: false,
            cancel: crate::engine::CancelFlag::new(),
        }
    }

    /// `plugin_execution_duration_seconds_count` per `plugin/status`, from the encoded text.
    fn duration_counts(registry: &Registry) -> Vec<(String, u64)> {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, registry).unwrap();
        let mut counts: Vec<(String, u64)> = text
            .lines()
            .filter_map(|l| l.strip_prefix("plugin_execution_duration_seconds_count{"))
            .map(|l| {
                let (labels, value) = l.split_once("} ").unwrap();
                let label = |k: &str| {
                    labels
                        .split(',')
                        .find_map(|kv| kv.strip_prefix(&format!("{k}=\"")).map(|v| v.trim_end_matches('"').to_string()))
                        .unwrap()
                };
                (format!("{}/{}", label("plugin"), label("status")), value.parse().unwrap())
            })
            .collect();
        counts.sort();
        counts
    }

    #[test]
    fn sampled_requests_time_every_predicate_on_every_node_and_others_none() {
        let plan = plan(&KINDS, false);
        let job = demo_job(&plan);
        let evaluator = Evaluator::new(2).unwrap();
        let untimed = job.filter(&evaluator).unwrap();

        let mut registry = Registry::default();
        let never = PredicateMetrics::register(&mut registry, &plan, 0);
        assert_eq!(never.filter(&job, &evaluator).unwrap(), untimed);
        assert_eq!(duration_counts(&registry), vec![], "an unsampled request times nothing");

        let mut registry = Registry::default();
        let always = PredicateMetrics::register(&mut registry, &plan, 100);
        assert_eq!(always.filter(&job, &evaluator).unwrap(), untimed, "timing changes no verdict");
        always.record_filter(&plan, &untimed);
        let counts = duration_counts(&registry);
        // Each predicate was timed once per node it ran on: the evaluation count (the demo's
        // nominated pod makes node-b2 a double pass, but web-2's 1 cpu fails its first pass).
        let timed: u64 = counts.iter().map(|(_, c)| c).sum();
        let evaluated: u64 = always.current.load().slots.iter().map(|s| s.evaluations.get()).sum();
        assert!(timed > 0 && timed == evaluated, "timed {timed}, evaluated {evaluated}: {counts:?}");
        let rejected: u64 = always.current.load().slots.iter().map(|s| s.rejections.get()).sum();
        let failed: u64 = counts.iter().filter(|(k, _)| !k.ends_with("/Success")).map(|(_, c)| c).sum();
        assert_eq!(failed, rejected, "{counts:?}");
        assert!(counts.iter().any(|(k, _)| k == "CheckNodeCondition/Success"), "{counts:?}");
    }

    #[test]
    fn statuses_follow_upstreams_codes() {
        assert_eq!(STATUSES[status_of(&[])], "Success");
        assert_eq!(STATUSES[status_of(&[reason(0, true)])], "Unschedulable");
        assert_eq!(STATUSES[status_of(&[reason(0, true), reason(0, false)])], "UnschedulableAndUnresolvable");
    }
}
