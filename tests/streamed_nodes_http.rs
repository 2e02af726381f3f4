//! A large `Nodes` body (declared at 4 MiB or more) is split and decoded as it streams in, its items
//! kept compressed until the answer echoes them (`server::streamed_nodes`). Its answers must be
//! the ones the whole-body path gives, byte for byte: each body here is sent over HTTP to the real
//! server and answered again, whole, by `handlers::filter_body` / `prioritize_body` on the same
//! model.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod common;

use predicate_engine::engine::Evaluator;
use predicate_engine::policy::Plan;
use predicate_extender::server::handlers::{filter_body, prioritize_body};
use predicate_extender::server::large_bodies::LARGE_BODY_BYTES;
use predicate_extender::server::AppState;
use serde_json::{json, Value};

use common::{demo_node_list, web_2, TestServer};

/// The demo's nodes, each `copies` times under new names, with an annotation that makes each about
/// 5 KB and puts escapes and non-ASCII text in every item.
fn many_nodes(copies: usize) -> Value {
    let demo = demo_node_list();
    let mut items = Vec::new();
    for k in 0..copies {
        for node in demo["items"].as_array().unwrap_or_else(|| panic!("demo items")) {
            let mut node = node.clone();
            let name = format!("{}-{k}", node["metadata"]["name"].as_str().unwrap_or_default());
            node["metadata"]["name"] = json!(name);
            node["metadata"]["annotations"] = json!({
                "example.com/notes": format!("{} \"quoted\" \\ back-slashed, caf\u{e9} \u{1F680} {k}", "x".repeat(4800)),
            });
            items.push(node);
        }
    }
    json!({"metadata": {"resourceVersion": "42"}, "items": items})
}

fn body(value: &Value, pretty: bool) -> Vec<u8> {
    let text = if pretty { serde_json::to_vec_pretty(value) } else { serde_json::to_vec(value) };
    let bytes = text.unwrap_or_else(|e| panic!("encoding a body: {e}"));
    assert!(bytes.len() >= LARGE_BODY_BYTES, "{} bytes: not a streamed body", bytes.len());
    bytes
}

struct Answers {
    server: TestServer,
    state: AppState,
    evaluator: Evaluator,
}

impl Answers {
    async fn start() -> Answers {
        let server = TestServer::demo().await;
        let snapshot = (*server.store().snapshot()).clone();
        let evaluator = || Evaluator::new(2).unwrap_or_else(|e| panic!("evaluator: {e}"));
        let state = AppState::fixed(snapshot, Plan::default_plan(), evaluator());
        Answers { server, state, evaluator: evaluator() }
    }

    /// The answer over HTTP (streamed) and the whole-body answer: (status, text) each.
    async fn both(&self, path: &str, body: Vec<u8>) -> ((u16, String), (u16, String)) {
        let whole = match path {
            "/filter" => filter_body(&self.state, &body, &self.evaluator),
            _ => prioritize_body(&self.state, &body, &self.evaluator),
        };
        let (status, text) = whole.unwrap_or_else(|_| panic!("{path}: cancelled"));
        let whole = (status.as_u16(), String::from_utf8(text).unwrap_or_else(|e| panic!("{path}: {e}")));
        (self.server.post_text(path, body).await, whole)
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn streamed_answers_are_the_whole_body_answers_byte_for_byte() {
    let answers = Answers::start().await;
    let nodes = many_nodes(160); // 960 nodes, about 5 MB
    let compact = json!({"Pod": web_2(), "Nodes": nodes, "NodeNames": null});
    // Older schedulers' lower-case keys, and whitespace everywhere.
    let lower_pretty = json!({"pod": web_2(), "nodes": nodes});
    for (what, body) in [("compact", body(&compact, false)), ("lower-case, pretty", body(&lower_pretty, true))] {
        for path in ["/filter", "/prioritize"] {
            let (streamed, whole) = answers.both(path, body.clone()).await;
            assert_eq!(streamed.0, 200, "{what} {path}: {}", &streamed.1[..streamed.1.len().min(300)]);
            assert!(streamed == whole, "{what} {path}: the streamed answer differs from the whole-body one");
        }
    }
    // The filter answer echoes some nodes and fails others: both halves were compared.
    let (streamed, _) = answers.both("/filter", body(&compact, false)).await;
    let answer: Value = serde_json::from_str(&streamed.1).unwrap_or_else(|e| panic!("{e}"));
    let echoed = answer["Nodes"]["items"].as_array().map_or(0, Vec::len);
    let failed = answer["FailedNodes"].as_object().map_or(0, |m| m.len())
        + answer["FailedAndUnresolvableNodes"].as_object().map_or(0, |m| m.len());
    assert!(echoed > 100 && failed > 100 && echoed + failed == 960, "{echoed} echoed, {failed} failed");
    answers.server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bad_item_in_a_streamed_body_is_refused_as_the_whole_body_refuses_it() {
    let answers = Answers::start().await;
    let nodes = many_nodes(160);
    let with = |item: usize, patch: Value| {
        let mut nodes = nodes.clone();
        nodes["items"][item]["spec"] = patch;
        body(&json!({"Pod": web_2(), "Nodes": nodes}), false)
    };
    let mut twice = nodes.clone();
    twice["items"][700]["metadata"]["name"] = twice["items"][3]["metadata"]["name"].clone();
    let cases = [
        ("a field of the wrong type", with(37, json!({"taints": "x"}))),
        ("a negative quantity", {
            let mut nodes = nodes.clone();
            nodes["items"][500]["status"]["allocatable"]["cpu"] = json!("-1");
            body(&json!({"Pod": web_2(), "Nodes": nodes}), false)
        }),
        ("a node named twice", body(&json!({"Pod": web_2(), "Nodes": twice}), false)),
        // /filter reads no images (they are skipped there), but their types are still checked.
        ("images of the wrong type", {
            let mut nodes = nodes.clone();
            nodes["items"][900]["status"]["images"] = json!([{"names": ["a"], "sizeBytes": "big"}]);
            body(&json!({"Pod": web_2(), "Nodes": nodes}), false)
        }),
    ];
    for (what, body) in cases {
        for path in ["/filter", "/prioritize"] {
            let (streamed, whole) = answers.both(path, body.clone()).await;
            assert_eq!(streamed.0, 400, "{what} {path}: {}", streamed.1);
            assert_eq!(streamed, whole, "{what} {path}");
        }
    }

    // Malformed JSON: refused either way; the streamed body names the item, the whole body the
    // position (this is also what shows the large body took the streamed path).
    let good = body(&json!({"Pod": web_2(), "Nodes": nodes}), false);
    let text = String::from_utf8(good).unwrap_or_else(|e| panic!("{e}"));
    let item_100 = nodes["items"][100]["metadata"]["name"].as_str().unwrap_or_default();
    let at = text.find(&format!("\"name\":\"{item_100}\"")).unwrap_or_else(|| panic!("item 100 in the body"));
    let broken = format!("{}\"name\"::{}", &text[..at], &text[at + "\"name\":".len()..]).into_bytes();
    let truncated = text.as_bytes()[..text.len() - 5000].to_vec();
    // A syntax error in a list a later `Nodes` replaces is refused too, and comes before an error
    // in the pod (the whole body is parsed before anything is decoded).
    let overridden = {
        let broken = String::from_utf8(broken.clone()).unwrap();
        let at = broken.find("\"Nodes\":").unwrap();
        format!("{}\"nodes\":{{\"items\":[{{\"a\":}}]}},{}", &broken[..at], &broken[at..])
            .replacen("\"name\"::", "\"name\":", 1)
            .into_bytes()
    };
    let bad_pod =
        String::from_utf8(broken.clone()).unwrap().replacen("\"Pod\":{", "\"Pod\":{\"spec\":7,", 1).into_bytes();
    for (what, body, streamed_error) in [
        ("a syntax error inside item 100", broken, "ExtenderArgs.Nodes.items[100].metadata"),
        ("a body cut short", truncated, "ExtenderArgs: EOF while parsing"),
        ("a syntax error in a list replaced by a later one", overridden, "ExtenderArgs.Nodes.items[0]"),
        ("a syntax error in an item and a pod of the wrong type", bad_pod, "ExtenderArgs.Nodes.items[100].metadata"),
    ] {
        for path in ["/filter", "/prioritize"] {
            let (streamed, whole) = answers.both(path, body.clone()).await;
            assert_eq!((streamed.0, whole.0), (400, 400), "{what} {path}: {} / {}", streamed.1, whole.1);
            let error = |text: &str| {
                serde_json::from_str::<Value>(text).ok().and_then(|v| v["Error"].as_str().map(str::to_string))
            };
            let streamed_error_text = error(&streamed.1).unwrap_or_default();
            assert!(streamed_error_text.starts_with(streamed_error), "{what} {path}: {streamed_error_text}");
            assert!(error(&whole.1).is_some_and(|e| e.starts_with("ExtenderArgs: ")), "{what} {path}: {}", whole.1);
        }
    }
    answers.server.stop().await;
}

/// A large body still arriving when the body timeout passes is answered 408 as any body is; the
/// request deadline (shorter here) counts only once the body is in, as for any body.
#[tokio::test(flavor = "multi_thread")]
async fn a_streamed_body_still_arriving_at_the_body_timeout_gets_408() {
    use std::io::{Read, Write};
    let mut config = common::config(predicate_extender::server::ClusterSource::Demo);
    config.request_timeout = std::time::Duration::from_millis(200);
    config.connections.body_timeout = std::time::Duration::from_millis(800);
    let server = TestServer::start(config).await;
    let addr = server.base.trim_start_matches("http://").to_string();
    let body = body(&json!({"Pod": web_2(), "Nodes": many_nodes(160)}), false);
    let answer = tokio::task::spawn_blocking(move || {
        let mut stream = std::net::TcpStream::connect(&addr).unwrap();
        let head = format!(
            "POST /filter HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes()).unwrap();
        stream.write_all(&body[..1 << 20]).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1500));
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer);
        String::from_utf8_lossy(&answer).into_owned()
    })
    .await
    .unwrap();
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(
        answer.contains("the request body was still arriving when the body timeout of 800ms (--body-timeout) passed"),
        "{answer}"
    );
    server.stop().await;
}
