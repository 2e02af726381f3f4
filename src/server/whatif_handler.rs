//! `POST <urlPrefix>/whatif`: the `whatif` report of the Policy in the body (JSON or YAML) against
//! the Policy served, on the served cluster model. On the verbs listener only, as `/explain`: the
//! report names pods and nodes. It is bounded: one at a time (a second gets 429 while one runs),
//! under its own deadline (`--whatif-timeout`, since it evaluates every pod of the scheduler), and
//! on its own evaluator pool, so the verbs kube-scheduler waits on never queue behind it.
//!
//! Query: `scheduler=NAME` (default `predicate-scheduler`), `sample=N`, `all`: `whatif`'s
//! `--scheduler`, `--sample`, `--all`. `Accept` chooses the JSON report (docs/whatif.md) or the
//! table, as for `/explain`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::http::header::ACCEPT;
use axum::http::HeaderMap;
use axum::response::Response;

use crate::explain::table::Style;
use crate::scheduler_config::SHIPPED_SCHEDULER_NAME;
use crate::server::body::read_body;
use crate::server::explain_handler::{negotiate, Format, FormattedAnswer};
use crate::server::handlers::body_refused;
use crate::server::verb::{Unanswered, Verb, VerbError};
use crate::server::AppState;
use crate::whatif::render::render;
use crate::whatif::{evaluate, Input, Source, WhatifError, DEFAULT_SAMPLE};
use predicate_engine::engine::evaluator::default_parallelism;
use predicate_engine::engine::{CancelFlag, Evaluator};
use predicate_engine::policy::Overrides;

/// The default of `--whatif-timeout`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// What bounds `/whatif`: its deadline, and the one run at a time.
#[derive(Debug)]
pub struct WhatifGate {
    pub timeout: Duration,
    /// Held by the running report until its work has stopped (not only until its answer).
    pub(crate) running: Arc<tokio::sync::Semaphore>,
}

impl WhatifGate {
    pub fn new(timeout: Duration) -> Self {
        WhatifGate { timeout, running: Arc::new(tokio::sync::Semaphore::new(1)) }
    }
}

impl Default for WhatifGate {
    fn default() -> Self {
        WhatifGate::new(DEFAULT_TIMEOUT)
    }
}

/// The query: `scheduler=`, `sample=`, `all`; anything else is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    pub scheduler: String,
    pub sample: usize,
    pub all: bool,
}

pub fn parse_query(query: Option<&str>) -> Result<Query, VerbError> {
    let bad = |message: String| Err(VerbError::BadRequest(message));
    let mut q = Query { scheduler: SHIPPED_SCHEDULER_NAME.to_string(), sample: DEFAULT_SAMPLE, all: false };
    for (key, value) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        match key.as_ref() {
            "scheduler" if value.is_empty() => return bad("scheduler=: give a scheduler name".to_string()),
            "scheduler" => q.scheduler = value.into_owned(),
            "sample" => match value.parse::<usize>() {
                Ok(n) => q.sample = n,
                _ => return bad(format!("sample={value}: expected a whole number of pods")),
            },
            "all" => match value.as_ref() {
                "" | "true" | "1" => q.all = true,
                "false" | "0" => q.all = false,
                _ => return bad(format!("all={value}: expected true or false")),
            },
            other => return bad(format!("unknown query parameter {other:?}: expected scheduler, sample or all")),
        }
    }
    Ok(q)
}

fn param(name: &str) -> String {
    format!("?{name}")
}

/// The comparison, on its own pool; `Err` only when cancelled.
fn run(state: &AppState, bytes: &[u8], query: &Query, format: Format, cancel: &CancelFlag) -> FormattedAnswer {
    let error = |e: VerbError| FormattedAnswer::error(Verb::Whatif, format, &e);
    let new = match predicate_engine::policy::parse("request body", bytes, Overrides::default()) {
        Ok(plan) => plan,
        Err(e) => return error(VerbError::BadRequest(e.to_string())),
    };
    if let Some(message) = state.not_synced() {
        return error(VerbError::NotSynced(message));
    }
    let evaluator = match Evaluator::new(default_parallelism()) {
        Ok(e) => e,
        Err(e) => return error(VerbError::Whatif(Box::new(WhatifError::Evaluator(e.to_string())))),
    };
    let current = state.plan.load_full();
    let snapshot = state.store.snapshot();
    let input = Input {
        current: Source { plan: &current, name: "served".to_string() },
        new: Source { plan: &new, name: "request body".to_string() },
        snapshot: &snapshot,
        kube_scheduler: &state.kube_scheduler,
        scheduler: &query.scheduler,
        sample: query.sample,
    };
    let report = match evaluate(&input, &evaluator, cancel) {
        Ok(r) => r,
        Err(WhatifError::Cancelled(_)) => return error(VerbError::Unanswered(Unanswered::Cancelled)),
        Err(e) => return error(VerbError::Whatif(Box::new(e))),
    };
    let body = match format {
        Format::Json => match serde_json::to_string(&report) {
            Ok(json) => json,
            Err(source) => return error(VerbError::Encode { what: "report", source }),
        },
        Format::Table => render(&report, query.all, Style { colour: false }, &param),
    };
    FormattedAnswer::ok(format, body)
}

pub async fn whatif(
    State(state): State<Arc<AppState>>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let started = Instant::now();
    let format = match negotiate(headers.get(ACCEPT)) {
        Ok(f) => f,
        Err(e) => return FormattedAnswer::error(Verb::Whatif, Format::Table, &e).into_response(),
    };
    let query = match parse_query(query.as_deref()) {
        Ok(q) => q,
        Err(e) => return FormattedAnswer::error(Verb::Whatif, format, &e).into_response(),
    };
    let Ok(one) = Arc::clone(&state.whatif.running).try_acquire_owned() else {
        let busy = VerbError::Busy("another whatif is running; send this one when it has answered".to_string());
        return FormattedAnswer::error(Verb::Whatif, format, &busy).into_response();
    };
    let bytes = match read_body(&headers, body, state.max_body_bytes, state.body_timeout).await {
        Ok(b) => b,
        Err(e) => return FormattedAnswer::error(Verb::Whatif, format, &body_refused(Verb::Whatif, e)).into_response(),
    };
    let cancel = CancelFlag::new();
    let work = {
        let (state, cancel) = (Arc::clone(&state), cancel.clone());
        tokio::task::spawn_blocking(move || {
            let answer = run(&state, &bytes, &query, format, &cancel);
            drop(one);
            answer
        })
    };
    let answer = match tokio::time::timeout(state.whatif.timeout, work).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(join)) => FormattedAnswer::error(
            Verb::Whatif,
            format,
            &VerbError::Whatif(Box::new(WhatifError::Evaluator(format!("the what-if task failed: {join}")))),
        ),
        Err(_) => {
            cancel.cancel();
            let deadline = humantime::format_duration(state.whatif.timeout).to_string();
            let late = VerbError::Unanswered(Unanswered::WhatifTimedOut { deadline });
            FormattedAnswer::error(Verb::Whatif, format, &late)
        }
    };
    tracing::info!(
        verb = "whatif",
        status = answer.status().as_u16(),
        elapsed_us = started.elapsed().as_micros() as u64,
        "answered"
    );
    answer.into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::StatusCode;

    #[test]
    fn the_query_is_read_or_refused_with_the_parameter_named() {
        let q = parse_query(Some("scheduler=my-sched&sample=5&all")).unwrap();
        assert_eq!(q, Query { scheduler: "my-sched".into(), sample: 5, all: true });
        assert_eq!(parse_query(None).unwrap().scheduler, SHIPPED_SCHEDULER_NAME);
        for (query, want) in [
            ("sample=many", "sample=many: expected a whole number of pods"),
            ("scheduler=", "scheduler=: give a scheduler name"),
            ("all=maybe", "all=maybe: expected true or false"),
            ("policy=x", "unknown query parameter \"policy\": expected scheduler, sample or all"),
        ] {
            let got = parse_query(Some(query)).unwrap_err();
            assert_eq!(got.status(Verb::Whatif), StatusCode::BAD_REQUEST);
            assert_eq!(got.to_string(), want, "{query}");
        }
    }
}
