//! NoDiskConflict: a volume of the pod may not be one that a pod on the node already mounts, when
//! the two mounts cannot share it (upstream `isVolumeConflict`, in predicates.go of the Policy era
//! and volumerestrictions today):
//!
//! - GCE PD: the same `pdName`, unless both mounts are read-only;
//! - AWS EBS: the same `volumeID`, always;
//! - iSCSI: the same `iqn` (the LUN and portals are not compared, as upstream), unless both mounts
//!   are read-only;
//! - Ceph RBD: a shared monitor, the same pool (`rbd` when unset, the API default) and the same
//!   image, unless both mounts are read-only.
//!
//! Only inline volumes are compared, as upstream; claims are not resolved.

use k8s_openapi::api::core::v1::{RBDVolumeSource, Volume};

use crate::cluster::NodeInfo;
use crate::framework::PodContext;
use crate::framework::{AnyPredicate, ArgumentError, PredicateArgs};
use crate::framework::{Cause, ClusterView, Failures, Predicate, Reason, ReasonKind};
use std::sync::Arc;

/// The registry name.
pub const NAME: &str = "NoDiskConflict";

/// Builds it (it takes no argument).
pub fn build(_args: &PredicateArgs<'_>) -> Result<Arc<dyn AnyPredicate>, ArgumentError> {
    Ok(Arc::new(NoDiskConflict))
}

pub const ERR_DISK_CONFLICT: Reason =
    Reason::of(Cause::DiskConflict, ReasonKind::Resolvable, "node(s) had no available disk");

#[derive(Debug)]
pub struct NoDiskConflict;

/// The fast path of `isVolumeConflict`: only these volume types can conflict.
fn may_conflict(v: &Volume) -> bool {
    v.gce_persistent_disk.is_some() || v.aws_elastic_block_store.is_some() || v.rbd.is_some() || v.iscsi.is_some()
}

fn both_read_only(a: Option<bool>, b: Option<bool>) -> bool {
    a.unwrap_or(false) && b.unwrap_or(false)
}

fn rbd_pool(r: &RBDVolumeSource) -> &str {
    r.pool.as_deref().unwrap_or("rbd")
}

/// Whether mounting `v` conflicts with `existing`, a volume of a pod on the node.
pub fn is_volume_conflict(v: &Volume, existing: &Volume) -> bool {
    if let (Some(d), Some(e)) = (&v.gce_persistent_disk, &existing.gce_persistent_disk) {
        if d.pd_name == e.pd_name && !both_read_only(d.read_only, e.read_only) {
            return true;
        }
    }
    if let (Some(d), Some(e)) = (&v.aws_elastic_block_store, &existing.aws_elastic_block_store) {
        if d.volume_id == e.volume_id {
            return true;
        }
    }
    if let (Some(d), Some(e)) = (&v.iscsi, &existing.iscsi) {
        if d.iqn == e.iqn && !both_read_only(d.read_only, e.read_only) {
            return true;
        }
    }
    if let (Some(d), Some(e)) = (&v.rbd, &existing.rbd) {
        let shared_monitor = d.monitors.iter().any(|m| e.monitors.contains(m));
        if shared_monitor
            && rbd_pool(d) == rbd_pool(e)
            && d.image == e.image
            && !both_read_only(d.read_only, e.read_only)
        {
            return true;
        }
    }
    false
}

impl Predicate for NoDiskConflict {
    type State = ();

    fn name(&self) -> &str {
        NAME
    }

    fn failures(&self) -> Failures {
        Failures::MaybeResolvable
    }

    fn prepare(&self, _pod: &PodContext, _view: &ClusterView<'_>) {}

    fn check(&self, ctx: &PodContext, _state: &(), node: &NodeInfo, reasons: &mut Vec<Reason>) {
        for v in ctx.pod.spec.volumes.iter().filter(|v| may_conflict(v)) {
            let conflict = node
                .pods
                .pods()
                .iter()
                .any(|p| p.pod.spec.volumes.iter().any(|existing| is_volume_conflict(v, existing)));
            if conflict {
                reasons.push(ERR_DISK_CONFLICT);
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predicates::reasons_of;
    use crate::predicates::volume_count::test_objects::{claim, ebs, gce, with_volumes};
    use crate::testing::{NodeBuilder, PodBuilder};
    use k8s_openapi::api::core::v1::ISCSIVolumeSource;

    fn iscsi(iqn: &str, lun: i32, portal: &str, read_only: bool) -> Volume {
        let source = ISCSIVolumeSource {
            iqn: iqn.to_string(),
            lun,
            target_portal: portal.to_string(),
            read_only: read_only.then_some(true),
            ..Default::default()
        };
        Volume { name: "iscsi".to_string(), iscsi: Some(source), ..Default::default() }
    }

    fn rbd(monitors: &[&str], pool: Option<&str>, image: &str, read_only: bool) -> Volume {
        let source = RBDVolumeSource {
            monitors: monitors.iter().map(|m| m.to_string()).collect(),
            pool: pool.map(str::to_string),
            image: image.to_string(),
            read_only: read_only.then_some(true),
            ..Default::default()
        };
        Volume { name: "rbd".to_string(), rbd: Some(source), ..Default::default() }
    }

    #[test]
    fn disk_conflicts() {
        let fail = vec![ERR_DISK_CONFLICT];
        let ebs_ro = || {
            let mut v = ebs("vol-1");
            if let Some(s) = v.aws_elastic_block_store.as_mut() {
                s.read_only = Some(true);
            }
            v
        };
        // (name, volume of the pod on the node, volume of the incoming pod, want)
        let cases: Vec<(&str, Volume, Volume, Vec<Reason>)> = vec![
            ("GCE same disk", gce("pd-1", false), gce("pd-1", false), fail.clone()),
            ("GCE same disk, one read-only", gce("pd-1", true), gce("pd-1", false), fail.clone()),
            ("GCE same disk, other read-only", gce("pd-1", false), gce("pd-1", true), fail.clone()),
            ("GCE same disk, both read-only", gce("pd-1", true), gce("pd-1", true), vec![]),
            ("GCE other disk", gce("pd-1", false), gce("pd-2", false), vec![]),
            ("EBS same volume", ebs("vol-1"), ebs("vol-1"), fail.clone()),
            ("EBS same volume, both read-only", ebs_ro(), ebs_ro(), fail.clone()),
            ("EBS other volume", ebs("vol-1"), ebs("vol-2"), vec![]),
            ("EBS id vs GCE name", ebs("x"), gce("x", false), vec![]),
            (
                "iSCSI same iqn",
                iscsi("iqn.a", 0, "10.0.0.1:3260", false),
                iscsi("iqn.a", 0, "10.0.0.1:3260", false),
                fail.clone(),
            ),
            (
                "iSCSI same iqn, other lun and portal",
                iscsi("iqn.a", 0, "10.0.0.1:3260", false),
                iscsi("iqn.a", 1, "10.0.0.2:3260", false),
                fail.clone(),
            ),
            (
                "iSCSI same iqn, one read-only",
                iscsi("iqn.a", 0, "p", true),
                iscsi("iqn.a", 0, "p", false),
                fail.clone(),
            ),
            ("iSCSI same iqn, both read-only", iscsi("iqn.a", 0, "p", true), iscsi("iqn.a", 0, "p", true), vec![]),
            ("iSCSI other iqn", iscsi("iqn.a", 0, "p", false), iscsi("iqn.b", 0, "p", false), vec![]),
            (
                "RBD same image",
                rbd(&["m1", "m2"], Some("p"), "img", false),
                rbd(&["m2", "m3"], Some("p"), "img", false),
                fail.clone(),
            ),
            (
                "RBD default pool",
                rbd(&["m1"], None, "img", false),
                rbd(&["m1"], Some("rbd"), "img", false),
                fail.clone(),
            ),
            (
                "RBD no shared monitor",
                rbd(&["m1"], Some("p"), "img", false),
                rbd(&["m2"], Some("p"), "img", false),
                vec![],
            ),
            ("RBD other pool", rbd(&["m1"], Some("p"), "img", false), rbd(&["m1"], Some("q"), "img", false), vec![]),
            ("RBD other image", rbd(&["m1"], Some("p"), "img", false), rbd(&["m1"], Some("p"), "img2", false), vec![]),
            (
                "RBD one read-only",
                rbd(&["m1"], Some("p"), "img", true),
                rbd(&["m1"], Some("p"), "img", false),
                fail.clone(),
            ),
            ("RBD both read-only", rbd(&["m1"], Some("p"), "img", true), rbd(&["m1"], Some("p"), "img", true), vec![]),
            ("claims are not compared", claim("data"), claim("data"), vec![]),
        ];
        for (name, existing, wanted, want) in cases {
            let old = with_volumes(PodBuilder::new("old").build(), vec![existing]);
            let node = NodeInfo::from_parts(NodeBuilder::new("n").build(), [old]);
            let pod = with_volumes(PodBuilder::new("p").build(), vec![wanted]);
            assert_eq!(reasons_of(&NoDiskConflict, pod, &node), want, "{name}");
        }
    }

    #[test]
    fn any_volume_against_any_pod() {
        let node = NodeInfo::from_parts(
            NodeBuilder::new("n").build(),
            [
                with_volumes(PodBuilder::new("a").build(), vec![gce("pd-1", false)]),
                with_volumes(PodBuilder::new("b").build(), vec![ebs("vol-2"), gce("pd-3", true)]),
            ],
        );
        let pod = |v| with_volumes(PodBuilder::new("p").build(), v);
        assert_eq!(
            reasons_of(&NoDiskConflict, pod(vec![gce("pd-9", false), ebs("vol-2")]), &node),
            vec![ERR_DISK_CONFLICT]
        );
        assert!(reasons_of(&NoDiskConflict, pod(vec![gce("pd-3", true), ebs("vol-9")]), &node).is_empty());
        assert!(reasons_of(&NoDiskConflict, pod(vec![]), &node).is_empty());
        let empty = NodeBuilder::new("n").info();
        assert!(reasons_of(&NoDiskConflict, pod(vec![gce("pd-1", false)]), &empty).is_empty());
    }
}
