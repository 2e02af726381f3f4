//! The cluster model: nodes with the pods on them and their sums, the nominated pods, and immutable
//! snapshots that requests read while changes build the next one.

pub mod host_ports;
pub mod node_info;
pub mod objects;
pub mod resources;
pub mod snapshot;
pub mod source;
pub mod store;

pub use node_info::{NodeConditions, NodeInfo, NodePods, NodeState, PodInfo};
pub use snapshot::Snapshot;
pub use store::ClusterStore;
