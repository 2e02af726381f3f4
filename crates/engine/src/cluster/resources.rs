//! Resource amounts as kube-scheduler counts them: cpu in millicores, memory and ephemeral storage in
//! bytes, a pod count, and the scalar resources (extended, hugepages, prefixed native, attachable
//! volumes) by name.

use crate::cluster::resource_list::ResourceList;
use crate::quantity::Quantity;

pub const CPU: &str = "cpu";
pub const MEMORY: &str = "memory";
pub const EPHEMERAL_STORAGE: &str = "ephemeral-storage";
pub const PODS: &str = "pods";

/// An amount of every resource the scheduler counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resource {
    pub milli_cpu: i64,
    pub memory: i64,
    pub ephemeral_storage: i64,
    /// Only meaningful for a node's allocatable: how many pods it takes.
    pub allowed_pod_number: i64,
    /// Scalar resources, sorted by name.
    pub scalar: Vec<(String, i64)>,
}

impl Resource {
    /// Reads a resource list (requests, overhead or allocatable). Names the scheduler does not
    /// count (unprefixed non-native names) are ignored, as upstream.
    pub fn from_list(list: &ResourceList) -> Self {
        let mut r = Resource::default();
        for (name, q) in list {
            r.add_named(name, q);
        }
        r
    }

    pub(crate) fn add_named(&mut self, name: &str, q: &Quantity) {
        match name {
            CPU => self.milli_cpu = self.milli_cpu.saturating_add(q.milli_value()),
            MEMORY => self.memory = self.memory.saturating_add(q.value()),
            EPHEMERAL_STORAGE => self.ephemeral_storage = self.ephemeral_storage.saturating_add(q.value()),
            PODS => self.allowed_pod_number = self.allowed_pod_number.saturating_add(q.value()),
            _ if is_scalar_resource_name(name) => self.add_scalar(name, q.value()),
            _ => {}
        }
    }

    fn add_scalar(&mut self, name: &str, amount: i64) {
        match self.scalar.binary_search_by(|(n, _)| n.as_str().cmp(name)) {
            Ok(i) => self.scalar[i].1 = self.scalar[i].1.saturating_add(amount),
            Err(i) => self.scalar.insert(i, (name.to_string(), amount)),
        }
    }

    /// The amount of a scalar resource (0 when absent).
    pub fn scalar(&self, name: &str) -> i64 {
        self.scalar.binary_search_by(|(n, _)| n.as_str().cmp(name)).map(|i| self.scalar[i].1).unwrap_or(0)
    }

    /// Adds every resource of `other`.
    pub fn add(&mut self, other: &Resource) {
        self.milli_cpu = self.milli_cpu.saturating_add(other.milli_cpu);
        self.memory = self.memory.saturating_add(other.memory);
        self.ephemeral_storage = self.ephemeral_storage.saturating_add(other.ephemeral_storage);
        self.allowed_pod_number = self.allowed_pod_number.saturating_add(other.allowed_pod_number);
        for (name, amount) in &other.scalar {
            self.add_scalar(name, *amount);
        }
    }

    /// True when nothing at all is requested.
    pub fn is_zero(&self) -> bool {
        self.milli_cpu == 0
            && self.memory == 0
            && self.ephemeral_storage == 0
            && self.allowed_pod_number == 0
            && self.scalar.iter().all(|(_, a)| *a == 0)
    }
}

/// kube-scheduler's `IsScalarResourceName`: extended resources (a domain-prefixed name outside
/// `kubernetes.io`), hugepages, `kubernetes.io/`-prefixed native resources and attachable volumes.
pub fn is_scalar_resource_name(name: &str) -> bool {
    is_extended_resource_name(name)
        || name.starts_with("hugepages-")
        || name.contains("kubernetes.io/")
        || name.starts_with("attachable-volumes-")
}

/// kube-scheduler's `IsExtendedResourceName`: a domain-prefixed name outside `kubernetes.io` (and
/// not a quota `requests.` name). Hugepages, attachable volumes and `kubernetes.io/` names are
/// native, not extended.
pub fn is_extended_resource_name(name: &str) -> bool {
    name.contains('/') && !name.contains("kubernetes.io/") && !name.starts_with("requests.")
}

/// The cpu (millicores) and memory (bytes) kube-scheduler's scoring assumes for a container that
/// requests none: `DefaultMilliCPURequest` and `DefaultMemoryRequest`.
pub const DEFAULT_MILLI_CPU_REQUEST: i64 = 100;
pub const DEFAULT_MEMORY_REQUEST: i64 = 200 * 1024 * 1024;

/// cpu and memory as the priorities count them: a pod's requests with the defaults above for a
/// container that asks none, so empty pods still spread (`cluster::pod_requests`). A request
/// written as zero counts as zero: upstream overrides "if unset, but not if explicitly set to zero".
/// (PodFitsResources' own zero-request rule is a different one.)
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NonZero {
    pub milli_cpu: i64,
    pub memory: i64,
}

impl NonZero {
    fn add(&mut self, other: NonZero) {
        self.milli_cpu = self.milli_cpu.saturating_add(other.milli_cpu);
        self.memory = self.memory.saturating_add(other.memory);
    }

    /// Adds a pod's amounts to a node's sum.
    pub fn plus(self, other: NonZero) -> NonZero {
        let mut sum = self;
        sum.add(other);
        sum
    }

    /// Takes a pod's amounts off a node's sum.
    pub fn minus(self, other: NonZero) -> NonZero {
        NonZero {
            milli_cpu: self.milli_cpu.saturating_sub(other.milli_cpu),
            memory: self.memory.saturating_sub(other.memory),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalar_resource_names() {
        let cases = [
            ("example.com/foo", true),
            ("nvidia.com/gpu", true),
            ("hugepages-2Mi", true),
            ("kubernetes.io/something", true),
            ("attachable-volumes-aws-ebs", true),
            ("requests.example.com/foo", false),
            ("cpu", false),
            ("gpu", false),
        ];
        for (name, want) in cases {
            assert_eq!(is_scalar_resource_name(name), want, "{name}");
        }
    }
}
