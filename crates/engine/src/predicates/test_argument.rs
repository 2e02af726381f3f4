//! A predicate that exists only in the crate's tests: a node fits when its name starts with the
//! prefix its Policy argument gives (`testNodeNamePrefix: {prefix: ...}`). It is here to prove
//! that a plugin with a Policy argument is its own file plus one registry row: nothing in the
//! Policy parser or the registry's checks knows it.

use std::sync::Arc;

use serde::Deserialize;

use crate::cluster::NodeInfo;
use crate::framework::{
    AnyPredicate, ArgumentError, ClusterView, Failures, PodContext, Predicate, PredicateArgs, Reason,
};

/// The registry name.
pub const NAME: &str = "TestNodeNamePrefix";
/// The key of its argument in a Policy entry.
pub const KEY: &str = "testNodeNamePrefix";

pub const ERR_NODE_NAME_PREFIX: Reason = Reason::unresolvable("node(s) didn't have the name prefix");

#[derive(Debug)]
pub struct TestNodeNamePrefix {
    name: String,
    prefix: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Argument {
    prefix: String,
}

/// Builds it from its Policy entry (the registry makes sure it has its argument).
pub fn build(args: &PredicateArgs<'_>) -> Result<Arc<dyn AnyPredicate>, ArgumentError> {
    let argument: Argument = args.required(KEY, NAME)?;
    if argument.prefix.is_empty() {
        return Err(ArgumentError::new(format!("argument.{KEY}.prefix"), "must not be empty"));
    }
    Ok(Arc::new(TestNodeNamePrefix { name: args.name.to_string(), prefix: argument.prefix }))
}

impl Predicate for TestNodeNamePrefix {
    type State = ();

    fn name(&self) -> &str {
        &self.name
    }

    fn plugin(&self) -> &str {
        NAME
    }

    fn failures(&self) -> Failures {
        Failures::Unresolvable
    }

    fn prepare(&self, _pod: &PodContext, _view: &ClusterView<'_>) {}

    fn check(&self, _pod: &PodContext, _state: &(), node: &NodeInfo, reasons: &mut Vec<Reason>) {
        if !node.name().starts_with(&self.prefix) {
            reasons.push(ERR_NODE_NAME_PREFIX);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{load, Overrides};
    use crate::predicates::reasons_of;
    use crate::testing::{NodeBuilder, PodBuilder};

    /// Configured from a Policy file, under a custom name and under its own, through the one
    /// loader `serve` and `explain` use.
    #[test]
    fn a_policy_file_configures_it_through_its_row() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("policy.yaml");
        std::fs::write(
            &path,
            "kind: Policy\napiVersion: v1\npredicates:\n- name: GpuNodesOnly\n  argument:\n    testNodeNamePrefix:\n      prefix: gpu-\n- name: HostName\n",
        )
        .unwrap();
        let plan = load(&path, Overrides::default()).unwrap().plan;
        // With the mandatory predicates every Policy runs.
        assert_eq!(
            plan.predicate_names(),
            ["CheckNodeUnschedulable", "HostName", "PodToleratesNodeTaints", "GpuNodesOnly"]
        );
        let custom = &plan.predicates[3];
        assert_eq!((custom.name(), custom.plugin()), ("GpuNodesOnly", NAME));
        let node = |name: &str| NodeInfo::from_parts(NodeBuilder::new(name).build(), []);
        assert_eq!(reasons_of(custom.as_ref(), PodBuilder::new("p").build(), &node("gpu-1")), vec![]);
        assert_eq!(
            reasons_of(custom.as_ref(), PodBuilder::new("p").build(), &node("cpu-1")),
            vec![ERR_NODE_NAME_PREFIX]
        );

        std::fs::write(&path, "kind: Policy\napiVersion: v1\npredicates:\n- name: TestNodeNamePrefix\n").unwrap();
        let err = load(&path, Overrides::default()).map(|_| ()).unwrap_err().to_string();
        assert_eq!(
            err,
            format!("{}: predicates[0] (\"TestNodeNamePrefix\"): argument.testNodeNamePrefix: required by TestNodeNamePrefix", path.display())
        );
        std::fs::write(
            &path,
            "kind: Policy\napiVersion: v1\npredicates:\n- name: GpuOnly\n  argument:\n    testNodeNamePrefix: {prefix: \"\"}\n",
        )
        .unwrap();
        let err = load(&path, Overrides::default()).map(|_| ()).unwrap_err().to_string();
        assert!(
            err.ends_with("predicates[0] (\"GpuOnly\"): argument.testNodeNamePrefix.prefix: must not be empty"),
            "{err}"
        );
    }
}
