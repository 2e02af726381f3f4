//! `/preempt`: `ExtenderPreemptionArgs` in, `ExtenderPreemptionResult` out (always in
//! `NodeNameToMetaVictims`, which kube-scheduler accepts whether or not it is `nodeCacheCapable`).
//!
//! Status codes as the other verbs: 400 (413 when too large, 408 when too slow) for a body that is
//! not a valid request, 503 when the evaluation does not finish within the request timeout; both
//! with the result object and `Error` filled.

use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;

use crate::server::body::read_body;
use crate::server::handlers::{body_refused, malformed, run_on_pool, Answer, PoolRequest, Subject};
use crate::server::verb::{Unanswered, Verb, VerbError};
use crate::server::AppState;
use crate::wire::{ExtenderPreemptionArgs, ExtenderPreemptionResult, MetaPod, MetaVictims};
use predicate_engine::engine::preempt::{resolve, NodeVictims, PreemptJob, RequestedVictims};
use predicate_engine::engine::{CancelFlag, EvaluationError, Evaluator};

fn error(e: &VerbError) -> Response {
    Answer::error(Verb::Preempt, e).into_response()
}

/// The answer: the nodes where the pod fits once its victims are gone, with the victims it needs.
fn preempt_result(selected: Vec<NodeVictims>) -> ExtenderPreemptionResult {
    let node_name_to_meta_victims = selected
        .into_iter()
        .map(|v| {
            let pods = v.uids.into_iter().map(|uid| MetaPod { uid }).collect();
            (v.node, MetaVictims { pods, num_pdb_violations: v.num_pdb_violations })
        })
        .collect();
    ExtenderPreemptionResult { node_name_to_meta_victims, ..Default::default() }
}

pub async fn preempt(State(state): State<Arc<AppState>>, headers: HeaderMap, body: Body) -> Response {
    let started = Instant::now();
    let bytes = match read_body(&headers, body, state.max_body_bytes, state.body_timeout).await {
        Ok(b) => b,
        Err(e) => return error(&body_refused(Verb::Preempt, e)),
    };
    let args = match ExtenderPreemptionArgs::decode(&bytes) {
        Ok(a) => a,
        Err(e) => return error(&malformed(Verb::Preempt, e)),
    };
    let pod_key = args.pod.key();
    if let Some(message) = state.not_synced() {
        tracing::info!(verb = "preempt", pod = %pod_key, "answered before the cluster cache synced");
        // No Error field in upstream's ExtenderPreemptionResult: a non-200 status is how the
        // scheduler learns this answer is not to be used.
        return error(&VerbError::NotSynced(message));
    }
    let job = Arc::new(preempt_job(&state, args));
    let nodes = job.candidates.len();
    let request =
        PoolRequest { verb: Verb::Preempt, subject: Subject::known(pod_key.clone(), nodes), cancel: &job.cancel };
    let on_pool = Arc::clone(&job);
    let run = move |ev: &Evaluator| match on_pool.run(ev) {
        Err(EvaluationError::Cancelled(c)) => Err(c),
        other => Ok(other),
    };
    let selected = match run_on_pool(&state, request, run).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => {
            tracing::error!(verb = "preempt", pod = %pod_key, error = %e, "the evaluation failed");
            return error(&match e {
                EvaluationError::MissingState(missing) => VerbError::Evaluation(missing),
                EvaluationError::Cancelled(_) => Unanswered::Cancelled.into(),
            });
        }
        Err(unanswered) => return error(&unanswered.into()),
    };
    tracing::info!(
        verb = "preempt",
        pod = %pod_key,
        nodes,
        feasible = selected.len(),
        victims = selected.iter().map(|v| v.uids.len()).sum::<usize>(),
        elapsed_us = started.elapsed().as_micros() as u64,
        "preempted"
    );
    (StatusCode::OK, Json(preempt_result(selected))).into_response()
}

/// The work a decoded request asks for: its nodes and victims resolved against the model (those
/// the model does not have are logged and left out), under the plan in force. Run it with
/// [`PreemptJob::run`] and answer with [`preempt_result`].
fn preempt_job(state: &AppState, args: ExtenderPreemptionArgs) -> PreemptJob {
    let pod_key = args.pod.key();
    let snapshot = state.store.snapshot();
    let requested = args.node_victims.into_iter().map(|(node, v)| RequestedVictims {
        node,
        uids: v.pod_uids,
        num_pdb_violations: v.num_pdb_violations,
    });
    let resolved = resolve(&snapshot, requested);
    for node in &resolved.unknown_nodes {
        tracing::info!(verb = "preempt", pod = %pod_key, node = %node, "node is not in the cluster cache: dropped");
    }
    for (node, uid) in &resolved.unknown_victims {
        tracing::info!(
            verb = "preempt",
            pod = %pod_key,
            node = %node,
            uid = %uid,
            "victim is not on that node in the cluster cache: left out"
        );
    }
    PreemptJob {
        plan: state.plan.load_full(),
        pod: args.pod,
        snapshot,
        candidates: resolved.candidates,
        cancel: CancelFlag::new(),
    }
}

/// A decoded /preempt answered as the handler answers it, on `ev`, without HTTP or a deadline: for
/// the fuzz checks (the `test-util` feature; the shipped binary has no such entry).
#[cfg(any(test, feature = "test-util"))]
pub fn preempt_answer(
    state: &AppState,
    args: ExtenderPreemptionArgs,
    ev: &Evaluator,
) -> Result<ExtenderPreemptionResult, EvaluationError> {
    preempt_job(state, args).run(ev).map(preempt_result)
}
