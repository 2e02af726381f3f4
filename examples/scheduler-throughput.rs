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
//!   predicates and priorities replace turned off, so the extender's decisions are the only ones;
//! - `null`: as `extender`, calling an extender inside the harness that does no work (passes every
//!   node, scores 0, binds): the cost of the protocol itself.
//!
//! Workloads (`--workload`) are scheduler_perf's: basic, anti-affinity, spread, preemption.
//!
//! Run with `e2e/throughput.sh --nodes 500 --initial-pods 500 --measured-pods 1000 --rounds 3`;
//! docs/throughput.md ("Results") has the runs behind its tables.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a measuring tool: a panic says what failed

use predicate_extender_testing::kube_cluster;

use clap::Parser;
use kube_cluster::throughput::{percentile, run, Config, Run, RunResult};
use kube_cluster::workloads::Workload;
use serde_json::json;

#[derive(Debug, Parser)]
#[command(about = "Pods per second through a real kube-scheduler, with and without the extender")]
struct Args {
    /// Which scheduler_perf workload: the pods' template and what fills the cluster first.
    #[arg(long, value_enum, default_value = "basic")]
    workload: Workload,
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
    /// model must follow the harness's API server; see docs/throughput.md, "The harness").
    #[arg(long)]
    extender_url: Option<String>,
    /// Write kube-scheduler's CPU profile (pprof) and the extender's (`perf record`) of each run's
    /// first --profile-seconds of measured pods into this directory.
    #[arg(long)]
    profile: Option<std::path::PathBuf>,
    #[arg(long, default_value_t = 10)]
    profile_seconds: u32,
    /// One more argument for this project's extender, e.g. `--extender-arg=--parallelism=1`
    /// (repeatable).
    #[arg(long = "extender-arg", allow_hyphen_values = true)]
    extender_args: Vec<String>,
    /// A value set in kube-scheduler's configuration for every configuration of the run, as
    /// `dotted.path=JSON`: `--set percentageOfNodesToScore=100`,
    /// `--set extenders.0.nodeCacheCapable=false`, `--set 'extenders.0.prioritizeVerb=""'`
    /// (repeatable; the `alone` configuration drops `extenders` afterwards).
    #[arg(long = "set", value_parser = parse_setting)]
    settings: Vec<(String, serde_json::Value)>,
    /// Write one JSON line per run here as well.
    #[arg(long)]
    json: Option<std::path::PathBuf>,
    /// End each run when this share of the measured pods is bound (preemption: 0.99, see
    /// docs/throughput.md); figures are over the pods bound by then.
    #[arg(long, default_value_t = 1.0)]
    complete_at: f64,
}

fn parse_setting(text: &str) -> Result<(String, serde_json::Value), String> {
    let (path, value) = text.split_once('=').ok_or_else(|| format!("{text:?}: expected path=JSON"))?;
    let value = serde_json::from_str(value).map_err(|e| format!("{text:?}: the value is not JSON: {e}"))?;
    Ok((path.to_string(), value))
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    if let Err(why) = args.workload.check_size(args.nodes, args.initial_pods, args.measured_pods) {
        eprintln!("scheduler-throughput: {why}");
        std::process::exit(2);
    }
    if let Err(why) = kube_cluster::binaries::built(kube_cluster::NEWEST) {
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
                extender_url: args.extender_url.clone(),
                profile: args.profile.clone().map(|dir| (dir, args.profile_seconds)),
                extender_args: args.extender_args.clone(),
                scheduler_settings: args.settings.clone(),
                complete_at: args.complete_at,
                ..Run::new(args.workload, args.nodes, args.initial_pods, args.measured_pods, config)
            };
            let r = run(&spec, round).await;
            let avg = r.average();
            let line = json!({"workload": format!("{:?}", args.workload), "config": config.name(), "round": round, "nodes": args.nodes,
                "settings": args.settings.iter().map(|(p, v)| format!("{p}={v}")).collect::<Vec<_>>(),
                "extenderArgs": args.extender_args,
                "initialPods": args.initial_pods, "measuredPods": args.measured_pods, "bound": r.bound, "completeAt": args.complete_at,
                "podsPerSecond": {"avg": avg, "p50": percentile(&r.samples, 0.5), "p90": percentile(&r.samples, 0.9), "p99": percentile(&r.samples, 0.99)},
                "latencyMs": {"p50": percentile(&r.latencies_ms, 0.5), "p90": percentile(&r.latencies_ms, 0.9), "p99": percentile(&r.latencies_ms, 0.99)},
                "schedulerSliMs": {"p50": r.sli.0 * 1000.0, "p99": r.sli.1 * 1000.0}, "wallSeconds": r.wall,
                "cpuMsPerPod": r.split.cpu_ms_per_pod.iter().map(|(n, ms)| (n.clone(), json!(ms))).collect::<serde_json::Map<_, _>>(),
                "schedulerAttemptMs": r.split.attempt_ms, "schedulerAlgorithmMs": r.split.algorithm_ms,
                "apiserverRequestsPerPod": r.split.apiserver_requests.iter().map(|(s, n)| (s.clone(), json!(n))).collect::<serde_json::Map<_, _>>(),
                "extenderRequestMs": r.split.extender_ms.iter().map(|(v, ms)| (v.to_string(), json!(ms))).collect::<serde_json::Map<_, _>>(),
                "extenderRejectionsPerPod": r.split.extender_rejections.iter().map(|(p, n)| (p.clone(), json!(n))).collect::<serde_json::Map<_, _>>()});
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
            let cpu: Vec<String> = r.split.cpu_ms_per_pod.iter().map(|(n, ms)| format!("{n} {ms:.2}")).collect();
            let ext: Vec<String> = r.split.extender_ms.iter().map(|(v, ms)| format!("{v} {ms:.2}")).collect();
            eprintln!(
                "  {config:?} {round}: CPU ms/pod: {}; kube-scheduler attempt {:.2} ms, algorithm {:.2} ms; extender ms/request: {}",
                cpu.join(", "),
                r.split.attempt_ms,
                r.split.algorithm_ms,
                ext.join(", ")
            );
            let top: Vec<String> =
                r.split.apiserver_requests.iter().take(8).map(|(s, n)| format!("{s} {n:.2}")).collect();
            eprintln!("  {config:?} {round}: API server requests per pod: {}", top.join("; "));
            let rss: Vec<String> = r.split.peak_rss_mib.iter().map(|(n, mib)| format!("{n} {mib:.0}")).collect();
            eprintln!("  {config:?} {round}: peak resident MiB: {}", rss.join(", "));
            if !r.split.extender_rejections.is_empty() {
                let rejected: Vec<String> =
                    r.split.extender_rejections.iter().map(|(p, n)| format!("{p} {n:.1}")).collect();
                eprintln!("  {config:?} {round}: nodes the extender failed per pod: {}", rejected.join("; "));
            }
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
        match v.len() {
            0 => None,
            n if n % 2 == 1 => Some(v[n / 2]),
            n => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
        }
    };
    if let Some(base) = median_avg(Config::Alone) {
        for &config in &args.configs {
            if let Some(m) = median_avg(config) {
                println!("median avg pods/s {config:?}: {m:.0} ({:.0}% of alone)", m / base * 100.0);
            }
        }
    }
}
