//! How each watch is doing, for `/readyz` (and, later, metrics): listed at least once or not, and
//! since when it has been failing.

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde::Serialize;

use predicate_engine::cluster::ObjectKind;

#[derive(Debug, Default)]
struct KindHealth {
    synced: bool,
    /// Set at the first error after a success; cleared by the next success.
    failing_since: Option<Instant>,
    last_error: String,
    last_event: Option<Instant>,
    /// Lists completed: the first one, then one per relist (after `410 Gone`).
    lists: u64,
}

/// The state of every watch of the live cluster source.
#[derive(Debug)]
pub struct WatchHealth {
    kinds: Mutex<BTreeMap<ObjectKind, KindHealth>>,
    max_staleness: Duration,
}

/// A watch that has been failing for longer than `--max-cache-staleness`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StaleWatch {
    pub resource: &'static str,
    pub failing_for_seconds: u64,
    pub last_error: String,
}

/// What `/readyz` reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HealthReport {
    pub ready: bool,
    /// Resources whose first list has not completed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_synced: Vec<&'static str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stale: Vec<StaleWatch>,
}

impl WatchHealth {
    /// Tracks these kinds, none synced yet.
    pub fn new(kinds: impl IntoIterator<Item = ObjectKind>, max_staleness: Duration) -> Self {
        let kinds = kinds.into_iter().map(|k| (k, KindHealth::default())).collect();
        WatchHealth { kinds: Mutex::new(kinds), max_staleness }
    }

    fn with<T>(&self, kind: ObjectKind, f: impl FnOnce(&mut KindHealth) -> T) -> T {
        let mut kinds = self.kinds.lock();
        f(kinds.entry(kind).or_default())
    }

    /// A list completed.
    pub fn listed(&self, kind: ObjectKind) {
        self.with(kind, |h| {
            h.synced = true;
            h.lists += 1;
            h.failing_since = None;
            h.last_event = Some(Instant::now());
        });
    }

    /// A watch started or delivered events.
    pub fn progressed(&self, kind: ObjectKind) {
        self.with(kind, |h| {
            h.failing_since = None;
            h.last_event = Some(Instant::now());
        });
    }

    /// A list or watch failed, or the watch stopped: changes may be missed from now until the next
    /// list completes or watch opens.
    pub fn failed(&self, kind: ObjectKind, error: String) {
        self.with(kind, |h| {
            h.failing_since.get_or_insert_with(Instant::now);
            h.last_error = error;
        });
    }

    /// When each watch last listed or delivered something.
    pub fn last_events(&self) -> Vec<(ObjectKind, Option<Instant>)> {
        let kinds = self.kinds.lock();
        kinds.iter().map(|(k, h)| (*k, h.last_event)).collect()
    }

    /// How many lists of each kind have completed (the first one and every relist).
    pub fn lists(&self) -> Vec<(ObjectKind, u64)> {
        let kinds = self.kinds.lock();
        kinds.iter().map(|(k, h)| (*k, h.lists)).collect()
    }

    /// Whether every watch has listed once (the model can answer requests).
    pub fn synced(&self) -> bool {
        let kinds = self.kinds.lock();
        kinds.values().all(|h| h.synced)
    }

    pub fn report(&self, now: Instant) -> HealthReport {
        let kinds = self.kinds.lock();
        let not_synced: Vec<&'static str> =
            kinds.iter().filter(|(_, h)| !h.synced).map(|(k, _)| k.resource()).collect();
        let stale: Vec<StaleWatch> = kinds
            .iter()
            .filter_map(|(k, h)| {
                let failing_for = now.saturating_duration_since(h.failing_since?);
                (failing_for >= self.max_staleness).then(|| StaleWatch {
                    resource: k.resource(),
                    failing_for_seconds: failing_for.as_secs(),
                    last_error: h.last_error.clone(),
                })
            })
            .collect();
        HealthReport { ready: not_synced.is_empty() && stale.is_empty(), not_synced, stale }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ready_once_every_kind_listed_and_unready_while_one_keeps_failing() {
        let h = WatchHealth::new([ObjectKind::Node, ObjectKind::Pod], Duration::from_secs(60));
        let t0 = Instant::now();
        assert_eq!(h.report(t0).not_synced, vec!["nodes", "pods"]);
        h.listed(ObjectKind::Node);
        assert_eq!(h.report(t0).not_synced, vec!["pods"]);
        assert!(!h.synced());
        h.listed(ObjectKind::Pod);
        assert!(h.report(t0).ready && h.synced());

        h.failed(ObjectKind::Pod, "connection refused".into());
        h.failed(ObjectKind::Pod, "connection refused again".into());
        assert!(h.report(Instant::now() + Duration::from_secs(59)).ready, "not stale yet");
        let late = h.report(Instant::now() + Duration::from_secs(61));
        assert!(!late.ready);
        assert_eq!(late.stale.len(), 1);
        assert_eq!(late.stale[0].resource, "pods");
        assert_eq!(late.stale[0].last_error, "connection refused again");

        h.progressed(ObjectKind::Pod);
        assert!(h.report(Instant::now() + Duration::from_secs(120)).ready, "recovered");
    }
}
