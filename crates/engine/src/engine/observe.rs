//! What the engine reports about a `/filter` request: per plan slot, how many nodes each
//! predicate ran on and how many it rejected, how many nodes took a second nominated-pod pass,
//! and on a sampled request how long each predicate took on each node. The engine only counts;
//! what reads the report (the metrics) never steers it.

use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::framework::Reason;

/// What a predicate said about one node, in upstream's status codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// It passed.
    Success,
    /// It failed, and preemption could resolve every reason.
    Unschedulable,
    /// It failed with a reason preemption cannot resolve.
    UnschedulableAndUnresolvable,
}

impl Outcome {
    pub const ALL: [Outcome; 3] = [Outcome::Success, Outcome::Unschedulable, Outcome::UnschedulableAndUnresolvable];

    /// The outcome of a predicate that gave these reasons.
    pub fn of(reasons: &[Reason]) -> Outcome {
        match reasons {
            [] => Outcome::Success,
            _ if reasons.iter().all(Reason::is_resolvable) => Outcome::Unschedulable,
            _ => Outcome::UnschedulableAndUnresolvable,
        }
    }

    /// Upstream's name of the status code.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Success => "Success",
            Outcome::Unschedulable => "Unschedulable",
            Outcome::UnschedulableAndUnresolvable => "UnschedulableAndUnresolvable",
        }
    }
}

/// How long one predicate (its plan slot) took on one node, and what it said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    pub slot: usize,
    pub outcome: Outcome,
    pub took: Duration,
}

/// The plan slots of the predicates that rejected a node in the pass that decided it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Rejected {
    #[default]
    None,
    One(usize),
    /// With `alwaysCheckAllPredicates`, several may.
    Many(Vec<usize>),
}

impl Rejected {
    pub(crate) fn add(&mut self, slot: usize) {
        *self = match std::mem::take(self) {
            Rejected::None => Rejected::One(slot),
            Rejected::One(first) => Rejected::Many(vec![first, slot]),
            Rejected::Many(mut slots) => {
                slots.push(slot);
                Rejected::Many(slots)
            }
        };
    }

    pub fn slots(&self) -> &[usize] {
        match self {
            Rejected::None => &[],
            Rejected::One(slot) => std::slice::from_ref(slot),
            Rejected::Many(slots) => slots,
        }
    }
}

/// What one `/filter` request did, counted by plan slot.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilterReport {
    /// Per plan slot: the nodes the predicate ran on. A node counts once, in the pass that
    /// decided it (a second nominated-pod pass is not counted again).
    pub evaluations: Vec<u64>,
    /// Per plan slot: the nodes the predicate rejected.
    pub rejections: Vec<u64>,
    /// Nodes checked a second time without their nominated pods (pass 1 with them passed).
    pub second_passes: u64,
    /// Whether any candidate's predicates were timed.
    pub timed: bool,
    /// Every predicate run on the timed candidates (both passes), in no order.
    pub timings: Vec<Timing>,
}

impl FilterReport {
    /// An empty report for a plan of `slots` predicates.
    pub fn new(slots: usize, timed: bool) -> FilterReport {
        FilterReport { evaluations: vec![0; slots], rejections: vec![0; slots], timed, ..FilterReport::default() }
    }

    /// Counts one known node: the predicates that rejected it in the deciding pass; without
    /// `always_check_all` the loop ran the predicates up to the first of them (all of them when
    /// none did). Test support (the metrics' tests build reports with it).
    #[cfg(any(test, feature = "test-util"))]
    pub fn count_node(&mut self, rejected: &Rejected, always_check_all: bool) {
        self.count_node_in(rejected, always_check_all, None);
    }

    /// [`FilterReport::count_node`] for a request that ran the predicates in `order` (plan slots;
    /// `None`: plan order).
    pub(crate) fn count_node_in(&mut self, rejected: &Rejected, always_check_all: bool, order: Option<&[usize]>) {
        let slots = self.evaluations.len();
        let slot_at = |at: usize| order.and_then(|o| o.get(at).copied()).unwrap_or(at);
        let ran = match rejected.slots().first() {
            Some(&first) if !always_check_all => {
                (0..slots).position(|at| slot_at(at) == first).map_or(slots, |at| at + 1)
            }
            _ => slots,
        };
        for at in 0..ran {
            if let Some(e) = self.evaluations.get_mut(slot_at(at)) {
                *e += 1;
            }
        }
        for &slot in rejected.slots() {
            if let Some(r) = self.rejections.get_mut(slot) {
                *r += 1;
            }
        }
    }
}

/// The share, in percent, of the predicate runs timed one by one (upstream's
/// `pluginMetricsSamplePercent`).
pub const SAMPLE_PERCENT: u32 = 10;

/// Which candidates of a /filter have their predicates timed: none, every one, or one in
/// `stride` by position, from `offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Timed {
    #[default]
    Never,
    Every,
    OneIn {
        stride: usize,
        offset: usize,
    },
}

impl Timed {
    /// Whether the candidate at `position` is timed.
    pub fn node(self, position: usize) -> bool {
        match self {
            Timed::Never => false,
            Timed::Every => true,
            Timed::OneIn { stride, offset } => position % stride.max(1) == offset,
        }
    }

    /// Whether any candidate is.
    pub fn any(self) -> bool {
        self != Timed::Never
    }
}

impl From<bool> for Timed {
    fn from(every: bool) -> Timed {
        if every {
            Timed::Every
        } else {
            Timed::Never
        }
    }
}

/// Picks `percent`% of the candidates of every request to time: upstream times every node of
/// `pluginMetricsSamplePercent`% of its scheduling cycles; the same share of observations taken
/// from every request, one candidate in `100 / percent` from a random offset, puts no request at
/// the tail (a request that timed all of its 5,000 nodes took three times as long in evaluation).
#[derive(Debug)]
pub struct Sampler {
    percent: u32,
    next: AtomicU64,
    key: std::hash::RandomState,
}

impl Default for Sampler {
    fn default() -> Self {
        Sampler::new(SAMPLE_PERCENT)
    }
}

impl Sampler {
    pub fn new(percent: u32) -> Self {
        Sampler { percent, next: AtomicU64::new(0), key: Default::default() }
    }

    /// Which candidates of this request to time.
    pub fn pick(&self) -> Timed {
        match self.percent {
            0 => Timed::Never,
            p if p >= 100 => Timed::Every,
            p => {
                let stride = (100 / p).max(1) as usize;
                let random = self.key.hash_one(self.next.fetch_add(1, Ordering::Relaxed));
                Timed::OneIn { stride, offset: (random % stride as u64) as usize }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sampler_times_its_share_of_every_request_from_varying_offsets() {
        let (none, all, tenth) = (Sampler::new(0), Sampler::new(100), Sampler::new(10));
        assert!((0..1000).all(|_| none.pick() == Timed::Never && !none.pick().node(0)));
        assert!((0..1000).all(|_| all.pick() == Timed::Every && all.pick().node(7)));
        let mut offsets = std::collections::BTreeSet::new();
        for _ in 0..1000 {
            let timed = tenth.pick();
            let Timed::OneIn { offset, .. } = timed else { panic!("{timed:?}") };
            offsets.insert(offset);
            let kept = (0..5000).filter(|&i| timed.node(i)).count();
            assert_eq!(kept, 500, "one candidate in ten of every request");
        }
        assert_eq!(offsets.len(), 10, "every offset comes up in 1,000 requests");
        let third = Sampler::new(30).pick();
        assert!(matches!(third, Timed::OneIn { stride: 3, .. }), "30%: one candidate in three, {third:?}");
    }

    #[test]
    fn nodes_count_up_to_their_first_rejection_or_all_with_always_check_all() {
        let mut report = FilterReport::new(3, false);
        report.count_node(&Rejected::None, false);
        report.count_node(&Rejected::One(0), false);
        report.count_node(&Rejected::One(1), false);
        report.count_node(&Rejected::One(2), false);
        // Slot 0 ran on the 4 nodes, slot 1 on the 3 that passed slot 0, slot 2 on 2.
        assert_eq!((report.evaluations.clone(), report.rejections.clone()), (vec![4, 3, 2], vec![1, 1, 1]));
        let mut always = FilterReport::new(3, false);
        always.count_node(&Rejected::None, true);
        always.count_node(&Rejected::Many(vec![0, 2]), true);
        assert_eq!((always.evaluations, always.rejections), (vec![2, 2, 2], vec![1, 0, 1]));
    }

    #[test]
    fn nodes_count_along_the_order_the_request_ran() {
        let mut report = FilterReport::new(3, false);
        let order = [2, 0, 1];
        report.count_node_in(&Rejected::One(2), false, Some(&order));
        report.count_node_in(&Rejected::One(0), false, Some(&order));
        report.count_node_in(&Rejected::None, false, Some(&order));
        // Slot 2 ran first, on all 3 nodes; slot 0 on the 2 that passed it; slot 1 on 1.
        assert_eq!((report.evaluations, report.rejections), (vec![2, 1, 3], vec![1, 0, 1]));
    }

    #[test]
    fn outcomes_follow_upstreams_codes() {
        assert_eq!(Outcome::of(&[]).name(), "Success");
        assert_eq!(Outcome::of(&[Reason::resolvable("r")]).name(), "Unschedulable");
        assert_eq!(
            Outcome::of(&[Reason::resolvable("r"), Reason::unresolvable("u")]).name(),
            "UnschedulableAndUnresolvable"
        );
    }
}
