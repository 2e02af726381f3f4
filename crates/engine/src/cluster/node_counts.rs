//! Counts over the known node objects, kept in step as nodes change, so a request reads a count
//! instead of walking every node: how many nodes report each image (ImageLocalityPriority's
//! spread), and how many carry each label key and each `key=value` (the topology domains of
//! EvenPodsSpread). A node event costs one update per image name and per label; pod events never
//! touch these.

use crate::cluster::intern::IStr;
use crate::cluster::NodeState;
use crate::hashing::PersistentHashMap as HashMap;

/// The nodes carrying one label key: how many, and how many per value.
#[derive(Debug, Clone, Default)]
pub struct LabelValues {
    nodes: usize,
    values: HashMap<String, usize>,
}

impl LabelValues {
    /// How many known nodes carry the key.
    pub fn nodes(&self) -> usize {
        self.nodes
    }

    /// The values the key has on some known node, each once.
    pub fn values(&self) -> impl Iterator<Item = &str> {
        self.values.keys().map(String::as_str)
    }
}

#[derive(Debug, Clone, Default)]
pub struct NodeCounts {
    /// Keyed by the nodes' own interned names: no copy of the text.
    images: HashMap<IStr, usize>,
    labels: HashMap<String, LabelValues>,
}

impl NodeCounts {
    /// Counts a node object in.
    pub fn add(&mut self, node: &NodeState) {
        for image in node.image_names() {
            match self.images.get_mut(image.as_str()) {
                Some(n) => *n += 1,
                None => {
                    self.images.insert(image.clone(), 1);
                }
            }
        }
        for (key, value) in &node.node.metadata.labels {
            if self.labels.get(key).is_none() {
                self.labels.insert(key.clone(), LabelValues::default());
            }
            if let Some(entry) = self.labels.get_mut(key) {
                entry.nodes += 1;
                increment(&mut entry.values, value);
            }
        }
    }

    /// Counts a node object out (one that was counted in).
    pub fn remove(&mut self, node: &NodeState) {
        for image in node.image_names() {
            decrement(&mut self.images, image.as_str());
        }
        for (key, value) in &node.node.metadata.labels {
            let Some(entry) = self.labels.get_mut(key) else { continue };
            entry.nodes = entry.nodes.saturating_sub(1);
            decrement(&mut entry.values, value);
            if entry.nodes == 0 {
                self.labels.remove(key);
            }
        }
    }

    /// How many known nodes report this image name.
    pub fn nodes_with_image(&self, name: &str) -> usize {
        self.images.get(name).copied().unwrap_or(0)
    }

    /// The known nodes carrying this label key; `None` when no node does.
    pub fn label(&self, key: &str) -> Option<&LabelValues> {
        self.labels.get(key)
    }
}

fn increment(counts: &mut HashMap<String, usize>, key: &str) {
    match counts.get_mut(key) {
        Some(n) => *n += 1,
        None => {
            counts.insert(key.to_string(), 1);
        }
    }
}

/// One fewer; the key goes at zero, so the map holds only what some node has.
fn decrement<K: std::hash::Hash + Eq + Clone + std::borrow::Borrow<str>>(counts: &mut HashMap<K, usize>, key: &str) {
    match counts.get_mut(key) {
        Some(n) if *n > 1 => *n -= 1,
        Some(_) => {
            counts.remove(key);
        }
        None => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::NodeBuilder;

    fn state(name: &str, zone: Option<&str>) -> NodeState {
        let mut b = NodeBuilder::new(name).label("kubernetes.io/hostname", name);
        if let Some(zone) = zone {
            b = b.label("zone", zone);
        }
        NodeState::new(b.build())
    }

    fn values(counts: &NodeCounts, key: &str) -> (usize, Vec<String>) {
        let Some(label) = counts.label(key) else { return (0, Vec::new()) };
        let mut values: Vec<String> = label.values().map(str::to_string).collect();
        values.sort();
        (label.nodes(), values)
    }

    #[test]
    fn label_keys_and_values_follow_the_nodes() {
        let a = state("a", Some("z1"));
        let b = state("b", Some("z1"));
        let c = state("c", None);
        let mut counts = NodeCounts::default();
        for n in [&a, &b, &c] {
            counts.add(n);
        }
        assert_eq!(values(&counts, "zone"), (2, vec!["z1".to_string()]));
        assert_eq!(values(&counts, "kubernetes.io/hostname").0, 3);
        counts.remove(&a);
        assert_eq!(values(&counts, "zone"), (1, vec!["z1".to_string()]), "b still has z1");
        counts.remove(&b);
        assert!(counts.label("zone").is_none(), "no node carries the key any more");
        // A relabelled node: counted out as it was, in as it is.
        let c2 = state("c", Some("z2"));
        counts.remove(&c);
        counts.add(&c2);
        assert_eq!(values(&counts, "zone"), (1, vec!["z2".to_string()]));
    }
}
