//! Lists that most pods have the same copy of, kept once: the default tolerations
//! (`not-ready` and `unreachable`, added to every pod by admission) and the owner reference of the
//! pods of one ReplicaSet. Each distinct list is stored once, found by its JSON text when decoded,
//! and forgotten once no pod holds it.

use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, LazyLock};

use parking_lot::Mutex;

use k8s_openapi::api::core::v1::Toleration;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use serde::de::{Deserialize, Deserializer};
use serde::Serialize;

/// The distinct lists by their JSON text, and the size at which the next sweep runs.
type Lists<T> = (HashMap<String, Arc<[T]>, foldhash::fast::RandomState>, usize);

/// The lists of one item type, by their JSON text.
pub struct Table<T> {
    lists: Mutex<Lists<T>>,
}

impl<T> Table<T> {
    fn new() -> Self {
        Table { lists: Mutex::new((HashMap::default(), 256)) }
    }
}

/// An item type whose lists are shared.
pub trait Shareable: Clone + Serialize + Sized + 'static {
    fn table() -> &'static Table<Self>;
}

impl Shareable for Toleration {
    fn table() -> &'static Table<Self> {
        static TABLE: LazyLock<Table<Toleration>> = LazyLock::new(Table::new);
        &TABLE
    }
}

impl Shareable for OwnerReference {
    fn table() -> &'static Table<Self> {
        static TABLE: LazyLock<Table<OwnerReference>> = LazyLock::new(Table::new);
        &TABLE
    }
}

/// A list kept once per distinct content; derefs to a slice. Empty lists allocate nothing.
#[derive(Clone, PartialEq)]
pub struct SharedList<T>(Option<Arc<[T]>>);

impl<T> Default for SharedList<T> {
    fn default() -> Self {
        SharedList(None)
    }
}

impl<T> Deref for SharedList<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.0.as_deref().unwrap_or(&[])
    }
}

impl<T: fmt::Debug> fmt::Debug for SharedList<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: Shareable> SharedList<T> {
    /// The shared copy of this list.
    pub fn new(items: Vec<T>) -> Self {
        if items.is_empty() {
            return SharedList(None);
        }
        let Ok(text) = serde_json::to_string(&items) else {
            return SharedList(Some(Arc::from(items)));
        };
        let mut guard = T::table().lists.lock();
        let (lists, sweep_at) = &mut *guard;
        if let Some(found) = lists.get(&text) {
            return SharedList(Some(Arc::clone(found)));
        }
        if lists.len() >= *sweep_at {
            lists.retain(|_, l| Arc::strong_count(l) > 1);
            *sweep_at = (lists.len() * 2).max(256);
        }
        let list: Arc<[T]> = Arc::from(items);
        lists.insert(text, Arc::clone(&list));
        SharedList(Some(list))
    }

    /// Adds an item (builders and tests).
    pub fn push(&mut self, item: T) {
        let mut items = self.to_vec();
        items.push(item);
        *self = SharedList::new(items);
    }
}

impl<T: Shareable> FromIterator<T> for SharedList<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        SharedList::new(iter.into_iter().collect())
    }
}

impl<T: Shareable> From<Vec<T>> for SharedList<T> {
    fn from(items: Vec<T>) -> Self {
        SharedList::new(items)
    }
}

impl<'a, T> IntoIterator for &'a SharedList<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// A JSON list (or `null`, as empty).
impl<'de, T: Shareable + Deserialize<'de>> Deserialize<'de> for SharedList<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let items: Option<Vec<T>> = Option::deserialize(d)?;
        Ok(SharedList::new(items.unwrap_or_default()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_lists_are_one_copy() {
        let json = r#"[{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}]"#;
        let a: SharedList<Toleration> = serde_json::from_str(json).unwrap();
        let b: SharedList<Toleration> = serde_json::from_str(json).unwrap();
        assert!(matches!((&a.0, &b.0), (Some(x), Some(y)) if Arc::ptr_eq(x, y)));
        assert_eq!(a[0].key.as_deref(), Some("node.kubernetes.io/not-ready"));
        let empty: SharedList<Toleration> = serde_json::from_str("null").unwrap();
        assert!(empty.is_empty() && empty.0.is_none());
        let mut c = a.clone();
        c.push(Toleration { key: Some("x".into()), ..Default::default() });
        assert_eq!((a.len(), c.len()), (1, 2));
    }
}
