//! The clusters of the v1.22 comparison: the random clusters of [`crate::testing::oracle`], without
//! the fields v1.22's API does not have ([`to_v1_22`]), and with what the priorities read
//! ([`add_scoring_objects`]): Services and ReplicaSets over the pods (SelectorSpread,
//! ServiceAntiAffinity, CheckServiceAffinity), controller owners, the images nodes hold
//! (ImageLocality), preferred node and pod (anti-)affinity (NodeAffinity, InterPodAffinity), and
//! the `preferAvoidPods` annotation (NodePreferAvoidPods). Drawn from its own random stream, so a
//! case's other objects are those of the same seed in the v1.37 comparison.

use serde_json::{json, Value};

use crate::gen_cluster::generate::Rng;
use crate::testing::oracle::Case;

const APPS: &[&str] = &["a", "b", "c"];
const NAMESPACES: &[&str] = &["default", "team1", "team2"];
const ZONE: &str = "topology.kubernetes.io/zone";
const HOSTNAME: &str = "kubernetes.io/hostname";
const AVOID: &str = "scheduler.alpha.kubernetes.io/preferAvoidPods";
/// Images with their sizes: below, inside and above ImageLocality's thresholds (23 MB, 1000 MB).
const IMAGES: &[(&str, i64)] = &[
    ("busybox:1.36", 5_000_000),
    ("nginx:1.25", 140_000_000),
    ("registry.example/app:v2", 600_000_000),
    ("registry.example/ml:v1", 2_000_000_000),
];

/// Removes what the API of v1.22 does not have, so that both sides read the same objects: spread
/// constraints' `minDomains`, `nodeAffinityPolicy`, `nodeTaintsPolicy` and `matchLabelKeys` (whose
/// keys the generator already merged into the selector, as the API server does), sidecars'
/// `restartPolicy` (the init container stays, as an ordinary one), pod-level resources and what
/// the kubelet reports of an in-place resize (both later than v1.22), and `status.qosClass` (which
/// the generator set from the pod-level resources too; v1.22 computes it from the containers).
pub fn to_v1_22(case: &mut Case) {
    for object in case.objects.iter_mut().chain(std::iter::once(&mut case.pod)) {
        if let Some(status) = object.get_mut("status").and_then(Value::as_object_mut) {
            for field in [
                "qosClass",
                "conditions",
                "containerStatuses",
                "initContainerStatuses",
                "allocatedResources",
                "resources",
            ] {
                status.remove(field);
            }
        }
        if let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) {
            spec.remove("resources");
        }
        let spec = &mut object["spec"];
        if let Some(list) = spec.get_mut("topologySpreadConstraints").and_then(Value::as_array_mut) {
            for c in list.iter_mut().filter_map(Value::as_object_mut) {
                for field in ["minDomains", "nodeAffinityPolicy", "nodeTaintsPolicy", "matchLabelKeys"] {
                    c.remove(field);
                }
            }
        }
        if let Some(list) = spec.get_mut("initContainers").and_then(Value::as_array_mut) {
            for c in list.iter_mut().filter_map(Value::as_object_mut) {
                c.remove("restartPolicy");
            }
        }
    }
}

fn preferred_node_affinity(rng: &mut Rng) -> Value {
    let mut terms = Vec::new();
    for _ in 0..1 + rng.below(3) {
        let expr = match rng.below(4) {
            0 => json!({"key": ZONE, "operator": "In", "values": [format!("z{}", rng.below(3))]}),
            1 => json!({"key": "disk", "operator": "In", "values": [rng.pick(&["ssd", "hdd"])]}),
            2 => json!({"key": "size", "operator": "Gt", "values": [rng.below(8).to_string()]}),
            _ => json!({"key": "disk", "operator": "DoesNotExist"}),
        };
        terms.push(json!({"weight": 1 + rng.below(100), "preference": {"matchExpressions": [expr]}}));
    }
    json!(terms)
}

fn preferred_pod_terms(rng: &mut Rng) -> Value {
    let mut terms = Vec::new();
    for _ in 0..1 + rng.below(2) {
        let mut term = json!({
            "labelSelector": {"matchLabels": {"app": rng.pick(APPS)}},
            "topologyKey": if rng.percent(50) { HOSTNAME } else { ZONE },
        });
        if rng.percent(20) {
            term["namespaces"] = json!([rng.pick(NAMESPACES)]);
        }
        terms.push(json!({"weight": 1 + rng.below(100), "podAffinityTerm": term}));
    }
    json!(terms)
}

/// Preferred pod affinity and anti-affinity, beside whatever required terms the pod has.
fn add_preferred_pod_affinity(rng: &mut Rng, pod: &mut Value) {
    for kind in ["podAffinity", "podAntiAffinity"] {
        if rng.percent(25) {
            pod["spec"]["affinity"][kind]["preferredDuringSchedulingIgnoredDuringExecution"] = preferred_pod_terms(rng);
        }
    }
}

fn owner(kind: &str, name: &str) -> Value {
    let api_version = if kind == "ReplicationController" { "v1" } else { "apps/v1" };
    json!([{"apiVersion": api_version, "kind": kind, "name": name, "uid": format!("uid-{name}"), "controller": true}])
}

fn images(rng: &mut Rng) -> Value {
    let held: Vec<Value> = IMAGES
        .iter()
        .filter(|_| rng.percent(40))
        .map(|(name, size)| json!({"names": [name], "sizeBytes": size}))
        .collect();
    json!(held)
}

/// Adds the objects and fields the priorities read (see the module's documentation).
pub fn add_scoring_objects(seed: u64, case: &mut Case) {
    let mut rng = Rng::derive(seed, 37, 1);
    let rng = &mut rng;
    // Per namespace and app: a Service (some apps), a ReplicaSet and a ReplicationController.
    let mut added = Vec::new();
    for ns in NAMESPACES {
        for app in APPS {
            if rng.percent(30) {
                added.push(json!({
                    "apiVersion": "v1", "kind": "Service",
                    "metadata": {"name": format!("svc-{app}"), "namespace": ns, "uid": format!("uid-svc-{ns}-{app}")},
                    "spec": {"selector": {"app": app}},
                }));
            }
            added.push(json!({
                "apiVersion": "apps/v1", "kind": "ReplicaSet",
                "metadata": {"name": format!("rs-{app}"), "namespace": ns, "uid": format!("uid-rs-{app}")},
                "spec": {"selector": {"matchLabels": {"app": app}}, "template": {"metadata": {"labels": {"app": app}}}},
            }));
            added.push(json!({
                "apiVersion": "v1", "kind": "ReplicationController",
                "metadata": {"name": format!("rc-{app}"), "namespace": ns, "uid": format!("uid-rc-{app}")},
                "spec": {"selector": {"app": app}},
            }));
        }
    }
    let node_names = case.node_names();
    for object in case.objects.iter_mut().chain(std::iter::once(&mut case.pod)) {
        match object["kind"].as_str() {
            Some("Node") => {
                if rng.percent(60) {
                    object["status"]["images"] = images(rng);
                }
                if rng.percent(10) {
                    let kind = if rng.percent(50) { "ReplicaSet" } else { "ReplicationController" };
                    let prefix = if kind == "ReplicaSet" { "rs" } else { "rc" };
                    let name = format!("{prefix}-{}", rng.pick(APPS));
                    let signature = json!({"podController": owner(kind, &name)[0].clone()});
                    let avoid = json!({"preferAvoidPods": [{"podSignature": signature, "reason": "test"}]});
                    object["metadata"]["annotations"] = json!({AVOID: avoid.to_string()});
                }
            }
            Some("Pod") => {
                let app = object["metadata"]["labels"]["app"].as_str().unwrap_or("a").to_string();
                if rng.percent(50) {
                    let kind = if rng.percent(70) { "ReplicaSet" } else { "ReplicationController" };
                    let prefix = if kind == "ReplicaSet" { "rs" } else { "rc" };
                    object["metadata"]["ownerReferences"] = owner(kind, &format!("{prefix}-{app}"));
                }
                if rng.percent(50) {
                    let image = rng.pick(IMAGES).0;
                    object["spec"]["containers"][0]["image"] = json!(image);
                }
                if rng.percent(15) {
                    add_preferred_pod_affinity(rng, object);
                }
            }
            _ => {}
        }
    }
    // The pod to schedule: more of each, since it is the one scored.
    let pod = &mut case.pod;
    if rng.percent(30) {
        pod["spec"]["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] =
            preferred_node_affinity(rng);
    }
    if rng.percent(30) {
        add_preferred_pod_affinity(rng, pod);
    }
    if rng.percent(30) {
        let app = pod["metadata"]["labels"]["app"].as_str().unwrap_or("a").to_string();
        pod["metadata"]["ownerReferences"] = owner("ReplicaSet", &format!("rs-{app}"));
    }
    if rng.percent(10) && !node_names.is_empty() {
        // A toleration of the PreferNoSchedule taint some nodes have.
        let list = pod["spec"]["tolerations"].as_array().cloned().unwrap_or_default();
        let mut list = list;
        list.push(json!({"key": "spot", "operator": "Exists", "effect": "PreferNoSchedule"}));
        pod["spec"]["tolerations"] = json!(list);
    }
    case.objects.extend(added);
}
