//! CheckVolumeBinding: the pod's PersistentVolumeClaims (and the claims of its generic ephemeral
//! volumes) must be usable from the node, as kube-scheduler's VolumeBinding plugin decides
//! (`pkg/scheduler/framework/plugins/volumebinding`: `volume_binding.go` PreFilter and Filter,
//! `binder.go` GetPodVolumeClaims, FindPodVolumes, checkBoundClaims, findMatchingVolumes,
//! checkVolumeProvisions; `k8s.io/component-helpers/storage/volume` FindMatchingVolume).
//!
//! For every node alike (upstream's PreFilter):
//! - a missing claim, a `Lost` claim, a claim being deleted, or an ephemeral volume's claim that
//!   the pod does not control fails the pod with an unresolvable reason naming the claim;
//! - a claim that is not fully bound (a `volumeName` and the `pv.kubernetes.io/bind-completed`
//!   annotation) and is not `WaitForFirstConsumer` (no class, a class that does not exist, an
//!   `Immediate` class, or a pre-bound `volumeName`) fails the pod with
//!   `pod has unbound immediate PersistentVolumeClaims`; a class without `volumeBindingMode` is an
//!   error naming the class.
//!
//! On each node (upstream's Filter):
//! - the PV of each bound claim must exist and its `nodeAffinity.required` must match the node's
//!   labels;
//! - each unbound `WaitForFirstConsumer` claim needs an available PV (see [`find_matching_volume`]),
//!   claims taken smallest request first and each PV given to one claim only, or else a class
//!   that provisions dynamically (a provisioner other than `kubernetes.io/no-provisioner`) with
//!   `allowedTopologies` matching the node. A claim already provisioned for a node
//!   (`volume.kubernetes.io/selected-node`) fits only that node.
//!
//! Not modelled: in-tree to CSI translation of PVs (CSINode migration annotations), and
//! CSIStorageCapacity checks for dynamic provisioning (the model has no CSIDriver or
//! CSIStorageCapacity objects), so `node(s) did not have enough free storage` is never reported.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};

use k8s_openapi::api::core::v1::{
    ObjectReference, PersistentVolume, PersistentVolumeClaim, PersistentVolumeClaimSpec, PersistentVolumeSpec,
    TopologySelectorTerm,
};

use crate::cluster::objects::Pod;
use crate::cluster::volumes::VolumeObjects;
use crate::cluster::NodeInfo;
use crate::framework::PodContext;
use crate::framework::{AnyPredicate, ArgumentError, PredicateArgs};
use crate::framework::{Cause, ReasonKind};
use crate::framework::{ClusterView, Failures, Predicate, PredicateState, Reason};
use crate::labels::selectors::{LabelSelector, NodeSelectorTerms};
use crate::quantity::Quantity;

/// The registry name.
pub const NAME: &str = "CheckVolumeBinding";

/// Builds it (it takes no argument).
pub fn build(_args: &PredicateArgs<'_>) -> Result<Arc<dyn AnyPredicate>, ArgumentError> {
    Ok(Arc::new(CheckVolumeBinding))
}

pub const ERR_VOLUME_NODE_CONFLICT: Reason =
    Reason::of(Cause::VolumeNodeConflict, ReasonKind::Unresolvable, "node(s) had volume node affinity conflict");
pub const ERR_VOLUME_BIND_CONFLICT: Reason = Reason::of(
    Cause::VolumeBindConflict,
    ReasonKind::Unresolvable,
    "node(s) didn't find available persistent volumes to bind",
);
pub const ERR_PV_NOT_EXIST: Reason = Reason::of(
    Cause::BoundVolumeMissing,
    ReasonKind::Unresolvable,
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)",
);
pub const ERR_UNBOUND_IMMEDIATE_CLAIMS: Reason = Reason::of(
    Cause::UnboundImmediateClaims,
    ReasonKind::Unresolvable,
    "pod has unbound immediate PersistentVolumeClaims",
);

/// `storage.VolumeBindingWaitForFirstConsumer`.
pub(crate) const WAIT_FOR_FIRST_CONSUMER: &str = "WaitForFirstConsumer";
/// Read before `spec.storageClassName`, as upstream does.
const BETA_STORAGE_CLASS_ANNOTATION: &str = "volume.beta.kubernetes.io/storage-class";
const ANN_BIND_COMPLETED: &str = "pv.kubernetes.io/bind-completed";
const ANN_SELECTED_NODE: &str = "volume.kubernetes.io/selected-node";
const NOT_SUPPORTED_PROVISIONER: &str = "kubernetes.io/no-provisioner";
const FILESYSTEM: &str = "Filesystem";
const STORAGE: &str = "storage";

static NO_PV_SPEC: LazyLock<PersistentVolumeSpec> = LazyLock::new(PersistentVolumeSpec::default);
static NO_PVC_SPEC: LazyLock<PersistentVolumeClaimSpec> = LazyLock::new(PersistentVolumeClaimSpec::default);
static NO_LABELS: BTreeMap<String, String> = BTreeMap::new();

#[derive(Debug)]
pub struct CheckVolumeBinding;

/// A claim, class or volume that cannot be found or used: unresolvable, naming it.
fn unresolvable(message: String) -> Reason {
    Reason::owned(Cause::VolumeUnresolved, ReasonKind::Unresolvable, message)
}

/// The class a claim asks for: the beta annotation first, then `spec.storageClassName`; "" for none.
pub(crate) fn claim_class(pvc: &PersistentVolumeClaim) -> &str {
    if let Some(class) = pvc.metadata.annotations.as_ref().and_then(|a| a.get(BETA_STORAGE_CLASS_ANNOTATION)) {
        return class;
    }
    pvc.spec.as_ref().and_then(|s| s.storage_class_name.as_deref()).unwrap_or_default()
}

/// The class of a PV: the beta annotation first, then `spec.storageClassName`.
fn volume_class(pv: &PersistentVolume) -> &str {
    if let Some(class) = pv.metadata.annotations.as_ref().and_then(|a| a.get(BETA_STORAGE_CLASS_ANNOTATION)) {
        return class;
    }
    pv.spec.as_ref().and_then(|s| s.storage_class_name.as_deref()).unwrap_or_default()
}

fn claim_spec(pvc: &PersistentVolumeClaim) -> &PersistentVolumeClaimSpec {
    pvc.spec.as_ref().unwrap_or(&NO_PVC_SPEC)
}

fn volume_spec(pv: &PersistentVolume) -> &PersistentVolumeSpec {
    pv.spec.as_ref().unwrap_or(&NO_PV_SPEC)
}

fn claim_name(pvc: &PersistentVolumeClaim) -> &str {
    pvc.metadata.name.as_deref().unwrap_or_default()
}

fn claim_namespace(pvc: &PersistentVolumeClaim) -> &str {
    pvc.metadata.namespace.as_deref().unwrap_or_default()
}

fn volume_name_of(pvc: &PersistentVolumeClaim) -> &str {
    claim_spec(pvc).volume_name.as_deref().unwrap_or_default()
}

fn annotation<'a>(pvc: &'a PersistentVolumeClaim, key: &str) -> Option<&'a str> {
    pvc.metadata.annotations.as_ref().and_then(|a| a.get(key)).map(String::as_str)
}

/// A storage quantity, zero when absent or unparsable.
fn storage_of(list: Option<&BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>>) -> Quantity {
    list.and_then(|l| l.get(STORAGE)).and_then(|q| Quantity::parse(&q.0).ok()).unwrap_or_default()
}

fn storage_request(pvc: &PersistentVolumeClaim) -> Quantity {
    storage_of(claim_spec(pvc).resources.as_ref().and_then(|r| r.requests.as_ref()))
}

/// Bound as upstream's `isPVCFullyBound`: a volume name and the bind-completed annotation.
fn is_fully_bound(pvc: &PersistentVolumeClaim) -> bool {
    !volume_name_of(pvc).is_empty() && annotation(pvc, ANN_BIND_COMPLETED).is_some()
}

/// Upstream's `IsDelayBindingMode`: no class or a missing class is immediate binding; a class
/// without a binding mode is an error.
fn is_delay_binding_mode(pvc: &PersistentVolumeClaim, volumes: &VolumeObjects) -> Result<bool, Reason> {
    let class_name = claim_class(pvc);
    if class_name.is_empty() {
        return Ok(false);
    }
    let Some(class) = volumes.storage_class(class_name) else {
        return Ok(false);
    };
    match class.volume_binding_mode.as_deref() {
        None => Err(unresolvable(format!("VolumeBindingMode not set for StorageClass \"{class_name}\""))),
        Some(mode) => Ok(mode == WAIT_FOR_FIRST_CONSUMER),
    }
}

/// `metav1.IsControlledBy(pvc, pod)`.
fn is_controlled_by(pvc: &PersistentVolumeClaim, pod: &Pod) -> bool {
    pvc.metadata
        .owner_references
        .iter()
        .flatten()
        .find(|r| r.controller == Some(true))
        .is_some_and(|r| r.uid == pod.metadata.uid)
}

/// Upstream's `IsVolumeBoundToClaim` for a PV whose claimRef is `r`.
fn is_bound_to_claim(r: &ObjectReference, pvc: &PersistentVolumeClaim) -> bool {
    r.name.as_deref().unwrap_or_default() == claim_name(pvc)
        && r.namespace.as_deref().unwrap_or_default() == claim_namespace(pvc)
        && r.uid.as_deref().is_none_or(|uid| uid.is_empty() || Some(uid) == pvc.metadata.uid.as_deref())
}

/// A PV's `nodeAffinity.required`, compiled once per request for the nodes that test it.
#[derive(Debug)]
struct VolumeAffinity(Option<NodeSelectorTerms>);

impl VolumeAffinity {
    fn of(pv: &PersistentVolume) -> Self {
        let required = volume_spec(pv).node_affinity.as_ref().and_then(|a| a.required.as_ref());
        VolumeAffinity(required.map(|r| NodeSelectorTerms::compile(&r.node_selector_terms)))
    }

    /// Upstream's `CheckNodeAffinity`: a PV without `nodeAffinity.required` fits every node.
    /// Upstream matches the terms against a node that has only the labels (no name, so no fields):
    /// `matchFields` on `metadata.name` are not checked; this does the same.
    fn matches(&self, node_labels: &BTreeMap<String, String>) -> bool {
        self.0.as_ref().is_none_or(|terms| terms.matches("", node_labels))
    }
}

/// `v1helper.MatchTopologySelectorTerms`: no terms match every node; terms are ORed, an empty term
/// matches nothing; a term's requirements (`key In values`) are ANDed, and one without values
/// invalidates its term.
fn topology_matches(terms: &[TopologySelectorTerm], node_labels: &BTreeMap<String, String>) -> bool {
    terms.is_empty()
        || terms.iter().any(|term| {
            let exprs = term.match_label_expressions.as_deref().unwrap_or_default();
            !exprs.is_empty()
                && exprs
                    .iter()
                    .all(|e| !e.values.is_empty() && node_labels.get(&e.key).is_some_and(|v| e.values.contains(v)))
        })
}

/// The pod's claims, sorted as upstream's `GetPodVolumeClaims` sorts them (immediate claims have
/// already failed the pod), with everything about them that does not depend on the node resolved
/// once for the request.
#[derive(Debug)]
pub struct PodClaims {
    /// Each bound claim's PV's node affinity; `None` when the PV does not exist.
    bound: Vec<Option<VolumeAffinity>>,
    /// The unbound `WaitForFirstConsumer` claims, in the pod's order.
    delayed: Vec<UnboundClaim>,
    /// Indexes into `delayed`, smallest request first (ties in the pod's order): the order claims
    /// are matched to PVs in, so the small claims take the small PVs.
    by_request: Vec<usize>,
    volumes: VolumeObjects,
}

/// An unbound `WaitForFirstConsumer` claim and the PVs it could bind to.
#[derive(Debug)]
struct UnboundClaim {
    pvc: Arc<PersistentVolumeClaim>,
    /// The node it was already provisioned for (`volume.kubernetes.io/selected-node`), if any.
    selected_node: Option<String>,
    /// The PVs that pass every check of upstream's `FindMatchingVolume` but the node's; an
    /// invalid claim selector is an error, reported on the nodes that look for a PV.
    volumes: Result<ClaimVolumes, Reason>,
}

/// A PV a claim could take on some node.
#[derive(Debug)]
struct VolumeCandidate {
    pv: Arc<PersistentVolume>,
    affinity: VolumeAffinity,
}

impl VolumeCandidate {
    fn name(&self) -> &str {
        self.pv.metadata.name.as_deref().unwrap_or_default()
    }
}

/// The PVs one claim could bind to, whichever the node.
#[derive(Debug, Default)]
struct ClaimVolumes {
    /// PVs pre-bound to the claim (`claimRef`), in the model's order: the first one no other
    /// claim of the pod took decides alone.
    prebound: Vec<VolumeCandidate>,
    /// `Available` PVs, smallest first (ties in the model's order): the first that matches the
    /// node is the smallest that does.
    available: Vec<VolumeCandidate>,
}

impl ClaimVolumes {
    /// Upstream's `FindMatchingVolume` on one node, the PVs `excluded` (taken by the pod's other
    /// claims on this node) left out: the pre-bound PV if there is one (its node affinity must
    /// match), else the smallest available PV whose node affinity matches.
    fn on_node(&self, node_labels: &BTreeMap<String, String>, excluded: &[&str]) -> Option<&VolumeCandidate> {
        let free = |c: &&VolumeCandidate| !excluded.contains(&c.name());
        if let Some(prebound) = self.prebound.iter().find(free) {
            return prebound.affinity.matches(node_labels).then_some(prebound);
        }
        self.available.iter().filter(free).find(|c| c.affinity.matches(node_labels))
    }
}

/// What the predicate prepares once per request: the pod's claims resolved (upstream's
/// PreFilter), or why they fail the pod on every node.
#[derive(Debug, Clone)]
pub enum State {
    /// The pod uses no claim: it fits everywhere.
    NoClaims,
    /// A claim fails the pod on every node, for this reason.
    Fails(Reason),
    Claims(Arc<PodClaims>),
}

impl PredicateState for State {}

/// How often each pod's claims were resolved, by pod name: what shows the resolution runs once
/// per request.
#[cfg(test)]
pub(crate) static RESOLUTIONS: parking_lot::Mutex<BTreeMap<String, usize>> = parking_lot::Mutex::new(BTreeMap::new());

/// Why upstream's PreFilter rejects the pod whatever the node (a claim missing, being deleted,
/// not the pod's own, or unbound with immediate binding), if it does.
pub fn prefilter_failure(pod: &Pod, volumes: &VolumeObjects) -> Option<Reason> {
    let has_claims = pod.spec.volumes.iter().any(|v| v.persistent_volume_claim.is_some() || v.ephemeral.is_some());
    if has_claims {
        pod_claims(pod, volumes).err()
    } else {
        None
    }
}

/// What does not depend on the node: upstream's PreFilter (`podHasPVCs`, `GetPodVolumeClaims`).
fn pod_claims(pod: &Pod, volumes: &VolumeObjects) -> Result<PodClaims, Reason> {
    #[cfg(test)]
    {
        *RESOLUTIONS.lock().entry(pod.metadata.name.clone()).or_default() += 1;
    }
    let namespace = &pod.metadata.namespace;
    let mut claims = Vec::new();
    for volume in &pod.spec.volumes {
        let (name, ephemeral): (Cow<'_, str>, bool) = if let Some(source) = &volume.persistent_volume_claim {
            (Cow::Borrowed(&source.claim_name), false)
        } else if volume.ephemeral.is_some() {
            // ephemeral.VolumeClaimName
            (Cow::Owned(format!("{}-{}", pod.metadata.name, volume.name)), true)
        } else {
            continue;
        };
        let Some(pvc) = volumes.pvc(namespace, &name) else {
            return Err(unresolvable(if ephemeral {
                format!("waiting for ephemeral volume controller to create the persistentvolumeclaim \"{name}\"")
            } else {
                format!("persistentvolumeclaim \"{name}\" not found")
            }));
        };
        if pvc.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Lost") {
            return Err(unresolvable(format!(
                "persistentvolumeclaim \"{name}\" bound to non-existent persistentvolume \"{}\"",
                volume_name_of(pvc)
            )));
        }
        if pvc.metadata.deletion_timestamp.is_some() {
            return Err(unresolvable(format!("persistentvolumeclaim \"{name}\" is being deleted")));
        }
        if ephemeral && !is_controlled_by(pvc, pod) {
            return Err(unresolvable(format!(
                "PVC {namespace}/{name} was not created for pod {namespace}/{} (pod is not owner)",
                pod.metadata.name
            )));
        }
        claims.push(Arc::clone(pvc));
    }

    let mut bound = Vec::new();
    let mut delayed = Vec::new();
    let mut immediate = false;
    for pvc in claims {
        if is_fully_bound(&pvc) {
            bound.push(pvc);
        } else if is_delay_binding_mode(&pvc, volumes)? && volume_name_of(&pvc).is_empty() {
            delayed.push(pvc);
        } else {
            // Immediate binding, or pre-bound: the PV controller binds these, not the scheduler.
            immediate = true;
        }
    }
    if immediate {
        return Err(ERR_UNBOUND_IMMEDIATE_CLAIMS);
    }
    let bound = bound.iter().map(|pvc| volumes.pv(volume_name_of(pvc)).map(|pv| VolumeAffinity::of(pv))).collect();
    let mut by_request: Vec<usize> = (0..delayed.len()).collect();
    by_request.sort_by_key(|&i| storage_request(&delayed[i]));
    let delayed = delayed
        .into_iter()
        .map(|pvc| UnboundClaim {
            selected_node: annotation(&pvc, ANN_SELECTED_NODE).map(str::to_string),
            volumes: claim_volumes(volumes, &pvc),
            pvc,
        })
        .collect();
    Ok(PodClaims { bound, delayed, by_request, volumes: volumes.clone() })
}

/// Upstream's `checkBoundClaims`: (every PV's affinity matches, every PV exists), stopping at the
/// first claim that fails either.
fn check_bound_claims(claims: &[Option<VolumeAffinity>], node_labels: &BTreeMap<String, String>) -> (bool, bool) {
    for pv in claims {
        let Some(affinity) = pv else {
            return (true, false);
        };
        if !affinity.matches(node_labels) {
            return (false, true);
        }
    }
    (true, true)
}

/// Upstream's `FindMatchingVolume` on the scheduler path, all but the node: among the PVs of the
/// claim's class, those pre-bound to the claim (`claimRef`), and the PVs that are `Available`,
/// unclaimed, at least as large as the request, of the same volume mode and
/// VolumeAttributesClass, not being deleted, matched by the claim's selector and offering every
/// access mode the claim asks for. An invalid claim selector is an error, as upstream.
fn claim_volumes(volumes: &VolumeObjects, pvc: &PersistentVolumeClaim) -> Result<ClaimVolumes, Reason> {
    let spec = claim_spec(pvc);
    // A selector `LabelSelectorAsSelector` cannot convert (see `LabelSelector::compile`) is an error.
    let selector = match spec.selector.as_ref().map(LabelSelector::compile) {
        Some(s) if !s.is_valid() => {
            return Err(unresolvable(format!(
                "error creating internal label selector for claim: {}/{}",
                claim_namespace(pvc),
                claim_name(pvc)
            )));
        }
        compiled => compiled,
    };
    let request = storage_request(pvc);
    let class = claim_class(pvc);
    let mode = spec.volume_mode.as_deref().unwrap_or(FILESYSTEM);
    let attributes_class = spec.volume_attributes_class_name.as_deref().unwrap_or_default();
    let access_modes = spec.access_modes.as_deref().unwrap_or_default();

    let mut found = ClaimVolumes::default();
    let mut available = Vec::new();
    for pv in volumes.pvs() {
        // The PVs upstream lists for the claim are those of its class.
        if volume_class(pv) != class {
            continue;
        }
        let pv_spec = volume_spec(pv);
        if pv_spec.claim_ref.as_ref().is_some_and(|r| !is_bound_to_claim(r, pvc)) {
            continue;
        }
        let capacity = storage_of(pv_spec.capacity.as_ref());
        if capacity < request
            || pv_spec.volume_mode.as_deref().unwrap_or(FILESYSTEM) != mode
            || pv_spec.volume_attributes_class_name.as_deref().unwrap_or_default() != attributes_class
            || pv.metadata.deletion_timestamp.is_some()
        {
            continue;
        }
        let candidate = || VolumeCandidate { pv: Arc::clone(pv), affinity: VolumeAffinity::of(pv) };
        if pv_spec.claim_ref.is_some() {
            found.prebound.push(candidate());
            continue;
        }
        if pv.status.as_ref().and_then(|s| s.phase.as_deref()) != Some("Available") {
            continue;
        }
        if selector.as_ref().is_some_and(|s| !s.matches(pv.metadata.labels.as_ref().unwrap_or(&NO_LABELS))) {
            continue;
        }
        let offered = pv_spec.access_modes.as_deref().unwrap_or_default();
        if !access_modes.iter().all(|m| offered.contains(m)) {
            continue;
        }
        available.push((capacity, candidate()));
    }
    // Stable: of PVs of one size, the first in the model's order is taken, as when they are
    // walked in that order keeping only a strictly smaller one.
    available.sort_by_key(|(capacity, _)| *capacity);
    found.available = available.into_iter().map(|(_, c)| c).collect();
    Ok(found)
}

/// Upstream's `checkVolumeProvisions` without the storage capacity check: every claim's class
/// provisions dynamically and allows the node's topology.
fn check_provisions(
    volumes: &VolumeObjects,
    claims: &[&PersistentVolumeClaim],
    node_labels: &BTreeMap<String, String>,
) -> Result<bool, Reason> {
    for pvc in claims {
        let class_name = claim_class(pvc);
        if class_name.is_empty() {
            return Err(unresolvable(format!("no class for claim \"{}/{}\"", claim_namespace(pvc), claim_name(pvc))));
        }
        let Some(class) = volumes.storage_class(class_name) else {
            return Err(unresolvable(format!("failed to find storage class \"{class_name}\"")));
        };
        if class.provisioner.is_empty() || class.provisioner == NOT_SUPPORTED_PROVISIONER {
            return Ok(false);
        }
        if !topology_matches(class.allowed_topologies.as_deref().unwrap_or_default(), node_labels) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The unbound `WaitForFirstConsumer` claims on one node (upstream's FindPodVolumes after
/// checkBoundClaims): whether each gets a PV or can be provisioned.
fn check_unbound_claims(claims: &PodClaims, node: &NodeInfo) -> Result<bool, Reason> {
    if claims.delayed.is_empty() {
        return Ok(true);
    }
    let node_labels = &node.node().metadata.labels;
    let mut to_provision = Vec::new();
    for claim in &claims.delayed {
        match claim.selected_node.as_deref() {
            Some(selected) if selected != node.name() => return Ok(false),
            Some(_) => to_provision.push(&*claim.pvc),
            None => {}
        }
    }

    let mut satisfied = true;
    let mut chosen: Vec<&str> = Vec::new();
    let to_match = claims.by_request.iter().map(|&i| &claims.delayed[i]);
    for claim in to_match.filter(|c| c.selected_node.is_none()) {
        let volumes = claim.volumes.as_ref().map_err(Reason::clone)?;
        match volumes.on_node(node_labels, &chosen) {
            Some(pv) => chosen.push(pv.name()),
            None => {
                to_provision.push(&*claim.pvc);
                satisfied = false;
            }
        }
    }
    if !to_provision.is_empty() {
        // As upstream: the claims left over are satisfied when all of them can be provisioned.
        satisfied = check_provisions(&claims.volumes, &to_provision, node_labels)?;
    }
    Ok(satisfied)
}

impl Predicate for CheckVolumeBinding {
    type State = State;

    fn name(&self) -> &str {
        NAME
    }

    fn failures(&self) -> Failures {
        Failures::Unresolvable
    }

    /// Resolves the pod's claims, once for the request.
    fn prepare(&self, pod: &PodContext, view: &ClusterView<'_>) -> State {
        let pod = &pod.pod;
        if !pod.spec.volumes.iter().any(|v| v.persistent_volume_claim.is_some() || v.ephemeral.is_some()) {
            return State::NoClaims;
        }
        match pod_claims(pod, view.volumes()) {
            Ok(claims) => State::Claims(Arc::new(claims)),
            Err(reason) => State::Fails(reason),
        }
    }

    fn check(&self, _pod: &PodContext, state: &State, node: &NodeInfo, reasons: &mut Vec<Reason>) {
        let claims = match state {
            State::NoClaims => return,
            State::Fails(reason) => {
                reasons.push(reason.clone());
                return;
            }
            State::Claims(claims) => claims,
        };
        let (bound_satisfied, bound_pvs_found) = check_bound_claims(&claims.bound, &node.node().metadata.labels);
        let unbound_satisfied = match check_unbound_claims(claims, node) {
            Ok(satisfied) => satisfied,
            Err(reason) => {
                // An error replaces the node's reasons, as upstream.
                reasons.push(reason);
                return;
            }
        };
        if !bound_satisfied {
            reasons.push(ERR_VOLUME_NODE_CONFLICT);
        }
        if !unbound_satisfied {
            reasons.push(ERR_VOLUME_BIND_CONFLICT);
        }
        if !bound_pvs_found {
            reasons.push(ERR_PV_NOT_EXIST);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::claim_volume;
    use crate::testing::{requirement, term, NodeBuilder, PodBuilder};
    use k8s_openapi::api::core::v1::{
        EphemeralVolumeSource, NodeSelector, PersistentVolumeClaimStatus, PersistentVolumeStatus,
        TopologySelectorLabelRequirement, Volume, VolumeNodeAffinity, VolumeResourceRequirements,
    };
    use k8s_openapi::api::storage::v1::StorageClass;
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector as K8sLabelSelector;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelectorRequirement, ObjectMeta, OwnerReference, Time};

    const ZONE: &str = "topology.kubernetes.io/zone";

    fn deletion_time() -> Time {
        serde_json::from_str("\"2024-01-01T00:00:00Z\"").unwrap()
    }

    fn strings(values: &[&str]) -> Vec<String> {
        values.iter().map(|v| v.to_string()).collect()
    }

    fn storage(q: &str) -> Option<BTreeMap<String, K8sQuantity>> {
        Some([(STORAGE.to_string(), K8sQuantity(q.to_string()))].into())
    }

    /// A claim in `default` asking for 1Gi, ReadWriteOnce, with no class.
    struct Claim(PersistentVolumeClaim);

    impl Claim {
        fn new(name: &str) -> Self {
            Claim(PersistentVolumeClaim {
                metadata: ObjectMeta {
                    name: Some(name.to_string()),
                    namespace: Some("default".to_string()),
                    uid: Some(format!("uid-claim-{name}")),
                    ..Default::default()
                },
                spec: Some(PersistentVolumeClaimSpec {
                    access_modes: Some(strings(&["ReadWriteOnce"])),
                    resources: Some(VolumeResourceRequirements { requests: storage("1Gi"), limits: None }),
                    ..Default::default()
                }),
                status: None,
            })
        }

        fn spec(&mut self) -> &mut PersistentVolumeClaimSpec {
            self.0.spec.get_or_insert_with(Default::default)
        }

        fn class(mut self, class: &str) -> Self {
            self.spec().storage_class_name = Some(class.to_string());
            self
        }

        fn request(mut self, q: &str) -> Self {
            self.spec().resources = Some(VolumeResourceRequirements { requests: storage(q), limits: None });
            self
        }

        fn modes(mut self, modes: &[&str]) -> Self {
            self.spec().access_modes = Some(strings(modes));
            self
        }

        fn annotate(mut self, key: &str, value: &str) -> Self {
            self.0.metadata.annotations.get_or_insert_with(Default::default).insert(key.to_string(), value.to_string());
            self
        }

        /// Bound by the PV controller: a volume name and the bind-completed annotation.
        fn bound(self, pv: &str) -> Self {
            self.prebound(pv).annotate(ANN_BIND_COMPLETED, "yes")
        }

        /// A volume name without the binding being complete.
        fn prebound(mut self, pv: &str) -> Self {
            self.spec().volume_name = Some(pv.to_string());
            self
        }

        fn selector(mut self, key: &str, op: &str, values: &[&str]) -> Self {
            self.spec().selector = Some(K8sLabelSelector {
                match_labels: None,
                match_expressions: Some(vec![LabelSelectorRequirement {
                    key: key.to_string(),
                    operator: op.to_string(),
                    values: (!values.is_empty()).then(|| strings(values)),
                }]),
            });
            self
        }

        fn phase(mut self, phase: &str) -> Self {
            self.0.status = Some(PersistentVolumeClaimStatus { phase: Some(phase.to_string()), ..Default::default() });
            self
        }

        fn deleting(mut self) -> Self {
            self.0.metadata.deletion_timestamp = Some(deletion_time());
            self
        }

        fn controller(mut self, uid: &str) -> Self {
            self.0.metadata.owner_references = Some(vec![OwnerReference {
                api_version: "v1".to_string(),
                kind: "Pod".to_string(),
                name: "p".to_string(),
                uid: uid.to_string(),
                controller: Some(true),
                block_owner_deletion: None,
            }]);
            self
        }
    }

    /// An Available ReadWriteOnce Filesystem PV.
    struct Pv(PersistentVolume);

    impl Pv {
        fn new(name: &str, class: &str, capacity: &str) -> Self {
            Pv(PersistentVolume {
                metadata: ObjectMeta { name: Some(name.to_string()), ..Default::default() },
                spec: Some(PersistentVolumeSpec {
                    storage_class_name: (!class.is_empty()).then(|| class.to_string()),
                    capacity: storage(capacity),
                    access_modes: Some(strings(&["ReadWriteOnce"])),
                    ..Default::default()
                }),
                status: Some(PersistentVolumeStatus { phase: Some("Available".to_string()), ..Default::default() }),
            })
        }

        fn spec(&mut self) -> &mut PersistentVolumeSpec {
            self.0.spec.get_or_insert_with(Default::default)
        }

        fn modes(mut self, modes: &[&str]) -> Self {
            self.spec().access_modes = Some(strings(modes));
            self
        }

        fn phase(mut self, phase: &str) -> Self {
            self.0.status = Some(PersistentVolumeStatus { phase: Some(phase.to_string()), ..Default::default() });
            self
        }

        fn claim_ref(mut self, name: &str, uid: &str) -> Self {
            self.spec().claim_ref = Some(ObjectReference {
                name: Some(name.to_string()),
                namespace: Some("default".to_string()),
                uid: (!uid.is_empty()).then(|| uid.to_string()),
                ..Default::default()
            });
            self
        }

        /// Node affinity: the node's zone label must be one of these.
        fn in_zones(mut self, zones: &[&str]) -> Self {
            self.spec().node_affinity = Some(VolumeNodeAffinity {
                required: Some(NodeSelector { node_selector_terms: vec![term(vec![requirement(ZONE, "In", zones)])] }),
            });
            self
        }

        fn label(mut self, key: &str, value: &str) -> Self {
            self.0.metadata.labels.get_or_insert_with(Default::default).insert(key.to_string(), value.to_string());
            self
        }

        fn volume_mode(mut self, mode: &str) -> Self {
            self.spec().volume_mode = Some(mode.to_string());
            self
        }

        fn deleting(mut self) -> Self {
            self.0.metadata.deletion_timestamp = Some(deletion_time());
            self
        }
    }

    fn storage_class(name: &str, mode: Option<&str>, provisioner: &str, zones: &[&str]) -> StorageClass {
        StorageClass {
            metadata: ObjectMeta { name: Some(name.to_string()), ..Default::default() },
            provisioner: provisioner.to_string(),
            volume_binding_mode: mode.map(str::to_string),
            allowed_topologies: (!zones.is_empty()).then(|| {
                vec![TopologySelectorTerm {
                    match_label_expressions: Some(vec![TopologySelectorLabelRequirement {
                        key: ZONE.to_string(),
                        values: strings(zones),
                    }]),
                }]
            }),
            ..Default::default()
        }
    }

    /// The classes every case sees.
    fn classes() -> VolumeObjects {
        let wffc = Some(WAIT_FOR_FIRST_CONSUMER);
        let mut objects = VolumeObjects::default();
        for class in [
            storage_class("local", wffc, NOT_SUPPORTED_PROVISIONER, &[]),
            storage_class("no-provisioner", wffc, "", &[]),
            storage_class("dynamic", wffc, "example.com/csi", &[]),
            storage_class("dynamic-in-a", wffc, "example.com/csi", &["a"]),
            storage_class("dynamic-in-b", wffc, "example.com/csi", &["b", "c"]),
            storage_class("immediate", Some("Immediate"), "example.com/csi", &[]),
            storage_class("no-mode", None, "example.com/csi", &[]),
        ] {
            objects.upsert_storage_class(class);
        }
        objects
    }

    fn ephemeral_volume(name: &str) -> Volume {
        Volume { name: name.to_string(), ephemeral: Some(EphemeralVolumeSource::default()), ..Default::default() }
    }

    /// Node `n1` in zone `a`.
    fn node_in_a() -> NodeInfo {
        NodeBuilder::new("n1").label(ZONE, "a").info()
    }

    fn run(objects: VolumeObjects, pod: Pod, node: &NodeInfo) -> Vec<Reason> {
        crate::predicates::reasons_with(&CheckVolumeBinding, &objects, pod, node)
    }

    /// Runs a pod using all `claims`, in order, with the claims, PVs and [`classes`] in the cluster.
    fn run_claims(claims: Vec<Claim>, pvs: Vec<Pv>, node: &NodeInfo) -> Vec<Reason> {
        let mut objects = classes();
        let mut pod = PodBuilder::new("p").build();
        for c in claims {
            pod.spec.volumes.push(claim_volume(claim_name(&c.0)));
            objects.upsert_pvc(c.0);
        }
        for pv in pvs {
            objects.upsert_pv(pv.0);
        }
        run(objects, pod, node)
    }

    fn message(m: &str) -> Vec<Reason> {
        vec![unresolvable(m.to_string())]
    }

    #[test]
    fn bound_claims() {
        let node_conflict = vec![ERR_VOLUME_NODE_CONFLICT];
        let bound = || Claim::new("c").class("local").bound("pv");
        let pv = || Pv::new("pv", "local", "1Gi").phase("Bound").claim_ref("c", "uid-claim-c");
        // (name, claims, PVs, want on node n1 in zone a)
        let cases = vec![
            ("PV without node affinity", vec![bound()], vec![pv()], vec![]),
            ("PV affinity matches", vec![bound()], vec![pv().in_zones(&["b", "a"])], vec![]),
            ("PV affinity conflicts", vec![bound()], vec![pv().in_zones(&["b"])], node_conflict.clone()),
            ("PV missing", vec![bound()], vec![], vec![ERR_PV_NOT_EXIST]),
            (
                "second claim's PV conflicts",
                vec![bound(), Claim::new("d").bound("pv-d")],
                vec![pv(), Pv::new("pv-d", "", "1Gi").in_zones(&["b"])],
                node_conflict.clone(),
            ),
            (
                "first failure decides: missing PV before a conflict",
                vec![Claim::new("d").bound("gone"), bound()],
                vec![pv().in_zones(&["b"])],
                vec![ERR_PV_NOT_EXIST],
            ),
            (
                "a bound claim's class does not matter",
                vec![Claim::new("c").class("immediate").bound("pv")],
                vec![pv()],
                vec![],
            ),
        ];
        for (name, claims, pvs, want) in cases {
            assert_eq!(run_claims(claims, pvs, &node_in_a()), want, "{name}");
        }
    }

    /// Upstream matches a PV's node affinity against a node of labels only
    /// (`storage/volume/helpers.go`, `CheckNodeAffinity`): no name, so no fields, and
    /// component-helpers' `nodeSelectorTerm.match` does not check `matchFields` then; a term of
    /// `matchFields` alone matches every node. (The oracle found this; it was pinned wrong here.)
    #[test]
    fn matchfields_see_no_node_name_as_upstream() {
        let mut pv = Pv::new("pv", "", "1Gi");
        pv.spec().node_affinity = Some(VolumeNodeAffinity {
            required: Some(NodeSelector {
                node_selector_terms: vec![crate::testing::field_term(vec![requirement(
                    "metadata.name",
                    "In",
                    &["n1"],
                )])],
            }),
        });
        let got = run_claims(vec![Claim::new("c").bound("pv")], vec![pv], &node_in_a());
        assert_eq!(got, vec![]);
    }

    #[test]
    fn unbound_immediate_claims_fail_everywhere() {
        let immediate = vec![ERR_UNBOUND_IMMEDIATE_CLAIMS];
        let available = || Pv::new("pv", "local", "1Gi");
        let cases = vec![
            ("Immediate class", vec![Claim::new("c").class("immediate")], immediate.clone()),
            ("no class", vec![Claim::new("c")], immediate.clone()),
            ("class that does not exist", vec![Claim::new("c").class("gone")], immediate.clone()),
            (
                "volume name without bind-completed",
                vec![Claim::new("c").class("local").prebound("pv")],
                immediate.clone(),
            ),
            (
                "beside a claim that would fit",
                vec![Claim::new("ok").class("local"), Claim::new("c").class("immediate")],
                immediate.clone(),
            ),
            (
                "class without volumeBindingMode",
                vec![Claim::new("c").class("no-mode")],
                message("VolumeBindingMode not set for StorageClass \"no-mode\""),
            ),
        ];
        for (name, claims, want) in cases {
            assert_eq!(run_claims(claims, vec![available()], &node_in_a()), want, "{name}");
        }
    }

    #[test]
    fn wait_for_first_consumer_claims() {
        let no_pv = vec![ERR_VOLUME_BIND_CONFLICT];
        let claim = || Claim::new("c").class("local");
        let pv = |name: &str, capacity: &str| Pv::new(name, "local", capacity);
        // (name, claims, PVs, want on node n1 in zone a)
        let cases = vec![
            ("matching PV", vec![claim()], vec![pv("pv", "1Gi")], vec![]),
            ("larger PV", vec![claim()], vec![pv("pv", "10Gi")], vec![]),
            ("PV too small", vec![claim()], vec![pv("pv", "1000Mi")], no_pv.clone()),
            ("no PV at all", vec![claim()], vec![], no_pv.clone()),
            ("PV with another class", vec![claim()], vec![Pv::new("pv", "other", "1Gi")], no_pv.clone()),
            ("PV without a class", vec![claim()], vec![Pv::new("pv", "", "1Gi")], no_pv.clone()),
            (
                "PV class from the beta annotation",
                vec![claim()],
                vec![{
                    let mut p = Pv::new("pv", "other", "1Gi");
                    p.0.metadata.annotations =
                        Some([(BETA_STORAGE_CLASS_ANNOTATION.to_string(), "local".to_string())].into());
                    p
                }],
                vec![],
            ),
            ("wrong access mode", vec![claim().modes(&["ReadWriteMany"])], vec![pv("pv", "1Gi")], no_pv.clone()),
            (
                "PV offers more access modes",
                vec![claim()],
                vec![pv("pv", "1Gi").modes(&["ReadOnlyMany", "ReadWriteOnce"])],
                vec![],
            ),
            (
                "claim asks two modes, PV offers one",
                vec![claim().modes(&["ReadWriteOnce", "ReadOnlyMany"])],
                vec![pv("pv", "1Gi")],
                no_pv.clone(),
            ),
            ("PV affinity matches", vec![claim()], vec![pv("pv", "1Gi").in_zones(&["a"])], vec![]),
            ("PV affinity conflicts", vec![claim()], vec![pv("pv", "1Gi").in_zones(&["b"])], no_pv.clone()),
            (
                "another PV's affinity matches",
                vec![claim()],
                vec![pv("pv-b", "1Gi").in_zones(&["b"]), pv("pv-a", "2Gi").in_zones(&["a"])],
                vec![],
            ),
            ("PV Released", vec![claim()], vec![pv("pv", "1Gi").phase("Released")], no_pv.clone()),
            (
                "PV without a phase",
                vec![claim()],
                vec![{
                    let mut p = pv("pv", "1Gi");
                    p.0.status = None;
                    p
                }],
                no_pv.clone(),
            ),
            ("PV claimed by another claim", vec![claim()], vec![pv("pv", "1Gi").claim_ref("other", "")], no_pv.clone()),
            ("PV in Block mode", vec![claim()], vec![pv("pv", "1Gi").volume_mode("Block")], no_pv.clone()),
            ("PV explicitly Filesystem", vec![claim()], vec![pv("pv", "1Gi").volume_mode("Filesystem")], vec![]),
            ("PV being deleted", vec![claim()], vec![pv("pv", "1Gi").deleting()], no_pv.clone()),
            (
                "claim selector matches",
                vec![claim().selector("tier", "In", &["fast"])],
                vec![pv("pv", "1Gi").label("tier", "fast")],
                vec![],
            ),
            (
                "claim selector does not match",
                vec![claim().selector("tier", "In", &["fast"])],
                vec![pv("pv", "1Gi").label("tier", "slow")],
                no_pv.clone(),
            ),
            (
                "invalid claim selector",
                vec![claim().selector("tier", "In", &[])],
                vec![pv("pv", "1Gi")],
                message("error creating internal label selector for claim: default/c"),
            ),
            (
                "claim selector value that is no label value",
                vec![claim().selector("tier", "NotIn", &["not a value"])],
                vec![pv("pv", "1Gi")],
                message("error creating internal label selector for claim: default/c"),
            ),
            (
                "PV pre-bound to the claim, not Available",
                vec![claim()],
                vec![pv("pv", "1Gi").phase("Bound").claim_ref("c", "uid-claim-c")],
                vec![],
            ),
            (
                "PV pre-bound by name only",
                vec![claim()],
                vec![pv("pv", "1Gi").phase("Pending").claim_ref("c", "")],
                vec![],
            ),
            (
                "PV pre-bound to an older claim of the same name",
                vec![claim()],
                vec![pv("pv", "1Gi").claim_ref("c", "uid-old")],
                no_pv.clone(),
            ),
            (
                "pre-bound PV out of reach decides even when another PV fits",
                vec![claim()],
                vec![pv("pre", "1Gi").claim_ref("c", "").in_zones(&["b"]), pv("free", "1Gi")],
                no_pv.clone(),
            ),
            ("two claims, one PV", vec![claim(), Claim::new("d").class("local")], vec![pv("pv", "1Gi")], no_pv.clone()),
            (
                "two claims, two PVs",
                vec![claim(), Claim::new("d").class("local")],
                vec![pv("pv1", "1Gi"), pv("pv2", "1Gi")],
                vec![],
            ),
            (
                "claims are matched smallest request first",
                // Taken in pod order, "big" would take pv-fast (the smallest PV that fits it) and
                // leave "small", which only pv-fast's label satisfies, without a PV.
                vec![
                    Claim::new("big").class("local").request("2Gi"),
                    Claim::new("small").class("local").selector("tier", "In", &["fast"]),
                ],
                vec![pv("pv-fast", "3Gi").label("tier", "fast"), pv("pv-large", "4Gi")],
                vec![],
            ),
            (
                "the smallest fitting PV is taken",
                vec![claim(), Claim::new("d").class("local").request("5Gi")],
                vec![pv("pv-big", "5Gi"), pv("pv-small", "2Gi")],
                vec![],
            ),
            ("dynamic provisioning", vec![Claim::new("c").class("dynamic")], vec![], vec![]),
            ("dynamic provisioning in an allowed zone", vec![Claim::new("c").class("dynamic-in-a")], vec![], vec![]),
            (
                "dynamic provisioning outside the allowed zones",
                vec![Claim::new("c").class("dynamic-in-b")],
                vec![],
                no_pv.clone(),
            ),
            ("no-provisioner class without PVs", vec![claim()], vec![], no_pv.clone()),
            ("class with an empty provisioner", vec![Claim::new("c").class("no-provisioner")], vec![], no_pv.clone()),
            (
                "one claim matched, one provisioned",
                vec![claim(), Claim::new("d").class("dynamic")],
                vec![pv("pv", "1Gi")],
                vec![],
            ),
            (
                "one claim matched, one neither",
                vec![claim(), Claim::new("d").class("dynamic-in-b")],
                vec![pv("pv", "1Gi")],
                no_pv.clone(),
            ),
            (
                "provisioned for this node",
                vec![Claim::new("c").class("dynamic").annotate(ANN_SELECTED_NODE, "n1")],
                vec![],
                vec![],
            ),
            (
                "provisioned for another node",
                vec![Claim::new("c").class("dynamic").annotate(ANN_SELECTED_NODE, "n2")],
                vec![],
                no_pv.clone(),
            ),
            (
                "selected for this node but the class cannot provision",
                vec![claim().annotate(ANN_SELECTED_NODE, "n1")],
                vec![pv("pv", "1Gi")],
                no_pv.clone(),
            ),
            (
                "bound conflict and bind conflict together",
                vec![Claim::new("b").bound("pv-b"), claim()],
                vec![Pv::new("pv-b", "", "1Gi").in_zones(&["b"])],
                vec![ERR_VOLUME_NODE_CONFLICT, ERR_VOLUME_BIND_CONFLICT],
            ),
            (
                "missing bound PV and no PV to bind",
                vec![Claim::new("b").bound("gone"), claim()],
                vec![],
                vec![ERR_VOLUME_BIND_CONFLICT, ERR_PV_NOT_EXIST],
            ),
        ];
        for (name, claims, pvs, want) in cases {
            assert_eq!(run_claims(claims, pvs, &node_in_a()), want, "{name}");
        }
    }

    #[test]
    fn claims_that_cannot_be_used() {
        let cases = vec![
            (
                "lost claim",
                Claim::new("c").bound("pv").phase("Lost"),
                "persistentvolumeclaim \"c\" bound to non-existent persistentvolume \"pv\"",
            ),
            (
                "claim being deleted",
                Claim::new("c").class("local").deleting(),
                "persistentvolumeclaim \"c\" is being deleted",
            ),
        ];
        for (name, claim, want) in cases {
            assert_eq!(run_claims(vec![claim], vec![Pv::new("pv", "", "1Gi")], &node_in_a()), message(want), "{name}");
        }

        let mut objects = classes();
        objects.upsert_pvc(Claim::new("c").class("local").0);
        let mut pod = PodBuilder::new("p").build();
        pod.spec.volumes.push(claim_volume("c"));
        pod.spec.volumes.push(claim_volume("nope"));
        assert_eq!(run(objects.clone(), pod, &node_in_a()), message("persistentvolumeclaim \"nope\" not found"));

        // A claim of the same name in another namespace is not the pod's.
        let mut pod = PodBuilder::new("p").namespace("other").build();
        pod.spec.volumes.push(claim_volume("c"));
        assert_eq!(run(objects, pod, &node_in_a()), message("persistentvolumeclaim \"c\" not found"));
    }

    #[test]
    fn generic_ephemeral_volumes() {
        let pod = || {
            let mut pod = PodBuilder::new("p").build();
            pod.spec.volumes.push(ephemeral_volume("scratch"));
            pod
        };
        let with = |claim: Option<Claim>, pvs: Vec<Pv>| {
            let mut objects = classes();
            if let Some(c) = claim {
                objects.upsert_pvc(c.0);
            }
            for pv in pvs {
                objects.upsert_pv(pv.0);
            }
            run(objects, pod(), &node_in_a())
        };
        assert_eq!(
            with(None, vec![]),
            message("waiting for ephemeral volume controller to create the persistentvolumeclaim \"p-scratch\"")
        );
        let not_owned = Claim::new("p-scratch").class("dynamic").controller("uid-someone-else");
        assert_eq!(
            with(Some(not_owned), vec![]),
            message("PVC default/p-scratch was not created for pod default/p (pod is not owner)")
        );
        let unowned = Claim::new("p-scratch").class("dynamic");
        assert_eq!(
            with(Some(unowned), vec![]),
            message("PVC default/p-scratch was not created for pod default/p (pod is not owner)")
        );
        assert_eq!(with(Some(Claim::new("p-scratch").class("dynamic").controller("uid-p")), vec![]), vec![]);
        let bound = Claim::new("p-scratch").bound("pv").controller("uid-p");
        assert_eq!(with(Some(bound), vec![Pv::new("pv", "", "1Gi").in_zones(&["b"])]), vec![ERR_VOLUME_NODE_CONFLICT]);
    }

    /// The claims are resolved in `prepare`, once per request: not per node, and not again in
    /// the second pass of the nodes with nominated pods.
    #[test]
    fn claims_are_resolved_once_per_request_not_per_node() {
        use crate::engine::{CancelFlag, Evaluator, Plan, RequestJob};
        let mut objects = classes();
        objects.upsert_pvc(Claim::new("data").class("local").0);
        // A local PV in zone a: nodes in zone a fit, the others find no volume to bind.
        objects.upsert_pv(Pv::new("pv", "local", "1Gi").in_zones(&["a"]).0);
        let nodes: Vec<_> = (0..40)
            .map(|i| NodeBuilder::new(&format!("n{i}")).label(ZONE, if i % 2 == 0 { "a" } else { "b" }).build())
            .collect();
        // A nominated pod of higher priority on every fourth node: a double pass there.
        let nominated: Vec<_> = (0..40)
            .step_by(4)
            .map(|i| PodBuilder::new(&format!("vip-{i}")).nominated(&format!("n{i}")).priority(100).build())
            .collect();
        let snapshot = std::sync::Arc::new(crate::cluster::Snapshot::build(nodes, nominated).with_volumes(objects));
        let mut pod = PodBuilder::new("claims-once").build();
        pod.spec.volumes.push(claim_volume("data"));
        let job = RequestJob {
            plan: std::sync::Arc::new(Plan::of_predicates(vec![std::sync::Arc::new(CheckVolumeBinding)])),
            pod,
            candidates: (0..40).map(|i| crate::engine::Candidate::by_name(&snapshot, format!("n{i}"))).collect(),
            snapshot,
            from_request_nodes: false,
            cancel: CancelFlag::new(),
            timed: false.into(),
        };
        let filtered = job.filter(&Evaluator::new(4).unwrap()).unwrap();
        let fits = filtered.verdicts.iter().filter(|v| v.fits()).count();
        assert_eq!(fits, 20, "the zone-a nodes");
        assert_eq!(filtered.report.evaluations, [40]);
        assert_eq!(filtered.report.second_passes, 10, "n0, n4, ... n36 are in zone a and pass pass 1");
        assert_eq!(RESOLUTIONS.lock().get("claims-once"), Some(&1));
    }

    #[test]
    fn pods_without_claims_fit() {
        let reasons = run(classes(), PodBuilder::new("p").build(), &node_in_a());
        assert!(reasons.is_empty());
    }
}
