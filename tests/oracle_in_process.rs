//! The in-process engine (crates/engine-ffi: what the PredicateEngine plugin runs inside
//! kube-scheduler, docs/in-process.md) on the oracle's random clusters: 500 cases on each tested
//! minor, its model fed object by object as the informers feed it (JSON), the pod passed to a
//! cycle, each node filtered alone. Every node's verdict (fits, resolvable or not, the reasons as
//! kube-scheduler's event shows them) must be the extender's, and the extender's must be what
//! kube-scheduler's own plugins say (the oracle, as in tests/oracle_smoke.rs), so the in-process
//! verdicts are checked against kube-scheduler's on the same seeds.
//! Skipped (saying so) without Go, unless CI=true or PREDICATE_EXTENDER_E2E=require.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

use predicate_engine::cluster::{ObjectKind, SchedulerVersion};
use predicate_engine::engine::Evaluator;
use predicate_engine_ffi::engine::{InProcess, NodeVerdict};
use predicate_extender_testing::kube_cluster::binaries;
use predicate_extender_testing::oracle::{compare, extender_verdicts, generate, plan, Domain, Oracle};

const SEEDS: std::ops::Range<u64> = 1..501;

/// The oracle's plan (every default predicate, all checked) as a Policy file.
const POLICY: &str = r#"{"kind":"Policy","apiVersion":"v1","alwaysCheckAllPredicates":true}"#;

fn kind(name: &str) -> Option<ObjectKind> {
    ObjectKind::ALL.into_iter().find(|k| k.kind_name() == name)
}

predicate_extender_testing::on_each_minor!(
    in_process_verdicts_are_the_extenders_and_kube_schedulers_on_500_random_clusters
);

async fn in_process_verdicts_are_the_extenders_and_kube_schedulers_on_500_random_clusters(minor: &str) {
    let Some(bin) = binaries::binaries_of(minor, "oracle_in_process") else { return };
    let mut oracle = Oracle::start(&bin.path("oracle")).unwrap();
    let evaluator = Evaluator::new(1).unwrap();
    let plan = plan();
    let version: SchedulerVersion = minor.parse().unwrap();
    let domain = Domain::for_version(version);
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.json");
    std::fs::write(&policy, POLICY).unwrap();
    let config = serde_json::json!({"policy": policy, "schedulerVersion": minor}).to_string();
    assert_eq!(
        InProcess::new(config.as_bytes()).unwrap().plan().predicate_names(),
        plan.predicate_names(),
        "the Policy file is the oracle's plan"
    );
    let (mut failures, mut nodes) = (Vec::new(), 0);
    let seeds: Vec<u64> = SEEDS.collect();
    for chunk in seeds.chunks(250) {
        let cases: Vec<_> = chunk.iter().map(|&s| generate(&domain, s)).collect();
        let answers = oracle.run(&cases).unwrap();
        for (case, answer) in cases.iter().zip(answers) {
            let extender = extender_verdicts(&plan, &evaluator, case, version).unwrap();
            if let Some(first) = compare(&extender, &answer, false).first() {
                failures.push(format!(
                    "seed {}: node {}: the extender and kube-scheduler: {}",
                    case.seed, first.node, first.what
                ));
                continue;
            }
            let engine = InProcess::new(config.as_bytes()).unwrap();
            for object in &case.objects {
                let Some(kind) = object["kind"].as_str().and_then(kind) else { continue };
                engine.upsert(kind, object.to_string().as_bytes()).unwrap();
            }
            let meta = &case.pod["metadata"];
            let (ns, name) = (meta["namespace"].as_str().unwrap_or("default"), meta["name"].as_str().unwrap_or(""));
            let cycle = engine.cycle(ns, name, "", Some(case.pod.to_string().as_bytes())).unwrap();
            for (node, want) in &extender.nodes {
                nodes += 1;
                let got = cycle.filter(node);
                let same = match &got {
                    NodeVerdict::Fits => want.fits,
                    NodeVerdict::Unschedulable(text) => {
                        !want.fits && !want.unresolvable && *text == want.reasons.join(", ")
                    }
                    NodeVerdict::Unresolvable(text) => {
                        !want.fits && want.unresolvable && *text == want.reasons.join(", ")
                    }
                    NodeVerdict::Unknown => false,
                };
                if !same {
                    failures.push(format!("seed {}: node {node}: in-process {got:?}, extender {want:?}", case.seed));
                    break;
                }
            }
        }
    }
    assert!(nodes > seeds.len(), "only {nodes} nodes compared");
    assert!(
        failures.is_empty(),
        "Kubernetes {}: {} of {} cases disagree:\n{}",
        bin.version,
        failures.len(),
        seeds.len(),
        failures.join("\n")
    );
}
