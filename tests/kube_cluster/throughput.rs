//! The throughput measurement behind `e2e/throughput.sh` (examples/scheduler-throughput.rs) and its
//! CI smoke (tests/e2e_throughput.rs), modelled on upstream's scheduler_perf
//! (test/integration/scheduler_perf): nodes from its node-default template (4 cpu, 32Gi, 110 pods,
//! Ready), initial pods scheduled first, then the measured pods created at once; scheduled pods
//! sampled every second (average and percentiles of the samples, as its throughputCollector
//! computes them) and each measured pod's latency from its creation to its binding as a watch sees
//! them, plus kube-scheduler's own SLI histogram.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{PostParams, WatchEvent, WatchParams};
use kube::Api;
use serde_json::{json, Value};

use super::objects::{create, SCHEDULER_NAME};
use super::{Cluster, Options};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Config {
    /// kube-scheduler's default profile, no extender.
    Alone,
    /// The shipped configuration: the extender for filter, prioritize, preempt and bind.
    Extender,
    /// The shipped configuration with the profile's own filters and scores the Policy replaces off.
    Policy,
}

/// One measurement: the cluster's size and the configuration.
#[derive(Debug, Clone)]
pub struct Run {
    pub nodes: usize,
    pub initial_pods: usize,
    pub measured_pods: usize,
    pub config: Config,
    /// Another extender's URL instead of this project's.
    pub extender_url: Option<String>,
}

/// The profile's Filter and Score plugins that the classic Policy's predicates and priorities
/// replace (configuration `policy`).
const REPLACED_FILTERS: [&str; 9] = [
    "NodeUnschedulable",
    "NodeName",
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "NodeResourcesFit",
    "VolumeRestrictions",
    "PodTopologySpread",
    "InterPodAffinity",
];
const REPLACED_SCORES: [&str; 7] = [
    "NodeResourcesFit",
    "NodeResourcesBalancedAllocation",
    "ImageLocality",
    "InterPodAffinity",
    "NodeAffinity",
    "PodTopologySpread",
    "TaintToleration",
];

/// scheduler_perf's client limits: the API rate limit is not what is measured.
fn raise_qps(mut config: Value) -> Value {
    config["clientConnection"]["qps"] = json!(5000);
    config["clientConnection"]["burst"] = json!(5000);
    config
}

fn alone(config: Value) -> Value {
    let mut config = raise_qps(config);
    config.as_object_mut().unwrap().remove("extenders");
    config
}

fn policy_only(config: Value) -> Value {
    let mut config = raise_qps(config);
    let disabled = |names: &[&str]| names.iter().map(|n| json!({"name": n})).collect::<Vec<_>>();
    config["profiles"][0]["plugins"] = json!({
        "filter": {"disabled": disabled(&REPLACED_FILTERS)},
        "score": {"disabled": disabled(&REPLACED_SCORES)},
        "preScore": {"disabled": disabled(&["InterPodAffinity", "PodTopologySpread", "TaintToleration", "NodeAffinity"])},
    });
    config
}

fn node(i: usize) -> Value {
    let name = format!("scheduler-perf-{i:05}");
    let resources = json!({"cpu": "4", "memory": "32Gi", "pods": "110"});
    json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": format!("zone-{}", i % 3)}},
        "spec": {},
        "status": {"capacity": resources, "allocatable": resources, "conditions": [{"type": "Ready", "status": "True"}], "phase": "Running"}})
}

/// scheduler_perf's pod-default template, for the shipped profile.
fn pod(namespace: &str, name: &str) -> Pod {
    serde_json::from_value(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"schedulerName": SCHEDULER_NAME, "terminationGracePeriodSeconds": 0, "containers": [{
            "name": "pause", "image": "registry.k8s.io/pause:3.10.2", "ports": [{"containerPort": 80}],
            "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}, "limits": {"cpu": "100m", "memory": "500Mi"}}}]}}))
    .unwrap()
}

/// When each pod of a namespace was first seen bound, as a watch reports it.
#[derive(Default)]
struct Bound {
    at: HashMap<String, Instant>,
}

async fn watch_bindings(api: Api<Pod>, bound: Arc<Mutex<Bound>>) {
    let mut version = "0".to_string();
    loop {
        let params = WatchParams::default().timeout(290);
        let Ok(stream) = api.watch(&params, &version).await else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let mut stream = stream.boxed();
        while let Ok(Some(event)) = stream.try_next().await {
            let pod = match event {
                WatchEvent::Added(p) | WatchEvent::Modified(p) => p,
                _ => continue,
            };
            if let Some(v) = &pod.metadata.resource_version {
                version = v.clone();
            }
            if pod.spec.as_ref().and_then(|s| s.node_name.as_ref()).is_some() {
                let name = pod.metadata.name.unwrap_or_default();
                bound.lock().unwrap().at.entry(name).or_insert_with(Instant::now);
            }
        }
    }
}

async fn create_pods(api: &Api<Pod>, prefix: &str, count: usize) -> HashMap<String, Instant> {
    let created = Arc::new(Mutex::new(HashMap::new()));
    futures::stream::iter(0..count)
        .for_each_concurrent(32, |i| {
            let (api, created) = (api.clone(), created.clone());
            let name = format!("{prefix}-{i:05}");
            async move {
                let p = pod(api.namespace().unwrap_or("default"), &name);
                api.create(&PostParams::default(), &p).await.unwrap();
                created.lock().unwrap().insert(name, Instant::now());
            }
        })
        .await;
    Arc::try_unwrap(created).ok().unwrap().into_inner().unwrap()
}

/// The value at `q` (0..1) of sorted samples, as scheduler_perf indexes them.
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let index = ((sorted.len() as f64 * q).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[index]
}

/// A quantile of a Prometheus histogram (linear within the bucket), from its `_bucket` lines.
fn histogram_quantile(text: &str, name: &str, q: f64) -> f64 {
    let mut buckets: Vec<(f64, f64)> = text
        .lines()
        .filter(|l| l.starts_with(&format!("{name}_bucket{{")))
        .filter_map(|l| {
            let le = l.split("le=\"").nth(1)?.split('"').next()?;
            let le = if le == "+Inf" { f64::INFINITY } else { le.parse().ok()? };
            Some((le, l.rsplit(' ').next()?.parse().ok()?))
        })
        .collect();
    // Families with several label sets: add the counts of each bound.
    buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut merged: Vec<(f64, f64)> = Vec::new();
    for (le, count) in buckets {
        match merged.last_mut() {
            Some((last, total)) if *last == le => *total += count,
            _ => merged.push((le, count)),
        }
    }
    let total = merged.last().map_or(0.0, |b| b.1);
    if total == 0.0 {
        return 0.0;
    }
    let rank = q * total;
    let mut previous = (0.0, 0.0);
    for (le, count) in merged {
        if count >= rank {
            if le.is_infinite() {
                return previous.0;
            }
            let within = if count > previous.1 { (rank - previous.1) / (count - previous.1) } else { 0.0 };
            return previous.0 + (le - previous.0) * within;
        }
        previous = (le, count);
    }
    previous.0
}

/// What one run measured.
pub struct RunResult {
    pub config: Config,
    /// Pods scheduled per second, one sample a second, sorted.
    pub samples: Vec<f64>,
    /// Each measured pod's creation to binding, sorted.
    pub latencies_ms: Vec<f64>,
    /// kube-scheduler's scheduler_pod_scheduling_sli_duration_seconds p50 and p99 (seconds).
    pub sli: (f64, f64),
    pub wall: f64,
    /// Measured pods bound.
    pub bound: usize,
}

impl RunResult {
    pub fn average(&self) -> f64 {
        if self.samples.is_empty() {
            0.0
        } else {
            self.samples.iter().sum::<f64>() / self.samples.len() as f64
        }
    }
}

pub async fn run(args: &Run, round: usize) -> RunResult {
    let config = args.config;
    let binaries = super::binaries::built().as_ref().unwrap_or_else(|e| panic!("{e}")).clone();
    let change: fn(Value) -> Value = match config {
        Config::Alone => alone,
        Config::Extender => raise_qps,
        Config::Policy => policy_only,
    };
    let own_extender = config != Config::Alone && args.extender_url.is_none();
    let options = Options { extender: own_extender, scheduler_config: Some(change), ..Options::default() };
    let mut cluster = Cluster::start_with(binaries, &format!("throughput-{config:?}-{round}"), options).await;
    if let Some(url) = &args.extender_url {
        if config != Config::Alone {
            // Another extender: rewrite the address in the config and restart the replica.
            let mut c: Value = serde_json::from_slice(&std::fs::read(&cluster.scheduler_config).unwrap()).unwrap();
            c["extenders"][0]["urlPrefix"] = json!(url);
            std::fs::write(&cluster.scheduler_config, c.to_string()).unwrap();
            cluster.schedulers[0].restart();
        }
    }
    create(&cluster.client, json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "init"}})).await;
    create(&cluster.client, json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "measured"}})).await;
    let nodes: Api<k8s_openapi::api::core::v1::Node> = Api::all(cluster.client.clone());
    futures::stream::iter(0..args.nodes)
        .for_each_concurrent(32, |i| {
            let nodes = nodes.clone();
            async move {
                let n: k8s_openapi::api::core::v1::Node = serde_json::from_value(node(i)).unwrap();
                nodes.create(&PostParams::default(), &n).await.unwrap();
            }
        })
        .await;
    if own_extender {
        // The extender's model has every node before the measured pods arrive.
        let want = args.nodes as f64;
        super::eventually("the extender's model has every node", || async {
            let have = cluster.extender_metric("predicate_extender_cache_objects", &["resource=\"nodes\""]).await;
            (have >= want).then_some(())
        })
        .await;
    }

    let init: Api<Pod> = Api::namespaced(cluster.client.clone(), "init");
    let init_bound = Arc::new(Mutex::new(Bound::default()));
    let init_watch = tokio::spawn(watch_bindings(init.clone(), init_bound.clone()));
    create_pods(&init, "init", args.initial_pods).await;
    let deadline = Instant::now() + Duration::from_secs(600);
    while init_bound.lock().unwrap().at.len() < args.initial_pods {
        assert!(Instant::now() < deadline, "initial pods not all scheduled in 10 minutes");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    init_watch.abort();

    let measured: Api<Pod> = Api::namespaced(cluster.client.clone(), "measured");
    let bound = Arc::new(Mutex::new(Bound::default()));
    let watch = tokio::spawn(watch_bindings(measured.clone(), bound.clone()));
    let sli_before = cluster.scheduler_get(0, "/metrics").await;
    let started = Instant::now();
    // Sampled as scheduler_perf's throughputCollector samples: every second, skipping the first
    // sample and intervals in which nothing was scheduled (folded into the next one).
    let sampler = {
        let bound = bound.clone();
        let total = args.measured_pods;
        tokio::spawn(async move {
            let mut samples = Vec::new();
            let mut ticker = tokio::time::interval(Duration::from_secs(1));
            ticker.tick().await;
            let (mut last_count, mut last_time, mut started, mut skipped) = (0usize, Instant::now(), false, 0usize);
            loop {
                ticker.tick().await;
                let now = Instant::now();
                let scheduled = bound.lock().unwrap().at.len();
                if scheduled == 0 {
                    continue;
                }
                if !started {
                    (started, last_count, last_time) = (true, scheduled, now);
                } else if scheduled == last_count {
                    skipped += 1;
                } else {
                    let rate = (scheduled - last_count) as f64 / now.duration_since(last_time).as_secs_f64();
                    samples.extend(std::iter::repeat_n(rate, skipped + 1));
                    (last_count, last_time, skipped) = (scheduled, now, 0);
                }
                if scheduled >= total {
                    return samples;
                }
            }
        })
    };
    let created = create_pods(&measured, "measured", args.measured_pods).await;
    let deadline = Instant::now() + Duration::from_secs(900);
    while bound.lock().unwrap().at.len() < args.measured_pods {
        assert!(Instant::now() < deadline, "measured pods not all scheduled in 15 minutes");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let wall = started.elapsed().as_secs_f64();
    let mut samples = sampler.await.unwrap();
    watch.abort();
    samples.sort_by(f64::total_cmp);
    let bound = std::mem::take(&mut bound.lock().unwrap().at);
    let mut latencies_ms: Vec<f64> = created
        .iter()
        .filter_map(|(name, at)| Some(bound.get(name)?.saturating_duration_since(*at).as_secs_f64() * 1000.0))
        .collect();
    latencies_ms.sort_by(f64::total_cmp);
    // kube-scheduler's own SLI histogram, measured pods only (the difference of two scrapes).
    let sli_after = String::from_utf8_lossy(&cluster.scheduler_get(0, "/metrics").await).to_string();
    let sli_before = String::from_utf8_lossy(&sli_before).to_string();
    let name = "scheduler_pod_scheduling_sli_duration_seconds";
    let delta = histogram_delta(&sli_before, &sli_after, name);
    let sli = (histogram_quantile(&delta, name, 0.5), histogram_quantile(&delta, name, 0.99));
    RunResult { config, samples, latencies_ms, sli, wall, bound: bound.len() }
}

/// The `_bucket` lines of `after` minus those of `before` (same labels).
fn histogram_delta(before: &str, after: &str, name: &str) -> String {
    let prefix = format!("{name}_bucket{{");
    let values = |text: &str| -> HashMap<String, f64> {
        text.lines()
            .filter(|l| l.starts_with(&prefix))
            .filter_map(|l| {
                let (series, value) = l.rsplit_once(' ')?;
                Some((series.to_string(), value.parse().ok()?))
            })
            .collect()
    };
    let old = values(before);
    values(after).into_iter().map(|(s, v)| format!("{s} {}\n", v - old.get(&s).copied().unwrap_or(0.0))).collect()
}
