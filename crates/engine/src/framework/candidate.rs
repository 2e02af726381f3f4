//! A node a request asks about.

use crate::cluster::snapshot::Nominated;
use crate::cluster::{NodeInfo, Snapshot};

/// A node a request asks about.
#[derive(Debug, Clone)]
pub enum Candidate {
    /// A node with what runs on it, and the pods nominated to it.
    Known(NodeInfo, Nominated),
    /// A name the cluster model does not know (its cache may lag a new node).
    Unknown(String),
}

impl Candidate {
    /// A node named in `NodeNames`, as the model has it: known, or unknown (the cache may lag).
    /// Only an unknown name is copied.
    pub fn by_name(snapshot: &Snapshot, name: impl AsRef<str> + Into<String>) -> Candidate {
        match snapshot.candidate(name.as_ref()) {
            Some((node, nominated)) => Candidate::Known(node, nominated),
            None => Candidate::Unknown(name.into()),
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Candidate::Known(n, _) => n.name(),
            Candidate::Unknown(name) => name,
        }
    }

    /// The node, when the model knows it.
    pub fn node(&self) -> Option<&NodeInfo> {
        match self {
            Candidate::Known(n, _) => Some(n),
            Candidate::Unknown(_) => None,
        }
    }
}

/// The candidates the model knows, in order: the nodes that are scored and normalised.
pub fn known_nodes(candidates: &[Candidate]) -> impl Iterator<Item = &NodeInfo> {
    candidates.iter().filter_map(Candidate::node)
}
