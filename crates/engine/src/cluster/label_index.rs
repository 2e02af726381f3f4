//! Pods indexed by label, kept in step with every pod change, so that per-request work that looks
//! for "pods with label k=v" (inter-pod affinity terms) visits those pods only, not the cluster.

use std::sync::Arc;

use crate::hashing::PersistentHashMap as HashMap;
use imbl::OrdMap;

use crate::cluster::intern::IStr;
use crate::cluster::node_info::PodInfo;

/// Pod records by their `seq`: a set of pods that is cheap to search and to copy. An update
/// compares numbers along its path, not `(namespace, name)` strings, and a copied B-tree leaf
/// holds 16-byte entries. The order is the order the records were made; everything that reads a
/// set counts what it finds, so the order changes no answer.
pub type PodSet = OrdMap<u64, Arc<PodInfo>>;

/// key -> value -> the pods filed under `key=value`. Persistent maps: cloning is cheap and an update
/// copies only its path. The pod sets are B-trees: a hash trie allocates 32 slots per node however
/// few it fills. Keys and values are interned: filing a pod copies handles, never text.
#[derive(Debug, Clone, Default)]
pub struct PodIndex(HashMap<IStr, HashMap<IStr, PodSet>>);

impl PodIndex {
    /// Files a pod. Edits in place where this snapshot already owns the path (later changes of
    /// one batch), copying only what an older snapshot still shares.
    pub fn insert(&mut self, key: &IStr, value: &IStr, pod: &Arc<PodInfo>) {
        let values = self.0.entry(key.clone()).or_default();
        values.entry(value.clone()).or_default().insert(pod.seq, Arc::clone(pod));
    }

    /// Forgets the record numbered `seq` under `key=value`.
    pub fn remove(&mut self, key: &str, value: &str, seq: u64) {
        let Some(values) = self.0.get_mut(key) else { return };
        let Some(pods) = values.get_mut(value) else { return };
        pods.remove(&seq);
        if pods.is_empty() {
            values.remove(value);
        }
        if values.is_empty() {
            self.0.remove(key);
        }
    }

    /// The pods filed under `key=value`.
    pub fn get(&self, key: &str, value: &str) -> impl Iterator<Item = &Arc<PodInfo>> {
        self.0.get(key).and_then(|values| values.get(value)).into_iter().flat_map(|pods| pods.values())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::PodBuilder;

    #[test]
    fn files_and_forgets_pods() {
        let mut index = PodIndex::default();
        let a = Arc::new(PodInfo::new(PodBuilder::new("a").build()));
        let b = Arc::new(PodInfo::new(PodBuilder::new("b").build()));
        let (app, web) = (IStr::new("app"), IStr::new("web"));
        index.insert(&app, &web, &a);
        index.insert(&app, &web, &b);
        index.insert(&app, &web, &a);
        assert_eq!(index.get("app", "web").count(), 2, "a record filed twice is there once");
        assert_eq!(index.get("app", "db").count(), 0);
        index.remove("app", "web", a.seq);
        assert_eq!(index.get("app", "web").map(|p| p.pod.metadata.name.as_str()).collect::<Vec<_>>(), ["b"]);
        index.remove("app", "web", b.seq);
        index.remove("app", "web", b.seq);
        assert_eq!(index.get("app", "web").count(), 0);
        assert!(index.0.is_empty(), "empty buckets are dropped");
    }
}
