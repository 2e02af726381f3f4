//! The soak: the extender in live mode on a generated 5,000-node cluster served by the fake API
//! server, 16 clients sending /filter (both modes), /prioritize, /bind and /preempt for ten minutes
//! while the API server adds, deletes and updates pods and nodes at 50 events a second and twice
//! restarts every watch with 410 Gone. At the end the model is compared object by object with the
//! API server's state.
//!
//! ```sh
//! cargo test --release --test soak -- --ignored --nocapture
//! SOAK_SECONDS=30 cargo test --release --test soak -- --ignored --nocapture   # a short try
//! ```
//!
//! Settings from the environment: `SOAK_SECONDS` (600), `SOAK_NODES` (5000), `SOAK_PODS_PER_NODE`
//! (20), `SOAK_CLIENTS` (16), `SOAK_EVENTS_PER_SECOND` (50), `SOAK_WARMUP_SECONDS` (a fifth of the
//! run, at most 120). Resident memory is sampled every 10 s; its growth is the mean of the last
//! minute of samples over the mean of the minute after the warm-up, and must stay within 5%.
//!
//! Two processes, so that the resident memory measured is the extender's alone: this test runs the
//! fake API server, the cluster's changes and the clients, and starts itself again as the extender
//! (`soak_extender_process`, which does nothing unless started so). That process runs the server
//! as `predicate-extender serve --kubeconfig` would, with the binary's allocator, and on request
//! compares its model with a fresh list of the API server (`list_once`, the watches' decoding).
//! It reports failures as a list; the assertions come after the summary is printed.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

// As the binary: the memory measured is the allocator's the server runs with.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod common;
use predicate_extender_testing::fake_apiserver;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};

use parking_lot::Mutex;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use common::model_diff::differences;
use fake_apiserver::FakeApiServer;
use gen_cluster::api_objects::{cluster_node, cluster_pod, pending_pod, pod};
use gen_cluster::generate::{ClusterSpec, Rng};
use gen_cluster::write::{extender_args, ArgsMode};
use predicate_engine::cluster::ObjectKind;
use predicate_extender::server::{ClusterSource, ServeConfig};
use predicate_extender::source::kube::{list_once, Connection};
use serde_json::{json, Value};

/// Set (to the kubeconfig path) in the extender process the soak starts.
const CHILD_ENV: &str = "PREDICATE_EXTENDER_SOAK_KUBECONFIG";
/// Lines of the extender process meant for the soak start with this.
const TAG: &str = "SOAK-EXTENDER";

fn setting(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v.parse().unwrap_or_else(|_| panic!("{name}={v:?}: not a whole number")),
        Err(_) => default,
    }
}

// ---------------------------------------------------------------------------------------------------------
// The extender process

#[test]
#[ignore = "the extender process of the soak: does nothing unless the soak starts it"]
fn soak_extender_process() {
    let Ok(kubeconfig) = std::env::var(CHILD_ENV) else { return };
    // Warnings, and the watches' lists (RUST_LOG), to stderr as JSON, which the soak keeps in a file.
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .json()
        .init();
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async move {
        let connection = Connection::Kubeconfig(kubeconfig.into());
        let mut config = ServeConfig::new(ClusterSource::Kube(connection.clone()));
        config.listen = "127.0.0.1:0".parse().unwrap();
        config.admin_listen = "127.0.0.1:0".parse().unwrap();
        let server = predicate_extender::server::start(config).await.expect("the extender starts");
        println!("{TAG} listening {} {}", server.verbs_addr, server.admin_addr);
        let (lines, commands) = tokio::sync::mpsc::unbounded_channel();
        std::thread::spawn(move || {
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { return };
                if lines.send(line).is_err() {
                    return;
                }
            }
        });
        let mut commands = commands;
        while let Some(command) = commands.recv().await {
            match command.trim() {
                "compare" => {
                    let answer = match list_once(&connection, Default::default()).await {
                        Ok(truth) => {
                            let model = server.store.snapshot();
                            let compared = (model.count(ObjectKind::Node), model.count(ObjectKind::Pod));
                            json!({"differences": differences(&model, &truth, 20), "nodes": compared.0, "pods": compared.1})
                        }
                        Err(e) => json!({"error": e.to_string()}),
                    };
                    println!("{TAG} compare {answer}");
                }
                _ => break,
            }
        }
        server.shutdown().await.expect("shutdown");
    });
}

/// The extender process, as the soak talks to it.
struct Extender {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    verbs: String,
    admin: String,
}

impl Extender {
    fn start(kubeconfig: &std::path::Path, log: &std::path::Path) -> Extender {
        let exe = std::env::current_exe().expect("the test binary");
        let mut child = Command::new(exe)
            .args(["--exact", "soak_extender_process", "--ignored", "--nocapture", "--test-threads", "1"])
            .env(CHILD_ENV, kubeconfig)
            .env("RUST_LOG", "warn,predicate_extender::source::kube::watch_loop=info")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(log).expect("the extender's log file"))
            .spawn()
            .expect("start the extender process");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                // libtest's "test soak_extender_process ... " has no newline of its own.
                if let Some(at) = line.find(TAG) {
                    if tx.send(line[at + TAG.len()..].trim().to_string()).is_err() {
                        return;
                    }
                }
            }
        });
        let mut extender = Extender { child, stdin, lines, verbs: String::new(), admin: String::new() };
        let listening = extender.next_line("the listening line", Duration::from_secs(60));
        let parts: Vec<&str> = listening.split_whitespace().collect();
        assert_eq!(parts.first(), Some(&"listening"), "{listening}");
        extender.verbs = format!("http://{}", parts[1]);
        extender.admin = format!("http://{}", parts[2]);
        extender
    }

    fn next_line(&self, what: &str, within: Duration) -> String {
        self.lines.recv_timeout(within).unwrap_or_else(|e| panic!("the extender process: no {what}: {e}"))
    }

    /// The extender's model compared with a fresh list: the differences, and what was compared.
    fn compare(&mut self) -> Value {
        writeln!(self.stdin, "compare").expect("write to the extender process");
        let line = self.next_line("comparison", Duration::from_secs(300));
        let json = line.strip_prefix("compare").unwrap_or(&line).trim();
        serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    /// Resident memory in bytes, from /proc.
    fn rss(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    }

    fn stop(mut self) {
        let _ = writeln!(self.stdin, "quit");
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---------------------------------------------------------------------------------------------------------
// The cluster and its changes

/// What the API server holds, as far as the changes and the clients need to know.
struct Cluster {
    spec: ClusterSpec,
    /// Every pod, `(namespace, name)`.
    pods: Vec<(String, String)>,
    /// How many pods the changes keep it at.
    target_pods: usize,
    nodes: Vec<String>,
    deleted_nodes: Vec<String>,
    next: u64,
}

impl Cluster {
    fn random_node(&self, rng: &mut Rng) -> String {
        self.nodes[rng.below(self.nodes.len() as u64) as usize].clone()
    }
}

fn key_of(object: &Value) -> (String, String) {
    let meta = &object["metadata"];
    (meta["namespace"].as_str().unwrap_or("").to_string(), meta["name"].as_str().unwrap_or("").to_string())
}

/// Loads the generated cluster into the API server.
fn populate(api: &FakeApiServer, spec: &ClusterSpec) -> Cluster {
    use rayon::prelude::*;
    let mut pods = Vec::with_capacity(spec.nodes * spec.pods_per_node);
    for namespace in ["default", "shop", "soak", "team-0", "team-1", "team-2", "team-3", "team-4"] {
        api.apply(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}));
    }
    let nodes: Vec<Value> = (0..spec.nodes).into_par_iter().map(|i| cluster_node(spec, i)).collect();
    let names: Vec<String> = nodes.iter().map(|n| key_of(n).1).collect();
    for node in nodes {
        api.apply(node);
    }
    for chunk in (0..spec.nodes).collect::<Vec<_>>().chunks(250) {
        let objects: Vec<Value> = chunk
            .par_iter()
            .flat_map_iter(|&i| (0..spec.pods_per_node).map(move |j| cluster_pod(spec, i, j)))
            .collect();
        for object in objects {
            pods.push(key_of(&object));
            api.apply(object);
        }
    }
    let target_pods = pods.len();
    Cluster { spec: *spec, pods, target_pods, nodes: names, deleted_nodes: Vec::new(), next: 0 }
}

/// One change to the cluster: pods added and deleted around the target count, pods and nodes
/// updated, nodes deleted and added back.
fn change(api: &FakeApiServer, cluster: &Mutex<Cluster>, rng: &mut Rng) {
    let mut c = cluster.lock();
    c.next += 1;
    let n = c.next;
    match rng.below(100) {
        0..50 if c.pods.len() < c.target_pods => {
            let node = c.random_node(rng);
            let object = pod(&c.spec.clone(), rng, &format!("churn-{n}"), &node);
            c.pods.push(key_of(&object));
            drop(c);
            api.apply(object);
        }
        0..50 => {
            let at = rng.below(c.pods.len() as u64) as usize;
            let (namespace, name) = c.pods.swap_remove(at);
            drop(c);
            api.delete("Pod", &namespace, &name);
        }
        50..75 => {
            let (namespace, name) = c.pods[rng.below(c.pods.len() as u64) as usize].clone();
            drop(c);
            if let Some(mut object) = api.get("Pod", &namespace, &name) {
                object["metadata"]["labels"]["soak-revision"] = json!(n.to_string());
                api.apply(object);
            }
        }
        75..90 => {
            let node = c.random_node(rng);
            drop(c);
            if let Some(mut object) = api.get("Node", "", &node) {
                object["metadata"]["labels"]["soak-revision"] = json!(n.to_string());
                let tainted = object["spec"]["taints"].as_array().is_some_and(|t| !t.is_empty());
                object["spec"]["taints"] =
                    if tainted { json!([]) } else { json!([{"key": "soak", "value": "x", "effect": "NoSchedule"}]) };
                api.apply(object);
            }
        }
        _ if c.deleted_nodes.len() < 20 && rng.below(2) == 0 => {
            let at = rng.below(c.nodes.len() as u64) as usize;
            let node = c.nodes.swap_remove(at);
            c.deleted_nodes.push(node.clone());
            drop(c);
            api.delete("Node", "", &node);
        }
        _ => {
            let Some(node) = c.deleted_nodes.pop() else { return };
            let index: usize = node.trim_start_matches("node-").parse().unwrap_or(0);
            c.nodes.push(node);
            let object = cluster_node(&c.spec, index);
            drop(c);
            api.apply(object);
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// The clients

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Verb {
    FilterNames,
    FilterNodes,
    Prioritize,
    Bind,
    Preempt,
}

impl Verb {
    fn label(self) -> &'static str {
        match self {
            Verb::FilterNames => "/filter, NodeNames (500 of the nodes)",
            Verb::FilterNodes => "/filter, Nodes (500 full nodes)",
            Verb::Prioritize => "/prioritize, NodeNames (500)",
            Verb::Bind => "/bind (a pod created just before)",
            Verb::Preempt => "/preempt, NodeNameToMetaVictims",
        }
    }

    fn pick(rng: &mut Rng) -> Verb {
        match rng.below(100) {
            0..35 => Verb::FilterNames,
            35..50 => Verb::FilterNodes,
            50..75 => Verb::Prioritize,
            75..90 => Verb::Bind,
            _ => Verb::Preempt,
        }
    }
}

#[derive(Default)]
struct Tally {
    /// Milliseconds of every answered request.
    latencies: Vec<f64>,
    errors: Vec<String>,
}

struct Bodies {
    names: Bytes,
    nodes: Bytes,
}

/// One request of `verb`; `Err` is an unexpected answer.
async fn request(
    http: &reqwest::Client,
    base: &str,
    verb: Verb,
    bodies: &Bodies,
    api: &FakeApiServer,
    cluster: &Mutex<Cluster>,
    rng: &mut Rng,
) -> Result<(), String> {
    // A pod bound here joins the cluster's pods once the bind worked (before, a change could
    // delete or overwrite it under the bind).
    let mut bound = None;
    let (path, body) = match verb {
        Verb::FilterNames => ("/filter", bodies.names.clone()),
        Verb::FilterNodes => ("/filter", bodies.nodes.clone()),
        Verb::Prioritize => ("/prioritize", bodies.names.clone()),
        Verb::Bind => {
            let (spec, n, node) = {
                let mut c = cluster.lock();
                c.next += 1;
                (c.spec, c.next, c.random_node(rng))
            };
            let object = pod(&spec, rng, &format!("bound-{n}"), "");
            let (namespace, name) = key_of(&object);
            let uid = object["metadata"]["uid"].as_str().unwrap_or("").to_string();
            api.apply(object);
            let args = json!({"PodName": name, "PodNamespace": namespace, "PodUID": uid, "Node": node});
            bound = Some((namespace, name));
            ("/bind", Bytes::from(args.to_string()))
        }
        Verb::Preempt => {
            let picked: Vec<(String, String)> = {
                let c = cluster.lock();
                (0..3).map(|_| c.pods[rng.below(c.pods.len() as u64) as usize].clone()).collect()
            };
            let mut victims: BTreeMap<String, Vec<Value>> = BTreeMap::new();
            for (namespace, name) in picked {
                if let Some(p) = api.get("Pod", &namespace, &name) {
                    let node = p["spec"]["nodeName"].as_str().unwrap_or("").to_string();
                    if !node.is_empty() {
                        victims.entry(node).or_default().push(json!({"UID": p["metadata"]["uid"]}));
                    }
                }
            }
            let mut preemptor = pending_pod(&cluster.lock().spec);
            preemptor["spec"]["priority"] = json!(1000);
            let meta: serde_json::Map<String, Value> =
                victims.into_iter().map(|(node, pods)| (node, json!({"Pods": pods, "NumPDBViolations": 0}))).collect();
            ("/preempt", Bytes::from(json!({"Pod": preemptor, "NodeNameToMetaVictims": meta}).to_string()))
        }
    };
    let resp = http
        .post(format!("{base}{path}"))
        .header("Content-Type", "application/json")
        .body(body)
        .send()
        .await
        .map_err(|e| format!("{path}: {e}"))?;
    let status = resp.status().as_u16();
    let text = resp.text().await.map_err(|e| format!("{path}: reading the answer: {e}"))?;
    if status != 200 {
        return Err(format!("{path}: HTTP {status}: {text}"));
    }
    let answer: Value = serde_json::from_str(&text).map_err(|e| format!("{path}: not JSON ({e})"))?;
    if let Some(error) = answer.get("Error").and_then(Value::as_str).filter(|e| !e.is_empty()) {
        return Err(format!("{path}: {error}"));
    }
    if let Some(key) = bound {
        cluster.lock().pods.push(key);
    }
    Ok(())
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

async fn get_text(http: &reqwest::Client, url: &str) -> (u16, String) {
    match http.get(url).send().await {
        Ok(resp) => {
            let status = resp.status().as_u16();
            (status, resp.text().await.unwrap_or_default())
        }
        Err(e) => (0, e.to_string()),
    }
}

/// What the extender logged: its warnings, and when the pod watch met 410 Gone and relisted.
struct Log {
    warnings: Vec<String>,
    /// `(time, message)` of the pod watch's "listing again" and "listed" lines, in order.
    pod_lists: Vec<(std::time::SystemTime, String)>,
}

impl Log {
    fn parse(text: &str) -> Log {
        let mut log = Log { warnings: Vec::new(), pod_lists: Vec::new() };
        for line in text.lines() {
            let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
            let message = v["fields"]["message"].as_str().unwrap_or("").to_string();
            if v["level"] != "INFO" {
                log.warnings.push(format!("{} {message} {}", v["level"], v["fields"]));
            }
            let at = v["timestamp"].as_str().and_then(|t| humantime::parse_rfc3339_weak(t.trim_end_matches('Z')).ok());
            if let (Some(at), true) = (at, v["fields"]["resource"] == "pods") {
                log.pod_lists.push((at, message));
            }
        }
        log
    }

    /// From each 410 of the pod watch to the end of the list that followed.
    fn pod_relists(&self) -> Vec<Duration> {
        let mut out = Vec::new();
        let mut since = None;
        for (at, message) in &self.pod_lists {
            if message.contains("listing again") {
                since.get_or_insert(*at);
            } else if message == "listed" {
                if let Some(from) = since.take() {
                    out.push(at.duration_since(from).unwrap_or_default());
                }
            }
        }
        out
    }
}

// ---------------------------------------------------------------------------------------------------------
// The soak

#[test]
#[ignore = "a 10-minute soak: cargo test --release --test soak -- --ignored --nocapture"]
fn soak() {
    if std::env::var(CHILD_ENV).is_ok() {
        return;
    }
    tokio::runtime::Runtime::new().expect("runtime").block_on(run());
}

async fn run() {
    let seconds = setting("SOAK_SECONDS", 600);
    let spec = ClusterSpec {
        nodes: setting("SOAK_NODES", 5000) as usize,
        pods_per_node: setting("SOAK_PODS_PER_NODE", 20) as usize,
        ..ClusterSpec::default()
    };
    let clients = setting("SOAK_CLIENTS", 16);
    let events_per_second = setting("SOAK_EVENTS_PER_SECOND", 50);
    let warmup = Duration::from_secs(setting("SOAK_WARMUP_SECONDS", (seconds / 5).min(120)));
    let duration = Duration::from_secs(seconds);

    let api = Arc::new(FakeApiServer::start().await);
    api.record_requests(false);
    api.set_history_limit(20_000);
    let loading = Instant::now();
    let cluster = Arc::new(Mutex::new(populate(&api, &spec)));
    let (node_count, pod_count) = (api.count("Node"), api.count("Pod"));
    eprintln!("soak: {node_count} nodes and {pod_count} pods loaded in {:.0?}", loading.elapsed());

    let dir = tempfile::tempdir().expect("a temp dir");
    let log = dir.path().join("extender.log");
    let mut extender = Extender::start(&api.kubeconfig_path(), &log);
    let http = reqwest::Client::builder().timeout(Duration::from_secs(30)).build().unwrap();
    let syncing = Instant::now();
    loop {
        let (status, body) = get_text(&http, &format!("{}/readyz", extender.admin)).await;
        if status == 200 {
            break;
        }
        assert!(syncing.elapsed() < Duration::from_secs(600), "not ready after 10 minutes: {body}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let synced_in = syncing.elapsed();
    eprintln!("soak: the extender synced in {synced_in:.0?}; running for {duration:?}");

    let bodies = Arc::new(Bodies {
        names: extender_args(&spec, ArgsMode::NodeNames, 500).expect("NodeNames body").into(),
        nodes: extender_args(&spec, ArgsMode::Nodes, 500).expect("Nodes body").into(),
    });
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();

    // The cluster changes, and the two 410 restarts.
    let events = Arc::new(AtomicU64::new(0));
    let churn = {
        let (api, cluster, stop, events) = (api.clone(), cluster.clone(), stop.clone(), events.clone());
        tokio::spawn(async move {
            let mut rng = Rng::new(7);
            let period = Duration::from_secs(1) / events_per_second.max(1) as u32;
            let mut tick = tokio::time::interval(period);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
            let restarts = [duration / 3, duration * 2 / 3];
            let mut restarted = 0;
            while !stop.load(Ordering::Relaxed) {
                tick.tick().await;
                change(&api, &cluster, &mut rng);
                events.fetch_add(1, Ordering::Relaxed);
                if restarted < restarts.len() && started.elapsed() >= restarts[restarted] {
                    api.expire_history();
                    restarted += 1;
                    eprintln!("soak: {:.0?}: watches restarted with 410 Gone", started.elapsed());
                }
            }
            restarted
        })
    };

    // The clients.
    let tallies: Arc<Mutex<BTreeMap<Verb, Tally>>> = Arc::default();
    let mut workers = Vec::new();
    for client in 0..clients {
        let (http, base, bodies, api, cluster, stop, tallies) = (
            http.clone(),
            extender.verbs.clone(),
            bodies.clone(),
            api.clone(),
            cluster.clone(),
            stop.clone(),
            tallies.clone(),
        );
        workers.push(tokio::spawn(async move {
            let mut rng = Rng::new(100 + client);
            while !stop.load(Ordering::Relaxed) {
                let verb = Verb::pick(&mut rng);
                let sent = Instant::now();
                let outcome = request(&http, &base, verb, &bodies, &api, &cluster, &mut rng).await;
                let ms = sent.elapsed().as_secs_f64() * 1000.0;
                let mut tallies = tallies.lock();
                let tally = tallies.entry(verb).or_default();
                match outcome {
                    Ok(()) => tally.latencies.push(ms),
                    Err(e) => tally.errors.push(e),
                }
            }
        }));
    }

    // Resident memory and readiness every 10 s.
    let mut samples: Vec<(Duration, u64, u16)> = Vec::new();
    while started.elapsed() < duration {
        let (ready, _) = get_text(&http, &format!("{}/readyz", extender.admin)).await;
        samples.push((started.elapsed(), extender.rss(), ready));
        let next = Duration::from_secs(10 * samples.len() as u64);
        tokio::time::sleep(next.saturating_sub(started.elapsed()).min(duration.saturating_sub(started.elapsed())))
            .await;
    }
    samples.push((started.elapsed(), extender.rss(), get_text(&http, &format!("{}/readyz", extender.admin)).await.0));
    stop.store(true, Ordering::Relaxed);
    let restarts = churn.await.unwrap();
    for w in workers {
        w.await.unwrap();
    }
    let ran = started.elapsed();
    let events = events.load(Ordering::Relaxed);

    // Quiet: the model must come to equal the API server's state.
    let settling = Instant::now();
    let mut comparison = extender.compare();
    let first = comparison.clone();
    while comparison["differences"].as_array().is_none_or(|d| !d.is_empty())
        && settling.elapsed() < Duration::from_secs(60)
    {
        tokio::time::sleep(Duration::from_secs(1)).await;
        comparison = extender.compare();
    }
    let settled_in = settling.elapsed();
    let (_, metrics) = get_text(&http, &format!("{}/metrics", extender.admin)).await;
    let log_lines = std::fs::read_to_string(&log).unwrap_or_default();
    extender.stop();

    // The summary.
    let mut out = String::new();
    let mb = |b: u64| b as f64 / (1 << 20) as f64;
    out += &format!(
        "{} nodes, {} pods at the start; extender synced in {:.1} s; {clients} clients for {:.0} s; \
         {events} cluster changes ({:.1}/s); {restarts} watch restarts with 410 Gone\n\n",
        node_count,
        pod_count,
        synced_in.as_secs_f64(),
        ran.as_secs_f64(),
        events as f64 / ran.as_secs_f64()
    );
    out += "| requests | answered | unexpected errors | p50 ms | p99 ms |\n| --- | ---: | ---: | ---: | ---: |\n";
    let tallies = std::mem::take(&mut *tallies.lock());
    let mut total_errors = Vec::new();
    for (verb, tally) in &tallies {
        let mut sorted = tally.latencies.clone();
        sorted.sort_by(f64::total_cmp);
        out += &format!(
            "| {} | {} | {} | {:.1} | {:.1} |\n",
            verb.label(),
            sorted.len(),
            tally.errors.len(),
            percentile(&sorted, 0.5),
            percentile(&sorted, 0.99)
        );
        total_errors.extend(tally.errors.iter().take(5).cloned());
    }
    // Requests in flight move a single sample by several percent: the baseline and the end are each
    // the mean of a minute of samples.
    let after_warmup: Vec<u64> = samples.iter().filter(|s| s.0 >= warmup).map(|s| s.1).collect();
    let mean = |v: &[u64]| v.iter().sum::<u64>() / v.len().max(1) as u64;
    let baseline = mean(&after_warmup[..after_warmup.len().min(6)]);
    let last = mean(&after_warmup[after_warmup.len().saturating_sub(6)..]);
    let peak = after_warmup.iter().copied().max().unwrap_or(0);
    let growth = |v: u64| (v as f64 / baseline.max(1) as f64 - 1.0) * 100.0;
    out += &format!(
        "\nResident memory of the extender (every 10 s, MiB): {}\n\nThe minute after the {:.0} s warm-up: {:.0} MiB; \
         the last minute {:.0} MiB ({:+.1}%); highest sample after the warm-up {:.0} MiB ({:+.1}%). /readyz not 200 in \
         {} of {} samples.\n",
        samples.iter().map(|s| format!("{:.0}", mb(s.1))).collect::<Vec<_>>().join(" "),
        warmup.as_secs_f64(),
        mb(baseline),
        mb(last),
        growth(last),
        mb(peak),
        growth(peak),
        samples.iter().filter(|s| s.2 != 200).count(),
        samples.len()
    );
    let differences = comparison["differences"].as_array().cloned().unwrap_or_default();
    out += &format!(
        "\nModel against the API server after the run: {} ({} nodes, {} pods compared; settled {:.1} s after the \
         changes stopped).\n",
        if comparison.get("error").is_some() {
            format!("not compared: {}", comparison["error"])
        } else if differences.is_empty() {
            "equal".to_string()
        } else {
            format!("{} differences", differences.len())
        },
        comparison["nodes"],
        comparison["pods"],
        settled_in.as_secs_f64()
    );
    if first["differences"].as_array().is_some_and(|d| !d.is_empty()) {
        out += &format!("First comparison, right after the changes stopped: {first}\n");
    }
    let series: Vec<&str> = metrics
        .lines()
        .filter(|l| l.starts_with("predicate_extender_bind_total") || l.starts_with("predicate_extender_assumed_pods "))
        .filter(|l| !l.ends_with(" 0") || l.starts_with("predicate_extender_assumed_pods "))
        .collect();
    out += &format!("\nExtender metrics at the end: {}\n", series.join("; "));
    let log = Log::parse(&log_lines);
    out += &format!(
        "Pod relists after 410 Gone took {} s (from the 410 to the model replaced). Extender warnings: {} \
         ({} of them assumptions that expired).\n",
        log.pod_relists().iter().map(|d| format!("{:.1}", d.as_secs_f64())).collect::<Vec<_>>().join(", "),
        log.warnings.len(),
        log.warnings.iter().filter(|w| w.contains("assumed pod expired")).count()
    );
    println!("\n{out}");
    for line in log.warnings.iter().filter(|w| !w.contains("assumed pod expired")).take(10) {
        eprintln!("extender warning: {line}");
    }

    assert!(total_errors.is_empty(), "unexpected errors, e.g. {total_errors:#?}");
    assert!(differences.is_empty() && comparison.get("error").is_none(), "the model differs: {comparison:#}");
    assert_eq!(restarts, 2, "two 410 restarts");
    assert!(
        growth(last) <= 5.0,
        "resident memory grew {:.1}% from the minute after the warm-up to the last",
        growth(last)
    );
}
