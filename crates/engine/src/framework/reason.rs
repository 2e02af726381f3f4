//! Why a pod does not fit a node: what it is, as a type ([`Cause`]), beside the words
//! kube-scheduler users read (`message`, upstream's, what `/filter` answers) and whether
//! preemption could change it ([`ReasonKind`]).
//!
//! The readers of a reason (explain's hints, failure groups and kube-scheduler view, whatif, the
//! metrics, the web pages) decide by its `cause` and `kind`; they show its `message` and never
//! look into it (`tests/layering.rs` holds them to that).

use std::borrow::Cow;
use std::fmt;

use crate::cluster::intern::IStr;
use crate::cluster::resources::{CPU, EPHEMERAL_STORAGE, MEMORY, PODS};
use crate::cluster::ConditionFailure;

/// Whether evicting pods from the node could make the pod fit: decides `FailedNodes` (resolvable)
/// versus `FailedAndUnresolvableNodes` (unresolvable), and kube-scheduler only tries preemption
/// on the former.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReasonKind {
    /// Evicting pods could make room (resources, ports, existing pods' anti-affinity).
    Resolvable,
    /// Evicting pods cannot help (selectors, taints, conditions, volume zones).
    Unresolvable,
}

/// A resource a node can be short of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceName {
    /// The node's pod count (`allowedPodNumber`).
    Pods,
    Cpu,
    Memory,
    EphemeralStorage,
    /// An extended, hugepages or other scalar resource, by name: interned once per pod
    /// ([`crate::framework::PodContext::scalar_resources`]), so a reason naming it allocates
    /// nothing more than its message.
    Scalar(IStr),
}

impl ResourceName {
    /// The resource's name as a pod requests it: `cpu`, `example.com/gpu`.
    pub fn as_str(&self) -> &str {
        match self {
            ResourceName::Pods => PODS,
            ResourceName::Cpu => CPU,
            ResourceName::Memory => MEMORY,
            ResourceName::EphemeralStorage => EPHEMERAL_STORAGE,
            ResourceName::Scalar(name) => name,
        }
    }
}

/// A pressure condition a node reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pressure {
    Memory,
    Disk,
    Pid,
}

/// Which of a node's taints a check looks at, by effect (`includes`, with the effects' names, is in
/// `plugin_helpers::tolerations`, which re-exports this type).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaintEffects {
    /// `NoSchedule` and `NoExecute` (upstream's `DoNotScheduleTaintsFilterFunc`).
    DoNotSchedule,
    /// `NoExecute` only.
    NoExecute,
    /// `PreferNoSchedule` only.
    PreferNoSchedule,
}

/// What a reason is: what the node is short of, or which rule of the pod or the node it breaks,
/// with what the predicate knew of it where that costs no allocation. The message says the same in
/// upstream's words; a reader decides by this.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cause {
    /// The node cannot take the pod's request of `resource` beside what its pods request
    /// (PodFitsResources, GeneralPredicates: `Insufficient <resource>`).
    Insufficient { resource: ResourceName },
    /// A host port the pod binds is taken on the node (PodFitsHostPorts, GeneralPredicates).
    HostPortConflict,
    /// The node is cordoned and the pod does not tolerate it (CheckNodeUnschedulable,
    /// CheckNodeCondition).
    NodeUnschedulable,
    /// A condition of the node refuses every pod (CheckNodeCondition).
    NodeCondition(ConditionFailure),
    /// The node reports this pressure (CheckNodeMemoryPressure, CheckNodeDiskPressure,
    /// CheckNodePIDPressure).
    NodePressure(Pressure),
    /// A taint of the node with one of `effects` that the pod does not tolerate
    /// (PodToleratesNodeTaints, PodToleratesNodeNoExecuteTaints). `taint` is the first such taint
    /// (upstream's `FindMatchingUntoleratedTaint`), by its index in the node's `spec.taints`.
    UntoleratedTaint { effects: TaintEffects, taint: u32 },
    /// The pod asks for another node by name (`spec.nodeName`; HostName, GeneralPredicates).
    HostNameMismatch,
    /// The pod's nodeSelector or required node affinity does not match the node
    /// (MatchNodeSelector, GeneralPredicates).
    NodeSelectorMismatch,
    /// The node lacks `key`, the first of the labels a CheckNodeLabelPresence entry wants present.
    MissingLabel { key: IStr },
    /// The node has `key`, the first of the labels a CheckNodeLabelPresence entry wants absent.
    UnwantedLabel { key: IStr },
    /// The node's values of the Policy's labels are not those of the pod's Service peers
    /// (CheckServiceAffinity).
    ServiceAffinity,
    /// A volume of the pod is already mounted on the node in a way that excludes it
    /// (NoDiskConflict).
    DiskConflict,
    /// The pod's volumes would take the node past its volume limit (the Max*VolumeCount
    /// predicates).
    VolumeCountExceeded,
    /// A PersistentVolume of the pod is in another zone or region than the node
    /// (NoVolumeZoneConflict).
    VolumeZoneConflict,
    /// A bound PersistentVolume's node affinity does not match the node (CheckVolumeBinding).
    VolumeNodeConflict,
    /// An unbound `WaitForFirstConsumer` claim finds no PersistentVolume for the node, nor a class
    /// that provisions there (CheckVolumeBinding).
    VolumeBindConflict,
    /// A claim is bound to a PersistentVolume that does not exist (CheckVolumeBinding).
    BoundVolumeMissing,
    /// A claim is unbound and its class binds immediately (CheckVolumeBinding).
    UnboundImmediateClaims,
    /// A claim, StorageClass or PersistentVolume the pod's volumes need cannot be found or used
    /// (missing, lost, being deleted, not the pod's own, without a binding mode...); the message
    /// names it (CheckVolumeBinding, NoVolumeZoneConflict, the volume counts).
    VolumeUnresolved,
    /// MatchInterPodAffinity's general reason, which it lists before each specific one below
    /// (upstream's `ErrPodAffinityNotMatch`).
    InterPodAffinity,
    /// The pod's required affinity terms find no matching pods in the node's domain.
    PodAffinityRules,
    /// Pods in the node's domain match the pod's required anti-affinity terms.
    PodAntiAffinityRules,
    /// A pod in the node's domain has required anti-affinity that this pod matches.
    ExistingPodsAntiAffinity,
    /// Placing the pod on the node would break a `DoNotSchedule` constraint's `maxSkew`
    /// (EvenPodsSpread).
    TopologySpreadSkew,
    /// The node lacks the topology key of a `DoNotSchedule` constraint (EvenPodsSpread).
    TopologySpreadMissingLabel,
    /// Nothing more is known: a reason made from its words alone ([`Reason::resolvable`],
    /// [`Reason::unresolvable`], [`Reason::new`]), such as a test plugin's.
    Other,
}

/// Why a pod does not fit a node.
///
/// Two reasons are equal when they say the same, the same way: the same `message` and `kind`
/// (what `/filter` answers). The `cause` says what that message means and may carry what the
/// predicate knew of one node (which taint, which label), so the reasons of two nodes with the same
/// words are equal whatever taint each names; compare `cause` itself to tell causes apart.
#[derive(Debug, Clone)]
pub struct Reason {
    /// What kube-scheduler users read, e.g. `Insufficient cpu`: upstream's words, for display and
    /// the wire only.
    pub message: Cow<'static, str>,
    pub kind: ReasonKind,
    /// What the reason is.
    pub cause: Cause,
}

impl PartialEq for Reason {
    fn eq(&self, other: &Reason) -> bool {
        self.message == other.message && self.kind == other.kind
    }
}

impl Eq for Reason {}

impl Reason {
    /// A reason of this cause and kind, in these words.
    pub const fn of(cause: Cause, kind: ReasonKind, message: &'static str) -> Self {
        Reason { message: Cow::Borrowed(message), kind, cause }
    }

    /// [`Reason::of`] with words made at run time (naming a claim, a class, a resource).
    pub fn owned(cause: Cause, kind: ReasonKind, message: String) -> Self {
        Reason { message: Cow::Owned(message), kind, cause }
    }

    /// A reason of this kind known only by its words ([`Cause::Other`]).
    pub const fn new(message: Cow<'static, str>, kind: ReasonKind) -> Self {
        Reason { message, kind, cause: Cause::Other }
    }

    /// A reason that preemption can resolve, known only by its words ([`Cause::Other`]).
    pub const fn resolvable(message: &'static str) -> Self {
        Reason::new(Cow::Borrowed(message), ReasonKind::Resolvable)
    }

    /// A reason that preemption cannot resolve, known only by its words ([`Cause::Other`]).
    pub const fn unresolvable(message: &'static str) -> Self {
        Reason::new(Cow::Borrowed(message), ReasonKind::Unresolvable)
    }

    /// An unresolvable reason with a message made at run time, known only by its words
    /// ([`Cause::Other`]).
    pub fn unresolvable_owned(message: String) -> Self {
        Reason::new(Cow::Owned(message), ReasonKind::Unresolvable)
    }

    pub fn is_resolvable(&self) -> bool {
        self.kind == ReasonKind::Resolvable
    }
}

/// A node's reasons as `/filter` answers them: one string, joined with `, ` (kube-scheduler counts
/// it as one reason).
pub fn joined(reasons: &[Reason]) -> Cow<'_, str> {
    match reasons {
        [one] => Cow::Borrowed(one.message.as_ref()),
        many => Cow::Owned(many.iter().map(|r| r.message.as_ref()).collect::<Vec<_>>().join(", ")),
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CPU_SHORT: Reason =
        Reason::of(Cause::Insufficient { resource: ResourceName::Cpu }, ReasonKind::Resolvable, "Insufficient cpu");

    #[test]
    fn a_reason_carries_its_cause_beside_its_words() {
        assert_eq!(CPU_SHORT.cause, Cause::Insufficient { resource: ResourceName::Cpu });
        assert_eq!((CPU_SHORT.message.as_ref(), CPU_SHORT.kind), ("Insufficient cpu", ReasonKind::Resolvable));
        assert!(CPU_SHORT.is_resolvable());
        assert_eq!(CPU_SHORT.to_string(), "Insufficient cpu");
        let gpu = Reason::owned(
            Cause::Insufficient { resource: ResourceName::Scalar(IStr::new("example.com/gpu")) },
            ReasonKind::Resolvable,
            "Insufficient example.com/gpu".to_string(),
        );
        let Cause::Insufficient { resource } = &gpu.cause else { panic!("{gpu:?}") };
        assert_eq!(resource.as_str(), "example.com/gpu");
        let names = [ResourceName::Pods, ResourceName::Cpu, ResourceName::Memory, ResourceName::EphemeralStorage];
        assert_eq!(names.map(|r| r.as_str().to_string()), ["pods", "cpu", "memory", "ephemeral-storage"]);
    }

    #[test]
    fn the_words_only_constructors_know_nothing_more() {
        for r in [Reason::resolvable("r"), Reason::unresolvable("u"), Reason::unresolvable_owned("o".to_string())] {
            assert_eq!(r.cause, Cause::Other, "{r:?}");
        }
        assert_eq!(Reason::new(Cow::Borrowed("n"), ReasonKind::Resolvable).cause, Cause::Other);
    }

    /// Equal reasons say the same thing the same way; the cause (and what it knew of one node) does
    /// not make two answers' reasons differ, but tells causes apart where it is compared.
    #[test]
    fn reasons_are_equal_by_their_words_and_kind() {
        let taint = |i| {
            Reason::of(
                Cause::UntoleratedTaint { effects: TaintEffects::DoNotSchedule, taint: i },
                ReasonKind::Unresolvable,
                "node(s) had taints that the pod didn't tolerate",
            )
        };
        assert_eq!(taint(0), taint(1));
        assert_ne!(taint(0).cause, taint(1).cause);
        assert_eq!(CPU_SHORT, Reason::resolvable("Insufficient cpu"));
        assert_ne!(CPU_SHORT, Reason::unresolvable("Insufficient cpu"), "another kind");
        assert_ne!(CPU_SHORT, Reason::resolvable("Insufficient memory"));
        let clone = CPU_SHORT.clone();
        assert_eq!((clone.cause, clone.message), (CPU_SHORT.cause, CPU_SHORT.message));
    }

    /// A reason is made per failing node in the filter loop: it stays a few words (a message, a
    /// kind and a cause of at most three).
    #[test]
    fn a_reason_stays_small() {
        assert!(std::mem::size_of::<Cause>() <= 24, "{}", std::mem::size_of::<Cause>());
        assert!(std::mem::size_of::<Reason>() <= 56, "{}", std::mem::size_of::<Reason>());
    }

    #[test]
    fn joined_as_filter_answers() {
        assert_eq!(joined(&[CPU_SHORT]), "Insufficient cpu");
        let two = [CPU_SHORT, Reason::unresolvable("node(s) were unschedulable")];
        assert_eq!(joined(&two), "Insufficient cpu, node(s) were unschedulable");
    }
}
