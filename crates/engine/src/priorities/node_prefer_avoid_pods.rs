//! NodePreferAvoidPodsPriority: 0 on a node whose `scheduler.alpha.kubernetes.io/preferAvoidPods`
//! annotation lists the pod's controller, 10 elsewhere (upstream's
//! `CalculateNodePreferAvoidPodsPriorityMap`).
//!
//! Only a pod whose controller (the owner reference with `controller: true`) is a
//! ReplicationController or a ReplicaSet can be avoided; an entry avoids it when its
//! `podSignature.podController` has the same kind and UID. The annotation is decoded per node, only
//! on nodes that have it (few do); one that does not decode scores 10, as upstream ("assume it's
//! schedulable there").

use std::sync::Arc;

use serde::Deserialize;

use crate::cluster::objects::PREFER_AVOID_PODS_ANNOTATION;
use crate::cluster::NodeInfo;
use crate::framework::ClusterView;
use crate::framework::{ArgumentError, Candidate, PodContext};
use crate::framework::{Priority, PriorityArgs, Scorer, MAX_PRIORITY};

pub const NAME: &str = "NodePreferAvoidPodsPriority";

#[derive(Debug, Clone)]
pub struct NodePreferAvoidPodsPriority;

pub fn build(_args: &PriorityArgs<'_>) -> Result<Arc<dyn Priority>, ArgumentError> {
    Ok(Arc::new(NodePreferAvoidPodsPriority))
}

/// `v1.AvoidPods`, the annotation's value: only what the comparison reads, with the other fields
/// typed so a value of the wrong type fails to decode as it does in Go.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AvoidPods {
    #[serde(default)]
    prefer_avoid_pods: Option<Vec<Option<PreferAvoidPodsEntry>>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PreferAvoidPodsEntry {
    #[serde(default)]
    pod_signature: Option<PodSignature>,
    #[serde(default)]
    #[allow(dead_code)]
    eviction_time: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    reason: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    message: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PodSignature {
    #[serde(default)]
    pod_controller: Option<ControllerRef>,
}

/// An owner reference, as the annotation and the pod carry it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ControllerRef {
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    uid: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    api_version: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    name: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    controller: Option<bool>,
    #[serde(default)]
    #[allow(dead_code)]
    block_owner_deletion: Option<bool>,
}

/// The pod's controller, when it is one the annotation can name: `(kind, uid)`.
struct PreferAvoidPodsScorer {
    controller: Option<(String, String)>,
}

impl Priority for NodePreferAvoidPodsPriority {
    fn name(&self) -> &str {
        NAME
    }

    /// With kube-scheduler's default weight (10000) it outweighs the others: an avoided node loses.
    fn vetoes(&self) -> bool {
        true
    }

    fn prepare(&self, pod: &PodContext, _view: &ClusterView<'_>, _candidates: &[Candidate]) -> Box<dyn Scorer> {
        let controller = pod
            .pod
            .metadata
            .owner_references
            .iter()
            .find(|r| r.controller == Some(true))
            .filter(|r| r.kind == "ReplicationController" || r.kind == "ReplicaSet")
            .map(|r| (r.kind.clone(), r.uid.clone()));
        Box::new(PreferAvoidPodsScorer { controller })
    }
}

impl Scorer for PreferAvoidPodsScorer {
    fn score(&self, _pod: &PodContext, node: &NodeInfo) -> i64 {
        let Some((kind, uid)) = &self.controller else {
            return MAX_PRIORITY;
        };
        let value = match node.node().metadata.annotations.get(PREFER_AVOID_PODS_ANNOTATION) {
            Some(v) if !v.is_empty() => v,
            _ => return MAX_PRIORITY,
        };
        let avoids: AvoidPods = match serde_json::from_str(value) {
            Ok(a) => a,
            Err(e) => {
                tracing::debug!(node = node.name(), error = %e, "ignoring an invalid {PREFER_AVOID_PODS_ANNOTATION} annotation");
                return MAX_PRIORITY;
            }
        };
        let avoided = avoids.prefer_avoid_pods.iter().flatten().flatten().any(|entry| {
            entry
                .pod_signature
                .as_ref()
                .and_then(|s| s.pod_controller.as_ref())
                .is_some_and(|c| c.kind.as_deref().unwrap_or("") == kind && c.uid.as_deref().unwrap_or("") == uid)
        });
        if avoided {
            0
        } else {
            MAX_PRIORITY
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::objects::Pod;
    use crate::cluster::Snapshot;
    use crate::priorities::testing::candidates;
    use crate::testing::{NodeBuilder, PodBuilder};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

    fn owned_by(kind: &str, uid: &str, controller: Option<bool>) -> Pod {
        let mut pod = PodBuilder::new("p").build();
        pod.metadata.owner_references.push(OwnerReference {
            api_version: "v1".to_string(),
            kind: kind.to_string(),
            name: "foo".to_string(),
            uid: uid.to_string(),
            controller,
            block_owner_deletion: None,
        });
        pod
    }

    fn annotated(name: &str, value: &str) -> crate::cluster::objects::Node {
        let mut node = NodeBuilder::new(name).build();
        node.metadata.annotations.insert(PREFER_AVOID_PODS_ANNOTATION.to_string(), value.to_string());
        node
    }

    const AVOID_RC: &str = r#"{"preferAvoidPods":[{"podSignature":{"podController":{"apiVersion":"v1","kind":"ReplicationController","name":"foo","uid":"abcdef123456","controller":true}},"reason":"some reason","message":"some message"}]}"#;
    const AVOID_RS: &str = r#"{"preferAvoidPods":[{"podSignature":{"podController":{"apiVersion":"v1","kind":"ReplicaSet","name":"foo","uid":"qwert12345","controller":true}},"evictionTime":"2017-01-01T00:00:00Z","reason":"some reason","message":"some message"}]}"#;

    fn cluster() -> Snapshot {
        Snapshot::build(
            [
                annotated("n1", AVOID_RC),
                annotated("n2", AVOID_RS),
                NodeBuilder::new("n3").build(),
                annotated("n4", "{not json"),
                annotated("n5", ""),
                // A type error anywhere fails the decode, as in Go: scored as not avoided.
                annotated(
                    "n6",
                    r#"{"preferAvoidPods":[{"podSignature":{"podController":{"kind":"ReplicationController","uid":"abcdef123456"}},"reason":7}]}"#,
                ),
                // Entries without a controller, and a null entry, avoid nothing; the RS one does.
                annotated(
                    "n7",
                    r#"{"preferAvoidPods":[null,{"podSignature":{}},{"podSignature":{"podController":null}},{"podSignature":{"podController":{"kind":"ReplicaSet","uid":"qwert12345"}}}],"extra":1}"#,
                ),
            ],
            [],
        )
    }

    fn scores(pod: Pod) -> Vec<i64> {
        let snapshot = cluster();
        let ctx = PodContext::new(pod);
        let names = ["n1", "n2", "n3", "n4", "n5", "n6", "n7"];
        let scorer =
            NodePreferAvoidPodsPriority.prepare(&ctx, &ClusterView::of(&snapshot), &candidates(&snapshot, &names));
        let mut s: Vec<i64> = names.iter().map(|n| scorer.score(&ctx, &snapshot.node_info(n).unwrap())).collect();
        scorer.normalize(&mut s);
        s
    }

    #[test]
    fn avoided_controllers_score_zero() {
        let cases = [
            // n1 lists this RC (kind and uid match); the rest do not, or do not decode (n4, n6).
            (
                "RC listed on n1",
                owned_by("ReplicationController", "abcdef123456", Some(true)),
                [0, 10, 10, 10, 10, 10, 10],
            ),
            // n2 and n7 list this RS.
            ("RS listed on n2 and n7", owned_by("ReplicaSet", "qwert12345", Some(true)), [10, 0, 10, 10, 10, 10, 0]),
            // The uid of the RC on n1 but another kind: not avoided.
            ("same uid, other kind", owned_by("ReplicaSet", "abcdef123456", Some(true)), [10; 7]),
            // Another RC.
            ("other uid", owned_by("ReplicationController", "zzz", Some(true)), [10; 7]),
            // Not the controller: the pod has no controller.
            ("owner but not controller", owned_by("ReplicationController", "abcdef123456", None), [10; 7]),
            // Only RC and RS controllers are considered.
            ("StatefulSet controller", owned_by("StatefulSet", "qwert12345", Some(true)), [10; 7]),
            ("no owner", PodBuilder::new("p").build(), [10; 7]),
        ];
        for (name, pod, want) in cases {
            assert_eq!(scores(pod), want, "{name}");
        }
    }
}
