//! CheckNodeLabelPresence (Policy argument `labelsPresence`): the node must have all of the
//! labels (`presence: true`) or none of them (`presence: false`). Label values are not looked at.

use crate::cluster::intern::IStr;
use crate::cluster::NodeInfo;
use crate::framework::PodContext;
use std::sync::Arc;

use serde::Deserialize;

use crate::framework::{ArgumentError, Cause, ClusterView, Failures, Predicate, PredicateArgs, Reason, ReasonKind};

/// Upstream's `ErrNodeLabelPresenceViolated`.
const MESSAGE: &str = "node(s) didn't have the requested labels";

/// The words and kind of every reason it gives, and equal to each of them (reasons are equal by
/// their words): what the tests expect. The reason a node gets also names the label
/// ([`missing_label`], [`unwanted_label`]).
#[cfg(test)]
const ERR_NODE_LABEL_PRESENCE_VIOLATED: Reason = Reason::unresolvable(MESSAGE);

/// The node lacks `key`, a label the entry wants present.
pub fn missing_label(key: IStr) -> Reason {
    Reason::of(Cause::MissingLabel { key }, ReasonKind::Unresolvable, MESSAGE)
}

/// The node has `key`, a label the entry wants absent.
pub fn unwanted_label(key: IStr) -> Reason {
    Reason::of(Cause::UnwantedLabel { key }, ReasonKind::Unresolvable, MESSAGE)
}

#[derive(Debug)]
pub struct CheckNodeLabelPresence {
    /// The Policy entry's name: upstream lets a Policy register this predicate under any name.
    name: String,
    /// Interned once, so a reason naming one allocates nothing.
    labels: Vec<IStr>,
    presence: bool,
}

impl CheckNodeLabelPresence {
    pub fn new(name: &str, labels: Vec<String>, presence: bool) -> Self {
        let labels = labels.iter().map(|l| IStr::new(l)).collect();
        CheckNodeLabelPresence { name: name.to_string(), labels, presence }
    }
}

/// The registry name.
pub const NAME: &str = "CheckNodeLabelPresence";

/// The Policy argument, under `labelsPresence`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Argument {
    labels: Vec<String>,
    presence: bool,
}

/// Builds it from its Policy entry (the registry makes sure it has its argument).
pub fn build(args: &PredicateArgs<'_>) -> Result<Arc<dyn crate::framework::AnyPredicate>, ArgumentError> {
    let argument: Argument = args.required("labelsPresence", NAME)?;
    if argument.labels.is_empty() {
        return Err(ArgumentError::new("argument.labelsPresence.labels", "must list at least one label"));
    }
    Ok(Arc::new(CheckNodeLabelPresence::new(args.name, argument.labels, argument.presence)))
}

impl Predicate for CheckNodeLabelPresence {
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
        let node_labels = &node.node().metadata.labels;
        if let Some(key) = self.labels.iter().find(|l| node_labels.contains_key(l.as_str()) != self.presence) {
            reasons.push(if self.presence { missing_label(key.clone()) } else { unwanted_label(key.clone()) });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predicates::reasons_of;
    use crate::testing::{NodeBuilder, PodBuilder};

    #[test]
    fn presence_and_absence() {
        let node = NodeBuilder::new("n").label("region", "r1").label("zone", "").info();
        let fail = vec![ERR_NODE_LABEL_PRESENCE_VIOLATED];
        let cases = [
            ("all present", vec!["region", "zone"], true, vec![]),
            ("one missing", vec!["region", "rack"], true, fail.clone()),
            ("all absent", vec!["rack", "retiring"], false, vec![]),
            ("one present", vec!["rack", "region"], false, fail.clone()),
            ("an empty value still counts as present", vec!["zone"], true, vec![]),
            ("no labels listed", vec![], true, vec![]),
        ];
        for (name, labels, presence, want) in cases {
            let p = CheckNodeLabelPresence::new("L", labels.into_iter().map(String::from).collect(), presence);
            assert_eq!(reasons_of(&p, PodBuilder::new("p").build(), &node), want, "{name}");
        }
    }

    /// The reason names the first listed label that breaks the rule.
    #[test]
    fn the_reason_names_the_label() {
        let node = NodeBuilder::new("n").label("region", "r1").info();
        let cause = |labels: &[&str], presence| {
            let p = CheckNodeLabelPresence::new("L", labels.iter().map(|l| l.to_string()).collect(), presence);
            reasons_of(&p, PodBuilder::new("p").build(), &node).into_iter().map(|r| r.cause).collect::<Vec<_>>()
        };
        assert_eq!(cause(&["region", "rack", "zone"], true), [Cause::MissingLabel { key: IStr::new("rack") }]);
        assert_eq!(cause(&["rack", "region"], false), [Cause::UnwantedLabel { key: IStr::new("region") }]);
        assert_eq!(missing_label(IStr::new("x")), ERR_NODE_LABEL_PRESENCE_VIOLATED, "the same words");
        assert_eq!(unwanted_label(IStr::new("x")), ERR_NODE_LABEL_PRESENCE_VIOLATED);
    }
}
