//! The hash maps of the request path and the cluster model, with foldhash instead of std's SipHash.
//!
//! Node names, label keys and values are hashed on every request (5,000 node lookups for a
//! `NodeNames` filter, one per candidate pod of an affinity term), and SipHash was a tenth of a
//! filter's time. foldhash is seeded per process, so keys chosen by a cluster user cannot be
//! precomputed to collide; it is not a cryptographic hash, which these maps do not need.

/// `std::collections::HashMap` with foldhash. Build with `HashMap::default()`.
pub type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// `std::collections::HashSet` with foldhash. Build with `HashSet::default()`.
pub type HashSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;

/// `imbl::HashMap` (persistent: clones share structure) with foldhash.
pub type PersistentHashMap<K, V> =
    imbl::GenericHashMap<K, V, foldhash::fast::RandomState, imbl::shared_ptr::DefaultSharedPtr>;
