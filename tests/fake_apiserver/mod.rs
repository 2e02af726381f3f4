//! An in-process fake Kubernetes API server for integration tests.
//!
//! It speaks the parts of the real API that a list/watch client and a scheduler extender's binder use, in
//! the real wire format: typed lists with `limit`/`continue` paging from a consistent snapshot, chunked
//! watch streams of one JSON event per line (`ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK`, `ERROR`), the
//! `pods/binding` subresource with upstream's checks and messages, and `metav1.Status` error bodies.
//! Faults (dropped watch connections, compacted history, delays, withheld events, RBAC denials) are
//! switched on from the test.
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
//!   the end of the initial state is a bookmark annotated `k8s.io/initial-events-end: "true"`.
//! - `pkg/registry/core/pod/storage/storage.go` (`BindingREST.Create`, `setPodNodeAndMetadata`,
//!   `assignPod`): name mismatch is 400; `ValidatePodBinding` errors are returned as a plain aggregate,
//!   which the handler turns into HTTP 500 with no reason (see `responsewriters/status.go`
//!   `ErrorToAPIStatus`), not 422; UID/resourceVersion preconditions failing in storage become
//!   `Conflict` on `pods`; a pod being deleted, already having any `spec.nodeName` (even the same node),
//!   or having scheduling gates is `Conflict` on `pods/binding`; success sets `spec.nodeName`, merges the
//!   binding's annotations, sets the `PodScheduled=True` condition and answers 201 with a Success Status.
//! - `staging/src/k8s.io/apimachinery/pkg/api/errors/errors.go` (`NewNotFound`, `NewConflict`,
//!   `NewForbidden`, `NewResourceExpired`) and `endpoints/handlers/responsewriters/errors.go`
//!   (`forbiddenMessage`) for Status messages and details.
//! - Items of a typed list carry no `kind`/`apiVersion`; objects inside watch events and single GETs do.
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

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::Response;
use axum::Router;
use serde_json::{json, Map, Value};
use tokio::sync::{mpsc, watch};

/// The user every request is treated as (what RBAC denials name).
pub const USER: &str = "system:serviceaccount:kube-system:predicate-extender";

/// How often an open watch that allows bookmarks gets one.
pub const BOOKMARK_INTERVAL: Duration = Duration::from_millis(200);

/// The watch length when the client sends no `timeoutSeconds` (the real server picks 30 to 60 minutes).
const DEFAULT_WATCH_TIMEOUT: Duration = Duration::from_secs(1800);

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
    pub body: String,
}

/// One entry of the change history (what watches replay).
struct Event {
    rv: u64,
    kind: &'static str,
    typ: &'static str,
    /// The object as the event carries it (for DELETED: the last state, with the deletion's resourceVersion).
    object: Value,
    /// The state before the change (None for ADDED).
    old: Option<Value>,
}

/// The rest of a paged list, kept under its continue token.
struct Snapshot {
    kind: &'static str,
    namespace: Option<String>,
    rv: u64,
    remaining: Vec<Value>,
}

type Key = (&'static str, String, String);

#[derive(Default)]
struct Store {
    rv: u64,
    next_uid: u64,
    objects: BTreeMap<Key, Value>,
    history: Vec<Event>,
    /// Watches from a resourceVersion below this get 410 Expired.
    compacted_rv: u64,
    /// Events up to here may be sent to watches; above it they are held.
    delivered_rv: u64,
    hold: bool,
    delay: Duration,
    forbidden: HashSet<(String, String)>,
    requests: Vec<RecordedRequest>,
    watch_counts: HashMap<&'static str, usize>,
    list_counts: HashMap<&'static str, usize>,
    open_watches: HashMap<&'static str, usize>,
    continues: HashMap<String, Snapshot>,
    next_continue: u64,
    drop_gen: u64,
    expire_gen: u64,
    shutdown: bool,
}

impl Store {
    fn record(&mut self, kind: &'static str, typ: &'static str, object: Value, old: Option<Value>) {
        self.history.push(Event { rv: self.rv, kind, typ, object, old });
        if !self.hold {
            self.delivered_rv = self.rv;
        }
    }

    fn is_forbidden(&self, verb: &str, resource: &str) -> bool {
        self.forbidden.contains(&(verb.to_string(), resource.to_string()))
    }

    fn new_uid(&mut self) -> String {
        self.next_uid += 1;
        format!("6f1d0c3e-0000-4000-8000-{:012x}", self.next_uid)
    }
}

struct Shared {
    store: Mutex<Store>,
    changed: watch::Sender<u64>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn notify(&self) {
        self.changed.send_modify(|generation| *generation = generation.wrapping_add(1));
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
        self.shared.lock().shutdown = true;
        self.shared.notify();
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
        let (changed, _) = watch::channel(0u64);
        let shared = Arc::new(Shared { store: Mutex::new(Store::default()), changed });
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
    pub fn apply(&self, mut object: Value) -> String {
        let kind = object["kind"].as_str().unwrap_or_default().to_string();
        let info =
            KindInfo::by_kind(&kind).unwrap_or_else(|| panic!("FakeApiServer::apply: unsupported kind {kind:?}"));
        let name = object["metadata"]["name"]
            .as_str()
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| panic!("FakeApiServer::apply: {kind} without metadata.name"))
            .to_string();
        let namespace = if info.namespaced {
            object["metadata"]["namespace"].as_str().filter(|n| !n.is_empty()).unwrap_or("default").to_string()
        } else {
            String::new()
        };
        let mut st = self.shared.lock();
        st.rv += 1;
        let rv = st.rv;
        let key: Key = (info.kind, namespace.clone(), name);
        let old = st.objects.get(&key).cloned();
        let uid = match object["metadata"]["uid"].as_str().filter(|u| !u.is_empty()) {
            Some(uid) => uid.to_string(),
            None => match old.as_ref().and_then(|o| o["metadata"]["uid"].as_str()) {
                Some(uid) => uid.to_string(),
                None => st.new_uid(),
            },
        };
        let created = match object["metadata"]["creationTimestamp"].as_str() {
            Some(t) => t.to_string(),
            None => match old.as_ref().and_then(|o| o["metadata"]["creationTimestamp"].as_str()) {
                Some(t) => t.to_string(),
                None => now_rfc3339(),
            },
        };
        let obj = object.as_object_mut().expect("FakeApiServer::apply: object must be a JSON object");
        obj.insert("apiVersion".into(), info.api_version().into());
        let meta = obj.entry("metadata").or_insert_with(|| json!({}));
        let meta = meta.as_object_mut().expect("FakeApiServer::apply: metadata must be an object");
        if info.namespaced {
            meta.insert("namespace".into(), namespace.into());
        } else {
            meta.remove("namespace");
        }
        meta.insert("resourceVersion".into(), rv.to_string().into());
        meta.insert("uid".into(), uid.into());
        meta.insert("creationTimestamp".into(), created.into());
        st.objects.insert(key, object.clone());
        let typ = if old.is_some() { "MODIFIED" } else { "ADDED" };
        st.record(info.kind, typ, object, old);
        drop(st);
        self.shared.notify();
        rv.to_string()
    }

    /// Deletes; records DELETED (the last state with a new resourceVersion, as the real server does).
    /// Returns whether it existed. `namespace` is ignored for cluster-scoped kinds.
    pub fn delete(&self, kind: &str, namespace: &str, name: &str) -> bool {
        let Some(info) = KindInfo::by_kind(kind) else { return false };
        let namespace = if info.namespaced { namespace } else { "" };
        let mut st = self.shared.lock();
        let Some(old) = st.objects.remove(&(info.kind, namespace.to_string(), name.to_string())) else {
            return false;
        };
        st.rv += 1;
        let mut object = old.clone();
        object["metadata"]["resourceVersion"] = st.rv.to_string().into();
        st.record(info.kind, "DELETED", object, Some(old));
        drop(st);
        self.shared.notify();
        true
    }

    /// One object as stored (with kind and apiVersion), if it exists.
    pub fn get(&self, kind: &str, namespace: &str, name: &str) -> Option<Value> {
        let info = KindInfo::by_kind(kind)?;
        let namespace = if info.namespaced { namespace } else { "" };
        self.shared.lock().objects.get(&(info.kind, namespace.to_string(), name.to_string())).cloned()
    }

    /// The server's truth: every object of a kind, sorted by namespace/name.
    pub fn list(&self, kind: &str) -> Vec<Value> {
        self.shared.lock().objects.iter().filter(|((k, _, _), _)| *k == kind).map(|(_, v)| v.clone()).collect()
    }

    /// The current resourceVersion (of the last change).
    pub fn resource_version(&self) -> String {
        self.shared.lock().rv.to_string()
    }

    /// Fault: abort every open watch connection mid-stream (the TCP stream ends without the final chunk,
    /// as a dropped connection does). Watches started afterwards are not affected.
    pub fn drop_watches(&self) {
        self.shared.lock().drop_gen += 1;
        self.shared.notify();
    }

    /// Fault: compact history. Every open watch gets an ERROR event with a 410 Gone Status and ends; any
    /// later watch from a resourceVersion older than the current one gets the same (HTTP 200 and an
    /// in-stream ERROR event, reason "Expired", message "too old resource version: 5 (12)"). Outstanding
    /// continue tokens expire too (410). Events still held by `hold_events` go with the history: only a
    /// relist shows them.
    pub fn expire_history(&self) {
        let mut st = self.shared.lock();
        st.compacted_rv = st.rv;
        st.delivered_rv = st.delivered_rv.max(st.rv);
        st.history.clear();
        st.continues.clear();
        st.expire_gen += 1;
        drop(st);
        self.shared.notify();
    }

    /// Fault: delay every response (list, watch start, binding, get) by this much. Zero turns it off.
    pub fn set_delay(&self, delay: Duration) {
        self.shared.lock().delay = delay;
    }

    /// Fault: while true, events are recorded but not delivered to open watches (nor replayed to new
    /// ones, nor covered by bookmarks), so a watch never confirms a change; lists still show the truth.
    /// Set back to false to deliver what was held, in order.
    pub fn hold_events(&self, hold: bool) {
        let mut st = self.shared.lock();
        st.hold = hold;
        if !hold {
            st.delivered_rv = st.rv;
        }
        drop(st);
        self.shared.notify();
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

    /// Every request received: method, path, query string, body.
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

async fn handle(State(shared): State<Arc<Shared>>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let body = match axum::body::to_bytes(body, 16 << 20).await {
        Ok(b) => b,
        Err(_) => return status_response(413, "RequestEntityTooLarge", "request body too large", None),
    };
    let method = parts.method;
    let path = parts.uri.path().to_string();
    let query = parts.uri.query().unwrap_or("").to_string();
    let delay = {
        let mut st = shared.lock();
        st.requests.push(RecordedRequest {
            method: method.to_string(),
            path: path.clone(),
            query: query.clone(),
            body: String::from_utf8_lossy(&body).into_owned(),
        });
        st.delay
    };
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    route(&shared, &method, &path, &query, &body)
}

fn route(shared: &Arc<Shared>, method: &Method, path: &str, query: &str, body: &[u8]) -> Response {
    let params = parse_query(query);
    let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    if segs.iter().any(|s| s.is_empty()) {
        return path_not_found();
    }
    let (group, rest) = match segs.as_slice() {
        ["api", "v1", rest @ ..] => ("", rest),
        ["apis", group, "v1", rest @ ..] => (*group, rest),
        _ => return path_not_found(),
    };
    let (plural, ns, name, sub) = match rest {
        [plural] => (*plural, None, None, None),
        [plural, name] => (*plural, None, Some(*name), None),
        ["namespaces", ns, plural] => (*plural, Some(*ns), None, None),
        ["namespaces", ns, plural, name] => (*plural, Some(*ns), Some(*name), None),
        ["namespaces", ns, plural, name, sub] => (*plural, Some(*ns), Some(*name), Some(*sub)),
        _ => return path_not_found(),
    };
    let Some(info) = KindInfo::by_path(group, plural) else { return path_not_found() };
    if (ns.is_some() && !info.namespaced) || (ns.is_none() && name.is_some() && info.namespaced) {
        return path_not_found();
    }
    match (name, sub) {
        (Some(name), Some(sub)) => match (method, info.kind, sub, ns) {
            (&Method::POST, "Pod", "binding", Some(ns)) => bind(shared, ns, name, body),
            (_, "Pod", "binding", _) => method_not_allowed(),
            _ => path_not_found(),
        },
        (Some(name), None) => match *method {
            Method::GET => get_object(shared, info, ns, name),
            _ => method_not_allowed(),
        },
        (None, _) => match *method {
            Method::GET if matches!(params.get("watch").map(String::as_str), Some("true" | "1")) => {
                start_watch(shared, info, ns, &params)
            }
            Method::GET => list(shared, info, ns, &params),
            _ => method_not_allowed(),
        },
    }
}

fn get_object(shared: &Arc<Shared>, info: &'static KindInfo, ns: Option<&str>, name: &str) -> Response {
    let st = shared.lock();
    if st.is_forbidden("get", info.plural) {
        return forbidden_response("get", info, ns, Some(name), None);
    }
    match st.objects.get(&(info.kind, ns.unwrap_or("").to_string(), name.to_string())) {
        Some(object) => json_response(StatusCode::OK, object),
        None => not_found(info, name),
    }
}

fn list(shared: &Arc<Shared>, info: &'static KindInfo, ns: Option<&str>, params: &HashMap<String, String>) -> Response {
    let mut st = shared.lock();
    *st.list_counts.entry(info.kind).or_default() += 1;
    if st.is_forbidden("list", info.plural) {
        return forbidden_response("list", info, ns, None, None);
    }
    let selectors = match Selectors::parse(params) {
        Ok(s) => s,
        Err(message) => return status_response(400, "BadRequest", &message, None),
    };
    let rv_param = params.get("resourceVersion").map(String::as_str).unwrap_or("");
    if !rv_param.is_empty() && rv_param.parse::<u64>().is_err() {
        return status_response(400, "BadRequest", &format!("invalid resource version {rv_param:?}"), None);
    }
    let limit = params.get("limit").and_then(|l| l.parse::<usize>().ok()).filter(|l| *l > 0);
    let (items, rv) = match params.get("continue").filter(|c| !c.is_empty()) {
        Some(token) => {
            if !rv_param.is_empty() {
                return status_response(
                    400,
                    "BadRequest",
                    "specifying resource version is not allowed when using continue",
                    None,
                );
            }
            let Some(snapshot) = st.continues.remove(token.as_str()) else {
                return status_response(
                    410,
                    "Expired",
                    "The provided continue parameter is too old to display a consistent list result. You can \
                     start a new list without the continue parameter, or use the continue token in this response \
                     to retrieve the remainder of the results. Continuing with the provided token results in an \
                     inconsistent list - objects that were created, modified, or deleted between the time the \
                     first chunk was returned and now may show up in the list.",
                    None,
                );
            };
            if snapshot.kind != info.kind || snapshot.namespace.as_deref() != ns {
                return status_response(400, "BadRequest", "continue key is not valid for this request", None);
            }
            (snapshot.remaining, snapshot.rv)
        }
        None => {
            let items: Vec<Value> = st
                .objects
                .iter()
                .filter(|((kind, obj_ns, _), object)| {
                    *kind == info.kind && ns.is_none_or(|ns| ns == obj_ns) && selectors.matches(object)
                })
                .map(|(_, object)| object.clone())
                .collect();
            (items, st.rv)
        }
    };
    let mut items = items;
    let mut metadata = json!({"resourceVersion": rv.to_string()});
    if let Some(limit) = limit.filter(|l| items.len() > *l) {
        let remaining = items.split_off(limit);
        st.next_continue += 1;
        let token = format!("fake-continue-{}-{}", rv, st.next_continue);
        metadata["continue"] = token.clone().into();
        metadata["remainingItemCount"] = remaining.len().into();
        st.continues.insert(token, Snapshot { kind: info.kind, namespace: ns.map(str::to_string), rv, remaining });
    }
    drop(st);
    let items: Vec<Value> = items
        .into_iter()
        .map(|mut item| {
            if let Some(m) = item.as_object_mut() {
                m.remove("kind");
                m.remove("apiVersion");
            }
            item
        })
        .collect();
    let body = json!({
        "kind": format!("{}List", info.kind),
        "apiVersion": info.api_version(),
        "metadata": metadata,
        "items": items,
    });
    json_response(StatusCode::OK, &body)
}

// ---------------------------------------------------------------------------------------------------------
// Watch

type Chunk = Result<Bytes, std::io::Error>;

struct WatchSpec {
    info: &'static KindInfo,
    namespace: Option<String>,
    selectors: Selectors,
    bookmarks: bool,
    send_initial_events: bool,
    timeout: Duration,
}

impl WatchSpec {
    /// What an event looks like through this watch (namespace and selectors, with the real server's
    /// ADDED/DELETED for objects entering or leaving the selection).
    fn project(&self, ev: &Event) -> Option<(&'static str, Value)> {
        if ev.kind != self.info.kind {
            return None;
        }
        if let Some(ns) = &self.namespace {
            if ev.object["metadata"]["namespace"].as_str() != Some(ns.as_str()) {
                return None;
            }
        }
        let was = ev.old.as_ref().is_some_and(|o| self.selectors.matches(o));
        let is = self.selectors.matches(&ev.object);
        let typ = match (ev.typ, was, is) {
            ("ADDED", _, true) => "ADDED",
            ("MODIFIED", true, true) => "MODIFIED",
            ("MODIFIED", false, true) => "ADDED",
            ("MODIFIED", true, false) => "DELETED",
            ("DELETED", true, _) => "DELETED",
            _ => return None,
        };
        Some((typ, ev.object.clone()))
    }

    fn in_scope(&self, key: &Key, object: &Value) -> bool {
        key.0 == self.info.kind
            && self.namespace.as_deref().is_none_or(|ns| ns == key.1)
            && self.selectors.matches(object)
    }

    fn bookmark_line(&self, rv: u64, initial_events_end: bool) -> String {
        let mut metadata = json!({"resourceVersion": rv.to_string()});
        if initial_events_end {
            metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        event_line(
            "BOOKMARK",
            &json!({"kind": self.info.kind, "apiVersion": self.info.api_version(), "metadata": metadata}),
        )
    }
}

/// The objects in scope as of `delivered_rv` (the current state with held events undone), sorted.
fn state_as_delivered(st: &Store, spec: &WatchSpec) -> Vec<Value> {
    let mut objects: BTreeMap<Key, Value> =
        st.objects.iter().filter(|(k, _)| k.0 == spec.info.kind).map(|(k, v)| (k.clone(), v.clone())).collect();
    for ev in st.history.iter().rev().take_while(|ev| ev.rv > st.delivered_rv) {
        if ev.kind != spec.info.kind {
            continue;
        }
        let key: Key = (
            ev.kind,
            ev.object["metadata"]["namespace"].as_str().unwrap_or("").to_string(),
            ev.object["metadata"]["name"].as_str().unwrap_or("").to_string(),
        );
        match (&ev.old, ev.typ) {
            (_, "ADDED") | (None, _) => {
                objects.remove(&key);
            }
            (Some(old), _) => {
                objects.insert(key, old.clone());
            }
        }
    }
    objects.into_iter().filter(|(k, v)| spec.in_scope(k, v)).map(|(_, v)| v).collect()
}

fn start_watch(
    shared: &Arc<Shared>,
    info: &'static KindInfo,
    ns: Option<&str>,
    params: &HashMap<String, String>,
) -> Response {
    let flag = |name: &str| params.get(name).map(|v| v == "true" || v == "1");
    let mut st = shared.lock();
    *st.watch_counts.entry(info.kind).or_default() += 1;
    if st.is_forbidden("watch", info.plural) {
        return forbidden_response("watch", info, ns, None, None);
    }
    let selectors = match Selectors::parse(params) {
        Ok(s) => s,
        Err(message) => return status_response(400, "BadRequest", &message, None),
    };
    let rv_param = params.get("resourceVersion").map(String::as_str).unwrap_or("");
    let start = match rv_param {
        "" | "0" => None,
        rv => match rv.parse::<u64>() {
            Ok(rv) => Some(rv),
            Err(_) => return status_response(400, "BadRequest", &format!("invalid resource version {rv:?}"), None),
        },
    };
    let send_initial_events = flag("sendInitialEvents");
    let spec = WatchSpec {
        info,
        namespace: ns.map(str::to_string),
        selectors,
        bookmarks: flag("allowWatchBookmarks").unwrap_or(false),
        // Unset resourceVersion or "0": the current state first (legacy semantics), unless told otherwise.
        send_initial_events: send_initial_events.unwrap_or(start.is_none()),
        timeout: params
            .get("timeoutSeconds")
            .and_then(|t| t.parse::<u64>().ok())
            .map(Duration::from_secs)
            .unwrap_or(DEFAULT_WATCH_TIMEOUT),
    };
    let (tx, rx) = mpsc::channel::<Chunk>(256);
    let body = Body::from_stream(futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|c| (c, rx)) }));
    let response = watch_response(body);

    if let Some(rv) = start.filter(|rv| *rv < st.compacted_rv) {
        let line = expired_line(rv, st.compacted_rv);
        drop(st);
        let _ = tx.try_send(Ok(Bytes::from(line)));
        return response;
    }
    let changed = shared.changed.subscribe();
    let initial = if spec.send_initial_events { state_as_delivered(&st, &spec) } else { Vec::new() };
    let cursor = match start {
        Some(rv) if !spec.send_initial_events => rv,
        _ => st.delivered_rv,
    };
    let gens = (st.drop_gen, st.expire_gen);
    *st.open_watches.entry(info.kind).or_default() += 1;
    drop(st);
    let guard = OpenWatch { shared: shared.clone(), kind: info.kind };
    tokio::spawn(serve_watch(guard, spec, tx, changed, initial, cursor, gens, send_initial_events == Some(true)));
    response
}

/// Decrements the open-watch count when the stream task ends.
struct OpenWatch {
    shared: Arc<Shared>,
    kind: &'static str,
}

impl Drop for OpenWatch {
    fn drop(&mut self) {
        if let Some(n) = self.shared.lock().open_watches.get_mut(self.kind) {
            *n = n.saturating_sub(1);
        }
    }
}

enum Step {
    Lines(Vec<String>),
    Drop,
    Expire(String),
    Shutdown,
}

#[allow(clippy::too_many_arguments)]
async fn serve_watch(
    guard: OpenWatch,
    spec: WatchSpec,
    tx: mpsc::Sender<Chunk>,
    mut changed: watch::Receiver<u64>,
    initial: Vec<Value>,
    mut cursor: u64,
    (drop_gen, expire_gen): (u64, u64),
    mark_initial_end: bool,
) {
    let send = |line: String| {
        let tx = tx.clone();
        async move { tx.send(Ok(Bytes::from(line))).await.is_ok() }
    };
    for object in initial {
        if !send(event_line("ADDED", &object)).await {
            return;
        }
    }
    if mark_initial_end && spec.bookmarks && !send(spec.bookmark_line(cursor, true)).await {
        return;
    }
    let deadline = tokio::time::Instant::now() + spec.timeout;
    let mut next_bookmark = tokio::time::Instant::now() + BOOKMARK_INTERVAL;
    loop {
        let step = {
            let st = guard.shared.lock();
            if st.shutdown {
                Step::Shutdown
            } else if st.drop_gen != drop_gen {
                Step::Drop
            } else if st.expire_gen != expire_gen {
                Step::Expire(expired_line(cursor, st.compacted_rv))
            } else {
                let from = st.history.partition_point(|ev| ev.rv <= cursor);
                let lines = st.history[from..]
                    .iter()
                    .take_while(|ev| ev.rv <= st.delivered_rv)
                    .filter_map(|ev| spec.project(ev))
                    .map(|(typ, object)| event_line(typ, &object))
                    .collect();
                cursor = cursor.max(st.delivered_rv);
                Step::Lines(lines)
            }
        };
        match step {
            Step::Shutdown => return,
            Step::Drop => {
                let aborted = std::io::Error::new(std::io::ErrorKind::ConnectionAborted, "fault: drop_watches");
                let _ = tx.send(Err(aborted)).await;
                return;
            }
            Step::Expire(line) => {
                let _ = send(line).await;
                return;
            }
            Step::Lines(lines) => {
                for line in lines {
                    if !send(line).await {
                        return;
                    }
                }
            }
        }
        tokio::select! {
            changed = changed.changed() => {
                if changed.is_err() {
                    return;
                }
            }
            _ = tokio::time::sleep_until(next_bookmark), if spec.bookmarks => {
                next_bookmark = tokio::time::Instant::now() + BOOKMARK_INTERVAL;
                if !send(spec.bookmark_line(cursor, false)).await {
                    return;
                }
            }
            _ = tokio::time::sleep_until(deadline) => return,
            _ = tx.closed() => return,
        }
    }
}

fn event_line(typ: &str, object: &Value) -> String {
    let mut line = json!({"type": typ, "object": object}).to_string();
    line.push('\n');
    line
}

fn expired_line(rv: u64, compacted: u64) -> String {
    event_line("ERROR", &status_body(410, "Expired", &format!("too old resource version: {rv} ({compacted})"), None))
}

fn watch_response(body: Body) -> Response {
    let mut response = Response::new(body);
    *response.status_mut() = StatusCode::OK;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

// ---------------------------------------------------------------------------------------------------------
// Binding

fn bind(shared: &Arc<Shared>, ns: &str, name: &str, body: &[u8]) -> Response {
    let pods = KindInfo::by_kind("Pod").expect("Pod is a known kind");
    if shared.lock().is_forbidden("create", "pods/binding") {
        return forbidden_response("create", pods, Some(ns), Some(name), Some("binding"));
    }
    let binding: Value = match serde_json::from_slice::<Value>(body) {
        Ok(v) if v.is_object() => v,
        Ok(_) => return status_response(400, "BadRequest", "the body of the request is not a JSON object", None),
        Err(e) => {
            return status_response(
                400,
                "BadRequest",
                &format!("couldn't get version/kind; json parse error: {e}"),
                None,
            )
        }
    };
    if let Some(kind) = binding["kind"].as_str().filter(|k| *k != "Binding") {
        return status_response(400, "BadRequest", &format!("not a Binding object: kind {kind:?}"), None);
    }
    if binding["metadata"]["namespace"].as_str().is_some_and(|n| !n.is_empty() && n != ns) {
        return status_response(
            400,
            "BadRequest",
            "the namespace of the provided object does not match the namespace sent on the request",
            None,
        );
    }
    if binding["metadata"]["name"].as_str().unwrap_or("") != name {
        return status_response(400, "BadRequest", "name in URL does not match name in Binding object", None);
    }
    // ValidatePodBinding, returned by BindingREST.Create as a plain aggregate error: HTTP 500, no reason.
    let target_kind = binding["target"]["kind"].as_str().unwrap_or("");
    let target_name = binding["target"]["name"].as_str().unwrap_or("");
    let mut errors = Vec::new();
    if !target_kind.is_empty() && target_kind != "Node" {
        errors
            .push(format!("target.kind: Unsupported value: {target_kind:?}: supported values: \"Node\", \"<empty>\""));
    }
    if target_name.is_empty() {
        errors.push("target.name: Required value".to_string());
    }
    if !errors.is_empty() {
        let message = if errors.len() == 1 { errors.remove(0) } else { format!("[{}]", errors.join(", ")) };
        return status_response(500, "", &message, None);
    }

    let mut st = shared.lock();
    let key: Key = (pods.kind, ns.to_string(), name.to_string());
    let Some(pod) = st.objects.get(&key).cloned() else {
        return not_found(pods, name);
    };
    // Storage preconditions (etcd3 store checks them before the update function runs).
    let storage_conflict = |what: &str, want: &str, have: &str| {
        let message = format!(
            "Operation cannot be fulfilled on pods {name:?}: StorageError: invalid object, Code: 4, Key: \
             /registry/pods/{ns}/{name}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: {what} in \
             precondition: {want}, {what} in object meta: {have}"
        );
        status_response(409, "Conflict", &message, Some(details(name, "", "pods")))
    };
    let pod_uid = pod["metadata"]["uid"].as_str().unwrap_or("");
    if let Some(uid) = binding["metadata"]["uid"].as_str().filter(|u| !u.is_empty() && *u != pod_uid) {
        return storage_conflict("UID", uid, pod_uid);
    }
    let pod_rv = pod["metadata"]["resourceVersion"].as_str().unwrap_or("");
    if let Some(rv) = binding["metadata"]["resourceVersion"].as_str().filter(|r| !r.is_empty() && *r != pod_rv) {
        return storage_conflict("ResourceVersion", rv, pod_rv);
    }
    let binding_conflict = |reason: String| {
        let message = format!("Operation cannot be fulfilled on pods/binding {name:?}: {reason}");
        status_response(409, "Conflict", &message, Some(details(name, "", "pods/binding")))
    };
    if !pod["metadata"]["deletionTimestamp"].is_null() {
        return binding_conflict(format!("pod {name} is being deleted, cannot be assigned to a host"));
    }
    if let Some(node) = pod["spec"]["nodeName"].as_str().filter(|n| !n.is_empty()) {
        return binding_conflict(format!("pod {name} is already assigned to node {node:?}"));
    }
    if pod["spec"]["schedulingGates"].as_array().is_some_and(|g| !g.is_empty()) {
        return binding_conflict(format!("pod {name} has non-empty .spec.schedulingGates"));
    }

    let mut updated = pod.clone();
    updated["spec"]["nodeName"] = target_name.into();
    if let Some(annotations) = binding["metadata"]["annotations"].as_object() {
        if !updated["metadata"]["annotations"].is_object() {
            updated["metadata"]["annotations"] = json!({});
        }
        for (k, v) in annotations {
            updated["metadata"]["annotations"][k] = v.clone();
        }
    }
    set_pod_scheduled(&mut updated);
    st.rv += 1;
    updated["metadata"]["resourceVersion"] = st.rv.to_string().into();
    st.objects.insert(key, updated.clone());
    st.record(pods.kind, "MODIFIED", updated, Some(pod));
    drop(st);
    shared.notify();
    json_response(
        StatusCode::CREATED,
        &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}),
    )
}

/// `podutil.UpdatePodCondition(PodScheduled=True)`: replaces the condition, keeping its transition time
/// when the status does not change.
fn set_pod_scheduled(pod: &mut Value) {
    if !pod["status"].is_object() {
        pod["status"] = json!({});
    }
    if !pod["status"]["conditions"].is_array() {
        pod["status"]["conditions"] = json!([]);
    }
    let Some(conditions) = pod["status"]["conditions"].as_array_mut() else { return };
    let mut condition = json!({"type": "PodScheduled", "status": "True", "lastTransitionTime": now_rfc3339()});
    match conditions.iter_mut().find(|c| c["type"] == "PodScheduled") {
        Some(existing) => {
            if existing["status"] == "True" && !existing["lastTransitionTime"].is_null() {
                condition["lastTransitionTime"] = existing["lastTransitionTime"].clone();
            }
            *existing = condition;
        }
        None => conditions.push(condition),
    }
}

// ---------------------------------------------------------------------------------------------------------
// Status bodies

fn status_body(code: u16, reason: &str, message: &str, details: Option<Value>) -> Value {
    let mut status = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "code": code,
    });
    if !reason.is_empty() {
        status["reason"] = reason.into();
    }
    if let Some(details) = details {
        status["details"] = details;
    }
    status
}

/// `metav1.StatusDetails`; empty fields are omitted as Go's `omitempty` does.
fn details(name: &str, group: &str, kind: &str) -> Value {
    let mut d = Map::new();
    for (k, v) in [("name", name), ("group", group), ("kind", kind)] {
        if !v.is_empty() {
            d.insert(k.to_string(), v.into());
        }
    }
    Value::Object(d)
}

fn status_response(code: u16, reason: &str, message: &str, details: Option<Value>) -> Response {
    let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    json_response(status, &status_body(code, reason, message, details))
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

fn path_not_found() -> Response {
    status_response(404, "NotFound", "the server could not find the requested resource", Some(json!({})))
}

fn method_not_allowed() -> Response {
    status_response(405, "MethodNotAllowed", "the server does not allow this method on the requested resource", None)
}

/// `errors.NewNotFound`: `pods "x" not found`.
fn not_found(info: &KindInfo, name: &str) -> Response {
    let message = format!("{} {name:?} not found", info.qualified());
    status_response(404, "NotFound", &message, Some(details(name, info.group, info.plural)))
}

/// `responsewriters.Forbidden` + `errors.NewForbidden`.
fn forbidden_response(
    verb: &str,
    info: &KindInfo,
    ns: Option<&str>,
    name: Option<&str>,
    subresource: Option<&str>,
) -> Response {
    let resource = match subresource {
        Some(sub) => format!("{}/{sub}", info.plural),
        None => info.plural.to_string(),
    };
    let scope = match ns {
        Some(ns) => format!("in the namespace {ns:?}"),
        None => "at the cluster scope".to_string(),
    };
    let reason = format!("User {USER:?} cannot {verb} resource {resource:?} in API group {:?} {scope}", info.group);
    let message = match name {
        Some(name) => format!("{} {name:?} is forbidden: {reason}", info.qualified()),
        None => format!("{} is forbidden: {reason}", info.qualified()),
    };
    status_response(403, "Forbidden", &message, Some(details(name.unwrap_or(""), info.group, info.plural)))
}

// ---------------------------------------------------------------------------------------------------------
// Selectors (equality-based only; set-based label selectors are refused with 400 rather than ignored)

#[derive(Default)]
struct Selectors {
    labels: Vec<(String, Op)>,
    fields: Vec<(String, Op)>,
}

enum Op {
    Eq(String),
    Ne(String),
    Exists,
    NotExists,
}

impl Selectors {
    fn parse(params: &HashMap<String, String>) -> Result<Selectors, String> {
        let mut selectors = Selectors::default();
        for term in params.get("labelSelector").map(String::as_str).unwrap_or("").split(',') {
            let term = term.trim();
            if term.is_empty() {
                continue;
            }
            if term.contains('(') || term.contains(' ') {
                return Err(format!("unable to parse requirement: set-based selector {term:?} is not supported"));
            }
            selectors.labels.push(parse_term(term, true)?);
        }
        for term in params.get("fieldSelector").map(String::as_str).unwrap_or("").split(',') {
            let term = term.trim();
            if !term.is_empty() {
                selectors.fields.push(parse_term(term, false)?);
            }
        }
        Ok(selectors)
    }

    fn matches(&self, object: &Value) -> bool {
        let labels = &object["metadata"]["labels"];
        let label_ok = self.labels.iter().all(|(key, op)| op.holds(labels.get(key).and_then(Value::as_str)));
        let field_ok = self.fields.iter().all(|(path, op)| {
            let value = path.split('.').try_fold(object, |v, part| v.get(part));
            let text = match value {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            };
            op.holds(Some(&text))
        });
        label_ok && field_ok
    }
}

impl Op {
    fn holds(&self, value: Option<&str>) -> bool {
        match self {
            Op::Eq(want) => value == Some(want.as_str()),
            Op::Ne(want) => value != Some(want.as_str()),
            Op::Exists => value.is_some(),
            Op::NotExists => value.is_none(),
        }
    }
}

fn parse_term(term: &str, label: bool) -> Result<(String, Op), String> {
    if let Some((k, v)) = term.split_once("!=") {
        return Ok((k.to_string(), Op::Ne(v.to_string())));
    }
    if let Some((k, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
        return Ok((k.to_string(), Op::Eq(v.to_string())));
    }
    if label {
        return Ok(match term.strip_prefix('!') {
            Some(k) => (k.to_string(), Op::NotExists),
            None => (term.to_string(), Op::Exists),
        });
    }
    Err(format!("invalid selector: {term:?}; can't understand {term:?}"))
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
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
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
