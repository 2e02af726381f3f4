//! The engine: prepares the request once (the pod, and each predicate's state by plan slot), then
//! checks the pod against every candidate node on the parallel evaluator with the plan's
//! predicates and the nominated-pod double pass, and reports what it did. It runs whatever plugins
//! the plan holds and names none of them.

pub mod combine;
pub mod evaluator;
pub mod fits;
pub mod observe;
pub mod ordering;
pub mod plan;
pub mod preempt;
pub mod prepared;
pub mod prioritize;

use std::sync::Arc;

pub use evaluator::{CancelFlag, Cancelled, Evaluator};
pub use observe::{FilterReport, Timed};
pub use ordering::{OrderingMode, PredicateOrdering};
pub use plan::{Plan, WeightedPriority};
pub use prepared::{Prepared, States};

pub use crate::framework::{Candidate, ClusterView, PodContext};
use crate::framework::{MissingState, Reason};

/// What the engine found for one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Fits,
    /// The reasons, in the order the predicates ran.
    Fails(Vec<Reason>),
    /// The node is not in the cluster model.
    Unknown,
}

impl Verdict {
    /// Fits when there is no reason against the node.
    pub fn of(reasons: Vec<Reason>) -> Verdict {
        if reasons.is_empty() {
            Verdict::Fits
        } else {
            Verdict::Fails(reasons)
        }
    }

    pub fn fits(&self) -> bool {
        matches!(self, Verdict::Fits)
    }
}

/// Why a request's evaluation did not finish.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvaluationError {
    #[error(transparent)]
    Cancelled(#[from] Cancelled),
    #[error(transparent)]
    MissingState(#[from] MissingState),
}

/// The verdict of every candidate, in candidate order, and what the engine did to reach them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filtered {
    pub verdicts: Vec<Verdict>,
    pub report: FilterReport,
}

/// Checks the pod against every candidate, in parallel; verdicts come back in candidate order.
/// The candidates `timed` picks have every predicate timed (the metrics' sample). The plan's dynamic
/// order, if it has one, learns from the report.
pub fn filter(
    evaluator: &Evaluator,
    plan: &Plan,
    prepared: &Prepared,
    candidates: &[Candidate],
    cancel: &CancelFlag,
    timed: impl Into<Timed>,
) -> Result<Filtered, EvaluationError> {
    let filtered = filter_unobserved(evaluator, plan, prepared, candidates, cancel, timed)?;
    plan.observe(&filtered.report);
    Ok(filtered)
}

/// [`filter`] without teaching the plan's dynamic order anything: what `explain` and `whatif` ask
/// the extender, which must not change the order the served `/filter` runs in.
pub fn filter_unobserved(
    evaluator: &Evaluator,
    plan: &Plan,
    prepared: &Prepared,
    candidates: &[Candidate],
    cancel: &CancelFlag,
    timed: impl Into<Timed>,
) -> Result<Filtered, EvaluationError> {
    let timed = timed.into();
    let runs = evaluator.map_indexed(candidates, cancel, |i, candidate| match candidate {
        Candidate::Unknown(_) => Ok(None),
        Candidate::Known(node, nominated) => fits::run_node(plan, prepared, node, nominated, timed.node(i)).map(Some),
    })?;
    let mut report = FilterReport::new(plan.predicates.len(), timed.any());
    let mut verdicts = Vec::with_capacity(runs.len());
    for run in runs {
        let Some(run) = run? else {
            verdicts.push(Verdict::Unknown);
            continue;
        };
        report.count_node_in(&run.rejected, plan.always_check_all, prepared.order.as_deref().map(Vec::as_slice));
        report.second_passes += u64::from(run.second_pass);
        report.timings.extend(run.timings);
        verdicts.push(Verdict::of(run.reasons));
    }
    Ok(Filtered { verdicts, report })
}

/// What one filter or prioritize request needs, owned, so it can move onto the evaluator's pool.
#[derive(Debug)]
pub struct RequestJob {
    pub plan: Arc<Plan>,
    pub pod: crate::cluster::objects::Pod,
    pub snapshot: Arc<crate::cluster::Snapshot>,
    pub candidates: Vec<Candidate>,
    /// The candidates came as `Nodes`: their objects stand in for the cached ones.
    pub from_request_nodes: bool,
    pub cancel: CancelFlag,
    /// The candidates whose predicates are timed (the metrics' sample).
    pub timed: Timed,
}

impl RequestJob {
    fn view(&self) -> ClusterView<'_> {
        if self.from_request_nodes {
            ClusterView::with_request_nodes(&self.snapshot, &self.candidates)
        } else {
            ClusterView::of(&self.snapshot)
        }
    }

    /// Prepares the request (once, on the pool: the cluster-wide counts can take a while) and
    /// checks the pod against every candidate.
    pub fn filter(&self, evaluator: &Evaluator) -> Result<Filtered, EvaluationError> {
        self.filter_prepared(evaluator, &self.prepare())
    }

    /// The predicates' per-request state: [`RequestJob::filter`]'s first half.
    pub fn prepare(&self) -> Prepared {
        Prepared::new(&self.plan, self.pod.clone(), &self.view())
    }

    /// Checks the pod, prepared by [`RequestJob::prepare`], against every candidate.
    pub fn filter_prepared(&self, evaluator: &Evaluator, prepared: &Prepared) -> Result<Filtered, EvaluationError> {
        filter(evaluator, &self.plan, prepared, &self.candidates, &self.cancel, self.timed)
    }

    /// Scores every candidate with the plan's priorities (each prepares its own counts).
    pub fn prioritize(&self, evaluator: &Evaluator) -> Result<Vec<i64>, Cancelled> {
        let view = self.view();
        let pod = PodContext::for_version(self.pod.clone(), view.snapshot.scheduler_version());
        prioritize::prioritize(evaluator, &self.plan, &pod, &view, &self.candidates, &self.cancel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::Snapshot;
    use crate::testing::{NodeBuilder, PodBuilder};

    /// 5,000 nodes of every kind of outcome: full, tainted, cordoned, not ready, mislabelled.
    fn big_cluster() -> (Snapshot, Vec<String>) {
        let mut nodes = Vec::new();
        let mut pods = Vec::new();
        for i in 0..5000 {
            let name = format!("node-{i:04}");
            let mut b = NodeBuilder::new(&name).label("zone", if i % 3 == 0 { "a" } else { "b" });
            match i % 7 {
                0 => b = b.taint("dedicated", "x", "NoSchedule"),
                1 => b = b.unschedulable(),
                2 => b = b.condition("Ready", "False"),
                _ => {}
            }
            nodes.push(b.build());
            pods.push(
                PodBuilder::new(&format!("p-{i}"))
                    .node(&name)
                    .req(&[("cpu", &format!("{}m", (i * 37) % 4000))])
                    .build(),
            );
            if i % 11 == 0 {
                pods.push(
                    PodBuilder::new(&format!("nom-{i}")).nominated(&name).priority(100).req(&[("cpu", "500m")]).build(),
                );
            }
        }
        let names = nodes.iter().map(|n| n.metadata.name.clone()).collect();
        (Snapshot::build(nodes, pods), names)
    }

    #[test]
    fn parallelism_1_and_16_agree_on_5000_nodes_in_input_order() {
        let (snapshot, mut names) = big_cluster();
        names.reverse(); // input order, not the snapshot's order, must be kept
        let candidates: Vec<Candidate> = names
            .iter()
            .map(|n| snapshot.candidate(n).map(|(node, nom)| Candidate::Known(node, nom)).unwrap())
            .collect();
        let pod = PodBuilder::new("incoming").node_selector("zone", "b").req(&[("cpu", "1")]).build();
        let plan = Plan::default_plan();
        let pod = Prepared::new(&plan, pod, &ClusterView::of(&snapshot));
        let serial = filter(&Evaluator::new(1).unwrap(), &plan, &pod, &candidates, &CancelFlag::new(), false).unwrap();
        let parallel =
            filter(&Evaluator::new(16).unwrap(), &plan, &pod, &candidates, &CancelFlag::new(), true).unwrap();
        assert_eq!(serial.report.evaluations, parallel.report.evaluations);
        assert!(serial.report.timings.is_empty(), "an untimed request times nothing");
        // Every evaluation is timed (a second pass times its predicates once more).
        let evaluated: u64 = parallel.report.evaluations.iter().sum();
        assert!(parallel.report.timings.len() as u64 >= evaluated && evaluated > 5000);
        let (serial, parallel) = (serial.verdicts, parallel.verdicts);
        assert_eq!(serial, parallel);
        // Each verdict belongs to its own node: recompute a few one by one.
        for i in [0, 1, 2, 3, 10, 4999] {
            let node = snapshot.node_info(&names[i]).unwrap();
            let alone = fits::fits_on_node(&plan, &pod, &node, snapshot.nominated_on(&names[i])).unwrap();
            assert_eq!(
                parallel[i],
                if alone.is_empty() { Verdict::Fits } else { Verdict::Fails(alone) },
                "{}",
                names[i]
            );
        }
        let fits = parallel.iter().filter(|v| v.fits()).count();
        assert!(fits > 0 && fits < 5000, "a mix of outcomes, got {fits} fits");
    }
}
