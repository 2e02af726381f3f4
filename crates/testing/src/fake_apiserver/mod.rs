//! An in-process fake Kubernetes API server for integration tests.
//!
//! It speaks the parts of the real API that a list/watch client and a scheduler extender's binder use, in
//! the real wire format: typed lists with `limit`/`continue` paging from a consistent snapshot, chunked
//! watch streams of one JSON event per line (`ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK`, `ERROR`), the
//! `pods/binding` subresource with upstream's checks and messages, and `metav1.Status` error bodies.
//! Faults are switched on from the test: dropped watch connections (between lines or in the middle of
//! one), silent watches, compacted history, replayed and duplicated events, failing and hanging lists,
//! failing watches, failing and hanging bindings, delays, withheld events, RBAC denials.
//!
//! Upstream behaviour this follows (kubernetes/kubernetes):
//! - `staging/src/k8s.io/apiserver/pkg/endpoints/handlers/watch.go`: a JSON watch answers HTTP 200 with
//!   `Content-Type: application/json` (no `;stream=watch` for JSON), chunked, one event per line; the
//!   stream ends cleanly when `timeoutSeconds` elapses.
//! - The watch cache (`staging/src/k8s.io/apiserver/pkg/storage/cacher`): a watch from a resourceVersion
//!   older than the retained history is accepted (HTTP 200) and immediately gets one `ERROR` event carrying
//!   `NewResourceExpired("too old resource version: %d (%d)")` (code 410, reason `Expired`). A watch with
//!   resourceVersion unset or `"0"` first gets the current state as synthetic `ADDED` events. Bookmarks
//!   are objects of the watched kind carrying only `metadata.resourceVersion`; with `sendInitialEvents`
//!   the end of the initial state is a bookmark annotated `k8s.io/initial-events-end: "true"`. The
//!   history is bounded ([`FakeApiServer::set_history_limit`]), as the watch cache's ring is.
//! - `pkg/registry/core/pod/storage/storage.go` (`BindingREST.Create`, `setPodNodeAndMetadata`,
//!   `assignPod`): name mismatch is 400; `ValidatePodBinding` errors are returned as a plain aggregate,
//!   which the handler turns into HTTP 500 with no reason (see `responsewriters/status.go`
//!   `ErrorToAPIStatus`), not 422; UID/resourceVersion preconditions failing in storage become
//!   `Conflict` on `pods`; a pod being deleted, already having any `spec.nodeName` (even the same node),
//!   or having scheduling gates is `Conflict` on `pods/binding`; success sets `spec.nodeName`, merges the
//!   binding's annotations, sets the `PodScheduled=True` condition and answers 201 with a Success Status.
//! - `staging/src/k8s.io/apimachinery/pkg/api/errors/errors.go` (`NewNotFound`, `NewConflict`,
//!   `NewForbidden`, `NewResourceExpired`, `NewInternalError`, `NewTimeoutError`) and
//!   `endpoints/handlers/responsewriters/errors.go` (`forbiddenMessage`) for Status messages and details.
//! - Items of a typed list carry no `kind`/`apiVersion`; objects inside watch events and single GETs do.
//!
//! Objects are kept as their JSON text (a realistic pod is 6 KB of text and ten times that as a
//! `serde_json::Value`), so a test can hold a 5,000-node cluster.
//!
//! Usage:
//!
//! ```ignore
//! mod fake_apiserver;
//! let server = fake_apiserver::FakeApiServer::start().await;
//! server.apply(fake_apiserver::node_json("n1", "4", "8Gi", "110"));
//! let kubeconfig = kube::config::Kubeconfig::read_from(server.kubeconfig_path())?;
//! let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await?;
//! let client = kube::Client::try_from(config)?;
//! ```
//!
//! Not modelled: creating/updating objects over HTTP (only `pods/binding` is writable; tests change state
//! with `apply`/`delete`), set-based label selectors (refused with 400), protobuf/CBOR, authentication
//! (the kubeconfig's token is not checked), `resourceVersionMatch=Exact` and lists at an old
//! resourceVersion (every list answers the current state).

#![allow(dead_code)]

mod binding;
mod list;
mod selectors;
mod status;
mod store;
mod watch;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::Method;
use axum::response::Response;
use axum::Router;
use serde_json::{json, Value};
use tokio::sync::watch as notify;

use status::{method_not_allowed, path_not_found, status_response};
use store::{parse, Key, Store};

/// The user every request is treated as (what RBAC denials name).
pub const USER: &str = "system:serviceaccount:kube-system:predicate-extender";

/// How often an open watch that allows bookmarks gets one.
pub const BOOKMARK_INTERVAL: Duration = Duration::from_millis(200);

#[derive(Debug)]
struct KindInfo {
    kind: &'static str,
    plural: &'static str,
    group: &'static str,
    namespaced: bool,
}

const KINDS: &[KindInfo] = &[
    KindInfo { kind: "Node", plural: "nodes", group: "", namespaced: false },
    KindInfo { kind: "Pod", plural: "pods", group: "", namespaced: true },
    KindInfo { kind: "Namespace", plural: "namespaces", group: "", namespaced: false },
    KindInfo { kind: "Service", plural: "services", group: "", namespaced: true },
    KindInfo { kind: "PersistentVolume", plural: "persistentvolumes", group: "", namespaced: false },
    KindInfo { kind: "PersistentVolumeClaim", plural: "persistentvolumeclaims", group: "", namespaced: true },
    KindInfo { kind: "ReplicationController", plural: "replicationcontrollers", group: "", namespaced: true },
    KindInfo { kind: "StorageClass", plural: "storageclasses", group: "storage.k8s.io", namespaced: false },
    KindInfo { kind: "CSINode", plural: "csinodes", group: "storage.k8s.io", namespaced: false },
    KindInfo { kind: "ReplicaSet", plural: "replicasets", group: "apps", namespaced: true },
    KindInfo { kind: "StatefulSet", plural: "statefulsets", group: "apps", namespaced: true },
];

impl KindInfo {
    fn by_kind(kind: &str) -> Option<&'static KindInfo> {
        KINDS.iter().find(|k| k.kind == kind)
    }

    fn by_path(group: &str, plural: &str) -> Option<&'static KindInfo> {
        KINDS.iter().find(|k| k.group == group && k.plural == plural)
    }

    fn api_version(&self) -> String {
        if self.group.is_empty() {
            "v1".to_string()
        } else {
            format!("{}/v1", self.group)
        }
    }

    /// `schema.GroupResource.String()`: `pods`, `replicasets.apps`.
    fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.plural.to_string()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }
}

/// One request as the server received it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    pub query: String,
    /// The body; a protobuf Binding as the JSON it stands for.
    pub body: String,
    /// The `Content-Type` header, as sent.
    pub content_type: String,
    /// When it arrived.
    pub at: Instant,
}

/// Fault: what one list request of a kind gets instead of (or before) its answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListFault {
    /// HTTP 500, reason `InternalError` (etcd unavailable, say).
    InternalError,
    /// The answer is held back this long, then given (to a client that should have given up by then).
    Hang(Duration),
    /// 410 Expired on a `continue` page, as when the first page's snapshot was compacted. Waits for
    /// the next request that carries a continue token.
    ExpiredContinue,
}

/// Fault: what one watch request of a kind gets instead of a stream of events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchFault {
    /// HTTP 200 and at once an `ERROR` event with a 410 Expired Status, though the history was not
    /// compacted (an API server whose watch cache lags behind the list it served).
    Gone,
    /// HTTP 500, reason `InternalError`.
    InternalError,
}

/// Fault: what one binding request gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindFault {
    /// 409 Conflict (an optimistic-lock conflict); the pod is not bound.
    Conflict,
    /// 500 InternalError; the pod is not bound.
    InternalError,
    /// No answer for this long, then 504 Timeout; the pod is not bound.
    HangThenFail(Duration),
    /// The pod is bound at once, but the answer (201) is held back this long.
    BindThenHang(Duration),
}

/// One binding request and what the server did with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BindingRecord {
    /// `namespace/name` of the pod, from the URL.
    pub pod: String,
    /// `target.name` of the Binding.
    pub node: String,
    /// The HTTP status of the answer.
    pub status: u16,
    /// The injected fault, if any.
    pub fault: Option<BindFault>,
    /// Whether this request bound the pod.
    pub bound: bool,
    /// When the server decided (bound the pod, or chose the fault).
    pub at: Instant,
}

/// Chooses a fault (or none) for the `attempt`th binding request (from 0), of pod `namespace/name`.
pub type BindFaults = Box<dyn FnMut(&str, u64) -> Option<BindFault> + Send>;

struct Shared {
    store: Mutex<Store>,
    changed: notify::Sender<u64>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Store> {
        self.store.lock()
    }

    fn notify(&self) {
        self.changed.send_modify(|generation| *generation = generation.wrapping_add(1));
    }

    /// Changes the store and wakes the watches.
    fn change<T>(&self, f: impl FnOnce(&mut Store) -> T) -> T {
        let out = f(&mut self.lock());
        self.notify();
        out
    }
}

/// The fake API server. Dropping it stops the server and ends open watches.
pub struct FakeApiServer {
    shared: Arc<Shared>,
    url: String,
    kubeconfig_path: PathBuf,
    _dir: tempfile::TempDir,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for FakeApiServer {
    fn drop(&mut self) {
        self.shared.change(|st| st.shutdown = true);
        self.server.abort();
    }
}

impl FakeApiServer {
    /// Binds 127.0.0.1:0, serves in a tokio task, writes a kubeconfig file (cluster server
    /// http://127.0.0.1:PORT, a context and a user with a dummy token) into a fresh temp dir.
    pub async fn start() -> FakeApiServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("fake apiserver: bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("fake apiserver: local address");
        let url = format!("http://{addr}");
        let (changed, _) = notify::channel(0u64);
        let shared = Arc::new(Shared { store: Mutex::new(Store::new()), changed });
        let app = Router::new().fallback(handle).with_state(shared.clone());
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        let dir = tempfile::tempdir().expect("fake apiserver: temp dir");
        let kubeconfig_path = dir.path().join("kubeconfig");
        let kubeconfig = format!(
            "apiVersion: v1\n\
             kind: Config\n\
             clusters:\n\
             - name: fake\n  cluster:\n    server: {url}\n\
             contexts:\n\
             - name: fake\n  context:\n    cluster: fake\n    user: fake\n    namespace: default\n\
             current-context: fake\n\
             users:\n\
             - name: fake\n  user:\n    token: fake-token-not-checked\n"
        );
        std::fs::write(&kubeconfig_path, kubeconfig).expect("fake apiserver: write kubeconfig");
        FakeApiServer { shared, url, kubeconfig_path, _dir: dir, server }
    }

    pub fn url(&self) -> String {
        self.url.clone()
    }

    pub fn kubeconfig_path(&self) -> PathBuf {
        self.kubeconfig_path.clone()
    }

    /// Creates or replaces an object (kind from its "kind" field). Sets `apiVersion`, `metadata.namespace`
    /// (`default` when a namespaced object has none), `metadata.resourceVersion` (global counter),
    /// `metadata.uid` and `metadata.creationTimestamp` if missing (a replace keeps the old ones), records
    /// ADDED or MODIFIED and notifies watchers. Returns the new resourceVersion. Panics on an object it
    /// cannot store (unknown kind, no name): that is the test's own setup.
    pub fn apply(&self, object: Value) -> String {
        let kind = object["kind"].as_str().unwrap_or_default().to_string();
        let info =
            KindInfo::by_kind(&kind).unwrap_or_else(|| panic!("FakeApiServer::apply: unsupported kind {kind:?}"));
        self.shared.change(|st| st.apply(info, object)).to_string()
    }

    /// Deletes; records DELETED (the last state with a new resourceVersion, as the real server does).
    /// Returns whether it existed. `namespace` is ignored for cluster-scoped kinds.
    pub fn delete(&self, kind: &str, namespace: &str, name: &str) -> bool {
        let Some(info) = KindInfo::by_kind(kind) else { return false };
        self.shared.change(|st| st.delete(info, namespace, name))
    }

    /// One object as stored (with kind and apiVersion), if it exists.
    pub fn get(&self, kind: &str, namespace: &str, name: &str) -> Option<Value> {
        let info = KindInfo::by_kind(kind)?;
        let text = self.shared.lock().object(info, namespace, name)?;
        Some(parse(info, &text))
    }

    /// The server's truth: every object of a kind (with kind and apiVersion), sorted by namespace/name.
    pub fn list(&self, kind: &str) -> Vec<Value> {
        let Some(info) = KindInfo::by_kind(kind) else { return Vec::new() };
        let texts = self.shared.lock().texts(info);
        texts.iter().map(|text| parse(info, text)).collect()
    }

    /// `(namespace, name)` of every object of a kind, sorted.
    pub fn keys(&self, kind: &str) -> Vec<(String, String)> {
        let Some(info) = KindInfo::by_kind(kind) else { return Vec::new() };
        self.shared.lock().keys(info)
    }

    /// How many objects of a kind there are.
    pub fn count(&self, kind: &str) -> usize {
        KindInfo::by_kind(kind).map_or(0, |info| self.shared.lock().keys(info).len())
    }

    /// The current resourceVersion (of the last change).
    pub fn resource_version(&self) -> String {
        self.shared.lock().rv.to_string()
    }

    /// Keeps at most this many events of history (the watch cache's capacity): watches from a
    /// resourceVersion older than the oldest one kept get 410 Expired, and so does an open watch that
    /// falls that far behind.
    pub fn set_history_limit(&self, events: usize) {
        self.shared.change(|st| {
            st.history_limit = Some(events.max(1));
            st.trim_history();
        });
    }

    /// Whether requests are recorded for [`FakeApiServer::requests`] (on by default; a long run turns
    /// it off).
    pub fn record_requests(&self, on: bool) {
        let mut st = self.shared.lock();
        st.record_requests = on;
        if !on {
            st.requests = Vec::new();
        }
    }

    /// Fault: abort every open watch connection mid-stream (the TCP stream ends without the final chunk,
    /// as a dropped connection does). Watches started afterwards are not affected.
    pub fn drop_watches(&self) {
        self.shared.change(|st| st.drop_gen += 1);
    }

    /// Fault: every open watch sends the first half of its next event line, then its connection is
    /// aborted. Watches started afterwards are not affected.
    pub fn cut_watches_mid_line(&self) {
        self.shared.change(|st| st.cut_gen += 1);
    }

    /// Fault: every open watch goes silent, as over a connection that died without a FIN: no more
    /// events, no bookmarks, and no end at `timeoutSeconds`. Watches started afterwards are not affected.
    pub fn stall_watches(&self) {
        self.shared.change(|st| st.stall_gen += 1);
    }

    /// Fault: compact history. Every open watch gets an ERROR event with a 410 Gone Status and ends; any
    /// later watch from a resourceVersion older than the current one gets the same (HTTP 200 and an
    /// in-stream ERROR event, reason "Expired", message "too old resource version: 5 (12)"). Outstanding
    /// continue tokens expire too (410). Events still held by `hold_events` go with the history: only a
    /// relist shows them.
    pub fn expire_history(&self) {
        self.shared.change(|st| {
            st.compacted_rv = st.rv;
            st.delivered_rv = st.delivered_rv.max(st.rv);
            st.history.clear();
            st.continues.clear();
            st.expire_gen += 1;
        });
    }

    /// Fault: while on, every event line is sent twice.
    pub fn duplicate_events(&self, on: bool) {
        self.shared.change(|st| st.duplicate = on);
    }

    /// Fault: watches started from a resourceVersion first get again the last `events` events at or
    /// before it (those still in the history), as a watch resumed from a stale position would.
    pub fn replay_events(&self, events: usize) {
        self.shared.lock().replay = events;
    }

    /// Fault: the next list requests of `kind` get these, one each, in order.
    pub fn fail_lists(&self, kind: &str, faults: impl IntoIterator<Item = ListFault>) {
        let info = KindInfo::by_kind(kind).unwrap_or_else(|| panic!("fail_lists: unsupported kind {kind:?}"));
        self.shared.lock().list_faults.entry(info.kind).or_default().extend(faults);
    }

    /// Fault: the next watch requests of `kind` get these, one each, in order.
    pub fn fail_watches(&self, kind: &str, faults: impl IntoIterator<Item = WatchFault>) {
        let info = KindInfo::by_kind(kind).unwrap_or_else(|| panic!("fail_watches: unsupported kind {kind:?}"));
        self.shared.lock().watch_faults.entry(info.kind).or_default().extend(faults);
    }

    /// Fault: every binding request from now on asks `faults` for one (`None` turns it off).
    pub fn bind_faults(&self, faults: Option<BindFaults>) {
        self.shared.lock().bind_faults = faults;
    }

    /// Every binding request received so far and what came of it, in order of arrival.
    pub fn bindings(&self) -> Vec<BindingRecord> {
        self.shared.lock().bindings.clone()
    }

    /// Fault: delay every response (list, watch start, binding, get) by this much. Zero turns it off.
    pub fn set_delay(&self, delay: Duration) {
        self.shared.lock().delay = delay;
    }

    /// Fault: while true, events are recorded but not delivered to open watches (nor replayed to new
    /// ones, nor covered by bookmarks), so a watch never confirms a change; lists still show the truth.
    /// Set back to false to deliver what was held, in order.
    pub fn hold_events(&self, hold: bool) {
        self.shared.change(|st| {
            st.hold = hold;
            if !hold {
                st.delivered_rv = st.rv;
            }
        });
    }

    /// Fault: answer 403 Forbidden to `verb` ("list", "watch", "get", "create") on `resource` ("pods",
    /// "pods/binding", "nodes", ...), with the real message form.
    pub fn forbid(&self, verb: &str, resource: &str) {
        self.shared.lock().forbidden.insert((verb.to_string(), resource.to_string()));
    }

    /// Undoes `forbid`.
    pub fn allow(&self, verb: &str, resource: &str) {
        self.shared.lock().forbidden.remove(&(verb.to_string(), resource.to_string()));
    }

    /// Every request received (while recording): method, path, query string, body, arrival time.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// How many watch requests were received per kind (whatever their answer).
    pub fn watch_count(&self, kind: &str) -> usize {
        self.shared.lock().watch_counts.get(kind).copied().unwrap_or(0)
    }

    /// How many list requests were received per kind (every page counts; whatever their answer).
    pub fn list_count(&self, kind: &str) -> usize {
        self.shared.lock().list_counts.get(kind).copied().unwrap_or(0)
    }

    /// How many watch streams of a kind are open right now.
    pub fn open_watches(&self, kind: &str) -> usize {
        self.shared.lock().open_watches.get(kind).copied().unwrap_or(0)
    }
}

/// A Ready node with `cpu`, `memory` and `pods` as both capacity and allocatable.
pub fn node_json(name: &str, cpu: &str, memory: &str, pods: &str) -> Value {
    let resources = json!({"cpu": cpu, "memory": memory, "pods": pods});
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}},
        "spec": {},
        "status": {
            "capacity": resources,
            "allocatable": resources,
            "conditions": [{
                "type": "Ready",
                "status": "True",
                "reason": "KubeletReady",
                "message": "kubelet is posting ready status",
                "lastHeartbeatTime": "2024-01-01T00:00:00Z",
                "lastTransitionTime": "2024-01-01T00:00:00Z"
            }]
        }
    })
}

/// A pod with one container requesting `cpu`; `node` "" means pending (phase Pending), else bound and Running.
pub fn pod_json(namespace: &str, name: &str, node: &str, cpu: &str) -> Value {
    let mut pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"namespace": namespace, "name": name, "labels": {"app": name}},
        "spec": {
            "schedulerName": "default-scheduler",
            "containers": [{
                "name": "main",
                "image": "registry.k8s.io/pause:3.9",
                "resources": {"requests": {"cpu": cpu}}
            }]
        },
        "status": {"phase": if node.is_empty() { "Pending" } else { "Running" }}
    });
    if !node.is_empty() {
        pod["spec"]["nodeName"] = node.into();
        pod["status"]["conditions"] = json!([{"type": "PodScheduled", "status": "True"}]);
    }
    pod
}

// ---------------------------------------------------------------------------------------------------------
// HTTP

/// What a request asks for.
enum Route<'a> {
    List { info: &'static KindInfo, ns: Option<&'a str> },
    Watch { info: &'static KindInfo, ns: Option<&'a str> },
    Get { info: &'static KindInfo, ns: Option<&'a str>, name: &'a str },
    Bind { ns: &'a str, name: &'a str },
}

fn route<'a>(method: &Method, path: &'a str, params: &HashMap<String, String>) -> Result<Route<'a>, fn() -> Response> {
    let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    if segs.iter().any(|s| s.is_empty()) {
        return Err(path_not_found);
    }
    let (group, rest) = match segs.as_slice() {
        ["api", "v1", rest @ ..] => ("", rest),
        ["apis", group, "v1", rest @ ..] => (*group, rest),
        _ => return Err(path_not_found),
    };
    let (plural, ns, name, sub) = match rest {
        [plural] => (*plural, None, None, None),
        [plural, name] => (*plural, None, Some(*name), None),
        ["namespaces", ns, plural] => (*plural, Some(*ns), None, None),
        ["namespaces", ns, plural, name] => (*plural, Some(*ns), Some(*name), None),
        ["namespaces", ns, plural, name, sub] => (*plural, Some(*ns), Some(*name), Some(*sub)),
        _ => return Err(path_not_found),
    };
    let Some(info) = KindInfo::by_path(group, plural) else { return Err(path_not_found) };
    if (ns.is_some() && !info.namespaced) || (ns.is_none() && name.is_some() && info.namespaced) {
        return Err(path_not_found);
    }
    match (name, sub) {
        (Some(name), Some(sub)) => match (method, info.kind, sub, ns) {
            (&Method::POST, "Pod", "binding", Some(ns)) => Ok(Route::Bind { ns, name }),
            (_, "Pod", "binding", _) => Err(method_not_allowed),
            _ => Err(path_not_found),
        },
        (Some(name), None) => match *method {
            Method::GET => Ok(Route::Get { info, ns, name }),
            _ => Err(method_not_allowed),
        },
        (None, _) => match *method {
            Method::GET if matches!(params.get("watch").map(String::as_str), Some("true" | "1")) => {
                Ok(Route::Watch { info, ns })
            }
            Method::GET => Ok(Route::List { info, ns }),
            _ => Err(method_not_allowed),
        },
    }
}

async fn handle(State(shared): State<Arc<Shared>>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let body = match axum::body::to_bytes(body, 16 << 20).await {
        Ok(b) => b,
        Err(_) => return status_response(413, "RequestEntityTooLarge", "request body too large", None),
    };
    let content_type =
        parts.headers.get(axum::http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    // The only protobuf this server reads is a Binding; kube-apiserver answers an undecodable
    // body with 400.
    let body = if content_type == predicate_extender::bind::protobuf::CONTENT_TYPE {
        match binding::protobuf_as_json(&body) {
            Ok(json) => json,
            Err(message) => return status_response(400, "BadRequest", &message, None),
        }
    } else {
        body
    };
    let method = parts.method;
    let path = parts.uri.path().to_string();
    let query = parts.uri.query().unwrap_or("").to_string();
    let delay = {
        let mut st = shared.lock();
        if st.record_requests {
            st.requests.push(RecordedRequest {
                method: method.to_string(),
                path: path.clone(),
                query: query.clone(),
                body: String::from_utf8_lossy(&body).into_owned(),
                content_type,
                at: Instant::now(),
            });
        }
        st.delay
    };
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let params = parse_query(&query);
    match route(&method, &path, &params) {
        Err(refuse) => refuse(),
        Ok(Route::List { info, ns }) => list::list(&shared, info, ns, &params).await,
        Ok(Route::Watch { info, ns }) => watch::start_watch(&shared, info, ns, &params),
        Ok(Route::Get { info, ns, name }) => get_object(&shared, info, ns, name),
        Ok(Route::Bind { ns, name }) => binding::bind(&shared, ns, name, &body).await,
    }
}

fn get_object(shared: &Arc<Shared>, info: &'static KindInfo, ns: Option<&str>, name: &str) -> Response {
    let st = shared.lock();
    if st.is_forbidden("get", info.plural) {
        return status::forbidden_response("get", info, ns, Some(name), None);
    }
    let key: Key = (info.kind, ns.unwrap_or("").to_string(), name.to_string());
    match st.objects.get(&key) {
        Some(text) => status::text_response(axum::http::StatusCode::OK, store::with_kind(info, text)),
        None => status::not_found(info, name),
    }
}

// ---------------------------------------------------------------------------------------------------------
// Small helpers

fn parse_query(query: &str) -> HashMap<String, String> {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect()
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                match std::str::from_utf8(&bytes[i + 1..i + 3]).ok().and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(b) => {
                        out.push(b);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Now as RFC 3339 UTC with second precision (`metav1.Time`'s JSON form).
fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil-from-days (Howard Hinnant), for days since 1970-01-01.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}
