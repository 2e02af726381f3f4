//! The extender against kube-scheduler v1.22.17 on random Policies and clusters (issue 37):
//! Policy acceptance, every node's verdict, each priority plugin's scores and the best node
//! (`crates/testing/src/policy_oracle`; the deliberate differences are in docs/semantics.md).
//!
//! `cargo run --release --example policy-oracle-compare -- --cases 100000 --seed 1 [--oracle PATH]
//!  [--reasons] [--show N] [--batch 256]`; `--print S` prints the case of seed S as the oracle's
//! input line, `--replay FILE` both sides' answers on such a line.
//!
//! Cases are seeds `seed .. seed+cases`; any one replays alone with `--cases 1 --seed S`. The oracle
//! is `e2e/build.sh policy-oracle`'s (built if missing). A failing case is shrunk (Policy entries,
//! then objects and fields) and printed as the oracle's input line. Exits 1 when any case
//! disagrees.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test tool: a panic is its error report

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use clap::Parser;
use common::OracleRun;

use predicate_engine::engine::Evaluator;
use predicate_extender_testing::oracle::{e2e_build, Case, Oracle};
use predicate_extender_testing::policy_oracle::compare::{compare, gaps, Finding};
use predicate_extender_testing::policy_oracle::{extender, generate, run_oracle, shrink, PolicyCase};

/// The oracle `e2e/build.sh policy-oracle` builds.
fn oracle_binary() -> PathBuf {
    e2e_build(Some("policy-oracle")).unwrap().join("oracle")
}

fn findings(oracle: &mut Oracle, evaluator: &Evaluator, case: &PolicyCase, reasons: bool) -> Vec<Finding> {
    let answer = run_oracle(oracle, std::slice::from_ref(case)).unwrap().pop().unwrap();
    compare(case, &extender(evaluator, case).unwrap(), &answer, reasons).findings
}

/// The extender against kube-scheduler v1.22.17 on random Policies and clusters.
#[derive(Debug, Parser)]
struct Args {
    #[command(flatten)]
    run: OracleRun,
    /// Print a disagreeing case as it was generated, without shrinking it.
    #[arg(long)]
    no_shrink: bool,
}

fn main() {
    let Args { run, no_shrink } = Args::parse();
    let OracleRun { cases, seed, oracle: oracle_path, reasons, show, batch, replay: replay_file, print } = run;
    let batch = batch as usize;
    if let Some(s) = print {
        return println!("{}", generate(s).to_line());
    }
    let oracle_path = oracle_path.unwrap_or_else(oracle_binary);
    let mut oracle = Oracle::start(&oracle_path).unwrap();
    let evaluator = Evaluator::new(1).unwrap();
    if let Some(file) = replay_file {
        let line: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        let policy: serde_json::Value = serde_json::from_str(line["policy"].as_str().unwrap()).unwrap();
        let case = Case { seed: 0, objects: line["objects"].as_array().unwrap().clone(), pod: line["pod"].clone() };
        let case = PolicyCase { policy, case };
        let answer = run_oracle(&mut oracle, std::slice::from_ref(&case)).unwrap().pop().unwrap();
        let ours = extender(&evaluator, &case).unwrap();
        println!("extender: {ours:#?}\nv1.22: {answer:#?}\ncompared: {:#?}", compare(&case, &ours, &answer, reasons));
        return;
    }
    let started = Instant::now();
    let mut failed: Vec<(PolicyCase, String)> = Vec::new();
    let mut kinds = BTreeMap::<String, u64>::new();
    let mut documented = BTreeMap::<&str, u64>::new();
    let mut largest_gap = BTreeMap::<String, i64>::new();
    let (mut refused_both, mut refused_one, mut scored) = (0u64, 0u64, 0u64);
    let mut done = 0u64;
    let mut start = seed;
    while done < cases {
        let n = batch.min((cases - done) as usize);
        let batch_cases: Vec<PolicyCase> = (start..start + n as u64).map(generate).collect();
        let answers = run_oracle(&mut oracle, &batch_cases).unwrap();
        for (case, answer) in batch_cases.into_iter().zip(answers) {
            let ours = extender(&evaluator, &case).unwrap();
            match (ours.policy_error.is_some(), answer.policy_error.is_empty()) {
                (true, false) => refused_both += 1,
                (true, true) | (false, false) => refused_one += 1,
                (false, true) => scored += u64::from(!answer.scores.is_empty()),
            }
            let compared = compare(&case, &ours, &answer, reasons);
            if compared.findings.is_empty() && compared.documented.is_empty() {
                // Only where the two agree: the gaps the tolerance admits.
                for (plugin, gap) in gaps(&ours, &answer) {
                    let slot = largest_gap.entry(plugin).or_insert(0);
                    *slot = (*slot).max(gap);
                }
            }
            for heading in compared.documented.iter().collect::<std::collections::BTreeSet<_>>() {
                *documented.entry(heading).or_default() += 1;
            }
            if let Some(first) = compared.findings.first() {
                let kind = first.kind();
                *kinds.entry(kind.clone()).or_default() += 1;
                if failed.iter().filter(|(_, k)| *k == kind).count() < show {
                    failed.push((case, kind));
                }
            }
        }
        done += n as u64;
        start += n as u64;
        if done / 10_000 > (done - n as u64) / 10_000 {
            eprintln!(
                "{done} cases, {} disagreeing, {:.0} s",
                kinds.values().sum::<u64>(),
                started.elapsed().as_secs_f64()
            );
        }
    }
    let disagreeing: u64 = kinds.values().sum();
    println!(
        "{cases} cases (seeds {seed}..{}), {disagreeing} disagreeing, {:.1} s; Policy refused by both {refused_both}, by one {refused_one}; scored {scored}",
        seed + cases,
        started.elapsed().as_secs_f64()
    );
    for (k, n) in &kinds {
        println!("  {n:>7}  {k}");
    }
    println!("cases meeting a difference docs/semantics.md lists, by its heading:");
    for (heading, n) in &documented {
        println!("  {n:>7}  {heading}");
    }
    println!("largest score gap per unit of weight (v1.22 points, 0..=100), in the cases that agree:");
    for (plugin, gap) in &largest_gap {
        println!("  {gap:>4}  {plugin}");
    }
    for (case, kind) in failed {
        // The same kind of disagreement, so that shrinking does not wander to another one.
        if no_shrink {
            let found = findings(&mut oracle, &evaluator, &case, reasons);
            let first = found.iter().find(|f| f.kind() == kind).map(ToString::to_string).unwrap_or_default();
            println!("\nseed {} ({kind}): {first}", case.case.seed);
            continue;
        }
        let mut still = |c: &PolicyCase| findings(&mut oracle, &evaluator, c, reasons).iter().any(|f| f.kind() == kind);
        let small = shrink(&case, &mut still);
        let found = findings(&mut oracle, &evaluator, &small, reasons);
        let first = found.iter().find(|f| f.kind() == kind).map(ToString::to_string).unwrap_or_default();
        println!("\nseed {} ({kind}), shrunk:\n{}\n{first}", case.case.seed, small.to_line());
    }
    if disagreeing > 0 {
        std::process::exit(1);
    }
}
