//! Whether a node satisfies the pod's `nodeSelector` and its required node affinity (upstream's
//! `PodMatchesNodeSelectorAndAffinityTerms`, `plugins/helper/node_affinity.go`): what
//! MatchNodeSelector and GeneralPredicates check, and what the spread constraints'
//! `nodeAffinityPolicy: Honor` includes a node by. The term semantics are in
//! [`crate::labels::selectors`].

use crate::cluster::NodeInfo;
use crate::framework::PodContext;

pub fn matches_node_selector(pod: &PodContext, node: &NodeInfo) -> bool {
    let labels = &node.node().metadata.labels;
    let selector_ok = pod.pod.spec.node_selector.iter().all(|(k, v)| labels.get(k) == Some(v));
    selector_ok && pod.required_node_affinity.as_ref().is_none_or(|terms| terms.matches(node.name(), &*node.state))
}
