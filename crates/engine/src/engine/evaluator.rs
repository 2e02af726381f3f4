//! The parallel node evaluator: runs a function over every node on a fixed `rayon` pool, one
//! contiguous chunk of the nodes per worker, writes each result into the slot of its input position
//! (no lock, output in input order), and stops starting new nodes once the request is cancelled.
//! Its [`Evaluator::inline`] view runs the same work on the calling thread instead, one node after
//! another: for requests too small to be worth handing to the pool.
//!
//! One chunk per worker rather than rayon's adaptive splitting: in alternating load runs at 5,000
//! nodes on 2 cores it had the lower median and a far lower tail (docs/performance.md, "The
//! evaluator's workers and chunks").

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;

/// Set when the request is abandoned: the client went away or the deadline passed. A flag with a
/// deadline also reads as cancelled once the deadline has passed: an inline evaluation has no
/// other task that could set it in time.
#[derive(Debug, Clone, Default)]
pub struct CancelFlag {
    flag: Arc<AtomicBool>,
    deadline: Option<Instant>,
}

impl CancelFlag {
    pub fn new() -> Self {
        Self::default()
    }

    /// A flag that is also cancelled once `deadline` has passed.
    pub fn with_deadline(deadline: Instant) -> Self {
        CancelFlag { flag: Arc::default(), deadline: Some(deadline) }
    }

    pub fn cancel(&self) {
        self.flag.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.flag.load(Ordering::Relaxed) || self.deadline_passed()
    }

    /// Whether this flag's deadline (if it has one) has passed.
    pub fn deadline_passed(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }
}

/// The evaluation stopped because the request was cancelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the request was cancelled before every node was evaluated")]
pub struct Cancelled;

/// The most workers the default gives: upstream's ParallelizeUntil uses 16.
pub const MAX_DEFAULT_PARALLELISM: usize = 16;

/// The default worker count: the CPUs this process may use (`available_parallelism` honours the
/// cgroup CPU quota and the affinity mask), at most [`MAX_DEFAULT_PARALLELISM`]; 16 when the count
/// cannot be read. On a 2-core machine, 16 threads spent 28-34% of the server's samples switching
/// and in rayon's idle spinning (docs/performance.md, "The evaluator's workers and chunks").
pub fn default_parallelism() -> usize {
    std::thread::available_parallelism().map_or(MAX_DEFAULT_PARALLELISM, |n| n.get().min(MAX_DEFAULT_PARALLELISM))
}

/// A pool of `parallelism` workers, or a view of it that evaluates on the calling thread.
#[derive(Debug)]
pub struct Evaluator {
    pool: Arc<rayon::ThreadPool>,
    parallelism: usize,
    /// Evaluates on the calling thread ([`Evaluator::inline`]).
    inline: bool,
}

/// How many nodes an inline evaluation evaluates between two looks at its cancel flag (whose
/// deadline costs a clock read).
const INLINE_CANCEL_EVERY: usize = 8;

impl Evaluator {
    pub fn new(parallelism: usize) -> Result<Self, rayon::ThreadPoolBuildError> {
        let parallelism = parallelism.max(1);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(parallelism)
            .thread_name(|i| format!("evaluator-{i}"))
            .build()?;
        Ok(Evaluator { pool: Arc::new(pool), parallelism, inline: false })
    }

    pub fn parallelism(&self) -> usize {
        self.parallelism
    }

    /// This evaluator running its work on the calling thread, one node after another, and what it
    /// would run after the answer on the calling thread's tokio runtime (at once without one). For
    /// a request of a few hundred nodes, handing it to the pool costs more than it saves on a
    /// small machine: a wake-up of a worker, of the second worker for its half, of the handler
    /// when it is done, and the workers' idle spinning after each request, on the cores
    /// kube-scheduler is waiting to use (docs/throughput.md, "The extender's side").
    pub fn inline(&self) -> Evaluator {
        Evaluator { pool: Arc::clone(&self.pool), parallelism: 1, inline: true }
    }

    /// Whether this is an [`Evaluator::inline`] view.
    pub fn is_inline(&self) -> bool {
        self.inline
    }

    /// Applies `f` to every item, in parallel, returning the results in input order. The items are
    /// cut into one contiguous chunk per worker (never more chunks than items).
    pub fn map<T, R, F>(&self, items: &[T], cancel: &CancelFlag, f: F) -> Result<Vec<R>, Cancelled>
    where
        T: Sync,
        R: Send,
        F: Fn(&T) -> R + Sync + Send,
    {
        self.map_indexed(items, cancel, |_, item| f(item))
    }

    /// [`Evaluator::map`] with each item's position passed along.
    pub fn map_indexed<T, R, F>(&self, items: &[T], cancel: &CancelFlag, f: F) -> Result<Vec<R>, Cancelled>
    where
        T: Sync,
        R: Send,
        F: Fn(usize, &T) -> R + Sync + Send,
    {
        if self.inline {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                if i % INLINE_CANCEL_EVERY == 0 && cancel.is_cancelled() {
                    return Err(Cancelled);
                }
                out.push(f(i, item));
            }
            return Ok(out);
        }
        let mut slots: Vec<Option<R>> = std::iter::repeat_with(|| None).take(items.len()).collect();
        let chunk = items.len().div_ceil(self.parallelism).max(1);
        self.pool.install(|| {
            slots.par_chunks_mut(chunk).zip(items.par_chunks(chunk)).enumerate().for_each(|(c, (out, chunk_items))| {
                for (i, (slot, item)) in out.iter_mut().zip(chunk_items).enumerate() {
                    if cancel.is_cancelled() {
                        return;
                    }
                    *slot = Some(f(c * chunk + i, item));
                }
            })
        });
        slots.into_iter().collect::<Option<Vec<R>>>().ok_or(Cancelled)
    }

    /// Runs `work` on the pool; nobody waits for it here (it reports through what it captures).
    pub fn detached(&self, work: impl FnOnce() + Send + 'static) {
        self.pool.spawn(work);
    }

    /// Runs `job` on the pool and hands its result to `done` there, without blocking the caller:
    /// the extender's handlers wait for it on their async side (a channel in `done`).
    pub fn spawn<R>(
        self: &Arc<Self>,
        job: impl FnOnce(&Evaluator) -> R + Send + 'static,
        done: impl FnOnce(R) + Send + 'static,
    ) {
        let this = Arc::clone(self);
        self.pool.spawn(move || done(job(&this)));
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
    fn every_item_is_mapped_once_whatever_the_split() {
        // (workers, items): fewer items than workers, counts that do not divide, none at all.
        for (workers, len) in [(16, 1), (16, 15), (3, 7), (2, 5001), (4, 4), (2, 0), (1, 3)] {
            let ev = Evaluator::new(workers).unwrap();
            let calls = std::sync::atomic::AtomicUsize::new(0);
            let items: Vec<usize> = (0..len).collect();
            let out = ev
                .map(&items, &CancelFlag::new(), |x| {
                    calls.fetch_add(1, Ordering::Relaxed);
                    x + 1
                })
                .unwrap();
            assert_eq!(out, (1..=len).collect::<Vec<_>>(), "{workers} workers, {len} items");
            assert_eq!(calls.load(Ordering::Relaxed), len, "{workers} workers, {len} items");
        }
    }

    #[test]
    fn the_inline_view_maps_in_order_on_the_calling_thread() {
        let ev = Evaluator::new(2).unwrap().inline();
        assert!(ev.is_inline());
        let items: Vec<u64> = (0..1_000).collect();
        let out = ev
            .map(&items, &CancelFlag::new(), |x| {
                assert_eq!(rayon::current_thread_index(), None, "an inline evaluation ran on the pool");
                x * 2
            })
            .unwrap();
        assert_eq!(out, items.iter().map(|x| x * 2).collect::<Vec<_>>());
    }

    #[test]
    fn a_passed_deadline_cancels_an_inline_evaluation() {
        let ev = Evaluator::new(2).unwrap().inline();
        let started = Instant::now();
        let deadline = std::time::Duration::from_millis(20);
        let cancel = CancelFlag::with_deadline(started + deadline);
        let items: Vec<u32> = (0..1_000).collect();
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let out = ev.map(&items, &cancel, |_| {
            calls.fetch_add(1, Ordering::Relaxed);
            std::thread::sleep(std::time::Duration::from_millis(1));
        });
        assert_eq!(out, Err(Cancelled));
        assert!(cancel.deadline_passed());
        // Nodes were evaluated until the deadline, not past the end: no bound on how many fit in
        // 20 ms, which a loaded machine's sleeps make fewer.
        assert!(started.elapsed() >= deadline);
        let calls = calls.load(Ordering::Relaxed);
        assert!((1..items.len()).contains(&calls), "{calls} nodes evaluated");
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
