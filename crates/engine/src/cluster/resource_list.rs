//! A resource list (`requests`, `limits`, `overhead`, `allocatable`): a few `name: quantity`
//! pairs kept as a sorted vector. A `BTreeMap` allocates a node for eleven entries whatever it
//! holds, about 450 bytes for the usual `cpu` and `memory`; with two maps per container that was
//! most of a pod's memory in the model.

use std::fmt;

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

use crate::cluster::intern::IStr;
use crate::quantity::Quantity;

/// Resource names and quantities, sorted by name, each name once. The names are interned: every
/// container of every pod says `cpu` and `memory`.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ResourceList(Vec<(IStr, Quantity)>);

impl ResourceList {
    pub fn get(&self, name: &str) -> Option<&Quantity> {
        self.0.binary_search_by(|(k, _)| k.as_str().cmp(name)).ok().map(|i| &self.0[i].1)
    }

    /// Sets a quantity, replacing the one of the same name.
    pub fn insert(&mut self, name: String, quantity: Quantity) {
        match self.0.binary_search_by(|(k, _)| k.as_str().cmp(&name)) {
            Ok(i) => self.0[i].1 = quantity,
            Err(i) => self.0.insert(i, (IStr::from(name), quantity)),
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = (&IStr, &Quantity)> {
        self.0.iter().map(|(k, q)| (k, q))
    }

    pub fn keys(&self) -> impl Iterator<Item = &IStr> {
        self.0.iter().map(|(k, _)| k)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }
}

impl fmt::Debug for ResourceList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<'a> IntoIterator for &'a ResourceList {
    type Item = (&'a IStr, &'a Quantity);
    type IntoIter = std::iter::Map<std::slice::Iter<'a, (IStr, Quantity)>, fn(&'a (IStr, Quantity)) -> Self::Item>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(k, q)| (k, q))
    }
}

impl Extend<(IStr, Quantity)> for ResourceList {
    fn extend<I: IntoIterator<Item = (IStr, Quantity)>>(&mut self, iter: I) {
        for (k, q) in iter {
            self.insert(k.to_string(), q);
        }
    }
}

impl Extend<(String, Quantity)> for ResourceList {
    fn extend<I: IntoIterator<Item = (String, Quantity)>>(&mut self, iter: I) {
        for (k, q) in iter {
            self.insert(k, q);
        }
    }
}

impl IntoIterator for ResourceList {
    type Item = (IStr, Quantity);
    type IntoIter = std::vec::IntoIter<(IStr, Quantity)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

/// Test support only (`cfg(test)` or the `test-util` feature): production code uses `get`.
#[cfg(any(test, feature = "test-util"))]
#[allow(clippy::panic)] // a missing key in a test is how it fails
impl std::ops::Index<&str> for ResourceList {
    type Output = Quantity;
    /// Panics when the name is missing, as a map index does; for tests.
    fn index(&self, name: &str) -> &Quantity {
        match self.get(name) {
            Some(q) => q,
            None => panic!("no resource {name:?} in {self:?}"),
        }
    }
}

impl FromIterator<(String, Quantity)> for ResourceList {
    fn from_iter<I: IntoIterator<Item = (String, Quantity)>>(iter: I) -> Self {
        let mut list = ResourceList::default();
        for (k, q) in iter {
            list.insert(k, q);
        }
        list.0.shrink_to_fit();
        list
    }
}

/// A JSON object (or `null`, as empty); a repeated name keeps the last value, as Go's map does.
impl<'de> Deserialize<'de> for ResourceList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ListVisitor;
        impl<'de> Visitor<'de> for ListVisitor {
            type Value = ResourceList;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map of resource names to quantities")
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<ResourceList, E> {
                Ok(ResourceList::default())
            }
            fn visit_none<E: serde::de::Error>(self) -> Result<ResourceList, E> {
                Ok(ResourceList::default())
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<ResourceList, M::Error> {
                let mut list = ResourceList::default();
                while let Some((k, q)) = map.next_entry::<IStr, Quantity>()? {
                    match list.0.binary_search_by(|(n, _)| n.cmp(&k)) {
                        Ok(i) => list.0[i].1 = q,
                        Err(i) => list.0.insert(i, (k, q)),
                    }
                }
                list.0.shrink_to_fit();
                Ok(list)
            }
        }
        d.deserialize_any(ListVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).unwrap()
    }

    #[test]
    fn decodes_sorted_with_the_last_of_a_repeated_name() {
        let cases = [
            (r#"{"memory": "1Gi", "cpu": "500m"}"#, vec![("cpu", "500m"), ("memory", "1Gi")]),
            (r#"{"cpu": "1", "cpu": "2"}"#, vec![("cpu", "2")]),
            ("null", vec![]),
            ("{}", vec![]),
        ];
        for (json, want) in cases {
            let list: ResourceList = serde_json::from_str(json).unwrap();
            let got: Vec<(String, Quantity)> = list.iter().map(|(k, v)| (k.to_string(), *v)).collect();
            let want: Vec<(String, Quantity)> = want.into_iter().map(|(k, v)| (k.to_string(), q(v))).collect();
            assert_eq!(got, want, "{json}");
        }
    }

    #[test]
    fn lookups_and_errors() {
        let list: ResourceList = serde_json::from_str(r#"{"nvidia.com/gpu": "2", "cpu": "250m"}"#).unwrap();
        assert_eq!(list.get("cpu"), Some(&q("250m")));
        assert_eq!(list.get("nvidia.com/gpu"), Some(&q("2")));
        assert_eq!(list.get("memory"), None);
        assert_eq!(list.len(), 2);
        assert!(serde_json::from_str::<ResourceList>(r#"{"cpu": "lots"}"#).is_err());
        assert!(serde_json::from_str::<ResourceList>(r#"["cpu"]"#).is_err());
    }
}
