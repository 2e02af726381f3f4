//! `predicate-extender explain` (and `POST <urlPrefix>/explain`): runs the engine on one pod with
//! `alwaysCheckAllPredicates` on over every node and reports, per node, every predicate's verdict
//! and reason (both passes of the nominated-pod double pass where there are two), kube-scheduler's
//! summary line, the failing nodes grouped by reason, hints where the data says what would change
//! the answer, and the scores of the feasible nodes. The engine does all the work (`double_pass`,
//! `run_predicates_observed`, `prioritize::breakdown` and `combine`); this module only collects
//! and prints.
//!
//! - `source.rs`: the cluster as it is now (a [`ClusterSource`] → `Snapshot`) and the pod file;
//! - `report.rs`: the [`Report`], which is also the JSON output;
//! - `kube_scheduler/`: what kube-scheduler reports, the "0/6 nodes are available: ..." line;
//! - `failures.rs`: the failing nodes grouped by predicate and reason;
//! - `node_facts.rs`, `hints.rs`: what would change the answer;
//! - `view.rs`: which of the report a person sees (overview, `--node`, `--all`), as a table;
//! - `overview.rs`: the default table, sized for a large cluster;
//! - `table.rs`: the aligned, optionally coloured, table and the full report (`--all`).

pub mod failures;
pub mod hints;
pub mod kube_scheduler;
pub mod node_facts;
pub mod overview;
pub mod report;
pub mod source;
pub mod table;
pub mod view;

use std::path::PathBuf;

pub use report::Report;

use crate::explain::kube_scheduler::KubeSchedulerConfig;
use crate::source::ClusterSource;
use predicate_engine::cluster::SchedulerVersion;
use predicate_engine::engine::evaluator::default_parallelism;
use predicate_engine::engine::{CancelFlag, Evaluator};
use predicate_engine::policy::{Overrides, Plan};

/// Why `explain` could not run. Each message names the flag or file at fault.
#[derive(Debug, thiserror::Error)]
pub enum ExplainError {
    /// The cluster file or the demo cluster could not be read.
    #[error(transparent)]
    Cluster(#[from] predicate_engine::cluster::source::SourceError),
    /// The Policy file is invalid.
    #[error(transparent)]
    Policy(#[from] predicate_engine::policy::PolicyError),
    /// The pod file does not hold exactly one Pod.
    #[error("--pod {file}: {message}")]
    Pod { file: String, message: String },
    /// The live cluster could not be listed.
    #[error("{0}")]
    Live(String),
    /// `--node` names a node the cluster does not have.
    #[error("--node {0}: the cluster has no such node")]
    UnknownNode(String),
    /// The evaluator could not start.
    #[error("cannot start the node evaluator: {0}")]
    Evaluator(String),
    /// The evaluation was cancelled (the server's request deadline).
    #[error(transparent)]
    Cancelled(#[from] predicate_engine::engine::Cancelled),
    /// A predicate's prepared state was missing: the evaluation is not to be trusted.
    #[error(transparent)]
    MissingState(#[from] predicate_engine::framework::MissingState),
    /// `--scheduler-config`.
    #[error("--scheduler-config {0}")]
    SchedulerConfig(#[from] kube_scheduler::ConfigError),
    /// Flags that do not go together.
    #[error("{0}")]
    Flags(String),
}

impl From<predicate_engine::engine::EvaluationError> for ExplainError {
    fn from(e: predicate_engine::engine::EvaluationError) -> Self {
        match e {
            predicate_engine::engine::EvaluationError::Cancelled(c) => ExplainError::Cancelled(c),
            predicate_engine::engine::EvaluationError::MissingState(m) => ExplainError::MissingState(m),
        }
    }
}

/// What to explain, and against what.
#[derive(Debug, Clone)]
pub struct ExplainRequest {
    pub pod_file: PathBuf,
    pub source: ClusterSource,
    /// Whose rules count the pods' requests, and whose default plugins run in front of the
    /// extender.
    pub scheduler_version: SchedulerVersion,
    /// kube-scheduler's configuration, for which of its filters run in front of the extender;
    /// `None`: the shipped one.
    pub scheduler_config: Option<PathBuf>,
    pub policy: Option<PathBuf>,
    /// The nodes the report keeps in full (`--node`); every node when empty.
    pub nodes: Vec<String>,
}

/// Loads the pod, the cluster and the plan, and explains the pod on every node.
pub fn explain(request: &ExplainRequest) -> Result<Report, ExplainError> {
    let pod = source::load_pod(&request.pod_file)?;
    // Before the cluster: a bad file fails before a live cluster is listed.
    let kube_scheduler = KubeSchedulerConfig::load(request.scheduler_config.as_deref())?;
    let mut snapshot = source::load_snapshot(&request.source, request.scheduler_version)?;
    // The pod is explained as if pending: a copy of it in the cluster (kubectl output of a pod
    // that already runs) must not hold its own resources.
    snapshot.remove_pod(&(pod.metadata.namespace.clone(), pod.metadata.name.clone()));
    let plan = match &request.policy {
        Some(path) => predicate_engine::policy::load(path, Overrides::default())?.plan,
        None => Plan::default_plan(),
    };
    let evaluator = Evaluator::new(default_parallelism()).map_err(|e| ExplainError::Evaluator(e.to_string()))?;
    let against = report::Against { plan: &plan, snapshot: &snapshot, kube_scheduler: &kube_scheduler };
    report::build(against, pod, &request.nodes, &evaluator, &CancelFlag::new())
}
