//! The scheduler's pending pods under both plans: each is explained on every node (explain's
//! evaluation on the evaluator: the nominated-pod double pass, every predicate, the ranking), one
//! pod after another.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::explain::kube_scheduler::KubeSchedulerConfig;
use crate::explain::report::{build, Against};
use crate::explain::Report as Explained;
use crate::whatif::report::{Pending, PendingPod, Placement, PodGroup};
use crate::whatif::tally::Rejections;
use crate::whatif::{RankMove, WhatifError};
use predicate_engine::cluster::{PodInfo, Snapshot};
use predicate_engine::engine::{CancelFlag, Evaluator, Plan};

pub struct Outcome {
    pub report: Pending,
    pub rejections: Rejections,
    /// The pods feasible and scored under both plans.
    pub ranking: Vec<RankMove>,
}

pub fn evaluate(
    plans: &[&Plan; 2],
    pods: &[Arc<PodInfo>],
    snapshot: &Snapshot,
    kube_scheduler: &KubeSchedulerConfig,
    evaluator: &Evaluator,
    cancel: &CancelFlag,
) -> Result<Outcome, WhatifError> {
    let against = |plan| Against { plan, snapshot, kube_scheduler };
    let mut rejections = Rejections::default();
    let mut report = Pending {
        checked: pods.len(),
        become_unschedulable: Vec::new(),
        become_schedulable: Vec::new(),
        best_node_changes: Vec::new(),
        become_unschedulable_by_reason: Vec::new(),
        become_schedulable_by_reason: Vec::new(),
        pods: Vec::with_capacity(pods.len()),
    };
    let mut unschedulable = Groups::default();
    let mut schedulable = Groups::default();
    let mut ranking = Vec::new();
    for info in pods {
        let before = build(against(plans[0]), info.pod.clone(), &[], evaluator, cancel)?;
        let after = build(against(plans[1]), info.pod.clone(), &[], evaluator, cancel)?;
        for (i, explained) in [&before, &after].into_iter().enumerate() {
            for node in &explained.nodes {
                rejections.count(i, node);
            }
        }
        let key = info.pod.key();
        let (b, a) = (placement(&before), placement(&after));
        match (b.feasible, a.feasible) {
            (1.., 0) => {
                report.become_unschedulable.push(key.clone());
                unschedulable.add(&before, &after, &key);
            }
            (0, 1..) => {
                report.become_schedulable.push(key.clone());
                schedulable.add(&after, &before, &key);
            }
            _ => {}
        }
        if let Some(m) = rank_move(&before, &after) {
            if m.changed {
                report.best_node_changes.push(key.clone());
            }
            ranking.push(m);
        }
        report.pods.push(PendingPod { pod: key, before: b, after: a });
    }
    report.become_unschedulable_by_reason = unschedulable.largest_first();
    report.become_schedulable_by_reason = schedulable.largest_first();
    Ok(Outcome { report, rejections, ranking })
}

/// Pods grouped by a node they fit under one plan and what kube-scheduler says of it under the
/// other.
#[derive(Default)]
struct Groups(BTreeMap<(String, String), Vec<String>>);

impl Groups {
    /// `pod` fits `fits`'s best (or first feasible) node; `rejects` says why not there. The
    /// node cannot be one a PreFilterResult leaves out under `rejects`: PreFilter reads the pod
    /// and kube-scheduler's plugins only, the same under both plans, and `fits` found it feasible.
    fn add(&mut self, fits: &Explained, rejects: &Explained, pod: &str) {
        let Some(node) = best(fits).or_else(|| fits.feasible.first().cloned()) else { return };
        let reason = rejects
            .kube_scheduler
            .prefilter
            .iter()
            .chain(rejects.kube_scheduler.rejected.iter().filter(|s| s.node == node))
            .next()
            .map_or_else(String::new, |s| match s.by.as_str() {
                "" => s.reasons.join(", "),
                by => format!("{by}: {}", s.reasons.join(", ")),
            });
        self.0.entry((node, reason)).or_default().push(pod.to_string());
    }

    fn largest_first(self) -> Vec<PodGroup> {
        let mut groups: Vec<PodGroup> =
            self.0.into_iter().map(|((node, reason), pods)| PodGroup { node, reason, pods }).collect();
        groups.sort_by(|a, b| b.pods.len().cmp(&a.pods.len()).then(a.reason.cmp(&b.reason)).then(a.node.cmp(&b.node)));
        groups
    }
}

pub fn placement(explained: &Explained) -> Placement {
    Placement { feasible: explained.feasible.len(), best: best(explained), summary: explained.summary.clone() }
}

fn best(explained: &Explained) -> Option<String> {
    explained.scores.as_ref()?.nodes.iter().find(|n| n.rank == 1).map(|n| n.node.clone())
}

/// How the ranking moves for a pod scored under both plans; `None` unless both have a best node.
pub fn rank_move(before: &Explained, after: &Explained) -> Option<RankMove> {
    let (was, now) = (best(before)?, best(after)?);
    let scores = after.scores.as_ref()?;
    let rank = scores.nodes.iter().find(|n| n.node == was).map_or(scores.nodes.len() + 1, |n| n.rank);
    Some(RankMove { changed: was != now, rank_of_current_best: rank })
}
