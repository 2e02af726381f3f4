//! What one request sees of the cluster: the snapshot, with the request's own Node objects in
//! place of the cached ones when it sent `Nodes`. Per-request precomputation (topology counts for
//! inter-pod affinity and topology spread) walks the cluster through this view.

use std::collections::BTreeMap;

use crate::hashing::HashMap;

use crate::cluster::node_counts::NodeCounts;
use crate::cluster::volumes::VolumeObjects;
use crate::cluster::{NodeInfo, Snapshot};
use crate::framework::Candidate;

pub struct ClusterView<'a> {
    pub snapshot: &'a Snapshot,
    /// The request's Node objects (with the model's pods), by name; empty in `NodeNames` mode.
    overrides: HashMap<&'a str, &'a NodeInfo>,
}

impl<'a> ClusterView<'a> {
    /// The snapshot as it is (`NodeNames` mode, tools, tests).
    pub fn of(snapshot: &'a Snapshot) -> Self {
        ClusterView { snapshot, overrides: HashMap::default() }
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

    /// How many nodes there are: the model's, and the request's that the model does not have.
    pub fn node_count(&self) -> usize {
        self.snapshot.node_count() + self.overrides.keys().filter(|n| !self.snapshot.has_node(n)).count()
    }

    /// How many nodes report this image: the model's index, corrected for the nodes the request
    /// sent (their objects stand in for the cached ones).
    pub fn nodes_with_image(&self, name: &str) -> usize {
        let mut count = self.snapshot.nodes_with_image(name);
        for (node_name, node) in &self.overrides {
            if let Some(cached) = self.snapshot.node_info(node_name) {
                count = count.saturating_sub(usize::from(cached.state.has_image(name)));
            }
            count += usize::from(node.state.has_image(name));
        }
        count
    }

    /// The model's node counts, when they describe this view: not when the request sent its own
    /// node objects (their labels may differ from the cached ones).
    pub fn node_counts(&self) -> Option<&'a NodeCounts> {
        self.overrides.is_empty().then(|| self.snapshot.node_counts())
    }

    /// The PersistentVolumeClaims, PersistentVolumes, StorageClasses and CSINodes the volume
    /// predicates resolve volumes through.
    pub fn volumes(&self) -> &'a VolumeObjects {
        self.snapshot.volumes()
    }

    /// The labels of a node, from the request when it sent the node, else from the model.
    pub fn node_labels(&self, name: &str) -> Option<&BTreeMap<String, String>> {
        match self.overrides.get(name) {
            Some(n) => Some(&n.node().metadata.labels),
            None => self.snapshot.node_label_map(name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{NodeBuilder, PodBuilder};

    #[test]
    fn request_nodes_replace_cached_ones_and_keep_the_cached_pods() {
        let snapshot = Snapshot::build(
            [NodeBuilder::new("n1").label("zone", "a").build(), NodeBuilder::new("n2").label("zone", "a").build()],
            [PodBuilder::new("p").node("n1").build()],
        );
        let candidates = vec![
            {
                let (node, nominated) = snapshot.candidate_for(NodeBuilder::new("n1").label("zone", "b").build());
                Candidate::Known(node, nominated)
            },
            {
                let (node, nominated) = snapshot.candidate_for(NodeBuilder::new("n9").label("zone", "c").build());
                Candidate::Known(node, nominated)
            },
        ];
        let view = ClusterView::with_request_nodes(&snapshot, &candidates);
        assert_eq!(view.node_labels("n1").map(|l| l["zone"].as_str()), Some("b"));
        assert_eq!(view.node_labels("n2").map(|l| l["zone"].as_str()), Some("a"));
        assert_eq!(view.node_labels("n9").map(|l| l["zone"].as_str()), Some("c"));
        let mut seen: Vec<(String, String, usize)> = view
            .nodes()
            .map(|n| (n.name().to_string(), n.node().metadata.labels["zone"].clone(), n.pods.pods().len()))
            .collect();
        seen.sort();
        assert_eq!(
            seen,
            [("n1".into(), "b".into(), 1), ("n2".into(), "a".into(), 0), ("n9".into(), "c".into(), 0)],
            "n1 as the request sent it, with its cached pod; n9 only in the request"
        );
        assert_eq!(ClusterView::of(&snapshot).node_labels("n1").map(|l| l["zone"].as_str()), Some("a"));
    }
}
