//! The CI smoke of the oracle comparison (issue 25): 5,000 random cases on each tested minor, the
//! extender's engine against kube-scheduler's own PreFilter/Filter plugins (`e2e/kube/oracle`, built
//! by e2e/build.sh for that minor): seeds 1..=4000 every time, and 1,000 seeds from the clock,
//! printed, so that any failure replays with
//! `cargo run --release --example oracle-compare -- --kubernetes MINOR --cases 1 --seed S`. About a third of the
//! cases have volumes bound through claims (`crates/testing/src/oracle_volumes.rs`), and the spread
//! constraints' `matchLabelKeys` (`crates/testing/src/oracle_label_keys.rs`); the test counts the cases
//! with claims and requires some.
//! Skipped (saying so) without Go, unless CI=true or PREDICATE_EXTENDER_E2E=require.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

use predicate_extender_testing::kube_cluster::binaries;

use predicate_engine::cluster::SchedulerVersion;
use predicate_engine::engine::Evaluator;
use predicate_extender_testing::oracle::{compare, extender_verdicts, generate, plan, Case, Domain, Oracle};

const FIXED: std::ops::Range<u64> = 1..4001;
const TIMED: u64 = 1000;

predicate_extender_testing::on_each_minor!(extender_agrees_with_kube_scheduler_on_5000_random_clusters);

async fn extender_agrees_with_kube_scheduler_on_5000_random_clusters(minor: &str) {
    let Some(bin) = binaries::binaries_of(minor, "oracle_smoke") else { return };
    let mut oracle = Oracle::start(&bin.path("oracle")).unwrap();
    let evaluator = Evaluator::new(1).unwrap();
    let plan = plan();
    let version: SchedulerVersion = minor.parse().unwrap();
    let domain = Domain::for_version(version);
    let clock = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
    // Far above the fixed range, so that the two slices never overlap.
    let timed_start = (clock % (1 << 40)) + (1 << 32);
    eprintln!("oracle smoke: seeds {FIXED:?} and {timed_start}..{}", timed_start + TIMED);
    let seeds: Vec<u64> = FIXED.chain(timed_start..timed_start + TIMED).collect();
    let mut failures = Vec::new();
    let mut with_claims = 0;
    // The shapes of today's resource counting (crates/testing/src/oracle_resources.rs): pods with
    // pod-level resources and pods being resized in place.
    let (mut pod_level, mut resized) = (0, 0);
    for chunk in seeds.chunks(250) {
        let cases: Vec<Case> = chunk.iter().map(|&s| generate(&domain, s)).collect();
        with_claims += cases.iter().filter(|c| c.objects.iter().any(|o| o["kind"] == "PersistentVolumeClaim")).count();
        let pods = || cases.iter().flat_map(|c| c.objects.iter().chain(std::iter::once(&c.pod)));
        pod_level += pods().filter(|p| p["spec"].get("resources").is_some()).count();
        resized += pods().filter(|p| p["status"].get("containerStatuses").is_some()).count();
        let answers = oracle.run(&cases).unwrap();
        for (case, answer) in cases.iter().zip(answers) {
            let ours = extender_verdicts(&plan, &evaluator, case, version).unwrap();
            let d = compare(&ours, &answer, false);
            if let Some(first) = d.first() {
                failures.push(format!(
                    "seed {}: node {} {}: extender {:?}, kube-scheduler {:?}",
                    case.seed, first.node, first.what, first.extender.reasons, first.oracle.reasons
                ));
            }
        }
    }
    assert!(with_claims > seeds.len() / 5, "only {with_claims} of {} cases with claims", seeds.len());
    assert!(
        pod_level > seeds.len() / 2 && resized > seeds.len() / 2,
        "{pod_level} pods with pod-level resources, {resized} resized"
    );
    assert!(
        failures.is_empty(),
        "Kubernetes {}: {} of {} cases disagree (replay: cargo run --release --example oracle-compare -- --kubernetes {minor} --cases 1 --seed S):\n{}",
        bin.version,
        failures.len(),
        seeds.len(),
        failures.join("\n")
    );
}
