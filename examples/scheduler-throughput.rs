//! Pods per second through a real kube-scheduler, with and without an extender, modelled on
//! upstream's scheduler_perf (test/integration/scheduler_perf): nodes from its node-default template
//! (4 cpu, 32Gi, 110 pods, Ready), initial pods scheduled first, then the measured pods created at
//! once; scheduled pods sampled every second (average and percentiles of the samples, as its
//! throughputCollector computes them) and each measured pod's latency from its creation to its
//! binding as a watch sees them, plus kube-scheduler's own SLI histogram.
//!
//! Configurations, alternated within one run so that a noisy machine weighs on each alike:
//! - `alone`: kube-scheduler's default profile, no extender;
//! - `extender`: `config/scheduler-config.yaml` as shipped (filter, prioritize, preempt, bind,
//!   nodeCacheCapable), this project's extender or any other at `--extender-url`;
//! - `policy`: as `extender`, with the profile's own Filter and Score plugins that the Policy's
//!   predicates and priorities replace turned off, so the extender's decisions are the only ones.
//!
//! Run with `e2e/throughput.sh --nodes 500 --initial-pods 500 --measured-pods 1000 --rounds 3`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a measuring tool: a panic says what failed

#[path = "../tests/kube_cluster/mod.rs"]
mod kube_cluster;

use clap::Parser;
use kube_cluster::throughput::{percentile, run, Config, Run, RunResult};
use serde_json::json;

#[derive(Debug, Parser)]
#[command(about = "Pods per second through a real kube-scheduler, with and without the extender")]
struct Args {
    #[arg(long, default_value_t = 500)]
    nodes: usize,
    #[arg(long, default_value_t = 500)]
    initial_pods: usize,
    #[arg(long, default_value_t = 1000)]
    measured_pods: usize,
    /// Configurations to run, alternating, in this order each round.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "alone,extender")]
    configs: Vec<Config>,
    /// Rounds of all the configurations.
    #[arg(long, default_value_t = 1)]
    rounds: usize,
    /// Measure the extender at this URL instead of starting this project's (its own cluster
    /// model must follow the harness's API server; see docs/performance.md).
    #[arg(long)]
    extender_url: Option<String>,
    /// Write one JSON line per run here as well.
    #[arg(long)]
    json: Option<std::path::PathBuf>,
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    if let Err(why) = kube_cluster::binaries::built() {
        eprintln!("scheduler-throughput: {why}");
        std::process::exit(1);
    }
    println!(
        "| config | round | nodes | initial | measured | pods/s avg | p50 | p90 | p99 | latency p50 ms | p90 | p99 | SLI p50 ms | SLI p99 ms | wall s |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    let mut all: Vec<RunResult> = Vec::new();
    for round in 1..=args.rounds {
        for &config in &args.configs {
            let spec = Run {
                nodes: args.nodes,
                initial_pods: args.initial_pods,
                measured_pods: args.measured_pods,
                config,
                extender_url: args.extender_url.clone(),
            };
            let r = run(&spec, round).await;
            let avg = r.average();
            let line = json!({"config": format!("{config:?}").to_lowercase(), "round": round, "nodes": args.nodes,
                "initialPods": args.initial_pods, "measuredPods": args.measured_pods,
                "podsPerSecond": {"avg": avg, "p50": percentile(&r.samples, 0.5), "p90": percentile(&r.samples, 0.9), "p99": percentile(&r.samples, 0.99)},
                "latencyMs": {"p50": percentile(&r.latencies_ms, 0.5), "p90": percentile(&r.latencies_ms, 0.9), "p99": percentile(&r.latencies_ms, 0.99)},
                "schedulerSliMs": {"p50": r.sli.0 * 1000.0, "p99": r.sli.1 * 1000.0}, "wallSeconds": r.wall});
            println!(
                "| {:?} | {round} | {} | {} | {} | {avg:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.1} |",
                config,
                args.nodes,
                args.initial_pods,
                args.measured_pods,
                percentile(&r.samples, 0.5),
                percentile(&r.samples, 0.9),
                percentile(&r.samples, 0.99),
                percentile(&r.latencies_ms, 0.5),
                percentile(&r.latencies_ms, 0.9),
                percentile(&r.latencies_ms, 0.99),
                r.sli.0 * 1000.0,
                r.sli.1 * 1000.0,
                r.wall
            );
            if let Some(path) = &args.json {
                use std::io::Write;
                let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path).unwrap();
                writeln!(f, "{line}").unwrap();
            }
            all.push(r);
        }
    }
    // Median over rounds of each configuration's average pods/s, and the ratio to `alone`.
    let median_avg = |config: Config| {
        let mut v: Vec<f64> = all.iter().filter(|r| r.config == config).map(RunResult::average).collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied()
    };
    if let Some(base) = median_avg(Config::Alone) {
        for &config in &args.configs {
            if let Some(m) = median_avg(config) {
                println!("median avg pods/s {config:?}: {m:.0} ({:.0}% of alone)", m / base * 100.0);
            }
        }
    }
}
