//! The handlers' side of the engine's evaluator pool: a job's result handed to the async side
//! through a channel, and what a request leaves behind run after its answer.

use std::sync::Arc;

use predicate_engine::engine::Evaluator;
use tokio::sync::oneshot;

/// Runs `job` on the pool and hands its result to the async side without blocking a runtime
/// thread. The receiver is gone when the request was abandoned; nobody wants the result then.
pub(crate) fn on_pool<R: Send + 'static>(
    evaluator: &Arc<Evaluator>,
    job: impl FnOnce(&Evaluator) -> R + Send + 'static,
) -> oneshot::Receiver<R> {
    let (tx, rx) = oneshot::channel();
    evaluator.spawn(job, move |result| {
        let _ = tx.send(result);
    });
    rx
}

/// Runs `work` once the running job is done: what a request leaves behind (freeing its thousands
/// of candidates and verdicts, recording its sampled timings) need not stand between its answer
/// and the client. On the pool for a pool job; for an inline one, spawned from the runtime thread
/// it ran on, the task waits in that thread's own queue for the handler to return, and no other
/// thread is woken for it.
pub(crate) fn after_answer(evaluator: &Evaluator, work: impl FnOnce() + Send + 'static) {
    if !evaluator.is_inline() {
        evaluator.detached(work);
        return;
    }
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => drop(runtime.spawn(async move { work() })),
        Err(_) => work(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_after_an_inline_answer_runs_on_the_runtime_or_at_once() {
        let ev = Evaluator::new(1).unwrap().inline();
        let (tx, rx) = std::sync::mpsc::channel();
        let sent = tx.clone();
        after_answer(&ev, move || sent.send("without a runtime").unwrap());
        assert_eq!(rx.try_recv(), Ok("without a runtime"), "ran at once");
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        runtime.block_on(async {
            after_answer(&ev, move || tx.send("on the runtime").unwrap());
            assert!(rx.try_recv().is_err(), "ran before the caller returned");
            tokio::task::yield_now().await;
        });
        assert_eq!(rx.try_recv(), Ok("on the runtime"));
    }

    #[test]
    fn a_pool_job_answers_through_the_channel() {
        let ev = Arc::new(Evaluator::new(2).unwrap());
        let rx = on_pool(&ev, |ev| ev.parallelism());
        assert_eq!(rx.blocking_recv(), Ok(2));
    }
}
