//! The current snapshot: one writer at a time, readers never wait longer than a pointer load.

use std::sync::Arc;

use parking_lot::Mutex;

use arc_swap::ArcSwap;

use crate::cluster::snapshot::Snapshot;

/// Holds the cluster model and swaps in a new snapshot on every change.
#[derive(Debug)]
pub struct ClusterStore {
    current: ArcSwap<Snapshot>,
    writer: Mutex<()>,
}

impl ClusterStore {
    pub fn new(snapshot: Snapshot) -> Self {
        ClusterStore { current: ArcSwap::from_pointee(snapshot), writer: Mutex::new(()) }
    }

    /// The snapshot a request reads from start to end.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.current.load_full()
    }

    /// Applies a change to a copy of the current snapshot and publishes it if `change` succeeds.
    /// Writers are serialised, so no change is lost.
    pub fn update<T, E>(&self, change: impl FnOnce(&mut Snapshot) -> Result<T, E>) -> Result<T, E> {
        // A writer that panicked left no half-made snapshot behind: the copy was dropped.
        let _guard = self.writer.lock();
        let mut next = (*self.current.load_full()).clone();
        let out = change(&mut next)?;
        self.current.store(Arc::new(next));
        Ok(out)
    }
}
