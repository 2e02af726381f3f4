//! The Kubernetes objects as the extender reads them: only the fields the engine looks at.
//!
//! These decode from the same JSON/YAML as `k8s-openapi`'s full types (kubectl output, informer
//! objects, the `Pod` and `Nodes` of a request) and reuse its types for the nested parts (taints,
//! tolerations, affinity, ports). Everything else (managedFields, env, probes, ...) is skipped while
//! parsing, never built. Quantities are parsed while decoding, so an invalid one is reported with the
//! path of the field that holds it. `null` reads as empty, as in Go.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Affinity, ContainerImage, ContainerPort, Taint, Toleration};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use serde::{Deserialize, Deserializer};

use crate::quantity::Quantity;

/// Reads `null` (and a missing field, with `#[serde(default)]`) as the type's default.
pub(crate) fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// The parts of `metadata` the extender reads.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ObjectMeta {
    #[serde(deserialize_with = "null_as_default")]
    pub name: String,
    #[serde(deserialize_with = "null_as_default")]
    pub namespace: String,
    #[serde(deserialize_with = "null_as_default")]
    pub uid: String,
    #[serde(deserialize_with = "null_as_default")]
    pub labels: BTreeMap<String, String>,
    #[serde(deserialize_with = "null_as_default")]
    pub owner_references: Vec<OwnerReference>,
}

/// A Node.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Node {
    #[serde(deserialize_with = "null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(deserialize_with = "null_as_default")]
    pub spec: NodeSpec,
    #[serde(deserialize_with = "null_as_default")]
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
    #[serde(deserialize_with = "null_as_default")]
    pub allocatable: BTreeMap<String, Quantity>,
    #[serde(deserialize_with = "null_as_default")]
    pub conditions: Vec<NodeCondition>,
    #[serde(deserialize_with = "null_as_default")]
    pub images: Vec<ContainerImage>,
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
    #[serde(deserialize_with = "null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(deserialize_with = "null_as_default")]
    pub spec: PodSpec,
    #[serde(deserialize_with = "null_as_default")]
    pub status: PodStatus,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodSpec {
    #[serde(deserialize_with = "null_as_default")]
    pub node_name: String,
    #[serde(deserialize_with = "null_as_default")]
    pub containers: Vec<Container>,
    #[serde(deserialize_with = "null_as_default")]
    pub init_containers: Vec<Container>,
    #[serde(deserialize_with = "null_as_default")]
    pub overhead: BTreeMap<String, Quantity>,
    #[serde(deserialize_with = "null_as_default")]
    pub node_selector: BTreeMap<String, String>,
    pub affinity: Option<Affinity>,
    #[serde(deserialize_with = "null_as_default")]
    pub tolerations: Vec<Toleration>,
    pub priority: Option<i32>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Container {
    #[serde(deserialize_with = "null_as_default")]
    pub name: String,
    #[serde(deserialize_with = "null_as_default")]
    pub resources: ResourceRequirements,
    #[serde(deserialize_with = "null_as_default")]
    pub ports: Vec<ContainerPort>,
    /// `Always` on an init container makes it a sidecar that runs beside the app containers.
    pub restart_policy: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ResourceRequirements {
    #[serde(deserialize_with = "null_as_default")]
    pub requests: BTreeMap<String, Quantity>,
    #[serde(deserialize_with = "null_as_default")]
    pub limits: BTreeMap<String, Quantity>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodStatus {
    #[serde(deserialize_with = "null_as_default")]
    pub phase: String,
    #[serde(deserialize_with = "null_as_default")]
    pub nominated_node_name: String,
}

impl Pod {
    /// The pod's priority; a pod without one has priority 0, as in kube-scheduler.
    pub fn priority(&self) -> i32 {
        self.spec.priority.unwrap_or(0)
    }

    /// Succeeded and Failed pods hold no resources and are not in the scheduler's cache.
    pub fn is_terminal(&self) -> bool {
        matches!(self.status.phase.as_str(), "Succeeded" | "Failed")
    }

    /// `namespace/name`, for messages.
    pub fn key(&self) -> String {
        format!("{}/{}", self.metadata.namespace, self.metadata.name)
    }

    /// True for the BestEffort QoS class: no container (init containers included) requests or
    /// limits cpu or memory.
    pub fn is_best_effort(&self) -> bool {
        let sets_cpu_or_memory = |c: &Container| {
            [&c.resources.requests, &c.resources.limits]
                .iter()
                .any(|m| m.iter().any(|(k, q)| (k == "cpu" || k == "memory") && !q.is_zero()))
        };
        !self.spec.containers.iter().chain(&self.spec.init_containers).any(sets_cpu_or_memory)
    }

    /// Whether the pod has pod affinity or anti-affinity terms (required or preferred): the pods
    /// inter-pod affinity has to look at on every node.
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
    fn nulls_read_as_empty_like_go() {
        let pod: Pod = serde_json::from_str(
            r#"{"metadata":{"name":"a","labels":null},"spec":{"containers":null,"tolerations":null},"status":null}"#,
        )
        .unwrap();
        assert_eq!(pod.metadata.name, "a");
        assert!(pod.spec.containers.is_empty());
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
