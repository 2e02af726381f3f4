//! The Policy file (kube-scheduler's `kind: Policy`, `apiVersion: v1`, 1.10-1.22) with the
//! per-predicate `order` of the predicates-ordering design, turned into a validated [`Plan`].
//!
//! One loader: [`load`] reads a file and [`parse`]s it (what `serve` at startup and on every
//! reload, and `explain`, use); [`Overrides`] are the command-line settings that win over the
//! file. The document is decoded in [`file`], validated and ordered in [`plan`]; the entries'
//! plugins are built through the registry, which alone knows what each takes.

pub mod error;
pub mod file;
pub mod plan;

use std::path::Path;
use std::sync::Arc;

pub use crate::engine::{OrderingMode, Plan, WeightedPriority};
pub use error::{EntryAt, PlanError, PolicyError};
pub use plan::DEFAULT_HARD_POD_AFFINITY_WEIGHT;

/// Command-line settings that win over the Policy file's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Overrides {
    /// `--predicate-ordering`, over the file's `predicateOrdering`.
    pub ordering: Option<OrderingMode>,
}

/// A Policy file's bytes and the plan they make, from one read: the plan, the digest that
/// `policy_info` shows and the contents a change is told from all come from the same bytes.
#[derive(Debug)]
pub struct LoadedPolicy {
    pub bytes: Vec<u8>,
    pub plan: Plan,
}

/// Reads a Policy file's bytes.
pub fn read(path: &Path) -> Result<Vec<u8>, PolicyError> {
    std::fs::read(path).map_err(|e| PolicyError::Read { file: path.display().to_string(), source: Arc::new(e) })
}

/// Reads a Policy file and makes its plan.
pub fn load(path: &Path, overrides: Overrides) -> Result<LoadedPolicy, PolicyError> {
    let bytes = read(path)?;
    let plan = parse(&path.display().to_string(), &bytes, overrides)?;
    Ok(LoadedPolicy { bytes, plan })
}

/// The plan a Policy's bytes (JSON or YAML) make; `file` names it in errors.
pub fn parse(file: &str, bytes: &[u8], overrides: Overrides) -> Result<Plan, PolicyError> {
    let text = std::str::from_utf8(bytes).map_err(|source| PolicyError::NotUtf8 { file: file.to_string(), source })?;
    let policy = file::decode(text).map_err(|source| PolicyError::Decode { file: file.to_string(), source })?;
    plan::plan_from(policy, overrides).map_err(|e| PolicyError::Invalid { file: file.to_string(), source: Box::new(e) })
}

#[cfg(test)]
mod tests;
