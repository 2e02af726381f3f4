//! One kind's list and watch, kept running: list (in pages) and replace the kind in the model,
//! then watch from the list's resourceVersion, applying events in batches; on `410 Gone` list
//! again; on any other error back off and resume from the last resourceVersion seen.
//!
//! Written on kube-client's `list` and `watch` rather than kube-runtime's `watcher`, because
//! readiness needs to know when a failing watch has recovered, and `watcher` does not report a
//! successful re-watch or a bookmark. The backoff is kube-runtime's.

use std::sync::Arc;
use std::time::Duration;

use futures::{FutureExt, StreamExt};
use kube::api::{ListParams, WatchEvent, WatchParams};
use kube::runtime::watcher::DefaultBackoff;
use kube::{Api, ResourceExt};

use crate::cluster::model_writer::{Change, ModelWriter};
use crate::cluster::source::kube::health::WatchHealth;
use crate::cluster::source::kube::kinds::WatchedKind;
use crate::cluster::ClusterObject;

/// Tuning of the list and watch calls.
#[derive(Debug, Clone, Copy)]
pub struct WatchSettings {
    /// Objects per list page (the API server's default chunking).
    pub page_size: u32,
    /// Server-side timeout of one watch call; the watch is then resumed.
    pub watch_timeout_seconds: u32,
    /// Most events applied as one snapshot.
    pub max_batch: usize,
}

impl Default for WatchSettings {
    fn default() -> Self {
        // 290s: kube-runtime's choice, below kube-client's 295s read timeout.
        WatchSettings { page_size: 500, watch_timeout_seconds: 290, max_batch: 1024 }
    }
}

/// Why a list or watch step stopped.
enum Interrupted {
    /// `410 Gone`: the resourceVersion is too old; list again.
    Gone,
    /// Anything else: back off, then watch again from the last resourceVersion.
    Failed(String),
    /// The server ended the watch (its timeout): watch again at once.
    Ended,
}

fn is_gone(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(status) if status.code == 410)
}

/// Lists every page of a kind; returns the objects and the list's resourceVersion.
pub(crate) async fn list_all<K: WatchedKind>(
    api: &Api<K>,
    settings: WatchSettings,
) -> Result<(Vec<ClusterObject>, String), kube::Error> {
    let mut objects = Vec::new();
    let mut params = ListParams::default().limit(settings.page_size);
    loop {
        let page = api.list(&params).await?;
        objects.extend(page.items.into_iter().map(K::into_object));
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => return Ok((objects, page.metadata.resource_version.unwrap_or_default())),
        }
    }
}

/// Runs one kind's list and watch until the task is aborted.
pub async fn run<K: WatchedKind>(
    api: Api<K>,
    writer: Arc<ModelWriter>,
    health: Arc<WatchHealth>,
    settings: WatchSettings,
) {
    let kind = K::KIND;
    let resource = kind.resource();
    let mut backoff = DefaultBackoff::default();
    loop {
        let (objects, mut version) = match list_all(&api, settings).await {
            Ok(listed) => listed,
            Err(e) => {
                let wait = backoff.next().unwrap_or(Duration::from_secs(30));
                tracing::warn!(resource, error = %e, retry_in = ?wait, "list failed");
                health.failed(kind, format!("list: {e}"));
                tokio::time::sleep(wait).await;
                continue;
            }
        };
        let count = objects.len();
        writer.replace(kind, objects);
        health.listed(kind);
        backoff = DefaultBackoff::default();
        tracing::info!(resource, count, resource_version = %version, "listed");

        // Whether opening a watch shows the kind is healthy again: not after a watch that failed
        // before delivering anything (an object that cannot be decoded, an error event on every
        // attempt), which would otherwise reset the staleness clock on every retry.
        let mut open_is_progress = true;
        loop {
            let opened = std::time::Instant::now();
            let (why, delivered) = watch_once(&api, &writer, &health, settings, &mut version, open_is_progress).await;
            match why {
                Interrupted::Ended => {
                    open_is_progress = true;
                    // A server or proxy that closes watches at once must not make this a busy loop.
                    if opened.elapsed() < Duration::from_secs(1) && !delivered {
                        tokio::time::sleep(backoff.next().unwrap_or(Duration::from_secs(30))).await;
                    }
                }
                Interrupted::Gone => {
                    tracing::info!(resource, resource_version = %version, "resourceVersion expired (410 Gone) or lost; listing again");
                    break;
                }
                Interrupted::Failed(error) => {
                    open_is_progress = delivered;
                    let wait = backoff.next().unwrap_or(Duration::from_secs(30));
                    tracing::warn!(resource, %error, retry_in = ?wait, "watch failed");
                    health.failed(kind, format!("watch: {error}"));
                    tokio::time::sleep(wait).await;
                }
            }
        }
    }
}

/// One watch call: applies its events until it ends or fails. `version` follows the events.
/// Returns why it stopped and whether it delivered any event or bookmark.
async fn watch_once<K: WatchedKind>(
    api: &Api<K>,
    writer: &ModelWriter,
    health: &WatchHealth,
    settings: WatchSettings,
    version: &mut String,
    open_is_progress: bool,
) -> (Interrupted, bool) {
    if version.is_empty() {
        // Watching from "" would start from "any" version and miss deletions: list again.
        return (Interrupted::Gone, false);
    }
    let params = WatchParams { bookmarks: true, ..WatchParams::default() }.timeout(settings.watch_timeout_seconds);
    let stream = match api.watch(&params, version).await {
        Ok(s) => s,
        Err(e) if is_gone(&e) => return (Interrupted::Gone, false),
        Err(e) => return (Interrupted::Failed(e.to_string()), false),
    };
    if open_is_progress {
        health.progressed(K::KIND);
    }
    let mut delivered = false;
    let mut stream = std::pin::pin!(stream);
    loop {
        let Some(first) = stream.next().await else { return (Interrupted::Ended, delivered) };
        // Whatever else has already arrived goes into the same snapshot.
        let mut batch = vec![first];
        while batch.len() < settings.max_batch {
            match stream.next().now_or_never() {
                Some(Some(item)) => batch.push(item),
                _ => break,
            }
        }
        let mut changes = Vec::with_capacity(batch.len());
        let mut interrupted = None;
        for item in batch {
            match item {
                Ok(WatchEvent::Added(o) | WatchEvent::Modified(o)) => {
                    *version = o.resource_version().unwrap_or_default();
                    changes.push(Change::Upsert(o.into_object()));
                }
                Ok(WatchEvent::Deleted(o)) => {
                    *version = o.resource_version().unwrap_or_default();
                    let object = o.into_object();
                    changes.push(Change::Delete(object.kind(), object.key()));
                }
                Ok(WatchEvent::Bookmark(b)) => *version = b.metadata.resource_version,
                Ok(WatchEvent::Error(status)) if status.code == 410 => {
                    interrupted = Some(Interrupted::Gone);
                    break;
                }
                Ok(WatchEvent::Error(status)) => {
                    interrupted = Some(Interrupted::Failed(format!("{} ({})", status.message, status.code)));
                    break;
                }
                Err(e) if is_gone(&e) => {
                    interrupted = Some(Interrupted::Gone);
                    break;
                }
                Err(e) => {
                    interrupted = Some(Interrupted::Failed(e.to_string()));
                    break;
                }
            }
            delivered = true;
        }
        writer.apply(changes);
        if let Some(why) = interrupted {
            return (why, delivered);
        }
        if version.is_empty() {
            return (Interrupted::Gone, delivered);
        }
        health.progressed(K::KIND);
    }
}
