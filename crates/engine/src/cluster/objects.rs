//! The Kubernetes objects as the extender reads them: only the fields the engine looks at.
//!
//! These decode from the same JSON/YAML as `k8s-openapi`'s full types (kubectl output, informer
//! objects, the `Pod` and `Nodes` of a request) and reuse its types for the nested parts (taints,
//! tolerations, affinity, ports). Everything else (managedFields, env, probes, ...) is skipped while
//! parsing, never built. Quantities are parsed while decoding, so an invalid one is reported with the
//! path of the field that holds it. `null` reads as empty, as in Go.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Affinity, ContainerPort, Taint, Toleration, TopologySpreadConstraint, Volume};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

use crate::cluster::intern::IStr;
use crate::cluster::labels::Labels;
use crate::cluster::node_images::Images;
use crate::cluster::resource_list::ResourceList;
use crate::cluster::shared_list::SharedList;
use crate::quantity::Quantity;

/// Reads `null` (and a missing field, with `#[serde(default)]`) as the type's default.
pub(crate) fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// Reads a JSON object (or `null`, as the default) into a struct. serde's derive also takes a struct
/// written as an array of its field values; Go does not, and neither does the API, so that form is
/// refused here.
pub(crate) fn object<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    struct ObjectVisitor<T>(PhantomData<T>);
    impl<'de, T: Deserialize<'de> + Default> Visitor<'de> for ObjectVisitor<T> {
        type Value = T;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<T, E> {
            Ok(T::default())
        }
        fn visit_none<E: serde::de::Error>(self) -> Result<T, E> {
            Ok(T::default())
        }
        fn visit_map<M: MapAccess<'de>>(self, map: M) -> Result<T, M::Error> {
            T::deserialize(MapAccessDeserializer::new(map))
        }
    }
    d.deserialize_any(ObjectVisitor(PhantomData))
}

/// A value decoded with [`object`]: for the top of a document and for list elements.
#[derive(Debug, Clone, Default)]
pub struct Object<T>(pub T);

impl<'de, T: Deserialize<'de> + Default> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        object(d).map(Object)
    }
}

/// A list of objects (or `null`, as empty), each read with [`object`].
pub(crate) fn objects<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    let list: Option<Vec<Object<T>>> = Option::deserialize(d)?;
    Ok(list.unwrap_or_default().into_iter().map(|o| o.0).collect())
}

/// The parts of a node's `metadata` the extender reads.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ObjectMeta {
    #[serde(deserialize_with = "null_as_default")]
    pub name: String,
    #[serde(deserialize_with = "null_as_default")]
    pub uid: String,
    /// Tells a watch where it is; the model keeps it so that a relist can leave the nodes and pods
    /// it already has at that version as they are.
    #[serde(deserialize_with = "null_as_default")]
    pub resource_version: String,
    #[serde(deserialize_with = "null_as_default")]
    pub labels: BTreeMap<String, String>,
    /// Only the annotations the extender reads (see [`annotations_that_matter`]).
    #[serde(deserialize_with = "annotations_that_matter")]
    pub annotations: BTreeMap<String, String>,
}

/// The parts of a pod's `metadata` the extender reads. The label keys and values are interned and
/// the owner references shared between the pods of one owner: the model keeps a hundred thousand
/// of these.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodMeta {
    #[serde(deserialize_with = "null_as_default")]
    pub name: String,
    #[serde(deserialize_with = "null_as_default")]
    pub namespace: String,
    #[serde(deserialize_with = "null_as_default")]
    pub uid: String,
    /// See [`ObjectMeta::resource_version`].
    #[serde(deserialize_with = "null_as_default")]
    pub resource_version: String,
    pub labels: Labels,
    pub owner_references: SharedList<OwnerReference>,
    /// `metadata.deletionTimestamp`: set once a pod is terminating (its grace period running).
    /// EvenPodsSpread and EvenPodsSpreadPriority do not count such pods, as upstream.
    #[serde(deserialize_with = "rfc3339")]
    pub deletion_timestamp: Option<std::time::SystemTime>,
}

/// The node annotation NodePreferAvoidPodsPriority reads.
pub const PREFER_AVOID_PODS_ANNOTATION: &str = "scheduler.alpha.kubernetes.io/preferAvoidPods";

/// Keeps the annotations a predicate or priority reads and drops the rest (objects carry many,
/// some large, such as last-applied-configuration).
fn annotations_that_matter<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, String>, D::Error> {
    let all: Option<BTreeMap<String, String>> = Option::deserialize(d)?;
    Ok(all.unwrap_or_default().into_iter().filter(|(k, _)| k == PREFER_AVOID_PODS_ANNOTATION).collect())
}

/// A Node.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Node {
    #[serde(deserialize_with = "object")]
    pub metadata: ObjectMeta,
    #[serde(deserialize_with = "object")]
    pub spec: NodeSpec,
    #[serde(deserialize_with = "object")]
    pub status: NodeStatus,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeSpec {
    #[serde(deserialize_with = "null_as_default")]
    pub unschedulable: bool,
    #[serde(deserialize_with = "null_as_default")]
    pub taints: Vec<Taint>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeStatus {
    pub allocatable: ResourceList,
    #[serde(deserialize_with = "objects")]
    pub conditions: Vec<NodeCondition>,
    pub images: Images,
}

/// A node condition: only its type and status matter to the predicates.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct NodeCondition {
    #[serde(rename = "type", deserialize_with = "null_as_default")]
    pub type_: String,
    #[serde(deserialize_with = "null_as_default")]
    pub status: String,
}

/// A Pod.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Pod {
    #[serde(deserialize_with = "object")]
    pub metadata: PodMeta,
    #[serde(deserialize_with = "object")]
    pub spec: PodSpec,
    #[serde(deserialize_with = "object")]
    pub status: PodStatus,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodSpec {
    #[serde(deserialize_with = "null_as_default")]
    pub node_name: String,
    #[serde(deserialize_with = "objects")]
    pub containers: Vec<Container>,
    #[serde(deserialize_with = "objects")]
    pub init_containers: Vec<Container>,
    pub overhead: ResourceList,
    /// Pod-level resources (`spec.resources`, beta and on by default since 1.34): requests of cpu,
    /// memory or hugepages here stand for the containers' sum (see `cluster::pod_requests`).
    #[serde(deserialize_with = "object")]
    pub resources: ResourceRequirements,
    #[serde(deserialize_with = "null_as_default")]
    pub node_selector: BTreeMap<String, String>,
    pub affinity: Option<Affinity>,
    pub tolerations: SharedList<Toleration>,
    pub priority: Option<i32>,
    /// Only the volumes a predicate looks at (see [`volumes_that_matter`]).
    #[serde(deserialize_with = "volumes_that_matter")]
    pub volumes: Vec<Volume>,
    #[serde(deserialize_with = "null_as_default")]
    pub topology_spread_constraints: Vec<TopologySpreadConstraint>,
    /// As the pod has it; [`PodSpec::scheduler`] reads it with the API server's default.
    #[serde(deserialize_with = "interned")]
    pub scheduler_name: IStr,
}

/// The scheduler of a pod that names none: the API server's default (`DefaultSchedulerName`).
pub const DEFAULT_SCHEDULER: &str = "default-scheduler";

impl PodSpec {
    /// The scheduler that places the pod.
    pub fn scheduler(&self) -> &str {
        if self.scheduler_name.is_empty() {
            DEFAULT_SCHEDULER
        } else {
            &self.scheduler_name
        }
    }
}

/// A string many objects repeat (a scheduler's name), kept once.
fn interned<'de, D: Deserializer<'de>>(d: D) -> Result<IStr, D::Error> {
    Ok(Option::<std::borrow::Cow<'de, str>>::deserialize(d)?.map(|s| IStr::new(&s)).unwrap_or_default())
}

/// Keeps the volumes the volume predicates read (cloud disks, RBD, iSCSI, CSI, claims, generic
/// ephemeral volumes) and drops the rest (configMap, secret, projected, emptyDir, ...), which a
/// pod has many of and no predicate needs.
fn host_ports_only<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<ContainerPort>, D::Error> {
    let all: Option<Vec<ContainerPort>> = Option::deserialize(d)?;
    let mut kept: Vec<ContainerPort> =
        all.unwrap_or_default().into_iter().filter(|p| p.host_port.is_some_and(|h| h > 0)).collect();
    kept.shrink_to_fit();
    Ok(kept)
}

fn volumes_that_matter<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Volume>, D::Error> {
    let all: Option<Vec<Volume>> = Option::deserialize(d)?;
    let mut kept: Vec<Volume> = all
        .unwrap_or_default()
        .into_iter()
        .filter(|v| {
            v.gce_persistent_disk.is_some()
                || v.aws_elastic_block_store.is_some()
                || v.rbd.is_some()
                || v.iscsi.is_some()
                || v.azure_disk.is_some()
                || v.csi.is_some()
                || v.persistent_volume_claim.is_some()
                || v.ephemeral.is_some()
        })
        .collect();
    // The filter reuses the decoded list's buffer, kilobytes per pod (a Volume is large and every
    // pod has its service-account volume): give it back.
    kept.shrink_to_fit();
    Ok(kept)
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Container {
    #[serde(deserialize_with = "null_as_default")]
    pub name: String,
    /// The image reference (ImageLocalityPriority).
    #[serde(deserialize_with = "null_as_default")]
    pub image: String,
    #[serde(deserialize_with = "object")]
    pub resources: ResourceRequirements,
    /// Only the ports that claim a host port (PodFitsHostPorts); the others are dropped.
    #[serde(deserialize_with = "host_ports_only")]
    pub ports: Vec<ContainerPort>,
    /// `Always` on an init container makes it a sidecar that runs beside the app containers.
    pub restart_policy: Option<String>,
}

impl Container {
    /// An init container with `restartPolicy: Always`: a sidecar, which runs beside the app
    /// containers for the pod's life.
    pub fn is_sidecar(&self) -> bool {
        self.restart_policy.as_deref() == Some("Always")
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ResourceRequirements {
    pub requests: ResourceList,
    pub limits: ResourceList,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodStatus {
    #[serde(deserialize_with = "null_as_default")]
    pub phase: String,
    #[serde(deserialize_with = "null_as_default")]
    pub nominated_node_name: String,
    /// When the kubelet started the pod (`status.startTime`): among victims of equal priority the
    /// earlier started is the more important (upstream's `MoreImportantPod`).
    #[serde(deserialize_with = "rfc3339")]
    pub start_time: Option<std::time::SystemTime>,
    /// `status.qosClass`, as the API server set it when the pod was created (`GetPodQOS` reads it
    /// before computing one).
    #[serde(deserialize_with = "null_as_default")]
    pub qos_class: String,
    /// Whether the kubelet found a resize infeasible: the first `PodResizePending` condition has
    /// the reason `Infeasible` (`IsPodResizeInfeasible`). The other conditions are not kept.
    #[serde(rename = "conditions", deserialize_with = "resize_infeasible")]
    pub resize_infeasible: bool,
    /// What the kubelet reports of each container's resources while it resizes them in place;
    /// statuses that report none are not kept.
    #[serde(deserialize_with = "resource_statuses")]
    pub container_statuses: Vec<ContainerResourceStatus>,
    #[serde(deserialize_with = "resource_statuses")]
    pub init_container_statuses: Vec<ContainerResourceStatus>,
    /// Pod-level `status.allocatedResources` (1.36+ kubelets, `InPlacePodLevelResourcesVerticalScaling`).
    #[serde(deserialize_with = "optional_list")]
    pub allocated_resources: Option<ResourceList>,
    /// Pod-level `status.resources`: what the pod's cgroup is configured with.
    #[serde(deserialize_with = "optional_object")]
    pub resources: Option<StatusResources>,
}

/// A container's status as the resource counting reads it: its name, what the kubelet admitted
/// (`allocatedResources`) and what it configured (`resources`). `None` is a field the status does
/// not carry, which the counting tells apart from an empty one, as Go tells `nil` from an empty
/// map.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", default)]
pub struct ContainerResourceStatus {
    #[serde(deserialize_with = "null_as_default")]
    pub name: String,
    #[serde(deserialize_with = "optional_list")]
    pub allocated_resources: Option<ResourceList>,
    #[serde(deserialize_with = "optional_object")]
    pub resources: Option<StatusResources>,
}

impl ContainerResourceStatus {
    /// A status that reports no resources changes nothing in the counting.
    fn reports_resources(&self) -> bool {
        self.allocated_resources.is_some() || self.resources.is_some()
    }
}

/// `resources` of a status: requests and limits, each possibly absent.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct StatusResources {
    #[serde(deserialize_with = "optional_list")]
    pub requests: Option<ResourceList>,
    #[serde(deserialize_with = "optional_list")]
    pub limits: Option<ResourceList>,
}

/// A resource list that may be absent: `null` and a missing field are `None`.
fn optional_list<'de, D: Deserializer<'de>>(d: D) -> Result<Option<ResourceList>, D::Error> {
    Option::<ResourceList>::deserialize(d)
}

/// An object that may be absent (`null` or missing: `None`), refusing arrays as [`object`] does.
fn optional_object<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<Object<T>>::deserialize(d)?.map(|o| o.0))
}

/// The container statuses that report resources, each read with [`object`].
fn resource_statuses<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<ContainerResourceStatus>, D::Error> {
    let mut kept: Vec<ContainerResourceStatus> = objects(d)?;
    kept.retain(ContainerResourceStatus::reports_resources);
    kept.shrink_to_fit();
    Ok(kept)
}

/// A pod condition as [`resize_infeasible`] reads it.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PodCondition {
    #[serde(rename = "type", deserialize_with = "null_as_default")]
    type_: String,
    #[serde(deserialize_with = "null_as_default")]
    reason: String,
}

/// `IsPodResizeInfeasible`: the first `PodResizePending` condition says `Infeasible`.
fn resize_infeasible<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    let conditions: Vec<PodCondition> = objects(d)?;
    Ok(conditions.iter().find(|c| c.type_ == "PodResizePending").is_some_and(|c| c.reason == "Infeasible"))
}

/// An RFC 3339 time as the API server writes it (`2024-05-01T10:00:00Z`, fractions allowed), or
/// `null`.
fn rfc3339<'de, D: Deserializer<'de>>(d: D) -> Result<Option<std::time::SystemTime>, D::Error> {
    let Some(text) = Option::<String>::deserialize(d)? else { return Ok(None) };
    humantime::parse_rfc3339_weak(&text).map(Some).map_err(|e| {
        serde::de::Error::custom(format!(
            "invalid time {text:?}: {e}; expected RFC 3339 in UTC such as 2024-05-01T10:00:00Z"
        ))
    })
}

/// The first quantity below zero in a resource list, as `(name, quantity)`.
fn first_negative(list: &ResourceList) -> Option<(&str, &Quantity)> {
    list.iter().find(|(_, q)| **q < Quantity::default()).map(|(k, q)| (k.as_str(), q))
}

/// The message for a negative quantity at `path`, as the API server's validation words it.
fn negative_at(path: String, q: &Quantity) -> (String, String) {
    (path, format!("must be greater than or equal to 0 (found {q})"))
}

/// The first negative quantity of what the kubelet reports at `at()` (a container's status or the
/// pod's; the path made only for a negative one): its allocated resources, then its configured
/// requests.
fn negative_in_status(
    at: impl Fn() -> String,
    allocated: &Option<ResourceList>,
    configured: &Option<StatusResources>,
) -> Option<(String, String)> {
    let configured = configured.as_ref().and_then(|r| r.requests.as_ref());
    [("allocatedResources", allocated.as_ref()), ("resources.requests", configured)].into_iter().find_map(
        |(kind, list)| list.and_then(first_negative).map(|(k, q)| negative_at(format!("{}.{kind}.{k}", at()), q)),
    )
}

impl Node {
    /// The API server never stores a negative allocatable; one here is a broken input:
    /// `(path, message)` of the first.
    pub fn negative_quantity(&self) -> Option<(String, String)> {
        first_negative(&self.status.allocatable).map(|(k, q)| negative_at(format!("status.allocatable.{k}"), q))
    }
}

impl Pod {
    /// The API server refuses negative requests, limits and overhead; one here is a broken input:
    /// `(path, message)` of the first.
    pub fn negative_quantity(&self) -> Option<(String, String)> {
        let lists = [("containers", &self.spec.containers), ("initContainers", &self.spec.init_containers)];
        for (field, containers) in lists {
            for (i, c) in containers.iter().enumerate() {
                for (kind, list) in [("requests", &c.resources.requests), ("limits", &c.resources.limits)] {
                    if let Some((k, q)) = first_negative(list) {
                        return Some(negative_at(format!("spec.{field}[{i}].resources.{kind}.{k}"), q));
                    }
                }
            }
        }
        for (kind, list) in [("requests", &self.spec.resources.requests), ("limits", &self.spec.resources.limits)] {
            if let Some((k, q)) = first_negative(list) {
                return Some(negative_at(format!("spec.resources.{kind}.{k}"), q));
            }
        }
        if let Some((k, q)) = first_negative(&self.spec.overhead) {
            return Some(negative_at(format!("spec.overhead.{k}"), q));
        }
        // What the kubelet reports of a resize counts too (with an infeasible resize, alone).
        let statuses = [
            ("containerStatuses", &self.status.container_statuses),
            ("initContainerStatuses", &self.status.init_container_statuses),
        ];
        for (field, list) in statuses {
            for (i, s) in list.iter().enumerate() {
                let at = || format!("status.{field}[{i}]");
                let found = negative_in_status(at, &s.allocated_resources, &s.resources);
                if found.is_some() {
                    return found;
                }
            }
        }
        negative_in_status(|| "status".to_string(), &self.status.allocated_resources, &self.status.resources)
    }

    /// Forgets the container statuses that change nothing in the pod's requests: the kubelet reports
    /// `allocatedResources` and `resources` for every container of every running pod, and while no
    /// resize is under way they equal the spec. Kept: a status that differs from its container's
    /// spec, every status of a pod whose resize is infeasible (then 1.37 counts only what the
    /// statuses say), and the pod-level status. `cluster::pod_requests`' tests hold the requests of
    /// every generated resize shape to be the same with and without the forgotten ones.
    pub fn forget_statuses_that_change_nothing(&mut self) {
        if self.status.resize_infeasible {
            return;
        }
        let spec = &self.spec;
        let changes_nothing = |s: &ContainerResourceStatus| {
            let requests = spec.containers.iter().chain(&spec.init_containers).find(|c| c.name == s.name);
            requests.is_some_and(|c| {
                let same = |list: Option<&ResourceList>| list.is_none_or(|l| *l == c.resources.requests);
                same(s.allocated_resources.as_ref()) && same(s.resources.as_ref().and_then(|r| r.requests.as_ref()))
            })
        };
        self.status.container_statuses.retain(|s| !changes_nothing(s));
        self.status.init_container_statuses.retain(|s| !changes_nothing(s));
    }

    /// Gives back the spare capacity decoding leaves in lists (a decoded list of one holds room
    /// for four): the model keeps a hundred thousand pods for as long as they run.
    pub fn shrink_to_fit(&mut self) {
        for c in self.spec.containers.iter_mut().chain(self.spec.init_containers.iter_mut()) {
            c.ports.shrink_to_fit();
        }
        self.spec.containers.shrink_to_fit();
        self.spec.init_containers.shrink_to_fit();
        self.status.container_statuses.shrink_to_fit();
        self.status.init_container_statuses.shrink_to_fit();
        self.spec.volumes.shrink_to_fit();
        self.spec.topology_spread_constraints.shrink_to_fit();
    }

    /// The pod's priority; a pod without one has priority 0, as in kube-scheduler.
    pub fn priority(&self) -> i32 {
        self.spec.priority.unwrap_or(0)
    }

    /// Succeeded and Failed pods hold no resources and are not in the scheduler's cache.
    pub fn is_terminal(&self) -> bool {
        matches!(self.status.phase.as_str(), "Succeeded" | "Failed")
    }

    /// A pod being deleted (`metadata.deletionTimestamp` set): it still holds its resources until
    /// it is gone, but the spreading rules no longer count it (upstream: "Bypass terminating Pod").
    pub fn is_terminating(&self) -> bool {
        self.metadata.deletion_timestamp.is_some()
    }

    /// `namespace/name`, for messages.
    pub fn key(&self) -> String {
        format!("{}/{}", self.metadata.namespace, self.metadata.name)
    }

    /// True for the BestEffort QoS class, as `GetPodQOS` reads it: `status.qosClass`, which the API
    /// server sets when it creates the pod; for a pod without one (a file, a test), computed: no
    /// cpu or memory requested or limited, by the pod-level resources when it has them, else by any
    /// container (init containers included).
    pub fn is_best_effort(&self) -> bool {
        if !self.status.qos_class.is_empty() {
            return self.status.qos_class == "BestEffort";
        }
        let sets_cpu_or_memory = |r: &ResourceRequirements| {
            [&r.requests, &r.limits]
                .iter()
                .any(|m| m.iter().any(|(k, q)| (k == "cpu" || k == "memory") && !q.is_zero()))
        };
        if crate::cluster::pod_requests::has_pod_level_resources(self) {
            return !sets_cpu_or_memory(&self.spec.resources);
        }
        !self.spec.containers.iter().chain(&self.spec.init_containers).any(|c| sets_cpu_or_memory(&c.resources))
    }

    /// `spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution`.
    pub fn required_affinity_terms(&self) -> &[k8s_openapi::api::core::v1::PodAffinityTerm] {
        self.spec
            .affinity
            .as_ref()
            .and_then(|a| a.pod_affinity.as_ref())
            .and_then(|pa| pa.required_during_scheduling_ignored_during_execution.as_deref())
            .unwrap_or_default()
    }

    /// `spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution`.
    pub fn required_anti_affinity_terms(&self) -> &[k8s_openapi::api::core::v1::PodAffinityTerm] {
        self.spec
            .affinity
            .as_ref()
            .and_then(|a| a.pod_anti_affinity.as_ref())
            .and_then(|pa| pa.required_during_scheduling_ignored_during_execution.as_deref())
            .unwrap_or_default()
    }

    /// `spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution`.
    pub fn preferred_affinity_terms(&self) -> &[k8s_openapi::api::core::v1::WeightedPodAffinityTerm] {
        self.spec
            .affinity
            .as_ref()
            .and_then(|a| a.pod_affinity.as_ref())
            .and_then(|pa| pa.preferred_during_scheduling_ignored_during_execution.as_deref())
            .unwrap_or_default()
    }

    /// `spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution`.
    pub fn preferred_anti_affinity_terms(&self) -> &[k8s_openapi::api::core::v1::WeightedPodAffinityTerm] {
        self.spec
            .affinity
            .as_ref()
            .and_then(|a| a.pod_anti_affinity.as_ref())
            .and_then(|pa| pa.preferred_during_scheduling_ignored_during_execution.as_deref())
            .unwrap_or_default()
    }

    /// Whether, placed, the pod has terms that score other pods (InterPodAffinityPriority):
    /// required pod affinity, preferred pod affinity or preferred anti-affinity. Required
    /// anti-affinity only filters.
    pub fn has_scoring_affinity_terms(&self) -> bool {
        !self.required_affinity_terms().is_empty()
            || !self.preferred_affinity_terms().is_empty()
            || !self.preferred_anti_affinity_terms().is_empty()
    }

    /// Whether the pod has pod affinity or anti-affinity terms (required or preferred).
    pub fn has_pod_affinity_terms(&self) -> bool {
        self.spec.affinity.as_ref().is_some_and(|a| a.pod_affinity.is_some() || a.pod_anti_affinity.is_some())
    }

    /// Whether `other` is the same pod: by UID when both have one, else by namespace and name.
    pub fn is_same_pod(&self, other: &Pod) -> bool {
        if !self.metadata.uid.is_empty() && !other.metadata.uid.is_empty() {
            self.metadata.uid == other.metadata.uid
        } else {
            self.metadata.namespace == other.metadata.namespace && self.metadata.name == other.metadata.name
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_volumes_that_matter_are_kept() {
        let pod: Pod = serde_json::from_str(
            r#"{"spec":{"volumes":[{"name":"tmp","emptyDir":{}},{"name":"data","persistentVolumeClaim":{"claimName":"c"}},{"name":"cfg","configMap":{"name":"x"}},{"name":"pd","gcePersistentDisk":{"pdName":"d"}}]}}"#,
        )
        .unwrap();
        let names: Vec<_> = pod.spec.volumes.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["data", "pd"]);
    }

    #[test]
    fn start_time_is_read_as_a_time() {
        let at = |json: &str| serde_json::from_str::<Pod>(json).map(|p| p.status.start_time).map_err(|e| e.to_string());
        let t = at(r#"{"status":{"startTime":"2024-05-01T10:00:00Z"}}"#).unwrap().unwrap();
        assert_eq!(humantime::format_rfc3339(t).to_string(), "2024-05-01T10:00:00Z");
        assert_eq!(at(r#"{"status":{"startTime":null}}"#), Ok(None));
        assert_eq!(at(r#"{"status":{}}"#), Ok(None));
        assert!(at(r#"{"status":{"startTime":"yesterday"}}"#).unwrap_err().contains("invalid time \"yesterday\""));
    }

    #[test]
    fn deletion_timestamp_is_kept() {
        let at = |json: &str| serde_json::from_str::<Pod>(json).map(|p| p.is_terminating()).map_err(|e| e.to_string());
        assert_eq!(at(r#"{"metadata":{"deletionTimestamp":"2024-05-01T10:00:00Z"}}"#), Ok(true));
        assert_eq!(at(r#"{"metadata":{"deletionTimestamp":null}}"#), Ok(false));
        assert_eq!(at(r#"{"metadata":{}}"#), Ok(false));
        let err = at(r#"{"metadata":{"deletionTimestamp":"soon"}}"#).unwrap_err();
        assert!(err.contains("invalid time \"soon\""), "{err}");
    }

    #[test]
    fn nulls_read_as_empty_like_go() {
        let pod: Pod = serde_json::from_str(
            r#"{"metadata":{"name":"a","labels":null},"spec":{"containers":null,"tolerations":null},"status":null}"#,
        )
        .unwrap();
        assert_eq!(pod.metadata.name, "a");
        assert!(pod.spec.containers.is_empty());
    }

    #[test]
    fn arrays_are_not_objects() {
        for json in [
            r#"[]"#,
            r#"{"metadata":[]}"#,
            r#"{"spec":["n1"]}"#,
            r#"{"spec":{"containers":[[]]}}"#,
            r#"{"spec":{"containers":[{"resources":[{}]}]}}"#,
            r#"{"status":["Running"]}"#,
        ] {
            let mut de = serde_json::Deserializer::from_str(json);
            let got = serde_path_to_error::deserialize::<_, Object<Pod>>(&mut de);
            let err = got.err().unwrap_or_else(|| panic!("{json} was accepted"));
            assert!(err.inner().to_string().contains("expected an object"), "{json}: {err}");
        }
        let node: Result<Object<Node>, _> = serde_json::from_str(r#"{"status":{"conditions":[["Ready","True"]]}}"#);
        assert!(node.is_err());
    }

    #[test]
    fn invalid_quantity_is_reported_with_its_path() {
        let json = r#"{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"lots"}}}]}}"#;
        let mut de = serde_json::Deserializer::from_str(json);
        let err = serde_path_to_error::deserialize::<_, Pod>(&mut de).unwrap_err();
        assert_eq!(err.path().to_string(), "spec.containers[0].resources.requests.cpu");
        assert!(err.inner().to_string().contains("invalid quantity \"lots\""), "{}", err.inner());
    }

    #[test]
    fn negative_quantities_are_found_with_their_path() {
        let pod: Pod = serde_json::from_str(
            r#"{"spec":{"containers":[{"resources":{"requests":{"cpu":"1"}}}],"initContainers":[{"resources":{"limits":{"example.com/foo":"-1"}}}]}}"#,
        )
        .unwrap();
        assert_eq!(
            pod.negative_quantity(),
            Some((
                "spec.initContainers[0].resources.limits.example.com/foo".to_string(),
                "must be greater than or equal to 0 (found -1)".to_string()
            ))
        );
        let node: Node = serde_json::from_str(r#"{"status":{"allocatable":{"cpu":"-100m"}}}"#).unwrap();
        assert_eq!(node.negative_quantity().map(|(p, _)| p), Some("status.allocatable.cpu".to_string()));
        assert_eq!(Pod::default().negative_quantity(), None);
        let resized: Pod = serde_json::from_str(
            r#"{"status":{"containerStatuses":[{"name":"c","allocatedResources":{"cpu":"1"},"resources":{"requests":{"cpu":"-1"}}}]}}"#,
        )
        .unwrap();
        assert_eq!(
            resized.negative_quantity().map(|(p, _)| p),
            Some("status.containerStatuses[0].resources.requests.cpu".to_string())
        );
        let pod_level: Pod = serde_json::from_str(r#"{"status":{"allocatedResources":{"memory":"-1Gi"}}}"#).unwrap();
        assert_eq!(pod_level.negative_quantity().map(|(p, _)| p), Some("status.allocatedResources.memory".to_string()));
    }

    #[test]
    fn best_effort_means_no_cpu_or_memory_anywhere() {
        let be: Pod = serde_json::from_str(r#"{"spec":{"containers":[{"name":"c"}]}}"#).unwrap();
        assert!(be.is_best_effort());
        let burstable: Pod = serde_json::from_str(
            r#"{"spec":{"containers":[{"name":"c"}],"initContainers":[{"name":"i","resources":{"limits":{"memory":"1Gi"}}}]}}"#,
        )
        .unwrap();
        assert!(!burstable.is_best_effort());
        let extended_only: Pod = serde_json::from_str(
            r#"{"spec":{"containers":[{"name":"c","resources":{"requests":{"example.com/gpu":"1"}}}]}}"#,
        )
        .unwrap();
        assert!(extended_only.is_best_effort());
    }
}
