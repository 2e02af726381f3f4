//! `predicate-engine`: the classic kube-scheduler predicates and priorities, ordered, on a compact
//! model of the cluster. The extender (the `predicate-extender` crate) serves it over the extender
//! protocol; nothing here knows HTTP, an async runtime or the Kubernetes client.
//!
//! A pod is placed by `engine` (each predicate of the plan prepares once, then every node on the
//! parallel evaluator through the ordered predicates, with the nominated-pod double pass) over a
//! snapshot of the `cluster` model. Plugins (`predicates`, `priorities`) are written against
//! `framework` and listed in `registry`; what several of them read alike is in `plugin_helpers`;
//! label selectors, which the cluster model reads too, are below both in `labels`. The `policy`
//! parser builds the engine's plan through the registry.
#![forbid(unsafe_code)]
// Production code: every `pub` is reachable from outside (else `pub(crate)`), and nothing a request,
// a file or the API server sends reaches a panic (tests, and test support, may panic: clippy.toml).
#![deny(unreachable_pub)]
#![deny(clippy::panic)]

pub mod cluster;
pub mod engine;
pub mod framework;
pub mod hashing;
pub mod labels;
pub mod parallel;
pub mod plugin_helpers;
pub mod policy;
pub mod predicates;
pub mod priorities;
pub mod quantity;
pub mod registry;
// Test support only (the builders of pods and nodes): unit tests, and the test-support crate
// through the `test-util` feature.
#[cfg(any(test, feature = "test-util"))]
#[allow(clippy::panic)] // test support: a panic is how a test fails
pub mod testing;
pub mod yaml;
