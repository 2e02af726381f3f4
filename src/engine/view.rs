//! What one request sees of the cluster: the snapshot, with the request's own Node objects in
//! place of the cached ones when it sent `Nodes`. Per-request precomputation (topology counts for
//! inter-pod affinity and topology spread) walks the cluster through this view.

use std::collections::{BTreeMap, HashMap};

use crate::cluster::{NodeInfo, Snapshot};
use crate::engine::Candidate;

pub struct ClusterView<'a> {
    pub snapshot: &'a Snapshot,
    /// The request's Node objects (with the model's pods), by name; empty in `NodeNames` mode.
    overrides: HashMap<&'a str, &'a NodeInfo>,
}

impl<'a> ClusterView<'a> {
    /// The snapshot as it is (`NodeNames` mode, tools, tests).
    pub fn of(snapshot: &'a Snapshot) -> Self {
        ClusterView { snapshot, overrides: HashMap::new() }
    }

    /// The snapshot with these candidates' node objects in place of the cached ones.
    pub fn with_request_nodes(snapshot: &'a Snapshot, candidates: &'a [Candidate]) -> Self {
        let overrides = candidates
            .iter()
            .filter_map(|c| match c {
                Candidate::Known(node, _) => Some((node.name(), node)),
                Candidate::Unknown(_) => None,
            })
            .collect();
        ClusterView { snapshot, overrides }
    }

    /// Every node with its pods, request nodes replacing cached ones, in no particular order.
    pub fn nodes(&self) -> impl Iterator<Item = NodeInfo> + '_ {
        let cached = self.snapshot.nodes().map(|n| match self.overrides.get(n.name()) {
            Some(request_node) => (*request_node).clone(),
            None => n,
        });
        let only_in_request =
            self.overrides.values().filter(|n| !self.snapshot.has_node(n.name())).map(|n| (*n).clone());
        cached.chain(only_in_request)
    }

    /// The labels of a node, from the request when it sent the node, else from the model.
    pub fn node_labels(&self, name: &str) -> Option<&BTreeMap<String, String>> {
        match self.overrides.get(name) {
            Some(n) => Some(&n.node().metadata.labels),
            None => self.snapshot.node_label_map(name),
        }
    }
}
