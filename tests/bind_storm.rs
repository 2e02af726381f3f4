//! 2,000 pods bound through the live source at 16-way concurrency while the API server fails 5% of
//! the bindings (409, 500, no answer, bound but no answer): every pod is bound at most once by the
//! API server, every binding that did not happen (or whose answer never came) is reported with an
//! `Error`, every success is a pod bound to that node, and no assumption outlives its TTL: the
//! assumed pods expire while the watch is held back, and are none once it has caught up.
//!
//! Attempts and the API server's records are matched by time, not by order: on a loaded machine
//! any binding can miss the extender's deadline, and a request the extender gave up on may reach
//! the API server after the answer, or never.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod common;
use predicate_extender_testing::fake_apiserver;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::model_diff::{differences, truth_snapshot};
use common::{config, TestServer};
use fake_apiserver::{node_json, pod_json, BindFault, BindingRecord, FakeApiServer};
use predicate_extender::server::ClusterSource;
use predicate_extender::source::kube::Connection;
use predicate_extender_testing::eventually;
use serde_json::{json, Value};

const PODS: usize = 2_000;
const NODES: usize = 50;
const WORKERS: usize = 16;
/// The first pods are bound while the watch is held back: their assumptions can only expire.
const HELD: usize = 500;
/// The extender's deadline for one bind; the hanging faults last twice as long.
const BIND_DEADLINE: Duration = Duration::from_secs(1);
const HANG: Duration = Duration::from_secs(2);
const ASSUME_TTL: Duration = Duration::from_secs(2);
/// Long enough for a loaded 2-core machine; conditions are polled, never slept on.
const DEADLINE: Duration = Duration::from_secs(30);

/// One binding in twenty fails, the four kinds in turn.
fn fault(attempt: u64) -> Option<BindFault> {
    (attempt % 20 == 7).then_some(match (attempt / 20) % 4 {
        0 => BindFault::Conflict,
        1 => BindFault::InternalError,
        2 => BindFault::HangThenFail(HANG),
        _ => BindFault::BindThenHang(HANG),
    })
}

/// One /bind call, its answer's `Error` ("" for success), and when it was sent and answered.
#[derive(Debug, Clone)]
struct Attempt {
    node: String,
    error: String,
    sent: Instant,
    answered: Instant,
}

impl Attempt {
    /// The extender stopped waiting for the API server at its deadline: the binding may or may
    /// not have happened.
    fn timed_out(&self) -> bool {
        self.error.contains("did not answer within") && self.answered - self.sent >= BIND_DEADLINE
    }

    /// Whether the API server handled `record` while this attempt waited for its answer.
    fn during(&self, record: &BindingRecord) -> bool {
        self.sent <= record.at && record.at <= self.answered
    }
}

/// The API server bound the pod and answered at once.
fn answered_in_time(record: &BindingRecord) -> bool {
    record.status == 201 && !matches!(record.fault, Some(BindFault::BindThenHang(_)))
}

async fn metric(server: &TestServer, name: &str) -> f64 {
    let (status, text) = server.get(&format!("{}/metrics", server.admin)).await;
    assert_eq!(status, 200);
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in /metrics"))
}

/// Binds pods `range` from 16 workers, each pod retried (on the same node, as kube-scheduler's next
/// attempt would choose it again) until it is bound.
async fn storm(server: &Arc<TestServer>, range: std::ops::Range<usize>) -> BTreeMap<String, Vec<Attempt>> {
    let next = Arc::new(AtomicUsize::new(range.start));
    let mut workers = Vec::new();
    for _ in 0..WORKERS {
        let (server, next, end) = (server.clone(), next.clone(), range.end);
        workers.push(tokio::spawn(async move {
            let mut seen = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= end {
                    return seen;
                }
                let (pod, node) = (format!("pod-{i}"), format!("node-{}", i % NODES));
                let body = json!({"PodName": pod, "PodNamespace": "default", "Node": node}).to_string();
                let mut attempts = Vec::new();
                loop {
                    let sent = Instant::now();
                    let (status, answer) = server.post("/bind", body.clone()).await;
                    let answered = Instant::now();
                    assert_eq!(status, 200, "{pod}: {answer}");
                    let error = answer["Error"].as_str().unwrap_or("").to_string();
                    let done = error.is_empty();
                    attempts.push(Attempt { node: node.clone(), error, sent, answered });
                    if done {
                        break;
                    }
                    // One fault in twenty: a few tries at most, more only when a loaded machine
                    // makes bindings miss the deadline.
                    let refused = attempts.iter().filter(|a| !a.timed_out()).count();
                    assert!(refused < 5 && attempts.len() < 50, "{pod}: {attempts:?}");
                }
                seen.push((format!("default/{pod}"), attempts));
            }
        }));
    }
    let mut all = BTreeMap::new();
    for w in workers {
        all.extend(w.await.unwrap());
    }
    all
}

#[tokio::test]
async fn a_bind_storm_binds_each_pod_once_reports_every_failure_and_leaves_no_assumption() {
    let api = FakeApiServer::start().await;
    for n in 0..NODES {
        api.apply(node_json(&format!("node-{n}"), "64", "256Gi", "110"));
    }
    for i in 0..PODS {
        api.apply(pod_json("default", &format!("pod-{i}"), "", "10m"));
    }
    let mut c = config(ClusterSource::Kube(Connection::Kubeconfig(api.kubeconfig_path())));
    c.request_timeout = BIND_DEADLINE;
    c.assume_ttl = ASSUME_TTL;
    let server = Arc::new(TestServer::start(c).await);
    eventually("the first sync", DEADLINE, || async {
        let pods = server.store().snapshot().pod_count();
        if pods == PODS {
            Ok(())
        } else {
            Err(format!("{pods} pods"))
        }
    })
    .await;
    api.bind_faults(Some(Box::new(|_pod, attempt| fault(attempt))));

    // The watch held back: every assumption stays unconfirmed, and must expire on its own.
    api.hold_events(true);
    let peak = Arc::new(AtomicUsize::new(0));
    let sampler = {
        let (server, peak) = (server.clone(), peak.clone());
        tokio::spawn(async move {
            loop {
                let assumed = metric(&server, "predicate_extender_assumed_pods").await as usize;
                peak.fetch_max(assumed, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };
    let mut attempts = storm(&server, 0..HELD).await;
    sampler.abort();
    assert!(peak.load(Ordering::Relaxed) > 0, "the held binds were assumed");
    eventually("the unconfirmed assumptions to expire", DEADLINE, || async {
        let assumed = metric(&server, "predicate_extender_assumed_pods").await;
        if assumed > 0.0 {
            Err(format!("{assumed} assumed"))
        } else {
            Ok(())
        }
    })
    .await;
    api.hold_events(false);

    // The rest with the watch flowing: the assumptions end as the watch confirms them.
    attempts.extend(storm(&server, HELD..PODS).await);
    eventually("no assumption left", DEADLINE, || async {
        let assumed = metric(&server, "predicate_extender_assumed_pods").await;
        if assumed > 0.0 {
            Err(format!("{assumed} assumed"))
        } else {
            Ok(())
        }
    })
    .await;

    // The API server's side: each pod bound exactly once, to the node asked for; `fault` failed the
    // eighth of every twenty binding requests.
    let records = api.bindings();
    let mut by_pod: BTreeMap<&str, Vec<&BindingRecord>> = BTreeMap::new();
    for r in &records {
        by_pod.entry(&r.pod).or_default().push(r);
    }
    assert_eq!(by_pod.len(), PODS);
    let faults = records.iter().filter(|r| r.fault.is_some()).count();
    let one_in_twenty = records.len() / 20 + usize::from(records.len() % 20 > 7);
    assert_eq!(faults, one_in_twenty, "faults among {} bindings", records.len());
    for (pod, tries) in &attempts {
        let server_side = &by_pod[pod.as_str()];
        let bound: Vec<&&BindingRecord> = server_side.iter().filter(|r| r.bound).collect();
        assert_eq!(bound.len(), 1, "{pod} bound once: {server_side:?}");
        let name = pod.trim_start_matches("default/");
        let bound_to = api.get("Pod", "default", name).unwrap()["spec"]["nodeName"].clone();
        assert_eq!(bound_to, Value::from(tries[0].node.clone()), "{pod}");

        // One binding request per /bind (a pod's attempts are sequential); one the extender gave up
        // on may not have reached the API server.
        let gave_up = tries.iter().filter(|a| a.timed_out()).count();
        assert!(
            (tries.len() - gave_up..=tries.len()).contains(&server_side.len()),
            "{pod}: {server_side:?} for {tries:?}"
        );
        for attempt in tries {
            if attempt.error.is_empty() {
                // Success: the pod was bound by the time it was answered.
                assert!(
                    bound[0].at <= attempt.answered,
                    "{pod}: success before the binding: {attempt:?} {server_side:?}"
                );
            } else {
                assert!(attempt.error.contains(pod.as_str()), "{pod}: the error names the pod: {:?}", attempt.error);
                // An error: a binding that failed while it waited, or one it stopped waiting for.
                let failed = server_side.iter().any(|r| attempt.during(r) && !answered_in_time(r));
                assert!(
                    failed || attempt.timed_out(),
                    "{pod}: bound, yet reported {:?}: {server_side:?}",
                    attempt.error
                );
            }
        }
        // Every binding that failed, up to the one that bound the pod, was reported with an `Error`
        // (after it, the extender may find the pod on its node and answer success).
        for record in server_side.iter().filter(|r| !answered_in_time(r) && r.at <= bound[0].at) {
            let reported = tries
                .iter()
                .any(|a| !a.error.is_empty() && (a.during(record) || (a.timed_out() && a.sent <= record.at)));
            assert!(reported, "{pod}: a failed binding went unreported: {record:?} for {tries:?}");
        }
    }

    // Nothing assumed is left over, and the model is the API server's truth.
    eventually("the model to equal the truth", DEADLINE, || async {
        let truth = truth_snapshot(|kind| api.list(kind));
        let diff = differences(&server.store().snapshot(), &truth, 10);
        if diff.is_empty() {
            Ok(())
        } else {
            Err(diff.join("\n"))
        }
    })
    .await;
    assert_eq!(metric(&server, "predicate_extender_assumed_pods").await, 0.0);
}
