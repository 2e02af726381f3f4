//! The node labels that topology-keyed predicates and priorities read on every candidate: zone,
//! region and hostname. A node's `BTreeMap` of labels is a walk over separately allocated keys
//! (eight or more, sharing long prefixes) for each lookup; these three are copied out of it once
//! per node, on first use, and a lookup by a [`LabelKey`] made once per request reads only them.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use crate::labels::KEPT_KEYS as KEPT;
pub use crate::labels::{LabelKey, HOSTNAME};

/// A node's values of the kept keys, copied on first use.
#[derive(Debug, Default)]
pub struct TopologyLabels(OnceLock<[Option<Box<str>>; KEPT.len()]>);

impl TopologyLabels {
    /// The value of `key` in `labels` (the labels of the node these are kept for).
    pub fn get<'a>(&'a self, labels: &'a BTreeMap<String, String>, key: &LabelKey) -> Option<&'a str> {
        match key {
            LabelKey::Kept(slot) => {
                let kept = self.0.get_or_init(|| KEPT.map(|k| labels.get(k).map(|v| Box::from(v.as_str()))));
                kept.get(*slot).and_then(Option::as_deref)
            }
            LabelKey::Other(key) => labels.get(key).map(String::as_str),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::labels::{GA_REGION, GA_ZONE};

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn reads_what_the_map_holds_for_kept_and_other_keys() {
        let node = labels(&[(GA_ZONE, "z1"), (HOSTNAME, "n1"), ("team", "a"), (GA_REGION, "")]);
        let kept = TopologyLabels::default();
        for key in [GA_ZONE, GA_REGION, HOSTNAME, "team", "absent", "topology.kubernetes.io/zon"] {
            let key = LabelKey::new(key);
            assert_eq!(kept.get(&node, &key), node.get(key.as_str()).map(String::as_str), "{key:?}");
        }
        assert_eq!(LabelKey::new(GA_ZONE), LabelKey::Kept(0));
        assert_eq!(LabelKey::new("team"), LabelKey::Other("team".into()));
    }

    #[test]
    fn a_node_without_the_kept_keys_has_none_of_them() {
        let node = labels(&[("team", "a")]);
        let kept = TopologyLabels::default();
        assert_eq!(kept.get(&node, &LabelKey::new(HOSTNAME)), None);
        assert_eq!(kept.get(&node, &LabelKey::new(GA_ZONE)), None);
    }
}
