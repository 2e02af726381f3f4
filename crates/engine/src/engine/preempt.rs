//! Preemption (`/preempt`): kube-scheduler has chosen victims on each candidate node; the engine
//! checks, with the same predicates and double pass as `/filter`, that the pod fits once they are
//! gone, and gives back the ones it does not need.
//!
//! Per node, as upstream's `selectVictimsOnNode` (`pkg/scheduler/core/generic_scheduler.go`),
//! restricted to the victims kube-scheduler sent (an extender may only narrow them: kube-scheduler
//! rejects an answer naming a pod that is not on the node, so victims are never invented or moved):
//!
//! 1. Remove every victim from a copy of the node and from the predicates' prepared states
//!    (`NodeInfo::without_pods`, `Prepared::with_removed_pods`: upstream's `RemovePod`).
//!    If the pod still does not fit, the node is dropped.
//! 2. Reprieve: put the victims back one at a time, most important first (upstream's
//!    `MoreImportantPod`: higher priority, then earlier `status.startTime`, a pod without one
//!    counting as started now), and keep each one back whose return still lets the pod fit.
//!
//! Upstream reprieves the victims that would violate a PodDisruptionBudget before the others. The
//! extender arguments carry only a per-node count (`NumPDBViolations`), not which victims violate,
//! so every victim is reprieved in importance order alone, and the count is passed back as given,
//! capped at the number of victims that remain.

use std::cmp::Ordering;
use std::collections::HashSet;
use std::sync::Arc;

use crate::cluster::objects::Pod;
use crate::cluster::snapshot::Nominated;
use crate::cluster::{NodeInfo, PodInfo, Snapshot};
use crate::engine::evaluator::{CancelFlag, Evaluator};
use crate::engine::fits::fits_on_node;
use crate::engine::{EvaluationError, Plan, Prepared};
use crate::framework::{ClusterView, MissingState};

/// A candidate node with the victims kube-scheduler chose on it, resolved against the model.
#[derive(Debug, Clone)]
pub struct PreemptCandidate {
    pub node: NodeInfo,
    pub nominated: Nominated,
    /// The victims, in request order; each one is on `node` in the model.
    pub victims: Vec<Arc<PodInfo>>,
    pub num_pdb_violations: i64,
}

/// What kube-scheduler sent for one node: its name, the victims' UIDs, `NumPDBViolations`.
#[derive(Debug, Clone)]
pub struct RequestedVictims {
    pub node: String,
    pub uids: Vec<String>,
    pub num_pdb_violations: i64,
}

/// The candidates the model can check, and what it had to leave out.
#[derive(Debug, Default)]
pub struct Resolved {
    pub candidates: Vec<PreemptCandidate>,
    /// Nodes the model does not know: dropped.
    pub unknown_nodes: Vec<String>,
    /// `(node, uid)` of victims the model does not have on that node: left out of the victims.
    pub unknown_victims: Vec<(String, String)>,
}

/// Resolves the request's nodes and victim UIDs against the model. A victim UID named twice counts
/// once.
pub fn resolve(snapshot: &Snapshot, requested: impl IntoIterator<Item = RequestedVictims>) -> Resolved {
    let mut out = Resolved::default();
    for r in requested {
        let Some((node, nominated)) = snapshot.candidate(&r.node) else {
            out.unknown_nodes.push(r.node);
            continue;
        };
        let mut seen = HashSet::new();
        let mut victims = Vec::with_capacity(r.uids.len());
        for uid in r.uids {
            if !seen.insert(uid.clone()) {
                continue;
            }
            match node.pods.pods().iter().find(|p| !uid.is_empty() && p.pod.metadata.uid == uid) {
                Some(p) => victims.push(Arc::clone(p)),
                None => out.unknown_victims.push((r.node.clone(), uid)),
            }
        }
        out.candidates.push(PreemptCandidate { node, nominated, victims, num_pdb_violations: r.num_pdb_violations });
    }
    out
}

/// The victims one node needs, after the reprieve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeVictims {
    pub node: String,
    /// UIDs, in request order.
    pub uids: Vec<String>,
    pub num_pdb_violations: i64,
}

/// upstream's `MoreImportantPod` as an ordering: `Less` means `a` is more important (comes first).
pub fn more_important_first(a: &Pod, b: &Pod) -> Ordering {
    b.priority().cmp(&a.priority()).then_with(|| match (a.status.start_time, b.status.start_time) {
        (Some(x), Some(y)) => x.cmp(&y),
        // Without a start time a pod counts as started now: after any that has one.
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    })
}

/// Whether the pod fits `node` with `evicted` gone (from the node and from the predicates' states).
fn fits_without(
    plan: &Plan,
    pod: &Prepared,
    c: &PreemptCandidate,
    evicted: &[&Arc<PodInfo>],
) -> Result<bool, MissingState> {
    let node = c.node.without_pods(evicted);
    let prepared = pod.with_removed_pods(&c.node, evicted);
    Ok(fits_on_node(plan, prepared.as_ref().unwrap_or(pod), &node, &c.nominated)?.is_empty())
}

/// The victims the pod needs on this node, or `None` when it does not fit even with all of them
/// gone.
pub fn select_victims(
    plan: &Plan,
    pod: &Prepared,
    c: &PreemptCandidate,
) -> Result<Option<Vec<Arc<PodInfo>>>, MissingState> {
    let mut evicted: Vec<&Arc<PodInfo>> = c.victims.iter().collect();
    if !fits_without(plan, pod, c, &evicted)? {
        return Ok(None);
    }
    let mut order = evicted.clone();
    order.sort_by(|a, b| more_important_first(&a.pod, &b.pod)); // stable: request order among equals
    for candidate in order {
        let rest: Vec<&Arc<PodInfo>> = evicted.iter().copied().filter(|v| !Arc::ptr_eq(v, candidate)).collect();
        if fits_without(plan, pod, c, &rest)? {
            evicted = rest;
        }
    }
    Ok(Some(evicted.into_iter().cloned().collect()))
}

/// What one `/preempt` request needs, owned, so it can move onto the evaluator's pool.
#[derive(Debug)]
pub struct PreemptJob {
    pub plan: Arc<Plan>,
    pub pod: Pod,
    pub snapshot: Arc<Snapshot>,
    pub candidates: Vec<PreemptCandidate>,
    pub cancel: CancelFlag,
}

impl PreemptJob {
    /// Prepares the pod once and selects the victims on every candidate node in parallel. Nodes
    /// where the pod does not fit even with every victim gone are left out; the others come back
    /// in candidate order.
    pub fn run(&self, evaluator: &Evaluator) -> Result<Vec<NodeVictims>, EvaluationError> {
        let pod = Prepared::new(&self.plan, self.pod.clone(), &ClusterView::of(&self.snapshot));
        let selected = evaluator.map(&self.candidates, &self.cancel, |c| {
            Ok(select_victims(&self.plan, &pod, c)?.map(|victims| NodeVictims {
                node: c.node.name().to_string(),
                num_pdb_violations: c.num_pdb_violations.clamp(0, victims.len() as i64),
                uids: victims.iter().map(|v| v.pod.metadata.uid.clone()).collect(),
            }))
        })?;
        let selected: Result<Vec<_>, MissingState> = selected.into_iter().collect();
        Ok(selected?.into_iter().flatten().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{NodeBuilder, PodBuilder};

    fn plan(names: &[&str]) -> Plan {
        Plan::of_predicates(names.iter().map(|n| crate::registry::predicate(n).unwrap()).collect())
    }

    fn victim(name: &str, node: &str, priority: i32, cpu: &str) -> Pod {
        PodBuilder::new(name).node(node).priority(priority).req(&[("cpu", cpu)]).build()
    }

    fn request(node: &str, uids: &[&str], pdb: i64) -> RequestedVictims {
        RequestedVictims {
            node: node.to_string(),
            uids: uids.iter().map(|u| u.to_string()).collect(),
            num_pdb_violations: pdb,
        }
    }

    /// Runs a whole preemption on a snapshot with the default plan.
    fn preempt(snapshot: Snapshot, pod: Pod, requested: Vec<RequestedVictims>) -> (Vec<NodeVictims>, Resolved) {
        let mut resolved = resolve(&snapshot, requested);
        let job = PreemptJob {
            plan: Arc::new(Plan::default_plan()),
            pod,
            snapshot: Arc::new(snapshot),
            candidates: std::mem::take(&mut resolved.candidates),
            cancel: CancelFlag::new(),
        };
        (job.run(&Evaluator::new(2).unwrap()).unwrap(), resolved)
    }

    fn incoming(cpu: &str) -> Pod {
        PodBuilder::new("incoming").priority(100).req(&[("cpu", cpu)]).build()
    }

    #[test]
    fn importance_is_priority_then_earlier_start() {
        // Upstream MoreImportantPod: higher priority first; equal priority, earlier startTime
        // first; no startTime reads as now, so it comes after any pod that has one.
        let p = |name: &str, priority: i32, start: Option<u64>| {
            let b = PodBuilder::new(name).priority(priority);
            match start {
                Some(s) => b.started_at(s).build(),
                None => b.build(),
            }
        };
        let mut pods = [
            p("low-old", 1, Some(10)),
            p("high-unstarted", 5, None),
            p("high-new", 5, Some(200)),
            p("high-old", 5, Some(100)),
            p("low-unstarted", 1, None),
            p("mid", 3, Some(1)),
        ];
        pods.sort_by(more_important_first);
        let names: Vec<_> = pods.iter().map(|p| p.metadata.name.as_str()).collect();
        assert_eq!(names, ["high-old", "high-new", "high-unstarted", "mid", "low-old", "low-unstarted"]);
    }

    #[test]
    fn victims_per_node() {
        let cpus = |n: &str, cpu: &str| NodeBuilder::new(n).alloc(&[("cpu", cpu)]);
        let nodes = vec![
            cpus("n1", "2").build(),
            cpus("n2", "3").build(),
            cpus("n3", "2").build(),
            cpus("tainted", "2").taint("gpu", "", "NoSchedule").build(),
        ];
        let pods = vec![
            // n1 (2 cpu): both victims needed.
            victim("a", "n1", 1, "1"),
            victim("b", "n1", 2, "1"),
            // n2 (3 cpu): one victim is enough; the more important (priority 5) is reprieved.
            victim("c", "n2", 5, "1"),
            victim("d", "n2", 1, "1"),
            // n3: the victim frees too little: a non-victim holds the rest.
            victim("e", "n3", 1, "500m"),
            victim("keep", "n3", 1000, "1500m"),
            // tainted: evicting does not help.
            victim("f", "tainted", 1, "2"),
        ];
        let (got, resolved) = preempt(
            Snapshot::build(nodes, pods),
            incoming("2"),
            vec![
                request("n1", &["uid-a", "uid-b"], 2),
                request("n2", &["uid-c", "uid-d"], 1),
                request("n3", &["uid-e"], 0),
                request("tainted", &["uid-f"], 0),
            ],
        );
        assert!(resolved.unknown_nodes.is_empty() && resolved.unknown_victims.is_empty());
        let n = |node: &str, uids: &[&str], pdb: i64| NodeVictims {
            node: node.to_string(),
            uids: uids.iter().map(|u| u.to_string()).collect(),
            num_pdb_violations: pdb,
        };
        assert_eq!(got, vec![n("n1", &["uid-a", "uid-b"], 2), n("n2", &["uid-d"], 1)]);
    }

    #[test]
    fn unneeded_victims_are_reprieved_most_important_first() {
        let node = NodeBuilder::new("n1").alloc(&[("cpu", "3")]).build();
        let pods = vec![victim("a", "n1", 1, "1"), victim("b", "n1", 5, "1"), victim("c", "n1", 3, "1")];
        // 1 cpu needed, 0 free: one victim must go. b (priority 5) is reprieved first, then c
        // (3); a (1) cannot be reprieved: it stays a victim. NumPDBViolations is capped at the
        // victims that remain.
        let (got, _) =
            preempt(Snapshot::build([node], pods), incoming("1"), vec![request("n1", &["uid-a", "uid-b", "uid-c"], 3)]);
        assert_eq!(got, vec![NodeVictims { node: "n1".into(), uids: vec!["uid-a".into()], num_pdb_violations: 1 }]);
    }

    #[test]
    fn equal_priority_reprieves_the_earlier_started_pod() {
        let node = NodeBuilder::new("n1").alloc(&[("cpu", "2")]).build();
        let pods = vec![
            PodBuilder::new("new").node("n1").priority(1).started_at(200).req(&[("cpu", "1")]).build(),
            PodBuilder::new("old").node("n1").priority(1).started_at(100).req(&[("cpu", "1")]).build(),
        ];
        let (got, _) =
            preempt(Snapshot::build([node], pods), incoming("1"), vec![request("n1", &["uid-new", "uid-old"], 0)]);
        assert_eq!(got[0].uids, ["uid-new"], "the older pod is more important and goes back first");
    }

    #[test]
    fn unknown_nodes_and_victims_are_left_out() {
        let node = NodeBuilder::new("n1").alloc(&[("cpu", "2")]).build();
        let other = NodeBuilder::new("n2").build();
        let pods = vec![victim("a", "n1", 1, "2"), victim("elsewhere", "n2", 1, "1")];
        let (got, resolved) = preempt(
            Snapshot::build([node, other], pods),
            incoming("1"),
            vec![request("n1", &["uid-a", "uid-ghost", "uid-elsewhere", "uid-a"], 0), request("n9", &["uid-x"], 0)],
        );
        assert_eq!(resolved.unknown_nodes, ["n9"]);
        assert_eq!(
            resolved.unknown_victims,
            [("n1".to_string(), "uid-ghost".to_string()), ("n1".to_string(), "uid-elsewhere".to_string())],
            "a pod of another node is not this node's victim"
        );
        assert_eq!(got, vec![NodeVictims { node: "n1".into(), uids: vec!["uid-a".into()], num_pdb_violations: 0 }]);
    }

    #[test]
    fn an_empty_victim_list_keeps_a_node_the_pod_fits_as_it_is() {
        let nodes = vec![NodeBuilder::new("free").build(), NodeBuilder::new("full").alloc(&[("cpu", "1")]).build()];
        let pods = vec![victim("x", "full", 1, "1")];
        let (got, _) = preempt(
            Snapshot::build(nodes, pods),
            incoming("1"),
            vec![request("free", &[], 0), request("full", &[], 0)],
        );
        assert_eq!(got, vec![NodeVictims { node: "free".into(), uids: vec![], num_pdb_violations: 0 }]);
    }

    #[test]
    fn nominated_pods_of_higher_priority_still_count() {
        // The double pass: a priority-200 pod nominated to n1 takes the cpu the victim frees.
        let node = NodeBuilder::new("n1").alloc(&[("cpu", "1")]).build();
        let pods = vec![
            victim("a", "n1", 1, "1"),
            PodBuilder::new("vip").nominated("n1").priority(200).req(&[("cpu", "1")]).build(),
        ];
        let (got, _) = preempt(Snapshot::build([node], pods), incoming("1"), vec![request("n1", &["uid-a"], 0)]);
        assert!(got.is_empty(), "{got:?}");
    }

    #[test]
    fn evicting_an_anti_affinity_pod_clears_its_domain() {
        use k8s_openapi::api::core::v1::{Affinity, PodAffinityTerm, PodAntiAffinity};
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
        const ZONE: &str = "topology.kubernetes.io/zone";
        let mut guard = victim("guard", "n1", 1, "100m");
        guard.spec.affinity = Some(Affinity {
            pod_anti_affinity: Some(PodAntiAffinity {
                required_during_scheduling_ignored_during_execution: Some(vec![PodAffinityTerm {
                    label_selector: Some(LabelSelector {
                        match_labels: Some([("app".to_string(), "web".to_string())].into()),
                        match_expressions: None,
                    }),
                    topology_key: ZONE.to_string(),
                    ..Default::default()
                }]),
                ..Default::default()
            }),
            ..Default::default()
        });
        let nodes =
            vec![NodeBuilder::new("n1").label(ZONE, "a").build(), NodeBuilder::new("n2").label(ZONE, "a").build()];
        let mut pod = incoming("100m");
        pod.metadata.labels.insert("app".into(), "web".into());
        // n2 has no victim on it, but the guard's anti-affinity covers zone a: only evicting the
        // guard (on n1) helps, and kube-scheduler offers it on n1 only.
        let snapshot = Snapshot::build(nodes, vec![guard]);
        let (got, _) =
            preempt(snapshot.clone(), pod.clone(), vec![request("n1", &["uid-guard"], 0), request("n2", &[], 0)]);
        assert_eq!(got, vec![NodeVictims { node: "n1".into(), uids: vec!["uid-guard".into()], num_pdb_violations: 0 }]);
        let plan = plan(&["MatchInterPodAffinity"]);
        let ctx = Prepared::new(&plan, pod, &ClusterView::of(&snapshot));
        let c = &resolve(&snapshot, vec![request("n1", &["uid-guard"], 0)]).candidates[0];
        assert!(!fits_without(&plan, &ctx, c, &[]).unwrap(), "with the guard it does not fit");
        assert!(fits_without(&plan, &ctx, c, &[&c.victims[0]]).unwrap());
    }
}
