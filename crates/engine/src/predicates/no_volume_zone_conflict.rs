//! NoVolumeZoneConflict: the zone and region labels of the PersistentVolumes bound to the pod's
//! claims must match the node's, as kube-scheduler's VolumeZone plugin
//! (`pkg/scheduler/framework/plugins/volumezone/volume_zone.go`) checks them.
//!
//! - Only `persistentVolumeClaim` volumes are looked at, as upstream does (generic ephemeral
//!   volumes are left to CheckVolumeBinding, which checks the PV's node affinity).
//! - The claims are resolved first, for every node alike (upstream's PreFilter): a claim without a
//!   name, a missing claim, StorageClass or PersistentVolume, or an unbound claim that is not
//!   `WaitForFirstConsumer` fails the pod with an unresolvable reason naming the object. Unbound
//!   `WaitForFirstConsumer` claims are skipped: their volume does not exist yet.
//! - A node without any of the four topology labels fits: a single-zone cluster need not label
//!   its nodes.
//! - For each of the PV's topology labels (`topology.kubernetes.io/zone|region` and the deprecated
//!   `failure-domain.beta.kubernetes.io/zone|region`) the node must have the same key, or, for a
//!   beta key only, its GA twin (upstream's `translateToGALabel`: a GA label on the PV is never
//!   matched against a beta label on the node), with a value among the PV's `__`-separated zones
//!   (`volumehelpers.LabelZonesToSet`). A PV label that does not parse (an empty zone in the list)
//!   is ignored, as upstream does.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::PersistentVolume;

use crate::cluster::objects::Pod;
use crate::cluster::volumes::VolumeObjects;
use crate::cluster::NodeInfo;
use crate::framework::PodContext;
use crate::framework::{AnyPredicate, ArgumentError, PredicateArgs};
use crate::framework::{Cause, ClusterView, Failures, Predicate, Reason, ReasonKind};
use crate::predicates::check_volume_binding::{claim_class, WAIT_FOR_FIRST_CONSUMER};
use crate::predicates::volume_count::Volumes;
use std::sync::Arc;

/// The registry name.
pub const NAME: &str = "NoVolumeZoneConflict";

/// Builds it (it takes no argument).
pub fn build(_args: &PredicateArgs<'_>) -> Result<Arc<dyn AnyPredicate>, ArgumentError> {
    Ok(Arc::new(NoVolumeZoneConflict))
}

pub const ERR_VOLUME_ZONE_CONFLICT: Reason =
    Reason::of(Cause::VolumeZoneConflict, ReasonKind::Unresolvable, "node(s) had no available volume zone");

const BETA_ZONE: &str = "failure-domain.beta.kubernetes.io/zone";
const BETA_REGION: &str = "failure-domain.beta.kubernetes.io/region";
const ZONE: &str = "topology.kubernetes.io/zone";
const REGION: &str = "topology.kubernetes.io/region";

/// The labels compared, in upstream's order.
pub const TOPOLOGY_LABELS: [&str; 4] = [BETA_ZONE, BETA_REGION, ZONE, REGION];

/// Separates the zones of a multi-zone PV label value (`cloudvolume.LabelMultiZoneDelimiter`).
const MULTI_ZONE_DELIMITER: &str = "__";

#[derive(Debug)]
pub struct NoVolumeZoneConflict;

/// A claim, class or volume that cannot be found or used: unresolvable, naming it.
fn unresolvable(message: String) -> Reason {
    Reason::owned(Cause::VolumeUnresolved, ReasonKind::Unresolvable, message)
}

/// [`unresolvable`] in fixed words.
const fn unresolved(message: &'static str) -> Reason {
    Reason::of(Cause::VolumeUnresolved, ReasonKind::Unresolvable, message)
}

/// The GA key of a deprecated beta topology key; other keys unchanged.
pub fn translate_to_ga_label(key: &str) -> &str {
    match key {
        BETA_REGION => REGION,
        BETA_ZONE => ZONE,
        other => other,
    }
}

/// The PersistentVolume a claim is bound to; `None` for an unbound `WaitForFirstConsumer` claim.
fn bound_volume<'a>(
    volumes: &'a VolumeObjects,
    pod: &Pod,
    claim_name: &str,
) -> Result<Option<&'a PersistentVolume>, Reason> {
    if claim_name.is_empty() {
        return Err(unresolved("PersistentVolumeClaim had no name"));
    }
    let Some(pvc) = volumes.pvc(&pod.metadata.namespace, claim_name) else {
        return Err(unresolvable(format!("persistentvolumeclaim \"{claim_name}\" not found")));
    };
    let pv_name = pvc.spec.as_ref().and_then(|s| s.volume_name.as_deref()).unwrap_or_default();
    if pv_name.is_empty() {
        let class_name = claim_class(pvc);
        if class_name.is_empty() {
            return Err(unresolved("PersistentVolumeClaim had no pv name and storageClass name"));
        }
        let Some(class) = volumes.storage_class(class_name) else {
            return Err(unresolvable(format!("storageclass.storage.k8s.io \"{class_name}\" not found")));
        };
        return match class.volume_binding_mode.as_deref() {
            None => Err(unresolvable(format!("VolumeBindingMode not set for StorageClass \"{class_name}\""))),
            Some(WAIT_FOR_FIRST_CONSUMER) => Ok(None),
            Some(_) => Err(unresolved("PersistentVolume had no name")),
        };
    }
    match volumes.pv(pv_name) {
        Some(pv) => Ok(Some(pv)),
        None => Err(unresolvable(format!("persistentvolume \"{pv_name}\" not found"))),
    }
}

/// Why today's VolumeZone rejects the pod in its PreFilter, whatever the node (a claim, its
/// StorageClass or its PersistentVolume that cannot be resolved), if it does.
pub fn prefilter_failure(pod: &Pod, volumes: &VolumeObjects) -> Option<Reason> {
    pod.spec
        .volumes
        .iter()
        .filter_map(|v| v.persistent_volume_claim.as_ref())
        .find_map(|source| bound_volume(volumes, pod, &source.claim_name).err())
}

/// Whether a PV label value parses as a zone list: no zone in it is empty once trimmed.
fn is_zone_list(value: &str) -> bool {
    value.split(MULTI_ZONE_DELIMITER).all(|zone| !zone.trim().is_empty())
}

/// Whether the node's topology labels satisfy the PV's.
fn volume_fits_node(pv: &PersistentVolume, node_labels: &BTreeMap<String, String>) -> bool {
    let Some(pv_labels) = pv.metadata.labels.as_ref() else {
        return true;
    };
    TOPOLOGY_LABELS.iter().all(|&key| {
        let Some(value) = pv_labels.get(key) else {
            return true;
        };
        if !is_zone_list(value) {
            return true;
        }
        let node_value = node_labels.get(key).or_else(|| node_labels.get(translate_to_ga_label(key)));
        node_value.is_some_and(|v| value.split(MULTI_ZONE_DELIMITER).any(|zone| zone.trim() == v))
    })
}

impl Predicate for NoVolumeZoneConflict {
    type State = Volumes;

    fn name(&self) -> &str {
        NAME
    }

    fn failures(&self) -> Failures {
        Failures::Unresolvable
    }

    fn prepare(&self, _pod: &PodContext, view: &ClusterView<'_>) -> Volumes {
        Volumes::of(view)
    }

    fn check(&self, ctx: &PodContext, volumes: &Volumes, node: &NodeInfo, reasons: &mut Vec<Reason>) {
        let labels = &node.node().metadata.labels;
        // Looked up only for a pod with a bound claim: most pods have none, and this runs per node.
        let node_has_zone = || TOPOLOGY_LABELS.iter().any(|k| labels.contains_key(*k));
        // Every claim is resolved even after a conflict: an unresolvable claim is reported instead,
        // as upstream's PreFilter fails before any Filter runs.
        let mut conflict = false;
        for volume in &ctx.pod.spec.volumes {
            let Some(source) = &volume.persistent_volume_claim else {
                continue;
            };
            match bound_volume(&volumes.0, &ctx.pod, &source.claim_name) {
                Err(reason) => {
                    reasons.push(reason);
                    return;
                }
                Ok(Some(pv)) => conflict = conflict || (node_has_zone() && !volume_fits_node(pv, labels)),
                Ok(None) => {}
            }
        }
        if conflict {
            reasons.push(ERR_VOLUME_ZONE_CONFLICT);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::objects::Pod;
    use crate::cluster::volumes::VolumeObjects;
    use crate::testing::claim_volume;
    use crate::testing::{NodeBuilder, PodBuilder};
    use k8s_openapi::api::core::v1::{
        GCEPersistentDiskVolumeSource, PersistentVolumeClaim, PersistentVolumeClaimSpec, PersistentVolumeSpec, Volume,
    };
    use k8s_openapi::api::storage::v1::StorageClass;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn pv(name: &str, labels: &[(&str, &str)]) -> PersistentVolume {
        PersistentVolume {
            metadata: ObjectMeta {
                name: Some(name.to_string()),
                labels: (!labels.is_empty())
                    .then(|| labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()),
                ..Default::default()
            },
            spec: Some(PersistentVolumeSpec::default()),
            status: None,
        }
    }

    /// A claim in `default`, bound to `volume` when it is not empty.
    fn pvc(name: &str, volume: &str, class: Option<&str>) -> PersistentVolumeClaim {
        PersistentVolumeClaim {
            metadata: ObjectMeta {
                name: Some(name.to_string()),
                namespace: Some("default".to_string()),
                ..Default::default()
            },
            spec: Some(PersistentVolumeClaimSpec {
                volume_name: (!volume.is_empty()).then(|| volume.to_string()),
                storage_class_name: class.map(str::to_string),
                ..Default::default()
            }),
            status: None,
        }
    }

    fn class(name: &str, mode: Option<&str>) -> StorageClass {
        StorageClass {
            metadata: ObjectMeta { name: Some(name.to_string()), ..Default::default() },
            provisioner: "example.com/csi".to_string(),
            volume_binding_mode: mode.map(str::to_string),
            ..Default::default()
        }
    }

    fn pod_with_claims(claims: &[&str]) -> Pod {
        let mut pod = PodBuilder::new("p").build();
        pod.spec.volumes.extend(claims.iter().map(|c| claim_volume(c)));
        pod
    }

    fn node(labels: &[(&str, &str)]) -> NodeInfo {
        NodeBuilder::new("n1").labels(labels).info()
    }

    fn run(objects: VolumeObjects, pod: Pod, node: &NodeInfo) -> Vec<Reason> {
        crate::predicates::reasons_with(&NoVolumeZoneConflict, &objects, pod, node)
    }

    /// The objects of one claim `data` bound to a PV `vol` with these labels.
    fn bound_to(pv_labels: &[(&str, &str)]) -> VolumeObjects {
        let mut objects = VolumeObjects::default();
        objects.upsert_pv(pv("vol", pv_labels));
        objects.upsert_pvc(pvc("data", "vol", None));
        objects
    }

    type Labels = Vec<(&'static str, &'static str)>;

    #[test]
    fn zone_labels() {
        let fail = vec![ERR_VOLUME_ZONE_CONFLICT];
        // (name, PV labels, node labels, want)
        let cases: Vec<(&str, Labels, Labels, Vec<Reason>)> = vec![
            ("zone match", vec![(ZONE, "a")], vec![(ZONE, "a")], vec![]),
            ("zone mismatch", vec![(ZONE, "a")], vec![(ZONE, "b")], fail.clone()),
            ("zone and region match", vec![(ZONE, "a"), (REGION, "r")], vec![(ZONE, "a"), (REGION, "r")], vec![]),
            ("region mismatch", vec![(ZONE, "a"), (REGION, "r1")], vec![(ZONE, "a"), (REGION, "r2")], fail.clone()),
            ("node has more labels than the PV", vec![(ZONE, "a")], vec![(ZONE, "a"), (REGION, "r")], vec![]),
            ("node lacks the PV's zone key", vec![(ZONE, "a")], vec![(REGION, "r")], fail.clone()),
            ("beta PV label, beta node label", vec![(BETA_ZONE, "a")], vec![(BETA_ZONE, "a")], vec![]),
            ("beta PV label matches the node's GA label", vec![(BETA_ZONE, "a")], vec![(ZONE, "a")], vec![]),
            ("beta PV label against another GA value", vec![(BETA_ZONE, "a")], vec![(ZONE, "b")], fail.clone()),
            ("beta PV region matches the node's GA region", vec![(BETA_REGION, "r")], vec![(REGION, "r")], vec![]),
            (
                "beta node label wins over the GA twin",
                vec![(BETA_ZONE, "a")],
                vec![(BETA_ZONE, "b"), (ZONE, "a")],
                fail.clone(),
            ),
            (
                "GA PV label is not matched against a beta node label",
                vec![(ZONE, "a")],
                vec![(BETA_ZONE, "a")],
                fail.clone(),
            ),
            ("multi-zone value holds the node's zone", vec![(ZONE, "a__b__c")], vec![(ZONE, "b")], vec![]),
            ("multi-zone value without the node's zone", vec![(ZONE, "a__b")], vec![(ZONE, "c")], fail.clone()),
            ("zones are trimmed", vec![(ZONE, " a __ b ")], vec![(ZONE, "b")], vec![]),
            ("an unparsable value is ignored", vec![(ZONE, "a____b")], vec![(ZONE, "c")], vec![]),
            ("an empty value is ignored", vec![(ZONE, "")], vec![(ZONE, "c")], vec![]),
            ("PV without topology labels", vec![("disk", "ssd")], vec![(ZONE, "a")], vec![]),
            ("node without topology labels", vec![(ZONE, "a")], vec![], vec![]),
            ("node with only unrelated labels", vec![(ZONE, "a")], vec![("disk", "ssd")], vec![]),
        ];
        for (name, pv_labels, node_labels, want) in cases {
            let got = run(bound_to(&pv_labels), pod_with_claims(&["data"]), &node(&node_labels));
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn claims_are_resolved_first() {
        let zone_a = node(&[(ZONE, "a")]);
        let mut objects = VolumeObjects::default();
        objects.upsert_pv(pv("vol-a", &[(ZONE, "a")]));
        objects.upsert_pv(pv("vol-b", &[(ZONE, "b")]));
        objects.upsert_pvc(pvc("in-a", "vol-a", None));
        objects.upsert_pvc(pvc("in-b", "vol-b", None));
        objects.upsert_pvc(pvc("late", "", Some("wffc")));
        objects.upsert_pvc(pvc("now", "", Some("immediate")));
        objects.upsert_pvc(pvc("unset", "", Some("no-mode")));
        objects.upsert_pvc(pvc("classless", "", None));
        objects.upsert_pvc(pvc("no-class-object", "", Some("gone")));
        objects.upsert_pvc(pvc("dangling", "missing-pv", None));
        objects.upsert_storage_class(class("wffc", Some("WaitForFirstConsumer")));
        objects.upsert_storage_class(class("immediate", Some("Immediate")));
        objects.upsert_storage_class(class("no-mode", None));

        let msg = |m: &str| vec![unresolvable(m.to_string())];
        // (name, claims of the pod, want on a node in zone a)
        let cases = [
            ("bound in the node's zone", vec!["in-a"], vec![]),
            ("bound in another zone", vec!["in-b"], vec![ERR_VOLUME_ZONE_CONFLICT]),
            ("unbound WaitForFirstConsumer is skipped", vec!["late"], vec![]),
            ("skipped claim beside a conflicting one", vec!["late", "in-b"], vec![ERR_VOLUME_ZONE_CONFLICT]),
            ("unbound immediate claim", vec!["now"], msg("PersistentVolume had no name")),
            (
                "class without a binding mode",
                vec!["unset"],
                msg("VolumeBindingMode not set for StorageClass \"no-mode\""),
            ),
            (
                "unbound claim without a class",
                vec!["classless"],
                msg("PersistentVolumeClaim had no pv name and storageClass name"),
            ),
            ("missing StorageClass", vec!["no-class-object"], msg("storageclass.storage.k8s.io \"gone\" not found")),
            ("missing claim", vec!["nope"], msg("persistentvolumeclaim \"nope\" not found")),
            ("claim without a name", vec![""], msg("PersistentVolumeClaim had no name")),
            ("missing PV", vec!["dangling"], msg("persistentvolume \"missing-pv\" not found")),
            (
                "an unresolvable claim wins over a conflict",
                vec!["in-b", "nope"],
                msg("persistentvolumeclaim \"nope\" not found"),
            ),
        ];
        for (name, claims, want) in cases {
            assert_eq!(run(objects.clone(), pod_with_claims(&claims), &zone_a), want, "{name}");
        }
        // Claims fail the pod on nodes without topology labels too.
        assert_eq!(
            run(objects.clone(), pod_with_claims(&["nope"]), &node(&[])),
            msg("persistentvolumeclaim \"nope\" not found")
        );
        // A claim in another namespace is not the pod's.
        let other_ns = PodBuilder::new("p").namespace("other").build();
        let mut pod = other_ns;
        pod.spec.volumes.push(claim_volume("in-a"));
        assert_eq!(run(objects, pod, &zone_a), msg("persistentvolumeclaim \"in-a\" not found"));
    }

    #[test]
    fn pods_without_claims_fit() {
        let mut pod = PodBuilder::new("p").build();
        pod.spec.volumes.push(Volume {
            name: "pd".to_string(),
            gce_persistent_disk: Some(GCEPersistentDiskVolumeSource { pd_name: "d".to_string(), ..Default::default() }),
            ..Default::default()
        });
        assert!(run(VolumeObjects::default(), pod, &node(&[(ZONE, "a")])).is_empty());
        assert!(run(VolumeObjects::default(), PodBuilder::new("p").build(), &node(&[(ZONE, "a")])).is_empty());
    }

    #[test]
    fn the_beta_class_annotation_counts() {
        let mut objects = VolumeObjects::default();
        let mut claim = pvc("late", "", Some("immediate"));
        claim.metadata.annotations =
            Some([("volume.beta.kubernetes.io/storage-class".to_string(), "wffc".to_string())].into());
        objects.upsert_pvc(claim);
        objects.upsert_storage_class(class("wffc", Some("WaitForFirstConsumer")));
        objects.upsert_storage_class(class("immediate", Some("Immediate")));
        assert!(run(objects, pod_with_claims(&["late"]), &node(&[(ZONE, "a")])).is_empty());
    }
}
