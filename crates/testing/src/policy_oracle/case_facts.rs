//! What a case holds that decides whether a disagreement is one docs/semantics.md lists ("Against
//! v1.22 with a Policy"): read from the case's objects, so that a difference is counted as listed
//! only where its cause is present, and any other disagreement still fails.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::oracle;
use crate::policy_oracle::PolicyCase;
use predicate_engine::cluster::NodeInfo;
use predicate_engine::framework::PodContext;
use predicate_engine::plugin_helpers::node_affinity::matches_node_selector;
use predicate_engine::predicates::no_volume_zone_conflict::{translate_to_ga_label, TOPOLOGY_LABELS};

/// The node's labels, when the case has the node.
fn node_labels<'a>(case: &'a PolicyCase, node: &str) -> Option<BTreeMap<&'a str, &'a str>> {
    let node = case.case.objects.iter().find(|o| o["kind"] == "Node" && o["metadata"]["name"] == node)?;
    Some(labels_of(node))
}

/// An object's labels.
fn labels_of(object: &Value) -> BTreeMap<&str, &str> {
    object["metadata"]["labels"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.as_str(), v.as_str()?)))
        .collect()
}

/// The node carries none of the four topology labels VolumeZone reads: v1.22's Filter passes it
/// before looking any claim up (`volumezone/volume_zone.go`: `len(nodeConstraints) == 0`).
pub fn node_without_topology_labels(case: &PolicyCase, node: &str) -> bool {
    node_labels(case, node).is_some_and(|l| TOPOLOGY_LABELS.iter().all(|k| !l.contains_key(*k)))
}

/// A PersistentVolume bound to one of the pod's claims has a beta topology label the node lacks
/// while the node has its GA twin: v1.22 compares the exact key (`nodeConstraints[k]`), today's
/// VolumeZone (and the extender) the GA twin too (`translateToGALabel`).
pub fn beta_volume_label_on_ga_node(case: &PolicyCase, node: &str) -> bool {
    let Some(node_labels) = node_labels(case, node) else { return false };
    let pod = &case.case.pod;
    let namespace = pod["metadata"]["namespace"].as_str().unwrap_or("default");
    let find = |kind: &str, name: &str, ns: Option<&str>| {
        case.case.objects.iter().find(|o| {
            o["kind"] == kind && o["metadata"]["name"] == name && ns.is_none_or(|ns| o["metadata"]["namespace"] == ns)
        })
    };
    pod["spec"]["volumes"].as_array().into_iter().flatten().any(|volume| {
        let Some(claim) = volume["persistentVolumeClaim"]["claimName"].as_str() else { return false };
        let Some(pv_name) =
            find("PersistentVolumeClaim", claim, Some(namespace)).and_then(|pvc| pvc["spec"]["volumeName"].as_str())
        else {
            return false;
        };
        let Some(pv) = find("PersistentVolume", pv_name, None) else { return false };
        labels_of(pv).keys().any(|key| {
            let ga = translate_to_ga_label(key);
            ga != *key && !node_labels.contains_key(key) && node_labels.contains_key(ga)
        })
    })
}

/// For some `serviceAffinity` predicate of the Policy, the pods "of the service" (the assigned
/// pods of the pod's namespace carrying all its labels) run on nodes that disagree on a label the
/// pod's nodeSelector leaves free: then which pod is "the first" decides the answer, and v1.22
/// takes the first in its cache's node order (`serviceaffinity/service_affinity.go`,
/// `filteredPods[0]`, over `NodeInfos().List()`: the node tree, zones in turn, in the order the
/// scheduler learnt of the nodes), where the extender takes the node with the smallest name.
pub fn service_pods_disagree_on_labels(case: &PolicyCase) -> bool {
    let pod = &case.case.pod;
    let namespace = pod["metadata"]["namespace"].as_str().unwrap_or("default");
    let wanted = labels_of(pod);
    let fixed: BTreeSet<&str> =
        pod["spec"]["nodeSelector"].as_object().into_iter().flatten().map(|(k, _)| k.as_str()).collect();
    let fellow_nodes: BTreeSet<&str> = case
        .case
        .objects
        .iter()
        .filter(|o| o["kind"] == "Pod" && o["metadata"]["namespace"].as_str().unwrap_or("default") == namespace)
        .filter(|o| o["metadata"]["name"] != pod["metadata"]["name"])
        .filter(|o| {
            let labels = labels_of(o);
            wanted.iter().all(|(k, v)| labels.get(k) == Some(v))
        })
        .filter_map(|o| o["spec"]["nodeName"].as_str().filter(|n| !n.is_empty()))
        .collect();
    let affinity_labels = case.policy["predicates"].as_array().into_iter().flatten().filter_map(|e| {
        e["argument"]["serviceAffinity"]["labels"]
            .as_array()
            .map(|l| l.iter().filter_map(Value::as_str).collect::<Vec<_>>())
    });
    for labels in affinity_labels {
        let free: Vec<&str> = labels.into_iter().filter(|l| !fixed.contains(l)).collect();
        let seen: BTreeSet<Vec<Option<&str>>> = fellow_nodes
            .iter()
            .filter_map(|n| node_labels(case, n))
            .map(|l| free.iter().map(|k| l.get(*k).copied()).collect())
            .collect();
        if seen.len() > 1 {
            return true;
        }
    }
    false
}

/// A node the spreading leaves out (it lacks one of the pod's hard constraints' topology keys,
/// or fails the pod's nodeSelector or required node affinity) runs pods of the pod's namespace
/// and shares a hard constraint's (key, value) with a node it counts. v1.22 adds that node's
/// matching pods to the domain (`podtopologyspread/filtering.go`, `calPreFilterState`:
/// `processNode` looks only the pair up); 1.17's predicate (`getEvenPodsSpreadMetadata`) and
/// today's plugin (`processNode` returns for such a node), and so the extender, count only the
/// nodes spreading applies to.
pub fn spread_counts_left_out_nodes(case: &PolicyCase) -> bool {
    let Ok((snapshot, pod)) = oracle::model(&case.case, predicate_engine::cluster::SchedulerVersion::default()) else {
        return false;
    };
    let pod = PodContext::new(pod);
    let hard: Vec<&str> = case.case.pod["spec"]["topologySpreadConstraints"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["whenUnsatisfiable"] == "DoNotSchedule")
        .filter_map(|c| c["topologyKey"].as_str())
        .collect();
    if hard.is_empty() {
        return false;
    }
    let nodes: Vec<_> = snapshot.nodes().collect();
    let eligible = |n: &NodeInfo| {
        let labels = &n.node().metadata.labels;
        hard.iter().all(|k| labels.contains_key(*k)) && matches_node_selector(&pod, n)
    };
    let counted: BTreeSet<(&str, &str)> = nodes
        .iter()
        .filter(|n| eligible(n))
        .flat_map(|n| hard.iter().filter_map(|k| Some((*k, n.node().metadata.labels.get(*k)?.as_str()))))
        .collect();
    nodes.iter().filter(|n| !eligible(n)).any(|n| {
        let labels = &n.node().metadata.labels;
        let shares = hard.iter().any(|k| labels.get(*k).is_some_and(|v| counted.contains(&(*k, v.as_str()))));
        shares && n.pods.pods().iter().any(|p| p.pod.metadata.namespace == pod.pod.metadata.namespace)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::Case;
    use predicate_engine::labels::{BETA_ZONE, GA_ZONE as ZONE};
    use serde_json::json;

    fn node(name: &str, labels: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}, "status": {"allocatable": {"pods": "10"}}})
    }

    fn pod(name: &str, on: &str, labels: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": name, "labels": labels},
            "spec": {"nodeName": on, "containers": [{"name": "c"}]}})
    }

    fn case(policy: Value, objects: Vec<Value>, pending: Value) -> PolicyCase {
        PolicyCase { policy, case: Case { seed: 0, objects, pod: pending } }
    }

    fn zone_affinity() -> Value {
        json!({"kind": "Policy", "apiVersion": "v1",
            "predicates": [{"name": "Z", "argument": {"serviceAffinity": {"labels": [ZONE]}}}]})
    }

    #[test]
    fn service_pods_disagree_only_when_their_nodes_differ_on_a_free_label() {
        let pending = |selector: Value| {
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pending", "namespace": "default", "labels": {"app": "web"}},
                "spec": {"nodeSelector": selector}})
        };
        let objects = |zone_b: &str| {
            vec![
                node("a", json!({ZONE: "z1"})),
                node("b", json!({ZONE: zone_b})),
                pod("p", "a", json!({"app": "web"})),
                pod("q", "b", json!({"app": "web", "tier": "x"})),
                // Not of the service: lacks the pending pod's label.
                pod("r", "c", json!({})),
            ]
        };
        let disagree = |zone_b: &str, selector: Value| {
            service_pods_disagree_on_labels(&case(zone_affinity(), objects(zone_b), pending(selector)))
        };
        assert!(disagree("z2", json!({})));
        assert!(!disagree("z1", json!({})), "both in z1");
        assert!(!disagree("z2", json!({ZONE: "z1"})), "the nodeSelector fixes the zone");
    }

    #[test]
    fn a_beta_volume_label_counts_only_on_a_node_with_the_ga_label_alone() {
        let pending = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pending", "namespace": "default"},
            "spec": {"volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "c"}}]}});
        let objects = |node_labels: Value| {
            vec![
                node("n", node_labels),
                json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c", "namespace": "default"}, "spec": {"volumeName": "pv"}}),
                json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv", "labels": {BETA_ZONE: "z1"}}, "spec": {}}),
            ]
        };
        let on = |labels: Value| beta_volume_label_on_ga_node(&case(json!({}), objects(labels), pending.clone()), "n");
        assert!(on(json!({ZONE: "z1"})));
        assert!(!on(json!({BETA_ZONE: "z1", ZONE: "z1"})), "the node has the beta key too");
        assert!(!on(json!({})), "no topology label: both pass it");
        assert!(node_without_topology_labels(&case(json!({}), objects(json!({"disk": "ssd"})), pending.clone()), "n"));
    }

    #[test]
    fn spread_counts_a_left_out_node_only_when_it_shares_a_counted_domain() {
        let pending = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pending", "namespace": "default"},
            "spec": {"topologySpreadConstraints": [
                {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {}},
                {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {}}]}});
        let objects = |left_out_zone: &str| {
            vec![
                node("a", json!({ZONE: "z1", "kubernetes.io/hostname": "a"})),
                // No hostname label: spreading leaves it out.
                node("b", json!({ZONE: left_out_zone})),
                pod("p", "b", json!({})),
            ]
        };
        let facts = |zone: &str| spread_counts_left_out_nodes(&case(json!({}), objects(zone), pending.clone()));
        assert!(facts("z1"));
        assert!(!facts("z9"), "its zone is no counted domain");
    }
}
