//! MaxAzureDiskVolumeCount: the Azure disks on the node, counted once each by `diskName` (inline
//! `azureDisk`, claims bound to Azure Disk PersistentVolumes, and claims that cannot be followed to
//! a volume, once per claim: see [`crate::predicates::volume_count`]), may not exceed the node's limit:
//! `attachable-volumes-azure-disk` from its allocatable, else 16. `KUBE_MAX_PD_VOLS` is not read.

use crate::framework::{AnyPredicate, ArgumentError, PredicateArgs};
use crate::predicates::volume_count::InTreeVolumeCount;
use std::sync::Arc;

pub use crate::predicates::volume_count::ERR_MAX_VOLUME_COUNT_EXCEEDED;

/// `volumeutil.AzureVolumeLimitKey`.
pub const LIMIT_KEY: &str = "attachable-volumes-azure-disk";
/// `DefaultMaxAzureDiskVolumes`.
pub const DEFAULT_LIMIT: i64 = 16;

/// The registry name.
pub const NAME: &str = "MaxAzureDiskVolumeCount";

/// Builds it (it takes no argument).
pub fn build(_args: &PredicateArgs<'_>) -> Result<Arc<dyn AnyPredicate>, ArgumentError> {
    Ok(Arc::new(predicate()))
}

pub fn predicate() -> InTreeVolumeCount {
    InTreeVolumeCount {
        name: NAME,
        inline: |v| v.azure_disk.as_ref().map(|s| s.disk_name.as_str()),
        persistent: |pv| pv.spec.as_ref()?.azure_disk.as_ref().map(|s| s.disk_name.as_str()),
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

    fn disks(range: std::ops::Range<usize>) -> Vec<Volume> {
        range.map(|i| azure(&format!("disk-{i}"))).collect()
    }

    #[test]
    fn azure_disk_volume_counts() {
        let fail = vec![ERR_MAX_VOLUME_COUNT_EXCEEDED];
        let mut objects = VolumeObjects::default();
        objects.upsert_pv(azure_pv("pv-azure", "disk-pv"));
        objects.upsert_pvc(pvc("bound", "pv-azure", ""));
        objects.upsert_pvc(pvc("unbound", "", "azure"));
        objects.upsert_pvc(pvc("unbound-csi", "", "azure-csi"));
        objects.upsert_storage_class(class("azure", "kubernetes.io/azure-disk"));
        objects.upsert_storage_class(class("azure-csi", "disk.csi.azure.com"));
        let n = || NodeBuilder::new("n");
        let one = || NodeBuilder::new("n").alloc(&[(LIMIT_KEY, "1")]);
        let cases: Vec<CountCase> = vec![
            ("no Azure volumes", n(), vec![disks(0..16)], vec![gce("pd", false)], vec![]),
            ("at the default limit", n(), vec![disks(0..15)], disks(15..16), vec![]),
            ("over the default limit", n(), vec![disks(0..16)], disks(16..17), fail.clone()),
            ("attached volume is not new", n(), vec![disks(0..16)], disks(0..1), vec![]),
            ("duplicates count once", n(), vec![disks(0..8), disks(0..15)], disks(15..16), vec![]),
            ("allocatable override", n().alloc(&[(LIMIT_KEY, "8")]), vec![disks(0..8)], disks(8..9), fail.clone()),
            ("claim bound to an Azure PV", one(), vec![disks(0..1)], vec![claim("bound")], fail.clone()),
            ("claim bound to the attached disk", one(), vec![vec![azure("disk-pv")]], vec![claim("bound")], vec![]),
            ("unbound claim of an Azure class", one(), vec![disks(0..1)], vec![claim("unbound")], fail.clone()),
            // 1.12: a claim that cannot be followed to a volume counts whatever its class.
            (
                "unbound claim of a CSI class counts too",
                one(),
                vec![disks(0..1)],
                vec![claim("unbound-csi")],
                fail.clone(),
            ),
        ];
        for (name, node, existing, new, want) in cases {
            assert_eq!(run(&predicate(), &objects, node, existing, new), want, "{name}");
        }
    }
}
