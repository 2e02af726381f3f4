//! The CI smoke of the Policy comparison (issue 37): 5,000 random (Policy, cluster, pod) cases,
//! seeds 1..=5000, the extender's Policy loader, filter and priorities against kube-scheduler
//! v1.22.17's own Policy translation and plugins (`e2e/kube-v1.22/oracle`, built by `e2e/build.sh
//! policy-oracle`), failing on any disagreement docs/semantics.md does not list ("Against v1.22
//! with a Policy"); any case replays with `cargo run --release --example policy-oracle-compare --
//! --cases 1 --seed S`. Fixed seeds, so that a failure replays; the long run's figures are in
//! docs/testing.md. The test also requires that the cases reach what they are for: Policies
//! refused by both sides, and cases whose nodes both sides score.
//! Skipped (saying so) without Go, unless CI=true or PREDICATE_EXTENDER_E2E=require.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

use predicate_extender_testing::kube_cluster::binaries;

use predicate_engine::engine::Evaluator;
use predicate_extender_testing::oracle::{Case, Oracle};
use predicate_extender_testing::policy_oracle::compare::compare;
use predicate_extender_testing::policy_oracle::{extender, generate, run_oracle, PolicyCase};

const SEEDS: std::ops::Range<u64> = 1..5001;

#[test]
fn extender_agrees_with_kube_scheduler_1_22_on_5000_random_policies_and_clusters() {
    let Some(path) = binaries::policy_oracle("policy_oracle_smoke") else { return };
    let mut oracle = Oracle::start(&path).unwrap();
    let evaluator = Evaluator::new(1).unwrap();
    let seeds: Vec<u64> = SEEDS.collect();
    let mut failures = Vec::new();
    let (mut refused, mut scored) = (0, 0);
    for chunk in seeds.chunks(250) {
        let cases: Vec<PolicyCase> = chunk.iter().map(|&s| generate(s)).collect();
        let answers = run_oracle(&mut oracle, &cases).unwrap();
        for (case, answer) in cases.iter().zip(answers) {
            let ours = extender(&evaluator, case).unwrap();
            refused += usize::from(ours.policy_error.is_some() && !answer.policy_error.is_empty());
            scored += usize::from(answer.scores.values().any(|s| s.len() > 1));
            if let Some(first) = compare(case, &ours, &answer, false).findings.first() {
                failures.push(format!("seed {}: {first}", case.case.seed));
            }
        }
    }
    assert!(refused > seeds.len() / 50, "only {refused} of {} Policies refused by both", seeds.len());
    assert!(scored > seeds.len() / 8, "only {scored} of {} cases with two or more nodes scored", seeds.len());
    assert!(
        failures.is_empty(),
        "{} of {} cases disagree with kube-scheduler v1.22.17 (replay: cargo run --release --example policy-oracle-compare -- --cases 1 --seed S):\n{}",
        failures.len(),
        seeds.len(),
        failures.join("\n")
    );
}

/// A case of two nodes in two zones, `first` added before `second`, each running a pod of the
/// Service that selects the pending pod, under a Policy whose only predicate is a
/// `serviceAffinity` on the zone.
fn service_in_two_zones(first: (&str, &str), second: (&str, &str)) -> PolicyCase {
    let node = |(name, zone): (&str, &str)| {
        serde_json::json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"topology.kubernetes.io/zone": zone}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}})
    };
    let pod = |name: &str, on: &str| {
        serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}"), "labels": {"app": "web"}},
            "spec": {"nodeName": on, "containers": [{"name": "c", "image": "busybox"}]}})
    };
    let service = serde_json::json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": {"app": "web"}}});
    let pending = serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pending", "namespace": "default", "uid": "uid-pending", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]}});
    let policy = serde_json::json!({"kind": "Policy", "apiVersion": "v1",
        "predicates": [{"name": "ZoneAffinity", "argument": {"serviceAffinity": {"labels": ["topology.kubernetes.io/zone"]}}}]});
    let objects = vec![node(first), node(second), pod("on-a", "a"), pod("on-b", "b"), service];
    PolicyCase { policy, case: Case { seed: 0, objects, pod: pending } }
}

/// The oracle answers each case from that case's objects alone: v1.22's first pod of a Service is
/// the first in its snapshot's node order (zones in the order the nodes came), which an oracle
/// that kept the previous case's snapshot answered from the previous case's order when the node
/// names repeat (it did, until the oracle updated its snapshot when clearing a case).
#[test]
fn the_policy_oracle_forgets_the_previous_cases_node_order() {
    let Some(path) = binaries::policy_oracle("policy_oracle_smoke") else { return };
    let mut oracle = Oracle::start(&path).unwrap();
    let b_first = service_in_two_zones(("b", "z2"), ("a", "z1"));
    let a_first = service_in_two_zones(("a", "z1"), ("b", "z2"));
    fn fits(answer: &predicate_extender_testing::policy_oracle::Answer) -> Vec<&str> {
        answer.nodes.iter().filter(|(_, n)| n.fits).map(|(name, _)| name.as_str()).collect()
    }
    // Alone, each case answers by its own order: the pod on the first node listed decides.
    let alone = run_oracle(&mut oracle, std::slice::from_ref(&a_first)).unwrap();
    assert_eq!(fits(&alone[0]), ["a"], "{:?}", alone[0].nodes);
    // After the case that listed b first, the same names listed a first still answer "a".
    let after = run_oracle(&mut oracle, &[b_first, a_first]).unwrap();
    assert_eq!(fits(&after[0]), ["b"], "{:?}", after[0].nodes);
    assert_eq!(fits(&after[1]), ["a"], "{:?}", after[1].nodes);
}
