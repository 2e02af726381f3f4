//! Shared by the three pressure predicates: whether a node reports a condition as `True`.

use crate::cluster::NodeInfo;

pub fn condition_is_true(node: &NodeInfo, type_: &str) -> bool {
    node.node().status.conditions.iter().any(|c| c.type_ == type_ && c.status == "True")
}
