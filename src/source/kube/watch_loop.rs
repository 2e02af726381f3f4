//! One kind's list and watch, kept running: list (in pages) and replace the kind in the model,
//! then watch from the list's resourceVersion, applying events in batches; on `410 Gone` list
//! again; on any other error back off and resume from the last resourceVersion seen. Every list
//! page and every watch opening has a deadline, and a watch that stays silent past its timeout is
//! given up: kube's client has no read timeout of its own.
//!
//! Written on kube-client's `list` and `watch` rather than kube-runtime's `watcher`, because
//! readiness needs to know when a failing watch has recovered, and `watcher` does not report a
//! successful re-watch or a bookmark. The backoff is kube-runtime's default one (client-go's
//! reflector's), on backon.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use backon::{BackoffBuilder, ExponentialBuilder};
use futures::{FutureExt, StreamExt};
use kube::api::{WatchEvent, WatchParams};
use kube::{Api, ResourceExt};

use crate::source::kube::health::WatchHealth;
use crate::source::kube::kinds::WatchedKind;
use crate::source::kube::list_pages::list_pages;
use predicate_engine::cluster::model_writer::{Change, ModelWriter};
use predicate_engine::cluster::{ClusterObject, ObjectKey};

/// Tuning of the list and watch calls.
#[derive(Debug, Clone, Copy)]
pub struct WatchSettings {
    /// Objects per list page (the API server's default chunking).
    pub page_size: u32,
    /// Server-side timeout of one watch call; the watch is then resumed.
    pub watch_timeout_seconds: u32,
    /// Most events applied as one snapshot.
    pub max_batch: usize,
    /// Longest wait for a list page, or for a watch to open.
    pub request_timeout: Duration,
    /// The pause after a failed list or watch: the first, doubled (with jitter) after each further
    /// failure, up to the longest.
    pub backoff_initial: Duration,
    pub backoff_max: Duration,
}

impl WatchSettings {
    fn backoff(&self) -> Backoff {
        let exponential = ExponentialBuilder::default()
            .with_min_delay(self.backoff_initial)
            .with_max_delay(self.backoff_max)
            .with_factor(2.0)
            .with_jitter()
            .without_max_times();
        Backoff::new(exponential)
    }
}

/// After a pause asked for longer ago than this, the next one starts from the first again.
const BACKOFF_RESET: Duration = Duration::from_secs(120);

/// The pauses after failures: exponential, and started afresh when the previous pause was asked
/// for more than [`BACKOFF_RESET`] ago (kube-runtime's `ResetTimerBackoff` over its
/// `ExponentialBackoff`). On tokio's clock, which tests may pause and advance.
struct Backoff {
    builder: ExponentialBuilder,
    delays: backon::ExponentialBackoff,
    last: Option<tokio::time::Instant>,
}

impl Backoff {
    fn new(builder: ExponentialBuilder) -> Self {
        Backoff { builder, delays: builder.build(), last: None }
    }
}

impl Iterator for Backoff {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        let now = tokio::time::Instant::now();
        if self.last.is_some_and(|last| now.duration_since(last) > BACKOFF_RESET) {
            self.delays = self.builder.build();
        }
        self.last = Some(now);
        self.delays.next()
    }
}

impl Default for WatchSettings {
    fn default() -> Self {
        // 290s: kube-runtime's choice, below kube-client's 295s read timeout.
        WatchSettings {
            page_size: 500,
            watch_timeout_seconds: 290,
            max_batch: 1024,
            request_timeout: Duration::from_secs(60),
            backoff_initial: Duration::from_millis(800),
            backoff_max: Duration::from_secs(30),
        }
    }
}

/// Why a list or watch step stopped.
enum Interrupted {
    /// `410 Gone`: the resourceVersion is too old; list again.
    Gone,
    /// Anything else: back off, then watch again from the last resourceVersion.
    Failed(String),
    /// The server ended the watch (its timeout, or a dropped connection): watch again.
    Ended,
}

/// How long past its `timeoutSeconds` a watch may stay silent before its connection is presumed
/// dead (kube-runtime's margin): the API server ends every watch at that timeout, and sends a
/// bookmark about once a minute before it.
const IDLE_MARGIN: Duration = Duration::from_secs(5);

/// A watch that stayed open this long, or delivered anything, was healthy: the next failure starts
/// the backoff afresh, and opening the next watch counts as recovery.
const HEALTHY_WATCH: Duration = Duration::from_secs(1);

/// Why a list did not complete.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ListError {
    #[error(transparent)]
    Api(#[from] kube::Error),
    #[error("the API server did not answer a list page within {}", humantime::format_duration(*.0))]
    TimedOut(Duration),
    /// The pool decoding a page dropped it (a panic there).
    #[error("a list page was lost while being decoded")]
    Lost,
}

fn is_gone(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(status) if status.code == 410)
}

/// A kind as listed: the key of every object, and the list's resourceVersion.
pub(crate) struct Listed {
    pub keys: HashSet<ObjectKey>,
    pub version: String,
}

/// Lists every page of a kind, each within the request timeout, handing each page's objects that
/// `keep` wants to `kept` as the page is decoded (the others are dropped, their keys kept).
pub(crate) async fn list_all<K: WatchedKind>(
    api: &Api<K>,
    settings: WatchSettings,
    keep: impl Fn(&ClusterObject) -> bool,
    mut kept: impl FnMut(Vec<ClusterObject>),
) -> Result<Listed, ListError> {
    let mut keys = HashSet::new();
    let version = list_pages(api, settings, |page| {
        let mut objects = Vec::new();
        for object in page.into_iter().map(K::into_object) {
            keys.insert(object.key());
            if keep(&object) {
                objects.push(object);
            }
        }
        kept(objects);
    })
    .await?;
    Ok(Listed { keys, version })
}

/// Runs one kind's list and watch until the task is aborted.
///
/// The health of the kind is marked failing from the moment its watch stops, whatever the reason,
/// until a list completes or a watch opens again (and, after a watch that failed before
/// delivering anything or staying open a second, until a watch delivers something): a relist that
/// hangs or keeps failing, or watches that keep breaking, leave the model behind, and `/readyz`
/// says so once that has lasted `--max-cache-staleness`.
pub async fn run<K: WatchedKind>(
    api: Api<K>,
    writer: Arc<ModelWriter>,
    health: Arc<WatchHealth>,
    settings: WatchSettings,
) {
    let kind = K::KIND;
    let resource = kind.resource();
    // Not reset by a list that works: a list followed by a watch that fails at once is no
    // recovery. Reset by a healthy watch.
    let mut backoff = settings.backoff();
    // Watches in a row that ended or met 410 Gone at once, delivering nothing: from the second
    // one on, a server (or proxy) that does this every time must not make a busy loop.
    let mut quick_ends = 0u32;
    // Whether a list of the kind has completed.
    let mut synced = false;
    loop {
        // What the model already has at the listed version is dropped page by page: a relist of a
        // big cluster holds only what changed, not a second copy of the kind. A relist is applied
        // whole, as one snapshot: requests never see it half-applied. Until the kind's first list
        // completes, though, each page goes into the model as it comes (the kind is not synced,
        // and `/readyz` waits for it): the model is built while the next page is fetched.
        let (mut changed, mut changed_count) = (Vec::new(), 0);
        let listed = match list_all(
            &api,
            settings,
            |object| !writer.has_version(object),
            |page| {
                changed_count += page.len();
                if synced {
                    changed.extend(page);
                } else {
                    writer.upsert_listed(page);
                }
            },
        )
        .await
        {
            Ok(listed) => listed,
            Err(e) => {
                let wait = backoff.next().unwrap_or(settings.backoff_max);
                tracing::warn!(resource, error = %e, retry_in = ?wait, "list failed");
                health.failed(kind, format!("list: {e}"));
                tokio::time::sleep(wait).await;
                continue;
            }
        };
        let count = listed.keys.len();
        let mut version = listed.version;
        writer.replace_listed(kind, &listed.keys, changed);
        synced = true;
        health.listed(kind);
        tracing::info!(resource, count, changed = changed_count, resource_version = %version, "listed");

        // Whether opening a watch shows the kind is healthy again: not after a watch that failed
        // before delivering anything or staying open a while (an object that cannot be decoded,
        // an error event on every attempt), which would otherwise reset the staleness clock on
        // every retry.
        let mut open_is_progress = true;
        loop {
            let opened = std::time::Instant::now();
            let (why, delivered) = watch_once(&api, &writer, &health, settings, &mut version, open_is_progress).await;
            let healthy = delivered || opened.elapsed() >= HEALTHY_WATCH;
            if healthy {
                backoff = settings.backoff();
                quick_ends = 0;
            } else if !matches!(why, Interrupted::Failed(_)) {
                quick_ends += 1;
            }
            let pause = quick_ends >= 2;
            match why {
                Interrupted::Ended => {
                    // Everything the stream carried was applied: resuming loses nothing, and the
                    // clock stops as soon as the next watch opens.
                    open_is_progress = true;
                    health.failed(kind, format!("watch: the stream ended at resourceVersion {version}; resuming"));
                    if pause {
                        tokio::time::sleep(backoff.next().unwrap_or(settings.backoff_max)).await;
                    }
                }
                Interrupted::Gone => {
                    tracing::info!(resource, resource_version = %version, "resourceVersion expired (410 Gone) or lost; listing again");
                    health.failed(kind, format!("watch: resourceVersion {version} expired (410 Gone); listing again"));
                    // Fresh watches answered 410 at once, again (an API server whose watch cache
                    // lags behind the list it served): relisting at once would relist in a loop.
                    if pause {
                        tokio::time::sleep(backoff.next().unwrap_or(settings.backoff_max)).await;
                    }
                    break;
                }
                Interrupted::Failed(error) => {
                    open_is_progress = healthy;
                    let wait = backoff.next().unwrap_or(settings.backoff_max);
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
    let stream = match tokio::time::timeout(settings.request_timeout, api.watch(&params, version)).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) if is_gone(&e) => return (Interrupted::Gone, false),
        Ok(Err(e)) => return (Interrupted::Failed(e.to_string()), false),
        Err(_) => {
            let after = humantime::format_duration(settings.request_timeout);
            return (Interrupted::Failed(format!("the API server did not answer the watch within {after}")), false);
        }
    };
    if open_is_progress {
        health.progressed(K::KIND);
    }
    // Without even a bookmark for this long, the connection is dead (no FIN ever came).
    let idle = Duration::from_secs(settings.watch_timeout_seconds.into()) + IDLE_MARGIN;
    let mut delivered = false;
    let mut stream = std::pin::pin!(stream);
    loop {
        let first = match tokio::time::timeout(idle, stream.next()).await {
            Ok(Some(first)) => first,
            Ok(None) => return (Interrupted::Ended, delivered),
            Err(_) => {
                let silent = humantime::format_duration(idle);
                let error = format!("no event or bookmark for {silent}: the connection is presumed dead");
                return (Interrupted::Failed(error), delivered);
            }
        };
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

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(n: u64) -> Option<Duration> {
        Some(Duration::from_secs(n))
    }

    #[tokio::test(start_paused = true)]
    async fn the_backoff_doubles_to_its_longest_and_starts_afresh_after_a_quiet_spell() {
        let exponential = ExponentialBuilder::default()
            .with_min_delay(Duration::from_secs(1))
            .with_max_delay(Duration::from_secs(8))
            .with_factor(2.0)
            .without_max_times();
        let mut backoff = Backoff::new(exponential);
        assert_eq!([backoff.next(), backoff.next(), backoff.next()], [secs(1), secs(2), secs(4)]);
        tokio::time::advance(BACKOFF_RESET).await;
        assert_eq!(backoff.next(), secs(8), "not past the reset time: the backoff goes on");
        assert_eq!(backoff.next(), secs(8), "the longest");
        tokio::time::advance(BACKOFF_RESET + Duration::from_millis(1)).await;
        assert_eq!([backoff.next(), backoff.next()], [secs(1), secs(2)], "afresh after 120s without a pause");
    }

    #[test]
    fn the_default_backoff_is_kube_runtimes() {
        let settings = WatchSettings::default();
        assert_eq!(
            (settings.backoff_initial, settings.backoff_max),
            (Duration::from_millis(800), Duration::from_secs(30))
        );
        // With jitter, each pause is the exponential one plus up to as much again.
        let mut backoff = settings.backoff();
        let first = backoff.next().unwrap();
        assert!(first >= Duration::from_millis(800) && first <= Duration::from_millis(1600), "{first:?}");
    }
}
