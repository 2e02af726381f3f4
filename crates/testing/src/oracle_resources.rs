//! The oracle generator's pod shapes of today's resource counting (issue 48): pod-level resources
//! (`spec.resources`, beta and on by default since 1.34) on the pod to schedule and on the others,
//! and pods being resized in place (InPlacePodVerticalScaling, GA in 1.35): the kubelet's
//! `allocatedResources` and configured `resources` in their container statuses, a resize pending
//! (`PodResizePending`, deferred or infeasible) or in progress, sidecars and one-off init containers
//! with statuses, and, where the version's API server keeps them (1.36 on:
//! `InPlacePodLevelResourcesVerticalScaling`; a 1.35 API server drops them,
//! `dropDisabledPodStatusFields`), the pod-level `status.allocatedResources` and
//! `status.resources`. `status.qosClass` as the API server sets it at creation.
//!
//! The shapes are those the API server admits: pod-level requests are at least the containers'
//! sum of the same resource and pod-level limits at least the requests
//! (`validatePodResourceConsistency`); container names are unique across the pod.
//!
//! Drawn from its own random stream, so that a case's other objects are those of the same seed
//! before these shapes were generated.

use serde_json::{json, Map, Value};

use gen_cluster::generate::Rng;
use predicate_engine::cluster::SchedulerVersion;
use predicate_engine::quantity::Quantity;

const CPU: &[&str] = &["100m", "250m", "500m", "1", "1500m"];
const MEMORY: &[&str] = &["128Mi", "256Mi", "1Gi", "2Gi"];

/// Adds pod-level resources, resize statuses and QoS classes to the case's pods.
pub(super) fn add_resource_shapes(seed: u64, version: SchedulerVersion, objects: &mut [Value], pod: &mut Value) {
    let mut rng = Rng::derive(seed, 25, 3);
    for o in objects.iter_mut().filter(|o| o["kind"] == "Pod") {
        let placed = o["spec"].get("nodeName").is_some();
        if rng.percent(15) {
            add_sidecar_or_init(&mut rng, o);
        }
        if rng.percent(20) {
            add_pod_level(&mut rng, o);
        }
        if placed && rng.percent(35) {
            add_resize(&mut rng, version, o);
        }
        set_qos_class(o);
    }
    if rng.percent(20) {
        add_pod_level(&mut rng, pod);
    }
    set_qos_class(pod);
}

/// A sidecar or a one-off init container beside the pod's app container.
fn add_sidecar_or_init(rng: &mut Rng, pod: &mut Value) {
    let sidecar = rng.percent(60);
    let mut requests = Map::new();
    if rng.percent(70) {
        requests.insert("cpu".into(), json!(rng.pick(CPU)));
    }
    if rng.percent(40) {
        requests.insert("memory".into(), json!(rng.pick(MEMORY)));
    }
    let mut c = json!({"name": if sidecar { "sidecar" } else { "init" }, "image": "busybox", "resources": {"requests": requests}});
    if sidecar {
        c["restartPolicy"] = json!("Always");
    }
    pod["spec"]["initContainers"] = json!([c]);
}

/// The sum of a resource over the app containers and sidecars, raised to a one-off init
/// container's: what the pod-level request must cover.
fn containers_need(pod: &Value, resource: &str) -> Quantity {
    let of = |c: &Value| {
        c["resources"]["requests"][resource].as_str().and_then(|q| Quantity::parse(q).ok()).unwrap_or_default()
    };
    let mut sum = Quantity::default();
    for c in pod["spec"]["containers"].as_array().into_iter().flatten() {
        sum = sum.saturating_add(of(c));
    }
    let mut peak = Quantity::default();
    for c in pod["spec"]["initContainers"].as_array().into_iter().flatten() {
        if c["restartPolicy"] == "Always" {
            sum = sum.saturating_add(of(c));
        } else {
            peak = peak.max(of(c));
        }
    }
    sum.max(peak)
}

/// Pod-level requests (cpu, memory or both; now and then hugepages) at least what the containers
/// ask, sometimes with limits.
fn add_pod_level(rng: &mut Rng, pod: &mut Value) {
    let mut requests = Map::new();
    let mut limits = Map::new();
    let which = rng.below(3);
    if which != 1 {
        let need = containers_need(pod, "cpu").milli_value();
        let cpu = format!("{}m", need + *rng.pick(&[0, 100, 500, 1000, 2500]));
        if rng.percent(30) {
            limits.insert("cpu".into(), json!(format!("{}m", need + 3000)));
        }
        requests.insert("cpu".into(), json!(cpu));
    }
    if which != 0 {
        let need = containers_need(pod, "memory").value();
        let extra: i64 = *rng.pick(&[0, 64 << 20, 512 << 20, 1 << 30]);
        requests.insert("memory".into(), json!((need + extra).to_string()));
    }
    if rng.percent(3) {
        requests.insert("hugepages-2Mi".into(), json!("4Mi"));
        limits.insert("hugepages-2Mi".into(), json!("4Mi"));
    }
    let mut resources = json!({"requests": requests});
    if !limits.is_empty() {
        resources["limits"] = Value::Object(limits);
    }
    pod["spec"]["resources"] = resources;
}

/// A resource list `delta` millicores of cpu away from `list`'s (never below zero), the other
/// entries kept.
fn shifted(list: &Value, delta: i64) -> Value {
    let mut out = list.as_object().cloned().unwrap_or_default();
    let cpu = list["cpu"].as_str().and_then(|q| Quantity::parse(q).ok()).map_or(0, |q| q.milli_value());
    out.insert("cpu".into(), json!(format!("{}m", (cpu + delta).max(0))));
    Value::Object(out)
}

/// Where a container's resize stands: the spec, what the kubelet allocated and what it configured.
fn container_status(rng: &mut Rng, c: &Value) -> Value {
    let spec = c["resources"]["requests"].clone();
    let name = c["name"].clone();
    let (allocated, configured) = match rng.below(6) {
        // Steady: all three agree.
        0 => (Some(spec.clone()), Some(spec.clone())),
        // A resize up not admitted yet: the spec is above what runs.
        1 => (Some(shifted(&spec, -500)), Some(shifted(&spec, -500))),
        // Admitted, not yet in place.
        2 => (Some(spec.clone()), Some(shifted(&spec, -500))),
        // A resize down: what runs is above the spec until it is done.
        3 => (Some(shifted(&spec, 700)), Some(shifted(&spec, 700))),
        // Only the allocation reported.
        4 => (Some(shifted(&spec, 300)), None),
        // Configured resources without requests.
        _ => (Some(spec.clone()), None),
    };
    let mut s =
        json!({"name": name, "ready": true, "restartCount": 0, "image": "busybox", "imageID": "", "started": true});
    if let Some(a) = allocated {
        s["allocatedResources"] = a;
    }
    match configured {
        Some(r) => s["resources"] = json!({"requests": r}),
        None if rng.percent(50) => s["resources"] = json!({}),
        None => {}
    }
    s
}

/// A placed pod being resized: container statuses for its containers, a resize condition, and
/// (1.36 on, with pod-level resources) the pod-level status.
fn add_resize(rng: &mut Rng, version: SchedulerVersion, pod: &mut Value) {
    let statuses: Vec<Value> = pod["spec"]["containers"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|c| container_status(rng, c))
        .collect();
    pod["status"]["containerStatuses"] = json!(statuses);
    if let Some(init) = pod["spec"]["initContainers"].as_array().cloned() {
        let statuses: Vec<Value> = init.iter().map(|c| container_status(rng, c)).collect();
        pod["status"]["initContainerStatuses"] = json!(statuses);
    }
    let condition = match rng.below(5) {
        0 => Some(
            json!({"type": "PodResizePending", "status": "True", "reason": "Infeasible", "message": "Node didn't have enough capacity"}),
        ),
        1 => Some(
            json!({"type": "PodResizePending", "status": "True", "reason": "Deferred", "message": "Node didn't have enough resource"}),
        ),
        2 => Some(json!({"type": "PodResizeInProgress", "status": "True"})),
        _ => None,
    };
    let mut conditions = vec![json!({"type": "Ready", "status": "True"})];
    conditions.extend(condition);
    pod["status"]["conditions"] = json!(conditions);
    let pod_level = pod["spec"]["resources"]["requests"].clone();
    if version.reads_pod_level_status() && pod_level.is_object() && rng.percent(70) {
        let delta = *rng.pick(&[-500, 0, 0, 800]);
        pod["status"]["allocatedResources"] = shifted(&pod_level, delta);
        if rng.percent(85) {
            pod["status"]["resources"] = json!({"requests": shifted(&pod_level, delta.min(0))});
        }
    }
}

/// `status.qosClass` as the API server computes it at creation, for the shapes drawn here
/// (no container is Guaranteed: none limits cpu and memory to its requests).
fn set_qos_class(pod: &mut Value) {
    let sets = |r: &Value| {
        ["requests", "limits"].iter().any(|k| {
            r[k].as_object().is_some_and(|m| m.iter().any(|(name, q)| (name == "cpu" || name == "memory") && q != "0"))
        })
    };
    let pod_level = &pod["spec"]["resources"];
    let any = sets(pod_level)
        || ["containers", "initContainers"]
            .iter()
            .flat_map(|k| pod["spec"][k].as_array().cloned().unwrap_or_default())
            .any(|c| sets(&c["resources"]));
    pod["status"]["qosClass"] = json!(if any { "Burstable" } else { "BestEffort" });
}
