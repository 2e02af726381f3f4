//! Watch streams: one JSON event per line, bookmarks, `410 Expired`, and the watch faults.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use serde_json::{json, Value};
use tokio::sync::{mpsc, watch as notify};

use super::selectors::Selectors;
use super::status::{forbidden_response, internal_error, status_body, status_response};
use super::store::{with_kind, Event, Key, Store, Text};
use super::{KindInfo, Shared, WatchFault, BOOKMARK_INTERVAL};

/// The watch length when the client sends no `timeoutSeconds` (the real server picks 30 to 60 minutes).
const DEFAULT_WATCH_TIMEOUT: Duration = Duration::from_secs(1800);

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
    fn project(&self, ev: &Event) -> Option<(&'static str, Text)> {
        if ev.info.kind != self.info.kind {
            return None;
        }
        if self.namespace.as_ref().is_some_and(|ns| *ns != ev.namespace) {
            return None;
        }
        let was = ev.old.as_ref().is_some_and(|o| self.selectors.matches_text(o));
        let is = self.selectors.matches_text(&ev.object);
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

    fn in_scope(&self, key: &Key, text: &str) -> bool {
        key.0 == self.info.kind
            && self.namespace.as_deref().is_none_or(|ns| ns == key.1)
            && self.selectors.matches_text(text)
    }

    fn bookmark_line(&self, rv: u64, initial_events_end: bool) -> String {
        let mut metadata = json!({"resourceVersion": rv.to_string()});
        if initial_events_end {
            metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        value_line(
            "BOOKMARK",
            &json!({"kind": self.info.kind, "apiVersion": self.info.api_version(), "metadata": metadata}),
        )
    }

    fn event_line(&self, typ: &str, text: &str) -> String {
        format!("{{\"type\":\"{typ}\",\"object\":{}}}\n", with_kind(self.info, text))
    }
}

/// The objects in scope as of `delivered_rv` (the current state with held events undone), sorted.
fn state_as_delivered(st: &Store, spec: &WatchSpec) -> Vec<Text> {
    let mut objects: BTreeMap<Key, Text> = st.of_kind(spec.info).map(|(k, v)| (k.clone(), v.clone())).collect();
    for ev in st.history.iter().rev().take_while(|ev| ev.rv > st.delivered_rv) {
        if ev.info.kind != spec.info.kind {
            continue;
        }
        let key: Key = (ev.info.kind, ev.namespace.clone(), ev.name.clone());
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

pub(super) fn start_watch(
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
    let fault = st.take_watch_fault(info.kind);
    if fault == Some(WatchFault::InternalError) {
        return internal_error();
    }
    let (tx, rx) = mpsc::channel::<Chunk>(256);
    let body = Body::from_stream(futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|c| (c, rx)) }));
    let response = watch_response(body);

    let too_old = start.filter(|rv| *rv < st.compacted_rv);
    if too_old.is_some() || fault == Some(WatchFault::Gone) {
        let line = match too_old {
            Some(rv) => expired_line(rv, st.compacted_rv),
            None => expired_line(start.unwrap_or(0), st.rv),
        };
        drop(st);
        let _ = tx.try_send(Ok(Bytes::from(line)));
        return response;
    }
    let changed = shared.changed.subscribe();
    let initial = if spec.send_initial_events { state_as_delivered(&st, &spec) } else { Vec::new() };
    let cursor = match start {
        Some(rv) if !spec.send_initial_events => replay_start(&st, rv),
        _ => st.delivered_rv,
    };
    let gens = Generations { drop: st.drop_gen, cut: st.cut_gen, stall: st.stall_gen, expire: st.expire_gen };
    *st.open_watches.entry(info.kind).or_default() += 1;
    drop(st);
    let guard = OpenWatch { shared: shared.clone(), kind: info.kind };
    let mark_initial_end = send_initial_events == Some(true);
    tokio::spawn(serve_watch(guard, spec, tx, changed, initial, cursor, gens, mark_initial_end));
    response
}

/// Where a watch from `rv` starts: there, or `replay` events earlier (as far as the history goes).
fn replay_start(st: &Store, rv: u64) -> u64 {
    if st.replay == 0 {
        return rv;
    }
    let next = st.history.partition_point(|ev| ev.rv <= rv);
    match next.checked_sub(st.replay).and_then(|i| st.history.get(i)).or(st.history.front()) {
        Some(first) if first.rv <= rv => first.rv - 1,
        _ => rv,
    }
}

/// The fault counters as they were when a watch started: a change since then hits it.
#[derive(Clone, Copy)]
struct Generations {
    drop: u64,
    cut: u64,
    stall: u64,
    expire: u64,
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
    Cut(Vec<String>),
    Stall,
    Expire(String),
    Shutdown,
}

fn aborted(why: &str) -> Chunk {
    Err(std::io::Error::new(std::io::ErrorKind::ConnectionAborted, format!("fault: {why}")))
}

#[allow(clippy::too_many_arguments)]
async fn serve_watch(
    guard: OpenWatch,
    spec: WatchSpec,
    tx: mpsc::Sender<Chunk>,
    mut changed: notify::Receiver<u64>,
    initial: Vec<Text>,
    mut cursor: u64,
    gens: Generations,
    mark_initial_end: bool,
) {
    let send = |line: String| {
        let tx = tx.clone();
        async move { tx.send(Ok(Bytes::from(line))).await.is_ok() }
    };
    for object in initial {
        if !send(spec.event_line("ADDED", &object)).await {
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
            } else if st.drop_gen != gens.drop {
                Step::Drop
            } else if st.stall_gen != gens.stall {
                Step::Stall
            } else if st.expire_gen != gens.expire || cursor < st.compacted_rv {
                // Compacted, or this watch fell further behind than the history reaches.
                Step::Expire(expired_line(cursor, st.compacted_rv))
            } else {
                let from = st.history.partition_point(|ev| ev.rv <= cursor);
                let mut lines = Vec::new();
                for ev in st.history.range(from..).take_while(|ev| ev.rv <= st.delivered_rv) {
                    if let Some((typ, object)) = spec.project(ev) {
                        let line = spec.event_line(typ, &object);
                        if st.duplicate {
                            lines.push(line.clone());
                        }
                        lines.push(line);
                    }
                }
                cursor = cursor.max(st.delivered_rv);
                if st.cut_gen != gens.cut && !lines.is_empty() {
                    Step::Cut(lines)
                } else {
                    Step::Lines(lines)
                }
            }
        };
        match step {
            Step::Shutdown => return,
            Step::Drop => {
                let _ = tx.send(aborted("drop_watches")).await;
                return;
            }
            Step::Cut(lines) => {
                let line = &lines[0];
                let half = line.len() / 2;
                let half = (0..=half).rev().find(|i| line.is_char_boundary(*i)).unwrap_or(0);
                if send(line[..half].to_string()).await {
                    // Let the half line reach the socket before the connection breaks.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    let _ = tx.send(aborted("cut_watches_mid_line")).await;
                }
                return;
            }
            Step::Stall => {
                // A dead connection: nothing more, not even the end at timeoutSeconds.
                loop {
                    tokio::select! {
                        changed = changed.changed() => {
                            if changed.is_err() || guard.shared.lock().shutdown {
                                return;
                            }
                        }
                        _ = tx.closed() => return,
                    }
                }
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

fn value_line(typ: &str, object: &Value) -> String {
    let mut line = json!({"type": typ, "object": object}).to_string();
    line.push('\n');
    line
}

fn expired_line(rv: u64, compacted: u64) -> String {
    value_line("ERROR", &status_body(410, "Expired", &format!("too old resource version: {rv} ({compacted})"), None))
}

fn watch_response(body: Body) -> Response {
    let mut response = Response::new(body);
    *response.status_mut() = StatusCode::OK;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}
