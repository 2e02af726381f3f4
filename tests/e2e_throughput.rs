//! The throughput harness (e2e/throughput.sh) in small, as CI runs it: 200 nodes, 100 initial and
//! 500 measured pods through kube-scheduler with the extender as shipped. It checks that every pod
//! was bound and that the harness measured what it reports; it asserts no time (the machines are
//! small and noisy: figures come from e2e/throughput.sh runs, in docs/throughput.md).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

use predicate_extender_testing::kube_cluster;

use kube_cluster::prometheus::{counter_deltas, mean_between, metric_sum, quantile_between, samples, Sample};
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

const BEFORE: &str = "# HELP x_seconds A histogram.\n\
    # TYPE x_seconds histogram\n\
    x_seconds_bucket{verb=\"filter\",le=\"0.1\"} 1\n\
    x_seconds_bucket{verb=\"filter\",le=\"1\"} 2\n\
    x_seconds_bucket{verb=\"filter\",le=\"+Inf\"} 2\n\
    x_seconds_sum{verb=\"filter\"} 0.6\n\
    x_seconds_count{verb=\"filter\"} 2\n\
    requests_total{verb=\"POST\",resource=\"pods\",subresource=\"binding\"} 5\n\
    requests_total{verb=\"POST\",resource=\"pods\",subresource=\"\"} 7\n\
    up 1\n";

const AFTER: &str = "x_seconds_bucket{verb=\"filter\",le=\"0.1\"} 1\n\
    x_seconds_bucket{verb=\"filter\",le=\"1\"} 12\n\
    x_seconds_bucket{verb=\"filter\",le=\"+Inf\"} 12\n\
    x_seconds_bucket{verb=\"bind\",le=\"0.1\"} 0\n\
    x_seconds_bucket{verb=\"bind\",le=\"1\"} 0\n\
    x_seconds_bucket{verb=\"bind\",le=\"+Inf\"} 10\n\
    x_seconds_sum{verb=\"filter\"} 5.6\n\
    x_seconds_count{verb=\"filter\"} 12\n\
    requests_total{verb=\"POST\",resource=\"pods\",subresource=\"binding\"} 8\n\
    requests_total{verb=\"POST\",resource=\"pods\",subresource=\"\"} 7\n\
    requests_total{verb=\"GET\",resource=\"nodes\",subresource=\"\"} 4\n\
    quoted{path=\"a \\\"b\\\", c\",code=\"200\"} 3\n\
    up 1\n";

/// The harness reads the Prometheus text format it scrapes: labels by name (quoted commas and
/// escaped quotes inside values), comments and unlabelled samples.
#[test]
fn the_harness_reads_names_labels_and_values_of_prometheus_text() {
    let all: Vec<Sample> = samples(AFTER).collect();
    assert_eq!(all.len(), 13);
    assert_eq!(all[12], Sample { name: "up", labels: "", value: 1.0 });
    let quoted = &all[11];
    assert_eq!(quoted.label("path"), Some(r#"a \"b\", c"#));
    assert_eq!(quoted.label("code"), Some("200"));
    assert_eq!(quoted.label("pat"), None);
    assert!(quoted.has_all(&[r#"code="200""#]));
    assert!(!quoted.has_all(&[r#"code="20""#]), "a whole value, not a prefix");
}

/// What the harness reports from two scrapes: sums, counter growth by labels, histogram means and
/// quantiles (linear in the bucket, as PromQL's histogram_quantile).
#[test]
fn the_harness_sums_differences_means_and_quantiles_of_two_scrapes() {
    assert_eq!(metric_sum(AFTER, "requests_total", &[r#"verb="POST""#]), 15.0);
    assert_eq!(metric_sum(AFTER, "requests_total", &[]), 19.0);
    assert_eq!(
        counter_deltas(BEFORE, AFTER, "requests_total", &["verb", "resource", "subresource"]),
        vec![
            ("verb=GET,resource=nodes".to_string(), 4.0),
            ("verb=POST,resource=pods,subresource=binding".to_string(), 3.0)
        ]
    );
    assert!((mean_between(BEFORE, AFTER, "x_seconds", &[r#"verb="filter""#]) - 0.5).abs() < 1e-9);
    assert_eq!(mean_between(BEFORE, AFTER, "x_seconds", &[r#"verb="bind""#]), 0.0, "nothing observed");
    // Between the scrapes: 10 filters in (0.1, 1], 10 binds above 1.
    assert!((quantile_between(BEFORE, AFTER, "x_seconds", 0.25) - 0.55).abs() < 1e-9);
    assert_eq!(quantile_between(BEFORE, AFTER, "x_seconds", 0.99), 1.0, "in +Inf: the last finite bound");
    assert_eq!(quantile_between(AFTER, AFTER, "x_seconds", 0.5), 0.0);
}
