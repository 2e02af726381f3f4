//! NodeLabelPriority (Policy argument `labelPreference`): 10 for a node that has the label when
//! `presence` is true, or lacks it when `presence` is false; 0 otherwise (upstream's
//! `NodeLabelPrioritizer.CalculateNodeLabelPriorityMap`). The label's value does not matter. The
//! entry may carry a custom name, which the priority reports.

use std::sync::Arc;

use crate::cluster::NodeInfo;
use crate::framework::ClusterView;
use crate::framework::{ArgumentError, Candidate, PodContext};
use crate::framework::{Priority, PriorityArgs, Scorer, MAX_PRIORITY};

#[derive(Debug, Clone)]
pub struct NodeLabelPriority {
    name: String,
    label: String,
    presence: bool,
}

const AT: &str = "argument.labelPreference";

/// The registry name.
pub const NAME: &str = "NodeLabelPriority";

pub fn build(args: &PriorityArgs<'_>) -> Result<Arc<dyn Priority>, ArgumentError> {
    let argument = args.argument.ok_or_else(|| ArgumentError::new(AT, "required by NodeLabelPriority"))?;
    let object =
        argument.as_object().ok_or_else(|| ArgumentError::new(AT, "must be an object with label and presence"))?;
    if let Some(unknown) = object.keys().find(|k| *k != "label" && *k != "presence") {
        return Err(ArgumentError::new(format!("{AT}.{unknown}"), "unknown field, expected label or presence"));
    }
    let label = match object.get("label") {
        None => return Err(ArgumentError::new(format!("{AT}.label"), "missing")),
        Some(serde_json::Value::String(s)) if s.is_empty() => {
            return Err(ArgumentError::new(format!("{AT}.label"), "must not be empty"))
        }
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(_) => return Err(ArgumentError::new(format!("{AT}.label"), "must be a string")),
    };
    let presence = match object.get("presence") {
        None => return Err(ArgumentError::new(format!("{AT}.presence"), "missing")),
        Some(serde_json::Value::Bool(b)) => *b,
        Some(_) => return Err(ArgumentError::new(format!("{AT}.presence"), "must be true or false")),
    };
    Ok(Arc::new(NodeLabelPriority { name: args.name.to_string(), label, presence }))
}

impl Priority for NodeLabelPriority {
    fn name(&self) -> &str {
        &self.name
    }

    fn prepare(&self, _pod: &PodContext, _view: &ClusterView<'_>, _candidates: &[Candidate]) -> Box<dyn Scorer> {
        Box::new(self.clone())
    }
}

impl Scorer for NodeLabelPriority {
    fn score(&self, _pod: &PodContext, node: &NodeInfo) -> i64 {
        if node.node().metadata.labels.contains_key(&self.label) == self.presence {
            MAX_PRIORITY
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::Snapshot;
    use crate::priorities::testing::candidates;
    use crate::testing::{NodeBuilder, PodBuilder};
    use serde_json::json;

    fn priority(name: &str, argument: serde_json::Value) -> Result<Arc<dyn Priority>, String> {
        build(&PriorityArgs { name, argument: Some(&argument), hard_pod_affinity_symmetric_weight: 1 })
            .map_err(|e| e.to_string())
    }

    fn scores(priority: &dyn Priority, snapshot: &Snapshot, nodes: &[&str]) -> Vec<i64> {
        let ctx = PodContext::new(PodBuilder::new("p").build());
        let scorer = priority.prepare(&ctx, &ClusterView::of(snapshot), &candidates(snapshot, nodes));
        let mut s: Vec<i64> = nodes.iter().map(|n| scorer.score(&ctx, &snapshot.node_info(n).unwrap())).collect();
        scorer.normalize(&mut s);
        s
    }

    #[test]
    fn presence_and_absence_of_the_label() {
        let snapshot = Snapshot::build(
            [
                NodeBuilder::new("n1").label("zone", "a").build(),
                NodeBuilder::new("n2").label("zone", "").build(),
                NodeBuilder::new("n3").label("region", "r").build(),
            ],
            [],
        );
        let nodes = ["n1", "n2", "n3"];
        let cases = [
            // The value does not matter: n1 and n2 have the label, n3 lacks it.
            ("zone", true, [10, 10, 0]),
            ("zone", false, [0, 0, 10]),
            ("rack", true, [0, 0, 0]),
            ("rack", false, [10, 10, 10]),
        ];
        for (label, presence, want) in cases {
            let p = priority("NodeLabelPriority", json!({"label": label, "presence": presence})).unwrap();
            assert_eq!(scores(p.as_ref(), &snapshot, &nodes), want, "{label} {presence}");
        }
    }

    #[test]
    fn reports_its_custom_name() {
        let p = priority("ZonePreferred", json!({"label": "zone", "presence": true})).unwrap();
        assert_eq!(p.name(), "ZonePreferred");
    }

    #[test]
    fn argument_is_validated() {
        let cases = [
            (json!({"presence": true}), "argument.labelPreference.label: missing"),
            (json!({"label": "", "presence": true}), "argument.labelPreference.label: must not be empty"),
            (json!({"label": 3, "presence": true}), "argument.labelPreference.label: must be a string"),
            (json!({"label": "zone"}), "argument.labelPreference.presence: missing"),
            (json!({"label": "zone", "presence": "yes"}), "argument.labelPreference.presence: must be true or false"),
            (
                json!({"label": "zone", "presence": true, "labels": ["a"]}),
                "argument.labelPreference.labels: unknown field, expected label or presence",
            ),
            (json!(["zone"]), "argument.labelPreference: must be an object with label and presence"),
        ];
        for (argument, want) in cases {
            assert_eq!(priority("NodeLabelPriority", argument).unwrap_err(), want);
        }
        let none = PriorityArgs { name: "NodeLabelPriority", argument: None, hard_pod_affinity_symmetric_weight: 1 };
        assert_eq!(build(&none).unwrap_err().to_string(), "argument.labelPreference: required by NodeLabelPriority");
    }
    #[test]
    fn from_a_policy_with_a_custom_name_through_prioritize() {
        use crate::engine::prioritize::prioritize;
        use crate::engine::{CancelFlag, Candidate, Evaluator};
        let policy = r#"{"kind":"Policy","apiVersion":"v1","priorities":[
            {"name":"ZonePreferred","weight":3,"argument":{"labelPreference":{"label":"zone","presence":true}}},
            {"name":"TaintTolerationPriority","weight":1}]}"#;
        let plan = crate::policy::parse("policy.json", policy.as_bytes(), crate::policy::Overrides::default()).unwrap();
        assert_eq!(plan.priority_names(), [("ZonePreferred", 3), ("TaintTolerationPriority", 1)]);
        let snapshot = Snapshot::build(
            [
                NodeBuilder::new("n1").label("zone", "a").taint("k", "v", "PreferNoSchedule").build(),
                NodeBuilder::new("n2").label("zone", "b").build(),
                NodeBuilder::new("n3").build(),
            ],
            [],
        );
        let candidates: Vec<Candidate> = ["n1", "n2", "n3"]
            .iter()
            .map(|n| {
                let (node, nominated) = snapshot.candidate(n).unwrap();
                Candidate::Known(node, nominated)
            })
            .collect();
        let ctx = PodContext::new(PodBuilder::new("p").build());
        let ev = Evaluator::new(2).unwrap();
        let got = prioritize(&ev, &plan, &ctx, &ClusterView::of(&snapshot), &candidates, &CancelFlag::new()).unwrap();
        // Label: n1 10, n2 10, n3 0. Taints: raw 1, 0, 0 -> reversed over max 1: 0, 10, 10.
        // (3 * label + 1 * taints) / 4, rounded to nearest (half up): n1 30 / 4 = 7.5 -> 8,
        // n2 40 / 4 = 10, n3 10 / 4 = 2.5 -> 3.
        assert_eq!(got, [8, 10, 3]);
    }
}
