//! Per-request series: the count and latency of every verb by status code (a middleware on the
//! verbs router, so no handler times itself), the mirrored extension-point latency, how many
//! nodes each request evaluated, and the evaluations the request deadline cancelled.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::{Registry, Unit};

use crate::metrics::duration_histogram::DurationHistogram;
use crate::metrics::phases::{Phase, PhaseClock};
use crate::metrics::{Metrics, PROFILE};

/// Put in a response's extensions by a handler whose answer carries an error (a 200 with `Error`
/// filled among them): the mirrored extension-point series then says `Error`, not `Success`.
#[derive(Debug, Clone, Copy)]
pub struct AnsweredWithError;

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HttpLabels {
    verb: &'static str,
    code: u16,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ExtensionPointLabels {
    extension_point: &'static str,
    status: &'static str,
    profile: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FormLabels {
    verb: &'static str,
    form: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PhaseLabels {
    verb: &'static str,
    phase: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct VerbLabels {
    verb: &'static str,
}

type Histograms<L> = Family<L, Histogram, fn() -> Histogram>;

/// 0.1 ms to 3.3 s: the request timeout is 4 s by default.
fn request_buckets() -> Histogram {
    Histogram::new(exponential_buckets(0.0001, 2.0, 16))
}

/// Upstream's buckets for `framework_extension_point_duration_seconds`.
fn extension_point_buckets() -> Histogram {
    Histogram::new(exponential_buckets(0.0001, 2.0, 12))
}

/// 10 µs to 2.6 s, doubling: a phase of a 500-node request takes tens of microseconds.
fn phase_buckets() -> DurationHistogram {
    DurationHistogram::new(exponential_buckets(0.00001, 2.0, 19))
}

/// 1 to 16,384 nodes.
fn node_buckets() -> Histogram {
    Histogram::new(exponential_buckets(1.0, 2.0, 15))
}

#[derive(Debug)]
pub struct RequestMetrics {
    requests: Family<HttpLabels, Counter>,
    durations: Histograms<HttpLabels>,
    extension_points: Histograms<ExtensionPointLabels>,
    nodes: Histograms<VerbLabels>,
    timeouts: Family<VerbLabels, Counter>,
    candidates: Family<FormLabels, Counter>,
    phases: Family<PhaseLabels, DurationHistogram, fn() -> DurationHistogram>,
    inline: Family<VerbLabels, Counter>,
}

/// How a request named its candidates: `NodeNames` (nodeCacheCapable; `unknown` counts the names
/// the cluster model did not have) or whole `Nodes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CandidateForm {
    NodeNames,
    Nodes,
    Unknown,
}

impl CandidateForm {
    fn label(self) -> &'static str {
        match self {
            CandidateForm::NodeNames => "NodeNames",
            CandidateForm::Nodes => "Nodes",
            CandidateForm::Unknown => "unknown",
        }
    }
}

/// The verbs evaluated on the pool under the request deadline.
const EVALUATED_VERBS: [&str; 3] = ["filter", "prioritize", "preempt"];

/// The verb of a request path (the last segment; the routes may sit under a prefix).
fn verb_of(path: &str) -> &'static str {
    match path.rsplit('/').next() {
        Some("filter") => "filter",
        Some("prioritize") => "prioritize",
        Some("bind") => "bind",
        Some("preempt") => "preempt",
        Some("explain") => "explain",
        Some("whatif") => "whatif",
        _ => "other",
    }
}

/// kube-scheduler's extension point for each verb.
fn extension_point(verb: &str) -> Option<&'static str> {
    match verb {
        "filter" => Some("Filter"),
        "prioritize" => Some("Score"),
        "bind" => Some("Bind"),
        "preempt" => Some("PostFilter"),
        _ => None,
    }
}

impl RequestMetrics {
    pub(super) fn register(registry: &mut Registry) -> Self {
        let m = RequestMetrics {
            requests: Family::default(),
            durations: Family::new_with_constructor(request_buckets),
            extension_points: Family::new_with_constructor(extension_point_buckets),
            nodes: Family::new_with_constructor(node_buckets),
            timeouts: Family::default(),
            candidates: Family::default(),
            phases: Family::new_with_constructor(phase_buckets),
            inline: Family::default(),
        };
        for verb in EVALUATED_VERBS {
            m.timeouts.get_or_create_owned(&VerbLabels { verb });
        }
        for verb in ["filter", "prioritize"] {
            m.inline.get_or_create_owned(&VerbLabels { verb });
        }
        registry.register("http_requests", "Requests answered, by verb and HTTP status code", m.requests.clone());
        registry.register_with_unit(
            "http_request_duration",
            "Time from a request's arrival to its answer being ready to send, body read included, by verb and HTTP status code",
            Unit::Seconds,
            m.durations.clone(),
        );
        registry.register_with_unit(
            "framework_extension_point_duration",
            "As kube-scheduler's: latency of an extension point (Filter, Score, Bind, PostFilter), one observation per request",
            Unit::Seconds,
            m.extension_points.clone(),
        );
        registry.register(
            "evaluated_nodes",
            "Candidate nodes per /filter, /prioritize and /preempt request that reached the evaluator",
            m.nodes.clone(),
        );
        registry.register(
            "request_timeouts",
            "Requests whose node evaluation the request deadline (--request-timeout) cancelled, by verb",
            m.timeouts.clone(),
        );
        registry.register(
            "candidate_nodes",
            "Candidate nodes received, by verb and form: NodeNames (nodeCacheCapable), Nodes, and unknown (a name the cluster model did not have)",
            m.candidates.clone(),
        );
        registry.register_with_unit(
            "request_phase_duration",
            "Time a /filter or /prioritize spent in each phase: read (the body), queue (waiting for a worker; none when answered inline), decode, resolve (candidates in the cluster model), prepare (per-request predicate state), evaluate (the node loop), encode (the answer), resume (back to the connection's task)",
            Unit::Seconds,
            m.phases.clone(),
        );
        registry.register(
            "inline_requests",
            "Requests of /filter and /prioritize answered on the thread that read them, without the evaluator's pool (a body of at most --inline-max-bytes), by verb",
            m.inline.clone(),
        );
        m
    }

    /// A request of `verb` was answered inline.
    pub fn answered_inline(&self, verb: &str) {
        self.inline.get_or_create(&VerbLabels { verb: verb_of(verb) }).inc();
    }

    /// Where one request of `verb` spent its time.
    pub fn phases(&self, verb: &str, clock: &PhaseClock) {
        let verb = verb_of(verb);
        for phase in Phase::ALL {
            self.phases.get_or_create(&PhaseLabels { verb, phase: phase.name() }).observe(clock.took(phase));
        }
    }

    /// A request of `verb` named `count` candidates in `form`.
    pub fn candidates(&self, verb: &str, form: CandidateForm, count: usize) {
        if count > 0 {
            let labels = FormLabels { verb: verb_of(verb), form: form.label() };
            self.candidates.get_or_create(&labels).inc_by(count as u64);
        }
    }

    /// A request of `verb` ran out of time on the evaluator.
    pub fn timed_out(&self, verb: &str) {
        self.timeouts.get_or_create(&VerbLabels { verb: verb_of(verb) }).inc();
    }

    /// One request of `verb` answered with `code` after `seconds`.
    pub fn observe(&self, verb: &'static str, code: u16, answered_with_error: bool, seconds: f64) {
        let labels = HttpLabels { verb, code };
        self.requests.get_or_create(&labels).inc();
        self.durations.get_or_create(&labels).observe(seconds);
        if let Some(extension_point) = extension_point(verb) {
            let status = if code == 200 && !answered_with_error { "Success" } else { "Error" };
            let labels = ExtensionPointLabels { extension_point, status, profile: PROFILE };
            self.extension_points.get_or_create(&labels).observe(seconds);
        }
    }

    /// A request of `verb` evaluated `nodes` candidates.
    pub fn evaluated(&self, verb: &str, nodes: usize) {
        self.nodes.get_or_create(&VerbLabels { verb: verb_of(verb) }).observe(nodes as f64);
    }
}

/// The middleware: times each request of the verbs router and counts it by verb and status.
pub async fn track(State(metrics): State<Arc<Metrics>>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let verb = verb_of(request.uri().path());
    let response = next.run(request).await;
    let answered_with_error = response.extensions().get::<AnsweredWithError>().is_some();
    metrics.requests.observe(verb, response.status().as_u16(), answered_with_error, started.elapsed().as_secs_f64());
    if let Some(leadership) = &metrics.leadership {
        leadership.answered(verb);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbs_come_from_the_last_path_segment() {
        assert_eq!(verb_of("/filter"), "filter");
        assert_eq!(verb_of("/scheduler/v1/prioritize"), "prioritize");
        assert_eq!(verb_of("/bind"), "bind");
        assert_eq!(verb_of("/preempt"), "preempt");
        assert_eq!(verb_of("/scheduler/explain"), "explain");
        assert_eq!(verb_of("/whatif"), "whatif");
        assert_eq!(verb_of("/filter/x"), "other");
        assert_eq!(extension_point("prioritize"), Some("Score"));
        assert_eq!(extension_point("other"), None);
    }
}
