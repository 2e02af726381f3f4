//! The real binary: starts on the demo cluster, answers, exits 0 on SIGTERM; refuses bad files and
//! flags at startup with a message that names them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod child;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_predicate-extender");

/// Runs `serve` with these arguments and expects it to refuse to start. It listens on ports of its
/// own: the default ports may be taken by another test or program, and the server binds before it
/// reads a snapshot (so its probes answer during a long load).
fn startup_error(args: &[&str]) -> (i32, String) {
    let mut own_ports: Vec<&str> = Vec::new();
    for flag in ["--listen", "--admin-listen"] {
        if !args.contains(&flag) {
            own_ports.extend([flag, "127.0.0.1:0"]);
        }
    }
    let out = Command::new(BIN)
        .arg("serve")
        .args(own_ports)
        .args(args)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .output()
        .expect("run the binary");
    assert!(!out.status.success(), "{args:?} started");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).to_string())
}

fn temp_file(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("predicate-extender-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::File::create(&path).and_then(|mut f| f.write_all(text.as_bytes())).unwrap();
    path
}

#[test]
fn serves_the_demo_and_exits_cleanly_on_sigterm() {
    let mut child = Command::new(BIN)
        .args(["serve", "--demo", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--log-format", "json"])
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the binary");
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let started = Instant::now();
    let verbs = loop {
        assert!(started.elapsed() < Duration::from_secs(30), "no 'listening' line");
        let line = lines.next().expect("log line").expect("utf-8 log");
        let v: serde_json::Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        if v["fields"]["message"] == "listening" {
            break v["fields"]["verbs"].as_str().unwrap().to_string();
        }
    };
    let body = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/demo/filter-web-2.json")).unwrap();
    let answer = child::blocking_post(&verbs, "/filter", &body);
    assert!(answer.contains(r#""NodeNames":["node-b1","node-b3"]"#), "{answer}");

    let kill = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(kill.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "exit code after SIGTERM");
}

/// SIGTERM the moment "listening" is logged, with the binary on one CPU beside a busy loop (so that
/// its main thread is likely to be preempted there): it exits 0 every time. The handler used to be
/// installed only after the server had started, and a SIGTERM in between killed the process (4 and
/// 5 of the 30 starts in two runs of this test; a cold CI run once, in the test above). The log is
/// read here, not through `child::Server`'s log thread: that thread's hop delays the signal enough
/// that the old binary passed.
#[test]
fn a_sigterm_right_after_listening_still_ends_it_cleanly() {
    let _busy = KilledOnDrop::busy_loop_on_cpu_0();
    let mut codes = Vec::new();
    for _ in 0..30 {
        let started = Command::new("taskset")
            .args(["-c", "0", BIN, "serve", "--demo", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"])
            .args(["--log-format", "json"])
            .stderr(Stdio::piped())
            .spawn();
        let mut server = KilledOnDrop(started.expect("start the binary under taskset (util-linux)"));
        let mut lines = BufReader::new(server.0.stderr.take().unwrap()).lines();
        // taskset execs the binary: the child's pid is the server's.
        let pid = rustix::process::Pid::from_child(&server.0);
        while !lines.next().expect("a 'listening' line").expect("utf-8 log").contains(r#""message":"listening""#) {}
        rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
        lines.for_each(drop);
        codes.push(server.0.wait().unwrap().code());
    }
    assert!(codes.iter().all(|c| *c == Some(0)), "exit codes after SIGTERM: {codes:?}");
}

/// A child process killed when dropped (the test's busy loop and servers, also when it fails).
struct KilledOnDrop(std::process::Child);

impl KilledOnDrop {
    fn busy_loop_on_cpu_0() -> KilledOnDrop {
        let spin = Command::new("taskset").args(["-c", "0", "sh", "-c", "while :; do :; done"]).spawn();
        KilledOnDrop(spin.expect("a busy loop under taskset (util-linux)"))
    }
}

impl Drop for KilledOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The `evaluator_workers` of the "listening" line of `serve --demo` run on CPU 0 only.
fn workers_on_one_cpu(extra: &[&str]) -> u64 {
    let mut child = Command::new("taskset")
        .args(["-c", "0", BIN, "serve", "--demo", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"])
        .args(["--log-format", "json"])
        .args(extra)
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the binary under taskset (util-linux)");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let workers = loop {
        let Some(line) = lines.next() else { panic!("the server exited before its 'listening' line") };
        let v: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
        if v["fields"]["message"] == "listening" {
            break v["fields"]["evaluator_workers"].as_u64().expect("evaluator_workers in the 'listening' line");
        }
    };
    child.kill().unwrap();
    child.wait().unwrap();
    workers
}

#[test]
fn the_default_parallelism_is_the_cpus_the_process_may_use() {
    assert_eq!(workers_on_one_cpu(&[]), 1, "one worker when the affinity mask allows one CPU");
    assert_eq!(workers_on_one_cpu(&["--parallelism", "3"]), 3, "the flag wins");
}

#[test]
fn a_bad_snapshot_names_the_file_the_object_and_the_field() {
    let path = temp_file("bad-cluster.yaml", "kind: Node\nmetadata: {name: n1}\nstatus:\n  allocatable: {cpu: four}\n");
    let (code, err) = startup_error(&["--cluster-snapshot", path.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains(
            "bad-cluster.yaml: document 1 at line 1 (Node n1): status.allocatable.cpu: invalid quantity \"four\""
        ),
        "{err}"
    );
}

#[test]
fn a_missing_snapshot_names_the_file() {
    let (code, err) = startup_error(&["--cluster-snapshot", "/nonexistent/cluster.json"]);
    assert_eq!(code, 2);
    assert!(err.contains("/nonexistent/cluster.json: cannot read"), "{err}");
}

#[test]
fn a_bad_policy_names_the_entry() {
    let path = temp_file(
        "policy.json",
        r#"{"kind":"Policy","apiVersion":"v1","predicates":[{"name":"HostName"},{"name":"NoSuchPredicate"}]}"#,
    );
    let (code, err) = startup_error(&["--demo", "--policy", path.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("policy.json: predicates[1] (\"NoSuchPredicate\"): unknown predicate"), "{err}");
}

#[test]
fn a_bad_scheduler_configuration_names_the_file_and_field() {
    let missing = startup_error(&["--demo", "--scheduler-config", "/nonexistent/scheduler-config.yaml"]);
    assert_eq!(missing.0, 2);
    assert!(missing.1.contains("--scheduler-config /nonexistent/scheduler-config.yaml: cannot read"), "{}", missing.1);
    let path = temp_file(
        "scheduler-config.yaml",
        "kind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    filter:\n      disabled:\n      - {weight: 1}\n",
    );
    let (code, err) = startup_error(&["--demo", "--scheduler-config", path.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("scheduler-config.yaml: not a KubeSchedulerConfiguration: profiles[0].plugins.filter.disabled[0].name: missing"), "{err}");
}

#[test]
fn help_names_every_verb_and_the_admin_endpoints() {
    for args in [&["--help"][..], &["serve", "--help"]] {
        let out = Command::new(BIN).args(args).output().expect("run the binary");
        assert!(out.status.success(), "{args:?}");
        let help = String::from_utf8_lossy(&out.stdout);
        for path in ["/filter", "/prioritize", "/preempt", "/bind", "/healthz", "/readyz", "/metrics"] {
            assert!(help.contains(path), "{args:?} does not mention {path}:\n{help}");
        }
    }
}

#[test]
fn bad_flags_are_named() {
    for (args, flag) in [
        (vec!["--demo", "--listen", "not-an-address"], "--listen"),
        (vec!["--demo", "--parallelism", "0"], "--parallelism"),
        (vec![], "no cluster given: pass --kubeconfig PATH, run inside a pod"),
        (vec!["--kubeconfig", "/nonexistent/kubeconfig"], "--kubeconfig /nonexistent/kubeconfig: "),
    ] {
        let (_, err) = startup_error(&args);
        assert!(err.contains(flag), "{args:?}: {err}");
    }
}

#[test]
fn an_address_in_use_names_the_flag() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let (code, err) = startup_error(&["--demo", "--listen", &addr, "--admin-listen", "127.0.0.1:0"]);
    assert_eq!(code, 2);
    assert!(err.contains(&format!("--listen {addr}: cannot listen")), "{err}");
}
