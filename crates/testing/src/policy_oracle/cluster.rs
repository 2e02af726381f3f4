//! The clusters of the v1.22 comparison: the random clusters of [`crate::oracle`], without
//! the fields v1.22's API does not have ([`to_v1_22`]), and with what the priorities read
//! ([`add_scoring_objects`]): Services and ReplicaSets over the pods (SelectorSpread,
//! ServiceAntiAffinity, CheckServiceAffinity), controller owners, the images nodes hold
//! (ImageLocality), preferred node and pod (anti-)affinity (NodeAffinity, InterPodAffinity), and
//! the `preferAvoidPods` annotation (NodePreferAvoidPods). Drawn from its own random stream, so a
//! case's other objects are those of the same seed in the v1.37 comparison. Then the fields of the
//! table "Every field the mirrored plugins read" only this comparison reaches
//! ([`add_field_shapes`]), and without generic ephemeral volumes ([`without_ephemeral_volumes`]).

use serde_json::{json, Value};

use crate::oracle::Case;
use gen_cluster::generate::Rng;

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
/// the kubelet reports of an in-place resize (both later than v1.22), `status.qosClass` (which
/// the generator set from the pod-level resources too; v1.22 computes it from the containers), and
/// claims' and volumes' `volumeAttributesClassName` (1.29; v1.22 matches a claim to a volume
/// without it).
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
        if matches!(object["kind"].as_str(), Some("PersistentVolume" | "PersistentVolumeClaim")) {
            if let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) {
                spec.remove("volumeAttributesClassName");
            }
        }
    }
}

/// Keeps generic ephemeral volumes out of this comparison's domain (docs/semantics.md, "Out of the
/// generated domain"): v1.22's CSILimits does not count them (its `filterAttachableVolumes` reads
/// only `persistentVolumeClaim` volumes; today's NodeVolumeLimits, which the extender's
/// MaxCSIVolumeCount follows, counts their claims and requires the pod to own them). The volumes,
/// their claims (controlled by a pod) and the volumes bound to those go; the v1.37 comparison draws
/// them.
pub fn without_ephemeral_volumes(case: &mut Case) {
    let mut claims = Vec::new();
    for pod in case.objects.iter_mut().chain(std::iter::once(&mut case.pod)).filter(|o| o["kind"] == "Pod") {
        if let Some(volumes) = pod["spec"].get_mut("volumes").and_then(Value::as_array_mut) {
            volumes.retain(|v| v.get("ephemeral").is_none());
            if volumes.is_empty() {
                if let Some(spec) = pod["spec"].as_object_mut() {
                    spec.remove("volumes");
                }
            }
        }
    }
    case.objects.retain(|o| {
        let owned = o["kind"] == "PersistentVolumeClaim"
            && o["metadata"]["ownerReferences"].as_array().is_some_and(|r| r.iter().any(|r| r["kind"] == "Pod"));
        if owned {
            claims.push((o["metadata"]["namespace"].clone(), o["metadata"]["name"].clone()));
        }
        !owned
    });
    case.objects.retain(|o| {
        let r = &o["spec"]["claimRef"];
        !(o["kind"] == "PersistentVolume"
            && claims.iter().any(|(ns, name)| r["namespace"] == *ns && r["name"] == *name))
    });
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

/// The fields of docs/semantics.md's table "Every field the mirrored plugins read" that only this
/// comparison reaches (`tests/field_table.rs`): preferred pod (anti-)affinity terms with
/// `matchExpressions` selectors and namespace selectors, preferred node affinity on the node name
/// (`matchFields`), ReplicaSets whose selector is a `matchExpressions` (as the template's labels
/// satisfy it), and StatefulSets. Drawn from its own random stream, after [`add_scoring_objects`],
/// so that a case's other objects are those of the same seed without them.
pub fn add_field_shapes(seed: u64, case: &mut Case) {
    let mut rng = Rng::derive(seed, 37, 2);
    let rng = &mut rng;
    let node_names = case.node_names();
    for object in case.objects.iter_mut().chain(std::iter::once(&mut case.pod)) {
        match object["kind"].as_str() {
            Some("Pod") => preferred_term_selectors(rng, object),
            Some("ReplicaSet") if rng.percent(30) => {
                let app = object["spec"]["selector"]["matchLabels"]["app"].clone();
                object["spec"]["selector"] =
                    json!({"matchExpressions": [{"key": "app", "operator": "In", "values": [app]}]});
            }
            _ => {}
        }
    }
    if let Some(terms) = case
        .pod
        .pointer_mut("/spec/affinity/nodeAffinity/preferredDuringSchedulingIgnoredDuringExecution")
        .and_then(Value::as_array_mut)
    {
        for term in terms.iter_mut() {
            if node_names.is_empty() || !rng.percent(30) {
                continue;
            }
            let operator = if rng.percent(60) { "In" } else { "NotIn" };
            let requirement = json!({"key": "metadata.name", "operator": operator, "values": [rng.pick(&node_names)]});
            if rng.percent(50) {
                term["preference"] = json!({"matchFields": [requirement]});
            } else {
                term["preference"]["matchFields"] = json!([requirement]);
            }
        }
    }
    for ns in NAMESPACES {
        for app in APPS {
            if !rng.percent(20) {
                continue;
            }
            let selector = if rng.percent(50) {
                json!({"matchLabels": {"app": app}})
            } else {
                json!({"matchExpressions": [{"key": "app", "operator": "In", "values": [app]}]})
            };
            case.objects.push(json!({
                "apiVersion": "apps/v1", "kind": "StatefulSet",
                "metadata": {"name": format!("ss-{app}"), "namespace": ns, "uid": format!("uid-ss-{ns}-{app}")},
                "spec": {
                    "serviceName": format!("svc-{app}"), "replicas": 1, "selector": selector,
                    "template": {"metadata": {"labels": {"app": app}},
                        "spec": {"containers": [{"name": "c", "image": "busybox"}]}},
                },
            }));
        }
    }
}

/// A pod's preferred (anti-)affinity terms, now and then with a `matchExpressions` label selector
/// and a namespace selector.
fn preferred_term_selectors(rng: &mut Rng, pod: &mut Value) {
    for kind in ["podAffinity", "podAntiAffinity"] {
        let path = format!("/spec/affinity/{kind}/preferredDuringSchedulingIgnoredDuringExecution");
        let Some(terms) = pod.pointer_mut(&path).and_then(Value::as_array_mut) else {
            continue;
        };
        for weighted in terms.iter_mut() {
            let term = &mut weighted["podAffinityTerm"];
            if rng.percent(35) {
                term["labelSelector"] = match rng.below(3) {
                    0 => {
                        json!({"matchExpressions": [{"key": "app", "operator": "In", "values": [rng.pick(APPS), rng.pick(APPS)]}]})
                    }
                    1 => json!({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": [rng.pick(APPS)]}]}),
                    _ => {
                        json!({"matchLabels": {"app": rng.pick(APPS)}, "matchExpressions": [{"key": "tier", "operator": "Exists"}]})
                    }
                };
            }
            if rng.percent(30) {
                term["namespaceSelector"] = match rng.below(3) {
                    0 => json!({}),
                    1 => json!({"matchLabels": {"team": rng.pick(&["1", "2"])}}),
                    _ => json!({"matchExpressions": [crate::oracle_fields::team_requirement(rng)]}),
                };
            }
        }
    }
}
