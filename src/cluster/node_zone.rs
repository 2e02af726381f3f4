//! A node's zone key, as the spreading priorities group nodes by it.

use std::collections::BTreeMap;

/// `failure-domain.beta.kubernetes.io/zone`: read first by `GetZoneKey` (1.17).
pub const BETA_ZONE: &str = "failure-domain.beta.kubernetes.io/zone";
/// `failure-domain.beta.kubernetes.io/region`: read first by `GetZoneKey` (1.17).
pub const BETA_REGION: &str = "failure-domain.beta.kubernetes.io/region";
/// `topology.kubernetes.io/zone` and `topology.kubernetes.io/region`: read when the beta label is
/// absent (1.17 onwards).
pub use crate::labels::{GA_REGION, GA_ZONE};

/// Upstream's `utilnode.GetZoneKey` (1.17) as `(region, zone)`: each from the beta label when the
/// node has it (even empty), else from the GA label; `None` when both come out empty.
pub fn zone_key(labels: &BTreeMap<String, String>) -> Option<(&str, &str)> {
    let read = |beta: &str, ga: &str| labels.get(beta).or_else(|| labels.get(ga)).map_or("", String::as_str);
    let zone = read(BETA_ZONE, GA_ZONE);
    let region = read(BETA_REGION, GA_REGION);
    (!region.is_empty() || !zone.is_empty()).then_some((region, zone))
}
