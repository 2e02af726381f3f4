//! The throughput harness (e2e/throughput.sh) in small, as CI runs it: 200 nodes, 100 initial and
//! 500 measured pods through kube-scheduler with the extender as shipped. It checks that every pod
//! was bound and that the harness measured what it reports; it asserts no time (the machines are
//! small and noisy: figures come from e2e/throughput.sh runs, in docs/performance.md).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod kube_cluster;

use kube_cluster::throughput::{run, Config, Run};
use kube_cluster::workloads::Workload;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_throughput_harness_binds_every_measured_pod_through_the_extender_and_reports_figures() {
    if kube_cluster::binaries::binaries("throughput smoke").is_none() {
        return;
    }
    let spec = Run::new(Workload::Basic, 200, 100, 500, Config::Extender);
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
    let split = &result.split;
    let cpu = |name: &str| split.cpu_ms_per_pod.iter().find(|(n, _)| n == name).map(|(_, ms)| *ms);
    for process in ["etcd", "kube-apiserver", "predicate-extender", "kube-scheduler-0", "harness"] {
        assert!(
            cpu(process).is_some_and(|ms| ms > 0.0),
            "CPU per pod of {process} reported: {:?}",
            split.cpu_ms_per_pod
        );
    }
    let verb = |v: &str| split.extender_ms.iter().find(|(n, _)| *n == v).map_or(0.0, |(_, ms)| *ms);
    assert!(
        verb("filter") > 0.0 && verb("prioritize") > 0.0 && verb("bind") > 0.0 && split.attempt_ms > 0.0,
        "the extender's and kube-scheduler's time per request reported: {split:?}"
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

/// The volumes workload in small: every pod's claim (`WaitForFirstConsumer`, one available volume
/// per pod reachable from one zone) is bound at first consumer through the extender as shipped,
/// with the controller-manager's PV binder completing what kube-scheduler's PreBind starts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_volumes_workload_binds_every_pod_and_its_claim() {
    if kube_cluster::binaries::binaries("throughput volumes smoke").is_none() {
        return;
    }
    let spec = Run::new(Workload::Volumes, 30, 30, 60, Config::Extender);
    let result = run(&spec, 1).await;
    assert_eq!(result.bound, 60, "every measured pod bound");
    assert_eq!(result.latencies_ms.len(), 60, "a latency for every measured pod");
    eprintln!(
        "throughput volumes smoke: {:.0} pods/s average, latency p50 {:.0} ms p99 {:.0} ms",
        result.average(),
        kube_cluster::throughput::percentile(&result.latencies_ms, 0.5),
        kube_cluster::throughput::percentile(&result.latencies_ms, 0.99)
    );
}
