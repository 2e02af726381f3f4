//! Time to ready and resident memory of the server binary: `predicate-extender serve` started on a
//! generated cluster of 100, 1,000 and 5,000 nodes (gen-cluster's shape: 20 pods per node), once
//! from a snapshot file and once from the fake API server's paginated lists. For each start it
//! records the seconds from spawning the process to the first `/readyz` 200, the peak resident
//! memory by then (`VmHWM`), and the resident memory a few seconds later (settled).
//!
//! ```sh
//! cargo build --release --bin predicate-extender
//! cargo test --release --test startup -- --ignored --nocapture
//! STARTUP_NODES="5000" STARTUP_RUNS=3 STARTUP_BINS="before=/path/a after=/path/b" \
//!   cargo test --release --test startup -- --ignored --nocapture
//! ```
//!
//! Settings from the environment: `STARTUP_NODES` ("100 1000 5000"), `STARTUP_RUNS` (3, the median
//! is printed), `STARTUP_SETTLE_SECONDS` (5), `STARTUP_BINS` (`label=path` pairs; by default the
//! binary this test was built with). With several binaries the runs alternate between them, so that
//! the noise of a shared machine falls on each alike.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

use predicate_extender_testing::fake_apiserver;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fake_apiserver::FakeApiServer;
use gen_cluster::api_objects::{cluster_node, cluster_pod};
use gen_cluster::generate::ClusterSpec;
use serde_json::json;

fn setting(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// `VmHWM` (peak) and `VmRSS` (now) of a process, in MiB.
fn memory(pid: u32) -> (f64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .map_or(0.0, |kib| kib / 1024.0)
    };
    (field("VmHWM:"), field("VmRSS:"))
}

/// The HTTP status of `GET /readyz`, or 0 when nothing answers yet.
fn readyz(port: u16) -> u16 {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else { return 0 };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    if stream.write_all(b"GET /readyz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").is_err() {
        return 0;
    }
    let mut head = [0u8; 12];
    if stream.read_exact(&mut head).is_err() {
        return 0;
    }
    std::str::from_utf8(&head[9..12]).ok().and_then(|s| s.parse().ok()).unwrap_or(0)
}

struct Measured {
    ready_seconds: f64,
    peak_mib: f64,
    settled_mib: f64,
}

/// Starts `serve` with these cluster flags and measures it until it has settled.
fn measure(bin: &Path, cluster_flags: &[String], settle: Duration) -> Measured {
    let (verbs, admin) = (free_port(), free_port());
    let started = Instant::now();
    let mut child: Child = Command::new(bin)
        .arg("serve")
        .args(cluster_flags)
        .args(["--listen", &format!("127.0.0.1:{verbs}"), "--admin-listen", &format!("127.0.0.1:{admin}")])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the server");
    let ready_seconds = loop {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the server exited before it was ready: {status}");
        }
        if readyz(admin) == 200 {
            break started.elapsed().as_secs_f64();
        }
        assert!(started.elapsed() < Duration::from_secs(600), "not ready within 10 minutes");
        std::thread::sleep(Duration::from_millis(20));
    };
    std::thread::sleep(settle);
    let (peak_mib, settled_mib) = memory(child.id());
    let _ = child.kill();
    let _ = child.wait();
    Measured { ready_seconds, peak_mib, settled_mib }
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Loads the generated cluster into the API server (as the soak does).
fn populate(api: &FakeApiServer, spec: &ClusterSpec) {
    use rayon::prelude::*;
    for namespace in ["default", "shop", "team-0", "team-1", "team-2", "team-3", "team-4"] {
        api.apply(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}));
    }
    let nodes: Vec<_> = (0..spec.nodes).into_par_iter().map(|i| cluster_node(spec, i)).collect();
    for node in nodes {
        api.apply(node);
    }
    for chunk in (0..spec.nodes).collect::<Vec<_>>().chunks(250) {
        let pods: Vec<_> = chunk
            .par_iter()
            .flat_map_iter(|&i| (0..spec.pods_per_node).map(move |j| cluster_pod(spec, i, j)))
            .collect();
        for pod in pods {
            api.apply(pod);
        }
    }
}

#[test]
#[ignore = "a measurement of minutes: cargo test --release --test startup -- --ignored --nocapture"]
fn time_to_ready_and_resident_memory() {
    let sizes: Vec<usize> =
        setting("STARTUP_NODES", "100 1000 5000").split_whitespace().map(|n| n.parse().unwrap()).collect();
    let runs: usize = setting("STARTUP_RUNS", "3").parse().unwrap();
    let settle = Duration::from_secs(setting("STARTUP_SETTLE_SECONDS", "5").parse().unwrap());
    let bins: Vec<(String, PathBuf)> = match std::env::var("STARTUP_BINS") {
        Ok(list) => list
            .split_whitespace()
            .map(|pair| {
                let (label, path) = pair.split_once('=').expect("STARTUP_BINS: label=path pairs");
                (label.to_string(), PathBuf::from(path))
            })
            .collect(),
        Err(_) => vec![("this".to_string(), PathBuf::from(env!("CARGO_BIN_EXE_predicate-extender")))],
    };
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut table = Vec::new();
    for &nodes in &sizes {
        let spec = ClusterSpec { nodes, ..ClusterSpec::default() };
        let file = dir.path().join(format!("cluster-{nodes}.json"));
        // `gen-cluster --nodes N --out FILE`.
        gen_cluster::run(&spec, gen_cluster::Output::Cluster, &file).unwrap_or_else(|e| panic!("gen-cluster: {e}"));
        let api = runtime.block_on(FakeApiServer::start());
        populate(&api, &spec);
        let sources: [(&str, Vec<String>); 2] = [
            ("snapshot file", vec!["--cluster-snapshot".into(), file.display().to_string()]),
            ("API server list", vec!["--kubeconfig".into(), api.kubeconfig_path().display().to_string()]),
        ];
        for (source, flags) in &sources {
            let mut results: Vec<Vec<Measured>> = bins.iter().map(|_| Vec::new()).collect();
            for run in 0..runs {
                for (b, (label, bin)) in bins.iter().enumerate() {
                    let m = measure(bin, flags, settle);
                    eprintln!(
                        "{nodes} nodes, {source}, {label} run {}: ready {:.2} s, peak {:.0} MiB, settled {:.0} MiB",
                        run + 1,
                        m.ready_seconds,
                        m.peak_mib,
                        m.settled_mib
                    );
                    results[b].push(m);
                }
            }
            for ((label, _), rs) in bins.iter().zip(results) {
                table.push(format!(
                    "| {nodes} | {source} | {label} | {:.2} | {:.0} | {:.0} |",
                    median(rs.iter().map(|m| m.ready_seconds).collect()),
                    median(rs.iter().map(|m| m.peak_mib).collect()),
                    median(rs.iter().map(|m| m.settled_mib).collect()),
                ));
            }
        }
        drop(api);
        let _ = std::fs::remove_file(&file);
    }
    println!("\nmedians of {runs} runs:\n");
    println!("| nodes | from | binary | ready (s) | peak RSS (MiB) | settled RSS (MiB) |");
    println!("| --- | --- | --- | --- | --- | --- |");
    for row in table {
        println!("{row}");
    }
}
