//! What the fuzz targets (`fuzz/`) check, shared with `tests/fuzz_regressions.rs`, which replays
//! every input the fuzzers ever crashed on through the same checks.
//!
//! Each check feeds one input to the entry point the server or the CLI uses for it (the verbs'
//! bodies as the handlers answer them once the body is in, the Policy and cluster files as startup
//! and reload read them, quantities and selectors as the decoders convert them) and returns
//! `Err` with what went wrong when an invariant that must hold for *any* input does not: an error
//! names where it is (the request type, the file, the field), a decoded request gets a
//! well-formed answer (every candidate accounted for once, scores in range, JSON that parses).
//! A panic in the code under test is a failure too; the fuzzer catches it as a crash.

pub mod files;
pub mod values;
pub mod verbs;

use std::sync::Arc;

use predicate_engine::cluster::source::demo::demo_objects;
use predicate_engine::cluster::Snapshot;
use predicate_engine::engine::Evaluator;
use predicate_engine::policy::Plan;
use predicate_extender::server::AppState;

/// What a violated invariant says.
pub type Violation = String;

/// The server state the verbs are answered against: the demo cluster (six nodes, a few pods) with
/// the default plan on a one-thread evaluator, so each run is fast and the same.
pub struct Harness {
    pub state: Arc<AppState>,
    /// The demo cluster as loaded, for the checks that change a model of their own (bind).
    pub snapshot: Arc<Snapshot>,
}

impl Harness {
    /// The demo cluster under the default plan.
    pub fn demo() -> Result<Harness, Violation> {
        let snapshot = demo_objects().map_err(|e| format!("the demo cluster does not load: {e}"))?.into_snapshot();
        Harness::on(snapshot, Plan::default_plan())
    }

    /// Any snapshot and plan.
    pub fn on(snapshot: Snapshot, plan: Plan) -> Result<Harness, Violation> {
        let evaluator = Evaluator::new(1).map_err(|e| format!("cannot start a one-thread evaluator: {e}"))?;
        let state = Arc::new(AppState::fixed(snapshot.clone(), plan, evaluator));
        Ok(Harness { state, snapshot: Arc::new(snapshot) })
    }
}

/// The fuzz targets, by the name of their file in `fuzz/fuzz_targets/` and their directory in
/// `fuzz/regressions/`.
pub const TARGETS: &[&str] =
    &["filter", "prioritize", "preempt", "bind", "policy_json", "policy_yaml", "snapshot", "quantity", "selectors"];

/// Runs target `name`'s check on `input` (the demo `harness` for the verbs).
pub fn check(name: &str, harness: &Harness, input: &[u8]) -> Result<(), Violation> {
    match name {
        "filter" => verbs::filter(harness, input),
        "prioritize" => verbs::prioritize(harness, input),
        "preempt" => verbs::preempt(harness, input),
        "bind" => verbs::bind(harness, input),
        "policy_json" => files::policy("policy.json", input),
        "policy_yaml" => files::policy("policy.yaml", input),
        "snapshot" => files::snapshot(input),
        "quantity" => values::quantity(input),
        "selectors" => values::selectors(input),
        other => Err(format!("no fuzz target named {other:?}; the targets are {TARGETS:?}")),
    }
}

/// `Err(what)` unless `holds`.
fn ensure(holds: bool, what: impl FnOnce() -> String) -> Result<(), Violation> {
    if holds {
        Ok(())
    } else {
        Err(what())
    }
}

/// The input, shortened for a message.
fn shown(input: &[u8]) -> String {
    let text = String::from_utf8_lossy(input);
    let mut shown: String = text.chars().take(300).collect();
    if shown.len() < text.len() {
        shown.push_str("...");
    }
    format!("{shown:?}")
}
