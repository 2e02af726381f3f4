//! The scheduler's running pods, each checked on its own node as if it were being placed now: the
//! node without the pod, and the pod's prepared state without it on that node (upstream's
//! `RemovePod`, as preemption does), so a pod is never in its own way (its own host port, its own
//! anti-affinity, its own share of the node). The pods are spread over the evaluator's workers.
//! A pod that fits now and would not under the new plan is tried on every other node.

use std::sync::Arc;

use crate::explain::failures::deciding_pass;
use crate::explain::kube_scheduler::KubeSchedulerConfig;
use crate::explain::report::{build, explain_node, Against, NodeReport};
use crate::whatif::pending::rank_move;
use crate::whatif::report::{Rejection, Running, StoppedPod};
use crate::whatif::tally::{group, Rejections};
use crate::whatif::{RankMove, WhatifError};
use predicate_engine::cluster::snapshot::Nominated;
use predicate_engine::cluster::{NodeInfo, PodInfo, Snapshot};
use predicate_engine::engine::fits::fits_on_node;
use predicate_engine::engine::{CancelFlag, Evaluator, Plan, Prepared};
use predicate_engine::framework::{ClusterView, MissingState};

pub struct Outcome {
    pub report: Running,
    pub rejections: Rejections,
}

/// One running pod under both plans.
struct Checked {
    reports: [NodeReport; 2],
    fits_elsewhere: Option<usize>,
}

pub fn evaluate(
    plans: &[&Plan; 2],
    pods: &[Arc<PodInfo>],
    snapshot: &Snapshot,
    evaluator: &Evaluator,
    cancel: &CancelFlag,
) -> Result<Outcome, WhatifError> {
    // Every predicate runs, so each one's rejections are counted, as explain does.
    let all = |p: &Plan| Plan { always_check_all: true, ..p.clone() };
    let checking = [all(plans[0]), all(plans[1])];
    let nodes: Vec<(NodeInfo, Nominated)> =
        snapshot.node_names().into_iter().filter_map(|n| snapshot.candidate(n)).collect();
    let view = ClusterView::of(snapshot);
    let results = evaluator.map(pods, cancel, |info| check(&checking, plans[1], info, snapshot, &view, &nodes))?;

    let mut rejections = Rejections::default();
    let mut report = Running {
        checked: 0,
        on_unknown_nodes: 0,
        stop_fitting: Vec::new(),
        stop_fitting_by_reason: Vec::new(),
        not_fitting_now: 0,
        start_fitting: 0,
    };
    for (info, result) in pods.iter().zip(results) {
        let Some(checked) = result? else {
            report.on_unknown_nodes += 1;
            continue;
        };
        report.checked += 1;
        for (i, r) in checked.reports.iter().enumerate() {
            rejections.count(i, r);
        }
        let [before, after] = &checked.reports;
        match (before.fits, after.fits) {
            (true, false) => report.stop_fitting.push(stopped(info, after, checked.fits_elsewhere.unwrap_or(0))),
            (false, true) => {
                report.not_fitting_now += 1;
                report.start_fitting += 1;
            }
            (false, false) => report.not_fitting_now += 1,
            (true, true) => {}
        }
    }
    report.stop_fitting_by_reason = group(&report.stop_fitting);
    Ok(Outcome { report, rejections })
}

fn stopped(info: &PodInfo, after: &NodeReport, fits_elsewhere: usize) -> StoppedPod {
    let rejected_by = deciding_pass(after)
        .iter()
        .filter(|v| !v.fits)
        .flat_map(|v| {
            v.reasons.iter().map(|r| Rejection { predicate: v.predicate.clone(), reason: r.message.to_string() })
        })
        .collect();
    StoppedPod { pod: info.pod.key(), node: info.pod.spec.node_name.clone(), rejected_by, fits_elsewhere }
}

/// The pod on its own node under both plans; `None` when the model has no Node object of that name.
fn check(
    checking: &[Plan; 2],
    new: &Plan,
    info: &Arc<PodInfo>,
    snapshot: &Snapshot,
    view: &ClusterView<'_>,
    nodes: &[(NodeInfo, Nominated)],
) -> Result<Option<Checked>, MissingState> {
    let name = &info.pod.spec.node_name;
    let Some((node, nominated)) = snapshot.candidate(name) else { return Ok(None) };
    let own = node.without_pods(&[info]);
    let mut pending = info.pod.clone();
    pending.spec.node_name.clear();
    let prepare = |plan: &Plan| {
        let prepared = Prepared::new(plan, pending.clone(), view);
        prepared.with_removed_pods(&node, &[info]).unwrap_or(prepared)
    };
    let before = explain_node(&checking[0], &prepare(&checking[0]), &own, &nominated)?.report;
    let after_ctx = prepare(&checking[1]);
    let after = explain_node(&checking[1], &after_ctx, &own, &nominated)?.report;
    let fits_elsewhere = if before.fits && !after.fits {
        let mut n = 0;
        for (other, nominated) in nodes.iter().filter(|(n, _)| n.name() != name.as_str()) {
            n += usize::from(fits_on_node(new, &after_ctx, other, nominated)?.is_empty());
        }
        Some(n)
    } else {
        None
    };
    Ok(Some(Checked { reports: [before, after], fits_elsewhere }))
}

/// Up to `sample` running pods, spread over the list, each taken off its node and scored on the
/// whole cluster under both plans.
pub fn ranking_sample(
    plans: &[&Plan; 2],
    pods: &[Arc<PodInfo>],
    sample: usize,
    snapshot: &Snapshot,
    kube_scheduler: &KubeSchedulerConfig,
    evaluator: &Evaluator,
    cancel: &CancelFlag,
) -> Result<Vec<RankMove>, WhatifError> {
    if plans.iter().any(|p| p.priorities.is_empty()) || pods.is_empty() || sample == 0 {
        return Ok(Vec::new());
    }
    let take = sample.min(pods.len());
    let mut out = Vec::with_capacity(take);
    for i in 0..take {
        let info = &pods[i * pods.len() / take];
        let mut without = snapshot.clone();
        without.remove_pod(&(info.pod.metadata.namespace.clone(), info.pod.metadata.name.clone()));
        let mut pending = info.pod.clone();
        pending.spec.node_name.clear();
        let against = |plan| Against { plan, snapshot: &without, kube_scheduler };
        let before = build(against(plans[0]), pending.clone(), &[], evaluator, cancel)?;
        let after = build(against(plans[1]), pending, &[], evaluator, cancel)?;
        out.extend(rank_move(&before, &after));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::api::core::v1::{Affinity, PodAffinityTerm, PodAntiAffinity};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

    use crate::scheduler_config::SHIPPED_SCHEDULER_NAME;
    use crate::whatif::{evaluate, Input, Source};
    use predicate_engine::cluster::intern::IStr;
    use predicate_engine::cluster::objects::Pod;
    use predicate_engine::testing::{NodeBuilder, PodBuilder};

    use super::*;

    fn ours(builder: PodBuilder) -> Pod {
        let mut pod = builder.build();
        pod.spec.scheduler_name = IStr::new(SHIPPED_SCHEDULER_NAME);
        pod
    }

    /// app=web, keeping away from other app=web pods on its host, on host port 8080.
    fn web(name: &str, node: &str, cpu: &str) -> Pod {
        let mut pod =
            ours(PodBuilder::new(name).label("app", "web").node(node).req(&[("cpu", cpu)]).host_port(8080, "TCP", ""));
        let selector = LabelSelector {
            match_labels: Some(BTreeMap::from([("app".to_string(), "web".to_string())])),
            ..LabelSelector::default()
        };
        pod.spec.affinity = Some(Affinity {
            pod_anti_affinity: Some(PodAntiAffinity {
                required_during_scheduling_ignored_during_execution: Some(vec![PodAffinityTerm {
                    label_selector: Some(selector),
                    topology_key: "kubernetes.io/hostname".to_string(),
                    ..PodAffinityTerm::default()
                }]),
                ..PodAntiAffinity::default()
            }),
            ..Affinity::default()
        });
        pod
    }

    fn running(pods: Vec<Pod>) -> Running {
        let nodes =
            ["n1", "n2"].map(|n| NodeBuilder::new(n).label("kubernetes.io/hostname", n).alloc(&[("cpu", "1")]).build());
        let snapshot = Snapshot::build(nodes, pods);
        let plan = Plan::default_plan();
        let input = Input {
            current: Source { plan: &plan, name: "a".into() },
            new: Source { plan: &plan, name: "b".into() },
            snapshot: &snapshot,
            scheduler: SHIPPED_SCHEDULER_NAME,
            sample: 0,
            kube_scheduler: &KubeSchedulerConfig::shipped(),
        };
        evaluate(&input, &Evaluator::new(2).unwrap(), &CancelFlag::new()).unwrap().running
    }

    /// A running pod is checked as if being placed now, without itself on the node (upstream's
    /// `RemovePod`, as preemption checks a node without its victims): its own cpu, host port and
    /// anti-affinity are not in its way; another pod's are.
    #[test]
    fn a_running_pod_is_not_in_its_own_way() {
        let alone =
            running(vec![web("p", "n1", "1"), ours(PodBuilder::new("other-app").node("n2").req(&[("cpu", "500m")]))]);
        assert_eq!((alone.checked, alone.not_fitting_now), (2, 0));
        // A second app=web pod beside p: each breaks the other's anti-affinity, and p's cpu is gone.
        let crowded = running(vec![
            web("p", "n1", "1"),
            ours(PodBuilder::new("q").label("app", "web").node("n1").req(&[("cpu", "100m")])),
        ]);
        assert_eq!((crowded.checked, crowded.not_fitting_now), (2, 2));
        // A pod of another scheduler is not looked at.
        let theirs = running(vec![web("p", "n1", "1"), PodBuilder::new("q").label("app", "web").node("n1").build()]);
        assert_eq!((theirs.checked, theirs.not_fitting_now), (1, 1));
    }
}
