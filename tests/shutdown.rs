//! The real binary on SIGTERM: a request in flight (a `/bind` held up by a slow API server) is
//! answered before the process exits 0; one that outlasts `--shutdown-grace` is cut off, and the
//! process still exits 0 once the grace is over.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod child;
use predicate_extender_testing::fake_apiserver;

use std::time::{Duration, Instant};

use fake_apiserver::{node_json, pod_json, FakeApiServer};
use predicate_extender_testing::eventually;
use serde_json::{json, Value};

/// A fake cluster with a node and a pending pod, and the binary watching it, ready.
async fn cluster_and_extender(extra: &[&str]) -> (FakeApiServer, child::Server) {
    let api = FakeApiServer::start().await;
    api.apply(node_json("n1", "4", "8Gi", "110"));
    api.apply(pod_json("default", "p", "", "1"));
    let kubeconfig = api.kubeconfig_path().to_string_lossy().into_owned();
    let mut args = vec!["--kubeconfig", kubeconfig.as_str()];
    args.extend_from_slice(extra);
    let server = tokio::task::block_in_place(|| child::Server::start(&args));
    let readyz = format!("http://{}/readyz", server.admin);
    eventually("the extender to become ready", child::DEADLINE, || async {
        reqwest::get(&readyz).await.is_ok_and(|r| r.status().as_u16() == 200)
    })
    .await;
    (api, server)
}

/// Starts a `/bind` of pod p to n1 and returns once the API server has received its binding.
async fn bind_in_flight(
    api: &FakeApiServer,
    server: &child::Server,
) -> tokio::task::JoinHandle<Result<(u16, Value), reqwest::Error>> {
    let uid = api.get("Pod", "default", "p").unwrap()["metadata"]["uid"].as_str().unwrap().to_string();
    let body = json!({"PodName": "p", "PodNamespace": "default", "PodUID": uid, "Node": "n1"});
    let url = format!("http://{}/bind", server.verbs);
    let request = tokio::spawn(async move {
        let resp = reqwest::Client::new().post(url).body(body.to_string()).send().await?;
        let status = resp.status().as_u16();
        Ok((status, resp.json::<Value>().await?))
    });
    eventually("the bind to reach the API server", child::DEADLINE, || {
        std::future::ready(api.requests().iter().any(|r| r.path.ends_with("/pods/p/binding")))
    })
    .await;
    request
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_lets_a_request_in_flight_finish_then_exits_0() {
    let (api, mut server) = cluster_and_extender(&["--request-timeout", "30s", "--shutdown-grace", "30s"]).await;
    api.set_delay(Duration::from_millis(1500));
    let request = bind_in_flight(&api, &server).await;
    server.sigterm();

    let (status, answer) = request.await.unwrap().expect("the bind in flight is answered");
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["Error"], "", "{answer}");
    assert_eq!(api.get("Pod", "default", "p").unwrap()["spec"]["nodeName"], "n1");
    let exit = tokio::task::block_in_place(|| server.wait_exit(child::DEADLINE));
    assert_eq!(exit.code(), Some(0));
    server.drain_logs();
    assert!(server.seen.iter().any(|l| child::message(l).contains("shutting down")), "{:#?}", server.seen);
    assert!(!server.seen.iter().any(|l| child::message(l).contains("grace ran out")), "{:#?}", server.seen);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_outlasting_the_grace_is_cut_off_and_the_process_still_exits_0() {
    let (api, mut server) = cluster_and_extender(&["--request-timeout", "120s", "--shutdown-grace", "1s"]).await;
    api.set_delay(Duration::from_secs(120));
    let request = bind_in_flight(&api, &server).await;
    let asked = Instant::now();
    server.sigterm();

    let exit = tokio::task::block_in_place(|| server.wait_exit(child::DEADLINE));
    let took = asked.elapsed();
    assert_eq!(exit.code(), Some(0));
    assert!(took >= Duration::from_secs(1), "exited after {took:?}, before the grace was over");
    let answer = request.await.unwrap();
    assert!(answer.is_err(), "the cut-off request got an answer: {answer:?}");
    let warning =
        tokio::task::block_in_place(|| server.wait_log("the warning", |l| child::message(l).contains("grace ran out")));
    assert_eq!(warning["level"], "WARN", "{warning}");
    assert_eq!(warning["fields"]["still_open"], 1, "{warning}");
}
