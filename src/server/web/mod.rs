//! The read-only web pages (`--web`), beside `/explain` on the verbs listener and under the same
//! rules (loopback by default; beyond it, HTTPS with client certificates):
//!
//! - `GET <urlPrefix>/ui?scheduler=NAME&limit=N`: the scheduler's pending pods with their summary
//!   lines;
//! - `GET <urlPrefix>/ui/pod?namespace=NS&name=NAME[&all]`: one pod of the model explained as a
//!   grid (as if pending, as `/explain` does with a pod the cluster has);
//! - `GET|POST <urlPrefix>/ui/whatif`: the what-if form, and the report for a pasted Policy
//!   (`policy=` and `scheduler=`, in the query or the form body).
//!
//! Each page is computed like `/whatif`: one at a time (429 while one is), under
//! `--whatif-timeout`, on a pool of its own. `html.rs` has the frame, `pages.rs` the pages.

pub mod html;
pub mod pages;

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use crate::explain::report::{build, Against};
use crate::explain::ExplainError;
use crate::scheduler_config::SHIPPED_SCHEDULER_NAME;
use crate::server::body::read_body;
use crate::server::AppState;
use crate::whatif::{evaluate, Input, Source, WhatifError, DEFAULT_SAMPLE};
use html::{esc, page};
use pages::PendingEntry;
use predicate_engine::engine::evaluator::default_parallelism;
use predicate_engine::engine::{CancelFlag, Evaluator};
use predicate_engine::policy::Overrides;

/// How many pending pods the list explains when not told (`limit=`).
pub const DEFAULT_LIMIT: usize = 50;

struct Web {
    app: Arc<AppState>,
    prefix: String,
}

/// The pages' routes under `prefix`.
pub fn router(app: Arc<AppState>, prefix: &str) -> Router {
    let web = Arc::new(Web { app, prefix: prefix.to_string() });
    Router::new()
        .route(&format!("{prefix}/ui"), get(pending))
        .route(&format!("{prefix}/ui/pod"), get(pod))
        .route(&format!("{prefix}/ui/whatif"), get(whatif_get).post(whatif_post))
        .with_state(web)
}

fn html(status: StatusCode, body: String) -> Response {
    (status, [(CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
}

fn message(web: &Web, status: StatusCode, title: &str, text: &str) -> Response {
    html(status, page(&web.prefix, title, &format!("<p id=\"error\">{}</p>\n", esc(text))))
}

fn params(text: &str) -> HashMap<String, String> {
    form_urlencoded::parse(text.as_bytes()).into_owned().collect()
}

/// Runs a page's work one at a time, under the deadline, on a pool of its own.
async fn bounded(
    web: &Arc<Web>,
    work: impl FnOnce(&Web, &Evaluator, &CancelFlag) -> Response + Send + 'static,
) -> Response {
    let Ok(one) = Arc::clone(&web.app.whatif.running).try_acquire_owned() else {
        return message(
            web,
            StatusCode::TOO_MANY_REQUESTS,
            "Busy",
            "another page or whatif is being computed; reload when it is done",
        );
    };
    if let Some(text) = web.app.not_synced() {
        return message(web, StatusCode::SERVICE_UNAVAILABLE, "Not ready", &text);
    }
    let cancel = CancelFlag::new();
    let task = {
        let (web, cancel) = (Arc::clone(web), cancel.clone());
        tokio::task::spawn_blocking(move || {
            let answer = match Evaluator::new(default_parallelism()) {
                Ok(ev) => work(&web, &ev, &cancel),
                Err(e) => message(
                    &web,
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "Error",
                    &format!("cannot start the node evaluator: {e}"),
                ),
            };
            drop(one);
            answer
        })
    };
    match tokio::time::timeout(web.app.whatif.timeout, task).await {
        Ok(Ok(response)) => response,
        Ok(Err(e)) => message(web, StatusCode::INTERNAL_SERVER_ERROR, "Error", &format!("the page's task failed: {e}")),
        Err(_) => {
            cancel.cancel();
            let deadline = humantime::format_duration(web.app.whatif.timeout).to_string();
            message(
                web,
                StatusCode::SERVICE_UNAVAILABLE,
                "Too slow",
                &format!("the page did not finish within --whatif-timeout {deadline}"),
            )
        }
    }
}

fn explain_failed(web: &Web, e: ExplainError) -> Response {
    message(web, StatusCode::INTERNAL_SERVER_ERROR, "Error", &e.to_string())
}

async fn pending(State(web): State<Arc<Web>>, RawQuery(query): RawQuery) -> Response {
    let q = params(query.as_deref().unwrap_or_default());
    let scheduler =
        q.get("scheduler").filter(|s| !s.is_empty()).cloned().unwrap_or_else(|| SHIPPED_SCHEDULER_NAME.to_string());
    let limit = match q.get("limit").map(|l| l.parse::<usize>()) {
        None => DEFAULT_LIMIT,
        Some(Ok(n)) => n,
        Some(Err(_)) => {
            return message(&web, StatusCode::BAD_REQUEST, "Bad request", "limit=: expected a whole number of pods")
        }
    };
    bounded(&web, move |web, ev, cancel| {
        let snapshot = web.app.store.snapshot();
        let plan = web.app.plan.load_full();
        let waiting: Vec<_> = snapshot
            .pod_infos()
            .filter(|p| p.pod.spec.node_name.is_empty() && p.pod.spec.scheduler() == scheduler)
            .collect();
        let mut entries = Vec::new();
        for info in waiting.iter().take(limit) {
            let against = Against { plan: &plan, snapshot: &snapshot, kube_scheduler: &web.app.kube_scheduler };
            match build(against, info.pod.clone(), &[], ev, cancel) {
                Ok(report) => entries.push(PendingEntry {
                    namespace: info.pod.metadata.namespace.clone(),
                    name: info.pod.metadata.name.clone(),
                    summary: report.summary,
                }),
                Err(e) => return explain_failed(web, e),
            }
        }
        let more = waiting.len().saturating_sub(limit);
        html(StatusCode::OK, pages::pending_list(&web.prefix, &scheduler, snapshot.node_count(), &entries, more))
    })
    .await
}

async fn pod(State(web): State<Arc<Web>>, RawQuery(query): RawQuery) -> Response {
    let q = params(query.as_deref().unwrap_or_default());
    let (Some(namespace), Some(name)) = (q.get("namespace").cloned(), q.get("name").cloned()) else {
        return message(&web, StatusCode::BAD_REQUEST, "Bad request", "give the pod as ?namespace=NS&name=NAME");
    };
    let all = q.contains_key("all");
    bounded(&web, move |web, ev, cancel| {
        let snapshot = web.app.store.snapshot();
        let Some(info) = snapshot.pod(&namespace, &name).cloned() else {
            return message(
                web,
                StatusCode::NOT_FOUND,
                "No such pod",
                &format!("the cluster has no pod {namespace}/{name}"),
            );
        };
        // As if pending, as /explain explains a pod the cluster has.
        let mut without = (*snapshot).clone();
        without.remove_pod(&(namespace.clone(), name.clone()));
        let mut pending = info.pod.clone();
        pending.spec.node_name.clear();
        let plan = web.app.plan.load_full();
        let against = Against { plan: &plan, snapshot: &without, kube_scheduler: &web.app.kube_scheduler };
        match build(against, pending, &[], ev, cancel) {
            Ok(report) => html(StatusCode::OK, pages::pod_page(&web.prefix, &report, all)),
            Err(e) => explain_failed(web, e),
        }
    })
    .await
}

async fn whatif_get(State(web): State<Arc<Web>>, RawQuery(query): RawQuery) -> Response {
    whatif_page(web, params(query.as_deref().unwrap_or_default())).await
}

async fn whatif_post(State(web): State<Arc<Web>>, headers: HeaderMap, body: Body) -> Response {
    let bytes = match read_body(&headers, body, web.app.max_body_bytes, web.app.body_timeout).await {
        Ok(b) => b,
        Err(e) => return message(&web, e.status, "Bad request", &e.message),
    };
    whatif_page(web, params(&String::from_utf8_lossy(&bytes))).await
}

async fn whatif_page(web: Arc<Web>, form: HashMap<String, String>) -> Response {
    let scheduler =
        form.get("scheduler").filter(|s| !s.is_empty()).cloned().unwrap_or_else(|| SHIPPED_SCHEDULER_NAME.to_string());
    let policy = form.get("policy").cloned().unwrap_or_default();
    if policy.trim().is_empty() {
        return html(StatusCode::OK, pages::whatif_page(&web.prefix, &scheduler, "", None));
    }
    bounded(&web, move |web, ev, cancel| {
        let new = match predicate_engine::policy::parse("the pasted Policy", policy.as_bytes(), Overrides::default()) {
            Ok(plan) => plan,
            Err(e) => {
                let text = e.to_string();
                return html(
                    StatusCode::BAD_REQUEST,
                    pages::whatif_page(&web.prefix, &scheduler, &policy, Some(Err(&text))),
                );
            }
        };
        let current = web.app.plan.load_full();
        let snapshot = web.app.store.snapshot();
        let input = Input {
            current: Source { plan: &current, name: "served".to_string() },
            new: Source { plan: &new, name: "the pasted Policy".to_string() },
            snapshot: &snapshot,
            kube_scheduler: &web.app.kube_scheduler,
            scheduler: &scheduler,
            sample: DEFAULT_SAMPLE,
        };
        match evaluate(&input, ev, cancel) {
            Ok(report) => html(StatusCode::OK, pages::whatif_page(&web.prefix, &scheduler, &policy, Some(Ok(&report)))),
            Err(e @ WhatifError::Cancelled(_)) => {
                message(web, StatusCode::SERVICE_UNAVAILABLE, "Cancelled", &e.to_string())
            }
            Err(e) => message(web, StatusCode::INTERNAL_SERVER_ERROR, "Error", &e.to_string()),
        }
    })
    .await
}
