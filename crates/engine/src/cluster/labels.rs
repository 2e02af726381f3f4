//! A pod's labels as the model keeps them: a sorted slice of interned `(key, value)` pairs. A
//! `BTreeMap<String, String>` allocates a 540-byte node however few labels it holds, plus a string
//! per key and value; a pod's three to six labels here are one small allocation of shared strings.
//!
//! Lookups take `&str` and iterate in key order, as the map did.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};

use crate::cluster::intern::IStr;
use crate::labels::LabelMap;

impl LabelMap for Labels {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key).map(IStr::as_str)
    }
}

/// Labels, sorted by key, each key once.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Labels(Box<[(IStr, IStr)]>);

impl Labels {
    fn position(&self, key: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(k, _)| k.as_str().cmp(key))
    }

    pub fn get(&self, key: &str) -> Option<&IStr> {
        self.position(key).ok().map(|i| &self.0[i].1)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.position(key).is_ok()
    }

    /// `(key, value)` in key order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&IStr, &IStr)> + DoubleEndedIterator + Clone {
        self.0.iter().map(|(k, v)| (k, v))
    }

    pub fn keys(&self) -> impl ExactSizeIterator<Item = &IStr> {
        self.0.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl ExactSizeIterator<Item = &IStr> {
        self.0.iter().map(|(_, v)| v)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Sets a label, returning the value it replaces. (Builders and tests: the model's labels
    /// come from decoding.)
    pub fn insert(&mut self, key: String, value: String) -> Option<IStr> {
        let mut pairs = std::mem::take(&mut self.0).into_vec();
        let value = IStr::from(value);
        let old = match pairs.binary_search_by(|(k, _)| k.as_str().cmp(&key)) {
            Ok(i) => Some(std::mem::replace(&mut pairs[i].1, value)),
            Err(i) => {
                pairs.insert(i, (IStr::from(key), value));
                None
            }
        };
        self.0 = pairs.into_boxed_slice();
        old
    }

    /// Removes a label, returning its value.
    pub fn remove(&mut self, key: &str) -> Option<IStr> {
        let i = self.position(key).ok()?;
        let mut pairs = std::mem::take(&mut self.0).into_vec();
        let (_, value) = pairs.remove(i);
        self.0 = pairs.into_boxed_slice();
        Some(value)
    }

    /// The labels as a plain map.
    pub fn to_map(&self) -> BTreeMap<String, String> {
        self.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    /// From pairs in any order; a repeated key keeps its last value, as Go's map does.
    fn from_pairs(mut pairs: Vec<(IStr, IStr)>) -> Labels {
        // Stable: among equal keys the order read is kept, and the last one is what stays.
        pairs.sort_by(|a, b| a.0.cmp(&b.0));
        let mut kept: Vec<(IStr, IStr)> = Vec::with_capacity(pairs.len());
        for pair in pairs {
            match kept.last_mut() {
                Some(last) if last.0 == pair.0 => *last = pair,
                _ => kept.push(pair),
            }
        }
        Labels(kept.into_boxed_slice())
    }
}

impl fmt::Debug for Labels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<'a> IntoIterator for &'a Labels {
    type Item = (&'a IStr, &'a IStr);
    type IntoIter = std::iter::Map<std::slice::Iter<'a, (IStr, IStr)>, fn(&'a (IStr, IStr)) -> (&'a IStr, &'a IStr)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(k, v)| (k, v))
    }
}

impl<K: Into<IStr>, V: Into<IStr>> FromIterator<(K, V)> for Labels {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Labels {
        Labels::from_pairs(iter.into_iter().map(|(k, v)| (k.into(), v.into())).collect())
    }
}

impl<K: Into<IStr>, V: Into<IStr>, const N: usize> From<[(K, V); N]> for Labels {
    fn from(pairs: [(K, V); N]) -> Labels {
        pairs.into_iter().collect()
    }
}

impl From<BTreeMap<String, String>> for Labels {
    fn from(map: BTreeMap<String, String>) -> Labels {
        map.into_iter().collect()
    }
}

/// Test support only (`cfg(test)` or the `test-util` feature): production code uses `get`.
#[cfg(any(test, feature = "test-util"))]
#[allow(clippy::panic)] // a missing key in a test is how it fails
impl std::ops::Index<&str> for Labels {
    type Output = IStr;
    /// Panics when the key is missing, as a map index does; for tests.
    fn index(&self, key: &str) -> &IStr {
        match self.get(key) {
            Some(v) => v,
            None => panic!("no label {key:?} in {self:?}"),
        }
    }
}

/// A JSON object of strings (or `null`, as empty); a repeated key keeps the last value.
impl<'de> Deserialize<'de> for Labels {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Labels, D::Error> {
        struct LabelsVisitor;
        impl<'de> Visitor<'de> for LabelsVisitor {
            type Value = Labels;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map of label keys to values")
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Labels, E> {
                Ok(Labels::default())
            }
            fn visit_none<E: serde::de::Error>(self) -> Result<Labels, E> {
                Ok(Labels::default())
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Labels, M::Error> {
                let mut pairs = Vec::with_capacity(map.size_hint().unwrap_or(4));
                while let Some(pair) = map.next_entry::<IStr, IStr>()? {
                    pairs.push(pair);
                }
                Ok(Labels::from_pairs(pairs))
            }
        }
        d.deserialize_any(LabelsVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_sorted_with_the_last_of_a_repeated_key() {
        let labels: Labels = serde_json::from_str(r#"{"b": "2", "a": "1", "b": "3"}"#).unwrap();
        let pairs: Vec<(&str, &str)> = labels.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(pairs, [("a", "1"), ("b", "3")]);
        assert_eq!(serde_json::from_str::<Labels>("null").unwrap(), Labels::default());
        assert!(serde_json::from_str::<Labels>(r#"{"a": 1}"#).is_err());
        assert!(serde_json::from_str::<Labels>(r#"["a"]"#).is_err());
    }

    #[test]
    fn reads_and_edits_like_a_map() {
        let mut labels = Labels::from([("app", "web"), ("tier", "front")]);
        assert_eq!(labels.get("app").map(IStr::as_str), Some("web"));
        assert_eq!(labels.label("tier"), Some("front"));
        assert!(labels.get("zone").is_none());
        assert_eq!(labels.insert("app".into(), "db".into()).as_deref(), Some("web"));
        assert_eq!(labels.insert("zone".to_string(), "a".to_string()), None);
        assert_eq!(labels.keys().map(IStr::as_str).collect::<Vec<_>>(), ["app", "tier", "zone"]);
        assert_eq!(labels.remove("tier").as_deref(), Some("front"));
        assert_eq!(labels.to_map(), BTreeMap::from([("app".into(), "db".into()), ("zone".into(), "a".into())]));
    }
}
