//! The admin listener: `/healthz` (the process serves) and `/readyz` (the cluster model is loaded).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::json;

/// A latch: set once the cluster model can answer requests.
#[derive(Debug, Default)]
pub struct Readiness {
    ready: AtomicBool,
}

impl Readiness {
    pub fn set_ready(&self) {
        self.ready.store(true, Ordering::Release);
    }

    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Acquire)
    }
}

pub fn router(readiness: Arc<Readiness>) -> Router {
    Router::new().route("/healthz", get(healthz)).route("/readyz", get(readyz)).with_state(readiness)
}

async fn healthz() -> &'static str {
    "ok\n"
}

async fn readyz(State(readiness): State<Arc<Readiness>>) -> impl IntoResponse {
    if readiness.is_ready() {
        (StatusCode::OK, Json(json!({"ready": true})))
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, Json(json!({"ready": false, "waitingFor": ["cluster model"]})))
    }
}
