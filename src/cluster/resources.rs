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

    fn add_named(&mut self, name: &str, q: &Quantity) {
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

    /// Raises every resource to at least its amount in `other`.
    pub fn set_max(&mut self, other: &Resource) {
        self.milli_cpu = self.milli_cpu.max(other.milli_cpu);
        self.memory = self.memory.max(other.memory);
        self.ephemeral_storage = self.ephemeral_storage.max(other.ephemeral_storage);
        self.allowed_pod_number = self.allowed_pod_number.max(other.allowed_pod_number);
        for (name, amount) in &other.scalar {
            match self.scalar.binary_search_by(|(n, _)| n.as_str().cmp(name)) {
                Ok(i) => self.scalar[i].1 = self.scalar[i].1.max(*amount),
                Err(i) if *amount > 0 => self.scalar.insert(i, (name.clone(), *amount)),
                Err(_) => {}
            }
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

/// What a pod needs of a node, as `resourcehelper.PodRequests` computes it: the sum of the app
/// containers and sidecars (init containers with `restartPolicy: Always`), or the largest
/// one-off init container (plus the sidecars started before it) if that is more, plus overhead.
pub fn pod_requests(pod: &crate::cluster::objects::Pod) -> Resource {
    let mut requests = combine_containers(pod, |c| &c.resources.requests);
    requests.add(&Resource::from_list(&pod.spec.overhead));
    // A pod's own "pods" entry would be nonsense; the pod count is checked separately.
    requests.allowed_pod_number = 0;
    requests
}

/// The limits of a pod as ResourceLimitsPriority reads them (upstream's `getResourceLimits`, 1.11-1.18):
/// the app containers' limits summed, raised to any init container's. Combined as [`pod_requests`]
/// combines requests (sidecars add to the sum and to the init containers after them, which upstream's
/// version predates), without overhead, which upstream's function never added.
pub fn pod_limits(pod: &crate::cluster::objects::Pod) -> Resource {
    let mut limits = combine_containers(pod, |c| &c.resources.limits);
    limits.allowed_pod_number = 0;
    limits
}

/// One resource list of every container, combined: app containers and sidecars add up; a one-off
/// init container runs alone with the sidecars started before it, and the pod needs the larger of
/// the two.
fn combine_containers(
    pod: &crate::cluster::objects::Pod,
    list: impl Fn(&crate::cluster::objects::Container) -> &ResourceList,
) -> Resource {
    let mut sum = Resource::default();
    for c in &pod.spec.containers {
        sum.add(&Resource::from_list(list(c)));
    }
    let mut sidecars = Resource::default();
    let mut init_peak = Resource::default();
    for c in &pod.spec.init_containers {
        let own = Resource::from_list(list(c));
        let while_running = if c.restart_policy.as_deref() == Some("Always") {
            sum.add(&own);
            sidecars.add(&own);
            sidecars.clone()
        } else {
            let mut r = own;
            r.add(&sidecars);
            r
        };
        init_peak.set_max(&while_running);
    }
    sum.set_max(&init_peak);
    sum
}

/// The cpu (millicores) and memory (bytes) kube-scheduler's scoring assumes for a container that
/// requests none: `DefaultMilliCPURequest` and `DefaultMemoryRequest`.
pub const DEFAULT_MILLI_CPU_REQUEST: i64 = 100;
pub const DEFAULT_MEMORY_REQUEST: i64 = 200 * 1024 * 1024;

/// cpu and memory as the priorities count them: like [`pod_requests`], but a container without a
/// cpu (or memory) request counts the defaults above, so empty pods still spread. A request written
/// as zero counts as zero: upstream's `GetNonzeroRequests` overrides "if unset, but not if
/// explicitly set to zero". (PodFitsResources' own zero-request rule is a different one.)
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NonZero {
    pub milli_cpu: i64,
    pub memory: i64,
}

impl NonZero {
    fn of(requests: &ResourceList) -> NonZero {
        NonZero {
            milli_cpu: requests.get(CPU).map_or(DEFAULT_MILLI_CPU_REQUEST, Quantity::milli_value),
            memory: requests.get(MEMORY).map_or(DEFAULT_MEMORY_REQUEST, Quantity::value),
        }
    }

    fn add(&mut self, other: NonZero) {
        self.milli_cpu = self.milli_cpu.saturating_add(other.milli_cpu);
        self.memory = self.memory.saturating_add(other.memory);
    }

    fn max(&mut self, other: NonZero) {
        self.milli_cpu = self.milli_cpu.max(other.milli_cpu);
        self.memory = self.memory.max(other.memory);
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

/// The non-zero requests of a pod, combined as [`pod_requests`] combines the real ones.
pub fn pod_non_zero_requests(pod: &crate::cluster::objects::Pod) -> NonZero {
    let mut sum = NonZero::default();
    for c in &pod.spec.containers {
        sum.add(NonZero::of(&c.resources.requests));
    }
    let mut sidecars = NonZero::default();
    let mut init_peak = NonZero::default();
    for c in &pod.spec.init_containers {
        let own = NonZero::of(&c.resources.requests);
        if c.restart_policy.as_deref() == Some("Always") {
            sum.add(own);
            sidecars.add(own);
            init_peak.max(sidecars);
        } else {
            init_peak.max(own.plus(sidecars));
        }
    }
    sum.max(init_peak);
    let overhead = Resource::from_list(&pod.spec.overhead);
    sum.add(NonZero { milli_cpu: overhead.milli_cpu, memory: overhead.memory });
    sum
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::PodBuilder;

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

    #[test]
    fn pod_requests_follow_resourcehelper() {
        struct Case {
            name: &'static str,
            pod: crate::cluster::objects::Pod,
            cpu: i64,
            memory: i64,
        }
        let cases = [
            Case {
                name: "containers add up",
                pod: PodBuilder::new("p").req(&[("cpu", "100m"), ("memory", "1Gi")]).req(&[("cpu", "200m")]).build(),
                cpu: 300,
                memory: 1 << 30,
            },
            Case {
                name: "a larger init container wins",
                pod: PodBuilder::new("p").req(&[("cpu", "100m")]).init_req(&[("cpu", "1")]).build(),
                cpu: 1000,
                memory: 0,
            },
            Case {
                name: "a smaller init container does not add",
                pod: PodBuilder::new("p").req(&[("cpu", "1")]).init_req(&[("cpu", "500m")]).build(),
                cpu: 1000,
                memory: 0,
            },
            Case {
                name: "sidecars add to the app containers and to later init containers",
                pod: PodBuilder::new("p")
                    .req(&[("cpu", "100m")])
                    .sidecar_req(&[("cpu", "50m")])
                    .init_req(&[("cpu", "120m")])
                    .build(),
                cpu: 170,
                memory: 0,
            },
            Case {
                name: "overhead is added last",
                pod: PodBuilder::new("p")
                    .req(&[("cpu", "100m")])
                    .overhead(&[("cpu", "10m"), ("memory", "1Mi")])
                    .build(),
                cpu: 110,
                memory: 1 << 20,
            },
        ];
        for c in cases {
            let r = pod_requests(&c.pod);
            assert_eq!((r.milli_cpu, r.memory), (c.cpu, c.memory), "{}", c.name);
        }
    }

    #[test]
    fn non_zero_requests_fill_in_the_defaults_per_container() {
        let cases = [
            ("empty container", PodBuilder::new("p").req(&[]), 100, 200 << 20),
            ("cpu only", PodBuilder::new("p").req(&[("cpu", "1")]), 1000, 200 << 20),
            // upstream: TestGetNonzeroRequests (non_zero_test.go) cases "cpu_and_memory_not_found",
            // "only_cpu_exist", "only_memory_exist", "cpu_memory_exist"; and its rule "override
            // if un-set, but not if explicitly set to zero".
            ("nothing set", PodBuilder::new("p").req(&[]), 100, 200 << 20),
            ("only cpu set", PodBuilder::new("p").req(&[("cpu", "200m")]), 200, 200 << 20),
            ("only memory set", PodBuilder::new("p").req(&[("memory", "400Mi")]), 100, 400 << 20),
            ("both set", PodBuilder::new("p").req(&[("cpu", "200m"), ("memory", "400Mi")]), 200, 400 << 20),
            (
                "an explicit zero counts as zero",
                PodBuilder::new("p").req(&[("cpu", "0"), ("memory", "1Gi")]),
                0,
                1 << 30,
            ),
            ("explicit zeros for both", PodBuilder::new("p").req(&[("cpu", "0m"), ("memory", "0")]), 0, 0),
            (
                "a zero in one container, nothing in the other",
                PodBuilder::new("p").req(&[("memory", "0")]).req(&[]),
                200,
                200 << 20,
            ),
            ("two empty containers", PodBuilder::new("p").req(&[]).req(&[]), 200, 400 << 20),
            ("a larger init container wins", PodBuilder::new("p").req(&[]).init_req(&[("cpu", "2")]), 2000, 200 << 20),
            ("no containers", PodBuilder::new("p"), 0, 0),
        ];
        for (name, pod, cpu, memory) in cases {
            assert_eq!(pod_non_zero_requests(&pod.build()), NonZero { milli_cpu: cpu, memory }, "{name}");
        }
    }

    #[test]
    fn unknown_unprefixed_names_are_ignored_and_scalars_kept() {
        let pod = PodBuilder::new("p").req(&[("gpu", "1"), ("example.com/foo", "2"), ("hugepages-1Gi", "2Gi")]).build();
        let r = pod_requests(&pod);
        assert_eq!(r.scalar("gpu"), 0);
        assert_eq!(r.scalar("example.com/foo"), 2);
        assert_eq!(r.scalar("hugepages-1Gi"), 2 << 30);
    }
}
