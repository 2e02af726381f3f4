//! MaxEBSVolumeCount: the AWS EBS volumes on the node, counted once each (inline
//! `awsElasticBlockStore`, claims bound to EBS PersistentVolumes, and claims that cannot be followed
//! to a volume, once per claim: see [`crate::predicates::volume_count`]), may not exceed the node's
//! limit.
//!
//! The limit is `attachable-volumes-aws-ebs` from the node's allocatable, else 39, or 25 on Nitro
//! instance types (`getMaxEBSVolume`). `KUBE_MAX_PD_VOLS` is not read.

use crate::cluster::objects::Node;
use crate::framework::{AnyPredicate, ArgumentError, PredicateArgs};
use crate::predicates::volume_count::InTreeVolumeCount;
use std::sync::Arc;

pub use crate::predicates::volume_count::ERR_MAX_VOLUME_COUNT_EXCEEDED;

/// `volumeutil.EBSVolumeLimitKey`.
pub const LIMIT_KEY: &str = "attachable-volumes-aws-ebs";
/// `DefaultMaxEBSVolumes`: Amazon recommends no more than 40; the root volume takes one.
pub const DEFAULT_LIMIT: i64 = 39;
/// `DefaultMaxEBSNitroVolumeLimit`.
pub const DEFAULT_NITRO_LIMIT: i64 = 25;

/// The registry name.
pub const NAME: &str = "MaxEBSVolumeCount";

/// Builds it (it takes no argument).
pub fn build(_args: &PredicateArgs<'_>) -> Result<Arc<dyn AnyPredicate>, ArgumentError> {
    Ok(Arc::new(predicate()))
}

pub fn predicate() -> InTreeVolumeCount {
    InTreeVolumeCount {
        name: NAME,
        inline: |v| v.aws_elastic_block_store.as_ref().map(|s| s.volume_id.as_str()),
        persistent: |pv| pv.spec.as_ref()?.aws_elastic_block_store.as_ref().map(|s| s.volume_id.as_str()),
        limit_key: LIMIT_KEY,
        default_limit,
    }
}

/// `getMaxEBSVolume` of the node's instance type label (the stable one, else the beta one).
fn default_limit(node: &Node) -> i64 {
    let labels = &node.metadata.labels;
    let instance_type =
        labels.get("node.kubernetes.io/instance-type").or_else(|| labels.get("beta.kubernetes.io/instance-type"));
    if instance_type.is_some_and(|t| is_nitro(t)) {
        DEFAULT_NITRO_LIMIT
    } else {
        DEFAULT_LIMIT
    }
}

/// `EBSNitroLimitRegex` (`^[cmr]5.*|t3|z1d`): c5/m5/r5 families, or `t3` or `z1d` anywhere.
fn is_nitro(instance_type: &str) -> bool {
    let b = instance_type.as_bytes();
    let cmr5 = matches!(b, [b'c' | b'm' | b'r', b'5', ..]);
    cmr5 || instance_type.contains("t3") || instance_type.contains("z1d")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::volumes::VolumeObjects;
    use crate::predicates::volume_count::test_objects::*;
    use crate::testing::NodeBuilder;
    use k8s_openapi::api::core::v1::Volume;

    fn ebs_ids(range: std::ops::Range<usize>) -> Vec<Volume> {
        range.map(|i| ebs(&format!("vol-{i}"))).collect()
    }

    #[test]
    fn ebs_volume_counts() {
        let fail = vec![ERR_MAX_VOLUME_COUNT_EXCEEDED];
        let mut objects = VolumeObjects::default();
        objects.upsert_pv(ebs_pv("pv-ebs", "vol-pv"));
        objects.upsert_pv(gce_pv("pv-gce", "pd-1"));
        objects.upsert_pvc(pvc("bound", "pv-ebs", ""));
        objects.upsert_pvc(pvc("bound-too", "pv-ebs", ""));
        objects.upsert_pvc(pvc("bound-gce", "pv-gce", ""));
        objects.upsert_pvc(pvc("unbound", "", "ebs"));
        objects.upsert_pvc(pvc("unbound-other", "", "gce"));
        objects.upsert_pvc(pvc("unbound-no-class", "", ""));
        objects.upsert_pvc(pvc("pv-missing", "pv-gone", "ebs"));
        objects.upsert_pvc(pvc("pv-missing-other", "pv-gone", "gce"));
        objects.upsert_storage_class(class("ebs", "kubernetes.io/aws-ebs"));
        objects.upsert_storage_class(class("gce", "kubernetes.io/gce-pd"));
        let n = || NodeBuilder::new("n");
        let cases: Vec<CountCase> = vec![
            ("no volumes", n(), vec![ebs_ids(0..39)], vec![], vec![]),
            ("no EBS volumes", n(), vec![ebs_ids(0..39)], vec![gce("pd", false)], vec![]),
            ("at the default limit", n(), vec![ebs_ids(0..38)], ebs_ids(38..39), vec![]),
            ("over the default limit", n(), vec![ebs_ids(0..39)], ebs_ids(39..40), fail.clone()),
            ("new ones alone over the limit", n(), vec![], ebs_ids(0..40), fail.clone()),
            ("attached volume is not new", n(), vec![ebs_ids(0..39)], ebs_ids(0..1), vec![]),
            ("duplicates count once", n(), vec![ebs_ids(0..20), ebs_ids(0..38)], ebs_ids(38..39), vec![]),
            (
                "duplicates in the pod count once",
                n(),
                vec![ebs_ids(0..38)],
                [ebs_ids(38..39), ebs_ids(38..39)].concat(),
                vec![],
            ),
            (
                "over the limit already, attached volume: upstream still refuses",
                n().alloc(&[(LIMIT_KEY, "2")]),
                vec![ebs_ids(0..3)],
                ebs_ids(0..1),
                fail.clone(),
            ),
            (
                "allocatable raises the limit",
                n().alloc(&[(LIMIT_KEY, "50")]),
                vec![ebs_ids(0..45)],
                ebs_ids(45..50),
                vec![],
            ),
            (
                "allocatable lowers the limit",
                n().alloc(&[(LIMIT_KEY, "2")]),
                vec![ebs_ids(0..2)],
                ebs_ids(2..3),
                fail.clone(),
            ),
            ("allocatable of 0", n().alloc(&[(LIMIT_KEY, "0")]), vec![], ebs_ids(0..1), fail.clone()),
            (
                "other types' allocatable is not read",
                n().alloc(&[("attachable-volumes-gce-pd", "1")]),
                vec![],
                ebs_ids(0..2),
                vec![],
            ),
            (
                "nitro instance type",
                n().label("node.kubernetes.io/instance-type", "m5.large"),
                vec![ebs_ids(0..25)],
                ebs_ids(25..26),
                fail.clone(),
            ),
            (
                "nitro, beta label",
                n().label("beta.kubernetes.io/instance-type", "t3.micro"),
                vec![ebs_ids(0..24)],
                ebs_ids(24..25),
                vec![],
            ),
            (
                "not nitro",
                n().label("node.kubernetes.io/instance-type", "m4.large"),
                vec![ebs_ids(0..38)],
                ebs_ids(38..39),
                vec![],
            ),
            (
                "allocatable beats nitro",
                n().label("node.kubernetes.io/instance-type", "c5.xlarge").alloc(&[(LIMIT_KEY, "30")]),
                vec![ebs_ids(0..29)],
                ebs_ids(29..30),
                vec![],
            ),
            // Claims, with the limit at 1 and one EBS volume on the node.
            (
                "claim bound to an EBS PV",
                n().alloc(&[(LIMIT_KEY, "1")]),
                vec![ebs_ids(0..1)],
                vec![claim("bound")],
                fail.clone(),
            ),
            (
                "claim bound to the same PV as an inline volume",
                n().alloc(&[(LIMIT_KEY, "1")]),
                vec![vec![ebs("vol-pv")]],
                vec![claim("bound")],
                vec![],
            ),
            (
                "two claims, one PV",
                n().alloc(&[(LIMIT_KEY, "1")]),
                vec![vec![claim("bound")]],
                vec![claim("bound-too")],
                vec![],
            ),
            (
                "claim bound to a GCE PV",
                n().alloc(&[(LIMIT_KEY, "1")]),
                vec![ebs_ids(0..1)],
                vec![claim("bound-gce")],
                vec![],
            ),
            (
                "unbound claim of an EBS class",
                n().alloc(&[(LIMIT_KEY, "1")]),
                vec![ebs_ids(0..1)],
                vec![claim("unbound")],
                fail.clone(),
            ),
            (
                "same unbound claim on the node",
                n().alloc(&[(LIMIT_KEY, "1")]),
                vec![vec![claim("unbound")]],
                vec![claim("unbound")],
                vec![],
            ),
            (
                "unbound claim of another class counts too (1.12: whatever the class)",
                n().alloc(&[(LIMIT_KEY, "1")]),
                vec![ebs_ids(0..1)],
                vec![claim("unbound-other")],
                fail.clone(),
            ),
            (
                "unbound claim without class counts too",
                n().alloc(&[(LIMIT_KEY, "1")]),
                vec![ebs_ids(0..1)],
                vec![claim("unbound-no-class")],
                fail.clone(),
            ),
            (
                "missing PV, EBS class",
                n().alloc(&[(LIMIT_KEY, "1")]),
                vec![ebs_ids(0..1)],
                vec![claim("pv-missing")],
                fail.clone(),
            ),
            (
                "missing PV, other class counts too",
                n().alloc(&[(LIMIT_KEY, "1")]),
                vec![ebs_ids(0..1)],
                vec![claim("pv-missing-other")],
                fail.clone(),
            ),
            (
                "existing pod's claims count",
                n().alloc(&[(LIMIT_KEY, "1")]),
                vec![vec![claim("unbound")]],
                ebs_ids(0..1),
                fail.clone(),
            ),
            (
                "existing pod's missing claim counts",
                n().alloc(&[(LIMIT_KEY, "1")]),
                vec![vec![claim("gone")]],
                ebs_ids(0..1),
                fail.clone(),
            ),
            (
                "the incoming pod's missing claim counts",
                n().alloc(&[(LIMIT_KEY, "1")]),
                vec![ebs_ids(0..1)],
                vec![claim("gone")],
                fail.clone(),
            ),
            (
                "a missing claim on the node and in the pod counts once",
                n().alloc(&[(LIMIT_KEY, "1")]),
                vec![vec![claim("gone")]],
                vec![claim("gone")],
                vec![],
            ),
        ];
        for (name, node, existing, new, want) in cases {
            assert_eq!(run(&predicate(), &objects, node, existing, new), want, "{name}");
        }
    }

    /// upstream: TestVolumeCountConflicts (1.12 max_attachable_volume_predicate_test.go), every
    /// EBSVolumeFilterType case, with the limit from the node's allocatable (the test's second run)
    /// and its fake claims and volumes: `someEBSVol` bound to an EBS PV, `someNonEBSVol` bound to a
    /// PV of no known type, `pvcWithDeletedPV`/`anotherPVCWithDeletedPV` bound to PVs that do not
    /// exist, `unboundPVC`/`anotherUnboundPVC` unbound (none has a StorageClass), `deletedPVC` and
    /// `anotherDeletedPVC` missing.
    #[test]
    fn upstream_volume_count_conflicts_ebs() {
        let mut objects = VolumeObjects::default();
        objects.upsert_pv(ebs_pv("someEBSVol", "ebsVol"));
        objects.upsert_pv(pv("someNonEBSVol", Default::default()));
        objects.upsert_pvc(pvc("someEBSVol", "someEBSVol", ""));
        objects.upsert_pvc(pvc("someNonEBSVol", "someNonEBSVol", ""));
        objects.upsert_pvc(pvc("pvcWithDeletedPV", "pvcWithDeletedPV", ""));
        objects.upsert_pvc(pvc("anotherPVCWithDeletedPV", "anotherPVCWithDeletedPV", ""));
        objects.upsert_pvc(pvc("unboundPVC", "", ""));
        objects.upsert_pvc(pvc("anotherUnboundPVC", "", ""));

        let one_vol = || vec![ebs("ovp")];
        let two_vol = || vec![ebs("tvp1"), ebs("tvp2")];
        // splitVolsPod and nonApplicablePod also mount a hostPath, which no count reads.
        let split_vols = || vec![ebs("svp")];
        let non_applicable = Vec::new;
        let empty = Vec::new;
        let one_pvc = || vec![claim("someEBSVol")];
        let split_pvc = || vec![claim("someNonEBSVol"), claim("someEBSVol")];
        let deleted_pvc = || vec![claim("deletedPVC")];
        let two_deleted_pvc = || vec![claim("deletedPVC"), claim("anotherDeletedPVC")];
        let deleted_pv = || vec![claim("pvcWithDeletedPV")];
        let another_deleted_pv = || vec![claim("anotherPVCWithDeletedPV")];
        let unbound_pvc = || vec![claim("unboundPVC")];
        let another_unbound_pvc = || vec![claim("anotherUnboundPVC")];

        /// (test, new pod, existing pods, maxVols, fits)
        type Case = (&'static str, Vec<Volume>, Vec<Vec<Volume>>, u32, bool);
        let cases: Vec<Case> = vec![
            ("fits when node capacity >= new pod's EBS volumes", one_vol(), vec![two_vol(), one_vol()], 4, true),
            ("doesn't fit when node capacity < new pod's EBS volumes", two_vol(), vec![one_vol()], 2, false),
            ("new pod's count ignores non-EBS volumes", split_vols(), vec![two_vol()], 3, true),
            (
                "existing pods' counts ignore non-EBS volumes",
                two_vol(),
                vec![split_vols(), non_applicable(), empty()],
                3,
                true,
            ),
            (
                "new pod's count considers PVCs backed by EBS volumes",
                one_pvc(),
                vec![split_vols(), non_applicable(), empty()],
                3,
                true,
            ),
            (
                "new pod's count ignores PVCs not backed by EBS volumes",
                split_pvc(),
                vec![split_vols(), one_vol()],
                3,
                true,
            ),
            (
                "existing pods' counts considers PVCs backed by EBS volumes",
                two_vol(),
                vec![one_vol(), one_pvc()],
                3,
                false,
            ),
            (
                "already-mounted EBS volumes are always ok to allow",
                two_vol(),
                vec![one_vol(), two_vol(), one_pvc()],
                4,
                true,
            ),
            (
                "the same EBS volumes are not counted multiple times",
                split_vols(),
                vec![one_vol(), one_vol(), one_pvc()],
                3,
                true,
            ),
            (
                "pod with missing PVC is counted towards the PV limit",
                one_pvc(),
                vec![one_vol(), deleted_pvc()],
                2,
                false,
            ),
            (
                "pod with missing PVC is counted towards the PV limit",
                one_pvc(),
                vec![one_vol(), deleted_pvc()],
                3,
                true,
            ),
            (
                "pod with missing two PVCs is counted towards the PV limit twice",
                one_pvc(),
                vec![one_vol(), two_deleted_pvc()],
                3,
                false,
            ),
            ("pod with missing PV is counted towards the PV limit", one_pvc(), vec![one_vol(), deleted_pv()], 2, false),
            ("pod with missing PV is counted towards the PV limit", one_pvc(), vec![one_vol(), deleted_pv()], 3, true),
            (
                "two pods missing the same PV are counted towards the PV limit only once",
                deleted_pv(),
                vec![one_vol(), deleted_pv()],
                2,
                true,
            ),
            (
                "two pods missing different PVs are counted towards the PV limit twice",
                another_deleted_pv(),
                vec![one_vol(), deleted_pv()],
                2,
                false,
            ),
            (
                "pod with unbound PVC is counted towards the PV limit",
                one_pvc(),
                vec![one_vol(), unbound_pvc()],
                2,
                false,
            ),
            (
                "pod with unbound PVC is counted towards the PV limit",
                one_pvc(),
                vec![one_vol(), unbound_pvc()],
                3,
                true,
            ),
            (
                "the same unbound PVC in multiple pods is counted towards the PV limit only once",
                unbound_pvc(),
                vec![one_vol(), unbound_pvc()],
                2,
                true,
            ),
            (
                "two different unbound PVCs are counted towards the PV limit as two volumes",
                another_unbound_pvc(),
                vec![one_vol(), unbound_pvc()],
                2,
                false,
            ),
        ];
        for (name, new, existing, max_vols, fits) in cases {
            let limit = max_vols.to_string();
            let node = NodeBuilder::new("n").alloc(&[(LIMIT_KEY, limit.as_str())]);
            let want = if fits { vec![] } else { vec![ERR_MAX_VOLUME_COUNT_EXCEEDED] };
            assert_eq!(run(&predicate(), &objects, node, existing, new), want, "{name} (maxVols {max_vols})");
        }
    }

    #[test]
    fn nitro_instance_types() {
        for (t, want) in
            [("m5.large", true), ("c5d.2xlarge", true), ("r5a.xlarge", true), ("t3.micro", true), ("t3a.nano", true)]
                .into_iter()
                .chain([
                    ("z1d.large", true),
                    ("m4.large", false),
                    ("t2.micro", false),
                    ("a1.medium", false),
                    ("", false),
                ])
        {
            assert_eq!(is_nitro(t), want, "{t}");
        }
    }
}
