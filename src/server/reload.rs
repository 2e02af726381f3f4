//! Files read again while serving (the verbs listener's TLS files, the Policy), and swapped in when
//! their contents change.
//!
//! Reloading polls: every interval the files are read again and compared with what was last read,
//! and SIGHUP reads them at once. Kubernetes updates a Secret or ConfigMap volume by swapping a
//! `..data` symlink in the mounted directory, which inotify on the file paths misses, and mtimes
//! say little across that swap; reading a few KiB every couple of seconds through the path sees
//! every change whatever the volume does, costs nothing next to serving, and keeps the request
//! path free of file-system calls. New contents that do not load are logged once and the previous
//! configuration keeps serving. A poll that falls between two writes (or, for several files,
//! across a symlink swap between reading one and the next) sees a broken state once, logs it, and
//! loads the files at the next poll, whose contents differ again.

use std::sync::Arc;

use parking_lot::Mutex;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

/// How often the files are read again to notice a change.
pub const RELOAD_INTERVAL: Duration = Duration::from_secs(2);

/// What [`Reloadable::check`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum Reload<E> {
    /// The files are as last seen.
    Unchanged,
    /// New contents loaded and in force.
    Reloaded,
    /// New contents that do not load; the previous configuration stays in force.
    Failed(E),
}

/// What the last look at the files found: their contents, or why they could not be read. Kept
/// even when broken, so a bad change is reported once rather than at every poll.
#[derive(Debug)]
pub struct LastSeen<C, E>(Mutex<Result<C, E>>);

impl<C, E> LastSeen<C, E> {
    /// The contents in force at startup.
    pub fn new(contents: C) -> Self {
        LastSeen(Mutex::new(Ok(contents)))
    }
}

/// Configuration read from files and swapped in whole when they change.
pub trait Reloadable: Send + Sync + 'static {
    /// The files' bytes, compared to notice a change.
    type Contents: PartialEq + Send;
    type Error: Clone + std::fmt::Display + Send;
    /// What is reloaded, for the log: "the TLS certificate".
    const WHAT: &'static str;

    /// Reads the files.
    fn read(&self) -> Result<Self::Contents, Self::Error>;
    /// Builds the configuration from new contents, checks it completely, and only then puts it
    /// in force; `Err` leaves the previous one.
    fn apply(&self, contents: &Self::Contents) -> Result<(), Self::Error>;
    /// Where the last look is remembered.
    fn last_seen(&self) -> &LastSeen<Self::Contents, Self::Error>;
    /// Told of every change (not of `Unchanged`), e.g. to count it.
    fn record(&self, _outcome: &Reload<Self::Error>) {}

    /// Reads the files again and puts new contents in force when they changed.
    fn check(&self) -> Reload<Self::Error> {
        // A read that fails is tried once more at once: the kubelet removes a volume's previous
        // version right after swapping `..data`, so a read that resolved the link just before the
        // swap can find its file gone, while the new one is already in place.
        let now = self.read().or_else(|_| self.read());
        let mut seen = self.last_seen().0.lock();
        let unchanged = match (&*seen, &now) {
            (Ok(before), Ok(after)) => before == after,
            (Err(before), Err(after)) => before.to_string() == after.to_string(),
            _ => false,
        };
        if unchanged {
            return Reload::Unchanged;
        }
        let outcome = match &now {
            Err(e) => Reload::Failed(e.clone()),
            Ok(contents) => match self.apply(contents) {
                Ok(()) => Reload::Reloaded,
                Err(e) => Reload::Failed(e),
            },
        };
        *seen = now;
        self.record(&outcome);
        outcome
    }
}

/// Asks every reloader to look at once: the server sends on it for SIGHUP.
pub type Wake = watch::Receiver<()>;

/// Checks `source` every `every` and whenever `wake` says so, logging each change, until aborted.
pub fn spawn<R: Reloadable>(source: Arc<R>, every: Duration, mut wake: Option<Wake>) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ticks.tick().await;
        loop {
            tokio::select! {
                _ = ticks.tick() => {}
                woken = woken(&mut wake) => {
                    if !woken {
                        wake = None; // nobody sends any more: polling only
                        continue;
                    }
                }
            }
            // Small local files: reading them inline is cheaper than a blocking-pool hop.
            match source.check() {
                Reload::Unchanged => {}
                Reload::Reloaded => tracing::info!("reloaded {}", R::WHAT),
                Reload::Failed(e) => {
                    tracing::error!(error = %e, "cannot reload {}; still serving the previous one", R::WHAT)
                }
            }
        }
    })
}

/// `true` when asked to look; `false` once the sender is gone; pending without a receiver.
async fn woken(wake: &mut Option<Wake>) -> bool {
    match wake {
        Some(rx) => rx.changed().await.is_ok(),
        None => std::future::pending().await,
    }
}

/// A [`Wake`] that SIGHUP sends on, and the task that listens for it (abort it at shutdown).
/// `None` where the signal cannot be listened for (logged).
pub fn on_sighup() -> Option<(Wake, JoinHandle<()>)> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut hangups = match signal(SignalKind::hangup()) {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!("cannot listen for SIGHUP (files are still read again every few seconds): {e}");
                return None;
            }
        };
        let (tx, rx) = watch::channel(());
        let task = tokio::spawn(async move {
            while hangups.recv().await.is_some() {
                tracing::info!("SIGHUP: reading the TLS and Policy files again");
                tx.send_replace(());
            }
        });
        Some((rx, task))
    }
    #[cfg(not(unix))]
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Why the fake does not read or load.
    #[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
    #[error("{0}")]
    struct FakeError(String);

    /// A "file" held in memory: contents that fail to load are the strings starting with "bad".
    struct Fake {
        file: Mutex<Result<String, FakeError>>,
        /// Reads still to fail (a file gone for a moment).
        failing_reads: std::sync::atomic::AtomicUsize,
        in_force: Mutex<String>,
        seen: LastSeen<String, FakeError>,
    }

    impl Reloadable for Fake {
        type Contents = String;
        type Error = FakeError;
        const WHAT: &'static str = "the fake";
        fn read(&self) -> Result<String, FakeError> {
            use std::sync::atomic::Ordering::Relaxed;
            if self.failing_reads.fetch_update(Relaxed, Relaxed, |n| n.checked_sub(1)).is_ok() {
                return Err(FakeError("gone for a moment".to_string()));
            }
            self.file.lock().clone()
        }
        fn apply(&self, contents: &String) -> Result<(), FakeError> {
            if contents.starts_with("bad") {
                return Err(FakeError(format!("cannot load {contents:?}")));
            }
            *self.in_force.lock() = contents.clone();
            Ok(())
        }
        fn last_seen(&self) -> &LastSeen<String, FakeError> {
            &self.seen
        }
    }

    fn fake(contents: &str) -> Arc<Fake> {
        Arc::new(Fake {
            file: Mutex::new(Ok(contents.to_string())),
            failing_reads: Default::default(),
            in_force: Mutex::new(contents.to_string()),
            seen: LastSeen::new(contents.to_string()),
        })
    }

    fn write(f: &Fake, contents: Result<&str, &str>) {
        *f.file.lock() = contents.map(str::to_string).map_err(|e| FakeError(e.to_string()));
    }

    #[test]
    fn a_change_is_applied_and_a_broken_one_reported_once_and_ignored() {
        let f = fake("a");
        assert_eq!(f.check(), Reload::Unchanged);
        write(&f, Ok("b"));
        assert_eq!(f.check(), Reload::Reloaded);
        assert_eq!(*f.in_force.lock(), "b");
        write(&f, Ok("bad"));
        assert_eq!(f.check(), Reload::Failed(FakeError("cannot load \"bad\"".to_string())));
        assert_eq!(f.check(), Reload::Unchanged, "reported once");
        assert_eq!(*f.in_force.lock(), "b", "the last good one stays");
        write(&f, Err("gone"));
        assert_eq!(f.check(), Reload::Failed(FakeError("gone".to_string())));
        assert_eq!(f.check(), Reload::Unchanged);
        write(&f, Ok("b"));
        assert_eq!(f.check(), Reload::Reloaded, "back to good contents: loaded again");
    }

    #[test]
    fn a_read_that_fails_once_is_tried_again_at_once() {
        use std::sync::atomic::Ordering::Relaxed;
        let f = fake("a");
        write(&f, Ok("b"));
        f.failing_reads.store(1, Relaxed);
        assert_eq!(f.check(), Reload::Reloaded, "the old version's file removed under the read: not an error");
        write(&f, Ok("c"));
        f.failing_reads.store(2, Relaxed);
        assert_eq!(f.check(), Reload::Failed(FakeError("gone for a moment".to_string())), "twice: reported");
    }

    /// Waits (a bounded while) until `f` has `want` in force.
    async fn until_in_force(f: &Fake, want: &str) -> bool {
        for _ in 0..500 {
            if *f.in_force.lock() == want {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        false
    }

    #[tokio::test]
    async fn the_task_wakes_on_demand() {
        let f = fake("a");
        let (tx, rx) = watch::channel(());
        let task = spawn(Arc::clone(&f), Duration::from_secs(3600), Some(rx));
        write(&f, Ok("b"));
        tx.send_replace(());
        assert!(until_in_force(&f, "b").await, "woken: read at once, not after the hour");
        task.abort();
    }

    #[tokio::test]
    async fn the_task_polls_without_a_sender() {
        let f = fake("a");
        let (tx, rx) = watch::channel(());
        drop(tx);
        let task = spawn(Arc::clone(&f), Duration::from_millis(20), Some(rx));
        write(&f, Ok("b"));
        assert!(until_in_force(&f, "b").await);
        task.abort();
    }
}
