//! `predicate-extender`: a kube-scheduler extender that runs the classic scheduling predicates.
//!
//! kube-scheduler calls it over HTTP (`extenders:` in its configuration) with the pod to place and
//! the candidate nodes; it answers which nodes fit and why the others do not, binds pods, and keeps
//! its own model of the cluster so it knows what already runs where.
//!
//! A request flows `server` → `wire` (decode) → `cluster` (the snapshot it reads) → `engine`
//! (each predicate of the plan prepares once, then every node on the parallel evaluator through
//! the ordered predicates, with the nominated-pod double pass) → `wire` (encode). Plugins
//! (`predicates`, `priorities`) are written against `framework` and listed in `registry`; what
//! several of them read alike is in `plugin_helpers`; label selectors, which the cluster model
//! reads too, are below both in `labels`. The `policy` parser builds the engine's plan through the
//! registry.
#![forbid(unsafe_code)]
// Production code: every `pub` is reachable from outside (else `pub(crate)`), and nothing a request,
// a file or the API server sends reaches a panic (tests, and test support, may panic: clippy.toml).
#![deny(unreachable_pub)]
#![deny(clippy::panic)]
// Nothing a request, a file or the API server sends may panic the server: no unwrap/expect outside
// tests ([lints] in Cargo.toml, for every target; clippy.toml lets tests unwrap).

pub mod bind;
pub mod cluster;
pub mod engine;
pub mod explain;
pub mod framework;
pub mod gen_cluster;
pub mod hashing;
pub mod labels;
pub mod metrics;
pub mod parallel;
pub mod plugin_helpers;
pub mod policy;
pub mod predicates;
pub mod priorities;
pub mod quantity;
pub mod registry;
pub mod scheduler_config;
pub mod server;
// Test support only (builders, `eventually`, the fuzz checks, the oracle): unit tests, and the
// integration tests, benches, examples and fuzz targets through the `test-util` feature.
#[cfg(any(test, feature = "test-util"))]
#[allow(clippy::panic)] // test support: a panic is how a test fails
pub mod testing;
pub mod whatif;
pub mod wire;
pub mod yaml;
