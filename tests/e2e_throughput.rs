//! The throughput harness (e2e/throughput.sh) in small, as CI runs it: 200 nodes, 100 initial and
//! 500 measured pods through kube-scheduler with the extender as shipped. It checks that every pod
//! was bound and that the harness measured what it reports; it asserts no time (the machines are
//! small and noisy: figures come from e2e/throughput.sh runs, in docs/performance.md).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod kube_cluster;

use kube_cluster::throughput::{run, Config, Run};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_throughput_harness_binds_every_measured_pod_through_the_extender_and_reports_figures() {
    if kube_cluster::binaries("throughput smoke").is_none() {
        return;
    }
    let spec = Run { nodes: 200, initial_pods: 100, measured_pods: 500, config: Config::Extender, extender_url: None };
    let result = run(&spec, 1).await;
    assert_eq!(result.bound, 500, "every measured pod bound");
    assert_eq!(result.latencies_ms.len(), 500, "a latency for every measured pod");
    assert!(!result.samples.is_empty(), "at least one throughput sample");
    assert!(
        result.average() > 0.0 && result.sli.1 > 0.0,
        "figures reported: {} pods/s, SLI p99 {} s",
        result.average(),
        result.sli.1
    );
    eprintln!(
        "throughput smoke: {:.0} pods/s average over {} samples, latency p50 {:.0} ms p99 {:.0} ms, SLI p99 {:.0} ms",
        result.average(),
        result.samples.len(),
        kube_cluster::throughput::percentile(&result.latencies_ms, 0.5),
        kube_cluster::throughput::percentile(&result.latencies_ms, 0.99),
        result.sli.1 * 1000.0
    );
}
