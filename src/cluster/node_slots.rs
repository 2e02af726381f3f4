//! Dense node slots: the model's per-node entries, each at a slot of a persistent vector, and one
//! flat table from node name to slot.
//!
//! A `NodeNames` request resolves thousands of names; in a persistent hash map each was a hash,
//! a walk down three or four levels of trie nodes and a string compare at the bottom. Here it is a
//! probe of a flat hash table and an index into the vector. The table changes only when a name the
//! model has never had a slot for arrives, so a snapshot shares it with the one it was made from:
//! a pod event or a node update copies one path of the vector (the entry's chunk), never the table.
//! A name whose entry goes away keeps its slot (free, and taken again if the name comes back);
//! when free slots outnumber the used ones, the next new name compacts the table and the vector.

use std::sync::Arc;

use crate::hashing::HashMap;

/// Which names have which slots. Shared by every snapshot until a new name needs a slot.
#[derive(Debug, Default, Clone)]
struct SlotTable {
    by_name: HashMap<Arc<str>, usize>,
    /// The name of each slot.
    names: Vec<Arc<str>>,
}

/// A map from node name to entry, with the entries at dense slots (see the module comment).
#[derive(Debug, Clone)]
pub(crate) struct NodeSlots<V: Clone> {
    table: Arc<SlotTable>,
    /// The entry of each slot of the table; `None` for a free slot.
    entries: imbl::Vector<Option<V>>,
    /// How many slots hold an entry.
    used: usize,
}

impl<V: Clone> Default for NodeSlots<V> {
    fn default() -> Self {
        NodeSlots { table: Arc::default(), entries: imbl::Vector::new(), used: 0 }
    }
}

/// Below this many slots the table is never compacted (a few free slots cost nothing).
const COMPACT_MIN_SLOTS: usize = 64;

impl<V: Clone> NodeSlots<V> {
    fn slot(&self, name: &str) -> Option<usize> {
        self.table.by_name.get(name).copied()
    }

    /// The entry of a name.
    pub(crate) fn get(&self, name: &str) -> Option<&V> {
        self.entries.get(self.slot(name)?)?.as_ref()
    }

    #[cfg(test)]
    pub(crate) fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// How many names have an entry (tests).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.used
    }

    /// Takes a name's entry out; its slot stays the name's.
    pub(crate) fn remove(&mut self, name: &str) -> Option<V> {
        let slot = self.slot(name)?;
        // Only a slot that holds an entry is copied out of the shared vector.
        self.entries.get(slot)?.as_ref()?;
        let taken = self.entries.get_mut(slot)?.take();
        self.used -= usize::from(taken.is_some());
        taken
    }

    /// Puts a name's entry in, at the name's slot, or at a new one.
    pub(crate) fn insert(&mut self, name: &str, entry: V) {
        if let Some(slot) = self.slot(name) {
            if let Some(at) = self.entries.get_mut(slot) {
                self.used += usize::from(at.is_none());
                *at = Some(entry);
                return;
            }
        }
        let slots = self.table.names.len();
        if slots >= COMPACT_MIN_SLOTS && slots - self.used > self.used {
            self.compact();
        }
        let table = Arc::make_mut(&mut self.table);
        let name: Arc<str> = Arc::from(name);
        table.by_name.insert(Arc::clone(&name), table.names.len());
        table.names.push(name);
        self.entries.push_back(Some(entry));
        self.used += 1;
    }

    /// A table and vector of the used slots only, in slot order.
    fn compact(&mut self) {
        let mut table = SlotTable::default();
        let mut entries = imbl::Vector::new();
        for (name, entry) in self.table.names.iter().zip(&self.entries) {
            if let Some(entry) = entry {
                table.by_name.insert(Arc::clone(name), table.names.len());
                table.names.push(Arc::clone(name));
                entries.push_back(Some(entry.clone()));
            }
        }
        self.table = Arc::new(table);
        self.entries = entries;
    }

    /// Every name with its entry, in slot order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &V)> {
        self.table.names.iter().zip(&self.entries).filter_map(|(name, e)| e.as_ref().map(|e| (&**name, e)))
    }

    /// Every entry, in slot order.
    pub(crate) fn values(&self) -> impl Iterator<Item = &V> {
        self.entries.iter().flatten()
    }

    /// How many slots there are, used or free (tests).
    #[cfg(test)]
    fn slots(&self) -> usize {
        self.table.names.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(slots: &NodeSlots<i32>) -> Vec<(&str, i32)> {
        let mut all: Vec<(&str, i32)> = slots.iter().map(|(n, v)| (n, *v)).collect();
        all.sort();
        all
    }

    #[test]
    fn names_find_their_entries() {
        let mut s = NodeSlots::default();
        s.insert("a", 1);
        s.insert("b", 2);
        s.insert("a", 3);
        assert_eq!(s.get("a"), Some(&3));
        assert_eq!(s.get("b"), Some(&2));
        assert_eq!(s.get("c"), None);
        assert_eq!(s.len(), 2);
        assert_eq!(s.slots(), 2, "replacing an entry takes no new slot");
        assert_eq!(sorted(&s), [("a", 3), ("b", 2)]);
        assert_eq!(s.values().copied().sum::<i32>(), 5);
    }

    #[test]
    fn a_removed_name_keeps_its_slot_and_has_no_entry() {
        let mut s = NodeSlots::default();
        s.insert("a", 1);
        s.insert("b", 2);
        assert_eq!(s.remove("a"), Some(1));
        assert_eq!(s.remove("a"), None);
        assert_eq!(s.remove("never"), None);
        assert!(!s.contains_key("a"));
        assert!(s.contains_key("b"));
        assert_eq!(s.len(), 1);
        assert_eq!(sorted(&s), [("b", 2)]);
        s.insert("a", 4);
        assert_eq!(s.slots(), 2, "the name came back to its own slot");
        assert_eq!(sorted(&s), [("a", 4), ("b", 2)]);
        assert_eq!(s.len(), 2);
    }

    #[test]
    fn a_copy_is_unchanged_by_changes_to_the_original() {
        let mut s = NodeSlots::default();
        s.insert("a", 1);
        s.insert("b", 2);
        let copy = s.clone();
        s.insert("a", 10);
        s.remove("b");
        s.insert("c", 3);
        assert_eq!(sorted(&copy), [("a", 1), ("b", 2)]);
        assert_eq!(copy.len(), 2);
        assert_eq!(sorted(&s), [("a", 10), ("c", 3)]);
        assert!(Arc::ptr_eq(&copy.table, &copy.clone().table), "copies share the table");
    }

    #[test]
    fn changing_entries_of_known_names_shares_the_table() {
        let mut s = NodeSlots::default();
        s.insert("a", 1);
        let copy = s.clone();
        s.insert("a", 2);
        s.remove("a");
        s.insert("a", 3);
        assert!(Arc::ptr_eq(&s.table, &copy.table));
    }

    #[test]
    fn free_slots_are_compacted_once_they_outnumber_the_used_ones() {
        let mut s = NodeSlots::default();
        let names: Vec<String> = (0..200).map(|i| format!("n{i}")).collect();
        for (i, n) in names.iter().enumerate() {
            s.insert(n, i as i32);
        }
        for n in &names[..150] {
            s.remove(n);
        }
        assert_eq!(s.slots(), 200, "removing frees slots but keeps them");
        s.insert("new", -1);
        assert_eq!(s.slots(), 51, "the 50 used slots and the new one");
        assert_eq!(s.len(), 51);
        for (i, n) in names.iter().enumerate() {
            assert_eq!(s.get(n).copied(), (i >= 150).then_some(i as i32), "{n}");
        }
        assert_eq!(s.get("new"), Some(&-1));
        s.insert("n0", 0);
        assert_eq!(s.get("n0"), Some(&0));
        assert_eq!(s.len(), 52);
    }

    #[test]
    fn agrees_with_a_hash_map_over_a_random_history() {
        let mut s = NodeSlots::default();
        let mut model: std::collections::HashMap<String, i32> = Default::default();
        let mut copies = Vec::new();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for step in 0..5000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let name = format!("n{}", x % 300);
            if x.is_multiple_of(3) {
                assert_eq!(s.remove(&name), model.remove(&name), "step {step}");
            } else {
                s.insert(&name, step);
                model.insert(name, step);
            }
            if step % 500 == 0 {
                copies.push((s.clone(), model.clone()));
            }
        }
        for (slots, model) in copies.iter().chain([(s, model)].iter()) {
            assert_eq!(slots.len(), model.len());
            let mut expected: Vec<(&str, i32)> = model.iter().map(|(n, v)| (n.as_str(), *v)).collect();
            expected.sort();
            assert_eq!(sorted(slots), expected);
            for (n, v) in model {
                assert_eq!(slots.get(n), Some(v));
            }
        }
    }
}
