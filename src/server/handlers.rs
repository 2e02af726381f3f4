//! The verbs: `/filter` and `/bind`.
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

use crate::engine::{CancelFlag, Candidate, FilterJob, Verdict};
use crate::server::body::read_body;
use crate::server::AppState;
use crate::wire::{
    Candidates, ExtenderArgs, ExtenderBindingArgs, ExtenderBindingResult, ExtenderFilterResult, NodeListOut,
};

/// Cancels the node evaluation when the handler is dropped: the client went away.
struct CancelOnDrop(CancelFlag);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

fn filter_error(status: StatusCode, message: &str) -> Response {
    (status, Json(ExtenderFilterResult::error(message))).into_response()
}

/// The message for a node the cluster model does not know.
pub const UNKNOWN_NODE: &str = "node is not in the extender's cluster cache yet";

pub async fn filter(State(state): State<Arc<AppState>>, headers: HeaderMap, body: Body) -> Response {
    let started = Instant::now();
    let bytes = match read_body(&headers, body, state.max_body_bytes).await {
        Ok(b) => b,
        Err(e) => return filter_error(e.status, &format!("ExtenderArgs: {}", e.message)),
    };
    let args = match ExtenderArgs::decode(&bytes) {
        Ok(a) => a,
        Err(e) => {
            tracing::info!(verb = "filter", error = %e, "rejected a malformed request");
            return filter_error(StatusCode::BAD_REQUEST, &e.to_string());
        }
    };
    let pod_key = args.pod.key();
    let snapshot = state.store.snapshot();
    let (candidates, request_nodes) = match args.nodes {
        Candidates::Names(names) => {
            let c = names.into_iter().map(|n| match snapshot.candidate(&n) {
                Some((node, nominated)) => Candidate::Known(node, nominated),
                None => Candidate::Unknown(n),
            });
            (c.collect::<Vec<_>>(), None)
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
    let node_count = candidates.len();
    let cancel = CancelFlag::new();
    let _cancel_on_drop = CancelOnDrop(cancel.clone());
    let job = FilterJob {
        plan: Arc::clone(&state.plan),
        pod: args.pod,
        snapshot,
        candidates,
        from_request_nodes: request_nodes.is_some(),
        cancel,
    };
    let job = Arc::new(job);
    let running = Arc::clone(&job);
    let rx = state.evaluator.spawn(move |ev| running.run(ev));

    let verdicts = match tokio::time::timeout(state.request_timeout, rx).await {
        Ok(Ok(Ok(v))) => v,
        Ok(Ok(Err(_))) | Ok(Err(_)) => {
            return filter_error(StatusCode::OK, "the node evaluation was cancelled before it finished");
        }
        Err(_elapsed) => {
            job.cancel.cancel();
            let message = format!(
                "the filter of pod {pod_key} over {node_count} nodes did not finish within the request timeout of {}",
                humantime::format_duration(state.request_timeout)
            );
            tracing::warn!(verb = "filter", pod = %pod_key, nodes = node_count, "request timed out");
            return filter_error(StatusCode::OK, &message);
        }
    };

    let mut result = ExtenderFilterResult::default();
    let mut feasible_names = Vec::new();
    let mut feasible_raw = Vec::new();
    for (i, (candidate, verdict)) in job.candidates.iter().zip(&verdicts).enumerate() {
        let name = candidate.name();
        match verdict {
            Verdict::Fits => match &request_nodes {
                Some((_, raws)) => feasible_raw.push(raws[i]),
                None => feasible_names.push(name.to_string()),
            },
            Verdict::Unknown => {
                result.failed_nodes.insert(name.to_string(), UNKNOWN_NODE.to_string());
            }
            Verdict::Fails(reasons) => {
                let text = reasons.iter().map(|r| r.message.as_ref()).collect::<Vec<_>>().join(", ");
                tracing::debug!(pod = %pod_key, node = name, reasons = %text, "node does not fit");
                if reasons.iter().all(|r| r.resolvable) {
                    result.failed_nodes.insert(name.to_string(), text);
                } else {
                    result.failed_and_unresolvable_nodes.insert(name.to_string(), text);
                }
            }
        }
    }
    let feasible = feasible_names.len() + feasible_raw.len();
    let empty_meta = RawValue::from_string("{}".to_string()).ok();
    match &request_nodes {
        Some((metadata, _)) => {
            let metadata = metadata.or(empty_meta.as_deref());
            match metadata {
                Some(metadata) => result.nodes = Some(NodeListOut { metadata, items: feasible_raw }),
                None => return filter_error(StatusCode::INTERNAL_SERVER_ERROR, "could not encode the node list"),
            }
        }
        None => result.node_names = Some(feasible_names),
    }
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
            let message = format!("ExtenderBindingArgs: {}", e.message);
            return (e.status, Json(ExtenderBindingResult::error(&message))).into_response();
        }
    };
    let args = match ExtenderBindingArgs::decode(&bytes) {
        Ok(a) => a,
        Err(e) => return (StatusCode::BAD_REQUEST, Json(ExtenderBindingResult::error(&e.to_string()))).into_response(),
    };
    let pod = format!("{}/{}", args.pod_namespace, args.pod_name);
    let node = args.node.clone();
    let result = match state.binder.bind(args).await {
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
    (StatusCode::OK, Json(result)).into_response()
}
