//! Dynamic predicate ordering keeps the answer honest (issue 15): over random small clusters, pods
//! and plans, static and dynamic ordering find the same feasible nodes, and under dynamic
//! ordering no node that fails a predicate which can only fail unresolvably is reported in
//! `FailedNodes` (where kube-scheduler would try preemption).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

use std::sync::Arc;
use std::time::Duration;

use predicate_engine::cluster::objects::{Node, Pod};
use predicate_engine::cluster::Snapshot;
use predicate_engine::engine::fits::fits_on_node;
use predicate_engine::engine::observe::{Outcome, Timing};
use predicate_engine::engine::ordering::Settings;
use predicate_engine::engine::{filter, CancelFlag, Candidate, ClusterView, Evaluator, FilterReport};
use predicate_engine::engine::{OrderingMode, Plan, Prepared};
use predicate_engine::framework::{AnyPredicate, Failures};
use predicate_extender::server::filter_result::filter_result;
use predicate_extender_testing::{NodeBuilder, PodBuilder};
use proptest::prelude::*;

/// Predicates without arguments that these clusters can make fail, in static (registry) order.
const PREDICATES: [&str; 11] = [
    "CheckNodeCondition",
    "CheckNodeUnschedulable",
    "GeneralPredicates",
    "HostName",
    "PodFitsHostPorts",
    "MatchNodeSelector",
    "PodFitsResources",
    "NoDiskConflict",
    "PodToleratesNodeTaints",
    "CheckNodeMemoryPressure",
    "MatchInterPodAffinity",
];

#[derive(Debug, Clone)]
struct NodeSpec {
    cpu: u8,
    tainted: bool,
    cordoned: bool,
    not_ready: bool,
    memory_pressure: bool,
    zone_a: bool,
    /// A pod already there: its cpu (in 500m) and whether it binds host port 8080.
    used_cpu: u8,
    uses_port: bool,
}

#[derive(Debug, Clone)]
struct PodSpec {
    cpu: u8,
    wants_zone_a: bool,
    tolerates: bool,
    port: bool,
    host: Option<usize>,
}

fn node_spec() -> impl Strategy<Value = NodeSpec> {
    (1u8..5, any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>(), 0u8..5, any::<bool>()).prop_map(
        |(cpu, tainted, cordoned, not_ready, memory_pressure, zone_a, used_cpu, uses_port)| NodeSpec {
            cpu,
            tainted,
            cordoned,
            not_ready,
            memory_pressure,
            zone_a,
            used_cpu,
            uses_port,
        },
    )
}

fn pod_spec() -> impl Strategy<Value = PodSpec> {
    (0u8..5, any::<bool>(), any::<bool>(), any::<bool>(), proptest::option::weighted(0.2, 0usize..6))
        .prop_map(|(cpu, wants_zone_a, tolerates, port, host)| PodSpec { cpu, wants_zone_a, tolerates, port, host })
}

fn cluster(nodes: &[NodeSpec]) -> (Vec<Node>, Vec<Pod>) {
    let mut out = Vec::new();
    let mut pods = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        let name = format!("n{i}");
        let mut b = NodeBuilder::new(&name).label("zone", if n.zone_a { "a" } else { "b" }).alloc(&[
            ("cpu", &format!("{}m", u32::from(n.cpu) * 500)),
            ("memory", "8Gi"),
            ("pods", "110"),
        ]);
        if n.tainted {
            b = b.taint("dedicated", "x", "NoSchedule");
        }
        if n.cordoned {
            b = b.unschedulable();
        }
        let ready = if n.not_ready { "False" } else { "True" };
        let pressure = if n.memory_pressure { "True" } else { "False" };
        b = b.conditions(&[("Ready", ready), ("MemoryPressure", pressure)]);
        out.push(b.build());
        let mut p =
            PodBuilder::new(&format!("p{i}")).node(&name).req(&[("cpu", &format!("{}m", u32::from(n.used_cpu) * 500))]);
        if n.uses_port {
            p = p.host_port(8080, "TCP", "");
        }
        pods.push(p.build());
    }
    (out, pods)
}

fn incoming(spec: &PodSpec) -> Pod {
    let mut b = PodBuilder::new("incoming").req(&[("cpu", &format!("{}m", u32::from(spec.cpu) * 500))]);
    if spec.wants_zone_a {
        b = b.node_selector("zone", "a");
    }
    if spec.tolerates {
        b = b.toleration("dedicated", "Equal", "x", "NoSchedule");
    }
    if spec.port {
        b = b.host_port(8080, "TCP", "");
    }
    let mut pod = b.build();
    if let Some(host) = spec.host {
        // HostName: the pod asks for one node by name.
        pod.spec.node_name = format!("n{host}");
    }
    pod
}

fn plan_of(mask: &[bool], always_check_all: bool) -> Plan {
    let predicates: Vec<Arc<dyn AnyPredicate>> = PREDICATES
        .iter()
        .zip(mask)
        .filter(|(_, keep)| **keep)
        .map(|(name, _)| predicate_engine::registry::predicate(name).unwrap())
        .collect();
    Plan { always_check_all, ..Plan::of_predicates(predicates) }
}

/// Feeds the dynamic order made-up observations (each publishes), so it ends in some order of
/// its own within the tiers.
fn scramble(plan: &Plan, observations: &[(u64, u64, u64)]) {
    let slots = plan.predicates.len();
    if slots == 0 {
        return; // a plan of no predicates has nothing to order
    }
    for chunk in observations.chunks(slots) {
        let mut report = FilterReport::new(slots, true);
        for (slot, (evaluations, rejections, micros)) in chunk.iter().enumerate() {
            report.evaluations[slot] = *evaluations;
            report.rejections[slot] = (*rejections).min(*evaluations);
            let took = Duration::from_micros(*micros);
            report.timings.push(Timing { slot, outcome: Outcome::Success, took });
        }
        plan.observe(&report);
    }
}

struct Run {
    fits: Vec<bool>,
    failed_nodes: Vec<String>,
    unresolvable_nodes: Vec<String>,
}

fn run(plan: &Plan, snapshot: &Snapshot, pod: &Pod) -> Run {
    let candidates: Vec<Candidate> =
        snapshot.node_names().into_iter().map(|n| Candidate::by_name(snapshot, n.to_string())).collect();
    let prepared = Prepared::new(plan, pod.clone(), &ClusterView::of(snapshot));
    let ev = Evaluator::new(2).unwrap();
    let filtered = filter(&ev, plan, &prepared, &candidates, &CancelFlag::new(), false).unwrap();
    let result = filter_result(&candidates, &filtered.verdicts, None, "default/incoming");
    Run {
        fits: filtered.verdicts.iter().map(|v| v.fits()).collect(),
        failed_nodes: result.failed_nodes.keys().map(|n| n.to_string()).collect(),
        unresolvable_nodes: result.failed_and_unresolvable_nodes.keys().map(|n| n.to_string()).collect(),
    }
}

/// The nodes among `names` that some predicate of `plan` which can only fail unresolvably
/// rejects, each predicate checked alone.
fn failing_unresolvable_only(plan: &Plan, snapshot: &Snapshot, pod: &Pod, names: &[String]) -> Vec<String> {
    let view = ClusterView::of(snapshot);
    names
        .iter()
        .filter(|name| {
            let (node, nominated) = snapshot.candidate(name).unwrap();
            plan.predicates.iter().filter(|p| p.failures() == Failures::Unresolvable).any(|p| {
                let alone = Plan::of_predicates(vec![Arc::clone(p)]);
                let prepared = Prepared::new(&alone, pod.clone(), &view);
                !fits_on_node(&alone, &prepared, &node, &nominated).unwrap().is_empty()
            })
        })
        .cloned()
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn dynamic_ordering_keeps_the_feasible_set_and_reports_unresolvable_failures_as_such(
        nodes in proptest::collection::vec(node_spec(), 1..7),
        pod in pod_spec(),
        mask in proptest::collection::vec(any::<bool>(), PREDICATES.len()),
        always_check_all in proptest::bool::weighted(0.2),
        observations in proptest::collection::vec((0u64..1000, 0u64..1000, 1u64..200), 0..60),
    ) {
        let (nodes, pods) = cluster(&nodes);
        let snapshot = Snapshot::build(nodes, pods);
        let pod = incoming(&pod);
        let static_plan = plan_of(&mask, always_check_all);
        let every_request = Settings { every_requests: 1, every: Duration::from_secs(3600), decay: 0.5 };
        let dynamic_plan = static_plan.clone().with_ordering_settings(OrderingMode::Dynamic, every_request);
        scramble(&dynamic_plan, &observations);

        let st = run(&static_plan, &snapshot, &pod);
        let dy = run(&dynamic_plan, &snapshot, &pod);
        prop_assert_eq!(&st.fits, &dy.fits, "the same feasible set, order {:?}", dynamic_plan.ordered_predicate_names());
        if always_check_all {
            // Ordering changes nothing there: the very same answer.
            prop_assert_eq!(&st.failed_nodes, &dy.failed_nodes);
            prop_assert_eq!(&st.unresolvable_nodes, &dy.unresolvable_nodes);
        } else {
            let wrong = failing_unresolvable_only(&dynamic_plan, &snapshot, &pod, &dy.failed_nodes);
            prop_assert!(
                wrong.is_empty(),
                "in FailedNodes yet failing an unresolvable-only predicate: {:?}, order {:?}",
                wrong,
                dynamic_plan.ordered_predicate_names()
            );
        }
    }
}

/// What the property guards against: static ordering does report such a node in `FailedNodes`
/// (GeneralPredicates' `Insufficient cpu` runs before the taint check), dynamic does not.
#[test]
fn static_ordering_can_report_an_unresolvable_failure_as_resolvable_and_dynamic_does_not() {
    let node = NodeSpec {
        cpu: 1,
        tainted: true,
        cordoned: false,
        not_ready: false,
        memory_pressure: false,
        zone_a: true,
        used_cpu: 1,
        uses_port: false,
    };
    let (nodes, pods) = cluster(&[node]);
    let snapshot = Snapshot::build(nodes, pods);
    let pod = incoming(&PodSpec { cpu: 1, wants_zone_a: false, tolerates: false, port: false, host: None });
    let mask: Vec<bool> =
        PREDICATES.iter().map(|n| ["GeneralPredicates", "PodToleratesNodeTaints"].contains(n)).collect();
    let static_plan = plan_of(&mask, false);
    let st = run(&static_plan, &snapshot, &pod);
    assert_eq!(st.failed_nodes, ["n0"], "static: Insufficient cpu first, so FailedNodes");
    assert_eq!(failing_unresolvable_only(&static_plan, &snapshot, &pod, &st.failed_nodes), ["n0"]);
    let dynamic_plan = static_plan.with_ordering(OrderingMode::Dynamic);
    assert_eq!(dynamic_plan.ordered_predicate_names(), ["PodToleratesNodeTaints", "GeneralPredicates"]);
    let dy = run(&dynamic_plan, &snapshot, &pod);
    assert!(dy.failed_nodes.is_empty());
    assert_eq!(dy.unresolvable_nodes, ["n0"]);
}
