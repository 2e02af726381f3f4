//! The CI smoke of the Policy comparison (issue 37): 5,000 random (Policy, cluster, pod) cases,
//! seeds 1..=5000, the extender's Policy loader, filter and priorities against kube-scheduler
//! v1.22.17's own Policy translation and plugins (`e2e/kube-v1.22/oracle`, built by `e2e/build.sh
//! policy-oracle`), failing on any disagreement docs/semantics.md does not list ("Against v1.22
//! with a Policy"); any case replays with `cargo run --release --example policy-oracle-compare --
//! --cases 1 --seed S`. Fixed seeds only: the comparison still meets disagreements not traced yet
//! (the "Open" list there, about 1 case in 100,000 outside it), which seeds from the clock would
//! turn into a flaky CI. The test also requires that the cases reach what they are for: Policies
//! refused by both sides, and cases whose nodes both sides score.
//! Skipped (saying so) without Go, unless CI=true or PREDICATE_EXTENDER_E2E=require.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

#[path = "kube_cluster/binaries.rs"]
mod binaries;

use predicate_extender::engine::Evaluator;
use predicate_extender::testing::oracle::Oracle;
use predicate_extender::testing::policy_oracle::compare::compare;
use predicate_extender::testing::policy_oracle::{extender, generate, run_oracle, PolicyCase};

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
