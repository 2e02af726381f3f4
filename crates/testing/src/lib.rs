//! Test support for the whole workspace, a dev-dependency only: the oracles (kube-scheduler's own
//! code beside the engine), the generators of their cases, the fuzz checks, [`eventually`], the
//! real Kubernetes of the end-to-end tests and the development cluster (`kube_cluster`), the fake
//! API server, the TLS test certificates (`pki`), and the engine's builders re-exported
//! (`PodBuilder`, `NodeBuilder`...). Nothing here ships in the extender's binary.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // test support: a panic is how a test fails

mod eventually;
#[cfg(feature = "clusters")]
pub mod fake_apiserver;
pub mod fuzz;
#[cfg(feature = "clusters")]
pub mod kube_cluster;
pub mod oracle;
mod oracle_fields;
mod oracle_label_keys;
mod oracle_resources;
mod oracle_volumes;
#[cfg(feature = "clusters")]
pub mod pki;
pub mod policy_oracle;

pub use eventually::{eventually, Probe};
pub use predicate_engine::testing::*;

/// The workspace's root directory (the repository's), where `e2e/`, `docs/` and `target/` are.
pub fn workspace_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}
