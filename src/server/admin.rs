//! The admin listener: `/healthz` (the process serves), `/readyz` (the cluster model can answer:
//! loaded, or with a live source, every watch listed once and none failing for too long) and
//! `/metrics` (Prometheus, see [`crate::metrics`]), and `/debug/ordering` (the predicate order in
//! force, JSON: [`OrderingView`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::json;

use crate::metrics::{Metrics, CONTENT_TYPE};
use crate::server::policy_reload::PlanCell;
use crate::source::kube::WatchHealth;
use predicate_engine::engine::ordering::OrderingView;

/// Set once the server listens; with a live source, also asks the watches.
#[derive(Debug, Default)]
pub struct Readiness {
    ready: AtomicBool,
    watches: Option<Arc<WatchHealth>>,
}

impl Readiness {
    pub fn new(watches: Option<Arc<WatchHealth>>) -> Self {
        Readiness { ready: AtomicBool::new(false), watches }
    }

    pub fn set_ready(&self) {
        self.ready.store(true, Ordering::Release);
    }

    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Acquire)
    }
}

pub fn router(readiness: Arc<Readiness>, metrics: Arc<Metrics>, plan: Arc<PlanCell>) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .with_state(readiness)
        .merge(Router::new().route("/metrics", get(scrape)).with_state(metrics))
        .merge(Router::new().route("/debug/ordering", get(ordering)).with_state(plan))
}

/// The predicate order in force, and what dynamic ordering knows of each predicate.
async fn ordering(State(plan): State<Arc<PlanCell>>) -> Json<OrderingView> {
    Json(OrderingView::of(&plan.load()))
}

async fn scrape(State(metrics): State<Arc<Metrics>>) -> Response {
    match metrics.encode() {
        Ok(text) => ([(header::CONTENT_TYPE, CONTENT_TYPE)], text).into_response(),
        Err(e) => {
            tracing::warn!(error = %e, "could not encode the metrics");
            (StatusCode::INTERNAL_SERVER_ERROR, format!("could not encode the metrics: {e}\n")).into_response()
        }
    }
}

async fn healthz() -> &'static str {
    "ok\n"
}

async fn readyz(State(readiness): State<Arc<Readiness>>) -> impl IntoResponse {
    if !readiness.is_ready() {
        return (StatusCode::SERVICE_UNAVAILABLE, Json(json!({"ready": false, "notSynced": ["cluster model"]})));
    }
    match &readiness.watches {
        None => (StatusCode::OK, Json(json!({"ready": true}))),
        Some(watches) => {
            let report = watches.report(Instant::now());
            let status = if report.ready { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
            (status, Json(serde_json::to_value(&report).unwrap_or_else(|_| json!({"ready": report.ready}))))
        }
    }
}
