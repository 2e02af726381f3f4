//! What the model needs to find a pod record again without reading the pod: a sequence number
//! that orders records by creation (the label indexes key pods by it: comparing two numbers
//! instead of two `(namespace, name)` strings, in sets whose entries are then 16 bytes rather
//! than 40), and hashes of what [`Pod::is_same_pod`] compares, so a node's pod list can rule out
//! every other record from a short array of numbers instead of reading each pod's uid; and a
//! borrowed `(namespace, name)` that looks the pod map up without interning the strings.

use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::cluster::intern::IStr;
use crate::cluster::objects::Pod;

/// The next record's number. Records are made by the one thread that changes the model, so its
/// records are numbered in the order of its changes.
static NEXT_SEQ: AtomicU64 = AtomicU64::new(1);

/// A number no other pod record of this process has, increasing.
pub fn next_seq() -> u64 {
    NEXT_SEQ.fetch_add(1, Ordering::Relaxed)
}

/// Hashes of a pod's uid and of its `(namespace, name)`: two pods whose identities differ here are
/// never the same pod. Equal identities say nothing: compare the pods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PodIdent {
    /// 0 when the pod has no uid (no hash of a uid is 0).
    uid: u64,
    name: u64,
}

impl PodIdent {
    pub fn of(pod: &Pod) -> PodIdent {
        // Fixed: the same pod has the same identity in every record.
        let hasher = foldhash::fast::FixedState::default();
        let uid = &pod.metadata.uid;
        let uid = if uid.is_empty() { 0 } else { hasher.hash_one(uid.as_str()).max(1) };
        PodIdent { uid, name: hasher.hash_one((pod.metadata.namespace.as_str(), pod.metadata.name.as_str())) }
    }

    /// False when `Pod::is_same_pod` is false for the two pods: by uid when both have one, else by
    /// namespace and name.
    pub fn may_be_same(self, other: PodIdent) -> bool {
        if self.uid != 0 && other.uid != 0 {
            self.uid == other.uid
        } else {
            self.name == other.name
        }
    }
}

/// `(namespace, name)` as borrowed text, to look up maps keyed by interned `(IStr, IStr)`: ordered
/// as they are, by namespace and then name.
#[derive(Debug, Clone, Copy)]
pub struct PodIdRef<'a>(pub &'a str, pub &'a str);

impl equivalent::Equivalent<(IStr, IStr)> for PodIdRef<'_> {
    fn equivalent(&self, key: &(IStr, IStr)) -> bool {
        self.0 == key.0.as_str() && self.1 == key.1.as_str()
    }
}

impl equivalent::Comparable<(IStr, IStr)> for PodIdRef<'_> {
    fn compare(&self, key: &(IStr, IStr)) -> std::cmp::Ordering {
        self.0.cmp(key.0.as_str()).then_with(|| self.1.cmp(key.1.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::PodBuilder;

    /// `may_be_same` is never false where `is_same_pod` is true, and rules out what it can.
    #[test]
    fn rules_out_only_other_pods() {
        let pods = [
            PodBuilder::new("a").uid("u1").build(),
            PodBuilder::new("a").uid("u2").build(),
            PodBuilder::new("b").uid("u1").build(),
            PodBuilder::new("a").uid("").build(),
            PodBuilder::new("b").uid("").build(),
            PodBuilder::new("a").namespace("other").uid("").build(),
            PodBuilder::new("a").namespace("other").uid("u1").build(),
        ];
        for a in &pods {
            for b in &pods {
                let same = a.is_same_pod(b);
                let may = PodIdent::of(a).may_be_same(PodIdent::of(b));
                assert!(may || !same, "{a:?} / {b:?}");
                // With distinct strings the hashes differ, so the prefilter agrees exactly.
                assert_eq!(may, same, "{} {} / {} {}", a.key(), a.metadata.uid, b.key(), b.metadata.uid);
            }
        }
    }

    /// A borrowed id finds what the interned one finds, in a map ordered by the interned ids.
    #[test]
    fn borrowed_ids_find_interned_keys() {
        let ids = [("a", "x"), ("a", "y"), ("b", "a"), ("ab", ""), ("", "z")];
        let map: imbl::OrdMap<(IStr, IStr), usize> =
            ids.iter().enumerate().map(|(i, (ns, n))| ((IStr::new(ns), IStr::new(n)), i)).collect();
        for (i, (ns, n)) in ids.iter().enumerate() {
            assert_eq!(map.get(&PodIdRef(ns, n)), Some(&i));
        }
        for (ns, n) in [("a", "z"), ("b", ""), ("c", "a"), ("", "a")] {
            assert_eq!(map.get(&PodIdRef(ns, n)), None);
        }
        let mut removed = map.clone();
        assert_eq!(removed.remove(&PodIdRef("a", "y")), Some(1));
        assert_eq!(removed.len(), ids.len() - 1);
    }

    #[test]
    fn numbers_increase() {
        let (a, b) = (next_seq(), next_seq());
        assert!(b > a && a > 0);
    }
}
