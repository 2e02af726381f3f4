//! Starts the real server on 127.0.0.1 with ephemeral ports and talks HTTP to it.
#![allow(dead_code)] // each test binary uses a different part of this

use std::io::Read;
use std::net::SocketAddr;
pub mod model_diff;

use std::path::{Path, PathBuf};

use predicate_engine::cluster::source::parse_objects;
use predicate_engine::policy::{parse, Overrides};
use predicate_extender::server::{start, ClusterSource, PolicySource, RunningServer, ServeConfig};
use serde_json::Value;

pub struct TestServer {
    pub base: String,
    pub admin: String,
    pub client: reqwest::Client,
    server: Option<RunningServer>,
}

/// A config on ephemeral loopback ports.
pub fn config(cluster: ClusterSource) -> ServeConfig {
    let mut c = ServeConfig::new(cluster);
    c.listen = SocketAddr::from(([127, 0, 0, 1], 0));
    c.admin_listen = SocketAddr::from(([127, 0, 0, 1], 0));
    c
}

/// A cluster from Kubernetes objects as text (JSON List or YAML).
pub fn cluster(text: &str) -> ClusterSource {
    match parse_objects("test cluster", text) {
        Ok(objects) => ClusterSource::Snapshot(Box::new(objects.into_snapshot())),
        Err(e) => panic!("test cluster: {e}"),
    }
}

/// A plan from Policy text.
pub fn policy(text: &str) -> PolicySource {
    match parse("test policy", text.as_bytes(), Overrides::default()) {
        Ok(plan) => PolicySource::Plan(plan),
        Err(e) => panic!("test policy: {e}"),
    }
}

pub fn fixture_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// A fixture's bytes, gunzipped when its name ends in .gz.
pub fn fixture(name: &str) -> Vec<u8> {
    let path = fixture_path(name);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if name.ends_with(".gz") {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&bytes[..]).read_to_end(&mut out).unwrap_or_else(|e| panic!("{name}: {e}"));
        out
    } else {
        bytes
    }
}

impl TestServer {
    pub async fn start(config: ServeConfig) -> TestServer {
        let server = start(config).await.unwrap_or_else(|e| panic!("server did not start: {e}"));
        TestServer {
            base: format!("http://{}", server.verbs_addr),
            admin: format!("http://{}", server.admin_addr),
            client: reqwest::Client::new(),
            server: Some(server),
        }
    }

    pub async fn demo() -> TestServer {
        TestServer::start(config(ClusterSource::Demo)).await
    }

    pub fn store(&self) -> &predicate_engine::cluster::ClusterStore {
        &self.server.as_ref().expect("running").store
    }

    /// POSTs a body and returns the status and the body text.
    pub async fn post_text(&self, path: &str, body: impl Into<reqwest::Body>) -> (u16, String) {
        let resp = self
            .client
            .post(format!("{}{path}", self.base))
            .header("Content-Type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap_or_else(|e| panic!("POST {path}: {e}"));
        let status = resp.status().as_u16();
        (status, resp.text().await.unwrap_or_else(|e| panic!("POST {path}: reading the answer: {e}")))
    }

    /// POSTs a body and parses the JSON answer.
    pub async fn post(&self, path: &str, body: impl Into<reqwest::Body>) -> (u16, Value) {
        let (status, text) = self.post_text(path, body).await;
        let value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("POST {path}: answer is not JSON ({e}): {text}"));
        (status, value)
    }

    pub async fn get(&self, url: &str) -> (u16, String) {
        let resp = self.client.get(url).send().await.unwrap_or_else(|e| panic!("GET {url}: {e}"));
        let status = resp.status().as_u16();
        (status, resp.text().await.unwrap_or_default())
    }

    pub async fn stop(mut self) {
        if let Some(s) = self.server.take() {
            s.shutdown().await.unwrap_or_else(|e| panic!("shutdown: {e}"));
        }
    }
}

/// The feasible node names of a filter answer (from NodeNames or Nodes).
pub fn feasible(answer: &Value) -> Vec<String> {
    if let Some(names) = answer["NodeNames"].as_array() {
        return names.iter().map(|n| n.as_str().unwrap_or_default().to_string()).collect();
    }
    answer["Nodes"]["items"]
        .as_array()
        .map(|items| items.iter().map(|n| n["metadata"]["name"].as_str().unwrap_or_default().to_string()).collect())
        .unwrap_or_default()
}

/// web-2, the pending pod of the README's examples, as kube-scheduler sends it
/// (`examples/demo/filter-web-2.json`).
pub fn web_2() -> Value {
    let path = fixture_path("../../examples/demo/filter-web-2.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let args: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    args["Pod"].clone()
}

/// The demo cluster's nodes, in its order.
pub const DEMO_NODES: [&str; 6] = ["node-a1", "node-a2", "node-a3", "node-b1", "node-b2", "node-b3"];

/// The demo's node objects, as a `NodeList` value.
pub fn demo_node_list() -> Value {
    let yaml: Value = serde_saphyr::from_str(predicate_engine::cluster::source::demo::DEMO_YAML)
        .unwrap_or_else(|e| panic!("demo yaml: {e}"));
    let items: Vec<Value> = yaml["items"]
        .as_array()
        .unwrap_or_else(|| panic!("demo yaml has no items"))
        .iter()
        .filter(|v| v["kind"] == "Node")
        .cloned()
        .collect();
    serde_json::json!({"metadata": {"resourceVersion": "42"}, "items": items})
}

/// A pod in namespace shop with these labels and these extra spec fields (one container added).
pub fn shop_pod(name: &str, labels: Value, spec: Value) -> Value {
    let mut spec = spec;
    spec["containers"] = serde_json::json!([{"name": "c", "image": "busybox:1.36"}]);
    serde_json::json!({
        "metadata": {"name": name, "namespace": "shop", "uid": format!("uid-{name}"), "labels": labels},
        "spec": spec
    })
}
