//! A predicate's verdicts by topology domain: when what a predicate says of a node depends only on
//! the node's value of one topology key, the verdict is computed once per value, at prepare time,
//! and each node looks its value up instead of judging again.
//!
//! The verdicts are the predicate's own per-node verdict, asked of a node whose only label is
//! `key=value`, so the table cannot disagree with it. Values no one counted share one verdict
//! (`other`). A node without the key is not in the table: the predicate judges it per node, as
//! before. The hostname key is not tabled: one node per domain, nothing to share.

use std::collections::BTreeMap;

use crate::cluster::node_info::NodeInfo;
use crate::framework::Reason;
use crate::hashing::HashMap;
use crate::labels::{LabelKey, LabelMap};

/// The well-known hostname label: a domain of one node.
pub use crate::cluster::topology_labels::HOSTNAME as HOSTNAME_KEY;

/// One predicate's verdict per value of one topology key, for one request.
#[derive(Debug)]
pub struct DomainVerdicts {
    key: LabelKey,
    by_value: HashMap<String, Option<Reason>>,
    /// The verdict for a value not in `by_value`.
    other: Option<Reason>,
}

impl DomainVerdicts {
    /// The verdicts of `verdict` for every value in `values` and for any other value of `key`;
    /// `None` for the hostname key.
    ///
    /// `verdict` must depend on no label of the node but `key`; the `other` verdict is asked of a
    /// value longer than every listed one, so it is none of them.
    pub fn build<'a>(
        key: &str,
        values: impl IntoIterator<Item = &'a str>,
        verdict: impl Fn(&BTreeMap<String, String>) -> Option<Reason>,
    ) -> Option<DomainVerdicts> {
        if key == HOSTNAME_KEY {
            return None;
        }
        let mut labels = BTreeMap::new();
        let mut by_value = HashMap::default();
        let mut longest = 0;
        for value in values {
            if by_value.contains_key(value) {
                continue;
            }
            longest = longest.max(value.len());
            labels.insert(key.to_string(), value.to_string());
            by_value.insert(value.to_string(), verdict(&labels));
        }
        labels.insert(key.to_string(), "\0".repeat(longest + 1));
        let other = verdict(&labels);
        Some(DomainVerdicts { key: LabelKey::new(key), by_value, other })
    }

    /// The verdict for a node with these labels (`Some(None)`: it passes); `None` when the node
    /// lacks the key, which the predicate judges per node.
    pub fn of(&self, labels: &BTreeMap<String, String>) -> Option<Option<&Reason>> {
        self.of_value(labels.get(self.key.as_str()).map(String::as_str))
    }

    /// [`DomainVerdicts::of`] a node's labels, its topology labels read without walking them.
    pub fn of_node(&self, node: &NodeInfo) -> Option<Option<&Reason>> {
        self.of_value(node.state.label_by(&self.key))
    }

    fn of_value(&self, value: Option<&str>) -> Option<Option<&Reason>> {
        Some(self.by_value.get(value?).unwrap_or(&self.other).as_ref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    const ZONE: &str = "topology.kubernetes.io/zone";
    const FULL: Reason = Reason::resolvable("full");

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    /// Zone "a" is full, every other zone passes.
    fn a_is_full(labels: &BTreeMap<String, String>) -> Option<Reason> {
        (labels.get(ZONE).map(String::as_str) == Some("a")).then_some(FULL)
    }

    #[test]
    fn one_verdict_per_value_and_one_for_the_rest() {
        let calls = Cell::new(0);
        let table = DomainVerdicts::build(ZONE, ["a", "b", "a", "bb"], |l| {
            calls.set(calls.get() + 1);
            a_is_full(l)
        })
        .unwrap();
        assert_eq!(calls.get(), 4, "a, b, bb and the other values; a twice is computed once");
        assert_eq!(table.of(&labels(&[(ZONE, "a"), ("x", "y")])), Some(Some(&FULL)));
        assert_eq!(table.of(&labels(&[(ZONE, "b")])), Some(None));
        assert_eq!(table.of(&labels(&[(ZONE, "zzz")])), Some(None), "a value not listed");
        assert_eq!(table.of(&labels(&[("x", "a")])), None, "no key: judged per node");
    }

    #[test]
    fn the_other_verdict_is_asked_of_a_value_not_listed() {
        // Every listed value passes and any other fails: `other` must read as not listed.
        let listed = ["", "\0", "a"];
        let table = DomainVerdicts::build(ZONE, listed, |l| {
            let v = l.get(ZONE).map(String::as_str).unwrap_or("");
            (!listed.contains(&v)).then_some(FULL)
        })
        .unwrap();
        assert_eq!(table.of(&labels(&[(ZONE, "\0")])), Some(None));
        assert_eq!(table.of(&labels(&[(ZONE, "q")])), Some(Some(&FULL)));
    }

    #[test]
    fn hostname_is_not_tabled() {
        assert!(DomainVerdicts::build(HOSTNAME_KEY, ["n1"], a_is_full).is_none());
    }
}
