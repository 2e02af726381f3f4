//! The demo cluster compiled into the binary (`serve --demo`): see `demo.yaml` for what is in it.

use crate::cluster::source::file::{parse_objects, Objects, SourceError};

/// The demo cluster's objects, as YAML.
pub const DEMO_YAML: &str = include_str!("demo.yaml");

/// The demo cluster.
pub fn demo_objects() -> Result<Objects, SourceError> {
    parse_objects("<embedded demo cluster>", DEMO_YAML)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demo_cluster_parses_and_has_what_the_readme_says() {
        let objects = demo_objects().unwrap();
        assert!(objects.skipped.is_empty());
        let s = objects.into_snapshot();
        assert_eq!(s.node_count(), 6);
        assert_eq!(s.nominated_on("node-b2").len(), 1);
        assert!(s.pod("default", "web-2").is_some());
        assert_eq!(s.node_info("node-b2").unwrap().pods.requested().milli_cpu, 3000);
        assert_eq!(s.anti_affinity_candidates(&[("app".to_string(), "frontend".to_string())].into()).len(), 1);
        assert!(s.volumes().pvc("default", "scratch").is_some());
        assert_eq!(s.services_in("default").count(), 1);
    }
}
