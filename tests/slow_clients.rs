//! Slow and hostile clients on both listeners: hundreds of slowloris connections do not keep a
//! well-formed request out (even on a new connection), a body that trickles in is cut off with 408
//! and the verb's result object, a TLS client that never handshakes is closed, and every
//! connection the timeouts close gives its file descriptor back.
//!
//! Bounds are outcomes (answered, closed, back to the baseline) with generous deadlines; the one
//! latency bound (the well-formed /filter under attack) is far above what it takes unloaded and
//! still under kube-scheduler's 5 s extender timeout.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod child;
mod common;
use predicate_extender_testing::pki;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use predicate_extender::server::{start, ClusterSource, TlsFiles};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinSet;

/// How long any wait for an outcome may take before it counts as a failure.
const PATIENCE: Duration = Duration::from_secs(30);

/// The demo cluster's /filter for web-2 and what it must answer.
fn demo_filter_body() -> Vec<u8> {
    std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/demo/filter-web-2.json")).unwrap()
}
const FEASIBLE: [&str; 2] = ["node-b1", "node-b3"];

/// The start of a request head that never ends: a slowloris client sends this, then a byte of
/// `TRICKLE` now and then.
const HEAD_START: &[u8] = b"POST /filter HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n";
const TRICKLE: &[u8] = b"X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n";

/// Raises this process's soft RLIMIT_NOFILE to at least `wanted` if the hard limit allows, and
/// returns the soft limit now in force. The server started after this inherits it.
fn raise_open_files(wanted: u64) -> u64 {
    rlimit::increase_nofile_limit(wanted)
        .unwrap_or_else(|_| rlimit::getrlimit(rlimit::Resource::NOFILE).map_or(0, |l| l.0))
}

/// Open file descriptors of process `pid`.
fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map(|d| d.count()).unwrap_or_else(|e| panic!("/proc/{pid}/fd: {e}"))
}

/// The server's descriptor count once it holds still (the same twice, 200 ms apart).
async fn settled_fds(pid: u32) -> usize {
    let start = Instant::now();
    let mut last = open_fds(pid);
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let now = open_fds(pid);
        if now == last || start.elapsed() > PATIENCE {
            return now;
        }
        last = now;
    }
}

/// True once the server has closed `stream` (EOF or a reset); whatever it sent before is read and
/// dropped.
fn closed_by_server(stream: &TcpStream) -> bool {
    let mut buf = [0u8; 4096];
    loop {
        match stream.try_read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return false,
            Err(_) => return true,
        }
    }
}

/// A slowloris client on `addr`: a request head that never ends, one more byte every `every`;
/// when the server closes the connection it opens another, until `stop`.
async fn slowloris(addr: SocketAddr, every: Duration, stop: Arc<AtomicBool>, connects: Arc<AtomicUsize>) {
    while !stop.load(Ordering::Relaxed) {
        let Ok(mut stream) = TcpStream::connect(addr).await else {
            tokio::time::sleep(every).await;
            continue;
        };
        connects.fetch_add(1, Ordering::Relaxed);
        if stream.write_all(HEAD_START).await.is_err() {
            continue;
        }
        for byte in TRICKLE.iter().cycle() {
            tokio::time::sleep(every).await;
            if stop.load(Ordering::Relaxed) || closed_by_server(&stream) || stream.write_all(&[*byte]).await.is_err() {
                break;
            }
        }
    }
}

/// POSTs the demo /filter on a new connection; the answer and how long it took.
async fn filter_on_a_new_connection(verbs: &str) -> (Result<(u16, String), String>, Duration) {
    let started = Instant::now();
    let client = reqwest::Client::builder().pool_max_idle_per_host(0).build().unwrap();
    let exchange = async {
        let resp = client
            .post(format!("http://{verbs}/filter"))
            .header("Content-Type", "application/json")
            .body(demo_filter_body())
            .send()
            .await
            .map_err(|e| format!("{e:?}"))?;
        let status = resp.status().as_u16();
        Ok((status, resp.text().await.map_err(|e| format!("{e:?}"))?))
    };
    let answer = tokio::time::timeout(PATIENCE, exchange).await.unwrap_or_else(|_| Err("no answer".to_string()));
    (answer, started.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slowloris_connections_do_not_keep_a_filter_or_a_probe_out() {
    // 500 attackers per listener, plus the test's and the server's own descriptors. With a low hard
    // limit the attack is made smaller to fit, and says so.
    let soft = raise_open_files(2 * 500 + 256);
    let per_listener = 500.min((soft.saturating_sub(256) / 2) as usize);
    if per_listener < 500 {
        eprintln!("RLIMIT_NOFILE allows {soft} descriptors: {per_listener} slowloris connections per listener");
    }
    assert!(per_listener >= 200, "RLIMIT_NOFILE {soft} is too low for this test");
    // A header-read timeout far longer than the test: only the cap can make room.
    let mut server = tokio::task::block_in_place(|| child::Server::start(&["--demo", "--header-read-timeout", "10m"]));
    let (verbs, admin): (SocketAddr, SocketAddr) = (server.verbs.parse().unwrap(), server.admin.parse().unwrap());
    let baseline = settled_fds(server.pid()).await;

    let stop = Arc::new(AtomicBool::new(false));
    let connects = Arc::new(AtomicUsize::new(0));
    let mut attack = JoinSet::new();
    for addr in [verbs, admin] {
        for _ in 0..per_listener {
            attack.spawn(slowloris(addr, Duration::from_millis(200), Arc::clone(&stop), Arc::clone(&connects)));
        }
    }
    // The attack is on once every attacker has connected and the listeners are full.
    let start = Instant::now();
    while connects.load(Ordering::Relaxed) < 2 * per_listener {
        assert!(start.elapsed() < PATIENCE, "only {} attackers connected", connects.load(Ordering::Relaxed));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;

    let mut slowest = Duration::ZERO;
    let mut most_fds = 0;
    for _ in 0..5 {
        most_fds = most_fds.max(open_fds(server.pid()));
        let (answer, took) = filter_on_a_new_connection(&server.verbs).await;
        let (status, text) = answer.unwrap_or_else(|e| panic!("no /filter answer under attack after {took:?}: {e}"));
        assert_eq!(status, 200, "{text}");
        let answer: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(answer["NodeNames"], json!(FEASIBLE), "{text}");
        assert_eq!(answer["Error"], "", "{text}");

        let probe_started = Instant::now();
        let probe = reqwest::Client::builder().pool_max_idle_per_host(0).build().unwrap();
        let healthz = tokio::time::timeout(PATIENCE, probe.get(format!("http://{admin}/healthz")).send()).await;
        let probe_took = probe_started.elapsed();
        let healthz = healthz.unwrap_or_else(|_| panic!("no /healthz answer under attack"));
        assert_eq!(healthz.unwrap_or_else(|e| panic!("/healthz under attack: {e:?}")).status(), 200);
        slowest = slowest.max(took).max(probe_took);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    eprintln!(
        "under attack ({} slowloris connects so far): the slowest /filter or /healthz took {slowest:?}; the server \
         had {most_fds} descriptors open at most, {baseline} before",
        connects.load(Ordering::Relaxed)
    );
    // Unloaded this takes milliseconds; kube-scheduler gives up at 5 s.
    assert!(slowest < Duration::from_millis(3_000), "the slowest answer under attack took {slowest:?}");

    // The cap held: two listeners' worth of connections, and a few being closed (an eighth more).
    let cap = 2 * 64;
    assert!(most_fds <= baseline + cap + cap / 8, "{most_fds} descriptors open under attack, {baseline} before");
    assert!(most_fds >= baseline + cap / 2, "{most_fds} descriptors under attack, {baseline} before: no attack?");
    stop.store(true, Ordering::Relaxed);
    while attack.join_next().await.is_some() {}

    server.drain_logs();
    let noted = server.seen.iter().any(|l| child::message(l).contains("--max-connections"));
    assert!(noted, "no log line about the cap: {:#?}", server.seen.iter().rev().take(20).collect::<Vec<_>>());
}

/// A raw HTTP exchange whose body is sent one byte every `every`, while the answer is read.
/// Returns the answer (status and body) and how many body bytes were sent before it came.
async fn trickled_post(addr: SocketAddr, path: &str, body: &[u8], every: Duration) -> (u16, Value, usize) {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    writer.write_all(head.as_bytes()).await.unwrap();
    let sent = Arc::new(AtomicUsize::new(0));
    let sending = {
        let (sent, body) = (Arc::clone(&sent), body.to_vec());
        tokio::spawn(async move {
            for byte in body {
                tokio::time::sleep(every).await;
                if writer.write_all(&[byte]).await.is_err() {
                    return writer;
                }
                sent.fetch_add(1, Ordering::Relaxed);
            }
            writer
        })
    };
    // The server closes the connection after its answer (the body was not read to its end).
    let mut answer = Vec::new();
    tokio::time::timeout(PATIENCE, reader.read_to_end(&mut answer))
        .await
        .unwrap_or_else(|_| panic!("{path}: no answer and no close within {PATIENCE:?}"))
        .unwrap_or_else(|e| panic!("{path}: {e} after {:?}", String::from_utf8_lossy(&answer)));
    let sent = sent.load(Ordering::Relaxed);
    sending.abort();
    let text = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or_else(|| panic!("{path}: not an HTTP answer: {text:?}"));
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("{path}: {head}"));
    let value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{path}: answer not JSON ({e}): {text}"));
    (status, value, sent)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_trickling_in_is_cut_off_with_408_and_the_verbs_result() {
    let mut c = common::config(ClusterSource::Demo);
    c.connections.body_timeout = Duration::from_secs(1);
    let server = start(c).await.unwrap();
    let verbs = server.verbs_addr;
    let filter = demo_filter_body();
    let bind = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/demo/bind-web-2.json")).unwrap();
    let preempt = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/demo/preempt-report-job.json")).unwrap();
    // Each verb's result object with nothing but the error (as tests/hostile_bodies.rs has them).
    let shape = |path: &str, error: &Value| match path {
        "/filter" => {
            json!({"Nodes": null, "NodeNames": null, "FailedNodes": {}, "FailedAndUnresolvableNodes": {}, "Error": error})
        }
        "/preempt" => json!({"NodeNameToMetaVictims": {}, "Error": error}),
        _ => json!({"Error": error}),
    };
    let mut exchanges = JoinSet::new();
    for (path, body) in [("/filter", filter.clone()), ("/prioritize", filter), ("/bind", bind), ("/preempt", preempt)] {
        exchanges.spawn(async move {
            let answer = trickled_post(verbs, path, &body, Duration::from_millis(100)).await;
            (path, body.len(), answer)
        });
    }
    while let Some(done) = exchanges.join_next().await {
        let (path, len, (status, answer, sent)) = done.unwrap();
        assert_eq!(status, 408, "{path}: {answer}");
        let error = &answer["Error"];
        let text = error.as_str().unwrap_or_default();
        assert!(text.contains("body timeout of 1s (--body-timeout)"), "{path}: {answer}");
        assert!(!text.replace("%%", "").contains('%'), "{path}: a bare % in {text:?}");
        assert_eq!(answer, shape(path, error), "{path}: not the verb's bare error object");
        assert!(sent < len, "{path}: the whole body ({len} bytes) went in before the answer");
    }

    // The server answers as before.
    let (answer, _) = filter_on_a_new_connection(&verbs.to_string()).await;
    let (status, text) = answer.unwrap();
    assert_eq!(status, 200, "{text}");
    server.shutdown().await.unwrap();
}

/// What a connection on the fd test does before it only waits for the server to close it.
#[derive(Debug, Clone, Copy)]
enum Client {
    /// Connects and sends nothing.
    Silent,
    /// A request head one byte at a time, never finished.
    Slowloris,
    /// A complete GET /healthz, then nothing: kept alive, idle.
    Idle,
    /// A complete /filter head, then its body one byte every 100 ms.
    TricklingBody,
}

/// Runs `client` on a new connection until the server closes it; returns the socket (still open on
/// this side, so that only the server's close can have released the server's descriptor).
async fn until_closed(addr: SocketAddr, client: Client) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    match client {
        Client::Silent => {}
        Client::Slowloris => stream.write_all(HEAD_START).await.unwrap(),
        Client::Idle => stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").await.unwrap(),
        Client::TricklingBody => {
            let head = format!(
                "POST /filter HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                demo_filter_body().len()
            );
            stream.write_all(head.as_bytes()).await.unwrap();
        }
    }
    let trickle: &[u8] = match client {
        Client::Slowloris => TRICKLE,
        Client::TricklingBody => b"{\"Pod\": ",
        Client::Silent | Client::Idle => b"",
    };
    let mut next = trickle.iter().cycle();
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if closed_by_server(&stream) {
            return stream;
        }
        if let Some(byte) = next.next() {
            let _ = stream.write_all(&[*byte]).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_timeouts_close_connections_and_give_their_descriptors_back() {
    let each = 60;
    raise_open_files(4 * 2 * each as u64 + 256);
    // A cap far above the connections opened here: only the timeouts close them.
    let args = [
        "--demo",
        "--header-read-timeout",
        "2s",
        "--body-timeout",
        "2s",
        "--idle-timeout",
        "3s",
        "--max-connections",
        "5000",
    ];
    let server = tokio::task::block_in_place(|| child::Server::start(&args));
    let pid = server.pid();
    let (verbs, admin): (SocketAddr, SocketAddr) = (server.verbs.parse().unwrap(), server.admin.parse().unwrap());
    let baseline = settled_fds(pid).await;

    let started = Instant::now();
    let mut clients = JoinSet::new();
    for addr in [verbs, admin] {
        for client in [Client::Silent, Client::Slowloris, Client::Idle, Client::TricklingBody] {
            for _ in 0..each {
                clients.spawn(until_closed(addr, client));
            }
        }
    }
    let opened = 2 * 4 * each;
    // The server holds them all for a while (the shortest bound is 2 s).
    let mut peak = 0;
    while peak < baseline + opened / 2 && started.elapsed() < Duration::from_secs(2) {
        peak = peak.max(open_fds(pid));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(peak >= baseline + opened / 2, "peak {peak} descriptors, baseline {baseline}: connections not held?");

    // Every connection is closed by the server, each within its bound (plus a loaded machine's slack).
    let mut sockets = Vec::new();
    let all_closed = tokio::time::timeout(PATIENCE, async {
        while let Some(done) = clients.join_next().await {
            sockets.push(done.unwrap());
        }
    })
    .await;
    assert!(all_closed.is_ok(), "{} of {opened} connections still open after {PATIENCE:?}", opened - sockets.len());
    assert_eq!(sockets.len(), opened);

    // And the descriptors are back: the baseline, within a little slack.
    let start = Instant::now();
    let mut now = open_fds(pid);
    while now > baseline + 3 && start.elapsed() < PATIENCE {
        tokio::time::sleep(Duration::from_millis(100)).await;
        now = open_fds(pid);
    }
    eprintln!(
        "descriptors: {baseline} at rest, {peak}+ with {opened} connections, {now} once the timeouts closed them"
    );
    assert!(now <= baseline + 3, "{now} descriptors open, baseline {baseline}, with {opened} client sockets held open");
    drop(sockets);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tls_client_that_never_finishes_its_handshake_is_closed() {
    let ca = pki::Ca::new("test CA");
    let leaf = ca.server("extender");
    let volume = pki::SecretVolume::new(&[("tls.crt", leaf.cert_pem.as_str()), ("tls.key", leaf.key_pem.as_str())]);
    let mut c = common::config(ClusterSource::Demo);
    c.tls = Some(TlsFiles { cert: volume.path("tls.crt"), key: volume.path("tls.key"), client_ca: None });
    c.connections.header_read_timeout = Duration::from_secs(1);
    let server = start(c).await.unwrap();
    let addr = server.verbs_addr;

    // One sends nothing; one sends the first bytes of a ClientHello (a TLS handshake record header)
    // and stops.
    let connected = Instant::now();
    let silent = TcpStream::connect(addr).await.unwrap();
    let mut partial = TcpStream::connect(addr).await.unwrap();
    partial.write_all(&[0x16, 0x03, 0x01, 0x02, 0x00, 0x01]).await.unwrap();
    // Closed by the 1 s bound: not before it, and long before the 10 s the handshake used to get.
    let within = Duration::from_secs(8);
    for (what, mut stream) in [("silent", silent), ("partial ClientHello", partial)] {
        let mut rest = Vec::new();
        let closed = tokio::time::timeout(within, stream.read_to_end(&mut rest)).await;
        assert!(closed.is_ok(), "{what}: still open after {within:?}");
        let after = connected.elapsed();
        assert!(after >= Duration::from_millis(900), "{what}: closed after {after:?}, before the bound");
    }

    // A client that handshakes gets its answer.
    let client = pki::client_config(&[&ca.pem], None);
    let answer = pki::https_post(client, &addr.to_string(), "/filter", &demo_filter_body()).await.unwrap();
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(answer.body.contains(r#""NodeNames":["node-b1","node-b3"]"#), "{answer:?}");
    server.shutdown().await.unwrap();
}
