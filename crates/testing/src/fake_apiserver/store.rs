//! The objects, their change history, and the state of the faults.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use super::{now_rfc3339, BindFault, BindFaults, BindingRecord, KindInfo, ListFault, RecordedRequest, WatchFault};

/// An object as stored: its JSON text without `kind` and `apiVersion` (the form of a typed list's
/// items), shared by the store, the history and the continue snapshots.
pub(super) type Text = Arc<str>;

/// `(kind, namespace, name)`; the namespace is "" for cluster-scoped kinds.
pub(super) type Key = (&'static str, String, String);

/// The text of an object, without `kind` and `apiVersion`.
pub(super) fn to_text(mut object: Value) -> Text {
    if let Some(m) = object.as_object_mut() {
        m.remove("kind");
        m.remove("apiVersion");
    }
    Arc::from(object.to_string())
}

/// The object as watch events and GETs carry it: with `kind` and `apiVersion` first.
pub(super) fn with_kind(info: &KindInfo, text: &str) -> String {
    let head = format!(r#"{{"kind":"{}","apiVersion":"{}""#, info.kind, info.api_version());
    match text.strip_prefix('{') {
        Some("}") | None => format!("{head}}}"),
        Some(rest) => format!("{head},{rest}"),
    }
}

/// The object as a `Value`, with `kind` and `apiVersion`.
pub(super) fn parse(info: &KindInfo, text: &str) -> Value {
    serde_json::from_str(&with_kind(info, text)).unwrap_or(Value::Null)
}

/// One entry of the change history (what watches replay).
pub(super) struct Event {
    pub rv: u64,
    pub info: &'static KindInfo,
    pub namespace: String,
    pub name: String,
    pub typ: &'static str,
    /// The object as the event carries it (for DELETED: the last state, with the deletion's resourceVersion).
    pub object: Text,
    /// The state before the change (None for ADDED).
    pub old: Option<Text>,
}

/// The rest of a paged list, kept under its continue token.
pub(super) struct ContinueSnapshot {
    pub kind: &'static str,
    pub namespace: Option<String>,
    pub rv: u64,
    pub remaining: Vec<Text>,
}

#[derive(Default)]
pub(super) struct Store {
    pub rv: u64,
    next_uid: u64,
    pub objects: BTreeMap<Key, Text>,
    pub history: VecDeque<Event>,
    pub history_limit: Option<usize>,
    /// Watches from a resourceVersion below this get 410 Expired.
    pub compacted_rv: u64,
    /// Events up to here may be sent to watches; above it they are held.
    pub delivered_rv: u64,
    pub hold: bool,
    pub delay: Duration,
    pub forbidden: HashSet<(String, String)>,
    pub record_requests: bool,
    pub requests: Vec<RecordedRequest>,
    pub watch_counts: HashMap<&'static str, usize>,
    pub list_counts: HashMap<&'static str, usize>,
    pub open_watches: HashMap<&'static str, usize>,
    pub continues: HashMap<String, ContinueSnapshot>,
    pub next_continue: u64,
    pub drop_gen: u64,
    pub cut_gen: u64,
    pub stall_gen: u64,
    pub expire_gen: u64,
    pub duplicate: bool,
    pub replay: usize,
    pub list_faults: HashMap<&'static str, VecDeque<ListFault>>,
    pub watch_faults: HashMap<&'static str, VecDeque<WatchFault>>,
    pub bind_faults: Option<BindFaults>,
    pub bind_attempts: u64,
    pub bindings: Vec<BindingRecord>,
    pub shutdown: bool,
}

impl Store {
    pub fn new() -> Store {
        Store { record_requests: true, ..Store::default() }
    }

    pub fn is_forbidden(&self, verb: &str, resource: &str) -> bool {
        self.forbidden.contains(&(verb.to_string(), resource.to_string()))
    }

    fn new_uid(&mut self) -> String {
        self.next_uid += 1;
        format!("6f1d0c3e-0000-4000-8000-{:012x}", self.next_uid)
    }

    pub fn record(&mut self, info: &'static KindInfo, key: &Key, typ: &'static str, object: Text, old: Option<Text>) {
        let (namespace, name) = (key.1.clone(), key.2.clone());
        self.history.push_back(Event { rv: self.rv, info, namespace, name, typ, object, old });
        if !self.hold {
            self.delivered_rv = self.rv;
        }
        self.trim_history();
    }

    /// Drops the oldest events beyond the limit; watches from before them can no longer be served.
    pub fn trim_history(&mut self) {
        let Some(limit) = self.history_limit else { return };
        while self.history.len() > limit {
            if let Some(dropped) = self.history.pop_front() {
                self.compacted_rv = self.compacted_rv.max(dropped.rv);
            }
        }
    }

    /// The object's text, if it exists; `namespace` is ignored for cluster-scoped kinds.
    pub fn object(&self, info: &'static KindInfo, namespace: &str, name: &str) -> Option<Text> {
        let namespace = if info.namespaced { namespace } else { "" };
        self.objects.get(&(info.kind, namespace.to_string(), name.to_string())).cloned()
    }

    /// Every object of a kind, sorted by namespace and name.
    pub fn of_kind(&self, info: &'static KindInfo) -> impl Iterator<Item = (&Key, &Text)> {
        let from: Key = (info.kind, String::new(), String::new());
        self.objects.range(from..).take_while(move |(k, _)| k.0 == info.kind)
    }

    pub fn texts(&self, info: &'static KindInfo) -> Vec<Text> {
        self.of_kind(info).map(|(_, t)| t.clone()).collect()
    }

    pub fn keys(&self, info: &'static KindInfo) -> Vec<(String, String)> {
        self.of_kind(info).map(|(k, _)| (k.1.clone(), k.2.clone())).collect()
    }

    /// See [`super::FakeApiServer::apply`]. Returns the new resourceVersion.
    pub fn apply(&mut self, info: &'static KindInfo, mut object: Value) -> u64 {
        let name = object["metadata"]["name"]
            .as_str()
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| panic!("FakeApiServer::apply: {} without metadata.name", info.kind))
            .to_string();
        let namespace = if info.namespaced {
            object["metadata"]["namespace"].as_str().filter(|n| !n.is_empty()).unwrap_or("default").to_string()
        } else {
            String::new()
        };
        self.rv += 1;
        let rv = self.rv;
        let key: Key = (info.kind, namespace.clone(), name);
        let old = self.objects.get(&key).cloned();
        let old_meta = old.as_ref().map(|t| parse(info, t)["metadata"].clone()).unwrap_or(Value::Null);
        let uid = match object["metadata"]["uid"].as_str().filter(|u| !u.is_empty()) {
            Some(uid) => uid.to_string(),
            None => match old_meta["uid"].as_str() {
                Some(uid) => uid.to_string(),
                None => self.new_uid(),
            },
        };
        let created = match object["metadata"]["creationTimestamp"].as_str() {
            Some(t) => t.to_string(),
            None => match old_meta["creationTimestamp"].as_str() {
                Some(t) => t.to_string(),
                None => now_rfc3339(),
            },
        };
        let obj = object.as_object_mut().expect("FakeApiServer::apply: object must be a JSON object");
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
        let text = to_text(object);
        self.objects.insert(key.clone(), text.clone());
        let typ = if old.is_some() { "MODIFIED" } else { "ADDED" };
        self.record(info, &key, typ, text, old);
        rv
    }

    /// See [`super::FakeApiServer::delete`].
    pub fn delete(&mut self, info: &'static KindInfo, namespace: &str, name: &str) -> bool {
        let namespace = if info.namespaced { namespace } else { "" };
        let key: Key = (info.kind, namespace.to_string(), name.to_string());
        let Some(old) = self.objects.remove(&key) else { return false };
        self.rv += 1;
        let mut object = parse(info, &old);
        object["metadata"]["resourceVersion"] = self.rv.to_string().into();
        self.record(info, &key, "DELETED", to_text(object), Some(old));
        true
    }

    /// Replaces a stored object after a change that is not `apply` (a binding), recording MODIFIED.
    pub fn update(&mut self, info: &'static KindInfo, key: &Key, mut object: Value) {
        let Some(old) = self.objects.get(key).cloned() else { return };
        self.rv += 1;
        object["metadata"]["resourceVersion"] = self.rv.to_string().into();
        let text = to_text(object);
        self.objects.insert(key.clone(), text.clone());
        self.record(info, key, "MODIFIED", text, Some(old));
    }

    /// The fault for the next list request of a kind, if one is due (`continued`: it carries a
    /// continue token).
    pub fn take_list_fault(&mut self, kind: &'static str, continued: bool) -> Option<ListFault> {
        let queue = self.list_faults.get_mut(kind)?;
        // An expired-continue fault waits for a continue page without holding up the others.
        let at = queue.iter().position(|f| continued || *f != ListFault::ExpiredContinue)?;
        queue.remove(at)
    }

    pub fn take_watch_fault(&mut self, kind: &'static str) -> Option<WatchFault> {
        self.watch_faults.get_mut(kind)?.pop_front()
    }

    pub fn take_bind_fault(&mut self, pod: &str) -> Option<BindFault> {
        let attempt = self.bind_attempts;
        self.bind_attempts += 1;
        self.bind_faults.as_mut().and_then(|choose| choose(pod, attempt))
    }
}
