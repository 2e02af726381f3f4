//! The parallel node evaluator: runs a function over every node on a fixed `rayon` pool, writes each
//! result into the slot of its input position (no lock, output in input order), and stops starting
//! new nodes once the request is cancelled.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rayon::prelude::*;

/// Set when the request is abandoned: the client went away or the deadline passed.
#[derive(Debug, Clone, Default)]
pub struct CancelFlag(Arc<AtomicBool>);

impl CancelFlag {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// The evaluation stopped because the request was cancelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the request was cancelled before every node was evaluated")]
pub struct Cancelled;

/// A pool of `parallelism` workers (upstream's ParallelizeUntil uses 16).
#[derive(Debug)]
pub struct Evaluator {
    pool: rayon::ThreadPool,
    parallelism: usize,
}

impl Evaluator {
    pub fn new(parallelism: usize) -> Result<Self, rayon::ThreadPoolBuildError> {
        let parallelism = parallelism.max(1);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(parallelism)
            .thread_name(|i| format!("evaluator-{i}"))
            .build()?;
        Ok(Evaluator { pool, parallelism })
    }

    pub fn parallelism(&self) -> usize {
        self.parallelism
    }

    /// Applies `f` to every item, in parallel, returning the results in input order. Workers never
    /// exceed the item count: rayon splits no finer than one item per task.
    pub fn map<T, R, F>(&self, items: &[T], cancel: &CancelFlag, f: F) -> Result<Vec<R>, Cancelled>
    where
        T: Sync,
        R: Send,
        F: Fn(&T) -> R + Sync + Send,
    {
        let mut slots: Vec<Option<R>> = Vec::with_capacity(items.len());
        self.pool.install(|| {
            items
                .par_iter()
                .map(|item| if cancel.is_cancelled() { None } else { Some(f(item)) })
                .collect_into_vec(&mut slots)
        });
        slots.into_iter().collect::<Option<Vec<R>>>().ok_or(Cancelled)
    }

    /// Runs `job` on the pool and hands its result to the async side without blocking a runtime
    /// thread.
    pub fn spawn<R: Send + 'static>(
        self: &Arc<Self>,
        job: impl FnOnce(&Evaluator) -> R + Send + 'static,
    ) -> tokio::sync::oneshot::Receiver<R> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let this = Arc::clone(self);
        self.pool.spawn(move || {
            // The receiver is gone when the request was abandoned; nobody wants the result then.
            let _ = tx.send(job(&this));
        });
        rx
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_input_order() {
        let ev = Evaluator::new(4).unwrap();
        let items: Vec<u64> = (0..10_000).collect();
        let out = ev.map(&items, &CancelFlag::new(), |x| x * 2).unwrap();
        assert_eq!(out, items.iter().map(|x| x * 2).collect::<Vec<_>>());
    }

    #[test]
    fn a_cancelled_request_stops_and_says_so() {
        let ev = Evaluator::new(2).unwrap();
        let cancel = CancelFlag::new();
        let started = std::sync::atomic::AtomicUsize::new(0);
        let items: Vec<u32> = (0..100_000).collect();
        let out = ev.map(&items, &cancel, |_| {
            if started.fetch_add(1, Ordering::Relaxed) == 10 {
                cancel.cancel();
            }
        });
        assert_eq!(out, Err(Cancelled));
        assert!(started.load(Ordering::Relaxed) < items.len(), "work went on after the cancel");
    }
}
