//! The what-if report: what the tables print, and, serialised, the `--format json` output and the
//! body of `POST <urlPrefix>/whatif` (documented in `docs/whatif.md`; field names and meanings
//! are stable, fields are only added).

use serde::Serialize;

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The scheduler whose pods were looked at (`spec.schedulerName`).
    pub scheduler: String,
    /// Where the current Policy came from: a file, `served`, or `default` (no Policy).
    pub current: PlanSummary,
    /// The new Policy.
    pub new: PlanSummary,
    /// Nodes of the cluster.
    pub nodes: usize,
    /// When the scheduler looked at has no pod in the cluster: the schedulers whose pods there
    /// are, with how many each, most first (so a report of nothing says why). Empty otherwise,
    /// and then left out of the JSON.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub other_schedulers: Vec<SchedulerPods>,
    pub pending: Pending,
    pub running: Running,
    /// Per predicate of either plan, how many node checks reject, under each plan.
    pub predicates: Vec<PredicateRejections>,
    pub priorities: Priorities,
}

/// A scheduler name and how many of the cluster's pods (pending and running) have it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct SchedulerPods {
    pub scheduler: String,
    pub pods: usize,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct PlanSummary {
    pub source: String,
    pub predicates: Vec<String>,
    pub priorities: Vec<Weight>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Weight {
    pub name: String,
    pub weight: i64,
}

/// The scheduler's pending pods, each evaluated on every node under both plans.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Pending {
    pub checked: usize,
    /// Pods with feasible nodes now and none under the new Policy.
    pub become_unschedulable: Vec<String>,
    /// Pods with no feasible node now and some under the new Policy.
    pub become_schedulable: Vec<String>,
    /// Pods schedulable under both whose best-scored node is another.
    pub best_node_changes: Vec<String>,
    /// `become_unschedulable` grouped by the node each fitted best now and what kube-scheduler
    /// would say of that node under the new Policy, largest first.
    pub become_unschedulable_by_reason: Vec<PodGroup>,
    /// `become_schedulable` grouped by the node each would fit best and what kube-scheduler says
    /// of that node now, largest first.
    pub become_schedulable_by_reason: Vec<PodGroup>,
    /// Every pending pod, by namespace and name.
    pub pods: Vec<PendingPod>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct PendingPod {
    pub pod: String,
    pub before: Placement,
    pub after: Placement,
}

/// Pods that move the same way on the same node.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct PodGroup {
    /// The node: the best one (or the first feasible) under the plan the pods fit.
    pub node: String,
    /// Who rejects the node under the other plan and why, as kube-scheduler counts it
    /// (`Plugin: reason`, `Extender: reason`).
    pub reason: String,
    /// By namespace and name.
    pub pods: Vec<String>,
}

/// One pod under one plan.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Placement {
    /// How many nodes it fits.
    pub feasible: usize,
    /// The best-scored feasible node (explain's rank 1); `null` when none fits or the plan has
    /// no priorities.
    pub best: Option<String>,
    /// kube-scheduler's summary line under this plan.
    pub summary: String,
}

/// The scheduler's running pods, each checked on its own node as if it were being placed now
/// (itself taken off the node).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Running {
    pub checked: usize,
    /// Pods on a node the model has no Node object for: not checked.
    pub on_unknown_nodes: usize,
    /// Pods that fit where they run now and would not under the new Policy: the ones a rollout
    /// or an eviction would leave Pending if they fit nowhere else.
    pub stop_fitting: Vec<StoppedPod>,
    /// `stop_fitting` grouped by the predicate and reason that decide, largest first.
    pub stop_fitting_by_reason: Vec<ReasonGroup>,
    /// Pods that do not fit where they run even under the current Policy (the node changed since
    /// they were placed): not counted above.
    pub not_fitting_now: usize,
    /// Pods that do not fit where they run now and would under the new Policy.
    pub start_fitting: usize,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct StoppedPod {
    pub pod: String,
    pub node: String,
    /// The new Policy's predicates that reject the pod's node (in plan order) with each reason,
    /// as `/filter` reports it.
    pub rejected_by: Vec<Rejection>,
    /// How many other nodes the pod fits under the new Policy (0: it would stay Pending).
    pub fits_elsewhere: usize,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Rejection {
    pub predicate: String,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ReasonGroup {
    pub predicate: String,
    pub reason: String,
    pub pods: usize,
    /// Of those pods, how many fit no other node.
    pub fit_nowhere: usize,
    /// The first few pods, by name.
    pub examples: Vec<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct PredicateRejections {
    pub predicate: String,
    /// Node checks (pending pods on every node, running pods on their own) that this predicate
    /// rejects under the current Policy; `null` when that plan does not run it.
    pub before: Option<usize>,
    pub after: Option<usize>,
}

/// How the ranking moves, on the pending pods and a sample of the running ones.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Priorities {
    /// Every priority of either plan with its weight before and after (`null`: not in that plan).
    pub weights: Vec<WeightChange>,
    /// Pods scored under both plans: every pending pod feasible under both, and up to `--sample`
    /// running pods, as if being placed now.
    pub sampled: usize,
    /// Of those, how many would get another best node.
    pub best_node_changed: usize,
    /// Where the current best node ranks under the new Policy, averaged over the sample (1.0: it
    /// stays the best everywhere); `null` without a sample.
    pub mean_rank_of_current_best: Option<f64>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct WeightChange {
    pub name: String,
    pub before: Option<i64>,
    pub after: Option<i64>,
}
