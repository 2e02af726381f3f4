//! Builders of the engine's objects for tests, compiled only for the unit tests (`cfg(test)`) and
//! with the `test-util` feature (the test-support crate, `predicate-extender-testing`, re-exports
//! them for the integration tests, benches, examples and fuzz targets): no production code lives
//! here, and the shipped binary is built without it.
//!
//! Small builders for pods and nodes, for tests and examples: `PodBuilder::new("web").req(..)`.
//! Nodes start schedulable and Ready with 4 cpu, 16Gi memory, 100Gi ephemeral storage and 110 pods,
//! so a test states only what it is about. The
//! synthetic clusters of the benchmarks and `gen-cluster` are the `gen-cluster` crate's.

use k8s_openapi::api::core::v1::{
    Affinity, ContainerPort, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Taint, Toleration,
};

use crate::cluster::objects::{Container, Node, NodeCondition, Pod, ResourceRequirements};
use crate::cluster::NodeInfo;
use crate::quantity::Quantity;

fn quantities(list: &[(&str, &str)]) -> crate::cluster::resource_list::ResourceList {
    list.iter()
        .map(|(k, v)| {
            let q = Quantity::parse(v).unwrap_or_else(|e| panic!("test quantity {k}={v}: {e}"));
            (k.to_string(), q)
        })
        .collect()
}

/// Builds a [`Pod`].
#[derive(Debug, Clone)]
pub struct PodBuilder {
    pod: Pod,
}

impl PodBuilder {
    /// A pod in namespace `default`, with uid `uid-<name>` and no containers.
    pub fn new(name: &str) -> Self {
        let mut pod = Pod::default();
        pod.metadata.name = name.to_string();
        pod.metadata.namespace = "default".to_string();
        pod.metadata.uid = format!("uid-{name}");
        PodBuilder { pod }
    }

    /// Continues from a pod built elsewhere.
    pub fn from_pod(pod: Pod) -> Self {
        PodBuilder { pod }
    }

    pub fn namespace(mut self, ns: &str) -> Self {
        self.pod.metadata.namespace = ns.to_string();
        self
    }

    pub fn uid(mut self, uid: &str) -> Self {
        self.pod.metadata.uid = uid.to_string();
        self
    }

    pub fn label(mut self, key: &str, value: &str) -> Self {
        self.pod.metadata.labels.insert(key.to_string(), value.to_string());
        self
    }

    /// Assigns the pod to a node (`spec.nodeName`).
    pub fn node(mut self, node: &str) -> Self {
        self.pod.spec.node_name = node.to_string();
        self
    }

    /// Sets `status.nominatedNodeName`.
    pub fn nominated(mut self, node: &str) -> Self {
        self.pod.status.nominated_node_name = node.to_string();
        self
    }

    pub fn priority(mut self, p: i32) -> Self {
        self.pod.spec.priority = Some(p);
        self
    }

    /// Sets `status.startTime`, in seconds after the Unix epoch.
    pub fn started_at(mut self, secs: u64) -> Self {
        self.pod.status.start_time = Some(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs));
        self
    }

    pub fn phase(mut self, phase: &str) -> Self {
        self.pod.status.phase = phase.to_string();
        self
    }

    /// Marks the pod as being deleted (`metadata.deletionTimestamp` set).
    pub fn terminating(mut self) -> Self {
        self.pod.metadata.deletion_timestamp = Some(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1));
        self
    }

    fn container(requests: &[(&str, &str)], limits: &[(&str, &str)]) -> Container {
        Container {
            name: "c".to_string(),
            resources: ResourceRequirements { requests: quantities(requests), limits: quantities(limits) },
            ..Container::default()
        }
    }

    /// Adds an app container with these requests.
    pub fn req(mut self, requests: &[(&str, &str)]) -> Self {
        self.pod.spec.containers.push(Self::container(requests, &[]));
        self
    }

    /// Adds an app container with these limits and no requests.
    pub fn limits(mut self, limits: &[(&str, &str)]) -> Self {
        self.pod.spec.containers.push(Self::container(&[], limits));
        self
    }

    /// Adds a one-off init container with these requests.
    pub fn init_req(mut self, requests: &[(&str, &str)]) -> Self {
        self.pod.spec.init_containers.push(Self::container(requests, &[]));
        self
    }

    /// Adds a sidecar (an init container with `restartPolicy: Always`) with these requests.
    pub fn sidecar_req(mut self, requests: &[(&str, &str)]) -> Self {
        let mut c = Self::container(requests, &[]);
        c.restart_policy = Some("Always".to_string());
        self.pod.spec.init_containers.push(c);
        self
    }

    pub fn overhead(mut self, overhead: &[(&str, &str)]) -> Self {
        self.pod.spec.overhead = quantities(overhead);
        self
    }

    /// Adds a container asking for a host port: protocol "" means TCP, host IP "" means 0.0.0.0.
    pub fn host_port(mut self, port: i32, protocol: &str, host_ip: &str) -> Self {
        let mut c = Self::container(&[], &[]);
        c.ports.push(ContainerPort {
            container_port: port,
            host_port: Some(port),
            protocol: (!protocol.is_empty()).then(|| protocol.to_string()),
            host_ip: (!host_ip.is_empty()).then(|| host_ip.to_string()),
            ..ContainerPort::default()
        });
        self.pod.spec.containers.push(c);
        self
    }

    pub fn node_selector(mut self, key: &str, value: &str) -> Self {
        self.pod.spec.node_selector.insert(key.to_string(), value.to_string());
        self
    }

    /// Adds a required node affinity term (terms are ORed).
    pub fn node_affinity_term(mut self, term: NodeSelectorTerm) -> Self {
        let affinity = self.pod.spec.affinity.get_or_insert_with(Affinity::default);
        let node_affinity = affinity.node_affinity.get_or_insert_with(NodeAffinity::default);
        let required =
            node_affinity.required_during_scheduling_ignored_during_execution.get_or_insert_with(NodeSelector::default);
        required.node_selector_terms.push(term);
        self
    }

    /// Adds a toleration; empty strings leave the field unset.
    pub fn toleration(mut self, key: &str, operator: &str, value: &str, effect: &str) -> Self {
        let opt = |s: &str| (!s.is_empty()).then(|| s.to_string());
        self.pod.spec.tolerations.push(Toleration {
            key: opt(key),
            operator: opt(operator),
            value: opt(value),
            effect: opt(effect),
            toleration_seconds: None,
        });
        self
    }

    pub fn build(self) -> Pod {
        self.pod
    }
}

/// A volume named `vol-<claim>` that mounts a PersistentVolumeClaim.
pub fn claim_volume(claim: &str) -> k8s_openapi::api::core::v1::Volume {
    k8s_openapi::api::core::v1::Volume {
        name: format!("vol-{claim}"),
        persistent_volume_claim: Some(k8s_openapi::api::core::v1::PersistentVolumeClaimVolumeSource {
            claim_name: claim.to_string(),
            read_only: None,
        }),
        ..Default::default()
    }
}

/// A node selector requirement, for [`PodBuilder::node_affinity_term`].
pub fn requirement(key: &str, operator: &str, values: &[&str]) -> NodeSelectorRequirement {
    NodeSelectorRequirement {
        key: key.to_string(),
        operator: operator.to_string(),
        values: (!values.is_empty()).then(|| values.iter().map(|v| v.to_string()).collect()),
    }
}

/// A term whose `matchExpressions` are these requirements (ANDed).
pub fn term(expressions: Vec<NodeSelectorRequirement>) -> NodeSelectorTerm {
    NodeSelectorTerm { match_expressions: Some(expressions), match_fields: None }
}

/// A term whose `matchFields` are these requirements.
pub fn field_term(fields: Vec<NodeSelectorRequirement>) -> NodeSelectorTerm {
    NodeSelectorTerm { match_expressions: None, match_fields: Some(fields) }
}

/// Builds a [`Node`].
#[derive(Debug, Clone)]
pub struct NodeBuilder {
    node: Node,
}

impl NodeBuilder {
    /// A Ready, schedulable node with 4 cpu, 16Gi memory, 100Gi ephemeral storage, 110 pods.
    pub fn new(name: &str) -> Self {
        let mut node = Node::default();
        node.metadata.name = name.to_string();
        node.metadata.uid = format!("uid-{name}");
        node.metadata.labels.insert("kubernetes.io/hostname".to_string(), name.to_string());
        node.status.allocatable =
            quantities(&[("cpu", "4"), ("memory", "16Gi"), ("ephemeral-storage", "100Gi"), ("pods", "110")]);
        node.status.conditions.push(NodeCondition { type_: "Ready".to_string(), status: "True".to_string() });
        NodeBuilder { node }
    }

    pub fn label(mut self, key: &str, value: &str) -> Self {
        self.node.metadata.labels.insert(key.to_string(), value.to_string());
        self
    }

    /// Adds these labels.
    pub fn labels(self, labels: &[(&str, &str)]) -> Self {
        labels.iter().fold(self, |b, (k, v)| b.label(k, v))
    }

    /// Sets (or adds) allocatable amounts.
    pub fn alloc(mut self, list: &[(&str, &str)]) -> Self {
        self.node.status.allocatable.extend(quantities(list));
        self
    }

    pub fn taint(mut self, key: &str, value: &str, effect: &str) -> Self {
        self.node.spec.taints.push(Taint {
            key: key.to_string(),
            value: (!value.is_empty()).then(|| value.to_string()),
            effect: effect.to_string(),
            time_added: None,
        });
        self
    }

    pub fn unschedulable(mut self) -> Self {
        self.node.spec.unschedulable = true;
        self
    }

    /// Sets a condition, replacing one of the same type.
    pub fn condition(mut self, type_: &str, status: &str) -> Self {
        self.node.status.conditions.retain(|c| c.type_ != type_);
        self.node.status.conditions.push(NodeCondition { type_: type_.to_string(), status: status.to_string() });
        self
    }

    /// Replaces every condition with these, in this order.
    pub fn conditions(mut self, conditions: &[(&str, &str)]) -> Self {
        self.node.status.conditions =
            conditions.iter().map(|(t, s)| NodeCondition { type_: t.to_string(), status: s.to_string() }).collect();
        self
    }

    pub fn build(self) -> Node {
        self.node
    }

    /// The node with no pods on it, as the predicates see it.
    pub fn info(self) -> NodeInfo {
        NodeInfo::from_parts(self.node, [])
    }
}

#[cfg(test)]
pub mod zoned;
