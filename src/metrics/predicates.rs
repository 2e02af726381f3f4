//! Per-predicate series, from what the engine reports of each /filter request
//! ([`FilterReport`]): evaluations and rejections counted once per request (no counter is touched
//! per node), durations from the sampled candidates' timings, and the nominated-pod second passes.
//! The metrics only read the report; they never steer the engine.
//!
//! The series of a plan's predicates are resolved once per plan (by slot, so a request never
//! hashes labels) and swapped with it on a Policy reload; a request still running with the plan
//! it started with counts into that plan's series.

use std::sync::{Arc, OnceLock};

use arc_swap::ArcSwap;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::exponential_buckets;
use prometheus_client::registry::{Registry, Unit};

use crate::metrics::duration_histogram::{DurationHistogram, Tally};
use crate::metrics::PROFILE;
use predicate_engine::engine::observe::Outcome;
use predicate_engine::engine::{FilterReport, Plan};
use predicate_engine::framework::AnyPredicate;

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

/// The index of an outcome in [`Outcome::ALL`].
fn status_index(outcome: Outcome) -> usize {
    Outcome::ALL.iter().position(|o| *o == outcome).unwrap_or(0)
}

/// The classic predicate name, so custom Policy names of `CheckNodeLabelPresence` and
/// `CheckServiceAffinity` entries do not each make a series.
fn plugin_name(predicate: &dyn AnyPredicate) -> &str {
    predicate.plugin()
}

/// The series of one predicate of the plan, resolved once so a request never hashes labels.
#[derive(Debug)]
struct Slot {
    plugin: String,
    evaluations: Counter,
    rejections: Counter,
    /// By [`Outcome::ALL`]; made on first use so statuses never seen make no series.
    durations: [OnceLock<DurationHistogram>; 3],
}

/// The series of one plan's predicates, by slot.
#[derive(Debug)]
struct PlanSeries {
    slots: Vec<Slot>,
}

impl PlanSeries {
    /// Whether these are the series of `plan`: the same predicates in the same slots.
    fn serves(&self, plan: &Plan) -> bool {
        self.slots.len() == plan.predicates.len()
            && self.slots.iter().zip(&plan.predicates).all(|(s, p)| s.plugin == plugin_name(p.as_ref()))
    }
}

#[derive(Debug)]
pub struct PredicateMetrics {
    evaluations: Family<EvaluationLabels, Counter>,
    rejections: Family<RejectionLabels, Counter>,
    durations: Family<DurationLabels, DurationHistogram, fn() -> DurationHistogram>,
    second_passes: Counter,
    /// The series of the plan in force.
    current: ArcSwap<PlanSeries>,
}

impl PredicateMetrics {
    pub(super) fn register(registry: &mut Registry, plan: &Plan) -> Self {
        let evaluations = Family::<EvaluationLabels, Counter>::default();
        let rejections = Family::<RejectionLabels, Counter>::default();
        let durations: Family<DurationLabels, DurationHistogram, fn() -> DurationHistogram> =
            Family::new_with_constructor(plugin_buckets);
        let second_passes = Counter::default();
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
        registry.register(
            "nominated_second_passes",
            "Second passes of the nominated-pod double pass (pass 1 with the nominated pods passed, so the node was checked again without them), in /filter requests",
            second_passes.clone(),
        );
        let current = ArcSwap::from_pointee(PlanSeries { slots: Vec::new() });
        let metrics = PredicateMetrics { evaluations, rejections, durations, second_passes, current };
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
        PlanSeries { slots }
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

    /// Counts what a /filter request under `plan` did: one counter add per predicate, and on a
    /// sampled request each timing into its histogram, each histogram touched once.
    pub fn record(&self, plan: &Plan, report: &FilterReport) {
        self.record_counts(plan, report);
        self.record_timings(plan, report);
    }

    /// The counters of [`PredicateMetrics::record`]: cheap, recorded before the answer leaves.
    pub fn record_counts(&self, plan: &Plan, report: &FilterReport) {
        let series = self.series(plan);
        for ((slot, evaluations), rejections) in series.slots.iter().zip(&report.evaluations).zip(&report.rejections) {
            if *evaluations > 0 {
                slot.evaluations.inc_by(*evaluations);
            }
            if *rejections > 0 {
                slot.rejections.inc_by(*rejections);
            }
        }
        if report.second_passes > 0 {
            self.second_passes.inc_by(report.second_passes);
        }
    }

    /// The sampled timings of [`PredicateMetrics::record`]: one observation per predicate per
    /// sampled node (6,000 at 5,000 candidates), so the server records them after the
    /// answer has left.
    pub fn record_timings(&self, plan: &Plan, report: &FilterReport) {
        if report.timings.is_empty() {
            return;
        }
        let series = self.series(plan);
        let statuses = Outcome::ALL.len();
        let mut tallies: Vec<Option<Tally>> = (0..series.slots.len() * statuses).map(|_| None).collect();
        for timing in &report.timings {
            let status = status_index(timing.outcome);
            let Some(tally) = tallies.get_mut(timing.slot * statuses + status) else { continue };
            if tally.is_none() {
                *tally = self.histogram(&series, timing.slot, status).map(DurationHistogram::tally);
            }
            if let Some(t) = tally {
                t.observe(timing.took);
            }
        }
        tallies.into_iter().flatten().for_each(Tally::commit);
    }

    /// The duration histogram of a predicate (its plan slot) and status, made on first use.
    fn histogram<'a>(&self, series: &'a PlanSeries, slot: usize, status: usize) -> Option<&'a DurationHistogram> {
        let s = series.slots.get(slot)?;
        let label = Outcome::ALL.get(status)?.name();
        Some(s.durations[status].get_or_init(|| {
            let labels = DurationLabels { plugin: s.plugin.clone(), extension_point: "Filter", status: label };
            self.durations.get_or_create_owned(&labels)
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use predicate_engine::engine::observe::Rejected;

    fn plan(names: &[&str]) -> Plan {
        Plan::of_predicates(names.iter().map(|n| predicate_engine::registry::predicate(n).unwrap()).collect())
    }

    fn counts(m: &PredicateMetrics) -> Vec<(u64, u64)> {
        m.current.load().slots.iter().map(|s| (s.evaluations.get(), s.rejections.get())).collect()
    }

    const NAMES: [&str; 3] = ["CheckNodeCondition", "PodFitsResources", "PodToleratesNodeTaints"];

    fn report(slots: usize, nodes: &[Rejected]) -> FilterReport {
        let mut r = FilterReport::new(slots, false);
        for n in nodes {
            r.count_node(n, false);
        }
        r
    }

    #[test]
    fn evaluations_and_rejections_come_from_the_report() {
        let plan = plan(&NAMES);
        let m = PredicateMetrics::register(&mut Registry::default(), &plan);
        m.record(&plan, &report(3, &[Rejected::None, Rejected::One(0), Rejected::One(1), Rejected::One(2)]));
        // Slot 0 ran on the 4 nodes, slot 1 on the 3 that passed slot 0, slot 2 on 2.
        assert_eq!(counts(&m), vec![(4, 1), (3, 1), (2, 1)]);
    }

    #[test]
    fn a_request_counts_into_the_series_of_its_own_plan_across_a_reload() {
        let (old, new) = (plan(&NAMES), plan(&["PodToleratesNodeTaints", "CheckNodeCondition"]));
        let m = PredicateMetrics::register(&mut Registry::default(), &old);
        m.use_plan(&new);
        // A request that started under the old plan: slot 1 is PodFitsResources there.
        m.record(&old, &report(3, &[Rejected::One(1)]));
        // One under the new plan: slot 1 is CheckNodeCondition.
        m.record(&new, &report(2, &[Rejected::One(1)]));
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

    /// A /filter job of the demo's pending pod web-2 over the demo's six nodes.
    fn demo_job(plan: &Plan, timed: bool) -> predicate_engine::engine::RequestJob {
        let snapshot =
            std::sync::Arc::new(predicate_engine::cluster::source::demo::demo_objects().unwrap().into_snapshot());
        let pod = predicate_engine::testing::PodBuilder::new("web-2").req(&[("cpu", "1")]).build();
        let candidates = snapshot
            .node_names()
            .into_iter()
            .map(|n| predicate_engine::engine::Candidate::by_name(&snapshot, n.to_string()))
            .collect();
        predicate_engine::engine::RequestJob {
            plan: std::sync::Arc::new(plan.clone()),
            pod,
            snapshot,
            candidates,
            from_request_nodes: false,
            cancel: predicate_engine::engine::CancelFlag::new(),
            timed: timed.into(),
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
        let plan = plan(&NAMES);
        let evaluator = predicate_engine::engine::Evaluator::new(2).unwrap();
        let untimed = demo_job(&plan, false).filter(&evaluator).unwrap();
        let mut registry = Registry::default();
        let never = PredicateMetrics::register(&mut registry, &plan);
        never.record(&plan, &untimed.report);
        assert_eq!(duration_counts(&registry), vec![], "an unsampled request times nothing");

        let timed = demo_job(&plan, true).filter(&evaluator).unwrap();
        assert_eq!(timed.verdicts, untimed.verdicts, "timing changes no verdict");
        let mut registry = Registry::default();
        let always = PredicateMetrics::register(&mut registry, &plan);
        always.record(&plan, &timed.report);
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
}
