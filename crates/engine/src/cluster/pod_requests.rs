//! A pod's requests as kube-scheduler computes them: `k8s.io/component-helpers/resource`'s
//! `PodRequests`, with the options kube-scheduler passes it at each place it reads them, for each
//! tested minor. Every user of a pod's requests reads them from here, through the three places
//! upstream has:
//!
//! - [`requests_to_place`]: the pod being scheduled (NodeResourcesFit's `PreFilter`,
//!   `computePodResourceRequest`): the spec only, since an unscheduled pod has no status.
//! - [`placed_requests`]: a pod in the snapshot (`PodInfo.CalculateResource`, what a node's
//!   requested sums add up): the spec, raised to what the kubelet has allocated and configured
//!   while it resizes the pod in place, with the minor's rules; and its non-zero amounts for
//!   scoring (`getNonMissingContainerRequests`).
//! - [`requests_to_score`]: the pod being scored (`resourceAllocationScorer.calculatePodResourceRequest`):
//!   as placed, with the scoring defaults for every container that asks no cpu or memory.
//!
//! In each: the containers add up, sidecars (init containers with `restartPolicy: Always`) add to
//! them and to the one-off init containers after them, the pod needs the larger of that and its
//! largest one-off init container; pod-level requests (`spec.resources`) of cpu, memory and
//! hugepages then replace the containers' sums; overhead is added last. Quantities are combined
//! exactly, as Go's `resource.Quantity` does, and read in the scheduler's units at the end.
//!
//! Left out, as kube-scheduler's defaults leave them out: node-allocatable DRA claims
//! (`DRANodeAllocatableResources`, alpha and off in 1.36 and 1.37).

use crate::cluster::objects::{Container, ContainerResourceStatus, Pod};
use crate::cluster::resource_list::ResourceList;
use crate::cluster::resources::{NonZero, Resource, CPU, DEFAULT_MEMORY_REQUEST, DEFAULT_MILLI_CPU_REQUEST, MEMORY};
use crate::cluster::SchedulerVersion;
use crate::quantity::Quantity;

/// `SupportedPodLevelResources`: what a pod-level request stands for.
fn is_pod_level_resource(name: &str) -> bool {
    name == CPU || name == MEMORY || name.starts_with("hugepages-")
}

/// `IsPodLevelRequestsSet`: `spec.resources.requests` names cpu, memory or hugepages.
pub fn has_pod_level_requests(pod: &Pod) -> bool {
    pod.spec.resources.requests.keys().any(|k| is_pod_level_resource(k))
}

/// `IsPodLevelResourcesSet`: the pod-level requests or limits name cpu, memory or hugepages.
pub fn has_pod_level_resources(pod: &Pod) -> bool {
    has_pod_level_requests(pod) || pod.spec.resources.limits.keys().any(|k| is_pod_level_resource(k))
}

/// What NodeResourcesFit checks of a node for the pod being scheduled.
pub fn requests_to_place(pod: &Pod) -> Resource {
    let requests = pod_requests(pod, &Options { status: None, non_missing: None, overhead: true });
    to_resource(&requests)
}

/// What a pod in the snapshot takes from its node, and its non-zero cpu and memory for scoring.
pub fn placed_requests(pod: &Pod, version: SchedulerVersion) -> (Resource, NonZero) {
    let status = Some(version);
    let requests = pod_requests(pod, &Options { status, non_missing: None, overhead: true });
    // getNonMissingContainerRequests: without pod-level requests every container lacking cpu or
    // memory counts the default; with them, only for a resource the whole pod lacks.
    let mut defaults = defaults();
    if has_pod_level_requests(pod) {
        defaults.0.retain(|(name, _)| requests.get(name).is_none());
    }
    let non_zero = if defaults.0.is_empty() {
        to_non_zero(&requests)
    } else {
        to_non_zero(&pod_requests(pod, &Options { status, non_missing: Some(&defaults), overhead: true }))
    };
    (to_resource(&requests), non_zero)
}

/// The pod's cpu and memory as the resource scores count it.
pub fn requests_to_score(pod: &Pod, version: SchedulerVersion) -> NonZero {
    let defaults = defaults();
    to_non_zero(&pod_requests(pod, &Options { status: Some(version), non_missing: Some(&defaults), overhead: true }))
}

/// The limits of a pod as ResourceLimitsPriority reads them (upstream's `getResourceLimits`,
/// 1.11-1.18): combined as the requests are, the pod-level limits in place of the containers'
/// (as `PodLimits` does today), without overhead, which the classic function never added.
pub fn limits(pod: &Pod) -> Resource {
    let mut limits = aggregate(pod, &|c, _, _| Some(&c.resources.limits), None, false);
    if has_pod_level_resources(pod) {
        limits.set_pod_level(&pod.spec.resources.limits);
    }
    to_resource(&limits)
}

/// The scoring defaults (`DefaultMilliCPURequest`, `DefaultMemoryRequest`) for a container that
/// asks none.
fn defaults() -> Amounts<'static> {
    Amounts(vec![
        (CPU, Quantity::from_milli_units(DEFAULT_MILLI_CPU_REQUEST)),
        (MEMORY, Quantity::from_units(DEFAULT_MEMORY_REQUEST)),
    ])
}

/// The options of `PodRequests` the three places differ in.
#[derive(Clone, Copy)]
struct Options<'d> {
    /// `UseStatusResources` (InPlacePodVerticalScaling, GA since 1.35), with the minor whose rules
    /// read the statuses; `None`: the spec only.
    status: Option<SchedulerVersion>,
    /// `NonMissingContainerRequests`.
    non_missing: Option<&'d Amounts<'static>>,
    /// Not `ExcludeOverhead`.
    overhead: bool,
}

/// Whether the kubelet reported anything of the pod's resources. Without it every minor's rules
/// with the status read give what the spec alone gives (but for an infeasible resize, under which
/// 1.37 counts nothing but the statuses): most pods, counted the quick way.
fn reports_resources(pod: &Pod) -> bool {
    let s = &pod.status;
    s.resize_infeasible
        || !s.container_statuses.is_empty()
        || !s.init_container_statuses.is_empty()
        || s.allocated_resources.is_some()
        || s.resources.is_some()
}

/// `PodRequests`.
fn pod_requests<'a>(pod: &'a Pod, options: &Options<'_>) -> Amounts<'a> {
    let status = options.status.filter(|_| reports_resources(pod));
    let options = &Options { status, ..*options };
    let mut requests = match options.status {
        None => aggregate(pod, &spec_requests, options.non_missing, false),
        Some(SchedulerVersion::V1_35 | SchedulerVersion::V1_36) => per_container_effective(pod, options.non_missing),
        Some(SchedulerVersion::V1_37) => aggregates_effective(pod, options.non_missing),
    };
    if has_pod_level_requests(pod) {
        let spec = &pod.spec.resources.requests;
        // InPlacePodLevelResourcesVerticalScaling (1.36 on): while the pod is resized, its
        // pod-level status counts too.
        let pod_status = match options.status {
            Some(version) if version.reads_pod_level_status() => pod.status.resources.as_ref(),
            _ => None,
        };
        match (options.status, pod_status) {
            // 1.36: each pod-level request the spec names, at max(spec, configured, allocated).
            (Some(SchedulerVersion::V1_36), Some(configured)) => {
                let effective = effective(
                    pod.status.resize_infeasible,
                    Some(Amounts::of(spec)),
                    configured.requests.as_ref().map(Amounts::of),
                    pod.status.allocated_resources.as_ref().map(Amounts::of),
                );
                for (name, _) in spec {
                    if is_pod_level_resource(name) {
                        requests.set(name, effective.get(name).unwrap_or_default());
                    }
                }
            }
            // 1.37: every pod-level resource of max(spec, configured, allocated).
            (Some(_), Some(configured)) => {
                let effective = effective(
                    pod.status.resize_infeasible,
                    Some(Amounts::of(spec)),
                    configured.requests.as_ref().map(Amounts::of),
                    pod.status.allocated_resources.as_ref().map(Amounts::of),
                );
                requests.set_pod_level_amounts(&effective);
            }
            _ => requests.set_pod_level(spec),
        }
    }
    if options.overhead {
        requests.add(&Amounts::of(&pod.spec.overhead));
    }
    requests
}

/// `determineEffectiveRequests` (1.35, 1.36) and `effectivePodLevelResources` (1.37): the largest
/// of the spec, what the kubelet configured and what it allocated; without the spec when the
/// kubelet found the resize infeasible (it will not happen, so only what is in place counts).
fn effective<'a>(
    infeasible: bool,
    spec: Option<Amounts<'a>>,
    configured: Option<Amounts<'a>>,
    allocated: Option<Amounts<'a>>,
) -> Amounts<'a> {
    let mut result = if infeasible { Amounts::default() } else { spec.unwrap_or_default() };
    for other in [configured, allocated].into_iter().flatten() {
        result.max_with(&other);
    }
    result
}

/// What one container asks, from its spec and its status: `None` is Go's nil list, which counts
/// nothing (but still gets the defaults of `NonMissingContainerRequests`).
type PerContainer =
    dyn for<'a> Fn(&'a Container, Option<&'a ContainerResourceStatus>, bool) -> Option<&'a ResourceList>;

/// `containerSpecRequests`.
fn spec_requests<'a>(c: &'a Container, _: Option<&'a ContainerResourceStatus>, _: bool) -> Option<&'a ResourceList> {
    Some(&c.resources.requests)
}

/// `containerAllocatedRequests` (1.37): what the kubelet admitted, else the spec unless the resize
/// is infeasible.
fn allocated_requests<'a>(
    c: &'a Container,
    status: Option<&'a ContainerResourceStatus>,
    infeasible: bool,
) -> Option<&'a ResourceList> {
    match status.and_then(|s| s.allocated_resources.as_ref()) {
        Some(allocated) => Some(allocated),
        None if infeasible => None,
        None => Some(&c.resources.requests),
    }
}

/// `containerActuatedRequests` (1.37): what the kubelet configured, else what it admitted, else the
/// spec unless the resize is infeasible.
fn actuated_requests<'a>(
    c: &'a Container,
    status: Option<&'a ContainerResourceStatus>,
    infeasible: bool,
) -> Option<&'a ResourceList> {
    if let Some(configured) = status.and_then(|s| s.resources.as_ref()).and_then(|r| r.requests.as_ref()) {
        return Some(configured);
    }
    allocated_requests(c, status, infeasible)
}

/// `findContainerStatus`: by name, among the app containers' statuses, then the init containers'.
fn status_of<'a>(pod: &'a Pod, name: &str) -> Option<&'a ContainerResourceStatus> {
    let statuses = &pod.status;
    statuses.container_statuses.iter().chain(&statuses.init_container_statuses).find(|s| s.name == name)
}

/// `aggregateContainerResourcesByFn`: the app containers and sidecars add up, and the pod needs at
/// least the largest one-off init container plus the sidecars started before it.
fn aggregate<'a>(
    pod: &'a Pod,
    per_container: &PerContainer,
    non_missing: Option<&Amounts<'static>>,
    with_status: bool,
) -> Amounts<'a> {
    let infeasible = with_status && pod.status.resize_infeasible;
    let one = |c: &'a Container, _: Kind| -> Amounts<'a> {
        let status = if with_status { status_of(pod, &c.name) } else { None };
        let own = per_container(c, status, infeasible).map(Amounts::of).unwrap_or_default();
        match non_missing {
            Some(defaults) => own.with_missing(defaults),
            None => own,
        }
    };
    combine(pod, one)
}

/// Which list a container is in, and for an init container whether it is a sidecar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    App,
    Sidecar,
    OneOffInit,
}

/// The sidecar formula over each container's amounts.
fn combine<'a>(pod: &'a Pod, mut one: impl FnMut(&'a Container, Kind) -> Amounts<'a>) -> Amounts<'a> {
    let mut sum = Amounts::default();
    for c in &pod.spec.containers {
        sum.add(&one(c, Kind::App));
    }
    let mut sidecars = Amounts::default();
    let mut init_peak = Amounts::default();
    for c in &pod.spec.init_containers {
        let sidecar = c.is_sidecar();
        let own = one(c, if sidecar { Kind::Sidecar } else { Kind::OneOffInit });
        if sidecar {
            sum.add(&own);
            sidecars.add(&own);
            init_peak.max_with(&sidecars);
        } else {
            let mut while_running = own;
            while_running.add(&sidecars);
            init_peak.max_with(&while_running);
        }
    }
    sum.max_with(&init_peak);
    sum
}

/// 1.35 and 1.36 (`AggregateContainerRequests` with `UseStatusResources`): each app container and
/// sidecar whose status reports `resources` counts at its own effective requests; one-off init
/// containers count their spec.
fn per_container_effective<'a>(pod: &'a Pod, non_missing: Option<&Amounts<'static>>) -> Amounts<'a> {
    let infeasible = pod.status.resize_infeasible;
    combine(pod, |c, kind| {
        let spec = Amounts::of(&c.resources.requests);
        let uses_status = kind != Kind::OneOffInit;
        let own = match status_of(pod, &c.name).filter(|s| uses_status && s.resources.is_some()) {
            Some(status) => effective(
                infeasible,
                Some(spec),
                status.resources.as_ref().and_then(|r| r.requests.as_ref()).map(Amounts::of),
                status.allocated_resources.as_ref().map(Amounts::of),
            ),
            None => spec,
        };
        match non_missing {
            Some(defaults) => own.with_missing(defaults),
            None => own,
        }
    })
}

/// 1.37 (`AggregateContainerRequests` with `UseStatusResources`): the spec, the allocated and the
/// configured requests each aggregated over the containers (or, where the kubelet reports them,
/// the pod-level allocated and configured ones), and the pod counts the largest of the three.
fn aggregates_effective<'a>(pod: &'a Pod, non_missing: Option<&Amounts<'static>>) -> Amounts<'a> {
    let spec = aggregate(pod, &spec_requests, non_missing, true);
    let pod_level = match (&pod.status.allocated_resources, &pod.status.resources) {
        (Some(allocated), Some(configured)) => configured.requests.as_ref().map(|c| (allocated, c)),
        _ => None,
    };
    let (allocated, actuated) = match pod_level {
        Some((allocated, configured)) => (Amounts::of(allocated), Amounts::of(configured)),
        None => (
            aggregate(pod, &allocated_requests, non_missing, true),
            aggregate(pod, &actuated_requests, non_missing, true),
        ),
    };
    let spec = if pod.status.resize_infeasible { None } else { Some(spec) };
    effective(false, spec, Some(actuated), Some(allocated))
}

fn to_resource(amounts: &Amounts<'_>) -> Resource {
    let mut r = Resource::default();
    for (name, q) in &amounts.0 {
        r.add_named(name, q);
    }
    // A pod's own "pods" entry would be nonsense; the pod count is checked separately.
    r.allowed_pod_number = 0;
    r
}

fn to_non_zero(amounts: &Amounts<'_>) -> NonZero {
    NonZero {
        milli_cpu: amounts.get(CPU).map_or(0, |q| q.milli_value()),
        memory: amounts.get(MEMORY).map_or(0, |q| q.value()),
    }
}

/// A resource list being combined: exact quantities by name, sorted, each name once. A name set to
/// zero is present, as in Go's map: `NonMissingContainerRequests` fills only absent names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Amounts<'a>(Vec<(&'a str, Quantity)>);

impl<'a> Amounts<'a> {
    fn of(list: &'a ResourceList) -> Self {
        Amounts(list.iter().map(|(k, q)| (k.as_str(), *q)).collect())
    }

    fn get(&self, name: &str) -> Option<Quantity> {
        self.0.binary_search_by(|(n, _)| (*n).cmp(name)).ok().map(|i| self.0[i].1)
    }

    fn set(&mut self, name: &'a str, q: Quantity) {
        match self.0.binary_search_by(|(n, _)| (*n).cmp(name)) {
            Ok(i) => self.0[i].1 = q,
            Err(i) => self.0.insert(i, (name, q)),
        }
    }

    /// `addResourceList`.
    fn add(&mut self, other: &Amounts<'a>) {
        for &(name, q) in &other.0 {
            let sum = self.get(name).map_or(q, |have| have.saturating_add(q));
            self.set(name, sum);
        }
    }

    /// `maxResourceList`.
    fn max_with(&mut self, other: &Amounts<'a>) {
        for &(name, q) in &other.0 {
            if self.get(name).is_none_or(|have| q > have) {
                self.set(name, q);
            }
        }
    }

    /// `applyNonMissing`: each default whose name is absent here is added.
    fn with_missing(mut self, defaults: &Amounts<'static>) -> Self {
        for &(name, q) in &defaults.0 {
            if self.get(name).is_none() {
                self.set(name, q);
            }
        }
        self
    }

    /// `applyPodLevelResources` over the pod's spec: its pod-level resources replace the sums.
    fn set_pod_level(&mut self, list: &'a ResourceList) {
        for (name, q) in list {
            if is_pod_level_resource(name) {
                self.set(name, *q);
            }
        }
    }

    fn set_pod_level_amounts(&mut self, effective: &Amounts<'a>) {
        for &(name, q) in &effective.0 {
            if is_pod_level_resource(name) {
                self.set(name, q);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::SchedulerVersion::{V1_35, V1_36, V1_37};
    use serde_json::json;

    fn pod(spec: serde_json::Value, status: serde_json::Value) -> Pod {
        serde_json::from_value(json!({"metadata": {"name": "p"}, "spec": spec, "status": status})).unwrap()
    }

    fn container(name: &str, requests: serde_json::Value) -> serde_json::Value {
        json!({"name": name, "resources": {"requests": requests}})
    }

    fn sidecar(name: &str, requests: serde_json::Value) -> serde_json::Value {
        json!({"name": name, "restartPolicy": "Always", "resources": {"requests": requests}})
    }

    /// A container status: what the kubelet allocated and what it configured (`None`: not
    /// reported).
    fn status(
        name: &str,
        allocated: Option<serde_json::Value>,
        configured: Option<serde_json::Value>,
    ) -> serde_json::Value {
        let mut s = json!({"name": name});
        if let Some(a) = allocated {
            s["allocatedResources"] = a;
        }
        if let Some(c) = configured {
            s["resources"] = json!({"requests": c});
        }
        s
    }

    const INFEASIBLE: &str = "Infeasible";

    fn resize_pending(reason: &str) -> serde_json::Value {
        json!([{"type": "PodResizePending", "status": "True", "reason": reason}])
    }

    fn cpu_memory(r: &Resource) -> (i64, i64) {
        (r.milli_cpu, r.memory)
    }

    /// `PodRequests` without status (NodeResourcesFit's PreFilter): the spec, sidecars, init
    /// containers, pod-level resources and overhead. Upstream: component-helpers/resource
    /// `TestPodResourceRequests` and `TestPodLevelResourceRequests` (v0.37.2), the cases named.
    #[test]
    fn requests_to_place_follow_pod_requests() {
        let cases = [
            (
                "two containers add up",
                pod(
                    json!({"containers": [container("a", json!({"cpu": "100m", "memory": "1Gi"})), container("b", json!({"cpu": "200m"}))]}),
                    json!({}),
                ),
                (300, 1 << 30),
            ),
            (
                "nil options, larger init container",
                pod(
                    json!({"containers": [container("a", json!({"cpu": "100m"}))], "initContainers": [container("i", json!({"cpu": "1"}))]}),
                    json!({}),
                ),
                (1000, 0),
            ),
            (
                "nil options, larger containers",
                pod(
                    json!({"containers": [container("a", json!({"cpu": "1"}))], "initContainers": [container("i", json!({"cpu": "500m"}))]}),
                    json!({}),
                ),
                (1000, 0),
            ),
            (
                "restartable-init, init and regular: a sidecar adds to the containers and to later init containers",
                pod(
                    json!({"containers": [container("a", json!({"cpu": "100m"}))], "initContainers": [sidecar("s", json!({"cpu": "50m"})), container("i", json!({"cpu": "120m"}))]}),
                    json!({}),
                ),
                (170, 0),
            ),
            (
                "pod overhead included, last",
                pod(
                    json!({"containers": [container("a", json!({"cpu": "100m"}))], "overhead": {"cpu": "10m", "memory": "1Mi"}}),
                    json!({}),
                ),
                (110, 1 << 20),
            ),
            (
                "pod level memory and container level cpu resources",
                pod(
                    json!({"containers": [container("a", json!({"cpu": "2"}))], "resources": {"requests": {"memory": "100Mi"}}}),
                    json!({}),
                ),
                (2000, 100 << 20),
            ),
            (
                "both container-level and pod-level resources set: pod-level wins",
                pod(
                    json!({"containers": [container("a", json!({"cpu": "1", "memory": "50Mi"})), container("b", json!({"cpu": "1"}))], "resources": {"requests": {"cpu": "3", "memory": "100Mi"}}}),
                    json!({}),
                ),
                (3000, 100 << 20),
            ),
            (
                "pod-level resources, container-level resources, init and sidecar container set",
                pod(
                    json!({"containers": [container("a", json!({"cpu": "1"}))], "initContainers": [sidecar("s", json!({"cpu": "1"})), container("i", json!({"cpu": "5"}))], "resources": {"requests": {"cpu": "7710m"}}}),
                    json!({}),
                ),
                (7710, 0),
            ),
            (
                "pod level unsupported resources set at pod-level: ignored, the containers count",
                pod(
                    json!({"containers": [container("a", json!({"cpu": "1", "ephemeral-storage": "1Gi"}))], "resources": {"requests": {"ephemeral-storage": "5Gi"}}}),
                    json!({}),
                ),
                (1000, 0),
            ),
            (
                "pod-level requests, then overhead on top",
                pod(
                    json!({"containers": [container("a", json!({}))], "resources": {"requests": {"cpu": "1"}}, "overhead": {"cpu": "250m"}}),
                    json!({}),
                ),
                (1250, 0),
            ),
            (
                "resized, infeasible, but don't use status: the spec",
                pod(
                    json!({"containers": [container("container-1", json!({"cpu": "4"}))]}),
                    json!({"conditions": resize_pending(INFEASIBLE), "containerStatuses": [status("container-1", None, Some(json!({"cpu": "2"})))]}),
                ),
                (4000, 0),
            ),
        ];
        for (name, pod, want) in cases {
            assert_eq!(cpu_memory(&requests_to_place(&pod)), want, "{name}");
        }
    }

    #[test]
    fn pod_level_hugepages_and_unprefixed_names() {
        // Upstream: TestPodLevelResourceRequests, "pod-level resources, hugepage request/limit single page size".
        let p = pod(
            json!({"containers": [container("a", json!({"hugepages-2Mi": "10Mi", "gpu": "1", "example.com/foo": "2"}))], "resources": {"requests": {"hugepages-2Mi": "20Mi"}}}),
            json!({}),
        );
        let r = requests_to_place(&p);
        assert_eq!(r.scalar("hugepages-2Mi"), 20 << 20);
        assert_eq!(r.scalar("gpu"), 0, "an unprefixed name the scheduler does not count");
        assert_eq!(r.scalar("example.com/foo"), 2);
    }

    /// `PodRequests` with `UseStatusResources` (a pod on its node, `PodInfo.CalculateResource`).
    /// Upstream: `TestPodResourceRequests` and `TestAggregateContainerRequestsAndLimits` of
    /// component-helpers v0.37.2 (1.37) and v0.36.3 (1.35, 1.36: `determineEffectiveRequests` per
    /// container), the cases named.
    #[test]
    fn placed_requests_read_resizes_as_each_minor_does() {
        let cases = [
            (
                "resized, infeasible: what is configured, not the spec",
                pod(
                    json!({"containers": [container("container-1", json!({"cpu": "4"}))]}),
                    json!({"conditions": resize_pending(INFEASIBLE), "containerStatuses": [status("container-1", None, Some(json!({"cpu": "2"})))]}),
                ),
                [2000, 2000, 2000],
            ),
            (
                "resized, infeasible & in-progress: what is allocated",
                pod(
                    json!({"containers": [container("container-1", json!({"cpu": "6"}))]}),
                    json!({"conditions": resize_pending(INFEASIBLE), "containerStatuses": [status("container-1", Some(json!({"cpu": "4"})), Some(json!({"cpu": "2"})))]}),
                ),
                [4000, 4000, 4000],
            ),
            (
                "resized, no resize status: the larger spec",
                pod(
                    json!({"containers": [container("container-1", json!({"cpu": "4"}))]}),
                    json!({"containerStatuses": [status("container-1", None, Some(json!({"cpu": "2"})))]}),
                ),
                [4000, 4000, 4000],
            ),
            (
                "a deferred resize up: the spec, larger than what runs",
                pod(
                    json!({"containers": [container("c", json!({"cpu": "3"}))]}),
                    json!({"conditions": resize_pending("Deferred"), "containerStatuses": [status("c", Some(json!({"cpu": "1"})), Some(json!({"cpu": "1"})))]}),
                ),
                [3000, 3000, 3000],
            ),
            (
                "a resize down in progress: what is allocated until it is done",
                pod(
                    json!({"containers": [container("c", json!({"cpu": "1"}))]}),
                    json!({"containerStatuses": [status("c", Some(json!({"cpu": "3"})), Some(json!({"cpu": "3"})))]}),
                ),
                [3000, 3000, 3000],
            ),
            (
                "resized, restartable init container, infeasible",
                pod(
                    json!({"initContainers": [sidecar("restartable-init-1", json!({"cpu": "4"}))]}),
                    json!({"conditions": resize_pending(INFEASIBLE), "initContainerStatuses": [status("restartable-init-1", None, Some(json!({"cpu": "2"})))]}),
                ),
                [2000, 2000, 2000],
            ),
            (
                "aggregate request resolves max of sums instead of sum of maxes (1.37); 1.35 and 1.36 sum each container's max",
                pod(
                    json!({"containers": [container("c1", json!({"cpu": "1"})), container("c2", json!({"cpu": "2"}))]}),
                    json!({"containerStatuses": [
                        status("c1", Some(json!({"cpu": "2"})), Some(json!({"cpu": "2"}))),
                        status("c2", Some(json!({"cpu": "1"})), Some(json!({"cpu": "1"}))),
                    ]}),
                ),
                [4000, 4000, 3000],
            ),
            (
                "an allocation without configured resources: 1.35 and 1.36 need `resources` to read the status",
                pod(
                    json!({"containers": [container("c", json!({"cpu": "1"}))]}),
                    json!({"containerStatuses": [status("c", Some(json!({"cpu": "2"})), None)]}),
                ),
                [1000, 1000, 2000],
            ),
            (
                "a one-off init container's status: read by 1.37 only",
                pod(
                    json!({"containers": [container("c", json!({"cpu": "1"}))], "initContainers": [container("i", json!({"cpu": "1"}))]}),
                    json!({"initContainerStatuses": [status("i", Some(json!({"cpu": "3"})), Some(json!({"cpu": "3"})))]}),
                ),
                [1000, 1000, 3000],
            ),
            (
                "pod-level status: 1.36 and 1.37 read it (InPlacePodLevelResourcesVerticalScaling), 1.35 does not",
                pod(
                    json!({"containers": [container("c", json!({}))], "resources": {"requests": {"cpu": "1"}}}),
                    json!({"allocatedResources": {"cpu": "3"}, "resources": {"requests": {"cpu": "2"}}}),
                ),
                [1000, 3000, 3000],
            ),
            (
                "pod-level status with an infeasible resize: what is in place, not the spec",
                pod(
                    json!({"containers": [container("c", json!({}))], "resources": {"requests": {"cpu": "4"}}}),
                    json!({"conditions": resize_pending(INFEASIBLE), "allocatedResources": {"cpu": "2"}, "resources": {"requests": {"cpu": "2"}}}),
                ),
                [4000, 2000, 2000],
            ),
            (
                "aggregate container request resolves directly from pod status when PLR vertical scaling enabled (1.37)",
                pod(
                    json!({"containers": [container("c1", json!({"cpu": "1"}))]}),
                    json!({"allocatedResources": {"cpu": "4"}, "resources": {"requests": {"cpu": "3"}}}),
                ),
                [1000, 1000, 4000],
            ),
            (
                "falls back to container status aggregation when podAllocatedResources is nil",
                pod(
                    json!({"containers": [container("c1", json!({"cpu": "1"}))]}),
                    json!({"containerStatuses": [status("c1", Some(json!({"cpu": "6"})), Some(json!({"cpu": "5"})))], "resources": {"requests": {"cpu": "3"}}}),
                ),
                [6000, 6000, 6000],
            ),
        ];
        for (name, pod, want) in cases {
            for (version, cpu) in [V1_35, V1_36, V1_37].into_iter().zip(want) {
                assert_eq!(placed_requests(&pod, version).0.milli_cpu, cpu, "{name}, {version}");
            }
        }
    }

    /// 1.36 sets each pod-level request the spec names to its effective amount (a name only in the
    /// status is not counted); 1.37 applies every pod-level resource of the effective list.
    #[test]
    fn pod_level_status_names_only_in_the_status() {
        let p = pod(
            json!({"containers": [container("c", json!({"memory": "1Gi"}))], "resources": {"requests": {"cpu": "1"}}}),
            json!({"allocatedResources": {"cpu": "1", "memory": "3Gi"}, "resources": {"requests": {"cpu": "1"}}}),
        );
        assert_eq!(cpu_memory(&placed_requests(&p, V1_35).0), (1000, 1 << 30));
        assert_eq!(cpu_memory(&placed_requests(&p, V1_36).0), (1000, 1 << 30));
        assert_eq!(cpu_memory(&placed_requests(&p, V1_37).0), (1000, 3 << 30));
    }

    /// The non-zero amounts: `getNonMissingContainerRequests` for a placed pod (defaults per
    /// container without pod-level requests; with them, only for a resource the pod lacks) and
    /// `calculatePodResourceRequest`'s defaults per container for the pod being scored. Upstream:
    /// framework `TestNewNodeInfo`/`TestGetNonMissingContainerRequests` (types_test.go) and
    /// noderesources `TestGetNonzeroRequests`'s rule "override if un-set, but not if explicitly set
    /// to zero".
    #[test]
    fn non_zero_requests_fill_in_the_defaults() {
        let nz = |cpu, memory| NonZero { milli_cpu: cpu, memory };
        let cases = [
            (
                "nothing set",
                pod(json!({"containers": [container("a", json!({}))]}), json!({})),
                nz(100, 200 << 20),
                nz(100, 200 << 20),
            ),
            (
                "only cpu set",
                pod(json!({"containers": [container("a", json!({"cpu": "200m"}))]}), json!({})),
                nz(200, 200 << 20),
                nz(200, 200 << 20),
            ),
            (
                "an explicit zero counts as zero",
                pod(json!({"containers": [container("a", json!({"cpu": "0", "memory": "1Gi"}))]}), json!({})),
                nz(0, 1 << 30),
                nz(0, 1 << 30),
            ),
            (
                "a zero in one container, nothing in the other",
                pod(
                    json!({"containers": [container("a", json!({"memory": "0"})), container("b", json!({}))]}),
                    json!({}),
                ),
                nz(200, 200 << 20),
                nz(200, 200 << 20),
            ),
            (
                "a larger init container wins",
                pod(
                    json!({"containers": [container("a", json!({}))], "initContainers": [container("i", json!({"cpu": "2"}))]}),
                    json!({}),
                ),
                nz(2000, 200 << 20),
                nz(2000, 200 << 20),
            ),
            ("no containers", pod(json!({}), json!({})), nz(0, 0), nz(0, 0)),
            (
                "pod-level memory, one container with cpu: placed counts no cpu default, the score one per container",
                pod(
                    json!({"containers": [container("a", json!({"cpu": "1"})), container("b", json!({}))], "resources": {"requests": {"memory": "1Gi"}}}),
                    json!({}),
                ),
                nz(1000, 1 << 30),
                nz(1100, 1 << 30),
            ),
            (
                "pod-level memory, no container with cpu: the defaults per container for cpu",
                pod(
                    json!({"containers": [container("a", json!({})), container("b", json!({}))], "resources": {"requests": {"memory": "1Gi"}}}),
                    json!({}),
                ),
                nz(200, 1 << 30),
                nz(200, 1 << 30),
            ),
            (
                "pod-level cpu and memory: no defaults",
                pod(
                    json!({"containers": [container("a", json!({}))], "resources": {"requests": {"cpu": "7710m", "memory": "1Gi"}}}),
                    json!({}),
                ),
                nz(7710, 1 << 30),
                nz(7710, 1 << 30),
            ),
            (
                "overhead is added to the non-zero amounts",
                pod(json!({"containers": [container("a", json!({}))], "overhead": {"cpu": "10m"}}), json!({})),
                nz(110, 200 << 20),
                nz(110, 200 << 20),
            ),
        ];
        for (name, pod, placed, scored) in cases {
            for version in SchedulerVersion::ALL {
                assert_eq!(placed_requests(&pod, version).1, placed, "{name}, placed, {version}");
                assert_eq!(requests_to_score(&pod, version), scored, "{name}, scored, {version}");
            }
        }
    }

    /// ResourceLimitsPriority's limits: containers combined, pod-level limits in their place
    /// (`PodLimits`), no overhead.
    #[test]
    fn limits_take_pod_level_limits_and_no_overhead() {
        let p = pod(
            json!({"containers": [{"name": "a", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}], "resources": {"limits": {"cpu": "2"}}, "overhead": {"cpu": "1"}}),
            json!({}),
        );
        assert_eq!(cpu_memory(&limits(&p)), (2000, 1 << 30));
    }

    #[test]
    fn pod_level_resources_are_cpu_memory_and_hugepages() {
        // Upstream: TestIsPodLevelResourcesSet, TestIsSupportedPodLevelResource.
        let with = |resources: serde_json::Value| pod(json!({"resources": resources}), json!({}));
        assert!(!has_pod_level_resources(&with(json!({}))), "empty resources struct");
        assert!(
            !has_pod_level_resources(&with(json!({"requests": {"ephemeral-storage": "1Gi"}}))),
            "only unsupported requests"
        );
        assert!(has_pod_level_resources(&with(json!({"limits": {"hugepages-2Mi": "2Mi"}}))));
        assert!(!has_pod_level_requests(&with(json!({"limits": {"cpu": "1"}}))), "limits are not requests");
        assert!(has_pod_level_requests(&with(json!({"requests": {"example.com/x": "1", "memory": "1Gi"}}))));
    }
}
