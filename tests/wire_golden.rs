//! Golden tests on the wire: requests exactly as kube-scheduler's Go client encodes them
//! (`tests/fixtures/kube-scheduler-wire/`), replayed against the server on the 100-node cluster they
//! were made against, and compared with an answer computed independently of this crate.
//!
//! `filter-100-names.expected.json` is computed by `tests/fixtures/kube-scheduler-wire/expected.py`
//! (standard-library Python, none of this crate's code), which applies kube-scheduler's rules for
//! the default predicates to `cluster-100.json.gz` (requests summed as
//! `resourcehelper.PodRequests`: app containers plus sidecars, the init-container peak, overhead;
//! nominated pods of equal or higher priority added in a first pass; the first failing predicate
//! ends a node), MatchInterPodAffinity included: the pod's required hostname anti-affinity to its
//! own app fails the 16 nodes that already run one. `python3 expected.py --check` says whether
//! the committed files are what it computes.
//!
//! Why the nodes fail, in short: the pod needs 500m cpu and 1Gi memory, `kubernetes.io/os=linux`,
//! zone us-central1-a or -b and workload class general/compute/memory. Every zone-c node, every
//! batch and gpu node fails the node selector (with any short resource reported first, as
//! GeneralPredicates does); `compute-l-896dc931-uxk6` is not ready (its Ready condition is Unknown);
//! `general-m-bcc562d3-b2fw` is cordoned; three nodes are short of cpu, `general-m-bcc562d3-0o98` only
//! because of the istio-proxy sidecars (restartable init containers) on it.
//!
//! The fixture never lets a taint, a pressure condition, the pod count, a terminal pod or a nominated
//! pod decide a node, so `filter-100-variations.expected.json` is the same script's answer for
//! cluster-100 and the request with the changes in [`variations`], each of which makes one of those
//! decide one node (the script applies the same edits).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod common;

use std::time::Duration;

use common::{feasible, TestServer};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

/// A fixture of the wire set, gunzipped when it ends in .gz.
fn wire(name: &str) -> Vec<u8> {
    common::fixture(&format!("kube-scheduler-wire/{name}"))
}

fn wire_text(name: &str) -> String {
    String::from_utf8(wire(name)).unwrap_or_else(|e| panic!("{name}: not UTF-8: {e}"))
}

fn wire_json(name: &str) -> Value {
    serde_json::from_slice(&wire(name)).unwrap_or_else(|e| panic!("{name}: not JSON: {e}"))
}

/// The golden answer to `req-filter-100-names.json`.
fn golden() -> Value {
    wire_json("filter-100-names.expected.json")
}

/// The server on cluster-100 as the fixture has it.
async fn cluster_100() -> TestServer {
    TestServer::start(common::config(common::cluster(&wire_text("cluster-100.json.gz")))).await
}

const BIND_NODE: &str = "gke-prod-uc1-pool-general-m-bcc562d3-kn9m";
const BIND_POD: &str = "shop/checkout-api-gmhsdzj2zd-2j89b";
/// What kn9m has left: 7910m allocatable, 6635m requested by its 14 pods (computed independently).
const KN9M_FREE_MILLI_CPU: i64 = 1275;
/// The fixture pod's cpu request.
const POD_MILLI_CPU: i64 = 500;

/// The start of a long text, for failure messages.
fn head(text: &str) -> &str {
    let end = text.char_indices().nth(500).map_or(text.len(), |(i, _)| i);
    &text[..end]
}

/// The top-level members of a JSON object, in document order, values unparsed.
fn members(text: &str) -> Vec<(String, &RawValue)> {
    struct Members<'a>(std::marker::PhantomData<&'a ()>);
    impl<'de> serde::de::Visitor<'de> for Members<'de> {
        type Value = Vec<(String, &'de RawValue)>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<M: serde::de::MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
            let mut out = Vec::new();
            while let Some(entry) = map.next_entry::<String, &'de RawValue>()? {
                out.push(entry);
            }
            Ok(out)
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    serde::Deserializer::deserialize_map(&mut de, Members(std::marker::PhantomData))
        .unwrap_or_else(|e| panic!("not a JSON object ({e}): {}", head(text)))
}

/// The same request with every top-level key in lower case, values byte for byte.
fn lowercase_keys(body: &str) -> String {
    let fields: Vec<String> = members(body)
        .into_iter()
        .map(|(k, v)| format!("{}:{}", serde_json::to_string(&k.to_ascii_lowercase()).unwrap(), v.get()))
        .collect();
    format!("{{{}}}", fields.join(","))
}

/// Asserts the answer's top-level keys are exactly those of Go's `ExtenderFilterResult`, in its
/// field order, as encoding/json writes them.
fn assert_go_filter_result_keys(text: &str) {
    let keys: Vec<String> = members(text).into_iter().map(|(k, _)| k).collect();
    assert_eq!(keys, ["Nodes", "NodeNames", "FailedNodes", "FailedAndUnresolvableNodes", "Error"], "top-level keys");
}

/// Explains a mismatch with the golden answer node by node, so a failure says which nodes moved.
fn node_verdicts(answer: &Value) -> std::collections::BTreeMap<String, String> {
    let mut out = std::collections::BTreeMap::new();
    for name in feasible(answer) {
        out.insert(name, "fits".to_string());
    }
    for (key, tag) in [("FailedNodes", "failed"), ("FailedAndUnresolvableNodes", "unresolvable")] {
        for (name, reasons) in answer[key].as_object().into_iter().flatten() {
            let previous = out.insert(name.clone(), format!("{tag}: {}", reasons.as_str().unwrap_or("<not a string>")));
            assert!(previous.is_none(), "node {name} is in more than one part of the answer: {answer}");
        }
    }
    out
}

fn assert_matches_golden(answer: &Value, what: &str) {
    assert_matches(answer, &golden(), what);
}

fn assert_matches(answer: &Value, want: &Value, what: &str) {
    let (got_v, want_v) = (node_verdicts(answer), node_verdicts(want));
    let moved: Vec<String> = want_v
        .keys()
        .chain(got_v.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .filter(|n| got_v.get(*n) != want_v.get(*n))
        .map(|n| format!("  {n}: got {:?}, want {:?}", got_v.get(n), want_v.get(n)))
        .collect();
    assert!(moved.is_empty(), "{what}: nodes that differ from the golden answer:\n{}", moved.join("\n"));
    assert_eq!(answer, want, "{what}: the answer differs from the golden one (feasible order?)");
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNodeList<'a> {
    #[serde(borrow)]
    metadata: &'a RawValue,
    #[serde(borrow)]
    items: Vec<&'a RawValue>,
}

#[derive(Deserialize)]
struct NodesOf<'a> {
    #[serde(rename = "Nodes", alias = "nodes", borrow)]
    nodes: RawNodeList<'a>,
}

/// Checks a Nodes-mode answer against its request: the names answer's verdicts, `NodeNames` null,
/// the list metadata echoed, and every feasible item the request's own bytes, in request order.
fn assert_nodes_answer(request: &str, answer_text: &str, what: &str) {
    assert_go_filter_result_keys(answer_text);
    let answer: Value = serde_json::from_str(answer_text).unwrap();
    let want = golden();
    assert_eq!(answer["NodeNames"], Value::Null, "{what}: NodeNames");
    assert_eq!(answer["Error"], "", "{what}: Error");
    assert_eq!(answer["FailedNodes"], want["FailedNodes"], "{what}: FailedNodes");
    assert_eq!(answer["FailedAndUnresolvableNodes"], want["FailedAndUnresolvableNodes"], "{what}: unresolvable");
    assert_eq!(feasible(&answer), feasible(&want), "{what}: the feasible nodes, in request order");

    let sent: NodesOf<'_> = serde_json::from_str(request).unwrap();
    let got: NodesOf<'_> = serde_json::from_str(answer_text).unwrap();
    assert_eq!(got.nodes.metadata.get(), sent.nodes.metadata.get(), "{what}: the list metadata is echoed");
    let mut next = 0;
    for item in &got.nodes.items {
        assert!(request.contains(item.get()), "{what}: an answered node is not in the request's bytes");
        let at = sent.nodes.items[next..]
            .iter()
            .position(|s| s.get() == item.get())
            .unwrap_or_else(|| panic!("{what}: an answered node is not a request item, or is out of order"));
        next += at + 1;
    }
    assert_eq!(got.nodes.items.len(), want["NodeNames"].as_array().unwrap().len(), "{what}: feasible count");
}

#[test]
fn the_fixtures_are_what_the_golden_answer_was_computed_from() {
    let names = wire_json("req-filter-100-names.json");
    let nodes = wire_json("req-filter-100-nodes.json.gz");
    let mut pod = wire_json("pod.json");
    // The request carries the pod as Go encodes a v1.Pod inside ExtenderArgs: no kind/apiVersion.
    pod.as_object_mut().unwrap().retain(|k, _| k != "kind" && k != "apiVersion");
    assert_eq!(names["Pod"], pod, "the names request's pod is pod.json");
    assert_eq!(nodes["Pod"], pod, "the nodes request's pod is pod.json");
    assert_eq!(names["Nodes"], Value::Null);
    assert_eq!(nodes["NodeNames"], Value::Null);
    let item_names: Vec<Value> =
        nodes["Nodes"]["items"].as_array().unwrap().iter().map(|n| n["metadata"]["name"].clone()).collect();
    assert_eq!(&Value::from(item_names), &names["NodeNames"], "both requests ask about the same nodes, in order");
    assert_eq!(names["NodeNames"].as_array().unwrap().len(), 100);
}

#[tokio::test(flavor = "multi_thread")]
async fn names_request_gets_the_golden_answer() {
    let server = cluster_100().await;
    let (status, text) = server.post_text("/filter", wire("req-filter-100-names.json")).await;
    assert_eq!(status, 200, "{text}");
    assert_go_filter_result_keys(&text);
    let answer: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(answer["Nodes"], Value::Null);
    assert_matches_golden(&answer, "NodeNames request");
    server.stop().await;
}

#[test]
fn golden_answer_counts() {
    // The golden file itself, summarised: guards against an accidental edit of it.
    let want = golden();
    let reasons = |key: &str| {
        let mut counts = std::collections::BTreeMap::<String, usize>::new();
        for r in want[key].as_object().unwrap().values() {
            *counts.entry(r.as_str().unwrap().to_string()).or_default() += 1;
        }
        counts
    };
    assert_eq!(feasible(&want).len(), 39);
    // 16 nodes already run a checkout-api pod, whose own hostname anti-affinity to its app refuses
    // the pod (checked before the pod's anti-affinity, as 1.12-1.15's InterPodAffinityMatches).
    let existing =
        "node(s) didn't match pod affinity/anti-affinity, node(s) didn't satisfy existing pods anti-affinity rules";
    let failed = [("Insufficient cpu", 3), (existing, 16)];
    assert_eq!(reasons("FailedNodes"), failed.into_iter().map(|(r, n)| (r.to_string(), n)).collect());
    let unresolvable = reasons("FailedAndUnresolvableNodes");
    let expect = [
        ("node(s) didn't match node selector", 37),
        ("Insufficient cpu, node(s) didn't match node selector", 2),
        ("Insufficient memory, node(s) didn't match node selector", 1),
        ("node(s) were unschedulable", 1),
        ("node(s) were not ready", 1),
    ];
    assert_eq!(unresolvable, expect.into_iter().map(|(r, n)| (r.to_string(), n)).collect());
}

#[tokio::test(flavor = "multi_thread")]
async fn nodes_request_echoes_the_request_nodes_byte_for_byte() {
    let server = cluster_100().await;
    let request = wire_text("req-filter-100-nodes.json.gz");
    let (status, text) = server.post_text("/filter", request.clone()).await;
    assert_eq!(status, 200, "{}", head(&text));
    assert_nodes_answer(&request, &text, "Nodes request");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn lower_case_keys_get_the_same_answers() {
    let server = cluster_100().await;

    let names = lowercase_keys(&wire_text("req-filter-100-names.json"));
    assert!(names.starts_with(r#"{"pod":{"#) && names.contains(r#""nodes":null,"nodenames":["#), "{}", head(&names));
    let (status, text) = server.post_text("/filter", names).await;
    assert_eq!(status, 200, "{text}");
    assert_go_filter_result_keys(&text);
    assert_matches_golden(&serde_json::from_str(&text).unwrap(), "lower-case NodeNames request");

    let nodes = lowercase_keys(&wire_text("req-filter-100-nodes.json.gz"));
    assert!(nodes.contains(r#""nodes":{"metadata":"#) && nodes.ends_with(r#","nodenames":null}"#));
    let (status, text) = server.post_text("/filter", nodes.clone()).await;
    assert_eq!(status, 200, "{}", head(&text));
    assert_nodes_answer(&nodes, &text, "lower-case Nodes request");
    server.stop().await;
}

/// One HTTP/1.1 response read off a raw connection.
struct RawResponse {
    status_line: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl RawResponse {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

async fn write_all(stream: &tokio::net::TcpStream, mut data: &[u8]) {
    while !data.is_empty() {
        stream.writable().await.unwrap();
        match stream.try_write(data) {
            Ok(n) => data = &data[n..],
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("write: {e}"),
        }
    }
}

/// Reads more bytes into `buf`; panics on end of stream.
async fn read_more(stream: &tokio::net::TcpStream, buf: &mut Vec<u8>) {
    let mut chunk = [0u8; 64 * 1024];
    loop {
        stream.readable().await.unwrap();
        match stream.try_read(&mut chunk) {
            Ok(0) => panic!("the server closed the connection; got so far: {}", String::from_utf8_lossy(buf)),
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                return;
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("read: {e}"),
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Reads one response (Content-Length or chunked body) and leaves the connection open.
async fn read_response(stream: &tokio::net::TcpStream) -> RawResponse {
    let mut buf = Vec::new();
    let head_end = loop {
        if let Some(i) = find(&buf, b"\r\n\r\n") {
            break i;
        }
        read_more(stream, &mut buf).await;
    };
    let head = String::from_utf8(buf[..head_end].to_vec()).expect("the response head is not UTF-8");
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap().to_string();
    let headers: Vec<(String, String)> = lines
        .map(|l| {
            let (k, v) = l.split_once(':').unwrap_or_else(|| panic!("malformed header line {l:?}"));
            (k.trim().to_string(), v.trim().to_string())
        })
        .collect();
    let mut rest = buf[head_end + 4..].to_vec();
    let mut response = RawResponse { status_line, headers, body: Vec::new() };
    if let Some(len) = response.header("content-length") {
        let len: usize = len.parse().expect("Content-Length is a number");
        while rest.len() < len {
            read_more(stream, &mut rest).await;
        }
        assert_eq!(rest.len(), len, "bytes after the body on a request/response connection");
        response.body = rest;
    } else {
        assert_eq!(response.header("transfer-encoding"), Some("chunked"), "neither Content-Length nor chunked");
        loop {
            let line_end = loop {
                if let Some(i) = find(&rest, b"\r\n") {
                    break i;
                }
                read_more(stream, &mut rest).await;
            };
            let size_text = String::from_utf8_lossy(&rest[..line_end]).to_string();
            let size = usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16).expect("chunk size");
            while rest.len() < line_end + 2 + size + 2 {
                read_more(stream, &mut rest).await;
            }
            response.body.extend_from_slice(&rest[line_end + 2..line_end + 2 + size]);
            rest.drain(..line_end + 2 + size + 2);
            if size == 0 {
                break;
            }
        }
    }
    if response.header("content-encoding") == Some("gzip") {
        // Go asked for gzip and would undo it transparently.
        let mut plain = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&response.body[..]), &mut plain).unwrap();
        response.body = plain;
    }
    response
}

/// The request head Go sends, byte for byte, with the Host and Content-Length of this request.
fn go_request(host: &str, body: &[u8]) -> Vec<u8> {
    let template = wire_text("request-head.txt");
    assert!(template.ends_with("\r\n\r\n"), "the head ends with an empty line");
    let mut head = String::new();
    for line in template.split_inclusive("\r\n") {
        let (name, _) = line.split_once(':').unwrap_or(("", ""));
        if name.eq_ignore_ascii_case("content-length") {
            head.push_str(&format!("Content-Length: {}\r\n", body.len()));
        } else if name.eq_ignore_ascii_case("host") {
            head.push_str(&format!("Host: {host}\r\n"));
        } else {
            head.push_str(line);
        }
    }
    let mut out = head.into_bytes();
    out.extend_from_slice(body);
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn go_http_client_request_head_over_a_raw_connection() {
    let template = wire_text("request-head.txt");
    let lines: Vec<&str> = template.split("\r\n").collect();
    assert_eq!(
        lines,
        [
            "POST /filter HTTP/1.1",
            "Host: 127.0.0.1:18889",
            "User-Agent: Go-http-client/1.1",
            "Content-Length: 8724",
            "Content-Type: application/json",
            "Accept-Encoding: gzip",
            "",
            ""
        ],
        "the head Go sends"
    );
    assert_eq!(wire("req-filter-100-names.json").len(), 8724, "the head was taken with the names request");

    let server = cluster_100().await;
    let host = server.base.trim_start_matches("http://").to_string();
    let stream = tokio::time::timeout(Duration::from_secs(10), tokio::net::TcpStream::connect(&host))
        .await
        .expect("connect timed out")
        .unwrap();

    // Go keeps the connection and sends the next request on it: names, then the full nodes request.
    let names = wire("req-filter-100-names.json");
    let nodes = wire("req-filter-100-nodes.json.gz");
    for (what, body) in [("names", &names), ("nodes", &nodes)] {
        write_all(&stream, &go_request(&host, body)).await;
        let response = tokio::time::timeout(Duration::from_secs(30), read_response(&stream))
            .await
            .unwrap_or_else(|_| panic!("{what}: no complete answer within 30s"));
        assert_eq!(response.status_line, "HTTP/1.1 200 OK", "{what}");
        let content_type = response.header("content-type").unwrap_or_default();
        assert!(content_type.starts_with("application/json"), "{what}: Content-Type {content_type:?}");
        let text = String::from_utf8(response.body).expect("the answer is UTF-8");
        if what == "names" {
            assert_go_filter_result_keys(&text);
            assert_matches_golden(&serde_json::from_str(&text).unwrap(), "names over a raw connection");
        } else {
            assert_nodes_answer(std::str::from_utf8(body).unwrap(), &text, "nodes over a raw connection");
        }
    }
    drop(stream);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bind_of_a_pod_the_cluster_does_not_have_says_so() {
    // The fixture's pending pod is not in cluster-100: the snapshot was taken without it.
    let cluster = wire_json("cluster-100.json.gz");
    let bind = wire_json("req-bind.json");
    let known = cluster["items"].as_array().unwrap().iter().any(|o| {
        o["kind"] == "Pod"
            && o["metadata"]["namespace"] == bind["PodNamespace"]
            && o["metadata"]["name"] == bind["PodName"]
    });
    assert!(!known, "cluster-100 has the bind fixture's pod; this test expects it not to");

    let server = cluster_100().await;
    let (status, answer) = server.post("/bind", wire("req-bind.json")).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer.as_object().unwrap().keys().collect::<Vec<_>>(), ["Error"], "{answer}");
    let error = answer["Error"].as_str().unwrap();
    assert!(error.contains(BIND_POD) && error.contains("not known"), "{error}");
    server.stop().await;
}

/// A probe pod for kn9m: the fixture pod under another name and app (so its anti-affinity to
/// checkout-api pods does not count), asking `milli_cpu` of cpu.
fn probe(milli_cpu: i64) -> String {
    let mut pod = wire_json("pod.json");
    pod["metadata"]["name"] = json!("cpu-probe");
    pod["metadata"]["labels"] = json!({"app": "cpu-probe"});
    pod["spec"]["affinity"]["podAntiAffinity"] = Value::Null;
    pod["metadata"]["uid"] = json!("00000000-0000-0000-0000-00000000c0de");
    pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!(format!("{milli_cpu}m"));
    pod["spec"]["containers"][0]["resources"]["limits"]["cpu"] = json!(format!("{milli_cpu}m"));
    json!({"Pod": pod, "Nodes": null, "NodeNames": [BIND_NODE]}).to_string()
}

async fn probe_fits(server: &TestServer, milli_cpu: i64) -> Result<(), Value> {
    let (status, answer) = server.post("/filter", probe(milli_cpu)).await;
    assert_eq!(status, 200, "{answer}");
    if feasible(&answer) == [BIND_NODE] {
        Ok(())
    } else {
        Err(answer)
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn bind_places_the_pod_once_and_later_filters_see_it() {
    // cluster-100 plus the fixture's pod, pending, as the API server has it when it is scheduled.
    let mut cluster = wire_json("cluster-100.json.gz");
    cluster["items"].as_array_mut().unwrap().push(wire_json("pod.json"));
    let server = TestServer::start(common::config(common::cluster(&cluster.to_string()))).await;
    assert_eq!(wire_json("req-bind.json")["Node"], BIND_NODE);

    // Before the bind kn9m has exactly KN9M_FREE_MILLI_CPU left.
    probe_fits(&server, KN9M_FREE_MILLI_CPU).await.expect("all of kn9m's free cpu fits before the bind");
    let err = probe_fits(&server, KN9M_FREE_MILLI_CPU + 1).await.expect_err("one millicore more does not");
    assert_eq!(err["FailedNodes"], json!({ BIND_NODE: "Insufficient cpu" }));

    for attempt in ["first", "repeated"] {
        let (status, answer) = server.post("/bind", wire("req-bind.json")).await;
        assert_eq!(status, 200, "{attempt} bind: {answer}");
        assert_eq!(answer, json!({"Error": ""}), "{attempt} bind");
    }

    let err = probe_fits(&server, KN9M_FREE_MILLI_CPU).await.expect_err("the bound pod's 500m is taken");
    assert_eq!(err["FailedNodes"], json!({ BIND_NODE: "Insufficient cpu" }), "{err}");
    assert_eq!(err["FailedAndUnresolvableNodes"], json!({}));
    // Counted once, though bound twice.
    probe_fits(&server, KN9M_FREE_MILLI_CPU - POD_MILLI_CPU).await.expect("the rest still fits");

    // The pod stays where it is.
    let elsewhere = wire_text("req-bind.json").replace(BIND_NODE, "gke-prod-uc1-pool-general-m-9ffe7c57-k92y");
    let (status, answer) = server.post("/bind", elsewhere).await;
    assert_eq!(status, 200, "{answer}");
    let error = answer["Error"].as_str().unwrap();
    assert!(error.contains("already bound") && error.contains(BIND_NODE), "{error}");
    server.stop().await;
}

const P: &str = "gke-prod-uc1-pool-";

fn item<'a>(cluster: &'a mut Value, kind: &str, namespace: &str, name: &str) -> &'a mut Value {
    cluster["items"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|o| {
            o["kind"] == kind
                && o["metadata"]["name"] == name
                && o["metadata"]["namespace"].as_str().unwrap_or("") == namespace
        })
        .unwrap_or_else(|| panic!("cluster-100 has no {kind} {namespace}/{name}"))
}

fn node<'a>(cluster: &'a mut Value, short: &str) -> &'a mut Value {
    item(cluster, "Node", "", &format!("{P}{short}"))
}

fn set_condition(cluster: &mut Value, short: &str, type_: &str, status: &str) {
    let conditions = node(cluster, short)["status"]["conditions"].as_array_mut().unwrap();
    let c = conditions.iter_mut().find(|c| c["type"] == type_).unwrap_or_else(|| panic!("{short} has no {type_}"));
    c["status"] = json!(status);
}

fn pending(name: &str, nominated: &str, priority: i32, cpu: &str) -> Value {
    json!({
        "kind": "Pod", "apiVersion": "v1",
        "metadata": {"name": name, "namespace": "variations", "uid": format!("uid-{name}")},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}], "priority": priority},
        "status": {"phase": "Pending", "nominatedNodeName": format!("{P}{nominated}")}
    })
}

/// cluster-100 and the names request, changed so that the predicates the fixture itself never
/// decides a node by get to decide one: terminal pods, nominated pods of equal and lower priority,
/// a tolerated taint, an untolerated one, each condition, the pod count, exact memory limits.
/// `filter-100-variations.expected.json` is the independent answer to exactly these changes.
fn variations() -> (String, String) {
    let mut c = wire_json("cluster-100.json.gz");
    // 0o98 is 25m short of cpu, 5a3q 215m: a finished pod on each frees 350m and 500m.
    item(&mut c, "Pod", "search", "review-api-47b25fn2b2-9mt9j")["status"]["phase"] = json!("Succeeded");
    item(&mut c, "Pod", "search", "report-api-2v89kpbl4p-wjlv7")["status"]["phase"] = json!("Failed");
    let items = c["items"].as_array_mut().unwrap();
    // kn9m has 1275m free: an equal-priority nominee of 800m leaves too little; a lower-priority
    // one on k92y is not counted.
    items.push(pending("nominee-equal", "general-m-bcc562d3-kn9m", 0, "800m"));
    items.push(pending("nominee-lower", "general-m-9ffe7c57-k92y", -1, "4"));
    // Ready again, uxk6 still has node.kubernetes.io/unreachable:NoSchedule, which the pod does
    // not tolerate (only the NoExecute one).
    set_condition(&mut c, "compute-l-896dc931-uxk6", "Ready", "True");
    // In a wanted zone, a spot node's taint is tolerated.
    node(&mut c, "spot-m-abb6eab1-ygte")["metadata"]["labels"]["topology.kubernetes.io/zone"] = json!("us-central1-a");
    // Memory pressure refuses BestEffort pods only; this one is Burstable.
    set_condition(&mut c, "general-m-9ffe7c57-k92y", "MemoryPressure", "True");
    set_condition(&mut c, "general-m-9ffe7c57-31mr", "DiskPressure", "True");
    set_condition(&mut c, "general-m-bcc562d3-6x5j", "PIDPressure", "True");
    set_condition(&mut c, "general-m-bcc562d3-lp7t", "NetworkUnavailable", "True");
    // e9fi runs 19 pods, iwj8 16.
    node(&mut c, "general-m-bcc562d3-e9fi")["status"]["allocatable"]["pods"] = json!("19");
    node(&mut c, "general-m-bcc562d3-iwj8")["status"]["allocatable"]["pods"] = json!("17");
    // 6hxo's pods request 19457376256 bytes, khvf's 16840130560: room for exactly 1Gi, and a byte less.
    node(&mut c, "general-m-9ffe7c57-6hxo")["status"]["allocatable"]["memory"] = json!("20049920Ki");
    node(&mut c, "general-m-9ffe7c57-khvf")["status"]["allocatable"]["memory"] = json!("17913872383");

    let mut request = wire_json("req-filter-100-names.json");
    // Tolerating the cordon passes CheckNodeUnschedulable on b2fw, but not CheckNodeCondition (1.12:
    // spec.unschedulable alone), which runs first.
    request["Pod"]["spec"]["tolerations"]
        .as_array_mut()
        .unwrap()
        .push(json!({"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}));
    (c.to_string(), request.to_string())
}

#[tokio::test(flavor = "multi_thread")]
async fn variations_of_cluster_100_get_their_golden_answer() {
    let (cluster, request) = variations();
    let server = TestServer::start(common::config(common::cluster(&cluster))).await;
    let (status, text) = server.post_text("/filter", request).await;
    assert_eq!(status, 200, "{text}");
    assert_go_filter_result_keys(&text);
    let want = wire_json("filter-100-variations.expected.json");
    assert_matches(&serde_json::from_str(&text).unwrap(), &want, "variations");
    server.stop().await;
}
