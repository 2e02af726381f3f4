//! Counting for the what-if report: node checks rejected per predicate under each plan, and the
//! pods that stop fitting grouped by the predicate and reason that decide.

use std::collections::BTreeMap;

use crate::explain::failures::deciding_pass;
use crate::explain::report::NodeReport;
use crate::whatif::report::{PredicateRejections, ReasonGroup, StoppedPod};
use predicate_engine::engine::Plan;

/// At most this many pods are named per reason group.
pub const EXAMPLES: usize = 5;

/// Per plan (0: current, 1: new), per predicate, how many node checks it rejected.
#[derive(Debug, Clone, Default)]
pub struct Rejections([BTreeMap<String, usize>; 2]);

impl Rejections {
    /// Counts the predicates that reject in the pass that decided the node.
    pub fn count(&mut self, plan: usize, node: &NodeReport) {
        for v in deciding_pass(node).iter().filter(|v| !v.fits) {
            *self.0[plan].entry(v.predicate.clone()).or_default() += 1;
        }
    }

    pub fn add(&mut self, other: &Rejections) {
        for (mine, theirs) in self.0.iter_mut().zip(&other.0) {
            for (name, n) in theirs {
                *mine.entry(name.clone()).or_default() += n;
            }
        }
    }

    /// Every predicate of either plan (the current plan's order first), with its count under each
    /// plan that runs it.
    pub fn per_predicate(&self, plans: &[&Plan; 2]) -> Vec<PredicateRejections> {
        let runs = |plan: &Plan, name: &str| plan.predicates.iter().any(|p| p.name() == name);
        let mut out: Vec<PredicateRejections> = Vec::new();
        for name in plans.iter().flat_map(|p| p.predicates.iter().map(|p| p.name())) {
            if out.iter().any(|r| r.predicate == name) {
                continue;
            }
            let count = |i: usize| runs(plans[i], name).then(|| self.0[i].get(name).copied().unwrap_or(0));
            out.push(PredicateRejections { predicate: name.to_string(), before: count(0), after: count(1) });
        }
        out
    }
}

/// The stopped pods by (predicate, reason), largest group first, then by name; a pod counts under
/// each of its reasons.
pub fn group(stopped: &[StoppedPod]) -> Vec<ReasonGroup> {
    let mut groups: BTreeMap<(String, String), ReasonGroup> = BTreeMap::new();
    for s in stopped {
        for r in &s.rejected_by {
            let (predicate, reason) = (&r.predicate, &r.reason);
            let g = groups.entry((predicate.clone(), reason.clone())).or_insert_with(|| ReasonGroup {
                predicate: predicate.clone(),
                reason: reason.clone(),
                pods: 0,
                fit_nowhere: 0,
                examples: Vec::new(),
            });
            g.pods += 1;
            g.fit_nowhere += usize::from(s.fits_elsewhere == 0);
            if g.examples.len() < EXAMPLES {
                g.examples.push(s.pod.clone());
            }
        }
    }
    let mut out: Vec<ReasonGroup> = groups.into_values().collect();
    out.sort_by(|a, b| b.pods.cmp(&a.pods).then_with(|| (&a.predicate, &a.reason).cmp(&(&b.predicate, &b.reason))));
    out
}
