//! Malformed and hostile request bodies: every one must get a 4xx with the verb's result object and
//! a non-empty `Error` that names what is wrong and where, never a panic, a dropped connection, a
//! 5xx or a 2xx; and the server must still answer a valid request correctly afterwards.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod common;

use std::io::{Read, Write};
use std::net::Shutdown;
use std::time::Duration;

use predicate_extender::server::ClusterSource;
use serde_json::Value;

use common::TestServer;

/// The demo cluster's pending pod, as kube-scheduler would send it.
const WEB2: &str = r#"{"metadata":{"name":"web-2","namespace":"default","uid":"0b7f2a10-1111-4c3e-8a55-00000000a102","labels":{"app":"web"}},"spec":{"priority":0,"containers":[{"name":"web","image":"nginx:1.27","ports":[{"containerPort":80,"hostPort":80,"protocol":"TCP"}],"resources":{"requests":{"cpu":"1","memory":"1Gi"}}}]},"status":{"phase":"Pending"}}"#;

/// A demo node as kube-scheduler would send it in `Nodes`.
const NODE_B1: &str = r#"{"metadata":{"name":"node-b1","labels":{"kubernetes.io/hostname":"node-b1"}},"status":{"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"},"conditions":[{"type":"Ready","status":"True"}]}}"#;

const ALL_NODES: &str = r#"["node-a1","node-a2","node-a3","node-b1","node-b2","node-b3"]"#;

/// How long any one exchange may take before it counts as a hang.
const PATIENCE: Duration = Duration::from_secs(20);

/// `text` with `from` replaced by `to`; panics when `from` is not there, so a case cannot silently
/// turn into a valid request.
fn swap(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "{from:?} is not in {text}");
    text.replacen(from, to, 1)
}

/// A `/filter` body with `NodeNames` for `pod` (raw JSON).
fn names_body(pod: &str) -> String {
    format!(r#"{{"Pod":{pod},"Nodes":null,"NodeNames":{ALL_NODES}}}"#)
}

/// A `/filter` body with `Nodes` holding the given items (raw JSON) for web-2.
fn nodes_body(items: &str) -> String {
    format!(r#"{{"Pod":{WEB2},"Nodes":{{"metadata":{{}},"items":[{items}]}},"NodeNames":null}}"#)
}

/// `depth` nested arrays around `inner`.
fn nested_arrays(depth: usize, inner: &str) -> String {
    format!("{}{inner}{}", "[".repeat(depth), "]".repeat(depth))
}

/// `depth` nested objects `{"a":{"a":...}}` around `inner`.
fn nested_objects(depth: usize, inner: &str) -> String {
    format!("{}{inner}{}", r#"{"a":"#.repeat(depth), "}".repeat(depth))
}

struct Case {
    name: &'static str,
    path: &'static str,
    body: Vec<u8>,
    status: u16,
    /// A substring the answer's `Error` must contain (as sent: any '%' doubled).
    error_has: &'static str,
}

fn case(
    name: &'static str,
    path: &'static str,
    body: impl Into<Vec<u8>>,
    status: u16,
    error_has: &'static str,
) -> Case {
    Case { name, path, body: body.into(), status, error_has }
}

/// POSTs without panicking: a transport failure or a hang is reported as an Err.
async fn send(server: &TestServer, path: &str, body: Vec<u8>) -> Result<(u16, String), String> {
    let request = server
        .client
        .post(format!("{}{path}", server.base))
        .header("Content-Type", "application/json")
        .body(body)
        .send();
    let exchange = async {
        let resp = request.await.map_err(|e| format!("no answer (dropped connection?): {e:?}"))?;
        let status = resp.status().as_u16();
        let text = resp.text().await.map_err(|e| format!("answer body unreadable: {e:?}"))?;
        Ok((status, text))
    };
    tokio::time::timeout(PATIENCE, exchange).await.map_err(|_| format!("no answer within {PATIENCE:?}"))?
}

/// True when every '%' is part of a "%%" pair: Go's fmt prints such a string as itself.
fn go_format_safe(s: &str) -> bool {
    !s.replace("%%", "").contains('%')
}

/// Checks an error answer of `path`: the status, the verb's result object with nothing but the
/// error, and an `Error` that is non-empty, format-safe and contains `error_has`. Returns the Error.
fn check_error_answer(
    path: &str,
    status: u16,
    text: &str,
    want_status: u16,
    error_has: &str,
) -> Result<String, String> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| format!("status {status}, answer is not JSON ({e}): {text:?}"))?;
    let error =
        value["Error"].as_str().ok_or_else(|| format!("status {status}, no string Error in {text}"))?.to_string();
    if status != want_status {
        return Err(format!("status {status}, want {want_status}: {text}"));
    }
    if error.trim().is_empty() {
        return Err(format!("empty Error: {text}"));
    }
    if !error.contains(error_has) {
        return Err(format!("Error does not contain {error_has:?}: {error:?}"));
    }
    if !go_format_safe(&error) {
        return Err(format!("Error has a bare '%' (kube-scheduler reads it as a format string): {error:?}"));
    }
    let want_shape = if path.ends_with("/bind") {
        serde_json::json!({ "Error": error })
    } else if path.ends_with("/preempt") {
        serde_json::json!({ "NodeNameToMetaVictims": {}, "Error": error })
    } else {
        serde_json::json!({
            "Nodes": null,
            "NodeNames": null,
            "FailedNodes": {},
            "FailedAndUnresolvableNodes": {},
            "Error": error,
        })
    };
    if value != want_shape {
        return Err(format!("not the verb's bare error object: {text}"));
    }
    Ok(error)
}

/// Sends a valid NodeNames filter for web-2 and checks the answer the demo cluster must give.
async fn assert_still_answers(server: &TestServer) {
    let (status, text) =
        send(server, "/filter", names_body(WEB2).into_bytes()).await.unwrap_or_else(|e| panic!("valid filter: {e}"));
    assert_eq!(status, 200, "valid filter: {text}");
    let answer: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("valid filter: not JSON ({e}): {text}"));
    assert_eq!(answer["Error"], "", "valid filter: {text}");
    assert_eq!(answer["NodeNames"], serde_json::json!(["node-b1", "node-b3"]), "valid filter: {text}");
    assert!(answer["Nodes"].is_null(), "valid filter: {text}");
}

fn hostile_cases() -> Vec<Case> {
    let deep = 10_000;
    let web2_cpu = r#""cpu":"1""#;
    vec![
        // Not JSON, or not an object.
        case("empty body", "/filter", "", 400, "ExtenderArgs: the request body is empty"),
        case("whitespace only", "/filter", " \t\r\n  \n", 400, "ExtenderArgs: the request body is empty"),
        case("truncated JSON", "/filter", &names_body(WEB2)[..60], 400, "ExtenderArgs: EOF while parsing"),
        case("lone open brace", "/filter", "{", 400, "ExtenderArgs: EOF while parsing"),
        case("missing value", "/filter", r#"{"Pod":}"#, 400, "ExtenderArgs: expected value"),
        case(
            "trailing comma",
            "/filter",
            r#"{"Pod":{},"NodeNames":["node-a1"],}"#,
            400,
            "ExtenderArgs: trailing comma",
        ),
        case(
            "trailing garbage",
            "/filter",
            format!("{} xyz", names_body(WEB2)),
            400,
            "ExtenderArgs: trailing characters",
        ),
        case(
            "two objects",
            "/filter",
            format!("{}{}", names_body(WEB2), names_body(WEB2)),
            400,
            "ExtenderArgs: trailing characters",
        ),
        case("top-level array", "/filter", "[]", 400, "ExtenderArgs: invalid type: sequence, expected a JSON object"),
        case(
            "top-level array of the args",
            "/filter",
            format!("[{}]", names_body(WEB2)),
            400,
            "ExtenderArgs: invalid type: sequence",
        ),
        case("top-level string", "/filter", r#""Pod""#, 400, "ExtenderArgs: invalid type: string"),
        case("top-level number", "/filter", "42", 400, "ExtenderArgs: invalid type: integer"),
        case("top-level null", "/filter", "null", 400, "ExtenderArgs: invalid type: null"),
        case("top-level true", "/filter", "true", 400, "ExtenderArgs: invalid type: boolean"),
        case(
            "binary garbage",
            "/filter",
            vec![0x00, 0xff, 0xfe, 0x1f, 0x8b, 0x08, 0x00, 0x80, 0x7f],
            400,
            "ExtenderArgs: expected value",
        ),
        case(
            "gzip magic",
            "/filter",
            vec![0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03],
            400,
            "ExtenderArgs: expected value",
        ),
        case("NUL bytes", "/filter", vec![0u8; 64], 400, "ExtenderArgs: expected value"),
        // Go's encoding/json rejects a byte order mark too ("invalid character 'ï'").
        case("UTF-8 BOM", "/filter", format!("\u{feff}{}", names_body(WEB2)), 400, "ExtenderArgs: expected value"),
        case(
            "UTF-16LE body",
            "/filter",
            names_body(WEB2).encode_utf16().flat_map(u16::to_le_bytes).collect::<Vec<u8>>(),
            400,
            "ExtenderArgs",
        ),
        case(
            "invalid UTF-8 in a key",
            "/filter",
            [&b"{\"Pod\xff\":{},\"NodeNames\":[\"node-a1\"]}"[..]].concat(),
            400,
            "ExtenderArgs",
        ),
        case(
            "invalid UTF-8 in a value",
            "/filter",
            [&b"{\"Pod\":{\"metadata\":{\"name\":\"web-\xc3\x28\"}},\"NodeNames\":[\"node-a1\"]}"[..]].concat(),
            400,
            "ExtenderArgs",
        ),
        case(
            "lone surrogate in a node name",
            "/filter",
            r#"{"Pod":{},"NodeNames":["node-\ud800"]}"#,
            400,
            "ExtenderArgs.NodeNames[0]",
        ),
        case("NaN", "/filter", swap(&names_body(WEB2), r#""priority":0"#, r#""priority":NaN"#), 400, "ExtenderArgs"),
        case(
            "single quotes",
            "/filter",
            r#"{'Pod':{},'NodeNames':['node-a1']}"#,
            400,
            "ExtenderArgs: key must be a string",
        ),
        case("comment", "/filter", format!("// hi\n{}", names_body(WEB2)), 400, "ExtenderArgs: expected value"),
        // The Pod.
        case("empty object", "/filter", "{}", 400, "ExtenderArgs.Pod: missing field"),
        case(
            "missing Pod",
            "/filter",
            format!(r#"{{"Nodes":null,"NodeNames":{ALL_NODES}}}"#),
            400,
            "ExtenderArgs.Pod: missing field",
        ),
        case("Pod null", "/filter", names_body("null"), 400, "ExtenderArgs.Pod: missing field"),
        case(
            "Pod as a string",
            "/filter",
            names_body(r#""default/web-2""#),
            400,
            "ExtenderArgs.Pod: invalid type: string \"default/web-2\"",
        ),
        case("Pod as a number", "/filter", names_body("7"), 400, "ExtenderArgs.Pod: invalid type: integer `7`"),
        case("Pod as true", "/filter", names_body("true"), 400, "ExtenderArgs.Pod: invalid type: boolean"),
        case(
            "Pod.metadata as a string",
            "/filter",
            names_body(r#"{"metadata":"web-2"}"#),
            400,
            "ExtenderArgs.Pod.metadata: invalid type: string",
        ),
        case(
            "Pod.metadata.name a number",
            "/filter",
            names_body(r#"{"metadata":{"name":2}}"#),
            400,
            "ExtenderArgs.Pod.metadata.name: invalid type: integer `2`",
        ),
        case(
            "Pod.spec.containers not a list",
            "/filter",
            swap(&names_body(WEB2), r#""containers":[{"name":"web","#, r#""containers":{"web":{"name":"web","#)
                .replacen("}}]},", "}}}},", 1),
            400,
            "ExtenderArgs.Pod.spec.containers: invalid type: map, expected a sequence",
        ),
        case(
            "Pod.spec.containers a string",
            "/filter",
            names_body(r#"{"spec":{"containers":"web"}}"#),
            400,
            "ExtenderArgs.Pod.spec.containers: invalid type: string",
        ),
        case("Pod.spec a list", "/filter", names_body(r#"{"spec":[1,2,3]}"#), 400, "ExtenderArgs.Pod.spec"),
        case(
            "invalid cpu quantity",
            "/filter",
            swap(&names_body(WEB2), web2_cpu, r#""cpu":"lots""#),
            400,
            "ExtenderArgs.Pod.spec.containers[0].resources.requests.cpu: invalid quantity \"lots\"",
        ),
        case(
            "quantity with two decimal points",
            "/filter",
            swap(&names_body(WEB2), web2_cpu, r#""cpu":"1.2.3""#),
            400,
            "ExtenderArgs.Pod.spec.containers[0].resources.requests.cpu: invalid quantity \"1.2.3\"",
        ),
        case(
            "percent quantity (Error is a Go format string)",
            "/filter",
            swap(&names_body(WEB2), web2_cpu, r#""cpu":"50%""#),
            400,
            "ExtenderArgs.Pod.spec.containers[0].resources.requests.cpu: invalid quantity \"50%%\"",
        ),
        case(
            "empty quantity",
            "/filter",
            swap(&names_body(WEB2), r#""memory":"1Gi""#, r#""memory":"""#),
            400,
            "requests.memory: invalid quantity \"\"",
        ),
        case(
            "quantity true",
            "/filter",
            swap(&names_body(WEB2), web2_cpu, r#""cpu":true"#),
            400,
            "requests.cpu: invalid type: boolean",
        ),
        case(
            "quantity out of f64 range",
            "/filter",
            swap(&names_body(WEB2), web2_cpu, r#""cpu":1e400"#),
            400,
            "ExtenderArgs",
        ),
        case(
            "quantity with a Go format verb",
            "/filter",
            swap(&names_body(WEB2), web2_cpu, r#""cpu":"%!d(string=1)%v%""#),
            400,
            "invalid quantity \"%%!d(string=1)%%v%%\"",
        ),
        case(
            "labels with a number value",
            "/filter",
            swap(&names_body(WEB2), r#""labels":{"app":"web"}"#, r#""labels":{"app":5}"#),
            400,
            "ExtenderArgs.Pod.metadata.labels.app: invalid type: integer `5`, expected a string",
        ),
        case(
            "label key with '%' and a wrong value",
            "/filter",
            swap(&names_body(WEB2), r#""labels":{"app":"web"}"#, r#""labels":{"100%s":false}"#),
            400,
            "ExtenderArgs.Pod.metadata.labels.100%%s: invalid type: boolean",
        ),
        case(
            "labels a list",
            "/filter",
            swap(&names_body(WEB2), r#""labels":{"app":"web"}"#, r#""labels":["app=web"]"#),
            400,
            "ExtenderArgs.Pod.metadata.labels: invalid type: sequence",
        ),
        case(
            "priority out of int32 range",
            "/filter",
            swap(&names_body(WEB2), r#""priority":0"#, r#""priority":2147483648"#),
            400,
            "ExtenderArgs.Pod.spec.priority: invalid value: integer `2147483648`, expected i32",
        ),
        case(
            "priority huge negative",
            "/filter",
            swap(&names_body(WEB2), r#""priority":0"#, r#""priority":-99999999999999999999999"#),
            400,
            "ExtenderArgs.Pod.spec.priority",
        ),
        case(
            "priority fractional",
            "/filter",
            swap(&names_body(WEB2), r#""priority":0"#, r#""priority":1.5"#),
            400,
            "ExtenderArgs.Pod.spec.priority: invalid type: floating point",
        ),
        case(
            "priority a string",
            "/filter",
            swap(&names_body(WEB2), r#""priority":0"#, r#""priority":"0""#),
            400,
            "ExtenderArgs.Pod.spec.priority: invalid type: string",
        ),
        case(
            "hostPort out of int32 range",
            "/filter",
            swap(&names_body(WEB2), r#""hostPort":80"#, r#""hostPort":4294967376"#),
            400,
            "ExtenderArgs.Pod.spec.containers[0].ports[0]",
        ),
        case(
            "toleration a string",
            "/filter",
            swap(&names_body(WEB2), r#""priority":0"#, r#""priority":0,"tolerations":["dedicated=gpu"]"#),
            400,
            "ExtenderArgs.Pod.spec.tolerations[0]",
        ),
        case(
            "nodeSelector value a list",
            "/filter",
            swap(&names_body(WEB2), r#""priority":0"#, r#""priority":0,"nodeSelector":{"disktype":["ssd"]}"#),
            400,
            "ExtenderArgs.Pod.spec.nodeSelector.disktype",
        ),
        // The candidate nodes.
        case(
            "neither Nodes nor NodeNames",
            "/filter",
            format!(r#"{{"Pod":{WEB2}}}"#),
            400,
            "ExtenderArgs: neither Nodes nor NodeNames is set",
        ),
        case(
            "Nodes and NodeNames both null",
            "/filter",
            format!(r#"{{"Pod":{WEB2},"Nodes":null,"NodeNames":null}}"#),
            400,
            "ExtenderArgs: neither Nodes nor NodeNames is set",
        ),
        case(
            "both Nodes and NodeNames",
            "/filter",
            format!(r#"{{"Pod":{WEB2},"Nodes":{{"metadata":{{}},"items":[{NODE_B1}]}},"NodeNames":["node-b1"]}}"#),
            400,
            "ExtenderArgs: both Nodes and NodeNames are set",
        ),
        case(
            "NodeNames containing a number",
            "/filter",
            names_body(WEB2).replace(r#""node-a2""#, "7"),
            400,
            "ExtenderArgs.NodeNames[1]: invalid type: integer `7`, expected a string",
        ),
        case(
            "NodeNames containing null",
            "/filter",
            names_body(WEB2).replace(r#""node-a3""#, "null"),
            400,
            "ExtenderArgs.NodeNames[2]: invalid type: null, expected a string",
        ),
        case(
            "NodeNames not a list",
            "/filter",
            format!(r#"{{"Pod":{WEB2},"NodeNames":"node-a1,node-b1"}}"#),
            400,
            "ExtenderArgs.NodeNames: invalid type: string \"node-a1,node-b1\", expected a sequence",
        ),
        case(
            "NodeNames an object",
            "/filter",
            format!(r#"{{"Pod":{WEB2},"NodeNames":{{"node-a1":true}}}}"#),
            400,
            "ExtenderArgs.NodeNames: invalid type: map",
        ),
        case(
            "Nodes a string",
            "/filter",
            format!(r#"{{"Pod":{WEB2},"Nodes":"node-b1"}}"#),
            400,
            "ExtenderArgs.Nodes: expected a NodeList object with items",
        ),
        case(
            "Nodes an array of two",
            "/filter",
            format!(r#"{{"Pod":{WEB2},"Nodes":[{NODE_B1},{NODE_B1}]}}"#),
            400,
            "ExtenderArgs.Nodes: expected a NodeList object with items",
        ),
        case(
            "Nodes.items an object",
            "/filter",
            format!(r#"{{"Pod":{WEB2},"Nodes":{{"items":{{"node-b1":{NODE_B1}}}}}}}"#),
            400,
            "ExtenderArgs.Nodes: expected a NodeList object with items",
        ),
        case(
            "Nodes.items containing null",
            "/filter",
            nodes_body(&format!("{NODE_B1},null")),
            400,
            "ExtenderArgs.Nodes.items[1]: expected a Node object, found null",
        ),
        case(
            "Nodes.items containing a string",
            "/filter",
            nodes_body(r#""node-b1""#),
            400,
            "ExtenderArgs.Nodes.items[0]: invalid type: string",
        ),
        case(
            "node without metadata",
            "/filter",
            nodes_body(r#"{"status":{"allocatable":{"cpu":"4"}}}"#),
            400,
            "ExtenderArgs.Nodes.items[0].metadata.name: missing",
        ),
        case(
            "node with an empty name",
            "/filter",
            nodes_body(&format!(r#"{NODE_B1},{{"metadata":{{"name":""}}}}"#)),
            400,
            "ExtenderArgs.Nodes.items[1].metadata.name: missing",
        ),
        case(
            "node with an invalid allocatable quantity",
            "/filter",
            nodes_body(&swap(NODE_B1, r#""cpu":"4""#, r#""cpu":"4 cores""#)),
            400,
            "ExtenderArgs.Nodes.items[0].status.allocatable.cpu: invalid quantity \"4 cores\"",
        ),
        case(
            "node with a taint list of numbers",
            "/filter",
            nodes_body(&swap(NODE_B1, r#""status":"#, r#""spec":{"taints":[1]},"status":"#)),
            400,
            "ExtenderArgs.Nodes.items[0].spec.taints[0]",
        ),
        // Deep nesting must be a 400, not a stack overflow.
        case(
            "10,000 nested arrays as the Pod",
            "/filter",
            names_body(&nested_arrays(deep, "")),
            400,
            "ExtenderArgs.Pod",
        ),
        case(
            "10,000 nested arrays in Pod.spec.containers",
            "/filter",
            names_body(&format!(r#"{{"spec":{{"containers":{}}}}}"#, nested_arrays(deep, ""))),
            400,
            "ExtenderArgs.Pod.spec.containers",
        ),
        case(
            "10,000 nested objects in Pod.metadata.labels",
            "/filter",
            names_body(&format!(r#"{{"metadata":{{"labels":{}}}}}"#, nested_objects(deep, "1"))),
            400,
            "ExtenderArgs.Pod.metadata.labels.a",
        ),
        case(
            "10,000 nested arrays in Pod.spec.affinity",
            "/filter",
            names_body(&format!(r#"{{"spec":{{"affinity":{}}}}}"#, nested_arrays(deep, ""))),
            400,
            "ExtenderArgs.Pod.spec.affinity",
        ),
        case(
            "10,000 nested arrays in NodeNames",
            "/filter",
            format!(r#"{{"Pod":{WEB2},"NodeNames":{}}}"#, nested_arrays(deep, "")),
            400,
            "ExtenderArgs.NodeNames[0]",
        ),
        case(
            "10,000 nested arrays in Nodes.items",
            "/filter",
            nodes_body(&nested_arrays(deep, "")),
            400,
            "ExtenderArgs.Nodes.items[0]",
        ),
        case(
            "10,000 unclosed arrays",
            "/filter",
            format!(r#"{{"Pod":{}"#, "[".repeat(deep)),
            400,
            "ExtenderArgs: EOF while parsing",
        ),
        case(
            "100,000 unclosed objects at the top",
            "/filter",
            r#"{"a":"#.repeat(100_000),
            400,
            "ExtenderArgs: EOF while parsing",
        ),
        // Duplicate keys: the last wins, as in Go, and is checked.
        case(
            "duplicate Pod, the last a string",
            "/filter",
            format!(r#"{{"Pod":{WEB2},"NodeNames":{ALL_NODES},"Pod":"x"}}"#),
            400,
            "ExtenderArgs.Pod: invalid type: string \"x\"",
        ),
        case(
            "duplicate Pod, the last null",
            "/filter",
            format!(r#"{{"Pod":{WEB2},"NodeNames":{ALL_NODES},"pod":null}}"#),
            400,
            "ExtenderArgs.Pod: missing field",
        ),
        case(
            "duplicate NodeNames, the last bad",
            "/filter",
            format!(r#"{{"Pod":{WEB2},"NodeNames":{ALL_NODES},"NODENAMES":[false]}}"#),
            400,
            "ExtenderArgs.NodeNames[0]: invalid type: boolean",
        ),
        // Keys in another case still get their types checked, under the Go name.
        case(
            "lowercase pod a string",
            "/filter",
            format!(r#"{{"pod":"web-2","nodenames":{ALL_NODES}}}"#),
            400,
            "ExtenderArgs.Pod: invalid type: string",
        ),
        case(
            "lowercase nodenames a string",
            "/filter",
            format!(r#"{{"pod":{WEB2},"nodenames":"node-a1"}}"#),
            400,
            "ExtenderArgs.NodeNames: invalid type: string",
        ),
        case(
            "uppercase NODES a number",
            "/filter",
            format!(r#"{{"POD":{WEB2},"NODES":3}}"#),
            400,
            "ExtenderArgs.Nodes: expected a NodeList object",
        ),
        case(
            "lowercase nodes.items null entry",
            "/filter",
            format!(r#"{{"pod":{WEB2},"nodes":{{"items":[null]}}}}"#),
            400,
            "ExtenderArgs.Nodes.items[0]: expected a Node object, found null",
        ),
        // /bind.
        case("bind: empty body", "/bind", "", 400, "ExtenderBindingArgs: the request body is empty"),
        case(
            "bind: truncated",
            "/bind",
            r#"{"PodName":"web-2","PodNames"#,
            400,
            "ExtenderBindingArgs: EOF while parsing",
        ),
        case(
            "bind: not an object",
            "/bind",
            r#"["web-2","default","node-b1"]"#,
            400,
            "ExtenderBindingArgs: invalid type: sequence, expected a JSON object",
        ),
        case("bind: a string", "/bind", r#""default/web-2""#, 400, "ExtenderBindingArgs: invalid type: string"),
        case("bind: null", "/bind", "null", 400, "ExtenderBindingArgs: invalid type: null"),
        case("bind: binary garbage", "/bind", vec![0xde, 0xad, 0xbe, 0xef], 400, "ExtenderBindingArgs: expected value"),
        case("bind: empty object", "/bind", "{}", 400, "ExtenderBindingArgs.PodName: missing field"),
        case(
            "bind: missing PodName",
            "/bind",
            r#"{"PodNamespace":"default","PodUID":"u","Node":"node-b1"}"#,
            400,
            "ExtenderBindingArgs.PodName: missing field",
        ),
        case(
            "bind: missing PodNamespace",
            "/bind",
            r#"{"PodName":"web-2","PodUID":"u","Node":"node-b1"}"#,
            400,
            "ExtenderBindingArgs.PodNamespace: missing field",
        ),
        case(
            "bind: missing Node",
            "/bind",
            r#"{"PodName":"web-2","PodNamespace":"default","PodUID":"u"}"#,
            400,
            "ExtenderBindingArgs.Node: missing field",
        ),
        case(
            "bind: Node null",
            "/bind",
            r#"{"PodName":"web-2","PodNamespace":"default","PodUID":"u","Node":null}"#,
            400,
            "ExtenderBindingArgs.Node: missing field",
        ),
        case(
            "bind: PodName a number",
            "/bind",
            r#"{"PodName":5,"PodNamespace":"default","PodUID":"u","Node":"node-b1"}"#,
            400,
            "ExtenderBindingArgs.PodName: invalid type: integer `5`, expected a string",
        ),
        case(
            "bind: Node a list",
            "/bind",
            r#"{"PodName":"web-2","PodNamespace":"default","PodUID":"u","Node":["node-b1"]}"#,
            400,
            "ExtenderBindingArgs.Node: invalid type: sequence, expected a string",
        ),
        case(
            "bind: PodUID an object",
            "/bind",
            r#"{"PodName":"web-2","PodNamespace":"default","PodUID":{},"Node":"node-b1"}"#,
            400,
            "ExtenderBindingArgs.PodUID: invalid type: map, expected a string",
        ),
        case(
            "bind: lowercase node a bool",
            "/bind",
            r#"{"podname":"web-2","podnamespace":"default","poduid":"u","node":true}"#,
            400,
            "ExtenderBindingArgs.Node: invalid type: boolean",
        ),
        case(
            "bind: duplicate Node, the last empty",
            "/bind",
            r#"{"PodName":"web-2","PodNamespace":"default","PodUID":"u","Node":"node-b1","Node":""}"#,
            400,
            "ExtenderBindingArgs.Node: missing field",
        ),
        case(
            "bind: unknown key with '%', Node a number",
            "/bind",
            r#"{"PodName":"web-2","PodNamespace":"default","PodUID":"u","Node":7,"%d":1}"#,
            400,
            "ExtenderBindingArgs.Node: invalid type: integer `7`",
        ),
        case(
            "bind: 10,000 nested arrays as Node",
            "/bind",
            format!(
                r#"{{"PodName":"web-2","PodNamespace":"default","PodUID":"u","Node":{}}}"#,
                nested_arrays(deep, "")
            ),
            400,
            "ExtenderBindingArgs.Node: invalid type: sequence",
        ),
    ]
}

/// Sends every case and returns a line per case that was mishandled.
async fn failures_of(server: &TestServer, cases: &[Case]) -> Vec<String> {
    let mut failures = Vec::new();
    for c in cases {
        assert!((400..500).contains(&c.status), "{}: a hostile case must expect a 4xx", c.name);
        let outcome = match send(server, c.path, c.body.clone()).await {
            Ok((status, text)) => check_error_answer(c.path, status, &text, c.status, c.error_has),
            Err(e) => Err(e),
        };
        match outcome {
            Ok(error) => println!("ok   {}: {error}", c.name),
            Err(e) => {
                println!("FAIL {}: {e}", c.name);
                failures.push(format!("{} (POST {}): {e}", c.name, c.path));
            }
        }
    }
    failures
}

#[tokio::test(flavor = "multi_thread")]
async fn hostile_bodies_get_a_4xx_with_an_error_and_the_server_keeps_serving() {
    let server = TestServer::demo().await;
    let cases = hostile_cases();
    assert!(cases.len() >= 20, "only {} cases", cases.len());
    let failures = failures_of(&server, &cases).await;
    assert!(
        failures.is_empty(),
        "{} of {} hostile bodies were mishandled:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    assert_still_answers(&server).await;
    server.stop().await;
}

/// /preempt refuses what it cannot read with 4xx, its result object and an `Error`, and keeps
/// serving.
#[tokio::test(flavor = "multi_thread")]
async fn hostile_preempt_bodies_get_a_4xx_with_an_error() {
    let server = TestServer::demo().await;
    let deep = 10_000;
    let meta = |victims: &str| format!(r#"{{"Pod":{WEB2},"NodeNameToMetaVictims":{victims}}}"#);
    let cases = vec![
        case("preempt: not JSON", "/preempt", "{", 400, "ExtenderPreemptionArgs"),
        case("preempt: an array", "/preempt", "[]", 400, "ExtenderPreemptionArgs"),
        case("preempt: empty body", "/preempt", "", 400, "ExtenderPreemptionArgs"),
        case("preempt: Pod is an array", "/preempt", r#"{"Pod":[]}"#, 400, "ExtenderPreemptionArgs.Pod"),
        case("preempt: victims map is an array", "/preempt", meta("[]"), 400, "NodeNameToMetaVictims"),
        case(
            "preempt: Pods is an object",
            "/preempt",
            meta(r#"{"n":{"Pods":{}}}"#),
            400,
            "NodeNameToMetaVictims.n.Pods",
        ),
        case("preempt: UID is a number", "/preempt", meta(r#"{"n":{"Pods":[{"UID":5}]}}"#), 400, "Pods[0].UID"),
        case(
            "preempt: NumPDBViolations overflows",
            "/preempt",
            meta(r#"{"n":{"NumPDBViolations":1e99}}"#),
            400,
            "NumPDBViolations",
        ),
        case(
            "preempt: a victim pod with a bad quantity, a % doubled",
            "/preempt",
            format!(
                r#"{{"Pod":{WEB2},"NodeNameToVictims":{{"n":{{"Pods":[{{"spec":{{"containers":[{{"name":"c","resources":{{"requests":{{"cpu":"100%"}}}}}}]}}}}]}}}}}}"#
            ),
            400,
            "100%%",
        ),
        case(
            "preempt: deeply nested victims",
            "/preempt",
            meta(&nested_arrays(deep, "")),
            400,
            "NodeNameToMetaVictims",
        ),
        case(
            "preempt: deeply nested Pods",
            "/preempt",
            meta(&format!(r#"{{"n":{{"Pods":{}}}}}"#, nested_objects(deep, "1"))),
            400,
            "Pods",
        ),
    ];
    let failures = failures_of(&server, &cases).await;
    assert!(failures.is_empty(), "{} mishandled:\n{}", failures.len(), failures.join("\n"));
    assert_still_answers(&server).await;
    server.stop().await;
}

/// Garbage in parts of the pod the extender never reads (volumes, annotations, keys in another
/// case than the API's) is skipped, not built: it may be answered 200 or 400, but it must be
/// answered, however deep it nests.
#[tokio::test(flavor = "multi_thread")]
async fn garbage_in_fields_the_extender_does_not_read_still_gets_an_answer() {
    let server = TestServer::demo().await;
    let deep = 10_000;
    let pods = [
        ("volumes a number", r#"{"metadata":{"name":"v"},"spec":{"volumes":5}}"#.to_string()),
        ("10,000 nested arrays in volumes", format!(r#"{{"spec":{{"volumes":{}}}}}"#, nested_arrays(deep, ""))),
        (
            "10,000 nested objects in annotations",
            format!(r#"{{"metadata":{{"annotations":{}}}}}"#, nested_objects(deep, "1")),
        ),
        ("100,000 nested arrays in an unknown key", format!(r#"{{"x":{}}}"#, nested_arrays(100_000, "0"))),
        ("Spec in another case", r#"{"Spec":{"containers":5}}"#.to_string()),
    ];
    let mut failures = Vec::new();
    for (name, pod) in pods {
        match send(&server, "/filter", names_body(&pod).into_bytes()).await {
            Err(e) => failures.push(format!("{name}: {e}")),
            Ok((400, text)) => {
                if let Err(e) = check_error_answer("/filter", 400, &text, 400, "ExtenderArgs.Pod") {
                    failures.push(format!("{name}: {e}"));
                }
            }
            Ok((200, text)) => {
                let answer: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}: {text}"));
                if answer["Error"] != "" || !answer["NodeNames"].is_array() {
                    failures.push(format!("{name}: a 200 that is not a filter result: {text}"));
                }
            }
            Ok((status, text)) => failures.push(format!("{name}: status {status}: {text}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_still_answers(&server).await;
    server.stop().await;
}

// Shapes serde would take but Go refuses; each was once answered 200.

/// serde's derived `Deserialize` also accepts a struct as a JSON array of its fields in order. Go's
/// encoding/json refuses an array for a struct ("cannot unmarshal array into Go struct field
/// ExtenderArgs.Pod of type v1.Pod"), and so does the extender, with a 400 naming the field.
#[tokio::test(flavor = "multi_thread")]
async fn an_array_in_place_of_an_object_is_refused() {
    let server = TestServer::demo().await;
    let cases = vec![
        case("Pod an empty array", "/filter", names_body("[]"), 400, "ExtenderArgs.Pod"),
        case(
            "Pod an array of its fields",
            "/filter",
            names_body(r#"[{"name":"web-2","namespace":"default"}]"#),
            400,
            "ExtenderArgs.Pod",
        ),
        case(
            "Pod.metadata an empty array",
            "/filter",
            names_body(r#"{"metadata":[]}"#),
            400,
            "ExtenderArgs.Pod.metadata",
        ),
        case("Pod.spec an empty array", "/filter", names_body(r#"{"spec":[]}"#), 400, "ExtenderArgs.Pod.spec"),
        case(
            "a container an empty array",
            "/filter",
            names_body(r#"{"spec":{"containers":[[]]}}"#),
            400,
            "ExtenderArgs.Pod.spec.containers[0]",
        ),
        case(
            "a node an array of its fields",
            "/filter",
            nodes_body(r#"[{"name":"node-b1"}]"#),
            400,
            "ExtenderArgs.Nodes.items[0]",
        ),
    ];
    let failures = failures_of(&server, &cases).await;
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    server.stop().await;
}

/// `Nodes` must be a NodeList object. Sent as an array (the easy mistake: the nodes themselves), it
/// must not decode positionally as `[metadata, items]`, which would drop the candidates silently.
#[tokio::test(flavor = "multi_thread")]
async fn nodes_as_an_array_is_refused() {
    let server = TestServer::demo().await;
    let cases = vec![
        case("Nodes an empty array", "/filter", format!(r#"{{"Pod":{WEB2},"Nodes":[]}}"#), 400, "ExtenderArgs.Nodes"),
        case(
            "Nodes an array of one node",
            "/filter",
            format!(r#"{{"Pod":{WEB2},"Nodes":[{NODE_B1}]}}"#),
            400,
            "ExtenderArgs.Nodes",
        ),
        case(
            "Nodes an array of metadata and items",
            "/filter",
            format!(r#"{{"Pod":{WEB2},"Nodes":[{{}},[{NODE_B1}]]}}"#),
            400,
            "ExtenderArgs.Nodes",
        ),
    ];
    let failures = failures_of(&server, &cases).await;
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    server.stop().await;
}

/// `Nodes.metadata` is echoed back verbatim in the answer, so it must be an object: a number or a
/// string there would give kube-scheduler an answer it cannot decode as a ListMeta. Go refuses the
/// request ("cannot unmarshal number into Go struct field NodeList.Nodes.metadata of type
/// v1.ListMeta"); so does the extender, with a 400.
#[tokio::test(flavor = "multi_thread")]
async fn nodes_metadata_that_is_not_an_object_is_refused() {
    let server = TestServer::demo().await;
    let cases = vec![
        case(
            "Nodes.metadata a number",
            "/filter",
            format!(r#"{{"Pod":{WEB2},"Nodes":{{"metadata":5,"items":[{NODE_B1}]}}}}"#),
            400,
            "ExtenderArgs.Nodes.metadata",
        ),
        case(
            "Nodes.metadata a string",
            "/filter",
            format!(r#"{{"Pod":{WEB2},"Nodes":{{"metadata":"x","items":[{NODE_B1}]}}}}"#),
            400,
            "ExtenderArgs.Nodes.metadata",
        ),
        case(
            "Nodes.metadata an array",
            "/filter",
            format!(r#"{{"Pod":{WEB2},"Nodes":{{"metadata":[],"items":[{NODE_B1}]}}}}"#),
            400,
            "ExtenderArgs.Nodes.metadata",
        ),
    ];
    let failures = failures_of(&server, &cases).await;
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    server.stop().await;
}

/// A negative scalar request in an app container and a larger one in a one-off init container once
/// overflowed i64 while the requests were combined (a panic and a dropped connection). The API
/// server refuses negative requests; the extender answers 400 naming the field.
#[tokio::test(flavor = "multi_thread")]
async fn a_negative_request_is_refused_not_overflowed() {
    let server = TestServer::demo().await;
    let pod = r#"{"metadata":{"name":"neg","namespace":"default"},"spec":{"containers":[{"name":"c","resources":{"requests":{"example.com/foo":"-1"}}}],"initContainers":[{"name":"i","resources":{"requests":{"example.com/foo":"10E"}}}]}}"#;
    let (status, text) = send(&server, "/filter", names_body(pod).into_bytes()).await.unwrap_or_else(|e| panic!("{e}"));
    check_error_answer(
        "/filter",
        status,
        &text,
        400,
        "ExtenderArgs.Pod.spec.containers[0].resources.requests.example.com/foo: must be greater than or equal to 0",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_still_answers(&server).await;
    server.stop().await;
}

/// A percent sign in the input must come back doubled, never bare: kube-scheduler passes `Error`
/// to fmt.Errorf as the format string.
#[tokio::test(flavor = "multi_thread")]
async fn a_percent_in_the_input_comes_back_doubled_in_error() {
    let server = TestServer::demo().await;
    let body = swap(&names_body(WEB2), r#""cpu":"1""#, r#""cpu":"50%""#);
    let (status, text) = send(&server, "/filter", body.into_bytes()).await.unwrap_or_else(|e| panic!("{e}"));
    let error = check_error_answer("/filter", status, &text, 400, "invalid quantity").unwrap_or_else(|e| panic!("{e}"));
    assert!(error.contains("\"50%%\""), "the '%' is not doubled: {error:?}");
    assert!(go_format_safe(&error), "bare '%': {error:?}");
    assert_eq!(error.matches('%').count(), 2, "{error:?}");
    server.stop().await;
}

/// Exactly at the limit is served; one byte over is 413, whether declared or not.
#[tokio::test(flavor = "multi_thread")]
async fn an_oversized_body_gets_413_naming_the_limit() {
    let mut config = common::config(ClusterSource::Demo);
    config.max_body_bytes = 1024;
    let server = TestServer::start(config).await;

    // A valid request padded with whitespace to exactly the limit is served.
    let mut at_limit = names_body(WEB2);
    assert!(at_limit.len() < 1024, "the valid body is {} bytes", at_limit.len());
    at_limit.push_str(&" ".repeat(1024 - at_limit.len()));
    let (status, text) =
        send(&server, "/filter", at_limit.clone().into_bytes()).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(status, 200, "a body of exactly max_body_bytes: {text}");
    let answer: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(common::feasible(&answer), ["node-b1", "node-b3"], "{text}");

    // With Content-Length: one byte over, and far over.
    for (path, size) in [("/filter", 1025), ("/filter", 1 << 20), ("/bind", 1025), ("/preempt", 1025)] {
        let mut body = names_body(WEB2).into_bytes();
        body.resize(size, b' ');
        let (status, text) = send(&server, path, body).await.unwrap_or_else(|e| panic!("{path} {size}: {e}"));
        let error = check_error_answer(path, status, &text, 413, "over the limit of 1024 bytes")
            .unwrap_or_else(|e| panic!("{path} with Content-Length {size}: {e}"));
        assert!(error.contains(&format!("{size} bytes")), "{error:?}");
    }

    // Chunked, with no Content-Length: the limit is found while reading.
    let addr = server.base.trim_start_matches("http://").to_string();
    for path in ["/filter", "/bind"] {
        let mut request = format!(
            "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        )
        .into_bytes();
        let chunk = " ".repeat(700);
        for _ in 0..3 {
            request.extend_from_slice(format!("{:x}\r\n{chunk}\r\n", chunk.len()).as_bytes());
        }
        request.extend_from_slice(b"0\r\n\r\n");
        let (status, text) =
            raw_exchange(&addr, &request, false).await.unwrap_or_else(|e| panic!("chunked {path}: {e}"));
        let error = check_error_answer(path, status, &text, 413, "over the limit of 1024 bytes")
            .unwrap_or_else(|e| panic!("chunked {path}: {e}"));
        assert!(error.contains("more than 1024"), "{error:?}");
    }

    // A huge declared Content-Length is refused without waiting for the body.
    let request = format!(
        "POST /filter HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 1099511627776\r\nConnection: close\r\n\r\n{{}}"
    );
    let (status, text) =
        raw_exchange(&addr, request.as_bytes(), false).await.unwrap_or_else(|e| panic!("declared 1 TiB: {e}"));
    check_error_answer(
        "/filter",
        status,
        &text,
        413,
        "request body of 1099511627776 bytes is over the limit of 1024 bytes",
    )
    .unwrap_or_else(|e| panic!("declared 1 TiB: {e}"));

    // Still serving.
    let (status, text) = send(&server, "/filter", at_limit.into_bytes()).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(status, 200, "{text}");
    server.stop().await;
}

/// The 413 reaches the client even when the body arrives after the headers: the server reads and
/// discards a refused body before answering, so closing the connection does not reset it while the
/// client is still sending. A race, so it is tried many times, on new and reused connections.
#[tokio::test(flavor = "multi_thread")]
async fn a_refused_body_still_being_sent_gets_its_413_every_time() {
    let mut config = common::config(ClusterSource::Demo);
    config.max_body_bytes = 1024;
    let server = TestServer::start(config).await;
    for round in 0..200 {
        let size = if round % 2 == 0 { 1025 } else { 256 << 10 };
        let mut body = names_body(WEB2).into_bytes();
        body.resize(size, b' ');
        let path = ["/filter", "/bind", "/preempt"][round % 3];
        let (status, text) =
            send(&server, path, body).await.unwrap_or_else(|e| panic!("round {round} {path} {size}: {e}"));
        check_error_answer(path, status, &text, 413, "over the limit of 1024 bytes")
            .unwrap_or_else(|e| panic!("round {round} {path} {size}: {e}"));
    }
    server.stop().await;
}

/// Writes a request on a fresh connection (closing the write side after it when `half_close`) and
/// reads the answer to the end: the status and the body (de-chunked). An Err when the connection was
/// dropped without an answer or nothing came within `PATIENCE`.
async fn raw_exchange(addr: &str, request: &[u8], half_close: bool) -> Result<(u16, String), String> {
    // tokio's io-util is not enabled: a blocking std socket on a blocking thread does the job.
    let (addr, request) = (addr.to_string(), request.to_vec());
    let exchange = move || -> Result<Vec<u8>, String> {
        let mut stream = std::net::TcpStream::connect(&addr).map_err(|e| format!("connect: {e}"))?;
        stream.set_read_timeout(Some(PATIENCE)).map_err(|e| format!("set_read_timeout: {e}"))?;
        stream.write_all(&request).map_err(|e| format!("write: {e}"))?;
        if half_close {
            stream.shutdown(Shutdown::Write).map_err(|e| format!("shutdown: {e}"))?;
        }
        let mut answer = Vec::new();
        if let Err(e) = stream.read_to_end(&mut answer) {
            if answer.is_empty() {
                return Err(format!("read: {e}"));
            }
        }
        Ok(answer)
    };
    let answer = tokio::task::spawn_blocking(exchange).await.map_err(|e| format!("exchange task: {e}"))??;
    if answer.is_empty() {
        return Err("the connection was closed without an answer".to_string());
    }
    let text = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").ok_or_else(|| format!("no end of head: {text:?}"))?;
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse::<u16>().ok())
        .ok_or_else(|| format!("no status line: {text:?}"))?;
    let chunked = head.lines().any(|l| {
        let l = l.to_ascii_lowercase();
        l.starts_with("transfer-encoding:") && l.contains("chunked")
    });
    let body = if chunked { dechunk(body)? } else { body.to_string() };
    Ok((status, body))
}

fn dechunk(mut rest: &str) -> Result<String, String> {
    let mut out = String::new();
    loop {
        let (size, after) = rest.split_once("\r\n").ok_or_else(|| format!("bad chunk: {rest:?}"))?;
        let size = usize::from_str_radix(size.trim(), 16).map_err(|e| format!("bad chunk size {size:?}: {e}"))?;
        if size == 0 {
            return Ok(out);
        }
        let data = after.get(..size).ok_or_else(|| format!("short chunk: {after:?}"))?;
        out.push_str(data);
        rest = after[size..].strip_prefix("\r\n").ok_or_else(|| format!("no CRLF after a chunk: {after:?}"))?;
    }
}

/// Bodies that are broken at the HTTP level still get an answer, not a dropped connection: the
/// verb's error object when the handler saw the failure, at least a 4xx status line otherwise.
#[tokio::test(flavor = "multi_thread")]
async fn a_malformed_http_body_over_raw_tcp_still_gets_an_answer() {
    let server = TestServer::demo().await;
    let addr = server.base.trim_start_matches("http://").to_string();
    let head = |path: &str, extra: &str| {
        format!("POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nConnection: close\r\n{extra}\r\n")
    };
    let valid = names_body(WEB2);

    // (name, request, close the write side after it, the verb's error object expected)
    let cases: Vec<(&str, String, bool, bool)> = vec![
        (
            "body shorter than Content-Length",
            format!("{}{}", head("/filter", "Content-Length: 5000\r\n"), &valid[..100]),
            true,
            true,
        ),
        (
            "bind body shorter than Content-Length",
            format!("{}{{\"PodName\"", head("/bind", "Content-Length: 300\r\n")),
            true,
            true,
        ),
        (
            "invalid chunk size",
            format!("{}zz\r\n{{}}\r\n0\r\n\r\n", head("/filter", "Transfer-Encoding: chunked\r\n")),
            false,
            true,
        ),
        (
            "chunk longer than declared",
            format!("{}2\r\n{valid}\r\n0\r\n\r\n", head("/filter", "Transfer-Encoding: chunked\r\n")),
            false,
            true,
        ),
        (
            "chunked body cut off",
            format!("{}400\r\n{}", head("/filter", "Transfer-Encoding: chunked\r\n"), &valid[..50]),
            true,
            true,
        ),
        (
            "chunked body without the last chunk",
            format!("{}{:x}\r\n{valid}\r\n", head("/filter", "Transfer-Encoding: chunked\r\n"), valid.len()),
            true,
            true,
        ),
        ("non-numeric Content-Length", format!("{}{{}}", head("/filter", "Content-Length: lots\r\n")), false, false),
        ("negative Content-Length", format!("{}{{}}", head("/filter", "Content-Length: -2\r\n")), false, false),
        (
            "two different Content-Lengths",
            format!("{}{{}}", head("/filter", "Content-Length: 2\r\nContent-Length: 3\r\n")),
            false,
            false,
        ),
        ("unknown Transfer-Encoding", format!("{}{{}}", head("/filter", "Transfer-Encoding: gzip\r\n")), false, false),
    ];
    let mut failures = Vec::new();
    for (name, request, half_close, verb_answer) in &cases {
        let path = if request.starts_with("POST /bind") { "/bind" } else { "/filter" };
        let outcome = match raw_exchange(&addr, request.as_bytes(), *half_close).await {
            Err(e) => Err(e),
            Ok((status, text)) if *verb_answer => check_error_answer(
                path,
                status,
                &text,
                400,
                if path == "/bind" { "ExtenderBindingArgs" } else { "ExtenderArgs" },
            ),
            Ok((status, text)) if (400..500).contains(&status) => Ok(format!("{status} {text}")),
            Ok((status, text)) => Err(format!("status {status}, want a 4xx: {text}")),
        };
        match outcome {
            Ok(answer) => println!("ok   {name}: {answer}"),
            Err(e) => {
                println!("FAIL {name}: {e}");
                failures.push(format!("{name}: {e}"));
            }
        }
    }
    assert!(failures.is_empty(), "malformed HTTP bodies mishandled:\n{}", failures.join("\n"));
    assert_still_answers(&server).await;
    server.stop().await;
}
