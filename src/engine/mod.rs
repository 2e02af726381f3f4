//! The engine: prepares the pod once (`PodContext`), then checks it against every candidate node on
//! the parallel evaluator with the ordered predicates and the nominated-pod double pass.

pub mod combine;
pub mod evaluator;
pub mod fits;
pub mod pod_context;
pub mod preempt;
pub mod prioritize;
pub mod view;

use std::sync::Arc;
use std::time::Duration;

pub use evaluator::{CancelFlag, Cancelled, Evaluator};
pub use pod_context::PodContext;
pub use view::ClusterView;

use crate::cluster::snapshot::Nominated;
use crate::cluster::NodeInfo;
use crate::policy::Plan;
use crate::predicates::Reason;

/// A node a request asks about.
#[derive(Debug, Clone)]
pub enum Candidate {
    /// A node with what runs on it, and the pods nominated to it.
    Known(NodeInfo, Nominated),
    /// A name the cluster model does not know (its cache may lag a new node).
    Unknown(String),
}

impl Candidate {
    /// A node named in `NodeNames`, as the model has it: known, or unknown (the cache may lag).
    pub fn by_name(snapshot: &crate::cluster::Snapshot, name: String) -> Candidate {
        match snapshot.candidate(&name) {
            Some((node, nominated)) => Candidate::Known(node, nominated),
            None => Candidate::Unknown(name),
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Candidate::Known(n, _) => n.name(),
            Candidate::Unknown(name) => name,
        }
    }
}

/// What the engine found for one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Fits,
    /// The reasons, in predicate order.
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

/// Checks the pod against every candidate, in parallel; verdicts come back in candidate order.
pub fn filter(
    evaluator: &Evaluator,
    plan: &Plan,
    pod: &PodContext,
    candidates: &[Candidate],
    cancel: &CancelFlag,
) -> Result<Vec<Verdict>, Cancelled> {
    evaluator.map(candidates, cancel, |candidate| match candidate {
        Candidate::Unknown(_) => Verdict::Unknown,
        Candidate::Known(node, nominated) => Verdict::of(fits::fits_on_node(plan, pod, node, nominated)),
    })
}

/// Files one timed predicate run (plan slot, reasons, duration) into a node's own `T`.
pub type Recorder<T> = dyn Fn(&mut T, usize, &[Reason], Duration) + Sync;

/// [`filter`], timing every predicate on every node (a sampled request): `record` files each
/// timing into the node's own `T`, returned beside its verdict, so the threads share nothing
/// while they time.
pub fn filter_timed<T: Default + Send>(
    evaluator: &Evaluator,
    plan: &Plan,
    pod: &PodContext,
    candidates: &[Candidate],
    cancel: &CancelFlag,
    record: &Recorder<T>,
) -> Result<Vec<(Verdict, T)>, Cancelled> {
    evaluator.map(candidates, cancel, |candidate| {
        let mut timings = T::default();
        let verdict = match candidate {
            Candidate::Unknown(_) => Verdict::Unknown,
            Candidate::Known(node, nominated) => {
                let mut observe =
                    |slot: usize, reasons: &[Reason], took: Duration| record(&mut timings, slot, reasons, took);
                Verdict::of(fits::fits_on_node_timed(plan, pod, node, nominated, &mut observe))
            }
        };
        (verdict, timings)
    })
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
}

impl RequestJob {
    fn view(&self) -> ClusterView<'_> {
        if self.from_request_nodes {
            ClusterView::with_request_nodes(&self.snapshot, &self.candidates)
        } else {
            ClusterView::of(&self.snapshot)
        }
    }

    /// Prepares the pod (once, on the pool: the cluster-wide counts can take a while) and checks
    /// it against every candidate.
    pub fn filter(&self, evaluator: &Evaluator) -> Result<Vec<Verdict>, Cancelled> {
        let view = self.view();
        let pod = PodContext::for_request(self.pod.clone(), &view, &self.plan);
        filter(evaluator, &self.plan, &pod, &self.candidates, &self.cancel)
    }

    /// [`RequestJob::filter`] on a sampled request: see [`filter_timed`].
    pub fn filter_timed<T: Default + Send>(
        &self,
        evaluator: &Evaluator,
        record: &Recorder<T>,
    ) -> Result<Vec<(Verdict, T)>, Cancelled> {
        let view = self.view();
        let pod = PodContext::for_request(self.pod.clone(), &view, &self.plan);
        filter_timed(evaluator, &self.plan, &pod, &self.candidates, &self.cancel, record)
    }

    /// Scores every candidate with the plan's priorities (each prepares its own counts).
    pub fn prioritize(&self, evaluator: &Evaluator) -> Result<Vec<i64>, Cancelled> {
        let view = self.view();
        let mut pod = PodContext::new(self.pod.clone());
        pod.volumes = self.snapshot.volumes().clone();
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
        let pod = PodContext::new(PodBuilder::new("incoming").node_selector("zone", "b").req(&[("cpu", "1")]).build());
        let plan = Plan::default_plan();
        let serial = filter(&Evaluator::new(1).unwrap(), &plan, &pod, &candidates, &CancelFlag::new()).unwrap();
        let parallel = filter(&Evaluator::new(16).unwrap(), &plan, &pod, &candidates, &CancelFlag::new()).unwrap();
        assert_eq!(serial, parallel);
        // Each verdict belongs to its own node: recompute a few one by one.
        for i in [0, 1, 2, 3, 10, 4999] {
            let node = snapshot.node_info(&names[i]).unwrap();
            let alone = fits::fits_on_node(&plan, &pod, &node, snapshot.nominated_on(&names[i]));
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
