//! MaxCSIVolumeCount: per CSI driver, the volumes on the node, counted once each, may not exceed
//! the driver's limit on the node.
//!
//! Upstream: `CSIMaxVolumeLimitChecker` in pkg/scheduler/algorithm/predicates/csi_volume_predicate.go
//! (Policy era, registered there as `MaxCSIVolumeCountPred`), as of 1.15-1.17; generic ephemeral
//! volumes as pkg/scheduler/framework/plugins/nodevolumelimits/csi.go (1.22) reads them.
//!
//! - Volumes are counted through claims only: a `persistentVolumeClaim`, or the `<pod>-<volume>`
//!   claim of a generic ephemeral volume. The claim's PersistentVolume gives `spec.csi.driver` and
//!   `volumeHandle`; an unbound claim, or one whose PersistentVolume is missing, counts once
//!   against its StorageClass's provisioner (the class from the beta annotation
//!   `volume.beta.kubernetes.io/storage-class`, else `storageClassName`; no class or a missing
//!   one: not counted).
//! - A claim that does not exist is not counted, for the incoming pod as for the pods on the node:
//!   without it there is no driver to count it against ("Unable to look up PVC info", continue).
//!   Every Policy-era release did so (1.12-1.14 counted only bound claims with their
//!   PersistentVolume; 1.15 added the StorageClass fallback above); unlike the in-tree counts, the
//!   1.12 "count the PV towards the PV limit" rule never applied here, and the 1.22 rule that the
//!   incoming pod's claims must exist is not followed either.
//! - Inline `csi` volumes (CSI ephemeral volumes) are not counted, as upstream: csi.go counts
//!   inline volumes only when they are in-tree volumes migrated to CSI.
//! - CSI migration is taken to be off: in-tree PersistentVolumes, inline in-tree volumes and
//!   claims of in-tree provisioners (`kubernetes.io/aws-ebs`, ...) are left to the in-tree
//!   predicates.
//! - A driver's limit is its CSINode `spec.drivers[].allocatable.count`, else the node's
//!   allocatable `attachable-volumes-csi-<driver>` (`GetCSIAttachLimitKey`); a driver without
//!   one is not checked.

use std::borrow::Cow;

use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use k8s_openapi::api::storage::v1::CSINode;

use crate::cluster::objects::{Node, Pod};
use crate::cluster::volumes::VolumeObjects;
use crate::cluster::NodeInfo;
use crate::framework::PodContext;
use crate::framework::{ClusterView, Failures, Predicate, Reason};
use crate::predicates::volume_count::Volumes;
use crate::predicates::volume_count::{allocatable_limit, bound_volume, claim_of, count_unique, ClaimRef, VolumeId};

use crate::framework::{AnyPredicate, ArgumentError, PredicateArgs};
pub use crate::predicates::volume_count::ERR_MAX_VOLUME_COUNT_EXCEEDED;
use std::sync::Arc;

/// The registry name.
pub const NAME: &str = "MaxCSIVolumeCount";

/// Builds it (it takes no argument).
pub fn build(_args: &PredicateArgs<'_>) -> Result<Arc<dyn AnyPredicate>, ArgumentError> {
    Ok(Arc::new(MaxCSIVolumeCount))
}

/// `volumeutil.CSIAttachLimitPrefix`.
pub const CSI_LIMIT_PREFIX: &str = "attachable-volumes-csi-";
/// The prefix every attachable-volume limit in a node's allocatable has.
const ATTACHABLE_PREFIX: &str = "attachable-volumes-";
/// `ResourceNameLengthLimit`: longer limit keys are shortened with a hash of the driver name.
const RESOURCE_NAME_LENGTH_LIMIT: usize = 63;

/// The in-tree plugins that csi-translation-lib can migrate (`IsMigratableIntreePluginByName`):
/// with migration off, their StorageClasses are not CSI drivers.
const MIGRATABLE_IN_TREE_PLUGINS: &[&str] = &[
    "kubernetes.io/aws-ebs",
    "kubernetes.io/gce-pd",
    "kubernetes.io/azure-disk",
    "kubernetes.io/azure-file",
    "kubernetes.io/cinder",
    "kubernetes.io/vsphere-volume",
    "kubernetes.io/portworx-volume",
    "kubernetes.io/rbd",
];

#[derive(Debug)]
pub struct MaxCSIVolumeCount;

/// A CSI volume: its driver and its id.
type CsiVolume<'a> = (&'a str, VolumeId<'a>);

/// `filterAttachableVolumes`: pushes the pod's CSI volumes (duplicates included).
fn csi_volumes<'a>(objects: &'a VolumeObjects, pod: &'a Pod, out: &mut Vec<CsiVolume<'a>>) -> Result<(), Reason> {
    for volume in &pod.spec.volumes {
        // A missing claim names no driver: not counted.
        let ClaimRef::Found(pvc) = claim_of(objects, pod, volume)? else { continue };
        if let Some(v) = driver_info(objects, pod, pvc) {
            out.push(v);
        }
    }
    Ok(())
}

/// `getCSIDriverInfo`: the driver and volume handle of a claim's PersistentVolume, or its
/// StorageClass's provisioner when it is unbound or its PersistentVolume is missing.
fn driver_info<'a>(objects: &'a VolumeObjects, pod: &'a Pod, pvc: &'a PersistentVolumeClaim) -> Option<CsiVolume<'a>> {
    let pv_name = bound_volume(pvc);
    let pv = if pv_name.is_empty() { None } else { objects.pv(pv_name) };
    let Some(pv) = pv else { return driver_info_from_class(objects, pod, pvc) };
    // A PersistentVolume that is not CSI is counted only once migrated to CSI (off here).
    let csi = pv.spec.as_ref()?.csi.as_ref()?;
    (!csi.driver.is_empty() && !csi.volume_handle.is_empty())
        .then_some((csi.driver.as_str(), VolumeId::Volume(csi.volume_handle.as_str())))
}

/// `getCSIDriverInfoFromSC`: the claim's StorageClass's provisioner and a placeholder id for the
/// claim. Without a class (immediate binding: bound before scheduling) it is not counted.
fn driver_info_from_class<'a>(
    objects: &'a VolumeObjects,
    pod: &'a Pod,
    pvc: &'a PersistentVolumeClaim,
) -> Option<CsiVolume<'a>> {
    let class = claim_class(pvc);
    if class.is_empty() {
        return None;
    }
    let provisioner = objects.storage_class(class)?.provisioner.as_str();
    if provisioner.is_empty() || MIGRATABLE_IN_TREE_PLUGINS.contains(&provisioner) {
        return None;
    }
    Some((provisioner, VolumeId::claim(pod, Cow::Borrowed(pvc.metadata.name.as_deref().unwrap_or("")))))
}

/// `GetPersistentVolumeClaimClass`: the beta annotation first, then `spec.storageClassName`.
fn claim_class(pvc: &PersistentVolumeClaim) -> &str {
    let annotation = pvc.metadata.annotations.as_ref().and_then(|a| a.get("volume.beta.kubernetes.io/storage-class"));
    match annotation {
        Some(class) => class,
        None => pvc.spec.as_ref().and_then(|s| s.storage_class_name.as_deref()).unwrap_or(""),
    }
}

/// Whether the node has any volume limit (`getVolumeLimits` is not empty): without one, every pod
/// fits.
fn has_any_limit(node: &Node, csi_node: Option<&CSINode>) -> bool {
    node.status.allocatable.keys().any(|k| k.starts_with(ATTACHABLE_PREFIX))
        || csi_node.is_some_and(|c| c.spec.drivers.iter().any(|d| driver_count(d).is_some()))
}

fn driver_count(d: &k8s_openapi::api::storage::v1::CSINodeDriver) -> Option<i64> {
    d.allocatable.as_ref().and_then(|a| a.count).map(i64::from)
}

/// A driver's limit on a node: the CSINode's count (the last entry for the driver that has one,
/// as upstream fills its map), else the node's allocatable `GetCSIAttachLimitKey(driver)`.
pub fn driver_limit(node: &Node, csi_node: Option<&CSINode>, driver: &str) -> Option<i64> {
    let from_csi_node =
        csi_node.and_then(|c| c.spec.drivers.iter().rev().filter(|d| d.name == driver).find_map(driver_count));
    from_csi_node.or_else(|| {
        let key = node.status.allocatable.keys().find(|k| is_csi_limit_key(k, driver))?;
        allocatable_limit(node, key)
    })
}

/// Whether `key` is `GetCSIAttachLimitKey(driver)`: the prefix and the driver name, or, when that
/// would reach 63 characters, the prefix, the first 23 bytes of the name and 16 hex digits of its
/// SHA-1. Compares without building the key.
fn is_csi_limit_key(key: &str, driver: &str) -> bool {
    let Some(rest) = key.strip_prefix(CSI_LIMIT_PREFIX) else { return false };
    if CSI_LIMIT_PREFIX.len() + driver.len() < RESOURCE_NAME_LENGTH_LIMIT {
        return rest == driver;
    }
    let (Some(head), Some((rest_head, rest_hash))) =
        (driver.as_bytes().get(..23), rest.as_bytes().split_at_checked(23))
    else {
        return false;
    };
    rest_head == head && rest_hash == hex16(&sha1(driver.as_bytes()))
}

/// `GetCSIAttachLimitKey`, for messages and tests.
pub fn csi_limit_key(driver: &str) -> Cow<'_, str> {
    if CSI_LIMIT_PREFIX.len() + driver.len() < RESOURCE_NAME_LENGTH_LIMIT {
        return Cow::Owned(format!("{CSI_LIMIT_PREFIX}{driver}"));
    }
    let head = String::from_utf8_lossy(driver.as_bytes().get(..23).unwrap_or_default());
    let hash = hex16(&sha1(driver.as_bytes()));
    Cow::Owned(format!("{CSI_LIMIT_PREFIX}{head}{}", String::from_utf8_lossy(&hash)))
}

/// The first 8 bytes of a digest as 16 lowercase hex digits.
fn hex16(digest: &[u8; 20]) -> [u8; 16] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = [0u8; 16];
    for (pair, byte) in out.chunks_exact_mut(2).zip(digest) {
        pair[0] = HEX[usize::from(byte >> 4)];
        pair[1] = HEX[usize::from(byte & 0xf)];
    }
    out
}

/// SHA-1 (as upstream uses for driver names too long for a limit key).
fn sha1(data: &[u8]) -> [u8; 20] {
    use sha1::{Digest, Sha1};
    Sha1::digest(data).into()
}

impl Predicate for MaxCSIVolumeCount {
    type State = Volumes;

    fn name(&self) -> &str {
        NAME
    }

    /// Over the limit is resolvable; a claim that cannot be used is not.
    fn failures(&self) -> Failures {
        Failures::MaybeResolvable
    }

    fn prepare(&self, _pod: &PodContext, view: &ClusterView<'_>) -> Volumes {
        Volumes::of(view)
    }

    fn check(&self, ctx: &PodContext, volumes: &Volumes, node: &NodeInfo, reasons: &mut Vec<Reason>) {
        let pod = &ctx.pod;
        if pod.spec.volumes.is_empty() {
            return;
        }
        let mut new = Vec::new();
        if let Err(reason) = csi_volumes(&volumes.0, pod, &mut new) {
            reasons.push(reason);
            return;
        }
        if new.is_empty() {
            return;
        }
        let csi_node = volumes.0.csi_node(node.name()).map(|c| &**c);
        if !has_any_limit(node.node(), csi_node) {
            return;
        }
        let mut existing = Vec::new();
        for p in node.pods.pods() {
            if let Err(reason) = csi_volumes(&volumes.0, &p.pod, &mut existing) {
                reasons.push(reason);
                return;
            }
        }
        count_unique(&mut existing, &mut new);
        // Both lists are sorted by driver: walk the new volumes driver by driver. Only drivers
        // with volumes not yet on the node are checked.
        let mut rest = new.as_slice();
        while let Some(&(driver, _)) = rest.first() {
            let split = rest.partition_point(|(d, _)| *d == driver);
            let (group, tail) = rest.split_at(split);
            rest = tail;
            let fresh = group.iter().filter(|v| existing.binary_search(v).is_err()).count();
            if fresh == 0 {
                continue;
            }
            let Some(limit) = driver_limit(node.node(), csi_node, driver) else { continue };
            let start = existing.partition_point(|(d, _)| *d < driver);
            let attached = existing[start..].partition_point(|(d, _)| *d == driver);
            if (attached + fresh) as i64 > limit {
                reasons.push(ERR_MAX_VOLUME_COUNT_EXCEEDED);
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predicates::volume_count::test_objects::*;
    use crate::testing::NodeBuilder;
    use k8s_openapi::api::core::v1::Volume;

    const EBS_CSI: &str = "ebs.csi.aws.com";
    const GCE_CSI: &str = "pd.csi.storage.gke.io";

    fn objects() -> VolumeObjects {
        let mut o = VolumeObjects::default();
        for i in 0..10 {
            o.upsert_pv(csi_pv(&format!("ebs-{i}"), EBS_CSI, &format!("vol-{i}")));
            o.upsert_pvc(pvc(&format!("ebs-{i}"), &format!("ebs-{i}"), ""));
            o.upsert_pv(csi_pv(&format!("gce-{i}"), GCE_CSI, &format!("pd-{i}")));
            o.upsert_pvc(pvc(&format!("gce-{i}"), &format!("gce-{i}"), ""));
        }
        // Another claim of the PersistentVolume of ebs-0.
        o.upsert_pvc(pvc("ebs-0-again", "ebs-0", ""));
        o.upsert_pv(ebs_pv("in-tree", "vol-in-tree"));
        o.upsert_pvc(pvc("in-tree", "in-tree", ""));
        o.upsert_pvc(pvc("unbound", "", "ebs-csi"));
        o.upsert_pvc(pvc("unbound-2", "", "ebs-csi"));
        o.upsert_pvc(pvc("unbound-in-tree", "", "ebs-in-tree"));
        o.upsert_pvc(pvc("unbound-no-class", "", ""));
        o.upsert_pvc(pvc("unbound-missing-class", "", "gone"));
        o.upsert_pvc(pvc("pv-missing", "pv-gone", "ebs-csi"));
        let mut annotated = pvc("unbound-annotated", "", "");
        annotated.metadata.annotations =
            Some([("volume.beta.kubernetes.io/storage-class".to_string(), "ebs-csi".to_string())].into());
        o.upsert_pvc(annotated);
        o.upsert_pvc(ephemeral_pvc("p-scratch", "", "ebs-csi", "uid-p"));
        o.upsert_storage_class(class("ebs-csi", EBS_CSI));
        o.upsert_storage_class(class("ebs-in-tree", "kubernetes.io/aws-ebs"));
        o
    }

    fn claims(prefix: &str, range: std::ops::Range<usize>) -> Vec<Volume> {
        range.map(|i| claim(&format!("{prefix}-{i}"))).collect()
    }

    fn check(objects: &VolumeObjects, node: NodeBuilder, existing: Vec<Vec<Volume>>, new: Vec<Volume>) -> Vec<Reason> {
        run(&MaxCSIVolumeCount, objects, node, existing, new)
    }

    /// (name, volume objects, node, the volumes of each pod on the node, the volumes of the pod, want)
    type CsiCase = (&'static str, VolumeObjects, NodeBuilder, Vec<Vec<Volume>>, Vec<Volume>, Vec<Reason>);

    #[test]
    fn csi_volume_counts() {
        let fail = vec![ERR_MAX_VOLUME_COUNT_EXCEEDED];
        let with_limits = |ebs: i32, gce: i32| {
            let mut o = objects();
            o.upsert_csi_node(csi_node("n", &[(EBS_CSI, Some(ebs)), (GCE_CSI, Some(gce))]));
            o
        };
        let limited = with_limits(2, 2);
        let n = || NodeBuilder::new("n");
        let cases: Vec<CsiCase> = vec![
            ("no limits known: no check", objects(), n(), vec![claims("ebs", 0..9)], claims("ebs", 9..10), vec![]),
            ("at the CSINode limit", limited.clone(), n(), vec![claims("ebs", 0..1)], claims("ebs", 1..2), vec![]),
            (
                "over the CSINode limit",
                limited.clone(),
                n(),
                vec![claims("ebs", 0..2)],
                claims("ebs", 2..3),
                fail.clone(),
            ),
            ("new ones alone over the limit", limited.clone(), n(), vec![], claims("ebs", 0..3), fail.clone()),
            ("limits are per driver", limited.clone(), n(), vec![claims("ebs", 0..2)], claims("gce", 0..2), vec![]),
            (
                "other driver over",
                limited.clone(),
                n(),
                vec![claims("ebs", 0..2), claims("gce", 0..2)],
                claims("gce", 2..3),
                fail.clone(),
            ),
            (
                "attached volume is not new",
                limited.clone(),
                n(),
                vec![claims("ebs", 0..2)],
                claims("ebs", 1..2),
                vec![],
            ),
            (
                "over the limit already, attached volume: fits (only new volumes are checked)",
                with_limits(1, 1),
                n(),
                vec![claims("ebs", 0..3)],
                claims("ebs", 0..1),
                vec![],
            ),
            (
                "two claims of one PV count once",
                limited.clone(),
                n(),
                vec![claims("ebs", 0..2)],
                vec![claim("ebs-0-again")],
                vec![],
            ),
            (
                "duplicates across pods count once",
                limited.clone(),
                n(),
                vec![claims("ebs", 0..1), claims("ebs", 0..1)],
                claims("ebs", 1..2),
                vec![],
            ),
            (
                "unbound claim counts by provisioner",
                limited.clone(),
                n(),
                vec![claims("ebs", 0..2)],
                vec![claim("unbound")],
                fail.clone(),
            ),
            (
                "unbound claim by the beta annotation",
                limited.clone(),
                n(),
                vec![claims("ebs", 0..2)],
                vec![claim("unbound-annotated")],
                fail.clone(),
            ),
            (
                "the same unbound claim counts once",
                limited.clone(),
                n(),
                vec![vec![claim("unbound"), claim("ebs-0")]],
                vec![claim("unbound")],
                vec![],
            ),
            (
                "two unbound claims count twice",
                limited.clone(),
                n(),
                vec![vec![claim("unbound"), claim("ebs-0")]],
                vec![claim("unbound-2")],
                fail.clone(),
            ),
            (
                "missing PV counts by provisioner",
                limited.clone(),
                n(),
                vec![claims("ebs", 0..2)],
                vec![claim("pv-missing")],
                fail.clone(),
            ),
            (
                "unbound claim of an in-tree class",
                limited.clone(),
                n(),
                vec![claims("ebs", 0..2)],
                vec![claim("unbound-in-tree")],
                vec![],
            ),
            (
                "unbound claim without class",
                limited.clone(),
                n(),
                vec![claims("ebs", 0..2)],
                vec![claim("unbound-no-class")],
                vec![],
            ),
            (
                "unbound claim of a missing class",
                limited.clone(),
                n(),
                vec![claims("ebs", 0..2)],
                vec![claim("unbound-missing-class")],
                vec![],
            ),
            ("in-tree PV is not CSI", limited.clone(), n(), vec![claims("ebs", 0..2)], vec![claim("in-tree")], vec![]),
            (
                "inline CSI volume is not counted",
                limited.clone(),
                n(),
                vec![claims("ebs", 0..2)],
                vec![inline_csi(EBS_CSI)],
                vec![],
            ),
            (
                "inline in-tree volume is not counted",
                limited.clone(),
                n(),
                vec![claims("ebs", 0..2)],
                vec![ebs("vol-x")],
                vec![],
            ),
            (
                "generic ephemeral volume",
                limited.clone(),
                n(),
                vec![claims("ebs", 0..2)],
                vec![ephemeral("scratch")],
                fail.clone(),
            ),
            (
                "generic ephemeral volume, room left",
                limited.clone(),
                n(),
                vec![claims("ebs", 0..1)],
                vec![ephemeral("scratch")],
                vec![],
            ),
            (
                "existing pod's missing claim is not counted",
                limited.clone(),
                n(),
                vec![vec![claim("gone")], claims("ebs", 0..1)],
                claims("ebs", 1..2),
                vec![],
            ),
            // Limits from the node's allocatable.
            (
                "allocatable limit",
                objects(),
                n().alloc(&[("attachable-volumes-csi-ebs.csi.aws.com", "2")]),
                vec![claims("ebs", 0..2)],
                claims("ebs", 2..3),
                fail.clone(),
            ),
            (
                "allocatable limit, room left",
                objects(),
                n().alloc(&[("attachable-volumes-csi-ebs.csi.aws.com", "3")]),
                vec![claims("ebs", 0..2)],
                claims("ebs", 2..3),
                vec![],
            ),
            (
                "allocatable limit of another driver",
                objects(),
                n().alloc(&[("attachable-volumes-csi-other", "0")]),
                vec![claims("ebs", 0..2)],
                claims("ebs", 2..3),
                vec![],
            ),
            (
                "CSINode count beats allocatable",
                with_limits(5, 5),
                n().alloc(&[("attachable-volumes-csi-ebs.csi.aws.com", "2")]),
                vec![claims("ebs", 0..2)],
                claims("ebs", 2..3),
                vec![],
            ),
        ];
        for (name, objects, node, existing, new, want) in cases {
            assert_eq!(check(&objects, node, existing, new), want, "{name}");
        }
    }

    #[test]
    fn csi_node_without_count_falls_back_to_allocatable() {
        let mut o = objects();
        o.upsert_csi_node(csi_node("n", &[(EBS_CSI, None)]));
        let node = NodeBuilder::new("n").alloc(&[("attachable-volumes-csi-ebs.csi.aws.com", "1")]);
        assert_eq!(
            check(&o, node, vec![claims("ebs", 0..1)], claims("ebs", 1..2)),
            vec![ERR_MAX_VOLUME_COUNT_EXCEEDED]
        );
        let none = NodeBuilder::new("n");
        assert!(check(&o, none, vec![claims("ebs", 0..1)], claims("ebs", 1..2)).is_empty());
    }

    /// csi_volume_predicate.go (1.15-1.17) `filterAttachableVolumes`: a claim that cannot be
    /// looked up is skipped, for the incoming pod as for the pods on the node.
    #[test]
    fn missing_claims_are_not_counted_and_ephemeral_ones_belong_to_the_pod() {
        let o = objects();
        let tight = || NodeBuilder::new("n").alloc(&[(csi_limit_key("ebs.csi.aws.com").as_ref(), "1")]);
        assert_eq!(check(&o, tight(), vec![claims("ebs", 0..1)], vec![claim("gone")]), vec![]);
        assert_eq!(check(&o, tight(), vec![vec![claim("gone")]], claims("ebs", 0..1)), vec![]);
        assert_eq!(
            check(&o, tight(), vec![claims("ebs", 0..1)], claims("ebs", 1..2)),
            vec![ERR_MAX_VOLUME_COUNT_EXCEEDED],
            "the same node refuses a claim it can count"
        );

        let mut o = objects();
        o.upsert_pvc(ephemeral_pvc("p-cache", "", "ebs-csi", "uid-someone-else"));
        let got = check(&o, NodeBuilder::new("n"), vec![], vec![ephemeral("cache")]);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].message, "PVC default/p-cache was not created for pod default/p (pod is not owner)");
    }

    #[test]
    fn long_driver_names_use_a_hashed_limit_key() {
        assert_eq!(hex16(&sha1(b"abc")), *b"a9993e364706816a");
        assert_eq!(hex16(&sha1(b"")), *b"da39a3ee5e6b4b0d");
        let long = [b'a'; 1000];
        assert_eq!(hex16(&sha1(&long)), *b"291e9a6c66994949");
        // Padding boundaries: the length fits in the last block, just does not, a whole block.
        assert_eq!(hex16(&sha1(&long[..55])), *b"c1c8bbdc22796e28");
        assert_eq!(hex16(&sha1(&long[..56])), *b"c2db330f6083854c");
        assert_eq!(hex16(&sha1(&long[..64])), *b"0098ba824b5c1642");
        assert_eq!(csi_limit_key(EBS_CSI), "attachable-volumes-csi-ebs.csi.aws.com");

        let driver = "a-very-long-csi-driver-name.storage.example.com"; // 47 characters
        let key = csi_limit_key(driver);
        assert_eq!(key, "attachable-volumes-csi-a-very-long-csi-driver-86bf5f46bc6f1680");
        assert!(is_csi_limit_key(&key, driver));
        assert!(!is_csi_limit_key(&key, "a-very-long-csi-driver-name.storage.example.org"));
        assert!(!is_csi_limit_key(&format!("{CSI_LIMIT_PREFIX}{driver}"), driver));

        let mut o = VolumeObjects::default();
        o.upsert_pv(csi_pv("long", driver, "h1"));
        o.upsert_pvc(pvc("long", "long", ""));
        o.upsert_pv(csi_pv("long-2", driver, "h2"));
        o.upsert_pvc(pvc("long-2", "long-2", ""));
        let node = NodeBuilder::new("n").alloc(&[(key.as_ref(), "1")]);
        assert_eq!(
            check(&o, node, vec![vec![claim("long")]], vec![claim("long-2")]),
            vec![ERR_MAX_VOLUME_COUNT_EXCEEDED]
        );
    }
}
