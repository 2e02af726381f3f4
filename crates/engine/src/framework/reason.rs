//! Why a pod does not fit a node, and whether preemption could change that.

use std::borrow::Cow;
use std::fmt;

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

/// Why a pod does not fit a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reason {
    /// What kube-scheduler users read, e.g. `Insufficient cpu`.
    pub message: Cow<'static, str>,
    pub kind: ReasonKind,
}

impl Reason {
    /// A reason of this kind.
    pub const fn new(message: Cow<'static, str>, kind: ReasonKind) -> Self {
        Reason { message, kind }
    }

    /// A reason that preemption can resolve.
    pub const fn resolvable(message: &'static str) -> Self {
        Reason::new(Cow::Borrowed(message), ReasonKind::Resolvable)
    }

    /// A reason that preemption cannot resolve.
    pub const fn unresolvable(message: &'static str) -> Self {
        Reason::new(Cow::Borrowed(message), ReasonKind::Unresolvable)
    }

    /// An unresolvable reason with a message made at run time (naming a claim, a class).
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
