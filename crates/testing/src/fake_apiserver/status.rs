//! `metav1.Status` bodies and the responses that carry them.

use axum::body::Body;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use serde_json::{json, Map, Value};

use super::{KindInfo, USER};

pub(super) fn status_body(code: u16, reason: &str, message: &str, details: Option<Value>) -> Value {
    let mut status = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "code": code,
    });
    if !reason.is_empty() {
        status["reason"] = reason.into();
    }
    if let Some(details) = details {
        status["details"] = details;
    }
    status
}

/// `metav1.StatusDetails`; empty fields are omitted as Go's `omitempty` does.
pub(super) fn details(name: &str, group: &str, kind: &str) -> Value {
    let mut d = Map::new();
    for (k, v) in [("name", name), ("group", group), ("kind", kind)] {
        if !v.is_empty() {
            d.insert(k.to_string(), v.into());
        }
    }
    Value::Object(d)
}

pub(super) fn status_response(code: u16, reason: &str, message: &str, details: Option<Value>) -> Response {
    let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    json_response(status, &status_body(code, reason, message, details))
}

pub(super) fn json_response(status: StatusCode, body: &Value) -> Response {
    text_response(status, body.to_string())
}

pub(super) fn text_response(status: StatusCode, body: String) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

pub(super) fn path_not_found() -> Response {
    status_response(404, "NotFound", "the server could not find the requested resource", Some(json!({})))
}

pub(super) fn method_not_allowed() -> Response {
    status_response(405, "MethodNotAllowed", "the server does not allow this method on the requested resource", None)
}

/// `errors.NewNotFound`: `pods "x" not found`.
pub(super) fn not_found(info: &KindInfo, name: &str) -> Response {
    let message = format!("{} {name:?} not found", info.qualified());
    status_response(404, "NotFound", &message, Some(details(name, info.group, info.plural)))
}

/// `errors.NewInternalError`, as etcd being unavailable gives it.
pub(super) fn internal_error() -> Response {
    status_response(
        500,
        "InternalError",
        "Internal error occurred: fault: etcdserver: request timed out",
        Some(json!({"causes": [{"message": "fault: etcdserver: request timed out"}]})),
    )
}

/// `errors.NewTimeoutError`, as the API server's own request timeout gives it.
pub(super) fn timeout() -> Response {
    status_response(
        504,
        "Timeout",
        "Timeout: request did not complete within the allotted timeout",
        Some(json!({"retryAfterSeconds": 0})),
    )
}

/// `responsewriters.Forbidden` + `errors.NewForbidden`.
pub(super) fn forbidden_response(
    verb: &str,
    info: &KindInfo,
    ns: Option<&str>,
    name: Option<&str>,
    subresource: Option<&str>,
) -> Response {
    let resource = match subresource {
        Some(sub) => format!("{}/{sub}", info.plural),
        None => info.plural.to_string(),
    };
    let scope = match ns {
        Some(ns) => format!("in the namespace {ns:?}"),
        None => "at the cluster scope".to_string(),
    };
    let reason = format!("User {USER:?} cannot {verb} resource {resource:?} in API group {:?} {scope}", info.group);
    let message = match name {
        Some(name) => format!("{} {name:?} is forbidden: {reason}", info.qualified()),
        None => format!("{} is forbidden: {reason}", info.qualified()),
    };
    status_response(403, "Forbidden", &message, Some(details(name.unwrap_or(""), info.group, info.plural)))
}
