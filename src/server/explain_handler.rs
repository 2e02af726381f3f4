//! `POST <urlPrefix>/explain`: the `explain` report of the Pod in the body (JSON or YAML, as
//! `kubectl get pod -o json|yaml` prints it), against the served cluster and plan. On the verbs
//! listener only: the report names every node and pod and costs a full evaluation, so it stays
//! where /bind is (loopback by default; `kubectl port-forward` reaches it). It runs on the
//! evaluator's pool under the request deadline, as the verbs do.
//!
//! Query: `node=NAME` (repeatable), `top=N`, `all`: `explain`'s `--node`, `--top`, `--all`.
//! `Accept`: `application/json` for the JSON report (docs/explain-json.md); `text/plain`, `*/*`
//! or none for the table. Bad input is answered 4xx with a message that names it: as
//! `{"Error": ...}` for JSON, as the text for the table.

use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::http::header::{ACCEPT, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::explain::kube_scheduler::ConfigError;
use crate::explain::report::{build, Against};
use crate::explain::source::single_pod;
use crate::explain::table::Style;
use crate::explain::view::View;
use crate::explain::ExplainError;
use crate::server::body::read_body;
use crate::server::handlers::{body_refused, run_on_pool, with_error_mark, PoolRequest, Subject};
use crate::server::verb::{Verb, VerbError};
use crate::server::AppState;
use predicate_engine::cluster::source::parse_objects;
use predicate_engine::engine::{CancelFlag, Cancelled, Evaluator};

/// What the client reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Json,
}

const TABLE: &str = "text/plain";
const JSON: &str = "application/json";

/// The answer of a verb that speaks JSON or a table (`/explain`, `/whatif`): status, body, and for
/// `/explain`'s log line the pod and how many nodes fit.
pub(crate) struct FormattedAnswer {
    status: StatusCode,
    format: Format,
    body: String,
    pod: Option<String>,
    feasible: Option<usize>,
}

impl FormattedAnswer {
    /// `verb`'s answer to an error: `{"Error": ...}` for JSON, the message for the table.
    pub(crate) fn error(verb: Verb, format: Format, e: &VerbError) -> FormattedAnswer {
        let (status, message) = (e.status(verb), e.to_string());
        let body = match format {
            Format::Json => serde_json::json!({ "Error": message }).to_string(),
            Format::Table => format!("{message}\n"),
        };
        FormattedAnswer { status, format, body, pod: None, feasible: None }
    }

    pub(crate) fn ok(format: Format, body: String) -> FormattedAnswer {
        FormattedAnswer { status: StatusCode::OK, format, body, pod: None, feasible: None }
    }

    pub(crate) fn status(&self) -> StatusCode {
        self.status
    }

    pub(crate) fn into_response(self) -> Response {
        let content_type = match self.format {
            Format::Json => JSON,
            Format::Table => "text/plain; charset=utf-8",
        };
        let failed = !self.status.is_success();
        let response = (self.status, [(CONTENT_TYPE, content_type)], self.body).into_response();
        if failed {
            with_error_mark(response)
        } else {
            response
        }
    }
}

/// The format `Accept` asks for: the acceptable type with the highest `q`; on equal `q`, the one
/// matched more specifically (`text/plain` over `text/*` over `*/*`), then the one listed first,
/// then the table. No `Accept` header: the table.
pub fn negotiate(accept: Option<&HeaderValue>) -> Result<Format, VerbError> {
    let Some(accept) = accept else { return Ok(Format::Table) };
    let text =
        accept.to_str().map_err(|_| VerbError::NotAcceptable("Accept: not a readable header value".to_string()))?;
    // Each range: its media type (lower case), its q in thousandths, its position.
    let ranges: Vec<(String, u32, usize)> = text
        .split(',')
        .enumerate()
        .filter_map(|(i, part)| {
            let mut fields = part.split(';');
            let media = fields.next()?.trim().to_ascii_lowercase();
            let q = fields
                .filter_map(|p| p.trim().strip_prefix("q=").or_else(|| p.trim().strip_prefix("Q=")))
                .map(|q| q.trim().parse::<f32>().map_or(0, |q| (q.clamp(0.0, 1.0) * 1000.0).round() as u32))
                .next_back()
                .unwrap_or(1000);
            (!media.is_empty()).then_some((media, q, i))
        })
        .collect();
    // (q, specificity, earlier position) of the range that decides a type; None if none matches.
    let rank = |media: &str| {
        let kind = media.split('/').next().unwrap_or_default();
        ranges
            .iter()
            .filter_map(|(range, q, i)| {
                let specificity = if range == media {
                    2
                } else if range.strip_suffix("/*") == Some(kind) {
                    1
                } else if range == "*/*" {
                    0
                } else {
                    return None;
                };
                Some((specificity, *q, *i))
            })
            .max_by_key(|(specificity, _, _)| *specificity)
            .map(|(specificity, q, i)| (q, specificity, std::cmp::Reverse(i)))
    };
    // On a full tie (both matched by the same range) the last maximum wins: the table.
    let candidates = [(Format::Json, rank(JSON)), (Format::Table, rank(TABLE))];
    let best = candidates
        .into_iter()
        .filter_map(|(f, r)| r.filter(|(q, _, _)| *q > 0).map(|r| (f, r)))
        .max_by_key(|(_, r)| *r);
    best.map(|(f, _)| f)
        .ok_or_else(|| VerbError::NotAcceptable(format!("Accept: {text}: the report is {TABLE} (a table) or {JSON}")))
}

/// How the query spells an option, for messages: `?top=N`, `?all`.
fn param(name: &str) -> String {
    match name.split_once(' ') {
        Some((name, value)) => format!("?{name}={value}"),
        None => format!("?{name}"),
    }
}

/// `node=` (repeatable), `top=`, `all`; anything else is refused.
pub fn parse_query(query: Option<&str>) -> Result<View, VerbError> {
    let bad = |message: String| Err(VerbError::BadRequest(message));
    let mut view = View::default();
    for (key, value) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        match key.as_ref() {
            "node" if value.is_empty() => return bad("node=: give a node name".to_string()),
            "node" => view.nodes.push(value.into_owned()),
            "top" => match value.parse::<usize>() {
                Ok(n) if n >= 1 => view.top = Some(n),
                _ => return bad(format!("top={value}: expected a whole number of nodes, at least 1")),
            },
            "all" => match value.as_ref() {
                "" | "true" | "1" => view.all = true,
                "false" | "0" => view.all = false,
                _ => return bad(format!("all={value}: expected true or false")),
            },
            other => return bad(format!("unknown query parameter {other:?}: expected node, top or all")),
        }
    }
    Ok(view)
}

/// The request on the pool: the pod from the body, the report, its rendering.
struct Work {
    state: Arc<AppState>,
    bytes: Vec<u8>,
    view: View,
    format: Format,
    subject: Arc<Subject>,
    cancel: CancelFlag,
}

fn explain_on_pool(work: &Work, ev: &Evaluator) -> Result<FormattedAnswer, Cancelled> {
    let format = work.format;
    let bad = |message: String| Ok(FormattedAnswer::error(Verb::Explain, format, &VerbError::BadRequest(message)));
    let Ok(text) = std::str::from_utf8(&work.bytes) else {
        return bad("request body: not UTF-8 text; send a Pod as JSON or YAML".to_string());
    };
    let pod = match parse_objects("request body", text) {
        Ok(objects) => match single_pod(objects) {
            Ok(pod) => pod,
            Err(message) => return bad(format!("request body: {message}")),
        },
        Err(e) => return bad(e.to_string()),
    };
    let snapshot = work.state.store.snapshot();
    work.subject.set(pod.key(), snapshot.node_count());
    if let Some(message) = work.state.not_synced() {
        return Ok(FormattedAnswer::error(Verb::Explain, format, &VerbError::NotSynced(message)));
    }
    // Explained as if pending: a copy of the pod the cluster already has must not hold its own
    // resources (the copy is cheap: the snapshot's maps share their structure).
    let key = (pod.metadata.namespace.clone(), pod.metadata.name.clone());
    let snapshot = match snapshot.pod(&key.0, &key.1) {
        Some(_) => {
            let mut own = (*snapshot).clone();
            own.remove_pod(&key);
            Arc::new(own)
        }
        None => snapshot,
    };
    let report = match build(
        Against { plan: &work.state.plan.load_full(), snapshot: &snapshot, kube_scheduler: &work.state.kube_scheduler },
        pod,
        &work.view.nodes,
        ev,
        &work.cancel,
    ) {
        Ok(r) => r,
        Err(ExplainError::Cancelled(c)) => return Err(c),
        Err(ExplainError::UnknownNode(node)) => return bad(format!("node={node}: the cluster has no such node")),
        // The pod's, not the server's: kube-scheduler would not schedule it either.
        Err(ExplainError::SchedulerConfig(e @ ConfigError::NoProfile { .. })) => {
            return bad(format!("spec.schedulerName: {e}"))
        }
        Err(e) => return Ok(FormattedAnswer::error(Verb::Explain, format, &VerbError::Explain(Box::new(e)))),
    };
    let body = match format {
        Format::Json => match serde_json::to_string(&report) {
            Ok(json) => json,
            Err(source) => {
                return Ok(FormattedAnswer::error(Verb::Explain, format, &VerbError::Encode { what: "report", source }))
            }
        },
        Format::Table => work.view.render(&report, Style { colour: false }, &param),
    };
    Ok(FormattedAnswer {
        pod: Some(report.pod),
        feasible: Some(report.feasible.len()),
        ..FormattedAnswer::ok(format, body)
    })
}

pub async fn explain(
    State(state): State<Arc<AppState>>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let started = Instant::now();
    let format = match negotiate(headers.get(ACCEPT)) {
        Ok(f) => f,
        Err(e) => return FormattedAnswer::error(Verb::Explain, Format::Table, &e).into_response(),
    };
    let view = parse_query(query.as_deref())
        .and_then(|v| v.check(format == Format::Json, &param).map(|()| v).map_err(VerbError::BadRequest));
    let view = match view {
        Ok(v) => v,
        Err(e) => return FormattedAnswer::error(Verb::Explain, format, &e).into_response(),
    };
    let bytes = match read_body(&headers, body, state.max_body_bytes, state.body_timeout).await {
        Ok(b) => b,
        Err(e) => {
            return FormattedAnswer::error(Verb::Explain, format, &body_refused(Verb::Explain, e)).into_response()
        }
    };
    let (subject, cancel) = (Arc::new(Subject::default()), CancelFlag::new());
    let request = PoolRequest { verb: Verb::Explain, subject: Arc::clone(&subject), cancel: &cancel };
    let work =
        Work { state: Arc::clone(&state), bytes, view, format, subject: Arc::clone(&subject), cancel: cancel.clone() };
    let answer = run_on_pool(&state, request, move |ev| explain_on_pool(&work, ev)).await;
    let answer = answer.unwrap_or_else(|e| FormattedAnswer::error(Verb::Explain, format, &e.into()));
    let elapsed_us = started.elapsed().as_micros() as u64;
    tracing::info!(
        verb = "explain",
        status = answer.status.as_u16(),
        pod = answer.pod.as_deref(),
        feasible = answer.feasible,
        elapsed_us,
        "answered"
    );
    answer.into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_chooses_the_format() {
        let cases: &[(Option<&str>, Result<Format, ()>)] = &[
            (None, Ok(Format::Table)),
            (Some("*/*"), Ok(Format::Table)),
            (Some("application/json"), Ok(Format::Json)),
            (Some("Application/JSON"), Ok(Format::Json)),
            (Some("text/plain"), Ok(Format::Table)),
            (Some("application/*"), Ok(Format::Json)),
            (Some("text/*"), Ok(Format::Table)),
            (Some("application/json, text/plain"), Ok(Format::Json)),
            (Some("text/plain, application/json"), Ok(Format::Table)),
            (Some("text/plain;q=0.5, application/json"), Ok(Format::Json)),
            (Some("application/json;q=0.2, */*;q=0.9"), Ok(Format::Table)),
            (Some("application/json, */*;q=0.1"), Ok(Format::Json)),
            (Some("text/html, application/json;q=0.8"), Ok(Format::Json)),
            (Some("text/plain;q=0, */*"), Ok(Format::Json)),
            (Some("image/png"), Err(())),
            (Some("application/json;q=0"), Err(())),
        ];
        for (accept, want) in cases {
            let header = accept.map(HeaderValue::from_static);
            let got = negotiate(header.as_ref()).map_err(|e| (e.status(Verb::Explain), e.to_string()));
            match want {
                Ok(f) => assert_eq!(got, Ok(*f), "{accept:?}"),
                Err(()) => {
                    assert!(
                        got.is_err_and(|(status, e)| status == StatusCode::NOT_ACCEPTABLE
                            && e.contains("text/plain (a table) or application/json")),
                        "{accept:?}"
                    )
                }
            }
        }
    }

    #[test]
    fn the_query_is_read_or_refused_with_the_parameter_named() {
        let view = parse_query(Some("node=a&node=b%2Dc&top=3")).unwrap();
        assert_eq!(view, View { nodes: vec!["a".into(), "b-c".into()], top: Some(3), all: false });
        assert_eq!(parse_query(None).unwrap(), View::default());
        assert!(parse_query(Some("all")).unwrap().all);
        for (query, want) in [
            ("top=0", "top=0: expected a whole number of nodes, at least 1"),
            ("top=many", "top=many: expected a whole number"),
            ("node=", "node=: give a node name"),
            ("all=maybe", "all=maybe: expected true or false"),
            ("nodes=a", "unknown query parameter \"nodes\": expected node, top or all"),
        ] {
            let got = parse_query(Some(query)).unwrap_err();
            assert_eq!(got.status(Verb::Explain), StatusCode::BAD_REQUEST);
            assert!(got.to_string().starts_with(want), "{query}: {got}");
        }
    }
}
