//! The verbs `/filter`, `/prioritize` and `/bind`, and what every verb shares (running on the
//! evaluator's pool within the request deadline).
//!
//! Status codes: a body that is not a valid request gets 400 (413 when too large, 408 when it is
//! still arriving after `--body-timeout`) with the verb's result object and its `Error` filled. A
//! valid request that cannot be carried out gets 200 with `Error` filled, because kube-scheduler
//! reads the body of 200 answers only.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::value::RawValue;

use crate::metrics::phases::{Phase, PhaseClock};
use crate::metrics::requests::{AnsweredWithError, CandidateForm};
use crate::server::answer_bytes::{AnswerBytes, Pieces};
use crate::server::body::{declared_length, read_body, BodyError};
use crate::server::item_archive::ItemArchive;
use crate::server::large_bodies::{Admitted, TurnNotReached};
use crate::server::pool;
use crate::server::streamed_nodes::{read_streamed, StreamedBody};
use crate::server::verb::{Unanswered, Verb, VerbError};
use crate::server::AppState;
use crate::wire::predecoded::Predecoded;
use crate::wire::{
    Candidates, ExtenderArgs, ExtenderBindingArgs, ExtenderBindingResult, ExtenderFilterResult,
    ExtenderPreemptionResult, HostPriority,
};
use predicate_engine::engine::{CancelFlag, Cancelled, Candidate, EvaluationError, Evaluator, RequestJob, Timed};
use predicate_engine::parallel::map_where_running;

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
pub(crate) fn body_refused(verb: Verb, e: BodyError) -> VerbError {
    tracing::info!(verb = verb.name(), status = e.status.as_u16(), error = %e.message, "refused a request body");
    VerbError::Body { verb, source: e }
}

/// Logs a body that is not a valid request.
pub(crate) fn malformed(verb: Verb, e: crate::wire::WireError) -> VerbError {
    tracing::info!(verb = verb.name(), error = %e, "rejected a malformed request");
    VerbError::Malformed(e)
}

pub use crate::server::filter_result::{filter_result, UNKNOWN_NODE};

/// A decoded filter or prioritize request, with its candidates resolved against the model.
struct ResolvedRequest<'a> {
    pod_key: String,
    job: RequestJob,
    /// The request's `Nodes`: list metadata and each node's bytes (`None` in `NodeNames` mode).
    request_nodes: Option<(Option<&'a RawValue>, Vec<&'a RawValue>)>,
}

/// Decodes `ExtenderArgs` and resolves the candidates, on the evaluator's pool (decoding and
/// resolving run in parallel on it).
fn resolve_request<'a>(
    request: &Incoming<'a>,
    verb: Verb,
    clock: &mut PhaseClock,
) -> Result<ResolvedRequest<'a>, VerbError> {
    let Incoming { state, body, subject, cancel } = *request;
    let args = ExtenderArgs::decode_with(body.bytes(), body.predecoded()).map_err(|e| malformed(verb, e))?;
    clock.lap(Phase::Decode);
    let pod_key = args.pod.key();
    subject.set(pod_key.clone(), args.nodes.len());
    if let Some(message) = state.not_synced() {
        tracing::info!(verb = verb.name(), pod = %pod_key, "answered before the cluster cache synced");
        return Err(VerbError::NotSynced(message));
    }
    let snapshot = state.store.snapshot();
    let (candidates, request_nodes) = match args.nodes {
        Candidates::Names(names) => (map_where_running(names, |_, n| Candidate::by_name(&snapshot, n)), None),
        Candidates::Nodes(list) => {
            let (raws, candidates): (Vec<&RawValue>, Vec<Candidate>) = map_where_running(list.items, |_, item| {
                let (node, nominated) = snapshot.candidate_for(item.node);
                (item.raw, Candidate::Known(node, nominated))
            })
            .into_iter()
            .unzip();
            (candidates, Some((list.metadata, raws)))
        }
    };
    let requests = &state.metrics.requests;
    let verb_name = verb.name();
    if request_nodes.is_some() {
        requests.candidates(verb_name, CandidateForm::Nodes, candidates.len());
    } else {
        let unknown = candidates.iter().filter(|c| matches!(c, Candidate::Unknown(_))).count();
        requests.candidates(verb_name, CandidateForm::NodeNames, candidates.len());
        requests.candidates(verb_name, CandidateForm::Unknown, unknown);
    }
    let job = RequestJob {
        plan: state.plan.load_full(),
        pod: args.pod,
        snapshot,
        candidates,
        from_request_nodes: request_nodes.is_some(),
        cancel: cancel.clone(),
        timed: if verb == Verb::Filter { state.sampler.pick() } else { Timed::Never },
    };
    clock.lap(Phase::Resolve);
    Ok(ResolvedRequest { pod_key, job, request_nodes })
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
    pub verb: Verb,
    pub subject: Arc<Subject>,
    pub cancel: &'a CancelFlag,
}

/// Runs `work` on the evaluator's pool within the request deadline, cancelling it when the deadline
/// passes or the client goes away (this future is dropped).
pub(crate) async fn run_on_pool<R: Send + 'static>(
    state: &AppState,
    request: PoolRequest<'_>,
    work: impl FnOnce(&Evaluator) -> Result<R, Cancelled> + Send + 'static,
) -> Result<R, Unanswered> {
    run_on_pool_within(state, request, state.request_timeout, work).await
}

/// [`run_on_pool`] with `left` of the request deadline left (a streamed body used the rest).
async fn run_on_pool_within<R: Send + 'static>(
    state: &AppState,
    request: PoolRequest<'_>,
    left: Duration,
    work: impl FnOnce(&Evaluator) -> Result<R, Cancelled> + Send + 'static,
) -> Result<R, Unanswered> {
    let PoolRequest { verb, subject, cancel } = request;
    let _cancel_on_drop = CancelOnDrop(cancel.clone());
    let rx = pool::on_pool(&state.evaluator, work);
    match tokio::time::timeout(left, rx).await {
        Ok(Ok(Ok(v))) => {
            evaluated(state, verb, &subject);
            Ok(v)
        }
        Ok(Ok(Err(_))) | Ok(Err(_)) => Err(Unanswered::Cancelled),
        Err(_elapsed) => {
            cancel.cancel();
            Err(timed_out(state, verb, &subject))
        }
    }
}

/// A /filter or /prioritize whose body is at most `--inline-max-bytes`, answered on this thread
/// ([`Evaluator::inline`]) within `left` of the request deadline. Nothing but the deadline can
/// cancel it: a client that goes away is noticed once the answer is written.
fn answer_inline(
    state: &AppState,
    verb: Verb,
    body: &RequestBody,
    subject: &Subject,
    left: Duration,
    work: VerbWork,
    mut clock: PhaseClock,
) -> Result<(Answer, PhaseClock), Unanswered> {
    let cancel = CancelFlag::with_deadline(Instant::now() + left);
    let ev = state.evaluator.inline();
    clock.lap(Phase::Queue);
    let request = Incoming { state, body, subject, cancel: &cancel };
    state.metrics.requests.answered_inline(verb.name());
    match work(&request, &ev, &mut clock) {
        Ok(answer) => {
            evaluated(state, verb, subject);
            Ok((answer, clock))
        }
        Err(Cancelled) => Err(timed_out(state, verb, subject)),
    }
}

/// Counts the nodes of a request evaluated to the end.
fn evaluated(state: &AppState, verb: Verb, subject: &Subject) {
    if let Some((_, nodes)) = subject.get() {
        state.metrics.requests.evaluated(verb.name(), nodes);
    }
}

/// Counts and logs a request whose deadline passed; its answer.
fn timed_out(state: &AppState, verb: Verb, subject: &Subject) -> Unanswered {
    let name = verb.name();
    state.metrics.requests.timed_out(name);
    let deadline = humantime::format_duration(state.request_timeout).to_string();
    match subject.get() {
        Some((pod, nodes)) => {
            tracing::warn!(verb = name, pod, nodes, "request timed out");
            Unanswered::TimedOut { verb, pod: pod.to_string(), nodes, deadline }
        }
        None => {
            tracing::warn!(verb = name, "request timed out while its body was decoded");
            Unanswered::TimedOutDecoding { verb, deadline }
        }
    }
}

/// A JSON verb's answer: status, body, and whether it carries an error.
pub(crate) struct Answer {
    status: StatusCode,
    body: AnswerBytes,
    error: bool,
    /// For the log line of a /filter: how many nodes fit.
    feasible: Option<usize>,
}

impl Answer {
    /// The error answer of a JSON verb: its status for `verb`, and the verb's result object with
    /// `Error` filled (`/prioritize`'s list has no `Error`: `{"Error": ...}` alone).
    pub(crate) fn error(verb: Verb, e: &VerbError) -> Answer {
        let (status, message) = (e.status(verb), e.to_string());
        match verb {
            Verb::Filter => Answer::json(status, &ExtenderFilterResult::error(&message), true),
            Verb::Preempt => Answer::json(status, &ExtenderPreemptionResult::error(&message), true),
            Verb::Prioritize | Verb::Bind | Verb::Explain | Verb::Whatif => {
                Answer::json(status, &ExtenderBindingResult::error(&message), true)
            }
        }
    }

    fn json(status: StatusCode, value: &impl serde::Serialize, error: bool) -> Answer {
        match serde_json::to_vec(value) {
            Ok(body) => Answer { status, body: body.into(), error, feasible: None },
            Err(e) => Answer::unencodable(&e),
        }
    }

    /// [`Answer::json`] for an answer that echoes parts of the request body: those are shared
    /// with it (or its kept items), not copied (see [`crate::server::answer_bytes`]).
    fn json_sharing(status: StatusCode, value: &impl serde::Serialize, body: &RequestBody) -> Answer {
        let mut pieces = Pieces::sharing(body.bytes().clone(), body.archive().cloned());
        match serde_json::to_writer(&mut pieces, value) {
            Ok(()) => Answer { status, body: pieces.finish(), error: false, feasible: None },
            Err(e) => Answer::unencodable(&e),
        }
    }

    fn unencodable(e: &serde_json::Error) -> Answer {
        Answer {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            body: format!("{{\"Error\":{:?}}}", format!("encoding the answer: {e}")).into_bytes().into(),
            error: true,
            feasible: None,
        }
    }

    /// This answer, holding a large request's admission until it has been written.
    fn holding(self, admitted: Admitted) -> Answer {
        Answer { body: self.body.holding(admitted), ..self }
    }

    pub(crate) fn into_response(self) -> Response {
        let response = (self.status, [(CONTENT_TYPE, "application/json")], self.body.into_body()).into_response();
        if self.error {
            with_error_mark(response)
        } else {
            response
        }
    }
}

/// A /filter from its body to its encoded answer, all on the pool: decode, resolve, evaluate,
/// encode.
fn filter_on_pool(request: &Incoming<'_>, ev: &Evaluator, clock: &mut PhaseClock) -> Result<Answer, Cancelled> {
    let state = request.state;
    let ResolvedRequest { pod_key, job, request_nodes } = match resolve_request(request, Verb::Filter, clock) {
        Ok(r) => r,
        Err(e) => return Ok(Answer::error(Verb::Filter, &e)),
    };
    let prepared = job.prepare();
    clock.lap(Phase::Prepare);
    let filtered = match job.filter_prepared(ev, &prepared) {
        Ok(filtered) => filtered,
        Err(EvaluationError::Cancelled(c)) => return Err(c),
        Err(EvaluationError::MissingState(e)) => {
            tracing::error!(verb = "filter", pod = %pod_key, error = %e, "the evaluation failed");
            return Ok(Answer::error(Verb::Filter, &VerbError::Evaluation(e)));
        }
    };
    state.metrics.predicates.record_counts(&job.plan, &filtered.report);
    clock.lap(Phase::Evaluate);
    let request_nodes = request_nodes.as_ref().map(|(metadata, raws)| (*metadata, raws.as_slice()));
    let result = filter_result(&job.candidates, &filtered.verdicts, request_nodes, &pod_key);
    let feasible = result.node_names.as_ref().map_or(0, Vec::len) + result.nodes.as_ref().map_or(0, |n| n.items.len());
    let answer = Answer { feasible: Some(feasible), ..Answer::json_sharing(StatusCode::OK, &result, request.body) };
    drop(result);
    let metrics = Arc::clone(&state.metrics);
    pool::after_answer(ev, move || {
        metrics.predicates.record_timings(&job.plan, &filtered.report);
        drop((job, prepared, filtered));
    });
    clock.lap(Phase::Encode);
    Ok(answer)
}

/// A verb's work on the pool: from the request body to its answer.
type VerbWork = fn(&Incoming<'_>, &Evaluator, &mut PhaseClock) -> Result<Answer, Cancelled>;

/// A verb's answer made without HTTP: the status and the JSON body.
#[cfg(any(test, feature = "test-util"))]
pub type BodyAnswer = Result<(StatusCode, Vec<u8>), Cancelled>;

/// A /filter body answered as the handler answers it once the body is in (decode, resolve,
/// evaluate on `ev`, encode), without HTTP or a deadline: the status and the JSON body. For the
/// fuzz targets and the replay of their findings (the `test-util` feature; the shipped binary has no
/// such entry).
#[cfg(any(test, feature = "test-util"))]
pub fn filter_body(state: &AppState, body: &[u8], ev: &Evaluator) -> BodyAnswer {
    answer_body(filter_on_pool, state, body, ev)
}

/// [`filter_body`] for /prioritize.
#[cfg(any(test, feature = "test-util"))]
pub fn prioritize_body(state: &AppState, body: &[u8], ev: &Evaluator) -> BodyAnswer {
    answer_body(prioritize_on_pool, state, body, ev)
}

#[cfg(any(test, feature = "test-util"))]
fn answer_body(work: VerbWork, state: &AppState, bytes: &[u8], ev: &Evaluator) -> BodyAnswer {
    let (subject, cancel) = (Subject::default(), CancelFlag::new());
    let body = RequestBody::Whole(Bytes::copy_from_slice(bytes));
    let request = Incoming { state, body: &body, subject: &subject, cancel: &cancel };
    let answer = work(&request, ev, &mut PhaseClock::starting(Instant::now()))?;
    Ok(match answer.body.into_vec() {
        Ok(body) => (answer.status, body),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, format!("{{\"Error\":{:?}}}", e.to_string()).into_bytes()),
    })
}

/// A /filter or /prioritize request as its work on the pool gets it.
#[derive(Clone, Copy)]
struct Incoming<'a> {
    state: &'a AppState,
    body: &'a RequestBody,
    /// Filled in once the body is decoded.
    subject: &'a Subject,
    cancel: &'a CancelFlag,
}

/// A /filter or /prioritize body as read: whole, or streamed.
enum RequestBody {
    Whole(Bytes),
    Streamed(StreamedBody),
}

impl RequestBody {
    /// The body to decode (a streamed body's skeleton); a /filter answer shares the `Nodes` items
    /// it echoes with it.
    fn bytes(&self) -> &Bytes {
        match self {
            RequestBody::Whole(bytes) => bytes,
            RequestBody::Streamed(streamed) => &streamed.skeleton,
        }
    }

    /// A streamed body's nodes, decoded as they arrived.
    fn predecoded(&self) -> Option<&Predecoded> {
        match self {
            RequestBody::Whole(_) => None,
            RequestBody::Streamed(streamed) => Some(&streamed.predecoded),
        }
    }

    /// A streamed /filter body's items, kept for the answer.
    fn archive(&self) -> Option<&Arc<ItemArchive>> {
        match self {
            RequestBody::Whole(_) => None,
            RequestBody::Streamed(streamed) => streamed.archive.as_ref(),
        }
    }
}

/// Reads a /filter or /prioritize body, and what is left of the request deadline for its work on
/// the pool. A large body (`admitted`) that declares its length is streamed: its nodes are decoded
/// as it arrives, and what is left of that once it is in counts against the deadline, as the
/// decoding of any body does. Errors are the answer to give.
async fn read_request(
    state: &AppState,
    headers: &HeaderMap,
    body: Body,
    verb: Verb,
    admitted: bool,
) -> Result<(RequestBody, Duration), Answer> {
    let refused = |e| Answer::error(verb, &body_refused(verb, e));
    if !(admitted && declared_length(headers).is_some()) {
        let bytes = read_body(headers, body, state.max_body_bytes, state.body_timeout).await.map_err(refused)?;
        return Ok((RequestBody::Whole(Bytes::from(bytes)), state.request_timeout));
    }
    let limits = (state.max_body_bytes, state.body_timeout);
    let read = read_streamed(headers, body, limits, &state.evaluator, verb == Verb::Filter).await.map_err(refused)?;
    let body_in = Instant::now();
    match tokio::time::timeout(state.request_timeout, read.decoded()).await {
        Ok(decoded) => {
            let body = RequestBody::Streamed(decoded.map_err(refused)?);
            Ok((body, state.request_timeout.saturating_sub(body_in.elapsed())))
        }
        Err(_elapsed) => {
            state.metrics.requests.timed_out(verb.name());
            tracing::warn!(verb = verb.name(), "request timed out while its body was decoded");
            let deadline = humantime::format_duration(state.request_timeout).to_string();
            Err(Answer::error(verb, &Unanswered::TimedOutDecoding { verb, deadline }.into()))
        }
    }
}

/// Reads the body, runs the verb's work on the pool under the deadline, logs one line.
async fn answer_on_pool(state: Arc<AppState>, headers: HeaderMap, body: Body, verb: Verb, work: VerbWork) -> Response {
    let started = Instant::now();
    // A large body waits for its turn (at most half the request deadline): the time is `read`'s.
    let wait = state.request_timeout / 2;
    let admitted = match state.large_bodies.admit(&headers, state.max_body_bytes, wait).await {
        Ok(admitted) => admitted,
        Err(TurnNotReached) => {
            let bytes = declared_length(&headers).map_or("unknown length".to_string(), |n| n.to_string());
            let waited = humantime::format_duration(wait).to_string();
            tracing::warn!(verb = verb.name(), bytes, waited, "a large request body waited too long for its turn");
            let e = Unanswered::LargeBodyWaited { verb, bytes, waited };
            return Answer::error(verb, &e.into()).into_response();
        }
    };
    let mut clock = PhaseClock::starting(started);
    let (body, left) = match read_request(&state, &headers, body, verb, admitted.is_some()).await {
        Ok(read) => read,
        Err(answer) => return answer.into_response(),
    };
    clock.lap(Phase::Read);
    let subject = Arc::new(Subject::default());
    let inline = matches!(&body, RequestBody::Whole(bytes) if bytes.len() <= state.inline_max_bytes);
    let answered = if inline {
        answer_inline(&state, verb, &body, &subject, left, work, clock)
    } else {
        let cancel = CancelFlag::new();
        let request = PoolRequest { verb, subject: Arc::clone(&subject), cancel: &cancel };
        let (on_pool, pool_subject, pool_cancel) = (Arc::clone(&state), Arc::clone(&subject), cancel.clone());
        run_on_pool_within(&state, request, left, move |ev| {
            clock.lap(Phase::Queue);
            let request = Incoming { state: &on_pool, body: &body, subject: &pool_subject, cancel: &pool_cancel };
            work(&request, ev, &mut clock).map(|answer| (answer, clock))
        })
        .await
    };
    let (pod, nodes) = subject.get().unwrap_or_default();
    let (answer, clock) = match answered {
        Ok((answer, mut clock)) => {
            clock.lap(Phase::Resume);
            state.metrics.requests.phases(verb.name(), &clock);
            (answer, Some(clock))
        }
        Err(e) => (Answer::error(verb, &e.into()), None),
    };
    let elapsed_us = started.elapsed().as_micros() as u64;
    let us = |phase| clock.as_ref().map(|c| c.micros(phase));
    tracing::info!(
        verb = verb.name(),
        pod,
        nodes,
        feasible = answer.feasible,
        inline,
        elapsed_us,
        read_us = us(Phase::Read),
        queue_us = us(Phase::Queue),
        decode_us = us(Phase::Decode),
        resolve_us = us(Phase::Resolve),
        prepare_us = us(Phase::Prepare),
        evaluate_us = us(Phase::Evaluate),
        encode_us = us(Phase::Encode),
        resume_us = us(Phase::Resume),
        "answered"
    );
    answer.holding(admitted).into_response()
}

/// `/filter`: an `ExtenderFilterResult`; errors in its `Error` field (200 when the request was
/// valid but could not be evaluated in time).
pub async fn filter(State(state): State<Arc<AppState>>, headers: HeaderMap, body: Body) -> Response {
    answer_on_pool(state, headers, body, Verb::Filter, filter_on_pool).await
}

pub async fn bind(State(state): State<Arc<AppState>>, headers: HeaderMap, body: Body) -> Response {
    let started = Instant::now();
    let bytes = match read_body(&headers, body, state.max_body_bytes, state.body_timeout).await {
        Ok(b) => b,
        Err(e) => return Answer::error(Verb::Bind, &body_refused(Verb::Bind, e)).into_response(),
    };
    let args = match ExtenderBindingArgs::decode(&bytes) {
        Ok(a) => a,
        Err(e) => return Answer::error(Verb::Bind, &malformed(Verb::Bind, e)).into_response(),
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
fn prioritize_on_pool(request: &Incoming<'_>, ev: &Evaluator, clock: &mut PhaseClock) -> Result<Answer, Cancelled> {
    let ResolvedRequest { job, .. } = match resolve_request(request, Verb::Prioritize, clock) {
        Ok(r) => r,
        Err(e) => return Ok(Answer::error(Verb::Prioritize, &e)),
    };
    let scores = job.prioritize(ev)?;
    clock.lap(Phase::Evaluate);
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
    let answer = Answer::json(StatusCode::OK, &list, false);
    pool::after_answer(ev, move || drop((job, list)));
    clock.lap(Phase::Encode);
    Ok(answer)
}

/// `/prioritize`: a `HostPriorityList`, one entry per candidate in request order. The list has no
/// `Error` field, so a request that cannot be scored is answered with a non-200 status and
/// `{"Error": ...}` (kube-scheduler then scores without this extender).
pub async fn prioritize(State(state): State<Arc<AppState>>, headers: HeaderMap, body: Body) -> Response {
    answer_on_pool(state, headers, body, Verb::Prioritize, prioritize_on_pool).await
}
