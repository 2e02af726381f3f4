//! MaxGCEPDVolumeCount: the GCE persistent disks on the node, counted once each (inline
//! `gcePersistentDisk`, claims bound to GCE PD PersistentVolumes, and claims that cannot be followed
//! to a volume, once per claim: see [`crate::predicates::volume_count`]), may not exceed the node's
//! limit: `attachable-volumes-gce-pd` from its allocatable, else 16. `KUBE_MAX_PD_VOLS` is not read.

use crate::framework::{AnyPredicate, ArgumentError, PredicateArgs};
use crate::predicates::volume_count::InTreeVolumeCount;
use std::sync::Arc;

pub use crate::predicates::volume_count::ERR_MAX_VOLUME_COUNT_EXCEEDED;

/// `volumeutil.GCEVolumeLimitKey`.
pub const LIMIT_KEY: &str = "attachable-volumes-gce-pd";
/// `DefaultMaxGCEPDVolumes`: GCE instances can have up to 16 PD volumes attached.
pub const DEFAULT_LIMIT: i64 = 16;

/// The registry name.
pub const NAME: &str = "MaxGCEPDVolumeCount";

/// Builds it (it takes no argument).
pub fn build(_args: &PredicateArgs<'_>) -> Result<Arc<dyn AnyPredicate>, ArgumentError> {
    Ok(Arc::new(predicate()))
}

pub fn predicate() -> InTreeVolumeCount {
    InTreeVolumeCount {
        name: NAME,
        inline: |v| v.gce_persistent_disk.as_ref().map(|s| s.pd_name.as_str()),
        persistent: |pv| pv.spec.as_ref()?.gce_persistent_disk.as_ref().map(|s| s.pd_name.as_str()),
        limit_key: LIMIT_KEY,
        default_limit: |_| DEFAULT_LIMIT,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::volumes::VolumeObjects;
    use crate::predicates::volume_count::test_objects::*;
    use crate::testing::NodeBuilder;
    use k8s_openapi::api::core::v1::Volume;

    fn pds(range: std::ops::Range<usize>) -> Vec<Volume> {
        range.map(|i| gce(&format!("pd-{i}"), false)).collect()
    }

    #[test]
    fn gce_pd_volume_counts() {
        let fail = vec![ERR_MAX_VOLUME_COUNT_EXCEEDED];
        let mut objects = VolumeObjects::default();
        objects.upsert_pv(gce_pv("pv-gce", "pd-pv"));
        objects.upsert_pv(ebs_pv("pv-ebs", "vol-1"));
        objects.upsert_pvc(pvc("bound", "pv-gce", ""));
        objects.upsert_pvc(pvc("bound-ebs", "pv-ebs", ""));
        objects.upsert_pvc(pvc("unbound", "", "gce"));
        objects.upsert_pvc(pvc("unbound-ebs", "", "ebs"));
        objects.upsert_pvc(pvc("pv-missing", "pv-gone", "gce"));
        objects.upsert_pvc(ephemeral_pvc("p-scratch", "", "gce", "uid-p"));
        objects.upsert_storage_class(class("gce", "kubernetes.io/gce-pd"));
        objects.upsert_storage_class(class("ebs", "kubernetes.io/aws-ebs"));
        let n = || NodeBuilder::new("n");
        let one = || NodeBuilder::new("n").alloc(&[(LIMIT_KEY, "1")]);
        let cases: Vec<CountCase> = vec![
            ("no volumes", n(), vec![pds(0..16)], vec![], vec![]),
            ("no GCE volumes", n(), vec![pds(0..16)], vec![ebs("vol-1")], vec![]),
            ("at the default limit", n(), vec![pds(0..15)], pds(15..16), vec![]),
            ("over the default limit", n(), vec![pds(0..16)], pds(16..17), fail.clone()),
            ("read-only mounts count too", n(), vec![pds(0..16)], vec![gce("pd-x", true)], fail.clone()),
            ("attached volume is not new", n(), vec![pds(0..16)], pds(3..4), vec![]),
            ("duplicates across pods count once", n(), vec![pds(0..10), pds(5..15)], pds(15..16), vec![]),
            ("allocatable override", n().alloc(&[(LIMIT_KEY, "20")]), vec![pds(0..18)], pds(18..20), vec![]),
            (
                "allocatable override, over",
                n().alloc(&[(LIMIT_KEY, "20")]),
                vec![pds(0..18)],
                pds(18..21),
                fail.clone(),
            ),
            ("claim bound to a GCE PV", one(), vec![pds(0..1)], vec![claim("bound")], fail.clone()),
            ("claim bound to the attached disk", one(), vec![vec![gce("pd-pv", true)]], vec![claim("bound")], vec![]),
            ("claim bound to an EBS PV", one(), vec![pds(0..1)], vec![claim("bound-ebs")], vec![]),
            ("unbound claim of a GCE class", one(), vec![pds(0..1)], vec![claim("unbound")], fail.clone()),
            // 1.12: a claim that cannot be followed to a volume counts whatever its class.
            (
                "unbound claim of an EBS class counts too",
                one(),
                vec![pds(0..1)],
                vec![claim("unbound-ebs")],
                fail.clone(),
            ),
            ("missing claim counts", one(), vec![pds(0..1)], vec![claim("gone")], fail.clone()),
            ("missing claim of a pod on the node counts", one(), vec![vec![claim("gone")]], pds(0..1), fail.clone()),
            ("missing ephemeral claim counts", one(), vec![pds(0..1)], vec![ephemeral("cache")], fail.clone()),
            ("missing PV, GCE class", one(), vec![pds(0..1)], vec![claim("pv-missing")], fail.clone()),
            ("generic ephemeral volume", one(), vec![pds(0..1)], vec![ephemeral("scratch")], fail.clone()),
            ("generic ephemeral volume, room left", n(), vec![pds(0..1)], vec![ephemeral("scratch")], vec![]),
        ];
        for (name, node, existing, new, want) in cases {
            assert_eq!(run(&predicate(), &objects, node, existing, new), want, "{name}");
        }
    }
}
