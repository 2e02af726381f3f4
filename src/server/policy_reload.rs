//! The `--policy` file, read again while serving (polled and on SIGHUP, see
//! [`crate::server::reload`]). A change is parsed and validated completely into a new plan, which
//! then replaces the old one in one atomic swap: a request takes the plan in force once, when it
//! starts, and finishes with it; the next one takes the new plan. A file that does not load
//! changes nothing: the previous plan keeps serving, the error (file, field, reason) is logged
//! once per change and counted, and `/readyz` stays ready.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arc_swap::ArcSwap;

use crate::engine::{OrderingMode, Plan};
use crate::metrics::policy::ActivePolicy;
use crate::metrics::Metrics;
use crate::policy::{parse_policy_ordered, PolicyError};
use crate::server::reload::{LastSeen, Reload, Reloadable};

/// The plan in force, swapped whole on a reload.
pub type PlanCell = ArcSwap<Plan>;

/// A Policy file's bytes and the plan they make: read once, so the plan, the digest that
/// `policy_info` shows and the contents a change is told from all come from the same bytes.
pub fn read_policy(path: &Path) -> Result<(Vec<u8>, Plan), PolicyError> {
    read_policy_ordered(path, None)
}

/// [`read_policy`], ordered by `ordering` (`--predicate-ordering`) when given.
pub fn read_policy_ordered(path: &Path, ordering: Option<OrderingMode>) -> Result<(Vec<u8>, Plan), PolicyError> {
    let file = path.display().to_string();
    let bytes =
        std::fs::read(path).map_err(|e| PolicyError { file: file.clone(), message: format!("cannot read: {e}") })?;
    let plan = plan_of(&file, &bytes, ordering)?;
    Ok((bytes, plan))
}

/// The plan a Policy file's bytes make (`file` names it in errors; `ordering` is
/// `--predicate-ordering`, which wins over the file): what startup and every reload read a Policy
/// file with.
pub fn plan_of(file: &str, bytes: &[u8], ordering: Option<OrderingMode>) -> Result<Plan, PolicyError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| PolicyError { file: file.to_string(), message: format!("not UTF-8 text: {e}") })?;
    parse_policy_ordered(file, text, ordering)
}

/// Logs a plan as it comes into force.
pub fn log_plan(plan: &Plan, what: &str) {
    tracing::info!(
        predicates = ?plan.predicate_names(),
        always_check_all = plan.always_check_all,
        predicate_ordering = plan.ordering.mode().name(),
        priorities = ?plan.priority_names(),
        "{what}"
    );
}

/// The `--policy` file and the plan cell it feeds.
pub struct ReloadingPolicy {
    path: PathBuf,
    file: String,
    plan: Arc<PlanCell>,
    metrics: Arc<Metrics>,
    seen: LastSeen<Vec<u8>, PolicyError>,
    /// `--predicate-ordering`, which wins over the file's `predicateOrdering`.
    ordering: Option<OrderingMode>,
}

impl ReloadingPolicy {
    /// Watching `path`, whose `bytes` made the plan now in `plan`.
    pub fn new(path: PathBuf, bytes: Vec<u8>, plan: Arc<PlanCell>, metrics: Arc<Metrics>) -> Self {
        let file = path.display().to_string();
        metrics.policy.set_active(ActivePolicy::of(&file, &bytes));
        ReloadingPolicy { path, file, plan, metrics, seen: LastSeen::new(bytes), ordering: None }
    }

    /// Every plan read from the file ordered by `ordering` when it is given.
    pub fn with_ordering_override(self, ordering: Option<OrderingMode>) -> Self {
        ReloadingPolicy { ordering, ..self }
    }
}

impl Reloadable for ReloadingPolicy {
    type Contents = Vec<u8>;
    type Error = PolicyError;
    const WHAT: &'static str = "the Policy";

    fn read(&self) -> Result<Vec<u8>, PolicyError> {
        std::fs::read(&self.path)
            .map_err(|e| PolicyError { file: self.file.clone(), message: format!("cannot read: {e}") })
    }

    fn apply(&self, bytes: &Vec<u8>) -> Result<(), PolicyError> {
        let plan = Arc::new(plan_of(&self.file, bytes, self.ordering)?);
        // The series first, so the first request under the new plan finds them resolved.
        self.metrics.predicates.use_plan(&plan);
        self.plan.store(Arc::clone(&plan));
        self.metrics.policy.set_active(ActivePolicy::of(&self.file, bytes));
        log_plan(&plan, "new plan in force");
        Ok(())
    }

    fn last_seen(&self) -> &LastSeen<Vec<u8>, PolicyError> {
        &self.seen
    }

    fn record(&self, outcome: &Reload<PolicyError>) {
        match outcome {
            Reload::Unchanged => {}
            Reload::Reloaded => self.metrics.policy.reloaded(true),
            Reload::Failed(_) => self.metrics.policy.reloaded(false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::{ClusterStore, Snapshot};

    const A: &str = r#"{"kind":"Policy","apiVersion":"v1","predicates":[{"name":"HostName"}]}"#;
    const B: &str = r#"{"kind":"Policy","apiVersion":"v1","predicates":[{"name":"PodFitsHostPorts"}]}"#;

    #[test]
    fn a_valid_change_swaps_the_plan_and_an_invalid_one_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("policy.json");
        std::fs::write(&path, A).unwrap();
        let (bytes, plan) = read_policy(&path).unwrap();
        let metrics = Arc::new(Metrics::new(&plan, Arc::new(ClusterStore::new(Snapshot::default())), None));
        let cell = Arc::new(PlanCell::from_pointee(plan));
        let policy = ReloadingPolicy::new(path.clone(), bytes, Arc::clone(&cell), Arc::clone(&metrics));
        assert_eq!(metrics.policy.active().sha256, ActivePolicy::of("", A.as_bytes()).sha256);

        std::fs::write(&path, B).unwrap();
        let before = cell.load_full();
        assert_eq!(policy.check(), Reload::Reloaded);
        assert_eq!(cell.load().predicate_names(), ["PodFitsHostPorts"]);
        assert_eq!(before.predicate_names(), ["HostName"], "a request holding the old plan keeps it whole");
        assert_eq!(metrics.policy.active().sha256, ActivePolicy::of("", B.as_bytes()).sha256);

        std::fs::write(&path, r#"{"kind":"Policy","apiVersion":"v1","predicates":[{"name":"Nope"}]}"#).unwrap();
        match policy.check() {
            Reload::Failed(e) => {
                let e = e.to_string();
                assert!(
                    e.starts_with(&format!("{}: predicates[0] (\"Nope\"): unknown predicate", path.display())),
                    "{e}"
                )
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(policy.check(), Reload::Unchanged, "reported once");
        assert_eq!(cell.load().predicate_names(), ["PodFitsHostPorts"]);
        assert_eq!(
            metrics.policy.active().sha256,
            ActivePolicy::of("", B.as_bytes()).sha256,
            "still the last good file"
        );

        std::fs::write(&path, b"\xff\xfe").unwrap();
        assert!(
            matches!(policy.check(), Reload::Failed(PolicyError { ref message, .. }) if message.starts_with("not UTF-8"))
        );
    }
}
