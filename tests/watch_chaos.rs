//! Watch faults thrown at the live cluster source, each followed by the model compared object by
//! object with the fake API server's truth: connections cut between lines and in the middle of one,
//! watches gone silent, `410 Gone` mid-stream, on a fresh watch and on a list page, lists failing
//! and hanging (with backoff), duplicated and replayed events, objects deleted while a watch was
//! down, bookmarks. `/readyz` must say stale while a fault keeps the model behind, and no `/filter`
//! may ever be answered from a half-applied relist.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod common;
use predicate_extender_testing::fake_apiserver;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::model_diff::{differences, truth_snapshot};
use common::{config, feasible, TestServer};
use fake_apiserver::{node_json, pod_json, FakeApiServer, ListFault, WatchFault};
use predicate_extender::server::{ClusterSource, ServeConfig};
use predicate_extender::source::kube::Connection;
use predicate_extender_testing::eventually;
use serde_json::{json, Value};

/// Long enough for a loaded 2-core machine; conditions are polled, never slept on.
const DEADLINE: Duration = Duration::from_secs(30);

/// Small pages, a short staleness limit, quick backoff: faults show within a test's time.
fn live_config(api: &FakeApiServer) -> ServeConfig {
    let mut c = config(ClusterSource::Kube(Connection::Kubeconfig(api.kubeconfig_path())));
    c.watch.page_size = 3;
    c.watch.backoff_initial = Duration::from_millis(100);
    c.watch.backoff_max = Duration::from_secs(1);
    c.max_cache_staleness = Duration::from_millis(300);
    c
}

async fn start(c: ServeConfig) -> TestServer {
    let server = TestServer::start(c).await;
    wait_ready(&server).await;
    server
}

/// Two 4-cpu nodes, a namespace and seven pods.
fn populate(api: &FakeApiServer) {
    api.apply(node_json("n1", "4", "8Gi", "110"));
    api.apply(node_json("n2", "4", "8Gi", "110"));
    api.apply(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}}));
    for i in 0..7 {
        api.apply(pod_json("default", &format!("p{i}"), if i % 2 == 0 { "n1" } else { "n2" }, "100m"));
    }
}

async fn readyz(server: &TestServer) -> (u16, Value) {
    let (status, body) = server.get(&format!("{}/readyz", server.admin)).await;
    (status, serde_json::from_str(&body).unwrap_or(Value::Null))
}

async fn wait_ready(server: &TestServer) {
    eventually("readyz 200", DEADLINE, || async {
        let (status, body) = readyz(server).await;
        if status == 200 {
            Ok(())
        } else {
            Err(body.to_string())
        }
    })
    .await;
}

/// Waits until /readyz names `resource` stale.
async fn wait_stale(server: &TestServer, resource: &str) -> Value {
    eventually(&format!("readyz to call {resource} stale"), DEADLINE, || async {
        let (status, body) = readyz(server).await;
        let stale = body["stale"].as_array().is_some_and(|s| s.iter().any(|w| w["resource"] == resource));
        if status == 503 && stale {
            Ok(body)
        } else {
            Err(format!("{status} {body}"))
        }
    })
    .await
}

/// Waits until the model equals the API server's truth, object by object.
async fn converges(api: &FakeApiServer, server: &TestServer, what: &str) {
    eventually(what, DEADLINE, || async {
        let truth = truth_snapshot(|kind| api.list(kind));
        let diff = differences(&server.store().snapshot(), &truth, 10);
        if diff.is_empty() {
            Ok(())
        } else {
            Err(diff.join("\n"))
        }
    })
    .await;
}

/// Arrival times of the list requests for a kind's first page (not continue pages), from `since`.
fn list_starts(api: &FakeApiServer, path: &str, since: Instant) -> Vec<Instant> {
    api.requests()
        .into_iter()
        .filter(|r| r.at >= since && r.path == path && !r.query.contains("watch=") && !r.query.contains("continue="))
        .map(|r| r.at)
        .collect()
}

fn query_param(query: &str, name: &str) -> Option<String> {
    query.split('&').find_map(|pair| pair.strip_prefix(name)?.strip_prefix('=').map(str::to_string))
}

#[tokio::test]
async fn a_watch_cut_in_the_middle_of_a_line_resumes_without_losing_or_applying_the_half_event() {
    let api = FakeApiServer::start().await;
    populate(&api);
    let server = start(live_config(&api)).await;
    converges(&api, &server, "the initial sync").await;
    let lists = api.list_count("Pod");

    for round in 0..3 {
        let watches = api.watch_count("Pod");
        api.cut_watches_mid_line();
        // The cut falls in this event's line; the others come over the resumed watch.
        api.delete("Pod", "default", &format!("p{round}"));
        api.apply(pod_json("default", &format!("new{round}"), "n2", "200m"));
        api.apply(pod_json("default", &format!("p{}", round + 3), "", "300m"));
        converges(&api, &server, &format!("round {round}")).await;
        eventually("the pod watch resumed", DEADLINE, || async {
            (api.watch_count("Pod") > watches).then_some(()).ok_or_else(|| "no new watch".to_string())
        })
        .await;
    }
    assert_eq!(api.list_count("Pod"), lists, "resumed from the last resourceVersion, never relisted");
    wait_ready(&server).await;
}

#[tokio::test]
async fn duplicated_and_replayed_events_leave_the_model_equal_to_the_truth() {
    let api = FakeApiServer::start().await;
    populate(&api);
    let server = start(live_config(&api)).await;
    api.duplicate_events(true);
    api.replay_events(5);
    for round in 0..3 {
        api.apply(pod_json("default", &format!("dup{round}"), "n1", "250m"));
        api.delete("Pod", "default", &format!("p{round}"));
        let mut n2 = node_json("n2", "4", "8Gi", "110");
        n2["metadata"]["labels"]["round"] = json!(round.to_string());
        api.apply(n2);
        // Resumed watches start five events early: deletions and additions come again.
        api.drop_watches();
        api.apply(pod_json("default", &format!("late{round}"), "n2", "50m"));
        converges(&api, &server, &format!("round {round}")).await;
    }
}

#[tokio::test]
async fn objects_deleted_while_the_watch_was_down_are_removed() {
    let api = FakeApiServer::start().await;
    populate(&api);
    api.apply(node_json("n3", "4", "8Gi", "110"));
    let server = start(live_config(&api)).await;
    converges(&api, &server, "the initial sync").await;

    // Down, with the history kept: the resumed watch replays the deletions.
    api.forbid("watch", "pods");
    api.drop_watches();
    assert!(api.delete("Pod", "default", "p0"));
    wait_stale(&server, "pods").await;
    api.allow("watch", "pods");
    converges(&api, &server, "deletion replayed by the resumed watch").await;
    wait_ready(&server).await;

    // Down, and the history compacted meanwhile: only a relist can show the deletions.
    let lists = api.list_count("Pod");
    api.forbid("watch", "pods");
    api.forbid("watch", "nodes");
    api.drop_watches();
    assert!(api.delete("Pod", "default", "p1"));
    assert!(api.delete("Pod", "default", "p2"));
    assert!(api.delete("Node", "", "n3"));
    api.expire_history();
    let stale = wait_stale(&server, "pods").await;
    assert!(stale["stale"].as_array().unwrap().iter().any(|w| w["resource"] == "nodes"), "{stale}");
    api.allow("watch", "pods");
    api.allow("watch", "nodes");
    converges(&api, &server, "deletions found by the relist").await;
    assert!(api.list_count("Pod") > lists, "pods were listed again");
    wait_ready(&server).await;
}

#[tokio::test]
async fn bookmarks_move_the_resume_point_so_a_compaction_after_them_costs_no_relist() {
    let api = FakeApiServer::start().await;
    populate(&api);
    let mut c = live_config(&api);
    c.watch.watch_timeout_seconds = 1; // the watches end and resume every second
    let server = start(c).await;
    converges(&api, &server, "the initial sync").await;

    // Only nodes change: the pod watch sees no event, only bookmarks carrying the new versions.
    for round in 0..5 {
        let mut n1 = node_json("n1", "4", "8Gi", "110");
        n1["metadata"]["labels"]["round"] = json!(round.to_string());
        api.apply(n1);
    }
    let latest: u64 = api.resource_version().parse().unwrap();
    let pod_watches_from = |since: Instant| -> Vec<u64> {
        api.requests()
            .into_iter()
            .filter(|r| r.at >= since && r.path == "/api/v1/pods" && r.query.contains("watch=true"))
            .filter_map(|r| query_param(&r.query, "resourceVersion")?.parse().ok())
            .collect()
    };
    let since = Instant::now();
    eventually("a pod watch resumed from a bookmark's version", DEADLINE, || async {
        let resumed = pod_watches_from(since);
        resumed.iter().any(|rv| *rv >= latest).then_some(()).ok_or(format!("{resumed:?}, want {latest}"))
    })
    .await;

    // Everything up to the last change is compacted away: a watch from the last pod event's version
    // would need a relist; one from the bookmark's does not.
    let pod_lists = api.list_count("Pod");
    api.set_history_limit(1);
    api.apply(node_json("n1", "4", "8Gi", "110"));
    let since = Instant::now();
    eventually("two pod watches resumed after the compaction", DEADLINE, || async {
        let resumed = pod_watches_from(since);
        (resumed.len() >= 2).then_some(()).ok_or(format!("{resumed:?}"))
    })
    .await;
    converges(&api, &server, "after the compaction").await;
    assert_eq!(api.list_count("Pod"), pod_lists, "no relist: the bookmark's version was still in the history");
}

/// Ten 4-cpu nodes; state `a` fills n0..n4, state `b` fills n5..n9 (one 4-cpu pod each), and forty
/// small pods stay put, so a relist at page size 3 takes many pages.
fn fill(api: &FakeApiServer, full: std::ops::Range<usize>, empty: std::ops::Range<usize>) {
    for i in empty {
        api.delete("Pod", "default", &format!("fill-{i}"));
    }
    for i in full {
        api.apply(pod_json("default", &format!("fill-{i}"), &format!("n{i}"), "4"));
    }
}

#[tokio::test]
async fn no_filter_is_answered_from_a_half_applied_relist() {
    let api = FakeApiServer::start().await;
    for i in 0..10 {
        api.apply(node_json(&format!("n{i}"), "4", "8Gi", "110"));
    }
    for i in 0..40 {
        api.apply(pod_json("default", &format!("small-{i}"), &format!("n{}", i % 10), "0"));
    }
    fill(&api, 0..5, 0..0);
    let server = Arc::new(start(live_config(&api)).await);
    converges(&api, &server, "the initial sync").await;

    let names: Vec<String> = (0..10).map(|i| format!("n{i}")).collect();
    let when_a: BTreeSet<String> = names[5..].iter().cloned().collect();
    let when_b: BTreeSet<String> = names[..5].iter().cloned().collect();
    let body = json!({"Pod": pod_json("default", "incoming", "", "1"), "NodeNames": names}).to_string();
    let nodes_body = {
        let items: Vec<Value> = (0..10).map(|i| node_json(&format!("n{i}"), "4", "8Gi", "110")).collect();
        json!({"Pod": pod_json("default", "incoming", "", "1"), "Nodes": {"items": items}}).to_string()
    };
    let stop = Arc::new(AtomicBool::new(false));
    let mut flood = Vec::new();
    for task in 0..4 {
        let (server, stop) = (server.clone(), stop.clone());
        let body = if task % 2 == 0 { body.clone() } else { nodes_body.clone() };
        flood.push(tokio::spawn(async move {
            let mut answers = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let (status, answer) = server.post("/filter", body.clone()).await;
                assert_eq!(status, 200, "{answer}");
                assert_eq!(answer["Error"].as_str().unwrap_or(""), "", "{answer}");
                answers.push(feasible(&answer).into_iter().collect::<BTreeSet<String>>());
            }
            answers
        }));
    }

    // Each switch reaches the extender only through a relist: the events are held, then the
    // history that holds them is compacted. One relist also meets an expired continue page. Every
    // answer of the API server is slowed, so that a relist applied page by page would stay
    // half-applied long enough for the flood to see it.
    api.set_delay(Duration::from_millis(10));
    for round in 0..6 {
        let lists = api.list_count("Pod");
        api.hold_events(true);
        if round % 2 == 0 {
            fill(&api, 5..10, 0..5);
        } else {
            fill(&api, 0..5, 5..10);
        }
        if round == 3 {
            api.fail_lists("Pod", [ListFault::ExpiredContinue]);
        }
        api.expire_history();
        api.hold_events(false);
        converges(&api, &server, &format!("switch {round}")).await;
        assert!(api.list_count("Pod") > lists, "switch {round} came by a relist");
    }
    stop.store(true, Ordering::Relaxed);
    let mut seen_a = 0;
    let mut seen_b = 0;
    for task in flood {
        for answer in task.await.unwrap() {
            if answer == when_a {
                seen_a += 1;
            } else if answer == when_b {
                seen_b += 1;
            } else {
                panic!("a /filter answer from neither state: {answer:?}");
            }
        }
    }
    assert!(seen_a > 0 && seen_b > 0, "both states answered: {seen_a} and {seen_b}");
}

#[tokio::test]
async fn lists_failing_and_hanging_back_off_and_readyz_is_stale_from_the_moment_the_watch_broke() {
    let api = FakeApiServer::start().await;
    populate(&api);
    let mut c = live_config(&api);
    c.watch.request_timeout = Duration::from_secs(2);
    let server = start(c).await;
    converges(&api, &server, "the initial sync").await;

    api.fail_lists(
        "Pod",
        [
            ListFault::Hang(Duration::from_secs(60)),
            ListFault::InternalError,
            ListFault::InternalError,
            ListFault::InternalError,
        ],
    );
    let since = Instant::now();
    api.expire_history();
    api.delete("Pod", "default", "p3");
    api.apply(pod_json("default", "while-down", "n1", "1"));

    // Stale while the first relist still hangs: the model is behind since the 410, not since
    // the list gave up.
    let body = wait_stale(&server, "pods").await;
    assert_eq!(list_starts(&api, "/api/v1/pods", since).len(), 1, "still inside the first, hanging, list: {body}");
    converges(&api, &server, "after the failing lists").await;
    wait_ready(&server).await;

    // The hung list was given up after the request timeout, and each failure waited longer than the
    // one before: at least 100, 200, 400 ms (the backoff's floor; jitter only adds).
    let starts = list_starts(&api, "/api/v1/pods", since);
    assert_eq!(starts.len(), 5, "a hang, three 500s, and the list that worked");
    let gaps: Vec<Duration> = starts.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(gaps[0] >= Duration::from_secs(2), "the hanging list was given up at the request timeout: {gaps:?}");
    for (i, floor) in [200, 400, 800].into_iter().enumerate() {
        assert!(gaps[i + 1] >= Duration::from_millis(floor), "gap {} below {floor} ms: {gaps:?}", i + 1);
    }
}

#[tokio::test]
async fn a_fresh_watch_answered_410_again_and_again_backs_off_instead_of_relisting_in_a_loop() {
    let api = FakeApiServer::start().await;
    populate(&api);
    let server = start(live_config(&api)).await;
    converges(&api, &server, "the initial sync").await;

    api.fail_watches("Pod", [WatchFault::Gone; 4]);
    let since = Instant::now();
    api.drop_watches();
    api.apply(pod_json("default", "meanwhile", "n2", "1"));
    converges(&api, &server, "after the 410s").await;
    eventually("the fifth pod watch", DEADLINE, || async {
        let watches = api
            .requests()
            .iter()
            .filter(|r| r.at >= since && r.path == "/api/v1/pods" && r.query.contains("watch=true"))
            .count();
        (watches >= 5).then_some(()).ok_or(format!("{watches} watches"))
    })
    .await;
    // Each 410 comes at once on a fresh watch that delivered nothing: the first is relisted at once
    // (the history may well have been compacted while the watch was down), the next ones back off.
    let starts = list_starts(&api, "/api/v1/pods", since);
    assert_eq!(starts.len(), 4, "one relist per 410: {starts:?}");
    let gaps: Vec<Duration> = starts.windows(2).map(|w| w[1] - w[0]).collect();
    for (i, floor) in [100, 200, 400].into_iter().enumerate() {
        assert!(
            gaps[i] >= Duration::from_millis(floor),
            "relist {} after {:?}, below {floor} ms: {gaps:?}",
            i + 2,
            gaps[i]
        );
    }
    wait_ready(&server).await;
}

#[tokio::test]
async fn watches_failing_with_500_back_off_and_resume_without_a_relist() {
    let api = FakeApiServer::start().await;
    populate(&api);
    let server = start(live_config(&api)).await;
    converges(&api, &server, "the initial sync").await;
    let lists = api.list_count("Pod");

    api.fail_watches("Pod", [WatchFault::InternalError; 6]);
    api.drop_watches();
    api.delete("Pod", "default", "p4");
    api.apply(pod_json("default", "meanwhile", "n1", "1"));
    let body = wait_stale(&server, "pods").await;
    let pods = body["stale"].as_array().unwrap().iter().find(|w| w["resource"] == "pods").unwrap();
    assert!(pods["lastError"].as_str().unwrap_or("").contains("code: 500"), "{body}");
    converges(&api, &server, "after the failing watches").await;
    assert_eq!(api.list_count("Pod"), lists, "resumed from the last resourceVersion");
    wait_ready(&server).await;
}

#[tokio::test]
async fn a_watch_gone_silent_is_given_up_and_resumed() {
    let api = FakeApiServer::start().await;
    populate(&api);
    let mut c = live_config(&api);
    c.watch.watch_timeout_seconds = 1;
    let server = start(c).await;
    converges(&api, &server, "the initial sync").await;

    let watches = api.watch_count("Pod");
    api.stall_watches();
    api.delete("Pod", "default", "p5");
    api.apply(pod_json("default", "after-the-stall", "n2", "1"));
    converges(&api, &server, "after the stall").await;
    assert!(api.watch_count("Pod") > watches, "a new pod watch");
}
