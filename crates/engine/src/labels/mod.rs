//! Labels as selectors read them, below both the cluster model and the plugins (apimachinery's
//! `pkg/labels` is the model): [`LabelMap`], what a selector asks of a set of labels; the syntax
//! of label keys and values ([`syntax`]); label selectors and node selector terms, compiled
//! ([`selectors`]). It imports nothing else of the crate, so `cluster`, `framework`, the plugins
//! and their helpers all reach it without an arrow back up.

use std::collections::BTreeMap;

pub mod selectors;
pub mod syntax;

/// What a label selector reads: the value of a key. The cluster model's pod labels (`Labels`) and
/// the maps of the objects kept whole (nodes, namespaces, volumes) both answer it.
pub trait LabelMap {
    fn label(&self, key: &str) -> Option<&str>;

    /// [`LabelMap::label`] by a key prepared for many lookups; a node answers the well-known
    /// topology keys without walking its map.
    fn label_by(&self, key: &LabelKey) -> Option<&str> {
        self.label(key.as_str())
    }
}

/// `topology.kubernetes.io/zone`.
pub const GA_ZONE: &str = "topology.kubernetes.io/zone";
/// `topology.kubernetes.io/region`.
pub const GA_REGION: &str = "topology.kubernetes.io/region";
/// `kubernetes.io/hostname`.
pub const HOSTNAME: &str = "kubernetes.io/hostname";
/// `failure-domain.beta.kubernetes.io/zone`: read before the GA key by `GetZoneKey` (1.17).
pub const BETA_ZONE: &str = "failure-domain.beta.kubernetes.io/zone";
/// `failure-domain.beta.kubernetes.io/region`: read before the GA key by `GetZoneKey` (1.17).
pub const BETA_REGION: &str = "failure-domain.beta.kubernetes.io/region";

/// The keys a node keeps apart from its label map (`cluster::topology_labels`), in slot order:
/// the topology keys that spread constraints, inter-pod affinity and zone preferences name, and
/// the beta zone keys that the spreading priorities' zone key reads first.
pub const KEPT_KEYS: [&str; 5] = [GA_ZONE, GA_REGION, HOSTNAME, BETA_ZONE, BETA_REGION];

/// A label key as a request looks it up on many nodes: one of [`KEPT_KEYS`] by slot, or any other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabelKey {
    Kept(usize),
    Other(String),
}

impl LabelKey {
    pub fn new(key: &str) -> Self {
        match KEPT_KEYS.iter().position(|k| *k == key) {
            Some(slot) => LabelKey::Kept(slot),
            None => LabelKey::Other(key.to_string()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            LabelKey::Kept(slot) => KEPT_KEYS.get(*slot).copied().unwrap_or_default(),
            LabelKey::Other(key) => key,
        }
    }
}

impl LabelMap for BTreeMap<String, String> {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key).map(String::as_str)
    }
}
