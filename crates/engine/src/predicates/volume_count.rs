//! What the volume-count predicates share: telling a pod's volumes apart (directly, or through a
//! claim and its PersistentVolume), reading a node's attach limits, and the in-tree counting shape
//! of MaxEBSVolumeCount, MaxGCEPDVolumeCount and MaxAzureDiskVolumeCount.
//!
//! Upstream: `MaxPDVolumeCountChecker.filterVolumes` in pkg/scheduler/algorithm/predicates/
//! predicates.go as of 1.12: a claim that cannot be followed to a volume (the claim does not exist,
//! is not bound, or its PersistentVolume does not exist) counts toward the limit of every in-tree
//! predicate, once per claim (keyed by the pod's namespace and the claim's name), for the incoming
//! pod and for the pods on the node alike ("count the PV towards the PV limit"), so a pod cannot
//! slip past the limit while its claims are being bound. (1.16 narrowed this to claims whose
//! StorageClass has the predicate's provisioner and stopped counting missing claims; 1.22 made a
//! missing claim of the incoming pod an error. Neither is followed here.) Generic ephemeral volumes
//! (1.21+) read through their `<pod>-<volume>` claim the same way.
//!
//! CSI migration of in-tree volumes is not modelled: it is taken to be off on every node, so the
//! in-tree predicates always count their volumes and MaxCSIVolumeCount never counts in-tree ones.

use std::borrow::Cow;

use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim, Volume};

use crate::cluster::objects::{Node, Pod};
use crate::cluster::volumes::VolumeObjects;
use crate::cluster::NodeInfo;
use crate::framework::PodContext;
use crate::framework::{Cause, ReasonKind};
use crate::framework::{ClusterView, Failures, Predicate, PredicateState, Reason};

/// What the volume predicates prepare: the cluster's volume objects (claims, PersistentVolumes,
/// classes, CSINodes), which pods placed or removed do not change.
#[derive(Debug, Clone, Default)]
pub struct Volumes(pub VolumeObjects);

impl PredicateState for Volumes {}

impl Volumes {
    pub fn of(view: &ClusterView<'_>) -> Self {
        Volumes(view.volumes().clone())
    }
}

/// `ErrMaxVolumeCountExceeded`, for all four volume-count predicates.
pub const ERR_MAX_VOLUME_COUNT_EXCEEDED: Reason =
    Reason::of(Cause::VolumeCountExceeded, ReasonKind::Resolvable, "node(s) exceed max volume count");

/// One volume, as the count tells volumes apart: two pods using the same one count it once.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum VolumeId<'a> {
    /// The volume's own id: a GCE `pdName`, an EBS `volumeID`, an Azure `diskName`, a CSI
    /// `volumeHandle`.
    Volume(&'a str),
    /// A claim counted without knowing its volume (missing, unbound, or bound to a
    /// PersistentVolume that is missing): one per claim, never equal to a real volume id (upstream
    /// uses a random prefix). The name is owned only for the missing claim of an ephemeral volume.
    Claim { namespace: &'a str, name: Cow<'a, str> },
}

impl<'a> VolumeId<'a> {
    /// The claim `name` of a pod, in the pod's namespace.
    pub(crate) fn claim(pod: &'a Pod, name: Cow<'a, str>) -> Self {
        VolumeId::Claim { namespace: &pod.metadata.namespace, name }
    }
}

/// A claim, class or volume that cannot be found or used: unresolvable, naming it.
fn unresolvable(message: String) -> Reason {
    Reason::owned(Cause::VolumeUnresolved, ReasonKind::Unresolvable, message)
}

/// What a volume reads through.
#[derive(Debug)]
pub(crate) enum ClaimRef<'a> {
    /// No claim: an inline volume.
    NoClaim,
    /// The claim, found.
    Found(&'a PersistentVolumeClaim),
    /// A claim that does not exist, by name (in the pod's namespace).
    Missing(Cow<'a, str>),
}

/// The claim a volume reads through: `persistentVolumeClaim.claimName`, or `<pod>-<volume>` for a
/// generic ephemeral volume, whose claim, when it exists, must be controlled by the pod
/// (`ephemeral.VolumeIsForPod`). A claim without a name is an error, as upstream's
/// "PersistentVolumeClaim had no name"; both errors are unresolvable reasons with their text.
pub(crate) fn claim_of<'a>(
    objects: &'a VolumeObjects,
    pod: &'a Pod,
    volume: &'a Volume,
) -> Result<ClaimRef<'a>, Reason> {
    let namespace = pod.metadata.namespace.as_str();
    let (name, ephemeral): (Cow<'a, str>, bool) = if let Some(claim) = &volume.persistent_volume_claim {
        (Cow::Borrowed(claim.claim_name.as_str()), false)
    } else if volume.ephemeral.is_some() {
        (Cow::Owned(format!("{}-{}", pod.metadata.name, volume.name)), true)
    } else {
        return Ok(ClaimRef::NoClaim);
    };
    if name.is_empty() {
        return Err(unresolvable("PersistentVolumeClaim had no name".to_string()));
    }
    let Some(pvc) = objects.pvc(namespace, &name) else {
        return Ok(ClaimRef::Missing(name));
    };
    if ephemeral && !is_controlled_by(pvc, pod) {
        return Err(unresolvable(format!(
            "PVC {namespace}/{name} was not created for pod {namespace}/{} (pod is not owner)",
            pod.metadata.name
        )));
    }
    Ok(ClaimRef::Found(pvc))
}

/// `metav1.IsControlledBy`: the claim's controller owner reference names the pod's UID.
fn is_controlled_by(pvc: &PersistentVolumeClaim, pod: &Pod) -> bool {
    let owners = pvc.metadata.owner_references.as_deref().unwrap_or_default();
    owners.iter().find(|o| o.controller == Some(true)).is_some_and(|o| o.uid == pod.metadata.uid)
}

/// `spec.volumeName`, empty when the claim is not bound.
pub(crate) fn bound_volume(pvc: &PersistentVolumeClaim) -> &str {
    pvc.spec.as_ref().and_then(|s| s.volume_name.as_deref()).unwrap_or("")
}

/// A node's limit for one attachable-volume resource (`attachable-volumes-aws-ebs`, ...), from
/// `status.allocatable`; `None` when the node does not publish it (a published 0 is a limit).
pub(crate) fn allocatable_limit(node: &Node, key: &str) -> Option<i64> {
    node.status.allocatable.get(key).map(|q| q.value())
}

/// One in-tree volume type, as upstream's `VolumeFilter` describes it.
#[derive(Debug)]
pub struct InTreeVolumeCount {
    /// The Policy name.
    pub name: &'static str,
    /// The id of an inline volume of this type.
    pub inline: fn(&Volume) -> Option<&str>,
    /// The id of a PersistentVolume of this type.
    pub persistent: fn(&PersistentVolume) -> Option<&str>,
    /// The allocatable resource that overrides the default limit.
    pub limit_key: &'static str,
    /// The limit when the node does not publish one.
    pub default_limit: fn(&Node) -> i64,
}

impl InTreeVolumeCount {
    /// `filterVolumes` (1.12): pushes the ids of the pod's volumes of this type, and of its claims
    /// that cannot be followed to a volume (duplicates included).
    fn volume_ids<'a>(
        &self,
        objects: &'a VolumeObjects,
        pod: &'a Pod,
        out: &mut Vec<VolumeId<'a>>,
    ) -> Result<(), Reason> {
        for volume in &pod.spec.volumes {
            if let Some(id) = (self.inline)(volume) {
                out.push(VolumeId::Volume(id));
                continue;
            }
            let pvc = match claim_of(objects, pod, volume)? {
                ClaimRef::NoClaim => continue,
                ClaimRef::Missing(name) => {
                    out.push(VolumeId::claim(pod, name));
                    continue;
                }
                ClaimRef::Found(pvc) => pvc,
            };
            let pv_name = bound_volume(pvc);
            // Unbound (deleted and recreated, or unbound by an admin: the pod may still use the
            // volume it was bound to), or bound to a PersistentVolume that is missing: counted
            // once per claim, whatever its StorageClass.
            let pv = if pv_name.is_empty() { None } else { objects.pv(pv_name) };
            match pv {
                Some(pv) => {
                    if let Some(id) = (self.persistent)(pv) {
                        out.push(VolumeId::Volume(id));
                    }
                }
                None => {
                    let name = pvc.metadata.name.as_deref().unwrap_or_default();
                    out.push(VolumeId::claim(pod, Cow::Borrowed(name)));
                }
            }
        }
        Ok(())
    }
}

impl Predicate for InTreeVolumeCount {
    type State = Volumes;

    fn name(&self) -> &str {
        self.name
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
        if let Err(reason) = self.volume_ids(&volumes.0, pod, &mut new) {
            reasons.push(reason);
            return;
        }
        // A pod without volumes of this type always fits.
        if new.is_empty() {
            return;
        }
        let mut existing = Vec::new();
        for p in node.pods.pods() {
            if let Err(reason) = self.volume_ids(&volumes.0, &p.pod, &mut existing) {
                reasons.push(reason);
                return;
            }
        }
        let (existing, new_count) = count_unique(&mut existing, &mut new);
        let node = node.node();
        let limit = allocatable_limit(node, self.limit_key).unwrap_or_else(|| (self.default_limit)(node));
        // As upstream, the node's whole count is checked even when every volume of the pod is
        // already attached, so a node over its limit refuses such a pod too.
        if (existing + new_count) as i64 > limit {
            reasons.push(ERR_MAX_VOLUME_COUNT_EXCEEDED);
        }
    }
}

/// Sorts and deduplicates both lists; returns the number of unique existing ids and of the new
/// ones that are not among them.
pub(crate) fn count_unique<T: Ord>(existing: &mut Vec<T>, new: &mut Vec<T>) -> (usize, usize) {
    existing.sort_unstable();
    existing.dedup();
    new.sort_unstable();
    new.dedup();
    let fresh = new.iter().filter(|id| existing.binary_search(id).is_err()).count();
    (existing.len(), fresh)
}

#[cfg(test)]
pub(crate) mod test_objects {
    //! Builders for the volume predicates' tests: volumes, claims, PersistentVolumes, classes.

    use k8s_openapi::api::core::v1::{
        AWSElasticBlockStoreVolumeSource, AzureDiskVolumeSource, CSIPersistentVolumeSource, CSIVolumeSource,
        EphemeralVolumeSource, GCEPersistentDiskVolumeSource, PersistentVolume, PersistentVolumeClaim,
        PersistentVolumeClaimSpec, PersistentVolumeClaimVolumeSource, PersistentVolumeSpec, Volume,
    };
    use k8s_openapi::api::storage::v1::{CSINode, CSINodeDriver, CSINodeSpec, StorageClass, VolumeNodeResources};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

    use crate::cluster::objects::Pod;
    use crate::cluster::volumes::VolumeObjects;
    use crate::cluster::NodeInfo;
    use crate::framework::{AnyPredicate, Reason};
    use crate::testing::{NodeBuilder, PodBuilder};

    fn named(name: &str) -> Volume {
        Volume { name: name.to_string(), ..Volume::default() }
    }

    pub(crate) fn gce(pd: &str, read_only: bool) -> Volume {
        let source = GCEPersistentDiskVolumeSource {
            pd_name: pd.to_string(),
            read_only: read_only.then_some(true),
            ..Default::default()
        };
        Volume { gce_persistent_disk: Some(source), ..named(&format!("gce-{pd}")) }
    }

    pub(crate) fn ebs(id: &str) -> Volume {
        let source = AWSElasticBlockStoreVolumeSource { volume_id: id.to_string(), ..Default::default() };
        Volume { aws_elastic_block_store: Some(source), ..named(&format!("ebs-{id}")) }
    }

    pub(crate) fn azure(disk: &str) -> Volume {
        let source = AzureDiskVolumeSource { disk_name: disk.to_string(), ..Default::default() };
        Volume { azure_disk: Some(source), ..named(&format!("azure-{disk}")) }
    }

    pub(crate) fn claim(name: &str) -> Volume {
        let source = PersistentVolumeClaimVolumeSource { claim_name: name.to_string(), read_only: None };
        Volume { persistent_volume_claim: Some(source), ..named(&format!("claim-{name}")) }
    }

    /// A generic ephemeral volume named `volume`: its claim is `<pod>-<volume>`.
    pub(crate) fn ephemeral(volume: &str) -> Volume {
        Volume { ephemeral: Some(EphemeralVolumeSource::default()), ..named(volume) }
    }

    /// An inline CSI (ephemeral CSI) volume.
    pub(crate) fn inline_csi(driver: &str) -> Volume {
        Volume { csi: Some(CSIVolumeSource { driver: driver.to_string(), ..Default::default() }), ..named("inline") }
    }

    pub(crate) fn with_volumes(mut pod: Pod, volumes: Vec<Volume>) -> Pod {
        pod.spec.volumes.extend(volumes);
        pod
    }

    fn meta(namespace: Option<&str>, name: &str) -> ObjectMeta {
        ObjectMeta { name: Some(name.to_string()), namespace: namespace.map(str::to_string), ..Default::default() }
    }

    /// A claim in `default`, bound to `volume` unless it is empty, of `class` unless it is empty.
    pub(crate) fn pvc(name: &str, volume: &str, class: &str) -> PersistentVolumeClaim {
        let opt = |s: &str| (!s.is_empty()).then(|| s.to_string());
        PersistentVolumeClaim {
            metadata: meta(Some("default"), name),
            spec: Some(PersistentVolumeClaimSpec {
                volume_name: opt(volume),
                storage_class_name: opt(class),
                ..Default::default()
            }),
            status: None,
        }
    }

    /// The claim of a generic ephemeral volume, controlled by the pod with this UID.
    pub(crate) fn ephemeral_pvc(name: &str, volume: &str, class: &str, owner_uid: &str) -> PersistentVolumeClaim {
        let mut c = pvc(name, volume, class);
        c.metadata.owner_references = Some(vec![OwnerReference {
            api_version: "v1".to_string(),
            kind: "Pod".to_string(),
            name: "owner".to_string(),
            uid: owner_uid.to_string(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        }]);
        c
    }

    pub(crate) fn pv(name: &str, spec: PersistentVolumeSpec) -> PersistentVolume {
        PersistentVolume { metadata: meta(None, name), spec: Some(spec), status: None }
    }

    pub(crate) fn gce_pv(name: &str, pd: &str) -> PersistentVolume {
        let source = GCEPersistentDiskVolumeSource { pd_name: pd.to_string(), ..Default::default() };
        pv(name, PersistentVolumeSpec { gce_persistent_disk: Some(source), ..Default::default() })
    }

    pub(crate) fn ebs_pv(name: &str, id: &str) -> PersistentVolume {
        let source = AWSElasticBlockStoreVolumeSource { volume_id: id.to_string(), ..Default::default() };
        pv(name, PersistentVolumeSpec { aws_elastic_block_store: Some(source), ..Default::default() })
    }

    pub(crate) fn azure_pv(name: &str, disk: &str) -> PersistentVolume {
        let source = AzureDiskVolumeSource { disk_name: disk.to_string(), ..Default::default() };
        pv(name, PersistentVolumeSpec { azure_disk: Some(source), ..Default::default() })
    }

    pub(crate) fn csi_pv(name: &str, driver: &str, handle: &str) -> PersistentVolume {
        let source = CSIPersistentVolumeSource {
            driver: driver.to_string(),
            volume_handle: handle.to_string(),
            ..Default::default()
        };
        pv(name, PersistentVolumeSpec { csi: Some(source), ..Default::default() })
    }

    pub(crate) fn class(name: &str, provisioner: &str) -> StorageClass {
        StorageClass { metadata: meta(None, name), provisioner: provisioner.to_string(), ..Default::default() }
    }

    /// A CSINode for `node` with these drivers and their `allocatable.count` (None: not set).
    pub(crate) fn csi_node(node: &str, drivers: &[(&str, Option<i32>)]) -> CSINode {
        let drivers = drivers
            .iter()
            .map(|(name, count)| CSINodeDriver {
                name: name.to_string(),
                node_id: node.to_string(),
                allocatable: count.map(|c| VolumeNodeResources { count: Some(c) }),
                topology_keys: None,
            })
            .collect();
        CSINode { metadata: meta(None, node), spec: CSINodeSpec { drivers }, ..Default::default() }
    }

    /// A table row of the count predicates' tests: (name, node, the volumes of each pod on the
    /// node, the volumes of the incoming pod, want).
    pub(crate) type CountCase = (&'static str, NodeBuilder, Vec<Vec<Volume>>, Vec<Volume>, Vec<Reason>);

    /// Runs a predicate for pod `p` with `new` volumes on a node whose pods `old-<i>` have the
    /// `existing` volumes.
    pub(crate) fn run(
        predicate: &dyn AnyPredicate,
        objects: &VolumeObjects,
        node: NodeBuilder,
        existing: Vec<Vec<Volume>>,
        new: Vec<Volume>,
    ) -> Vec<Reason> {
        let pods = existing
            .into_iter()
            .enumerate()
            .map(|(i, v)| with_volumes(PodBuilder::new(&format!("old-{i}")).build(), v));
        let node = NodeInfo::from_parts(node.build(), pods);
        reasons_with(predicate, objects, with_volumes(PodBuilder::new("p").build(), new), &node)
    }

    /// Runs a predicate with these volume objects in the pod's context.
    pub(crate) use crate::predicates::reasons_with;
}

#[cfg(test)]
mod tests {
    use super::test_objects::*;
    use super::*;
    use crate::testing::PodBuilder;

    #[test]
    fn claims_resolve_by_name_and_ephemeral_claims_must_belong_to_the_pod() {
        let mut objects = VolumeObjects::default();
        objects.upsert_pvc(pvc("data", "pv-1", ""));
        objects.upsert_pvc(ephemeral_pvc("web-scratch", "", "", "uid-web"));
        objects.upsert_pvc(ephemeral_pvc("other-scratch", "", "", "uid-someone-else"));
        let web = PodBuilder::new("web").build();
        let other = PodBuilder::new("other").build();
        let name = |r: ClaimRef<'_>| match r {
            ClaimRef::Found(c) => format!("found {}", c.metadata.name.as_deref().unwrap_or_default()),
            ClaimRef::Missing(n) => format!("missing {n}"),
            ClaimRef::NoClaim => "none".to_string(),
        };

        let (data, scratch, pd, gone) = (claim("data"), ephemeral("scratch"), gce("pd", false), claim("gone"));
        assert_eq!(name(claim_of(&objects, &web, &data).unwrap()), "found data");
        assert_eq!(name(claim_of(&objects, &web, &scratch).unwrap()), "found web-scratch");
        assert_eq!(name(claim_of(&objects, &web, &pd).unwrap()), "none");
        assert_eq!(name(claim_of(&objects, &web, &gone).unwrap()), "missing gone");
        let lonely = PodBuilder::new("lonely").build();
        assert_eq!(name(claim_of(&objects, &lonely, &scratch).unwrap()), "missing lonely-scratch");

        let not_owner = claim_of(&objects, &other, &scratch).unwrap_err();
        assert_eq!(
            not_owner.message,
            "PVC default/other-scratch was not created for pod default/other (pod is not owner)"
        );
        assert!(!not_owner.is_resolvable());
        let nameless = claim("");
        let no_name = claim_of(&objects, &web, &nameless).unwrap_err();
        assert_eq!(no_name.message, "PersistentVolumeClaim had no name");
    }

    #[test]
    fn counting_dedups_and_skips_attached_volumes() {
        let mut existing = vec![VolumeId::Volume("a"), VolumeId::Volume("b"), VolumeId::Volume("a")];
        let mut new = vec![
            VolumeId::Volume("b"),
            VolumeId::Volume("c"),
            VolumeId::Volume("c"),
            VolumeId::Claim { namespace: "default", name: Cow::Borrowed("a") },
        ];
        assert_eq!(count_unique(&mut existing, &mut new), (2, 2));
    }
}
