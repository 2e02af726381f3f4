//! The scheduler's pending pods under both plans: each is explained on every node (explain's
//! evaluation on the evaluator: the nominated-pod double pass, every predicate, the ranking), one
//! pod after another.

use std::sync::Arc;

use crate::cluster::{PodInfo, Snapshot};
use crate::engine::{CancelFlag, Evaluator, Plan};
use crate::explain::report::build;
use crate::explain::Report as Explained;
use crate::whatif::report::{Pending, PendingPod, Placement};
use crate::whatif::tally::Rejections;
use crate::whatif::{RankMove, WhatifError};

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
    evaluator: &Evaluator,
    cancel: &CancelFlag,
) -> Result<Outcome, WhatifError> {
    let mut rejections = Rejections::default();
    let mut report = Pending {
        checked: pods.len(),
        become_unschedulable: Vec::new(),
        become_schedulable: Vec::new(),
        best_node_changes: Vec::new(),
        pods: Vec::with_capacity(pods.len()),
    };
    let mut ranking = Vec::new();
    for info in pods {
        let before = build(plans[0], info.pod.clone(), snapshot, &[], evaluator, cancel)?;
        let after = build(plans[1], info.pod.clone(), snapshot, &[], evaluator, cancel)?;
        for (i, explained) in [&before, &after].into_iter().enumerate() {
            for node in &explained.nodes {
                rejections.count(i, node);
            }
        }
        let key = info.pod.key();
        let (b, a) = (placement(&before), placement(&after));
        match (b.feasible, a.feasible) {
            (1.., 0) => report.become_unschedulable.push(key.clone()),
            (0, 1..) => report.become_schedulable.push(key.clone()),
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
    Ok(Outcome { report, rejections, ranking })
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
