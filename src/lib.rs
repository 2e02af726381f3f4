//! `predicate-extender`: a kube-scheduler extender that runs the classic scheduling predicates.
//!
//! kube-scheduler calls it over HTTP (`extenders:` in its configuration) with the pod to place and
//! the candidate nodes; it answers which nodes fit and why the others do not, binds pods, and keeps
//! its own model of the cluster so it knows what already runs where.
//!
//! The scheduling itself is the `predicate_engine` crate's (the model, the plugins, the ordering,
//! the evaluator, the Policy). This crate serves it: a request flows `server` → `wire` (decode) →
//! the engine's snapshot and plan → `wire` (encode); `source` fills the model (a file, the demo
//! cluster, or a live cluster's list and watch), `bind` binds through the API server, `metrics`,
//! `explain`, `whatif` and the web pages read what the engine reports.
#![forbid(unsafe_code)]
// Production code: every `pub` is reachable from outside (else `pub(crate)`), and nothing a request,
// a file or the API server sends reaches a panic (tests, and test support, may panic: clippy.toml).
#![deny(unreachable_pub)]
#![deny(clippy::panic)]
// Nothing a request, a file or the API server sends may panic the server: no unwrap/expect outside
// tests ([lints] in Cargo.toml, for every target; clippy.toml lets tests unwrap).

pub mod bind;
pub mod explain;
pub mod metrics;
pub mod scheduler_config;
pub mod server;
pub mod source;
pub mod whatif;
pub mod wire;
