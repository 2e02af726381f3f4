//! The verbs `/filter`, `/prioritize` and `/bind`, and what every verb shares (running on the
//! evaluator's pool within the request deadline).
//!
//! Status codes: a body that is not a valid request gets 400 (413 when too large) with the verb's
//! result object and its `Error` filled. A valid request that cannot be carried out gets 200 with
//! `Error` filled, because kube-scheduler reads the body of 200 answers only.

use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::value::RawValue;

use crate::engine::{CancelFlag, Cancelled, Candidate, Evaluator, RequestJob};
use crate::metrics::requests::AnsweredWithError;
use crate::server::body::{read_body, BodyError};
use crate::server::AppState;
use crate::wire::{
    Candidates, ExtenderArgs, ExtenderBindingArgs, ExtenderBindingResult, ExtenderFilterResult, HostPriority,
};

/// Cancels the node evaluation when the handler is dropped: the client went away.
pub(crate) struct CancelOnDrop(pub(crate) CancelFlag);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

fn filter_error(status: StatusCode, message: &str) -> Response {
    with_error_mark((status, Json(ExtenderFilterResult::error(message))).into_response())
}

/// Tells the metrics layer that this answer carries an error.
pub(crate) fn with_error_mark(mut response: Response) -> Response {
    response.extensions_mut().insert(AnsweredWithError);
    response
}

/// Logs a request whose body was refused (too large, unreadable), so every request has its line.
pub(crate) fn body_refused(verb: &str, e: BodyError) -> BodyError {
    tracing::info!(verb, status = e.status.as_u16(), error = %e.message, "refused a request body");
    e
}

pub use crate::server::filter_result::{filter_result, UNKNOWN_NODE};

/// A decoded filter or prioritize request, with its candidates resolved against the model.
struct Prepared<'a> {
    pod_key: String,
    job: Arc<RequestJob>,
    /// The request's `Nodes`: list metadata and each node's bytes (`None` in `NodeNames` mode).
    request_nodes: Option<(Option<&'a RawValue>, Vec<&'a RawValue>)>,
}

/// Decodes `ExtenderArgs` and resolves the candidates; `Err` is the status and message to answer.
fn prepare<'a>(state: &AppState, verb: &str, bytes: &'a [u8]) -> Result<Prepared<'a>, (StatusCode, String)> {
    let args = ExtenderArgs::decode(bytes).map_err(|e| {
        tracing::info!(verb, error = %e, "rejected a malformed request");
        (StatusCode::BAD_REQUEST, e.to_string())
    })?;
    let pod_key = args.pod.key();
    if let Some(message) = state.not_synced() {
        tracing::info!(verb, pod = %pod_key, "answered before the cluster cache synced");
        return Err((StatusCode::OK, message));
    }
    let snapshot = state.store.snapshot();
    let (candidates, request_nodes) = match args.nodes {
        Candidates::Names(names) => {
            (names.into_iter().map(|n| Candidate::by_name(&snapshot, n)).collect::<Vec<_>>(), None)
        }
        Candidates::Nodes(list) => {
            let mut raws = Vec::with_capacity(list.items.len());
            let mut candidates = Vec::with_capacity(list.items.len());
            for item in list.items {
                raws.push(item.raw);
                let (node, nominated) = snapshot.candidate_for(item.node);
                candidates.push(Candidate::Known(node, nominated));
            }
            (candidates, Some((list.metadata, raws)))
        }
    };
    let job = RequestJob {
        plan: Arc::clone(&state.plan),
        pod: args.pod,
        snapshot,
        candidates,
        from_request_nodes: request_nodes.is_some(),
        cancel: CancelFlag::new(),
    };
    Ok(Prepared { pod_key, job: Arc::new(job), request_nodes })
}

/// What [`run_on_pool`] says about the request in its log line and timeout message.
pub(crate) struct PoolRequest<'a> {
    pub verb: &'a str,
    pub pod_key: &'a str,
    pub nodes: usize,
    pub cancel: &'a CancelFlag,
}

/// Runs `work` on the evaluator's pool within the request deadline, cancelling it when the deadline
/// passes or the client goes away (this future is dropped). `Err` is the message to answer.
pub(crate) async fn run_on_pool<J: Send + Sync + 'static, R: Send + 'static>(
    state: &AppState,
    request: PoolRequest<'_>,
    job: &Arc<J>,
    work: impl FnOnce(&J, &Evaluator) -> Result<R, Cancelled> + Send + 'static,
) -> Result<R, String> {
    let PoolRequest { verb, pod_key, nodes, cancel } = request;
    let _cancel_on_drop = CancelOnDrop(cancel.clone());
    let job = Arc::clone(job);
    let rx = state.evaluator.spawn(move |ev| work(&job, ev));
    match tokio::time::timeout(state.request_timeout, rx).await {
        Ok(Ok(Ok(v))) => {
            state.metrics.requests.evaluated(verb, nodes);
            Ok(v)
        }
        Ok(Ok(Err(_))) | Ok(Err(_)) => Err("the node evaluation was cancelled before it finished".to_string()),
        Err(_elapsed) => {
            cancel.cancel();
            tracing::warn!(verb, pod = %pod_key, nodes, "request timed out");
            Err(format!(
                "the {verb} of pod {pod_key} over {nodes} nodes did not finish within the request timeout of {}",
                humantime::format_duration(state.request_timeout)
            ))
        }
    }
}

impl Prepared<'_> {
    fn pool_request<'a>(&'a self, verb: &'a str) -> PoolRequest<'a> {
        PoolRequest { verb, pod_key: &self.pod_key, nodes: self.job.candidates.len(), cancel: &self.job.cancel }
    }
}

pub async fn filter(State(state): State<Arc<AppState>>, headers: HeaderMap, body: Body) -> Response {
    let started = Instant::now();
    let bytes = match read_body(&headers, body, state.max_body_bytes).await {
        Ok(b) => b,
        Err(e) => return filter_error(e.status, &format!("ExtenderArgs: {}", body_refused("filter", e).message)),
    };
    let prepared = match prepare(&state, "filter", &bytes) {
        Ok(p) => p,
        Err((status, message)) => return filter_error(status, &message),
    };
    let metrics = Arc::clone(&state.metrics);
    let verdicts =
        match run_on_pool(&state, prepared.pool_request("filter"), &prepared.job, move |job: &RequestJob, ev| {
            metrics.predicates.filter(job, ev)
        })
        .await
        {
            Ok(v) => v,
            Err(message) => return filter_error(StatusCode::OK, &message),
        };
    state.metrics.predicates.record_filter(&verdicts);
    let Prepared { pod_key, job, request_nodes } = prepared;
    let node_count = job.candidates.len();

    let request_nodes = request_nodes.as_ref().map(|(metadata, raws)| (*metadata, raws.as_slice()));
    let result = filter_result(&job.candidates, &verdicts, request_nodes, &pod_key);
    let feasible = result.node_names.as_ref().map_or(0, Vec::len) + result.nodes.as_ref().map_or(0, |n| n.items.len());
    tracing::info!(
        verb = "filter",
        pod = %pod_key,
        nodes = node_count,
        feasible,
        elapsed_us = started.elapsed().as_micros() as u64,
        "filtered"
    );
    (StatusCode::OK, Json(result)).into_response()
}

pub async fn bind(State(state): State<Arc<AppState>>, headers: HeaderMap, body: Body) -> Response {
    let started = Instant::now();
    let bytes = match read_body(&headers, body, state.max_body_bytes).await {
        Ok(b) => b,
        Err(e) => {
            let e = body_refused("bind", e);
            let message = format!("ExtenderBindingArgs: {}", e.message);
            return (e.status, Json(ExtenderBindingResult::error(&message))).into_response();
        }
    };
    let args = match ExtenderBindingArgs::decode(&bytes) {
        Ok(a) => a,
        Err(e) => {
            tracing::info!(verb = "bind", error = %e, "rejected a malformed request");
            return (StatusCode::BAD_REQUEST, Json(ExtenderBindingResult::error(&e.to_string()))).into_response();
        }
    };
    let pod = format!("{}/{}", args.pod_namespace, args.pod_name);
    let node = args.node.clone();
    let outcome = state.binder.bind(args).await;
    state.metrics.bind.record(&outcome);
    let result = match outcome {
        Ok(()) => ExtenderBindingResult::default(),
        Err(e) => ExtenderBindingResult::error(&e.to_string()),
    };
    tracing::info!(
        verb = "bind",
        pod = %pod,
        node = %node,
        error = %result.error,
        elapsed_us = started.elapsed().as_micros() as u64,
        "bound"
    );
    let failed = !result.error.is_empty();
    let response = (StatusCode::OK, Json(result)).into_response();
    if failed {
        with_error_mark(response)
    } else {
        response
    }
}

/// `/prioritize`: a `HostPriorityList`, one entry per candidate in request order. The list has no
/// `Error` field, so a request that cannot be scored is answered with a non-200 status and
/// `{"Error": ...}` (kube-scheduler then scores without this extender).
pub async fn prioritize(State(state): State<Arc<AppState>>, headers: HeaderMap, body: Body) -> Response {
    let started = Instant::now();
    let error = |status: StatusCode, message: &str| {
        with_error_mark((status, Json(ExtenderBindingResult::error(message))).into_response())
    };
    let bytes = match read_body(&headers, body, state.max_body_bytes).await {
        Ok(b) => b,
        Err(e) => return error(e.status, &format!("ExtenderArgs: {}", body_refused("prioritize", e).message)),
    };
    let prepared = match prepare(&state, "prioritize", &bytes) {
        Ok(p) => p,
        // 200 is reserved for a HostPriorityList: "not synced yet" is a 503 here.
        Err((StatusCode::OK, message)) => return error(StatusCode::SERVICE_UNAVAILABLE, &message),
        Err((status, message)) => return error(status, &message),
    };
    let scores =
        match run_on_pool(&state, prepared.pool_request("prioritize"), &prepared.job, |job: &RequestJob, ev| {
            job.prioritize(ev)
        })
        .await
        {
            Ok(s) => s,
            Err(message) => return error(StatusCode::SERVICE_UNAVAILABLE, &message),
        };
    let list: Vec<HostPriority> = prepared
        .job
        .candidates
        .iter()
        .zip(scores)
        .map(|(c, score)| {
            if let Candidate::Unknown(name) = c {
                tracing::info!(verb = "prioritize", node = %name, "node is not in the cluster cache yet: score 0");
            }
            HostPriority { host: c.name().to_string(), score }
        })
        .collect();
    tracing::info!(
        verb = "prioritize",
        pod = %prepared.pod_key,
        nodes = list.len(),
        elapsed_us = started.elapsed().as_micros() as u64,
        "prioritized"
    );
    (StatusCode::OK, Json(list)).into_response()
}
