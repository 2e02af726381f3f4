//! The extender's verdicts against kube-scheduler's own Filter plugins on random clusters
//! (issue 25; docs/semantics.md lists the deliberate differences, kept out of the generated domain).
//!
//! `cargo run --release --example oracle-compare -- --cases 100000 --seed 1 [--kubernetes 1.35 |
//!  --oracle PATH] [--reasons] [--show N] [--batch 256]`; `--print S` prints the case of seed S as
//! the oracle's input line, `--replay FILE` both sides' verdicts on such a line.
//!
//! Cases are seeds `seed .. seed+cases`; any one replays alone with `--cases 1 --seed S`. The oracle
//! is `e2e/build.sh`'s for a tested minor (`--kubernetes`, default the newest; built if missing). A failing case is shrunk and printed as the oracle's
//! input line. Exits 1 when any case disagrees.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test tool: a panic is its error report

mod common;

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Parser;
use common::OracleRun;

use predicate_engine::cluster::SchedulerVersion;
use predicate_engine::engine::Evaluator;
use predicate_extender_testing::oracle::{
    compare, e2e_build, extender_verdicts, generate, plan, reason_gaps, shrink, Case, Domain, Oracle,
};

/// The oracle `e2e/build.sh` builds for a tested minor (`None`: the newest).
fn oracle_binary(minor: Option<&str>) -> PathBuf {
    e2e_build(minor).unwrap().join("oracle")
}

/// Both sides' verdicts on the case of one oracle input line (as a shrunk case prints).
fn replay(file: &Path, oracle_path: PathBuf, version: SchedulerVersion) {
    let line: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let case = Case { seed: 0, objects: line["objects"].as_array().unwrap().clone(), pod: line["pod"].clone() };
    let mut oracle = Oracle::start(&oracle_path).unwrap();
    let answer = oracle.run(std::slice::from_ref(&case)).unwrap().pop().unwrap();
    let ours = extender_verdicts(&plan(), &Evaluator::new(1).unwrap(), &case, version).unwrap();
    for (node, v) in &ours.nodes {
        println!("{node}: extender {v:?}\n{node}: oracle   {:?}", answer.nodes.get(node).map(|o| o.verdict()));
    }
    for (pod, r) in &answer.requests {
        println!("requests of {pod:?}: extender {:?}\n            oracle   {r:?}", ours.requests.get(pod));
    }
}

/// The extender's verdicts against kube-scheduler's own Filter plugins on random clusters (with
/// --reasons, every gap between the two sides' reasons is printed too, by kind).
#[derive(Debug, Parser)]
struct Args {
    #[command(flatten)]
    run: OracleRun,
    /// The tested minor whose kube-scheduler is the oracle (default: the newest), e.g. 1.35.
    #[arg(long, value_name = "MINOR", value_parser = parse_minor)]
    kubernetes: Option<String>,
}

/// A tested minor, as `SchedulerVersion` reads it.
fn parse_minor(text: &str) -> Result<String, String> {
    text.parse::<SchedulerVersion>().map(|_| text.to_string()).map_err(|e| e.to_string())
}

fn main() {
    let Args { run, kubernetes } = Args::parse();
    let OracleRun { cases, seed, oracle: oracle_path, reasons, show, batch, replay: replay_file, print } = run;
    let batch = batch as usize;
    if let Some(s) = print {
        let version = kubernetes.as_deref().map_or(SchedulerVersion::default(), |k| k.parse().unwrap());
        return println!("{}", generate(&Domain::for_version(version), s).to_line());
    }
    let version = kubernetes.as_deref().map_or(SchedulerVersion::default(), |k| k.parse().unwrap());
    let oracle_path = oracle_path.unwrap_or_else(|| oracle_binary(kubernetes.as_deref()));
    if let Some(file) = replay_file {
        return replay(&file, oracle_path, version);
    }
    let mut oracle = Oracle::start(&oracle_path).unwrap();
    let evaluator = Evaluator::new(1).unwrap();
    let plan = plan();
    let domain = Domain::for_version(version);
    let started = Instant::now();
    let mut failed: Vec<(Case, String)> = Vec::new();
    let mut kinds = std::collections::BTreeMap::<String, u64>::new();
    // With --reasons: every gap between the two sides' reasons, by kind, over all nodes.
    let mut gaps = std::collections::BTreeMap::<String, u64>::new();
    let mut done = 0u64;
    let mut start = seed;
    while done < cases {
        let n = batch.min((cases - done) as usize);
        let batch_cases: Vec<Case> = (start..start + n as u64).map(|s| generate(&domain, s)).collect();
        let answers = oracle.run(&batch_cases).unwrap();
        for (case, answer) in batch_cases.into_iter().zip(answers) {
            let ours = extender_verdicts(&plan, &evaluator, &case, version).unwrap();
            let d = compare(&ours, &answer, reasons);
            for x in d.iter().filter(|x| x.what == "reasons differ") {
                for gap in reason_gaps(&x.extender.reasons, &answer.nodes[&x.node]) {
                    *gaps.entry(gap).or_default() += 1;
                }
            }
            if let Some(first) = d.first() {
                let key = format!("{}: {:?} vs {:?}", first.what, first.extender.reasons, first.oracle.reasons);
                *kinds.entry(key.clone()).or_default() += 1;
                // At once: a long run shows its disagreeing seeds while it goes on.
                eprintln!("seed {} disagrees: {key}", case.seed);
                if failed.len() < show {
                    failed.push((case, key));
                }
            }
        }
        done += n as u64;
        start += n as u64;
        // Every 10,000 cases crossed (batches need not divide 10,000).
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
        "{cases} cases (seeds {seed}..{}), {disagreeing} disagreeing, {:.1} s",
        seed + cases,
        started.elapsed().as_secs_f64()
    );
    for (k, n) in &kinds {
        println!("  {n:>7}  {k}");
    }
    if reasons {
        println!("reason gaps, by kind (nodes):");
        for (k, n) in &gaps {
            println!("  {n:>7}  {k}");
        }
    }
    for (case, key) in failed {
        // The same kind of disagreement, so that shrinking does not wander to another one.
        let what = key.split(':').next().unwrap().to_string();
        // A smaller case the oracle or the model cannot read (shrinking can leave, say, an
        // ephemeral volume's claim without its owner) does not fail the same way.
        let mut still = |c: &Case| {
            let Some(a) = oracle.run(std::slice::from_ref(c)).ok().and_then(|mut a| a.pop()) else { return false };
            let Ok(ours) = extender_verdicts(&plan, &evaluator, c, version) else { return false };
            compare(&ours, &a, reasons).iter().any(|d| d.what == what)
        };
        let small = shrink(&case, &mut still);
        let a = oracle.run(std::slice::from_ref(&small)).unwrap().pop().unwrap();
        let d = compare(&extender_verdicts(&plan, &evaluator, &small, version).unwrap(), &a, reasons);
        println!("\nseed {} ({key}), shrunk:\n{}\n{:#?}", case.seed, small.to_line(), d);
    }
    if disagreeing > 0 {
        std::process::exit(1);
    }
}
