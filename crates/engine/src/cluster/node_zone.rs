//! A node's zone key, as the spreading priorities group nodes by it.

use crate::labels::{LabelKey, LabelMap};
/// `topology.kubernetes.io/zone` and `topology.kubernetes.io/region`: read when the beta label is
/// absent (1.17 onwards); the beta keys are read first.
pub use crate::labels::{BETA_REGION, BETA_ZONE, GA_REGION, GA_ZONE};

/// The four keys, by their slots in [`crate::labels::KEPT_KEYS`] (a node answers them without
/// walking its label map).
const GA_ZONE_KEY: LabelKey = LabelKey::Kept(0);
const GA_REGION_KEY: LabelKey = LabelKey::Kept(1);
const BETA_ZONE_KEY: LabelKey = LabelKey::Kept(3);
const BETA_REGION_KEY: LabelKey = LabelKey::Kept(4);

/// Upstream's `utilnode.GetZoneKey` (1.17) as `(region, zone)`: each from the beta label when the
/// node has it (even empty), else from the GA label; `None` when both come out empty.
pub fn zone_key<L: LabelMap + ?Sized>(labels: &L) -> Option<(&str, &str)> {
    let read = |beta: &LabelKey, ga: &LabelKey| labels.label_by(beta).or_else(|| labels.label_by(ga)).unwrap_or("");
    let zone = read(&BETA_ZONE_KEY, &GA_ZONE_KEY);
    let region = read(&BETA_REGION_KEY, &GA_REGION_KEY);
    (!region.is_empty() || !zone.is_empty()).then_some((region, zone))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slots_are_the_keys() {
        for (key, name) in [
            (GA_ZONE_KEY, GA_ZONE),
            (GA_REGION_KEY, GA_REGION),
            (BETA_ZONE_KEY, BETA_ZONE),
            (BETA_REGION_KEY, BETA_REGION),
        ] {
            assert_eq!(LabelKey::new(name), key, "{name}");
        }
    }
}
