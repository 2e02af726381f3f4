//! The verbs `/filter`, `/prioritize` and `/bind`, and what every verb shares (running on the
//! evaluator's pool within the request deadline).
//!
//! Status codes: a body that is not a valid request gets 400 (413 when too large, 408 when it is
//! still arriving after `--body-timeout`) with the verb's result object and its `Error` filled. A
//! valid request that cannot be carried out gets 200 with `Error` filled, because kube-scheduler
//! reads the body of 200 answers only.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use axum::body::Body;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use rayon::prelude::*;
use serde_json::value::RawValue;

use crate::engine::{CancelFlag, Cancelled, Candidate, EvaluationError, Evaluator, RequestJob};
use crate::metrics::requests::{AnsweredWithError, CandidateForm};
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
    job: RequestJob,
    /// The request's `Nodes`: list metadata and each node's bytes (`None` in `NodeNames` mode).
    request_nodes: Option<(Option<&'a RawValue>, Vec<&'a RawValue>)>,
}

/// Decodes `ExtenderArgs` and resolves the candidates, on the evaluator's pool (decoding and
/// resolving run in parallel on it); `Err` is the status and message to answer.
fn prepare<'a>(request: &Incoming<'a>, verb: &str) -> Result<Prepared<'a>, (StatusCode, String)> {
    let Incoming { state, bytes, subject, cancel } = *request;
    let args = ExtenderArgs::decode(bytes).map_err(|e| {
        tracing::info!(verb, error = %e, "rejected a malformed request");
        (StatusCode::BAD_REQUEST, e.to_string())
    })?;
    let pod_key = args.pod.key();
    subject.set(pod_key.clone(), args.nodes.len());
    if let Some(message) = state.not_synced() {
        tracing::info!(verb, pod = %pod_key, "answered before the cluster cache synced");
        return Err((StatusCode::OK, message));
    }
    let snapshot = state.store.snapshot();
    let (candidates, request_nodes) = match args.nodes {
        Candidates::Names(names) => {
            (names.into_par_iter().map(|n| Candidate::by_name(&snapshot, n)).collect::<Vec<_>>(), None)
        }
        Candidates::Nodes(list) => {
            let (raws, candidates): (Vec<&RawValue>, Vec<Candidate>) = list
                .items
                .into_par_iter()
                .map(|item| {
                    let (node, nominated) = snapshot.candidate_for(item.node);
                    (item.raw, Candidate::Known(node, nominated))
                })
                .unzip();
            (candidates, Some((list.metadata, raws)))
        }
    };
    let requests = &state.metrics.requests;
    if request_nodes.is_some() {
        requests.candidates(verb, CandidateForm::Nodes, candidates.len());
    } else {
        let unknown = candidates.iter().filter(|c| matches!(c, Candidate::Unknown(_))).count();
        requests.candidates(verb, CandidateForm::NodeNames, candidates.len());
        requests.candidates(verb, CandidateForm::Unknown, unknown);
    }
    let job = RequestJob {
        plan: state.plan.load_full(),
        pod: args.pod,
        snapshot,
        candidates,
        from_request_nodes: request_nodes.is_some(),
        cancel: cancel.clone(),
        timed: verb == "filter" && state.sampler.sample(),
    };
    Ok(Prepared { pod_key, job, request_nodes })
}

/// The pod and the number of nodes a request is about, known once its body is decoded (on the
/// pool for /filter and /prioritize): what the timeout message, the log and the metrics name.
#[derive(Debug, Default)]
pub(crate) struct Subject(OnceLock<(String, usize)>);

impl Subject {
    pub(crate) fn known(pod_key: String, nodes: usize) -> Arc<Self> {
        let subject = Subject::default();
        subject.set(pod_key, nodes);
        Arc::new(subject)
    }

    pub(crate) fn set(&self, pod_key: String, nodes: usize) {
        let _ = self.0.set((pod_key, nodes));
    }

    fn get(&self) -> Option<(&str, usize)> {
        self.0.get().map(|(pod, nodes)| (pod.as_str(), *nodes))
    }
}

/// What [`run_on_pool`] says about the request in its log line and timeout message.
pub(crate) struct PoolRequest<'a> {
    pub verb: &'a str,
    pub subject: Arc<Subject>,
    pub cancel: &'a CancelFlag,
}

/// Runs `work` on the evaluator's pool within the request deadline, cancelling it when the deadline
/// passes or the client goes away (this future is dropped). `Err` is the message to answer.
pub(crate) async fn run_on_pool<R: Send + 'static>(
    state: &AppState,
    request: PoolRequest<'_>,
    work: impl FnOnce(&Evaluator) -> Result<R, Cancelled> + Send + 'static,
) -> Result<R, String> {
    let PoolRequest { verb, subject, cancel } = request;
    let _cancel_on_drop = CancelOnDrop(cancel.clone());
    let rx = state.evaluator.spawn(work);
    match tokio::time::timeout(state.request_timeout, rx).await {
        Ok(Ok(Ok(v))) => {
            if let Some((_, nodes)) = subject.get() {
                state.metrics.requests.evaluated(verb, nodes);
            }
            Ok(v)
        }
        Ok(Ok(Err(_))) | Ok(Err(_)) => Err("the node evaluation was cancelled before it finished".to_string()),
        Err(_elapsed) => {
            cancel.cancel();
            state.metrics.requests.timed_out(verb);
            let deadline = humantime::format_duration(state.request_timeout);
            Err(match subject.get() {
                Some((pod, nodes)) => {
                    tracing::warn!(verb, pod, nodes, "request timed out");
                    format!("the {verb} of pod {pod} over {nodes} nodes did not finish within the request timeout of {deadline}")
                }
                None => {
                    tracing::warn!(verb, "request timed out while its body was decoded");
                    format!("the {verb} request was still being decoded when the request timeout of {deadline} passed")
                }
            })
        }
    }
}

/// An answer made on the pool: status, JSON body, and whether it carries an error.
struct Answer {
    status: StatusCode,
    body: Vec<u8>,
    error: bool,
    /// For the log line of a /filter: how many nodes fit.
    feasible: Option<usize>,
}

impl Answer {
    fn json(status: StatusCode, value: &impl serde::Serialize, error: bool) -> Answer {
        match serde_json::to_vec(value) {
            Ok(body) => Answer { status, body, error, feasible: None },
            Err(e) => Answer {
                status: StatusCode::INTERNAL_SERVER_ERROR,
                body: format!("{{\"Error\":{:?}}}", format!("encoding the answer: {e}")).into_bytes(),
                error: true,
                feasible: None,
            },
        }
    }

    fn into_response(self) -> Response {
        let response = (self.status, [(CONTENT_TYPE, "application/json")], self.body).into_response();
        if self.error {
            with_error_mark(response)
        } else {
            response
        }
    }
}

/// A /filter from its body to its encoded answer, all on the pool: decode, resolve, evaluate,
/// encode.
fn filter_on_pool(request: &Incoming<'_>, ev: &Evaluator) -> Result<Answer, Cancelled> {
    let state = request.state;
    let error = |status, message: &str| Answer::json(status, &ExtenderFilterResult::error(message), true);
    let Prepared { pod_key, job, request_nodes } = match prepare(request, "filter") {
        Ok(p) => p,
        Err((status, message)) => return Ok(error(status, &message)),
    };
    let filtered = match job.filter(ev) {
        Ok(filtered) => filtered,
        Err(EvaluationError::Cancelled(c)) => return Err(c),
        Err(EvaluationError::MissingState(e)) => {
            tracing::error!(verb = "filter", pod = %pod_key, error = %e, "the evaluation failed");
            return Ok(error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()));
        }
    };
    state.metrics.predicates.record(&job.plan, &filtered.report);
    let request_nodes = request_nodes.as_ref().map(|(metadata, raws)| (*metadata, raws.as_slice()));
    let result = filter_result(&job.candidates, &filtered.verdicts, request_nodes, &pod_key);
    let feasible = result.node_names.as_ref().map_or(0, Vec::len) + result.nodes.as_ref().map_or(0, |n| n.items.len());
    Ok(Answer { feasible: Some(feasible), ..Answer::json(StatusCode::OK, &result, false) })
}

fn filter_error(status: StatusCode, message: &str) -> Answer {
    Answer::json(status, &ExtenderFilterResult::error(message), true)
}

/// A verb's work on the pool: from the request body to its answer.
type VerbWork = fn(&Incoming<'_>, &Evaluator) -> Result<Answer, Cancelled>;

/// A verb's answer made without HTTP: the status and the JSON body.
pub type BodyAnswer = Result<(StatusCode, Vec<u8>), Cancelled>;

/// A /filter body answered as the handler answers it once the body is in (decode, resolve,
/// evaluate on `ev`, encode), without HTTP or a deadline: the status and the JSON body. For the
/// fuzz targets and the replay of their findings.
pub fn filter_body(state: &AppState, body: &[u8], ev: &Evaluator) -> BodyAnswer {
    answer_body(filter_on_pool, state, body, ev)
}

/// [`filter_body`] for /prioritize.
pub fn prioritize_body(state: &AppState, body: &[u8], ev: &Evaluator) -> BodyAnswer {
    answer_body(prioritize_on_pool, state, body, ev)
}

fn answer_body(work: VerbWork, state: &AppState, bytes: &[u8], ev: &Evaluator) -> BodyAnswer {
    let (subject, cancel) = (Subject::default(), CancelFlag::new());
    let answer = work(&Incoming { state, bytes, subject: &subject, cancel: &cancel }, ev)?;
    Ok((answer.status, answer.body))
}

/// A /filter or /prioritize request as its work on the pool gets it.
#[derive(Clone, Copy)]
struct Incoming<'a> {
    state: &'a AppState,
    bytes: &'a [u8],
    /// Filled in once the body is decoded.
    subject: &'a Subject,
    cancel: &'a CancelFlag,
}

/// A verb answered on the pool (/filter, /prioritize): its work from body to answer, its error
/// answer, and the status of an error the pool did not answer (deadline, cancel).
struct OnPool {
    verb: &'static str,
    work: VerbWork,
    error: fn(StatusCode, &str) -> Answer,
    unanswered: StatusCode,
}

/// Reads the body, runs the verb's work on the pool under the deadline, logs one line.
async fn answer_on_pool(state: Arc<AppState>, headers: HeaderMap, body: Body, verb: OnPool) -> Response {
    let started = Instant::now();
    let bytes = match read_body(&headers, body, state.max_body_bytes, state.body_timeout).await {
        Ok(b) => b,
        Err(e) => {
            let e = body_refused(verb.verb, e);
            return (verb.error)(e.status, &format!("ExtenderArgs: {}", e.message)).into_response();
        }
    };
    let (subject, cancel) = (Arc::new(Subject::default()), CancelFlag::new());
    let request = PoolRequest { verb: verb.verb, subject: Arc::clone(&subject), cancel: &cancel };
    let (on_pool, pool_subject, pool_cancel, work) =
        (Arc::clone(&state), Arc::clone(&subject), cancel.clone(), verb.work);
    let answer = run_on_pool(&state, request, move |ev| {
        let request = Incoming { state: &on_pool, bytes: &bytes, subject: &pool_subject, cancel: &pool_cancel };
        work(&request, ev)
    })
    .await;
    let answer = answer.unwrap_or_else(|message| (verb.error)(verb.unanswered, &message));
    let (pod, nodes) = subject.get().unwrap_or_default();
    let elapsed_us = started.elapsed().as_micros() as u64;
    tracing::info!(verb = verb.verb, pod, nodes, feasible = answer.feasible, elapsed_us, "answered");
    answer.into_response()
}

/// `/filter`: an `ExtenderFilterResult`; errors in its `Error` field (200 when the request was
/// valid but could not be evaluated in time).
pub async fn filter(State(state): State<Arc<AppState>>, headers: HeaderMap, body: Body) -> Response {
    let verb = OnPool { verb: "filter", work: filter_on_pool, error: filter_error, unanswered: StatusCode::OK };
    answer_on_pool(state, headers, body, verb).await
}

pub async fn bind(State(state): State<Arc<AppState>>, headers: HeaderMap, body: Body) -> Response {
    let started = Instant::now();
    let bytes = match read_body(&headers, body, state.max_body_bytes, state.body_timeout).await {
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

/// A /prioritize from its body to its encoded answer, all on the pool. `HostPriorityList` has no
/// `Error` field: an answer that is not a list is a non-200 status with `{"Error": ...}`.
fn prioritize_on_pool(request: &Incoming<'_>, ev: &Evaluator) -> Result<Answer, Cancelled> {
    let Prepared { job, .. } = match prepare(request, "prioritize") {
        Ok(p) => p,
        // 200 is reserved for a HostPriorityList: "not synced yet" is a 503 here.
        Err((StatusCode::OK, message)) => return Ok(prioritize_error(StatusCode::SERVICE_UNAVAILABLE, &message)),
        Err((status, message)) => return Ok(prioritize_error(status, &message)),
    };
    let scores = job.prioritize(ev)?;
    let list: Vec<HostPriority> = job
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
    Ok(Answer::json(StatusCode::OK, &list, false))
}

fn prioritize_error(status: StatusCode, message: &str) -> Answer {
    Answer::json(status, &ExtenderBindingResult::error(message), true)
}

/// `/prioritize`: a `HostPriorityList`, one entry per candidate in request order. The list has no
/// `Error` field, so a request that cannot be scored is answered with a non-200 status and
/// `{"Error": ...}` (kube-scheduler then scores without this extender).
pub async fn prioritize(State(state): State<Arc<AppState>>, headers: HeaderMap, body: Body) -> Response {
    let verb = OnPool {
        verb: "prioritize",
        work: prioritize_on_pool,
        error: prioritize_error,
        unanswered: StatusCode::SERVICE_UNAVAILABLE,
    };
    answer_on_pool(state, headers, body, verb).await
}
