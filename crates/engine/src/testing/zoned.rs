//! The cluster the per-domain verdict tests of MatchInterPodAffinity and EvenPodsSpread share:
//! zones a, b and c of four nodes each and two nodes without a zone, and every node's reasons
//! from one predicate's check.

use crate::cluster::objects::Node;
use crate::cluster::Snapshot;
use crate::framework::{PodContext, Predicate, Reason};
use crate::testing::NodeBuilder;

const ZONE: &str = "topology.kubernetes.io/zone";

/// Zones a, b and c of four nodes each (`a1`..`c4`), then `bare1` and `bare2` without a zone.
pub fn zoned_nodes() -> Vec<Node> {
    let mut nodes: Vec<Node> = ["a", "b", "c"]
        .into_iter()
        .flat_map(|z| (1..=4).map(move |i| NodeBuilder::new(&format!("{z}{i}")).label(ZONE, z).build()))
        .collect();
    nodes.extend(["bare1", "bare2"].map(|n| NodeBuilder::new(n).build()));
    nodes
}

/// What `predicate` says of every node of [`zoned_nodes`], in that order.
pub fn reasons_on_zoned_nodes<P: Predicate>(
    predicate: &P,
    snapshot: &Snapshot,
    pod: &PodContext,
    state: &P::State,
) -> Vec<Vec<Reason>> {
    zoned_nodes()
        .iter()
        .map(|n| {
            let name = &n.metadata.name;
            let node = snapshot.node_info(name).unwrap_or_else(|| panic!("node {name} is not in the snapshot"));
            let mut reasons = Vec::new();
            predicate.check(pod, state, &node, &mut reasons);
            reasons
        })
        .collect()
}
