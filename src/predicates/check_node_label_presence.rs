//! CheckNodeLabelPresence (Policy argument `labelsPresence`): the node must have all of the
//! labels (`presence: true`) or none of them (`presence: false`). Label values are not looked at.

use crate::cluster::NodeInfo;
use crate::engine::PodContext;
use crate::predicates::{Predicate, Reason};

pub const ERR_NODE_LABEL_PRESENCE_VIOLATED: Reason = Reason::unresolvable("node(s) didn't have the requested labels");

#[derive(Debug)]
pub struct CheckNodeLabelPresence {
    /// The Policy entry's name: upstream lets a Policy register this predicate under any name.
    name: String,
    labels: Vec<String>,
    presence: bool,
}

impl CheckNodeLabelPresence {
    pub fn new(name: &str, labels: Vec<String>, presence: bool) -> Self {
        CheckNodeLabelPresence { name: name.to_string(), labels, presence }
    }
}

impl Predicate for CheckNodeLabelPresence {
    fn name(&self) -> &str {
        &self.name
    }

    fn kind(&self) -> Option<crate::predicates::Kind> {
        Some(crate::predicates::Kind::CheckNodeLabelPresence)
    }

    fn check(&self, _pod: &PodContext, node: &NodeInfo, reasons: &mut Vec<Reason>) {
        let node_labels = &node.node().metadata.labels;
        if self.labels.iter().any(|l| node_labels.contains_key(l) != self.presence) {
            reasons.push(ERR_NODE_LABEL_PRESENCE_VIOLATED);
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
        let node = NodeInfo::from_parts(NodeBuilder::new("n").label("region", "r1").label("zone", "").build(), []);
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
}
