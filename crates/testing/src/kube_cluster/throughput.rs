//! The throughput measurement behind `e2e/throughput.sh` (examples/scheduler-throughput.rs) and its
//! CI smoke (tests/e2e_throughput.rs), modelled on upstream's scheduler_perf
//! (test/integration/scheduler_perf): nodes from its node-default template (4 cpu, 32Gi, 110 pods,
//! Ready), initial pods scheduled first, then the measured pods created at once; scheduled pods
//! sampled every second (average and percentiles of the samples, as its throughputCollector
//! computes them) and each measured pod's latency from its creation to its binding as a watch sees
//! them, plus kube-scheduler's own SLI histogram.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim, Pod};
use kube::api::{PostParams, WatchEvent, WatchParams};
use kube::Api;
use serde_json::{json, Value};

use super::objects::create;
use super::prometheus::{counter_deltas, mean_between, quantile_between};
use super::workloads::{Phase, Workload};
use super::{Cluster, Options};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Config {
    /// kube-scheduler's default profile, no extender.
    Alone,
    /// The shipped configuration: the extender for filter, prioritize, preempt and bind.
    Extender,
    /// The shipped configuration with the profile's own filters and scores the Policy replaces off.
    Policy,
    /// The shipped configuration calling an extender that does no work (crates/testing/src/kube_cluster/
    /// null_extender.rs): the cost of the protocol itself.
    Null,
    /// The shipped configuration without `bindVerb`: kube-scheduler binds the pods itself, and the
    /// extender learns each binding from its watch.
    KubeBinds,
    /// The in-process kube-scheduler (docs/in-process.md) as `overlays/in-process` ships it: the
    /// engine linked into kube-scheduler as the PredicateEngine plugin, running config/policy.json,
    /// and kube-scheduler's own plugins the Policy replaces off
    /// (`config/scheduler-config-in-process.yaml`).
    InProcess,
}

impl Config {
    /// The name as `--configs` spells it (`kube-binds`).
    pub fn name(self) -> String {
        use clap::ValueEnum;
        self.to_possible_value().map_or_else(|| format!("{self:?}"), |v| v.get_name().to_string())
    }
}

/// One measurement: the cluster's size and the configuration.
#[derive(Debug, Clone)]
pub struct Run {
    pub workload: Workload,
    pub nodes: usize,
    pub initial_pods: usize,
    pub measured_pods: usize,
    pub config: Config,
    /// Another extender's URL instead of this project's.
    pub extender_url: Option<String>,
    /// Where to write kube-scheduler's and kube-apiserver's CPU profiles (pprof) and the
    /// extender's (`perf record`)
    /// over the first `profile_seconds` of the measured pods.
    pub profile: Option<(std::path::PathBuf, u32)>,
    /// More arguments for this project's extender (`--parallelism=1`).
    pub extender_args: Vec<String>,
    /// Values set in kube-scheduler's configuration (dotted path, JSON value) before the
    /// configuration's own change.
    pub scheduler_settings: Vec<(String, Value)>,
    /// The share of the measured pods whose binding ends the run (1.0: all). Preemption leaves
    /// kube-scheduler a pod to retry minutes later now and then (its queue's backoff and flush):
    /// a run that stops at 0.99 measures scheduling, not that wait.
    pub complete_at: f64,
}

impl Run {
    /// A run of `config` on this project's extender as shipped: no profile, no extra settings,
    /// ended when every measured pod is bound.
    pub fn new(workload: Workload, nodes: usize, initial_pods: usize, measured_pods: usize, config: Config) -> Run {
        Run {
            workload,
            nodes,
            initial_pods,
            measured_pods,
            config,
            extender_url: None,
            profile: None,
            extender_args: Vec::new(),
            scheduler_settings: Vec::new(),
            complete_at: 1.0,
        }
    }

    /// How many measured pods bound end the run.
    pub fn target(&self) -> usize {
        ((self.measured_pods as f64 * self.complete_at.clamp(0.0, 1.0)).ceil() as usize)
            .clamp(1, self.measured_pods.max(1))
    }
}

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

/// The shipped configuration with kube-scheduler binding (configuration `kube-binds`).
fn kube_binds(config: Value) -> Value {
    super::scheduler_config::with_kube_scheduler_binding(raise_qps(config))
}

/// The Policy the shipped Deployment and overlays run.
const SHIPPED_POLICY: &str = "config/policy.json";

/// The profile of `config/scheduler-config-policy.yaml` (configuration `policy`).
fn policy_only(config: Value) -> Value {
    super::scheduler_config::with_policy_only_plugins(raise_qps(config))
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
                bound.lock().at.entry(name).or_insert_with(Instant::now);
            }
        }
    }
}

/// Creates the workload's volumes and claims for `count` pods of `phase` (none for most
/// workloads), before any of its pods.
async fn create_volumes(client: &kube::Client, namespace: &str, workload: Workload, phase: Phase, count: usize) {
    let prefix = if phase == Phase::Initial { "init" } else { "measured" };
    let volumes: Api<PersistentVolume> = Api::all(client.clone());
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), namespace);
    futures::stream::iter(0..count)
        .for_each_concurrent(32, |i| {
            let (volumes, claims) = (volumes.clone(), claims.clone());
            async move {
                let Some((pv, pvc)) = workload.volume(namespace, &format!("{prefix}-{i:05}"), i) else { return };
                volumes.create(&PostParams::default(), &pv).await.unwrap();
                claims.create(&PostParams::default(), &pvc).await.unwrap();
            }
        })
        .await;
}

async fn create_pods(api: &Api<Pod>, workload: Workload, phase: Phase, count: usize) -> HashMap<String, Instant> {
    let prefix = if phase == Phase::Initial { "init" } else { "measured" };
    let created = Arc::new(Mutex::new(HashMap::new()));
    futures::stream::iter(0..count)
        .for_each_concurrent(32, |i| {
            let (api, created) = (api.clone(), created.clone());
            let name = format!("{prefix}-{i:05}");
            async move {
                let p = workload.pod(phase, api.namespace().unwrap_or("default"), &name);
                api.create(&PostParams::default(), &p).await.unwrap();
                created.lock().insert(name, Instant::now());
            }
        })
        .await;
    Arc::try_unwrap(created).ok().unwrap().into_inner()
}

/// The value at `q` (0..1) of sorted samples, as scheduler_perf indexes them.
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let index = ((sorted.len() as f64 * q).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[index]
}

/// Stops a task when the run ends.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// CPU seconds each process of the cluster and the harness itself have used so far.
fn cpu_now(cluster: &Cluster) -> Vec<(String, f64)> {
    let mut all: Vec<(String, f64)> =
        cluster.processes().iter().filter_map(|p| Some((p.name.clone(), p.cpu_seconds()?))).collect();
    all.extend(super::process::cpu_seconds("/proc/self/stat").map(|s| ("harness".to_string(), s)));
    all
}

/// Where the measured pods' time went: CPU per process, kube-scheduler's cycle and the extender's
/// requests, all per measured pod or per request, in milliseconds.
#[derive(Debug, Default, Clone)]
pub struct Split {
    /// CPU milliseconds per measured pod, by process (`harness` is this program).
    pub cpu_ms_per_pod: Vec<(String, f64)>,
    /// Mean milliseconds of kube-scheduler's scheduling attempt and of its algorithm (filter,
    /// extenders, score) per attempt.
    pub attempt_ms: f64,
    pub algorithm_ms: f64,
    /// The extender's mean milliseconds per request, inside its server, by verb.
    pub extender_ms: Vec<(&'static str, f64)>,
    /// Requests the API server answered per measured pod, by verb, resource and subresource,
    /// most first.
    pub apiserver_requests: Vec<(String, f64)>,
    /// Nodes the extender's /filter answers failed per measured pod, by predicate, most first:
    /// the `FailedNodes` reasons kube-scheduler decodes.
    pub extender_rejections: Vec<(String, f64)>,
    /// Each process's peak resident memory at the run's end (`VmHWM`), MiB.
    pub peak_rss_mib: Vec<(String, f64)>,
}

/// How long the harness watches the idle cluster before the measured pods, to learn each
/// process's background CPU (lease renewals, watch bookmarks, compaction).
const IDLE_WINDOW: Duration = Duration::from_secs(5);

/// The CPU seconds each process used between two readings.
fn cpu_between(before: &[(String, f64)], after: &[(String, f64)]) -> Vec<(String, f64)> {
    after
        .iter()
        .filter_map(|(name, a)| {
            let b = before.iter().find(|(n, _)| n == name)?.1;
            Some((name.clone(), a - b))
        })
        .collect()
}

async fn apiserver_metrics(cluster: &Cluster) -> String {
    let request = hyper::Request::get("/metrics").body(Vec::new()).unwrap();
    cluster.client.request_text(request).await.unwrap_or_else(|e| panic!("GET the API server's /metrics: {e}"))
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
    pub split: Split,
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
    let binaries = super::binaries::built(super::NEWEST).unwrap_or_else(|e| panic!("{e}"));
    let change: fn(Value) -> Value = match config {
        Config::Alone | Config::InProcess => alone,
        Config::Extender | Config::Null => raise_qps,
        Config::Policy => policy_only,
        Config::KubeBinds => kube_binds,
    };
    let null = if config == Config::Null { Some(super::null_extender::listen().await) } else { None };
    let extender_url = match &null {
        Some((_, url)) => Some(url.clone()),
        None => args.extender_url.clone(),
    };
    let in_process = config == Config::InProcess;
    let own_extender = config != Config::Alone && !in_process && extender_url.is_none();
    let in_process = in_process.then(|| super::InProcess {
        binary: super::binaries::in_process_scheduler(super::NEWEST, "throughput")
            .unwrap_or_else(|| panic!("the in-process kube-scheduler was not built")),
        policy: Some(crate::workspace_root().as_path().join(SHIPPED_POLICY)),
    });
    let options = Options {
        extender: own_extender,
        extender_args: args.extender_args.clone(),
        scheduler_config: Some(change),
        scheduler_settings: args.scheduler_settings.clone(),
        extender_url,
        in_process,
        controller_manager: args.workload.needs_controller_manager(),
        // The test clusters' API server serves no /debug/pprof; a profiled run needs it.
        apiserver_args: if args.profile.is_some() { vec!["--profiling=true".to_string()] } else { Vec::new() },
        ..Options::default()
    };
    let cluster = Cluster::start_with(binaries, &format!("throughput-{config:?}-{round}"), options).await;
    let _null_extender =
        null.map(|(listener, _)| AbortOnDrop(super::null_extender::serve(listener, cluster.client.clone())));
    for object in args.workload.setup() {
        create(&cluster.client, object).await;
    }
    create(&cluster.client, json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "init"}})).await;
    create(&cluster.client, json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "measured"}})).await;
    let nodes: Api<k8s_openapi::api::core::v1::Node> = Api::all(cluster.client.clone());
    futures::stream::iter(0..args.nodes)
        .for_each_concurrent(32, |i| {
            let nodes = nodes.clone();
            async move {
                let n: k8s_openapi::api::core::v1::Node = serde_json::from_value(args.workload.node(i)).unwrap();
                nodes.create(&PostParams::default(), &n).await.unwrap();
            }
        })
        .await;
    if own_extender {
        // The extender's model has every node before the measured pods arrive.
        let want = args.nodes as f64;
        crate::eventually("the extender's model has every node", super::DEADLINE, || async {
            let have = cluster.extender_metric("predicate_extender_cache_objects", &["resource=\"nodes\""]).await;
            (have >= want).then_some(())
        })
        .await;
    }

    let init: Api<Pod> = Api::namespaced(cluster.client.clone(), "init");
    let init_bound = Arc::new(Mutex::new(Bound::default()));
    let init_watch = tokio::spawn(watch_bindings(init.clone(), init_bound.clone()));
    create_volumes(&cluster.client, "init", args.workload, Phase::Initial, args.initial_pods).await;
    create_pods(&init, args.workload, Phase::Initial, args.initial_pods).await;
    let deadline = Instant::now() + Duration::from_secs(600);
    while init_bound.lock().at.len() < args.initial_pods {
        assert!(Instant::now() < deadline, "initial pods not all scheduled in 10 minutes");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    init_watch.abort();

    // What each process uses with nothing to schedule, subtracted from the measured phase's CPU.
    let (idle_cpu, idle_start) = (cpu_now(&cluster), Instant::now());
    tokio::time::sleep(IDLE_WINDOW).await;
    let idle_seconds = idle_start.elapsed().as_secs_f64();
    let idle_rates: Vec<(String, f64)> = cpu_between(&idle_cpu, &cpu_now(&cluster))
        .into_iter()
        .map(|(name, used)| (name, used / idle_seconds))
        .collect();

    let measured: Api<Pod> = Api::namespaced(cluster.client.clone(), "measured");
    // The measured pods' volumes exist before the clock starts: creating them is not scheduling.
    create_volumes(&cluster.client, "measured", args.workload, Phase::Measured, args.measured_pods).await;
    let bound = Arc::new(Mutex::new(Bound::default()));
    let watch = tokio::spawn(watch_bindings(measured.clone(), bound.clone()));
    let sli_before = cluster.scheduler_get(0, "/metrics").await;
    let apiserver_before = apiserver_metrics(&cluster).await;
    let extender_before = if own_extender { cluster.extender_metrics().await } else { String::new() };
    let cpu_before = cpu_now(&cluster);
    let profiling = args.profile.as_ref().map(|(dir, seconds)| start_profiles(&cluster, dir, *seconds, config, round));
    let started = Instant::now();
    // Sampled as scheduler_perf's throughputCollector samples: every second, skipping the first
    // sample and intervals in which nothing was scheduled (folded into the next one).
    let sampler = {
        let bound = bound.clone();
        let total = args.target();
        tokio::spawn(async move {
            let mut samples = Vec::new();
            let mut ticker = tokio::time::interval(Duration::from_secs(1));
            ticker.tick().await;
            let (mut last_count, mut last_time, mut started, mut skipped) = (0usize, Instant::now(), false, 0usize);
            loop {
                ticker.tick().await;
                let now = Instant::now();
                let scheduled = bound.lock().at.len();
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
    let created = create_pods(&measured, args.workload, Phase::Measured, args.measured_pods).await;
    let deadline = Instant::now() + Duration::from_secs(900);
    while bound.lock().at.len() < args.target() {
        assert!(Instant::now() < deadline, "measured pods not scheduled in 15 minutes");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let wall = started.elapsed().as_secs_f64();
    let cpu_after = cpu_now(&cluster);
    if let Some(profiling) = profiling {
        profiling.await.unwrap();
    }
    let mut samples = sampler.await.unwrap();
    watch.abort();
    samples.sort_by(f64::total_cmp);
    let bound = std::mem::take(&mut bound.lock().at);
    let mut latencies_ms: Vec<f64> = created
        .iter()
        .filter_map(|(name, at)| Some(bound.get(name)?.saturating_duration_since(*at).as_secs_f64() * 1000.0))
        .collect();
    latencies_ms.sort_by(f64::total_cmp);
    // kube-scheduler's own SLI histogram, measured pods only (the difference of two scrapes).
    let sli_after = String::from_utf8_lossy(&cluster.scheduler_get(0, "/metrics").await).to_string();
    let sli_before = String::from_utf8_lossy(&sli_before).to_string();
    let name = "scheduler_pod_scheduling_sli_duration_seconds";
    let sli =
        (quantile_between(&sli_before, &sli_after, name, 0.5), quantile_between(&sli_before, &sli_after, name, 0.99));
    // Per pod bound: the run may stop short of all of them (`complete_at`).
    let pods = bound.len().max(1) as f64;
    let cpu_ms_per_pod = cpu_between(&cpu_before, &cpu_after)
        .into_iter()
        .map(|(name, used)| {
            let background = idle_rates.iter().find(|(n, _)| *n == name).map_or(0.0, |(_, rate)| rate * wall);
            (name, (used - background).max(0.0) * 1000.0 / pods)
        })
        .collect();
    let apiserver_after = apiserver_metrics(&cluster).await;
    let apiserver_requests = counter_deltas(
        &apiserver_before,
        &apiserver_after,
        "apiserver_request_total",
        &["verb", "resource", "subresource"],
    )
    .into_iter()
    .map(|(series, count)| (series, count / pods))
    .collect();
    let extender_after = if own_extender { cluster.extender_metrics().await } else { String::new() };
    let request = "predicate_extender_http_request_duration_seconds";
    let extender_ms = ["filter", "prioritize", "bind"]
        .into_iter()
        .map(|verb| {
            let label = format!("verb=\"{verb}\"");
            (verb, mean_between(&extender_before, &extender_after, request, &[&label]) * 1000.0)
        })
        .collect();
    let extender_rejections = counter_deltas(
        &extender_before,
        &extender_after,
        "predicate_extender_predicate_rejections_total",
        &["predicate"],
    )
    .into_iter()
    .map(|(series, count)| (series, count / pods))
    .collect();
    let peak_rss_mib = cluster.processes().iter().filter_map(|p| Some((p.name.clone(), p.peak_rss_mib()?))).collect();
    let split = Split {
        peak_rss_mib,
        extender_rejections,
        cpu_ms_per_pod,
        attempt_ms: mean_between(&sli_before, &sli_after, "scheduler_scheduling_attempt_duration_seconds", &[])
            * 1000.0,
        algorithm_ms: mean_between(&sli_before, &sli_after, "scheduler_scheduling_algorithm_duration_seconds", &[])
            * 1000.0,
        extender_ms,
        apiserver_requests,
    };
    RunResult { config, samples, latencies_ms, sli, wall, bound: bound.len(), split }
}

/// A GET of the API server as the cluster's admin, its answer's bytes (a pprof profile is not
/// text).
async fn apiserver_get_bytes(client: kube::Client, path: String) -> Vec<u8> {
    use futures::AsyncReadExt;
    let request = hyper::Request::get(&path).body(Vec::new()).unwrap();
    let mut body = client.request_stream(request).await.unwrap_or_else(|e| panic!("GET {path}: {e}"));
    let mut bytes = Vec::new();
    body.read_to_end(&mut bytes).await.unwrap_or_else(|e| panic!("GET {path}: {e}"));
    bytes
}

/// Starts kube-scheduler's and kube-apiserver's CPU profiles (their `/debug/pprof/profile`) and,
/// when `perf` is there, a `perf record` of the engine's process (the extender, or the in-process
/// kube-scheduler), all for `seconds`; the task ends when all are written.
fn start_profiles(
    cluster: &Cluster,
    dir: &std::path::Path,
    seconds: u32,
    config: Config,
    round: usize,
) -> tokio::task::JoinHandle<()> {
    std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let stem = dir.join(format!("{}-{round}", config.name()));
    // The engine's process: the extender, or kube-scheduler itself in-process.
    let engine = match config {
        Config::InProcess => cluster.schedulers.first().map(|s| (s, "kube-scheduler.perf")),
        _ => cluster.extender.as_ref().map(|e| (e, "extender.perf")),
    };
    let perf = engine.and_then(|(p, name)| p.pid().map(|pid| (pid, name))).and_then(|(pid, name)| {
        let out = stem.with_extension(name);
        std::process::Command::new("perf")
            .args(["record", "-q", "-F", "499", "-g", "-p", &pid.to_string(), "-o"])
            .arg(&out)
            .args(["--", "sleep", &seconds.to_string()])
            .stdout(std::process::Stdio::null())
            .spawn()
            .ok()
    });
    let (port, pprof) = (cluster.scheduler_ports[0], stem.with_extension("kube-scheduler.pprof"));
    let (client, apiserver_pprof) = (cluster.client.clone(), stem.with_extension("kube-apiserver.pprof"));
    tokio::spawn(async move {
        let path = format!("/debug/pprof/profile?seconds={seconds}");
        let apiserver = tokio::spawn(apiserver_get_bytes(client, path.clone()));
        let profile = super::scheduler_get_at(port, path).await;
        std::fs::write(&pprof, profile).unwrap_or_else(|e| panic!("{}: {e}", pprof.display()));
        let profile = apiserver.await.unwrap_or_else(|e| panic!("the API server's profile: {e}"));
        std::fs::write(&apiserver_pprof, profile).unwrap_or_else(|e| panic!("{}: {e}", apiserver_pprof.display()));
        if let Some(mut perf) = perf {
            let _ = tokio::task::spawn_blocking(move || perf.wait()).await;
        }
    })
}
