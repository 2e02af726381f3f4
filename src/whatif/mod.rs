//! `predicate-extender whatif` (and `POST <urlPrefix>/whatif`): what a new Policy would change on
//! the cluster as it is, before it is rolled out. One scheduler's pods are evaluated under the
//! current plan and the new one:
//!
//! - `pending.rs`: every pending pod on every node (explain's evaluation: the double pass, every
//!   predicate, the ranking), so the pods that become unschedulable or schedulable, and the ones
//!   whose best node changes;
//! - `running.rs`: every running pod on its own node as if it were being placed now (itself taken
//!   off the node, upstream's `RemovePod`), in parallel on the evaluator, so the pods that would no
//!   longer fit where they run, and on how many other nodes each would;
//! - `tally.rs`: node checks rejected per predicate, the stopped pods grouped by reason;
//! - `report.rs`: the report, which is also the JSON; `render.rs`: the tables.

pub mod pending;
pub mod render;
pub mod report;
pub mod running;
pub mod tally;

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::explain::kube_scheduler::KubeSchedulerConfig;

pub use report::Report;

use crate::explain::ExplainError;
use predicate_engine::cluster::{PodInfo, Snapshot};
use predicate_engine::engine::{CancelFlag, Cancelled, Evaluator, Plan};
use predicate_engine::framework::MissingState;
use report::{PlanSummary, Priorities, SchedulerPods, Weight, WeightChange};

/// How many running pods are scored under both plans when not told.
pub const DEFAULT_SAMPLE: usize = 100;

/// Why `whatif` could not run. Each message names the flag or file at fault.
#[derive(Debug, thiserror::Error)]
pub enum WhatifError {
    /// The cluster file or the demo cluster could not be read.
    #[error(transparent)]
    Cluster(#[from] predicate_engine::cluster::source::SourceError),
    /// A Policy file is invalid.
    #[error("{flag}: {source}")]
    Policy { flag: &'static str, source: predicate_engine::policy::PolicyError },
    /// The live cluster could not be listed.
    #[error("{0}")]
    Live(String),
    /// The evaluator could not start.
    #[error("cannot start the node evaluator: {0}")]
    Evaluator(String),
    /// `--scheduler-config` could not be read.
    #[error("--scheduler-config {0}")]
    SchedulerConfig(#[from] crate::explain::kube_scheduler::ConfigError),
    /// The evaluation was cancelled (the server's request deadline).
    #[error(transparent)]
    Cancelled(#[from] Cancelled),
    /// A predicate's prepared state was missing: the evaluation is not to be trusted.
    #[error(transparent)]
    MissingState(#[from] MissingState),
}

impl From<ExplainError> for WhatifError {
    fn from(e: ExplainError) -> Self {
        match e {
            ExplainError::Cancelled(c) => WhatifError::Cancelled(c),
            ExplainError::MissingState(m) => WhatifError::MissingState(m),
            ExplainError::Cluster(c) => WhatifError::Cluster(c),
            ExplainError::Evaluator(e) => WhatifError::Evaluator(e),
            ExplainError::SchedulerConfig(c) => WhatifError::SchedulerConfig(c),
            // `build` is called without `--node` and on a loaded pod: nothing else can come back.
            other => WhatifError::Live(other.to_string()),
        }
    }
}

/// A plan and where it came from (a file, `served`, `default`).
pub struct Source<'a> {
    pub plan: &'a Plan,
    pub name: String,
}

/// What to compare, on what.
pub struct Input<'a> {
    pub current: Source<'a>,
    pub new: Source<'a>,
    pub snapshot: &'a Snapshot,
    /// Only pods with this `spec.schedulerName`.
    pub scheduler: &'a str,
    /// Running pods scored under both plans for the ranking.
    pub sample: usize,
    /// kube-scheduler's filters in front of the extender, for each pod's summary line.
    pub kube_scheduler: &'a KubeSchedulerConfig,
}

/// The scheduler's pending and running pods (on any node name), by namespace and name.
fn pods_of(snapshot: &Snapshot, scheduler: &str) -> (Vec<Arc<PodInfo>>, Vec<Arc<PodInfo>>) {
    snapshot
        .pod_infos()
        .filter(|p| p.pod.spec.scheduler() == scheduler)
        .cloned()
        .partition(|p| p.pod.spec.node_name.is_empty())
}

/// The schedulers of the cluster's pods, with how many pods each, most first (then by name).
fn pods_by_scheduler(snapshot: &Snapshot) -> Vec<SchedulerPods> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for pod in snapshot.pod_infos() {
        *counts.entry(pod.pod.spec.scheduler()).or_default() += 1;
    }
    let mut out: Vec<SchedulerPods> =
        counts.into_iter().map(|(scheduler, pods)| SchedulerPods { scheduler: scheduler.to_string(), pods }).collect();
    out.sort_by(|a, b| b.pods.cmp(&a.pods).then_with(|| a.scheduler.cmp(&b.scheduler)));
    out
}

/// Compares the two plans on the snapshot.
pub fn evaluate(input: &Input<'_>, evaluator: &Evaluator, cancel: &CancelFlag) -> Result<Report, WhatifError> {
    let (pending_pods, running_pods) = pods_of(input.snapshot, input.scheduler);
    let other_schedulers =
        if pending_pods.is_empty() && running_pods.is_empty() { pods_by_scheduler(input.snapshot) } else { Vec::new() };
    let plans = [input.current.plan, input.new.plan];
    let pending = pending::evaluate(&plans, &pending_pods, input.snapshot, input.kube_scheduler, evaluator, cancel)?;
    let running = running::evaluate(&plans, &running_pods, input.snapshot, evaluator, cancel)?;
    let sample = running::ranking_sample(
        &plans,
        &running_pods,
        input.sample,
        input.snapshot,
        input.kube_scheduler,
        evaluator,
        cancel,
    )?;

    let mut rejections = pending.rejections.clone();
    rejections.add(&running.rejections);
    let predicates = rejections.per_predicate(&plans);
    let moves = pending.ranking.iter().chain(&sample);
    let (sampled, changed, rank_sum) = moves.fold((0, 0, 0usize), |(n, changed, sum), m| {
        (n + 1, changed + usize::from(m.changed), sum + m.rank_of_current_best)
    });
    Ok(Report {
        scheduler: input.scheduler.to_string(),
        current: summary(&input.current),
        new: summary(&input.new),
        nodes: input.snapshot.node_count(),
        other_schedulers,
        pending: pending.report,
        running: running.report,
        predicates,
        priorities: Priorities {
            weights: weights(&plans),
            sampled,
            best_node_changed: changed,
            mean_rank_of_current_best: (sampled > 0).then(|| rank_sum as f64 / sampled as f64),
        },
    })
}

fn summary(source: &Source<'_>) -> PlanSummary {
    PlanSummary {
        source: source.name.clone(),
        predicates: source.plan.predicates.iter().map(|p| p.name().to_string()).collect(),
        priorities: source
            .plan
            .priorities
            .iter()
            .map(|w| Weight { name: w.priority.name().to_string(), weight: w.weight })
            .collect(),
    }
}

/// Every priority of either plan, the current plan's first, with its weight in each.
fn weights(plans: &[&Plan; 2]) -> Vec<WeightChange> {
    let weight = |plan: &Plan, name: &str| {
        plan.priorities.iter().filter(|w| w.priority.name() == name).map(|w| w.weight).reduce(|a, b| a + b)
    };
    let mut seen = BTreeMap::new();
    let mut out = Vec::new();
    for w in plans.iter().flat_map(|p| &p.priorities) {
        let name = w.priority.name();
        if seen.insert(name.to_string(), ()).is_none() {
            out.push(WeightChange {
                name: name.to_string(),
                before: weight(plans[0], name),
                after: weight(plans[1], name),
            });
        }
    }
    out
}

/// One pod scored under both plans.
#[derive(Debug, Clone, Copy)]
pub struct RankMove {
    /// The best node differs.
    pub changed: bool,
    /// Where the current best node ranks under the new plan (past the last when it no longer
    /// fits).
    pub rank_of_current_best: usize,
}
