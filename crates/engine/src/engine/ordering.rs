//! The order a request runs the plan's predicates in: the plan's own (static, or the Policy's
//! `order`), or dynamic (seed 000's third stage): measured cost ÷ rejection probability, ascending,
//! within two tiers so that every predicate that can only fail unresolvably runs before any whose
//! failure preemption could fix. Predicates the Policy pinned with `order` keep their places at
//! the front, in the admin's order.
//!
//! The dynamic order learns from what the engine reports of each `/filter` request
//! ([`FilterReport`]): per plan slot, decayed counts of evaluations and rejections, and the mean
//! cost per evaluation from the sampled candidates' timings. Every [`Settings::every_requests`]
//! requests or [`Settings::every`] (whichever comes first) it publishes a new order, swapped
//! atomically; a request loads the order once and runs with it from start to end. Which nodes fit
//! never depends on the order; only which reason a failing node reports does.

use std::sync::Arc;
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use parking_lot::Mutex;

use crate::engine::{FilterReport, Plan};
use crate::framework::{AnyPredicate, Failures};

/// How the predicates are ordered: Policy `predicateOrdering`, `--predicate-ordering`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OrderingMode {
    /// The plan's order: the static rank, after the Policy's `order`.
    #[default]
    Static,
    /// Learned from the requests, within tiers (see the module).
    Dynamic,
}

impl OrderingMode {
    pub fn name(self) -> &'static str {
        match self {
            OrderingMode::Static => "static",
            OrderingMode::Dynamic => "dynamic",
        }
    }
}

impl std::str::FromStr for OrderingMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "static" => Ok(OrderingMode::Static),
            "dynamic" => Ok(OrderingMode::Dynamic),
            other => Err(format!("must be \"static\" or \"dynamic\", found {other:?}")),
        }
    }
}

/// When the dynamic order is computed again, and how fast old observations fade.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// Publish after this many observed requests...
    pub every_requests: u32,
    /// ...or once this long has passed since the last publication, at the next request.
    pub every: Duration,
    /// What the counts are multiplied by at each publication (0.5: the last period weighs as
    /// much as all before it).
    pub decay: f64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings { every_requests: 200, every: Duration::from_millis(250), decay: 0.5 }
    }
}

/// The tier of a predicate: those that can only fail unresolvably first.
fn tier(failures: Failures) -> u8 {
    match failures {
        Failures::Unresolvable => 0,
        Failures::MaybeResolvable => 1,
    }
}

/// A slot's rejection probability before it has been seen much: counts as this many evaluations
/// at this rate, so an unmeasured predicate is tried early and measured.
const PRIOR_EVALUATIONS: f64 = 1.0;
const PRIOR_RATE: f64 = 0.5;

/// What is known of one plan slot, decayed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SlotStats {
    pub evaluations: f64,
    pub rejections: f64,
    /// Summed sampled cost of its evaluations, in seconds, and how many samples.
    pub cost_seconds: f64,
    pub cost_samples: f64,
}

impl SlotStats {
    /// The estimated probability that it rejects a node it runs on.
    pub fn rejection_rate(&self) -> f64 {
        (self.rejections + PRIOR_EVALUATIONS * PRIOR_RATE) / (self.evaluations + PRIOR_EVALUATIONS)
    }

    /// The mean sampled cost of one evaluation, if it was ever sampled.
    pub fn cost(&self) -> Option<f64> {
        (self.cost_samples > 0.0).then(|| self.cost_seconds / self.cost_samples)
    }
}

#[derive(Debug)]
struct Stats {
    slots: Vec<SlotStats>,
    requests: u32,
    last: Instant,
    publications: u64,
}

/// The learned order of one plan: made with the plan, so a Policy reload starts afresh.
#[derive(Debug)]
pub struct DynamicOrder {
    tiers: Vec<Failures>,
    pinned: usize,
    settings: Settings,
    stats: Mutex<Stats>,
    current: ArcSwap<Vec<usize>>,
}

impl DynamicOrder {
    /// For these predicates (in plan order), of which the first `pinned` were placed by the
    /// Policy's `order`.
    pub fn new(predicates: &[Arc<dyn AnyPredicate>], pinned: usize, settings: Settings) -> DynamicOrder {
        let tiers: Vec<Failures> = predicates.iter().map(|p| p.failures()).collect();
        let pinned = pinned.min(tiers.len());
        let slots = vec![SlotStats::default(); tiers.len()];
        let first = order_of(&tiers, pinned, &slots);
        DynamicOrder {
            tiers,
            pinned,
            settings,
            stats: Mutex::new(Stats { slots, requests: 0, last: Instant::now(), publications: 0 }),
            current: ArcSwap::from_pointee(first),
        }
    }

    /// The order in force: plan slots, each once.
    pub fn current(&self) -> Arc<Vec<usize>> {
        self.current.load_full()
    }

    /// Takes in what one request did; publishes a new order when it is time.
    pub fn observe(&self, report: &FilterReport) {
        let mut stats = self.stats.lock();
        for (slot, s) in stats.slots.iter_mut().enumerate() {
            s.evaluations += report.evaluations.get(slot).copied().unwrap_or(0) as f64;
            s.rejections += report.rejections.get(slot).copied().unwrap_or(0) as f64;
        }
        for timing in &report.timings {
            if let Some(s) = stats.slots.get_mut(timing.slot) {
                s.cost_seconds += timing.took.as_secs_f64();
                s.cost_samples += 1.0;
            }
        }
        stats.requests += 1;
        let now = Instant::now();
        if stats.requests >= self.settings.every_requests || now.duration_since(stats.last) >= self.settings.every {
            let order = order_of(&self.tiers, self.pinned, &stats.slots);
            if *self.current.load_full() != order {
                self.current.store(Arc::new(order));
            }
            for s in &mut stats.slots {
                s.evaluations *= self.settings.decay;
                s.rejections *= self.settings.decay;
                s.cost_seconds *= self.settings.decay;
                s.cost_samples *= self.settings.decay;
            }
            stats.requests = 0;
            stats.last = now;
            stats.publications += 1;
        }
    }

    /// What it knows now, by plan slot, and how many orders it has published.
    pub fn stats(&self) -> (Vec<SlotStats>, u64) {
        let stats = self.stats.lock();
        (stats.slots.clone(), stats.publications)
    }

    /// Whether the slot's predicate can only fail unresolvably (runs in the first tier).
    pub fn unresolvable_only(&self, slot: usize) -> bool {
        self.tiers.get(slot) == Some(&Failures::Unresolvable)
    }

    /// How many leading slots the Policy pinned.
    pub fn pinned(&self) -> usize {
        self.pinned
    }
}

/// The pinned slots in place, then the rest by tier and ascending expected cost per node
/// (cost ÷ rejection probability); ties keep the plan order.
fn order_of(tiers: &[Failures], pinned: usize, slots: &[SlotStats]) -> Vec<usize> {
    let costs: Vec<f64> = slots.iter().filter_map(SlotStats::cost).collect();
    // An unsampled slot is taken to cost what the sampled ones cost on average.
    let typical = if costs.is_empty() { 1.0 } else { costs.iter().sum::<f64>() / costs.len() as f64 };
    let key = |slot: usize| {
        let s = slots.get(slot).cloned().unwrap_or_default();
        s.cost().unwrap_or(typical) / s.rejection_rate().max(f64::MIN_POSITIVE)
    };
    let mut rest: Vec<(u8, f64, usize)> =
        (pinned..tiers.len()).map(|slot| (tiers.get(slot).copied().map_or(1, tier), key(slot), slot)).collect();
    rest.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)).then(a.2.cmp(&b.2)));
    (0..pinned).chain(rest.into_iter().map(|(_, _, slot)| slot)).collect()
}

/// How a plan orders its predicates.
#[derive(Debug, Clone, Default)]
pub enum PredicateOrdering {
    #[default]
    Static,
    Dynamic(Arc<DynamicOrder>),
}

impl PredicateOrdering {
    pub fn mode(&self) -> OrderingMode {
        match self {
            PredicateOrdering::Static => OrderingMode::Static,
            PredicateOrdering::Dynamic(_) => OrderingMode::Dynamic,
        }
    }
}

/// What `GET /debug/ordering` shows and the metrics export: the order a request starting now
/// runs, and per predicate what the dynamic order knows of it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OrderingView {
    /// `static` or `dynamic`.
    pub ordering: &'static str,
    pub always_check_all_predicates: bool,
    /// The predicates' names, in the order a request starting now runs them.
    pub order: Vec<String>,
    /// How many times the dynamic order was computed (0 under static ordering).
    pub publications: u64,
    /// In plan order.
    pub predicates: Vec<SlotView>,
}

/// One predicate in an [`OrderingView`].
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SlotView {
    pub name: String,
    /// Its place in the plan (the static order) and in the order now in force.
    pub slot: usize,
    pub position: usize,
    /// `unresolvable` (can only fail unresolvably: the first tier) or `maybeResolvable`.
    pub tier: &'static str,
    /// Placed by the Policy's `order`: dynamic ordering leaves it where it is.
    pub pinned: bool,
    /// Dynamic only: the decayed counts, the estimated rejection probability and the mean
    /// sampled cost of one evaluation in seconds (`None` until sampled).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evaluations: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejections: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejection_rate: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_seconds: Option<f64>,
}

impl OrderingView {
    pub fn of(plan: &Plan) -> OrderingView {
        let order: Vec<usize> = match plan.current_order() {
            Some(order) => order.to_vec(),
            None => (0..plan.predicates.len()).collect(),
        };
        let (stats, publications) = match &plan.ordering {
            PredicateOrdering::Dynamic(d) => {
                let (stats, publications) = d.stats();
                (Some(stats), publications)
            }
            PredicateOrdering::Static => (None, 0),
        };
        let predicates = plan
            .predicates
            .iter()
            .enumerate()
            .map(|(slot, p)| {
                let s = stats.as_ref().and_then(|s| s.get(slot));
                SlotView {
                    name: p.name().to_string(),
                    slot,
                    position: order.iter().position(|&o| o == slot).unwrap_or(slot),
                    tier: match p.failures() {
                        Failures::Unresolvable => "unresolvable",
                        Failures::MaybeResolvable => "maybeResolvable",
                    },
                    pinned: slot < plan.pinned(),
                    evaluations: s.map(|s| s.evaluations),
                    rejections: s.map(|s| s.rejections),
                    rejection_rate: s.map(SlotStats::rejection_rate),
                    cost_seconds: s.and_then(SlotStats::cost),
                }
            })
            .collect();
        OrderingView {
            ordering: plan.ordering.mode().name(),
            always_check_all_predicates: plan.always_check_all,
            order: order.iter().filter_map(|&slot| plan.predicates.get(slot)).map(|p| p.name().to_string()).collect(),
            publications,
            predicates,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::NodeInfo;
    use crate::engine::observe::Timing;
    use crate::framework::{ClusterView, PodContext, Predicate, Reason};

    #[derive(Debug)]
    struct Fake(&'static str, Failures);

    impl Predicate for Fake {
        type State = ();
        fn name(&self) -> &str {
            self.0
        }
        fn failures(&self) -> Failures {
            self.1
        }
        fn prepare(&self, _pod: &PodContext, _view: &ClusterView<'_>) {}
        fn check(&self, _pod: &PodContext, _state: &(), _node: &NodeInfo, _reasons: &mut Vec<Reason>) {}
    }

    fn fakes(tiers: &[Failures]) -> Vec<Arc<dyn AnyPredicate>> {
        tiers.iter().map(|t| Arc::new(Fake("fake", *t)) as Arc<dyn AnyPredicate>).collect()
    }

    const U: Failures = Failures::Unresolvable;
    const R: Failures = Failures::MaybeResolvable;

    fn report(evaluations: &[u64], rejections: &[u64], costs_us: &[u64]) -> FilterReport {
        let mut r = FilterReport::new(evaluations.len(), true);
        r.evaluations = evaluations.to_vec();
        r.rejections = rejections.to_vec();
        for (slot, us) in costs_us.iter().enumerate() {
            for _ in 0..evaluations[slot] {
                r.timings.push(Timing {
                    slot,
                    outcome: crate::engine::observe::Outcome::Success,
                    took: Duration::from_micros(*us),
                });
            }
        }
        r
    }

    const EVERY_REQUEST: Settings = Settings { every_requests: 1, every: Duration::from_secs(3600), decay: 0.5 };

    #[test]
    fn before_any_observation_the_unresolvable_only_predicates_come_first_in_plan_order() {
        let order = DynamicOrder::new(&fakes(&[U, R, U, R, U]), 0, Settings::default());
        assert_eq!(*order.current(), vec![0, 2, 4, 1, 3]);
    }

    #[test]
    fn within_a_tier_cheap_and_rejecting_goes_first() {
        let order = DynamicOrder::new(&fakes(&[R, R, R]), 0, EVERY_REQUEST);
        // Slot 0: 10 µs, rejects 10%; slot 1: 1 µs, rejects 90%; slot 2: 1 µs, rejects 10%.
        order.observe(&report(&[1000, 1000, 1000], &[100, 900, 100], &[10, 1, 1]));
        assert_eq!(*order.current(), vec![1, 2, 0]);
    }

    #[test]
    fn tiers_win_over_cost() {
        let order = DynamicOrder::new(&fakes(&[R, U]), 0, EVERY_REQUEST);
        // The resolvable one is far cheaper and rejects more: still after the unresolvable one.
        order.observe(&report(&[1000, 1000], &[900, 1], &[1, 100]));
        assert_eq!(*order.current(), vec![1, 0]);
    }

    #[test]
    fn pinned_slots_keep_their_places() {
        let order = DynamicOrder::new(&fakes(&[R, R, U, R]), 2, EVERY_REQUEST);
        assert_eq!(*order.current(), vec![0, 1, 2, 3]);
        order.observe(&report(&[1000, 1000, 1000, 1000], &[0, 0, 0, 999], &[50, 50, 50, 1]));
        assert_eq!(*order.current(), vec![0, 1, 2, 3], "the pinned two first, then the tiers");
        let order = DynamicOrder::new(&fakes(&[R, R, R, R]), 2, EVERY_REQUEST);
        order.observe(&report(&[1000, 1000, 1000, 1000], &[0, 0, 0, 999], &[50, 50, 50, 1]));
        assert_eq!(*order.current(), vec![0, 1, 3, 2]);
    }

    #[test]
    fn publishes_only_when_it_is_time_and_old_counts_fade() {
        let settings = Settings { every_requests: 3, every: Duration::from_secs(3600), decay: 0.5 };
        let order = DynamicOrder::new(&fakes(&[R, R]), 0, settings);
        let favour_1 = report(&[100, 100], &[0, 100], &[1, 1]);
        order.observe(&favour_1);
        order.observe(&favour_1);
        assert_eq!(*order.current(), vec![0, 1], "two requests: not yet");
        order.observe(&favour_1);
        assert_eq!(*order.current(), vec![1, 0]);
        let (stats, publications) = order.stats();
        assert_eq!(publications, 1);
        assert_eq!((stats[1].evaluations, stats[1].rejections), (150.0, 150.0), "300 and 300, halved");
    }

    #[test]
    fn modes_parse_and_name_themselves() {
        assert_eq!("dynamic".parse::<OrderingMode>(), Ok(OrderingMode::Dynamic));
        assert_eq!("static".parse::<OrderingMode>().map(OrderingMode::name), Ok("static"));
        assert_eq!(
            "Dynamic".parse::<OrderingMode>(),
            Err("must be \"static\" or \"dynamic\", found \"Dynamic\"".to_string())
        );
    }
}
