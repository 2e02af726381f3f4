//! `NodeInfo`: a node and what runs on it, with the sums the predicates need computed once, when the
//! cluster changes, never per request.

use std::sync::Arc;

use crate::cluster::host_ports::{pod_host_ports, HostPort};
use crate::cluster::intern::IStr;
use crate::cluster::node_images::{ImageName, NodeImages};
use crate::cluster::node_zone::zone_key;
use crate::cluster::objects::{Node, Pod};
use crate::cluster::pod_ident::{next_seq, PodIdent};
use crate::cluster::pod_requests::placed_requests;
use crate::cluster::pod_terms::PodTerms;
use crate::cluster::resources::{NonZero, Resource};
use crate::cluster::topology_labels::TopologyLabels;
use crate::cluster::SchedulerVersion;
use crate::labels::{LabelKey, LabelMap};

/// A pod as the cluster model keeps it: the object and what it takes from its node.
#[derive(Debug)]
pub struct PodInfo {
    pub pod: Pod,
    pub requests: Resource,
    /// cpu and memory as the priorities count them (defaults for containers that ask none).
    pub non_zero: NonZero,
    pub host_ports: Vec<HostPort>,
    /// This record's number, unique and increasing (the label indexes key pods by it).
    pub seq: u64,
    /// Hashes of what [`Pod::is_same_pod`] compares.
    pub ident: PodIdent,
    /// Its inter-pod affinity terms, compiled for the pods scheduled beside it; `None` when it has
    /// none.
    pub terms: Option<Box<PodTerms>>,
}

impl PodInfo {
    /// A pod as the newest tested kube-scheduler counts it (tests and tools; the model counts by
    /// its own version: [`PodInfo::placed`]).
    pub fn new(pod: Pod) -> Self {
        PodInfo::placed(pod, SchedulerVersion::default())
    }

    /// A pod as `version`'s kube-scheduler counts it on its node.
    pub fn placed(mut pod: Pod, version: SchedulerVersion) -> Self {
        pod.forget_statuses_that_change_nothing();
        pod.shrink_to_fit();
        let (requests, non_zero) = placed_requests(&pod, version);
        let host_ports = pod_host_ports(&pod);
        let ident = PodIdent::of(&pod);
        let terms = PodTerms::of(&pod);
        PodInfo { pod, requests, non_zero, host_ports, seq: next_seq(), ident, terms }
    }
}

/// What a node's pressure conditions say, read once when the node changes so predicates test a
/// flag instead of walking condition strings on every request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodeConditions {
    pub memory_pressure: bool,
    pub disk_pressure: bool,
    pub pid_pressure: bool,
}

impl NodeConditions {
    pub fn of(node: &Node) -> Self {
        let mut c = NodeConditions::default();
        for cond in &node.status.conditions {
            let is_true = cond.status == "True";
            match cond.type_.as_str() {
                "MemoryPressure" => c.memory_pressure |= is_true,
                "DiskPressure" => c.disk_pressure |= is_true,
                "PIDPressure" => c.pid_pressure |= is_true,
                _ => {}
            }
        }
        c
    }
}

/// A condition that makes CheckNodeCondition refuse the node (1.12's `CheckNodeConditionPredicate`):
/// `Ready` not `True`, `OutOfDisk` not `False`, `NetworkUnavailable` not `False`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConditionFailure {
    NotReady,
    OutOfDisk,
    NetworkUnavailable,
}

impl ConditionFailure {
    /// The failures of a node's conditions, one per failing condition, in the order the node lists
    /// them (upstream appends a reason per condition as it walks the list). Empty, and without an
    /// allocation, for a healthy node.
    pub fn of(node: &Node) -> Box<[ConditionFailure]> {
        node.status
            .conditions
            .iter()
            .filter_map(|cond| match (cond.type_.as_str(), cond.status.as_str()) {
                ("Ready", status) if status != "True" => Some(ConditionFailure::NotReady),
                ("OutOfDisk", status) if status != "False" => Some(ConditionFailure::OutOfDisk),
                ("NetworkUnavailable", status) if status != "False" => Some(ConditionFailure::NetworkUnavailable),
                _ => None,
            })
            .collect()
    }
}

/// A node object with what the predicates read of it prepared: allocatable parsed, conditions read.
#[derive(Debug)]
pub struct NodeState {
    pub node: Node,
    pub allocatable: Resource,
    pub conditions: NodeConditions,
    /// What CheckNodeCondition refuses in the node's conditions, in their order.
    pub condition_failures: Box<[ConditionFailure]>,
    /// The image names, tabled on first use (see `node_images`).
    images: NodeImages,
    /// Zone, region and hostname (and the beta zone keys), copied out of the labels on first use:
    /// the spreading priorities group every candidate by zone.
    topology: TopologyLabels,
}

impl NodeState {
    pub fn new(node: Node) -> Self {
        let allocatable = Resource::from_list(&node.status.allocatable);
        let conditions = NodeConditions::of(&node);
        let condition_failures = ConditionFailure::of(&node);
        NodeState {
            node,
            allocatable,
            conditions,
            condition_failures,
            images: NodeImages::default(),
            topology: TopologyLabels::default(),
        }
    }

    pub fn name(&self) -> &str {
        &self.node.metadata.name
    }

    /// The image names the node reports (`status.images[].names`), each once.
    pub fn image_names(&self) -> impl Iterator<Item = &IStr> {
        let mut seen = std::collections::HashSet::new();
        self.node.status.images.iter().flat_map(|i| i.names.iter()).filter(move |n| seen.insert(n.as_str()))
    }

    /// The size of the first image the node lists under this name, if it lists one.
    pub fn image_size(&self, name: &ImageName) -> Option<i64> {
        self.images.size_of(&self.node, name)
    }

    /// The node's `(region, zone)` as upstream's `GetZoneKey` reads it; `None` without a zone.
    pub fn zone_key(&self) -> Option<(&str, &str)> {
        zone_key(self)
    }

    /// Whether the node reports the image under this name.
    pub fn has_image(&self, name: &str) -> bool {
        self.node.status.images.iter().any(|i| i.names.iter().any(|n| n == name))
    }
}

/// The pods assigned to one node and their sums.
#[derive(Debug, Default, Clone)]
pub struct NodePods {
    pods: Vec<Arc<PodInfo>>,
    /// Each pod's `ident`, in the order of `pods`: removing a pod rules the others out from this
    /// array instead of reading every pod record.
    idents: Vec<PodIdent>,
    /// How many of the pods have a negative amount (see [`has_negative`]).
    negatives: usize,
    requested: Resource,
    non_zero_requested: NonZero,
    used_ports: Vec<HostPort>,
}

impl NodePods {
    pub fn pods(&self) -> &[Arc<PodInfo>] {
        &self.pods
    }

    /// The summed requests of the pods on the node.
    pub fn requested(&self) -> &Resource {
        &self.requested
    }

    /// The summed non-zero requests of the pods on the node (what the priorities score).
    pub fn non_zero_requested(&self) -> NonZero {
        self.non_zero_requested
    }

    /// The host ports in use on the node.
    pub fn used_ports(&self) -> &[HostPort] {
        &self.used_ports
    }

    pub fn add(&mut self, pod: Arc<PodInfo>) {
        self.requested.add(&pod.requests);
        self.non_zero_requested = self.non_zero_requested.plus(pod.non_zero);
        self.used_ports.extend(pod.host_ports.iter().cloned());
        self.negatives += usize::from(has_negative(&pod));
        self.idents.push(pod.ident);
        self.pods.push(pod);
    }

    /// Removes a pod (matched by [`Pod::is_same_pod`]); returns whether it was there.
    pub fn remove(&mut self, pod: &Pod) -> bool {
        let before = self.pods.len();
        self.pods.retain(|p| !p.pod.is_same_pod(pod));
        if self.pods.len() == before {
            return false;
        }
        self.recount();
        true
    }

    /// Removes this very pod record (as the model filed it), taking its amounts off the sums
    /// instead of summing the rest again where that gives the same sums; returns whether it was
    /// there. Any other record of the same pod goes too, as [`NodePods::remove`] does.
    pub fn remove_info(&mut self, info: &Arc<PodInfo>) -> bool {
        let Some(at) = self.pods.iter().position(|p| Arc::ptr_eq(p, info)) else {
            return self.remove(&info.pod);
        };
        self.pods.remove(at);
        self.idents.remove(at);
        self.negatives -= usize::from(has_negative(info));
        let same =
            |(ident, p): (&PodIdent, &Arc<PodInfo>)| ident.may_be_same(info.ident) && p.pod.is_same_pod(&info.pod);
        if self.idents.iter().zip(&self.pods).any(same) {
            self.pods.retain(|p| !p.pod.is_same_pod(&info.pod));
            self.recount();
        } else if let Some((requested, non_zero)) = self.sums_without(info) {
            self.requested = requested;
            self.non_zero_requested = non_zero;
        } else {
            self.recount();
        }
        true
    }

    /// The sums less one pod's amounts, when subtracting gives what summing the others again
    /// would: the pod has no scalar resources or host ports (whose entries and order the sums keep),
    /// and no amount is negative or saturated (the sums add with saturation).
    fn sums_without(&self, info: &PodInfo) -> Option<(Resource, NonZero)> {
        let (r, n) = (&info.requests, info.non_zero);
        if !r.scalar.is_empty() || !info.host_ports.is_empty() {
            return None;
        }
        let sum = &self.requested;
        let amounts = [
            (sum.milli_cpu, r.milli_cpu),
            (sum.memory, r.memory),
            (sum.ephemeral_storage, r.ephemeral_storage),
            (sum.allowed_pod_number, r.allowed_pod_number),
            (self.non_zero_requested.milli_cpu, n.milli_cpu),
            (self.non_zero_requested.memory, n.memory),
        ];
        // A negative amount anywhere on the node could have hidden a saturation: sum again.
        let exact = |(total, own): (i64, i64)| (0..i64::MAX).contains(&total) && (0..=total).contains(&own);
        if !amounts.into_iter().all(exact) || self.negatives > 0 {
            return None;
        }
        let mut requested = sum.clone();
        requested.milli_cpu -= r.milli_cpu;
        requested.memory -= r.memory;
        requested.ephemeral_storage -= r.ephemeral_storage;
        requested.allowed_pod_number -= r.allowed_pod_number;
        let non_zero = NonZero {
            milli_cpu: self.non_zero_requested.milli_cpu - n.milli_cpu,
            memory: self.non_zero_requested.memory - n.memory,
        };
        Some((requested, non_zero))
    }

    /// The sums again from the pods.
    fn recount(&mut self) {
        let pods = std::mem::take(&mut self.pods);
        *self = NodePods::default();
        for p in pods {
            self.add(p);
        }
    }
}

/// Whether any of a pod's amounts is negative (the sums of such pods are summed again on removal).
fn has_negative(p: &PodInfo) -> bool {
    let r = &p.requests;
    [r.milli_cpu, r.memory, r.ephemeral_storage, r.allowed_pod_number, p.non_zero.milli_cpu, p.non_zero.memory]
        .iter()
        .any(|a| *a < 0)
        || r.scalar.iter().any(|(_, a)| *a < 0)
}

/// A node's labels; the kept topology keys ([`LabelKey::Kept`]) without walking the map.
impl LabelMap for NodeState {
    fn label(&self, key: &str) -> Option<&str> {
        self.node.metadata.labels.get(key).map(String::as_str)
    }

    fn label_by(&self, key: &LabelKey) -> Option<&str> {
        self.topology.get(&self.node.metadata.labels, key)
    }
}

/// A node and the pods on it, as a predicate sees it. Cloning is two reference counts.
#[derive(Debug, Clone)]
pub struct NodeInfo {
    pub state: Arc<NodeState>,
    pub pods: Arc<NodePods>,
}

impl NodeInfo {
    pub fn new(state: Arc<NodeState>, pods: Arc<NodePods>) -> Self {
        NodeInfo { state, pods }
    }

    pub fn name(&self) -> &str {
        self.state.name()
    }

    pub fn node(&self) -> &Node {
        &self.state.node
    }

    pub fn allocatable(&self) -> &Resource {
        &self.state.allocatable
    }

    pub fn conditions(&self) -> NodeConditions {
        self.state.conditions
    }

    /// The node's conditions that CheckNodeCondition refuses, in the order the node lists them.
    pub fn condition_failures(&self) -> &[ConditionFailure] {
        &self.state.condition_failures
    }

    /// This node with more pods on it: what the nominated-pod pass checks against.
    pub fn with_added_pods<'a>(&self, extra: impl IntoIterator<Item = &'a Arc<PodInfo>>) -> NodeInfo {
        let mut pods = (*self.pods).clone();
        for p in extra {
            pods.add(Arc::clone(p));
        }
        NodeInfo { state: Arc::clone(&self.state), pods: Arc::new(pods) }
    }

    /// This node without the given pods (matched as [`Pod::is_same_pod`]): what preemption checks
    /// against once the victims are gone. The sums are recomputed from the pods that stay.
    pub fn without_pods(&self, removed: &[&Arc<PodInfo>]) -> NodeInfo {
        let mut pods = NodePods::default();
        for p in self.pods.pods() {
            if !removed.iter().any(|r| r.pod.is_same_pod(&p.pod)) {
                pods.add(Arc::clone(p));
            }
        }
        NodeInfo { state: Arc::clone(&self.state), pods: Arc::new(pods) }
    }

    /// A node with these pods on it, for tests and tools.
    pub fn from_parts(node: Node, pods: impl IntoIterator<Item = Pod>) -> NodeInfo {
        let mut node_pods = NodePods::default();
        for p in pods {
            node_pods.add(Arc::new(PodInfo::new(p)));
        }
        NodeInfo { state: Arc::new(NodeState::new(node)), pods: Arc::new(node_pods) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{NodeBuilder, PodBuilder};

    #[test]
    fn sums_requests_and_ports_of_its_pods() {
        let info = NodeInfo::from_parts(
            NodeBuilder::new("n").build(),
            [
                PodBuilder::new("a").req(&[("cpu", "1"), ("memory", "1Gi")]).build(),
                PodBuilder::new("b").req(&[("cpu", "500m")]).host_port(80, "TCP", "").build(),
            ],
        );
        assert_eq!(info.pods.requested().milli_cpu, 1500);
        assert_eq!(info.pods.requested().memory, 1 << 30);
        assert_eq!(info.pods.used_ports().len(), 1);
        assert_eq!(info.allocatable().milli_cpu, 4000);
    }

    /// Removing a pod leaves the sums that adding the others from scratch gives, whether they are
    /// subtracted or summed again.
    #[test]
    fn removing_a_pod_leaves_the_sums_of_the_others() {
        let plain = |name: &str, cpu: &str| PodBuilder::new(name).uid(name).req(&[("cpu", cpu), ("memory", "1Gi")]);
        let cases: Vec<(&str, Vec<PodBuilder>, usize)> = vec![
            ("plain pods", vec![plain("a", "1"), plain("b", "250m"), plain("c", "2")], 1),
            ("no requests (defaults count)", vec![plain("a", "1"), PodBuilder::new("b").uid("b")], 1),
            ("the last one", vec![plain("a", "1")], 0),
            (
                "host ports",
                vec![
                    plain("a", "1").host_port(80, "TCP", ""),
                    plain("b", "1").host_port(81, "TCP", ""),
                    plain("c", "1"),
                ],
                1,
            ),
            (
                "scalar resources",
                vec![
                    plain("a", "1"),
                    PodBuilder::new("b").uid("b").req(&[("example.com/gpu", "2")]),
                    PodBuilder::new("c").uid("c").req(&[("example.com/gpu", "1")]),
                ],
                1,
            ),
            ("saturated", vec![plain("a", "1").req(&[("memory", "8E")]), plain("b", "1").req(&[("memory", "8E")])], 0),
            ("negative amounts", vec![plain("a", "1"), plain("b", "-3"), plain("c", "1")], 0),
        ];
        for (name, pods, remove) in cases {
            let infos: Vec<Arc<PodInfo>> = pods.into_iter().map(|b| Arc::new(PodInfo::new(b.build()))).collect();
            let mut node = NodePods::default();
            for info in &infos {
                node.add(Arc::clone(info));
            }
            assert!(node.remove_info(&infos[remove]), "{name}");
            let mut want = NodePods::default();
            for (i, info) in infos.iter().enumerate() {
                if i != remove {
                    want.add(Arc::clone(info));
                }
            }
            assert_eq!(format!("{node:?}"), format!("{want:?}"), "{name}");
            assert!(!node.remove_info(&infos[remove]), "{name}: already gone");
        }
    }

    /// A record of the same pod that is not the one filed (an older copy) is found by uid.
    #[test]
    fn removing_another_record_of_the_pod_removes_it_by_uid() {
        let filed = Arc::new(PodInfo::new(PodBuilder::new("a").uid("u").req(&[("cpu", "1")]).build()));
        let copy = Arc::new(PodInfo::new(PodBuilder::new("a").uid("u").req(&[("cpu", "1")]).build()));
        let mut node = NodePods::default();
        node.add(Arc::clone(&filed));
        node.add(Arc::new(PodInfo::new(PodBuilder::new("b").uid("v").req(&[("cpu", "2")]).build())));
        assert!(node.remove_info(&copy));
        assert_eq!(node.pods().len(), 1);
        assert_eq!(node.requested().milli_cpu, 2000);
    }

    #[test]
    fn conditions_are_read_once() {
        let flags = |b: NodeBuilder| NodeConditions::of(&b.build());
        let cases = [
            ("ready", NodeBuilder::new("n"), NodeConditions::default()),
            (
                "not ready is not a pressure",
                NodeBuilder::new("n").condition("Ready", "Unknown"),
                NodeConditions::default(),
            ),
            (
                "pressures only when True",
                NodeBuilder::new("n")
                    .condition("MemoryPressure", "True")
                    .condition("DiskPressure", "Unknown")
                    .condition("PIDPressure", "True"),
                NodeConditions { memory_pressure: true, pid_pressure: true, ..Default::default() },
            ),
        ];
        for (name, node, want) in cases {
            assert_eq!(flags(node), want, "{name}");
        }
    }

    #[test]
    fn condition_failures_keep_the_node_order() {
        use ConditionFailure::*;
        let failures = |b: NodeBuilder| ConditionFailure::of(&b.build()).to_vec();
        let cases = [
            ("ready", NodeBuilder::new("n"), vec![]),
            ("ready unknown", NodeBuilder::new("n").condition("Ready", "Unknown"), vec![NotReady]),
            (
                "network unknown",
                NodeBuilder::new("n").condition("NetworkUnavailable", "Unknown"),
                vec![NetworkUnavailable],
            ),
            ("network available", NodeBuilder::new("n").condition("NetworkUnavailable", "False"), vec![]),
            ("out of disk", NodeBuilder::new("n").condition("OutOfDisk", "True"), vec![OutOfDisk]),
            ("disk fine", NodeBuilder::new("n").condition("OutOfDisk", "False"), vec![]),
            (
                "in the order listed",
                NodeBuilder::new("n").condition("NetworkUnavailable", "True").condition("Ready", "False"),
                vec![NetworkUnavailable, NotReady],
            ),
            ("pressure is not a failure", NodeBuilder::new("n").condition("DiskPressure", "True"), vec![]),
        ];
        for (name, node, want) in cases {
            assert_eq!(failures(node), want, "{name}");
        }
    }

    #[test]
    fn removing_a_pod_recomputes_the_sums() {
        let a = PodBuilder::new("a").req(&[("cpu", "1")]).build();
        let mut pods = NodePods::default();
        pods.add(Arc::new(PodInfo::new(a.clone())));
        pods.add(Arc::new(PodInfo::new(PodBuilder::new("b").req(&[("cpu", "2")]).build())));
        assert!(pods.remove(&a));
        assert_eq!(pods.requested().milli_cpu, 2000);
        assert!(!pods.remove(&a));
    }

    #[test]
    fn without_pods_recomputes_the_sums_and_leaves_the_original() {
        let a = PodBuilder::new("a").req(&[("cpu", "1")]).host_port(80, "", "").build();
        let b = PodBuilder::new("b").req(&[("cpu", "2")]).build();
        let info = NodeInfo::from_parts(NodeBuilder::new("n").build(), [a.clone(), b]);
        let victim = Arc::clone(&info.pods.pods()[0]);
        let stranger = Arc::new(PodInfo::new(PodBuilder::new("x").req(&[("cpu", "1")]).build()));
        let without = info.without_pods(&[&victim, &stranger]);
        assert_eq!(without.pods.pods().len(), 1);
        assert_eq!(without.pods.requested().milli_cpu, 2000);
        assert!(without.pods.used_ports().is_empty());
        assert_eq!(info.pods.requested().milli_cpu, 3000);
        assert_eq!(info.pods.pods().len(), 2);
    }

    #[test]
    fn added_pods_do_not_change_the_original() {
        let info = NodeInfo::from_parts(NodeBuilder::new("n").build(), []);
        let extra = Arc::new(PodInfo::new(PodBuilder::new("x").req(&[("cpu", "1")]).build()));
        let with = info.with_added_pods([&extra]);
        assert_eq!(with.pods.requested().milli_cpu, 1000);
        assert_eq!(info.pods.requested().milli_cpu, 0);
    }
}
