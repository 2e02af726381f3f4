//! The `--policy` file, read again while serving (polled and on SIGHUP, see
//! [`crate::server::reload`]). A change is parsed and validated completely into a new plan, which
//! then replaces the old one in one atomic swap: a request takes the plan in force once, when it
//! starts, and finishes with it; the next one takes the new plan. A file that does not load
//! changes nothing: the previous plan keeps serving, the error (file, field, reason) is logged
//! once per change and counted, and `/readyz` stays ready.

use std::path::PathBuf;
use std::sync::Arc;

use arc_swap::ArcSwap;

use crate::metrics::policy::ActivePolicy;
use crate::metrics::Metrics;
use crate::server::reload::{LastSeen, Reload, Reloadable};
use predicate_engine::engine::Plan;
use predicate_engine::policy::{self, Overrides, PolicyError};

/// The plan in force, swapped whole on a reload.
pub type PlanCell = ArcSwap<Plan>;

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
    /// The command line's settings, which win over the file's.
    overrides: Overrides,
}

impl ReloadingPolicy {
    /// Watching `path`, whose `bytes` made the plan now in `plan` (with `overrides`, which every
    /// plan read from the file gets too).
    pub fn new(
        path: PathBuf,
        bytes: Vec<u8>,
        overrides: Overrides,
        plan: Arc<PlanCell>,
        metrics: Arc<Metrics>,
    ) -> Self {
        let file = path.display().to_string();
        metrics.policy.set_active(ActivePolicy::of(&file, &bytes));
        ReloadingPolicy { path, file, plan, metrics, seen: LastSeen::new(bytes), overrides }
    }
}

impl Reloadable for ReloadingPolicy {
    type Contents = Vec<u8>;
    type Error = PolicyError;
    const WHAT: &'static str = "the Policy";

    fn read(&self) -> Result<Vec<u8>, PolicyError> {
        policy::read(&self.path)
    }

    fn apply(&self, bytes: &Vec<u8>) -> Result<(), PolicyError> {
        let plan = Arc::new(policy::parse(&self.file, bytes, self.overrides)?);
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
    use predicate_engine::cluster::{ClusterStore, Snapshot};

    const A: &str = r#"{"kind":"Policy","apiVersion":"v1","predicates":[{"name":"HostName"}]}"#;
    const B: &str = r#"{"kind":"Policy","apiVersion":"v1","predicates":[{"name":"PodFitsHostPorts"}]}"#;

    #[test]
    fn a_valid_change_swaps_the_plan_and_an_invalid_one_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("policy.json");
        std::fs::write(&path, A).unwrap();
        let policy::LoadedPolicy { bytes, plan } = policy::load(&path, Overrides::default()).unwrap();
        let metrics = Arc::new(Metrics::new(&plan, Arc::new(ClusterStore::new(Snapshot::default())), None));
        let cell = Arc::new(PlanCell::from_pointee(plan));
        let policy =
            ReloadingPolicy::new(path.clone(), bytes, Overrides::default(), Arc::clone(&cell), Arc::clone(&metrics));
        assert_eq!(metrics.policy.active().sha256, ActivePolicy::of("", A.as_bytes()).sha256);

        std::fs::write(&path, B).unwrap();
        let before = cell.load_full();
        assert!(matches!(policy.check(), Reload::Reloaded));
        // Each with the mandatory CheckNodeUnschedulable and PodToleratesNodeTaints.
        assert_eq!(
            cell.load().predicate_names(),
            ["CheckNodeUnschedulable", "PodFitsHostPorts", "PodToleratesNodeTaints"]
        );
        assert_eq!(
            before.predicate_names(),
            ["CheckNodeUnschedulable", "HostName", "PodToleratesNodeTaints"],
            "a request holding the old plan keeps it whole"
        );
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
        assert!(matches!(policy.check(), Reload::Unchanged), "reported once");
        assert_eq!(
            cell.load().predicate_names(),
            ["CheckNodeUnschedulable", "PodFitsHostPorts", "PodToleratesNodeTaints"]
        );
        assert_eq!(
            metrics.policy.active().sha256,
            ActivePolicy::of("", B.as_bytes()).sha256,
            "still the last good file"
        );

        std::fs::write(&path, b"\xff\xfe").unwrap();
        assert!(matches!(policy.check(), Reload::Failed(PolicyError::NotUtf8 { .. })));
    }
}
