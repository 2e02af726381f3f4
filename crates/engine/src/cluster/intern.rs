//! Interned strings: the model keeps a hundred thousand pods whose label keys and values,
//! namespaces, node names, images and resource names repeat across pods. Each distinct string is
//! stored once and shared (`IStr`, a reference-counted `str`), so a pod holds 16-byte handles
//! instead of heap copies, and cloning one (as the model's keys and indexes do) allocates nothing.
//!
//! Strings are interned when they are decoded. The table forgets a string once nothing else holds
//! it: each shard sweeps itself when it has doubled since its last sweep, so churning values (pod
//! template hashes, revision labels) do not accumulate.

use std::borrow::Borrow;
use std::collections::HashSet;
use std::fmt;
use std::hash::{BuildHasher, Hash, Hasher};
use std::ops::Deref;
use std::sync::{Arc, LazyLock};

use parking_lot::Mutex;

use serde::de::{Deserialize, Deserializer, Visitor};
use serde::{Serialize, Serializer};

const SHARDS: usize = 16;

struct Shard {
    strings: HashSet<Arc<str>, foldhash::fast::RandomState>,
    /// The size at which the next sweep runs.
    sweep_at: usize,
}

struct Interner {
    hasher: foldhash::fast::RandomState,
    shards: [Mutex<Shard>; SHARDS],
}

static INTERNER: LazyLock<Interner> = LazyLock::new(|| Interner {
    hasher: foldhash::fast::RandomState::default(),
    shards: std::array::from_fn(|_| Mutex::new(Shard { strings: HashSet::default(), sweep_at: 1024 })),
});

static EMPTY: LazyLock<IStr> = LazyLock::new(|| IStr(INTERNER.intern("")));

impl Interner {
    fn existing(&self, s: &str) -> Option<Arc<str>> {
        let shard = (self.hasher.hash_one(s) as usize) % SHARDS;
        self.shards[shard].lock().strings.get(s).cloned()
    }

    fn intern(&self, s: &str) -> Arc<str> {
        let shard = (self.hasher.hash_one(s) as usize) % SHARDS;
        let mut shard = self.shards[shard].lock();
        if let Some(found) = shard.strings.get(s) {
            return Arc::clone(found);
        }
        if shard.strings.len() >= shard.sweep_at {
            // Only the table holds these: nothing can clone them but a lookup, which needs this
            // lock.
            shard.strings.retain(|s| Arc::strong_count(s) > 1);
            shard.sweep_at = (shard.strings.len() * 2).max(1024);
        }
        let new: Arc<str> = Arc::from(s);
        shard.strings.insert(Arc::clone(&new));
        new
    }
}

/// An interned string: derefs to `str`, compares and hashes as its text, clones by reference.
#[derive(Clone)]
pub struct IStr(Arc<str>);

impl IStr {
    /// The shared copy of `s`.
    pub fn new(s: &str) -> IStr {
        if s.is_empty() {
            return EMPTY.clone();
        }
        IStr(INTERNER.intern(s))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The shared copy of `s` if something holds one, without interning it: a name nobody holds
    /// is on no node.
    pub fn existing(s: &str) -> Option<IStr> {
        if s.is_empty() {
            return Some(EMPTY.clone());
        }
        INTERNER.existing(s).map(IStr)
    }

    /// The address of the shared text. Every live `IStr` of one text is one allocation (each is
    /// made by the interner, which hands out the copy it holds), so while both are held, equal
    /// ids are equal texts and different ids different texts.
    pub fn id(&self) -> usize {
        Arc::as_ptr(&self.0).cast::<u8>() as usize
    }
}

impl Default for IStr {
    fn default() -> Self {
        EMPTY.clone()
    }
}

impl Deref for IStr {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for IStr {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for IStr {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl PartialEq for IStr {
    fn eq(&self, other: &IStr) -> bool {
        // Interned: the same text is the same allocation, almost always.
        Arc::ptr_eq(&self.0, &other.0) || *self.0 == *other.0
    }
}

impl Eq for IStr {}

impl PartialOrd for IStr {
    fn partial_cmp(&self, other: &IStr) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for IStr {
    fn cmp(&self, other: &IStr) -> std::cmp::Ordering {
        // The model's maps compare pod ids whose namespaces are mostly the same allocation.
        if Arc::ptr_eq(&self.0, &other.0) {
            return std::cmp::Ordering::Equal;
        }
        self.0.cmp(&other.0)
    }
}

/// As `str` hashes, so maps keyed by `IStr` are looked up by `&str`.
impl Hash for IStr {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state)
    }
}

macro_rules! eq_with {
    ($($t:ty),*) => {$(
        impl PartialEq<$t> for IStr {
            fn eq(&self, other: &$t) -> bool {
                self.as_str() == AsRef::<str>::as_ref(other)
            }
        }
        impl PartialEq<IStr> for $t {
            fn eq(&self, other: &IStr) -> bool {
                AsRef::<str>::as_ref(self) == other.as_str()
            }
        }
    )*};
}
eq_with!(str, &str, String, &String);

impl fmt::Debug for IStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for IStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl From<&str> for IStr {
    fn from(s: &str) -> IStr {
        IStr::new(s)
    }
}

impl From<&String> for IStr {
    fn from(s: &String) -> IStr {
        IStr::new(s)
    }
}

impl From<String> for IStr {
    fn from(s: String) -> IStr {
        IStr::new(&s)
    }
}

impl From<IStr> for String {
    fn from(s: IStr) -> String {
        s.as_str().to_string()
    }
}

impl Serialize for IStr {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self)
    }
}

/// A string, interned as it is read (no copy when the decoder can lend the text).
impl<'de> Deserialize<'de> for IStr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<IStr, D::Error> {
        struct IStrVisitor;
        impl Visitor<'_> for IStrVisitor {
            type Value = IStr;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<IStr, E> {
                Ok(IStr::new(s))
            }
        }
        d.deserialize_str(IStrVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_text_is_one_allocation() {
        let a = IStr::new("team-a");
        let b = IStr::from("team-a".to_string());
        assert!(Arc::ptr_eq(&a.0, &b.0));
        assert_eq!(a, b);
        assert_eq!(a, "team-a");
        assert_eq!("team-a", a);
        assert_eq!(a.to_string(), "team-a");
        assert!(IStr::new("a") < IStr::new("b"));
        assert_eq!(IStr::default(), "");
    }

    #[test]
    fn decodes_borrowed_and_escaped_text() {
        let v: Vec<IStr> = serde_json::from_str(r#"["plain", "esc\"aped"]"#).unwrap();
        assert_eq!(v, ["plain", "esc\"aped"]);
        assert!(serde_json::from_str::<IStr>("1").is_err());
    }

    #[test]
    fn strings_no_one_holds_are_forgotten() {
        let kept = IStr::new("interned-and-kept");
        for i in 0..50_000 {
            IStr::new(&format!("churn-{i}"));
        }
        let total: usize = INTERNER.shards.iter().map(|s| s.lock().strings.len()).sum();
        assert!(total < 40_000, "{total} strings kept");
        assert!(Arc::ptr_eq(&kept.0, &IStr::new("interned-and-kept").0));
    }
}
