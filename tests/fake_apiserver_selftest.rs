//! Drives the fake API server with the real `kube::Client` and `kube::runtime::watcher` (and, for the wire
//! format itself, with plain HTTP) to show it speaks the API the live-cluster source relies on.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

use predicate_extender_testing::fake_apiserver;

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::future::ready;
use std::sync::Arc;

use parking_lot::Mutex;
use std::time::{Duration, Instant};

use fake_apiserver::{node_json, pod_json, FakeApiServer};
use futures::StreamExt;
use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::{Binding, Node, ObjectReference, Pod};
use k8s_openapi::api::storage::v1::StorageClass;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, ListParams, PostParams, WatchParams};
use kube::runtime::watcher;
use kube::{Client, Resource};
use predicate_extender_testing::eventually;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

const USER: &str = fake_apiserver::USER;
const WAIT: Duration = Duration::from_secs(10);

async fn client(server: &FakeApiServer) -> Client {
    let kubeconfig = kube::config::Kubeconfig::read_from(server.kubeconfig_path()).expect("read kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await.expect("kube config");
    assert_eq!(config.cluster_url.to_string().trim_end_matches('/'), server.url());
    Client::try_from(config).expect("kube client")
}

/// A local copy of one kind, kept by a `watcher` the way a reflector keeps its store.
struct Mirror {
    objects: Arc<Mutex<BTreeMap<(String, String), Value>>>,
    errors: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Mirror {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Mirror {
    fn start<K>(api: Api<K>, config: watcher::Config) -> Mirror
    where
        K: Resource + Clone + DeserializeOwned + Serialize + Debug + Send + 'static,
    {
        let objects: Arc<Mutex<BTreeMap<(String, String), Value>>> = Arc::default();
        let errors: Arc<Mutex<Vec<String>>> = Arc::default();
        let (objects2, errors2) = (objects.clone(), errors.clone());
        let task = tokio::spawn(async move {
            let mut stream = watcher(api, config).boxed();
            let mut buffer: Option<BTreeMap<(String, String), Value>> = None;
            while let Some(event) = stream.next().await {
                match event {
                    Ok(watcher::Event::Init) => buffer = Some(BTreeMap::new()),
                    Ok(watcher::Event::InitApply(o)) => {
                        let v = serde_json::to_value(&o).unwrap();
                        buffer.get_or_insert_with(BTreeMap::new).insert(key(&v), v);
                    }
                    Ok(watcher::Event::InitDone) => *objects2.lock() = buffer.take().unwrap_or_default(),
                    Ok(watcher::Event::Apply(o)) => {
                        let v = serde_json::to_value(&o).unwrap();
                        objects2.lock().insert(key(&v), v);
                    }
                    Ok(watcher::Event::Delete(o)) => {
                        let v = serde_json::to_value(&o).unwrap();
                        objects2.lock().remove(&key(&v));
                    }
                    Err(e) => {
                        errors2.lock().push(e.to_string());
                        // The watcher recovers on the next poll; do not spin.
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                }
            }
        });
        Mirror { objects, errors, task }
    }

    fn summary(&self) -> Vec<Summary> {
        summarize(self.objects.lock().values())
    }

    fn get(&self, namespace: &str, name: &str) -> Option<Value> {
        self.objects.lock().get(&(namespace.to_string(), name.to_string())).cloned()
    }

    fn errors(&self) -> Vec<String> {
        self.errors.lock().clone()
    }
}

fn key(v: &Value) -> (String, String) {
    let meta = &v["metadata"];
    (meta["namespace"].as_str().unwrap_or("").to_string(), meta["name"].as_str().unwrap_or("").to_string())
}

/// What must agree between the server and a mirror: identity, version, and the spec as decoded.
type Summary = (String, String, String, String, Value);

fn summarize<'a>(values: impl IntoIterator<Item = &'a Value>) -> Vec<Summary> {
    let mut out: Vec<Summary> = values
        .into_iter()
        .map(|v| {
            let (ns, name) = key(v);
            let meta = &v["metadata"];
            let rv = meta["resourceVersion"].as_str().unwrap_or("").to_string();
            let uid = meta["uid"].as_str().unwrap_or("").to_string();
            (ns, name, rv, uid, v["spec"].clone())
        })
        .collect();
    out.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    out
}

async fn converged(server: &FakeApiServer, mirror: &Mirror, kind: &str, what: &str) {
    eventually(&format!("{what}: the {kind} mirror to converge"), WAIT, || {
        let truth = summarize(&server.list(kind));
        let seen = mirror.summary();
        ready(if truth == seen {
            Ok(())
        } else {
            Err(format!("server: {truth:#?}\nmirror: {seen:#?}\nerrors: {:?}", mirror.errors()))
        })
    })
    .await;
}

fn api_error(result: Result<impl Debug, kube::Error>) -> Box<kube::core::Status> {
    match result {
        Err(kube::Error::Api(status)) => status,
        other => panic!("expected an API error Status, got {other:?}"),
    }
}

fn binding(pod: &str, node: &str, uid: Option<&str>) -> Binding {
    Binding {
        metadata: ObjectMeta { name: Some(pod.to_string()), uid: uid.map(str::to_string), ..Default::default() },
        target: ObjectReference { kind: Some("Node".into()), name: Some(node.to_string()), ..Default::default() },
    }
}

fn uid_of(server: &FakeApiServer, kind: &str, namespace: &str, name: &str) -> String {
    server.get(kind, namespace, name).unwrap()["metadata"]["uid"].as_str().unwrap().to_string()
}

fn query_param(query: &str, name: &str) -> Option<String> {
    query.split('&').find_map(|pair| pair.strip_prefix(name)?.strip_prefix('=').map(str::to_string))
}

/// Reads a raw watch body until it ends (Ok) or breaks (Err), returning the lines seen.
async fn read_watch(resp: &mut reqwest::Response) -> (Vec<Value>, Result<(), String>) {
    let mut buffer = Vec::new();
    let end = loop {
        match resp.chunk().await {
            Ok(Some(chunk)) => buffer.extend_from_slice(&chunk),
            Ok(None) => break Ok(()),
            Err(e) => break Err(e.to_string()),
        }
    };
    let text = String::from_utf8(buffer).unwrap();
    let lines = text.lines().map(|l| serde_json::from_str::<Value>(l).expect("one JSON event per line")).collect();
    (lines, end)
}

#[tokio::test]
async fn pod_watcher_converges_through_changes_paging_dropped_watches_and_expired_history() {
    let server = FakeApiServer::start().await;
    server.apply(node_json("n1", "4", "8Gi", "110"));
    for (ns, name, node) in
        [("default", "a", "n1"), ("default", "b", ""), ("team", "c", "n1"), ("team", "d", ""), ("team", "e", "n1")]
    {
        server.apply(pod_json(ns, name, node, "100m"));
    }
    let client = client(&server).await;
    let mirror = Mirror::start(Api::<Pod>::all(client), watcher::Config::default().page_size(2));

    // Initial list, paged 2 + 2 + 1 from one snapshot, then a watch from its resourceVersion.
    converged(&server, &mirror, "Pod", "initial list").await;
    eventually("the pod watch to open", WAIT, || ready(server.open_watches("Pod") == 1)).await;
    assert_eq!(server.list_count("Pod"), 3, "five pods at page size two are three list requests");
    let lists: Vec<_> = server.requests().into_iter().filter(|r| r.path == "/api/v1/pods").collect();
    assert!(lists.iter().all(|r| r.method == "GET"));
    assert_eq!(query_param(&lists[0].query, "limit").as_deref(), Some("2"));
    assert!(query_param(&lists[1].query, "continue").is_some(), "second page continues: {:?}", lists[1]);
    let watch = lists.iter().find(|r| query_param(&r.query, "watch").as_deref() == Some("true")).unwrap();
    assert_eq!(query_param(&watch.query, "allowWatchBookmarks").as_deref(), Some("true"));
    assert_eq!(query_param(&watch.query, "resourceVersion"), Some(server.resource_version()));

    // Live changes.
    server.apply(pod_json("default", "f", "", "250m"));
    server.apply(pod_json("team", "c", "n1", "500m"));
    assert!(server.delete("Pod", "team", "d"));
    converged(&server, &mirror, "Pod", "adds, modifies, deletes").await;

    // Dropped connection, with changes while the watch is down: a rewatch from the last
    // resourceVersion replays them; no relist.
    let (watches, lists) = (server.watch_count("Pod"), server.list_count("Pod"));
    let rv_before = server.resource_version();
    server.set_delay(Duration::from_millis(300));
    server.drop_watches();
    eventually("the dropped watch to close", WAIT, || ready(server.open_watches("Pod") == 0)).await;
    server.apply(pod_json("default", "g", "", "100m"));
    server.apply(pod_json("default", "b", "", "300m"));
    assert!(server.delete("Pod", "team", "e"));
    server.set_delay(Duration::ZERO);
    converged(&server, &mirror, "Pod", "after drop_watches").await;
    assert_eq!(mirror.errors(), Vec::<String>::new(), "to kube a dropped connection is a resumable EOF, not an error");
    assert!(server.watch_count("Pod") > watches, "a rewatch happened");
    assert_eq!(server.list_count("Pod"), lists, "no relist after a dropped connection");
    let rewatch = server
        .requests()
        .into_iter()
        .filter(|r| r.path == "/api/v1/pods" && r.query.contains("watch=true"))
        .nth(watches)
        .unwrap();
    assert_eq!(query_param(&rewatch.query, "resourceVersion"), Some(rv_before), "rewatch resumes where it was");

    // Compacted history, with changes while the watch is down: 410 in-stream, relist, converge.
    let lists = server.list_count("Pod");
    server.set_delay(Duration::from_millis(300));
    server.expire_history();
    eventually("the expired watch to close", WAIT, || ready(server.open_watches("Pod") == 0)).await;
    server.apply(pod_json("team", "h", "n1", "100m"));
    server.apply(pod_json("default", "a", "n1", "900m"));
    assert!(server.delete("Pod", "default", "f"));
    server.set_delay(Duration::ZERO);
    converged(&server, &mirror, "Pod", "after expire_history").await;
    assert!(server.list_count("Pod") > lists, "410 made the watcher relist");
    let errors = mirror.errors();
    assert!(errors.iter().any(|e| e.contains("too old resource version")), "watcher saw the 410: {errors:?}");

    // And it keeps following live changes afterwards.
    server.apply(pod_json("team", "i", "", "100m"));
    converged(&server, &mirror, "Pod", "after recovery").await;
}

#[tokio::test]
async fn continue_pages_come_from_the_first_pages_snapshot() {
    let server = FakeApiServer::start().await;
    for name in ["p1", "p2", "p3", "p4", "p5"] {
        server.apply(pod_json("default", name, "", "100m"));
    }
    let api: Api<Pod> = Api::namespaced(client(&server).await, "default");
    let names = |list: &kube::core::ObjectList<Pod>| -> Vec<String> {
        list.items.iter().map(|p| p.metadata.name.clone().unwrap()).collect()
    };
    let first = api.list(&ListParams::default().limit(2)).await.unwrap();
    let rv = first.metadata.resource_version.clone().unwrap();
    assert_eq!(names(&first), ["p1", "p2"]);
    assert_eq!(first.metadata.remaining_item_count, Some(3));
    let token = first.metadata.continue_.clone().unwrap();

    server.apply(pod_json("default", "p0", "", "100m"));
    assert!(server.delete("Pod", "default", "p4"));

    let second = api.list(&ListParams::default().limit(2).continue_token(&token)).await.unwrap();
    assert_eq!(names(&second), ["p3", "p4"], "same snapshot: p0 not there, p4 still there");
    assert_eq!(second.metadata.resource_version.as_deref(), Some(rv.as_str()));
    let third = api
        .list(&ListParams::default().limit(2).continue_token(second.metadata.continue_.as_deref().unwrap()))
        .await
        .unwrap();
    assert_eq!(names(&third), ["p5"]);
    assert_eq!(third.metadata.continue_, None);

    // A used token is gone: 410 Expired, as a compacted one would be.
    let status = api_error(api.list(&ListParams::default().limit(2).continue_token(&token)).await);
    assert_eq!((status.code, status.reason.as_str()), (410, "Expired"));

    let fresh = api.list(&ListParams::default()).await.unwrap();
    assert_eq!(names(&fresh), ["p0", "p1", "p2", "p3", "p5"]);

    // Wire form of a typed list: items without kind/apiVersion.
    let raw: Value = reqwest::get(format!("{}/api/v1/pods", server.url())).await.unwrap().json().await.unwrap();
    assert_eq!((raw["kind"].as_str(), raw["apiVersion"].as_str()), (Some("PodList"), Some("v1")));
    assert_eq!(raw["metadata"]["resourceVersion"].as_str(), Some(server.resource_version().as_str()));
    assert!(raw["metadata"].get("continue").is_none());
    assert!(raw["items"][0].get("kind").is_none() && raw["items"][0].get("apiVersion").is_none());
}

#[tokio::test]
async fn watch_wire_format_timeout_drop_and_expiry() {
    let server = FakeApiServer::start().await;
    let rv = server.apply(pod_json("default", "a", "", "100m"));
    let http = reqwest::Client::new();
    let watch_url = |rv: &str, timeout: u32| {
        format!(
            "{}/api/v1/namespaces/default/pods?&watch=true&timeoutSeconds={timeout}&allowWatchBookmarks=true&resourceVersion={rv}",
            server.url()
        )
    };

    // 200, application/json, chunked; events then bookmarks; ends cleanly at timeoutSeconds.
    let mut resp = http.get(watch_url(&rv, 1)).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "application/json");
    assert_eq!(resp.headers()["transfer-encoding"], "chunked");
    let added_rv = server.apply(pod_json("default", "b", "", "100m"));
    server.apply(pod_json("other", "elsewhere", "", "100m"));
    let started = Instant::now();
    let (events, end) = read_watch(&mut resp).await;
    assert_eq!(end, Ok(()), "timeoutSeconds ends the stream cleanly");
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(events[0]["type"], "ADDED");
    assert_eq!(events[0]["object"]["kind"], "Pod");
    assert_eq!(events[0]["object"]["apiVersion"], "v1");
    assert_eq!(events[0]["object"]["metadata"]["name"], "b");
    assert!(events.iter().all(|e| e["object"]["metadata"]["namespace"] != "other"), "namespaced watch");
    let bookmarks: Vec<_> = events.iter().filter(|e| e["type"] == "BOOKMARK").collect();
    assert!(bookmarks.len() >= 2, "a bookmark about every 200 ms: {events:?}");
    let last = bookmarks.last().unwrap();
    assert_eq!(
        last["object"],
        json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"resourceVersion": server.resource_version()}})
    );
    assert!(server.resource_version() > added_rv);

    // drop_watches: the body breaks instead of ending.
    let mut resp = http.get(watch_url(&server.resource_version(), 60)).send().await.unwrap();
    eventually("the raw watch to open", WAIT, || ready(server.open_watches("Pod") == 1)).await;
    server.drop_watches();
    let (_, end) = read_watch(&mut resp).await;
    assert!(end.is_err(), "a dropped watch is not a clean end");

    // expire_history: an open watch gets ERROR 410 and ends; a later watch from an old version gets the same.
    let mut resp = http.get(watch_url(&server.resource_version(), 60)).send().await.unwrap();
    eventually("the raw watch to open", WAIT, || ready(server.open_watches("Pod") == 1)).await;
    server.expire_history();
    let (events, end) = read_watch(&mut resp).await;
    assert_eq!(end, Ok(()));
    let error = events.iter().find(|e| e["type"] == "ERROR").expect("an ERROR event");
    assert_eq!(error["object"]["code"], 410);
    assert_eq!(error["object"]["reason"], "Expired");
    assert_eq!(error["object"]["kind"], "Status");

    let mut resp = http.get(watch_url("1", 60)).send().await.unwrap();
    assert_eq!(resp.status(), 200, "too old is an in-stream error, not an HTTP one");
    let (events, end) = read_watch(&mut resp).await;
    assert_eq!(end, Ok(()));
    let current = server.resource_version();
    assert_eq!(
        events,
        vec![json!({"type": "ERROR", "object": {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": format!("too old resource version: 1 ({current})"), "reason": "Expired", "code": 410
        }})]
    );

    // Watch without a resourceVersion: current state as ADDED first.
    let mut resp = http.get(format!("{}/api/v1/pods?watch=true&timeoutSeconds=1", server.url())).send().await.unwrap();
    let (events, _) = read_watch(&mut resp).await;
    let added: Vec<_> = events
        .iter()
        .map(|e| (e["type"].as_str().unwrap(), e["object"]["metadata"]["name"].as_str().unwrap()))
        .collect();
    assert_eq!(added, [("ADDED", "a"), ("ADDED", "b"), ("ADDED", "elsewhere")]);

    // Unknown paths and kinds: 404 with a Status body.
    for path in
        ["/api/v1/widgets", "/apis/apps/v1/namespaces/default/pods", "/api/v1/namespaces/default/nodes", "/healthz"]
    {
        let resp = http.get(format!("{}{path}", server.url())).send().await.unwrap();
        assert_eq!(resp.status(), 404, "{path}");
        let status: Value = resp.json().await.unwrap();
        assert_eq!((status["kind"].as_str(), status["reason"].as_str()), (Some("Status"), Some("NotFound")), "{path}");
    }
}

#[tokio::test]
async fn binding_subresource_answers_like_the_real_server() {
    let server = FakeApiServer::start().await;
    server.apply(node_json("n1", "4", "8Gi", "110"));
    server.apply(pod_json("default", "web", "", "100m"));
    server.apply(pod_json("default", "db", "n1", "100m"));
    server.apply(pod_json("default", "api", "", "100m"));
    let pods: Api<Pod> = Api::namespaced(client(&server).await, "default");
    let pp = PostParams::default();

    // Success: 201 with a Success Status; the pod is bound and PodScheduled.
    let web_uid = uid_of(&server, "Pod", "default", "web");
    let ok: kube::core::Status =
        pods.create_subresource("binding", "web", &pp, &binding("web", "n1", Some(&web_uid))).await.unwrap();
    assert_eq!((ok.code, ok.is_success()), (201, true));
    let web = server.get("Pod", "default", "web").unwrap();
    assert_eq!(web["spec"]["nodeName"], "n1");
    assert_eq!(web["status"]["conditions"][0]["type"], "PodScheduled");
    assert_eq!(web["status"]["conditions"][0]["status"], "True");
    let sent = server.requests().into_iter().rfind(|r| r.method == "POST").unwrap();
    assert_eq!(sent.path, "/api/v1/namespaces/default/pods/web/binding");
    let body: Value = serde_json::from_str(&sent.body).unwrap();
    assert_eq!(body["kind"], "Binding");
    assert_eq!(body["target"], json!({"kind": "Node", "name": "n1"}));
    assert_eq!(body["metadata"]["uid"], web_uid.as_str());

    // 404: no such pod.
    let status =
        api_error(pods.create_subresource::<_, Value>("binding", "ghost", &pp, &binding("ghost", "n1", None)).await);
    assert_eq!(
        (status.code, status.reason.as_str(), status.message.as_str()),
        (404, "NotFound", r#"pods "ghost" not found"#)
    );

    // 409: already assigned, even to the same node.
    for (pod, node) in [("db", "n1"), ("db", "n2"), ("web", "n1")] {
        let status =
            api_error(pods.create_subresource::<_, Value>("binding", pod, &pp, &binding(pod, node, None)).await);
        assert_eq!((status.code, status.reason.as_str()), (409, "Conflict"));
        assert_eq!(
            status.message,
            format!(
                r#"Operation cannot be fulfilled on pods/binding "{pod}": pod {pod} is already assigned to node "n1""#
            )
        );
    }

    // 409: UID precondition (the pod was replaced since the scheduler saw it).
    let api_uid = uid_of(&server, "Pod", "default", "api");
    let status = api_error(
        pods.create_subresource::<_, Value>("binding", "api", &pp, &binding("api", "n1", Some("stale-uid"))).await,
    );
    assert_eq!((status.code, status.reason.as_str()), (409, "Conflict"));
    assert!(
        status.message.starts_with(r#"Operation cannot be fulfilled on pods "api": StorageError: invalid object"#),
        "{}",
        status.message
    );
    assert!(
        status
            .message
            .ends_with(&format!("Precondition failed: UID in precondition: stale-uid, UID in object meta: {api_uid}")),
        "{}",
        status.message
    );

    // Validation (upstream returns ValidatePodBinding's aggregate as a 500 with no reason) and name mismatch (400).
    let mut wrong_kind = binding("api", "n1", None);
    wrong_kind.target.kind = Some("Pod".into());
    let status = api_error(pods.create_subresource::<_, Value>("binding", "api", &pp, &wrong_kind).await);
    assert_eq!(status.code, 500);
    assert_eq!(status.message, r#"target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>""#);
    let status = api_error(pods.create_subresource::<_, Value>("binding", "api", &pp, &binding("api", "", None)).await);
    assert_eq!((status.code, status.message.as_str()), (500, "target.name: Required value"));
    let status =
        api_error(pods.create_subresource::<_, Value>("binding", "api", &pp, &binding("web", "n1", None)).await);
    assert_eq!((status.code, status.reason.as_str()), (400, "BadRequest"));
    assert_eq!(status.message, "name in URL does not match name in Binding object");
    assert!(server.get("Pod", "default", "api").unwrap()["spec"].get("nodeName").is_none(), "failures change nothing");

    // 403 after forbid.
    server.forbid("create", "pods/binding");
    let status =
        api_error(pods.create_subresource::<_, Value>("binding", "api", &pp, &binding("api", "n1", None)).await);
    assert_eq!((status.code, status.reason.as_str()), (403, "Forbidden"));
    assert_eq!(
        status.message,
        format!(
            r#"pods "api" is forbidden: User "{USER}" cannot create resource "pods/binding" in API group "" in the namespace "default""#
        )
    );
    server.allow("create", "pods/binding");
    let ok: kube::core::Status =
        pods.create_subresource("binding", "api", &pp, &binding("api", "n1", Some(&api_uid))).await.unwrap();
    assert_eq!(ok.code, 201);
}

#[tokio::test]
async fn held_events_keep_a_binding_from_the_watcher_until_released() {
    let server = FakeApiServer::start().await;
    server.apply(node_json("n1", "4", "8Gi", "110"));
    server.apply(pod_json("default", "held", "", "100m"));
    let client = client(&server).await;
    let pods: Api<Pod> = Api::namespaced(client, "default");
    let mirror = Mirror::start(pods.clone(), watcher::Config::default());
    converged(&server, &mirror, "Pod", "initial").await;
    eventually("the pod watch to open", WAIT, || ready(server.open_watches("Pod") == 1)).await;
    let rv_before = server.resource_version();

    server.hold_events(true);
    let ok: kube::core::Status =
        pods.create_subresource("binding", "held", &PostParams::default(), &binding("held", "n1", None)).await.unwrap();
    assert_eq!(ok.code, 201);
    let bound_rv = server.resource_version();
    assert_eq!(server.get("Pod", "default", "held").unwrap()["spec"]["nodeName"], "n1", "the server has it");

    // A second watch from before the binding sees only bookmarks that stop short of it, for a whole second.
    let url = format!(
        "{}/api/v1/namespaces/default/pods?watch=true&timeoutSeconds=1&allowWatchBookmarks=true&resourceVersion={rv_before}",
        server.url()
    );
    let mut resp = reqwest::get(url).await.unwrap();
    let (events, end) = read_watch(&mut resp).await;
    assert_eq!(end, Ok(()));
    assert!(events.len() >= 2 && events.iter().all(|e| e["type"] == "BOOKMARK"), "{events:?}");
    assert!(events.iter().all(|e| e["object"]["metadata"]["resourceVersion"] == rv_before.as_str()));
    // Meanwhile the watcher, open all along, has not seen it either.
    assert!(mirror.get("default", "held").unwrap()["spec"].get("nodeName").is_none());

    server.hold_events(false);
    eventually("the held binding to reach the watcher", WAIT, || {
        ready(mirror.get("default", "held").is_some_and(|p| p["spec"]["nodeName"] == "n1"))
    })
    .await;
    assert_eq!(mirror.get("default", "held").unwrap()["metadata"]["resourceVersion"], bound_rv.as_str());
    converged(&server, &mirror, "Pod", "released").await;
}

#[tokio::test]
async fn nodes_replicasets_and_storageclasses_list_and_watch() {
    let server = FakeApiServer::start().await;
    for name in ["n1", "n2", "n3"] {
        server.apply(node_json(name, "4", "8Gi", "110"));
    }
    let replicaset = |ns: &str, name: &str, replicas: u32| {
        json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"namespace": ns, "name": name},
               "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}}}})
    };
    let storage_class = |name: &str, binding_mode: &str| {
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
               "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": binding_mode})
    };
    server.apply(replicaset("a", "web", 2));
    server.apply(replicaset("b", "db", 1));
    server.apply(storage_class("local", "WaitForFirstConsumer"));

    let client = client(&server).await;
    let nodes = Mirror::start(Api::<Node>::all(client.clone()), watcher::Config::default());
    let replicasets = Mirror::start(Api::<ReplicaSet>::all(client.clone()), watcher::Config::default());
    let replicasets_a = Mirror::start(Api::<ReplicaSet>::namespaced(client.clone(), "a"), watcher::Config::default());
    let classes = Mirror::start(Api::<StorageClass>::all(client.clone()), watcher::Config::default());
    converged(&server, &nodes, "Node", "initial").await;
    converged(&server, &replicasets, "ReplicaSet", "initial").await;
    converged(&server, &classes, "StorageClass", "initial").await;
    eventually("four watches open", WAIT, || {
        ready(
            server.open_watches("Node") == 1
                && server.open_watches("ReplicaSet") == 2
                && server.open_watches("StorageClass") == 1,
        )
    })
    .await;

    let mut n2 = node_json("n2", "8", "16Gi", "110");
    n2["spec"]["unschedulable"] = true.into();
    server.apply(n2);
    assert!(server.delete("Node", "", "n3"));
    server.apply(replicaset("a", "web", 5));
    server.apply(replicaset("a", "cache", 1));
    assert!(server.delete("ReplicaSet", "b", "db"));
    server.apply(storage_class("fast", "Immediate"));
    converged(&server, &nodes, "Node", "changes").await;
    converged(&server, &replicasets, "ReplicaSet", "changes").await;
    converged(&server, &classes, "StorageClass", "changes").await;
    assert_eq!(nodes.get("", "n2").unwrap()["spec"]["unschedulable"], true);
    let in_a: Vec<_> =
        server.list("ReplicaSet").iter().filter(|r| r["metadata"]["namespace"] == "a").cloned().collect();
    eventually("the namespaced mirror", WAIT, || ready(replicasets_a.summary() == summarize(&in_a))).await;
    let requests = server.requests();
    assert!(requests
        .iter()
        .any(|r| r.path == "/apis/apps/v1/namespaces/a/replicasets" && r.query.contains("watch=true")));
    assert!(requests.iter().any(|r| r.path == "/apis/storage.k8s.io/v1/storageclasses"));

    // GET, and its 404.
    let node_api: Api<Node> = Api::all(client.clone());
    let n1 = node_api.get("n1").await.unwrap();
    assert_eq!(n1.metadata.uid.as_deref(), Some(uid_of(&server, "Node", "", "n1").as_str()));
    let status = api_error(node_api.get("nope").await);
    assert_eq!(
        (status.code, status.reason.as_str(), status.message.as_str()),
        (404, "NotFound", r#"nodes "nope" not found"#)
    );
    let status = api_error(Api::<ReplicaSet>::namespaced(client.clone(), "a").get("missing").await);
    assert_eq!(status.message, r#"replicasets.apps "missing" not found"#);

    // 403 on list, watch and get, with the real messages.
    server.forbid("list", "nodes");
    let status = api_error(node_api.list(&ListParams::default()).await);
    assert_eq!((status.code, status.reason.as_str()), (403, "Forbidden"));
    assert_eq!(
        status.message,
        format!(
            r#"nodes is forbidden: User "{USER}" cannot list resource "nodes" in API group "" at the cluster scope"#
        )
    );
    server.forbid("watch", "storageclasses");
    let status =
        api_error(Api::<StorageClass>::all(client.clone()).watch(&WatchParams::default(), "0").await.map(|_| ()));
    assert_eq!(
        status.message,
        format!(
            r#"storageclasses.storage.k8s.io is forbidden: User "{USER}" cannot watch resource "storageclasses" in API group "storage.k8s.io" at the cluster scope"#
        )
    );
    server.forbid("get", "pods");
    let status = api_error(Api::<Pod>::namespaced(client.clone(), "default").get("x").await);
    assert_eq!(
        status.message,
        format!(
            r#"pods "x" is forbidden: User "{USER}" cannot get resource "pods" in API group "" in the namespace "default""#
        )
    );

    // set_delay slows every response.
    server.set_delay(Duration::from_millis(300));
    let started = Instant::now();
    node_api.get("n1").await.unwrap();
    assert!(started.elapsed() >= Duration::from_millis(300));
    server.set_delay(Duration::ZERO);
}

/// The raw bytes of a watch body until it ends or breaks, and how it stopped.
async fn read_raw(resp: &mut reqwest::Response) -> (String, Result<(), String>) {
    let mut buffer = Vec::new();
    let end = loop {
        match resp.chunk().await {
            Ok(Some(chunk)) => buffer.extend_from_slice(&chunk),
            Ok(None) => break Ok(()),
            Err(e) => break Err(e.to_string()),
        }
    };
    (String::from_utf8_lossy(&buffer).into_owned(), end)
}

#[tokio::test]
async fn watch_faults_cut_mid_line_stall_duplicate_replay_and_fail() {
    let server = FakeApiServer::start().await;
    let rv0 = server.apply(pod_json("default", "a", "", "100m"));
    let http = reqwest::Client::new();
    let watch_url = |rv: &str, timeout: u32, bookmarks: bool| {
        format!(
            "{}/api/v1/pods?watch=true&timeoutSeconds={timeout}&allowWatchBookmarks={bookmarks}&resourceVersion={rv}",
            server.url()
        )
    };

    // Cut mid-line: the next event arrives as half a line, then the connection breaks.
    let mut resp = http.get(watch_url(&rv0, 60, false)).send().await.unwrap();
    eventually("the watch to open", WAIT, || ready(server.open_watches("Pod") == 1)).await;
    server.cut_watches_mid_line();
    server.apply(pod_json("default", "b", "", "100m"));
    let (text, end) = read_raw(&mut resp).await;
    assert!(end.is_err(), "a cut connection is not a clean end: {text}");
    assert!(text.starts_with(r#"{"type":"ADDED","object":{"kind":"Pod""#), "{text}");
    assert!(!text.contains('\n') && serde_json::from_str::<Value>(&text).is_err(), "half a line: {text}");

    // Stall: nothing more, not even bookmarks or the end at timeoutSeconds.
    let mut resp = http.get(watch_url(&server.resource_version(), 1, true)).send().await.unwrap();
    eventually("the watch to open", WAIT, || ready(server.open_watches("Pod") == 1)).await;
    server.stall_watches();
    server.apply(pod_json("default", "c", "", "100m"));
    let silent = tokio::time::timeout(Duration::from_millis(1500), read_raw(&mut resp)).await;
    assert!(silent.is_err(), "a stalled watch neither sends nor ends: {silent:?}");
    drop(resp);
    eventually("the stalled watch to close with its client", WAIT, || ready(server.open_watches("Pod") == 0)).await;

    // Duplicates and replays: a watch from rv0 with replay 1 gets "a" again, then b and c, each twice.
    server.duplicate_events(true);
    server.replay_events(1);
    let mut resp = http.get(watch_url(&rv0, 1, false)).send().await.unwrap();
    let (events, end) = read_watch(&mut resp).await;
    assert_eq!(end, Ok(()));
    let names: Vec<&str> = events.iter().map(|e| e["object"]["metadata"]["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["a", "a", "b", "b", "c", "c"]);
    server.duplicate_events(false);
    server.replay_events(0);

    // Failing watches: 500, then an in-stream 410 though nothing was compacted, then a normal watch.
    server.fail_watches("Pod", [fake_apiserver::WatchFault::InternalError, fake_apiserver::WatchFault::Gone]);
    let resp = http.get(watch_url(&server.resource_version(), 1, false)).send().await.unwrap();
    assert_eq!(resp.status(), 500);
    let status: Value = resp.json().await.unwrap();
    assert_eq!(status["reason"], "InternalError");
    let mut resp = http.get(watch_url(&server.resource_version(), 1, false)).send().await.unwrap();
    let (events, _) = read_watch(&mut resp).await;
    assert_eq!(
        (events.len(), events[0]["type"].as_str(), events[0]["object"]["code"].as_u64()),
        (1, Some("ERROR"), Some(410))
    );
    let mut resp = http.get(watch_url(&rv0, 1, false)).send().await.unwrap();
    let (events, _) = read_watch(&mut resp).await;
    assert_eq!(events.len(), 2, "b and c: {events:?}");

    // A bounded history: watches from before the oldest kept event get 410.
    server.set_history_limit(1);
    let mut resp = http.get(watch_url(&rv0, 1, false)).send().await.unwrap();
    let (events, _) = read_watch(&mut resp).await;
    assert_eq!(events[0]["object"]["code"], 410, "{events:?}");
}

#[tokio::test]
async fn list_faults_fail_hang_and_expire_a_continue_page() {
    use fake_apiserver::ListFault;
    let server = FakeApiServer::start().await;
    for name in ["p1", "p2", "p3"] {
        server.apply(pod_json("default", name, "", "100m"));
    }
    let http = reqwest::Client::new();
    let url = |query: &str| format!("{}/api/v1/pods?{query}", server.url());
    server.fail_lists(
        "Pod",
        [ListFault::ExpiredContinue, ListFault::InternalError, ListFault::Hang(Duration::from_millis(400))],
    );

    // The expired-continue fault waits for a continue page; the first page takes the 500.
    let resp = http.get(url("limit=2")).send().await.unwrap();
    assert_eq!(resp.status(), 500);
    let started = Instant::now();
    let first: Value = http.get(url("limit=2")).send().await.unwrap().json().await.unwrap();
    assert!(started.elapsed() >= Duration::from_millis(400), "the hang");
    let token = first["metadata"]["continue"].as_str().unwrap();
    let resp = http.get(url(&format!("limit=2&continue={token}"))).send().await.unwrap();
    assert_eq!(resp.status(), 410);
    let status: Value = resp.json().await.unwrap();
    assert_eq!(status["reason"], "Expired");
    // Faults used up: lists answer again.
    let all: Value = http.get(url("")).send().await.unwrap().json().await.unwrap();
    assert_eq!(all["items"].as_array().unwrap().len(), 3);
    assert_eq!(server.list_count("Pod"), 4);
}

#[tokio::test]
async fn bind_faults_fail_hang_or_bind_and_are_recorded() {
    use fake_apiserver::BindFault;
    let server = FakeApiServer::start().await;
    for name in ["a", "b", "c", "d", "e"] {
        server.apply(pod_json("default", name, "", "100m"));
    }
    let faults = [
        Some(BindFault::Conflict),
        Some(BindFault::InternalError),
        Some(BindFault::HangThenFail(Duration::from_millis(300))),
        Some(BindFault::BindThenHang(Duration::from_millis(300))),
        None,
    ];
    server.bind_faults(Some(Box::new(move |_pod, attempt| faults[attempt as usize % 5])));
    let pods: Api<Pod> = Api::namespaced(client(&server).await, "default");
    let pp = PostParams::default();
    let mut codes = Vec::new();
    for name in ["a", "b", "c", "d", "e"] {
        let started = Instant::now();
        let result = pods.create_subresource::<_, Value>("binding", name, &pp, &binding(name, "n1", None)).await;
        let code = match result {
            Ok(_) => 201,
            Err(kube::Error::Api(status)) => status.code,
            Err(e) => panic!("{name}: {e}"),
        };
        codes.push((code, started.elapsed() >= Duration::from_millis(300)));
    }
    // kube's client retries a 504 on its own: c's second attempt meets the bind-then-hang fault, so
    // c is bound and its answer late; d gets no fault, e the conflict again.
    assert_eq!(codes, [(409, false), (500, false), (201, true), (201, false), (409, false)]);
    let records: Vec<(String, u16, bool)> = server.bindings().into_iter().map(|r| (r.pod, r.status, r.bound)).collect();
    let record = |pod: &str, status: u16, bound: bool| (format!("default/{pod}"), status, bound);
    assert_eq!(
        records,
        [
            record("a", 409, false),
            record("b", 500, false),
            record("c", 504, false),
            record("c", 201, true),
            record("d", 201, true),
            record("e", 409, false)
        ]
    );
    for (name, bound) in [("a", false), ("b", false), ("c", true), ("d", true), ("e", false)] {
        assert_eq!(server.get("Pod", "default", name).unwrap()["spec"]["nodeName"] == "n1", bound, "{name}");
    }
}
