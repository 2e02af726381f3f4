//! The verbs the server answers, and why a verb answers with an error instead of its result
//! ([`VerbError`]), mapped to the status code each verb gives it in one place.
//!
//! The protocol decides the codes: kube-scheduler reads the body of a 200 answer only. `/filter`'s
//! result has an `Error` field, so a valid request it cannot carry out (the cache has not synced,
//! the deadline passed) is a 200 with `Error` filled, and kube-scheduler fails the pod's cycle
//! with it. `/prioritize` (a bare list) and `/preempt` answer those with 503, and kube-scheduler
//! goes on without this extender. A body that is not a valid request is a 4xx everywhere.

use std::fmt;

use axum::http::StatusCode;

use crate::server::body::BodyError;
use crate::wire::WireError;
use predicate_engine::framework::MissingState;

/// A verb.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Filter,
    Prioritize,
    Bind,
    Preempt,
    Explain,
    Whatif,
}

impl Verb {
    /// Its name in paths, logs and metrics.
    pub const fn name(self) -> &'static str {
        match self {
            Verb::Filter => "filter",
            Verb::Prioritize => "prioritize",
            Verb::Bind => "bind",
            Verb::Preempt => "preempt",
            Verb::Explain => "explain",
            Verb::Whatif => "whatif",
        }
    }

    /// What its request body is, in a refused body's message.
    pub const fn body(self) -> &'static str {
        match self {
            Verb::Filter | Verb::Prioritize => "ExtenderArgs",
            Verb::Bind => "ExtenderBindingArgs",
            Verb::Preempt => "ExtenderPreemptionArgs",
            Verb::Explain | Verb::Whatif => "request body",
        }
    }
}

impl fmt::Display for Verb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why the evaluator's pool gave no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unanswered {
    #[error("the node evaluation was cancelled before it finished")]
    Cancelled,
    #[error("the {verb} of pod {pod} over {nodes} nodes did not finish within the request timeout of {deadline}")]
    TimedOut { verb: Verb, pod: String, nodes: usize, deadline: String },
    #[error("the {verb} request was still being decoded when the request timeout of {deadline} passed")]
    TimedOutDecoding { verb: Verb, deadline: String },
    #[error("the what-if report did not finish within --whatif-timeout {deadline}")]
    WhatifTimedOut { deadline: String },
    #[error("the {verb} request's body of {bytes} waited {waited} for the large request before it to be answered (whole-Nodes bodies are read one at a time; nodeCacheCapable: true sends names instead)")]
    LargeBodyWaited { verb: Verb, bytes: String, waited: String },
}

/// Why a verb answers with an error rather than its result; [`VerbError::status`] is its code.
#[derive(Debug, thiserror::Error)]
pub enum VerbError {
    /// The body was refused as it was read (too large, too slow, unreadable).
    #[error("{}: {source}", .verb.body())]
    Body { verb: Verb, source: BodyError },
    /// The body is not a valid request.
    #[error(transparent)]
    Malformed(#[from] WireError),
    /// The body, or the query, asks for something the verb cannot give (explain: not a Pod, an
    /// unknown node, a bad query parameter).
    #[error("{0}")]
    BadRequest(String),
    /// The verb runs one request at a time and one is running (`/whatif`).
    #[error("{0}")]
    Busy(String),
    /// `Accept` names no format the verb answers in.
    #[error("{0}")]
    NotAcceptable(String),
    /// The cluster cache has not listed everything once.
    #[error("{0}")]
    NotSynced(String),
    /// The pool gave no answer in time.
    #[error(transparent)]
    Unanswered(#[from] Unanswered),
    /// A predicate's state was missing: a bug, never a pass.
    #[error(transparent)]
    Evaluation(#[from] MissingState),
    /// The answer could not be encoded.
    #[error("encoding the {what}: {source}")]
    Encode { what: &'static str, source: serde_json::Error },
    /// Explaining the pod failed for a reason that is not the request's.
    #[error(transparent)]
    Explain(Box<crate::explain::ExplainError>),
    /// The what-if report failed for a reason that is not the request's.
    #[error(transparent)]
    Whatif(Box<crate::whatif::WhatifError>),
}

impl VerbError {
    /// The status `verb` answers this error with.
    pub fn status(&self, verb: Verb) -> StatusCode {
        match self {
            VerbError::Body { source, .. } => source.status,
            VerbError::Malformed(_) | VerbError::BadRequest(_) => StatusCode::BAD_REQUEST,
            VerbError::NotAcceptable(_) => StatusCode::NOT_ACCEPTABLE,
            VerbError::Busy(_) => StatusCode::TOO_MANY_REQUESTS,
            VerbError::NotSynced(_) | VerbError::Unanswered(_) => match verb {
                Verb::Filter => StatusCode::OK,
                Verb::Prioritize | Verb::Bind | Verb::Preempt | Verb::Explain | Verb::Whatif => {
                    StatusCode::SERVICE_UNAVAILABLE
                }
            },
            VerbError::Evaluation(_) | VerbError::Encode { .. } | VerbError::Explain(_) | VerbError::Whatif(_) => {
                StatusCode::INTERNAL_SERVER_ERROR
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The codes the HTTP tests see, in one table: what each verb answers a request it cannot
    /// carry out with.
    #[test]
    fn only_filter_answers_an_unanswerable_valid_request_with_200() {
        let not_synced = VerbError::NotSynced("waiting".to_string());
        let late = VerbError::Unanswered(Unanswered::Cancelled);
        for verb in [Verb::Filter, Verb::Prioritize, Verb::Preempt, Verb::Explain] {
            let want = if verb == Verb::Filter { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
            assert_eq!((not_synced.status(verb), late.status(verb)), (want, want), "{verb}");
            assert_eq!(VerbError::Malformed(WireError::new("ExtenderArgs", "x")).status(verb), StatusCode::BAD_REQUEST);
            let missing = VerbError::Evaluation(MissingState { predicate: "P".to_string() });
            assert_eq!(missing.status(verb), StatusCode::INTERNAL_SERVER_ERROR);
        }
        let body = VerbError::Body {
            verb: Verb::Bind,
            source: BodyError { status: StatusCode::PAYLOAD_TOO_LARGE, message: "too large".to_string() },
        };
        assert_eq!(
            (body.status(Verb::Bind), body.to_string()),
            (StatusCode::PAYLOAD_TOO_LARGE, "ExtenderBindingArgs: too large".to_string())
        );
    }
}
