//! The oracle generator's remaining fields of docs/semantics.md's table "Every field the mirrored
//! plugins read" (`tests/field_table.rs` holds the generators to drawing every path a `read:` row
//! names): what the API server sets on every object (`uid`, `resourceVersion`), terminating pods,
//! namespace selectors with `matchExpressions`, `matchFields` on the node name (a DaemonSet pod's
//! node affinity), sidecars' host ports, the inline volumes VolumeRestrictions tells apart (AWS EBS,
//! iSCSI, RBD) and an Azure disk, generic ephemeral volumes with the claim their controller makes,
//! and on claims and volumes: `volumeMode`, `volumeAttributesClassName`, claim selectors, objects
//! being deleted, the provisioner's and the legacy storage-class annotations, and released in-tree
//! volumes.
//!
//! Drawn from its own random stream, so that a case's other objects are those of the same seed
//! before these fields were generated. The shapes are those the API server admits and its
//! controllers make: a claim and the volume bound to it agree on `volumeMode` and
//! `volumeAttributesClassName` (the PV controller binds no other pair), an ephemeral volume's claim
//! is `<pod>-<volume>`, controlled by the pod (`ownerReferences` with `controller: true` and its
//! uid, as `pkg/controller/volume/ephemeral` creates it), terminating objects carry the finalizer
//! that keeps them (`kubernetes.io/pvc-protection`, `kubernetes.io/pv-protection`).
//!
//! In-tree persistent volumes (AWS EBS, Azure Disk, GCE PD) are drawn only as `Released` volumes
//! whose claim is gone: no claim can bind them (`FindMatchingVolume` skips a volume whose
//! `claimRef` names another claim) and no pod uses them, because an in-tree volume a pod uses is
//! counted by today's NodeVolumeLimits against the CSI driver it migrates to, where the extender
//! takes CSI migration to be off (docs/semantics.md, "Out of the generated domain"). Inline in-tree
//! volumes on pods are compared: VolumeRestrictions' conflicts; today's NodeVolumeLimits counts an
//! inline EBS or Azure disk against its CSI driver, which no generated CSINode limits, and the
//! extender's classic in-tree counts have limits no case reaches.

use serde_json::{json, Map, Value};

use gen_cluster::generate::Rng;
use predicate_engine::cluster::SchedulerVersion;

const DRIVER: &str = "csi.example.com";
const BETA_STORAGE_CLASS: &str = "volume.beta.kubernetes.io/storage-class";
/// When the generated objects being deleted were asked to go (after `generate::TIME`).
const DELETED_AT: &str = "2026-11-01T09:00:00Z";
const VOLUME_ATTRIBUTES_CLASSES: &[&str] = &["gold", "silver"];

/// Adds the fields (see the module's documentation) to a case's objects and its pod.
pub(super) fn add_fields(
    seed: u64,
    version: SchedulerVersion,
    nodes: &[String],
    objects: &mut Vec<Value>,
    pod: &mut Value,
) {
    let mut rng = Rng::derive(seed, 25, 4);
    let rng = &mut rng;
    let mut added = Vec::new();
    let mut has_dyn = objects.iter().any(|o| o["kind"] == "StorageClass" && o["metadata"]["name"] == "dyn");
    for o in objects.iter_mut() {
        match o["kind"].as_str() {
            Some("Node") => {
                let name = o["metadata"]["name"].as_str().unwrap_or_default().to_string();
                o["metadata"]["uid"] = json!(format!("uid-{name}"));
                o["metadata"]["resourceVersion"] = json!(resource_version(rng));
            }
            Some("Pod") => {
                let placed = o["spec"].get("nodeName").is_some();
                o["metadata"]["resourceVersion"] = json!(resource_version(rng));
                if placed && rng.percent(6) {
                    o["metadata"]["deletionTimestamp"] = json!(DELETED_AT);
                    o["metadata"]["deletionGracePeriodSeconds"] = json!(30);
                }
                namespace_expressions(rng, version, o);
                sidecar_ports(rng, o);
                if rng.percent(8) {
                    inline_volume(rng, o);
                }
                if placed && rng.percent(5) && !volume_names(o).iter().any(|n| n == "scratch") {
                    // Its claim made and bound: the pod runs.
                    ephemeral_class(&mut has_dyn, &mut added);
                    push_volume(o, ephemeral_volume());
                    let uid = o["metadata"]["uid"].as_str().unwrap_or_default().to_string();
                    let mut claim = ephemeral_claim(o, &uid);
                    bind(&mut claim, &mut added);
                    added.push(claim);
                }
            }
            _ => {}
        }
    }
    pod["metadata"]["resourceVersion"] = json!(resource_version(rng));
    namespace_expressions(rng, version, pod);
    sidecar_ports(rng, pod);
    match_fields(rng, nodes, pod);
    if rng.percent(12) {
        inline_volume(rng, pod);
    }
    if rng.percent(10) {
        ephemeral_class(&mut has_dyn, &mut added);
        pending_ephemeral_volume(rng, pod, &mut added);
    }
    objects.append(&mut added);
    if rng.percent(8) {
        objects.push(released_in_tree_volume(rng, objects));
    }
    claims_and_volumes(rng, objects);
}

fn resource_version(rng: &mut Rng) -> String {
    (1000 + rng.below(90_000)).to_string()
}

/// The names of the containers and volumes a pod already has.
fn volume_names(pod: &Value) -> Vec<String> {
    pod["spec"]["volumes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v["name"].as_str())
        .map(String::from)
        .collect()
}

fn push_volume(pod: &mut Value, volume: Value) {
    match pod["spec"].get_mut("volumes").and_then(Value::as_array_mut) {
        Some(list) => list.push(volume),
        None => pod["spec"]["volumes"] = json!([volume]),
    }
}

/// Now and then a namespace selector with `matchExpressions` on a required pod (anti-)affinity
/// term, beside its `matchLabels` when it has some (the namespaces carry `team`). Not for 1.35
/// and 1.36 a selector that matches a namespace without labels (`NotIn`, `DoesNotExist`): their
/// InterPodAffinity lets such a selector match every namespace where it reads none's labels
/// (docs/semantics.md, "Namespace selectors that match no labels in 1.35 and 1.36").
fn namespace_expressions(rng: &mut Rng, version: SchedulerVersion, pod: &mut Value) {
    for kind in ["podAffinity", "podAntiAffinity"] {
        let path = format!("/spec/affinity/{kind}/requiredDuringSchedulingIgnoredDuringExecution");
        let Some(terms) = pod.pointer_mut(&path).and_then(Value::as_array_mut) else {
            continue;
        };
        for term in terms.iter_mut() {
            if rng.percent(20) {
                let requirement = team_requirement(rng);
                let matches_no_labels = matches!(requirement["operator"].as_str(), Some("NotIn" | "DoesNotExist"));
                if matches_no_labels && version < SchedulerVersion::V1_37 {
                    continue;
                }
                match term.pointer_mut("/namespaceSelector/matchExpressions").and_then(Value::as_array_mut) {
                    Some(list) => list.push(requirement),
                    None => term["namespaceSelector"]["matchExpressions"] = json!([requirement]),
                }
            }
        }
    }
}

/// A requirement on the namespaces' `team` label.
pub(crate) fn team_requirement(rng: &mut Rng) -> Value {
    match rng.below(5) {
        0 => json!({"key": "team", "operator": "In", "values": ["1"]}),
        1 => json!({"key": "team", "operator": "In", "values": ["1", "2"]}),
        2 => json!({"key": "team", "operator": "NotIn", "values": ["2"]}),
        3 => json!({"key": "team", "operator": "Exists"}),
        _ => json!({"key": "team", "operator": "DoesNotExist"}),
    }
}

/// Host ports on some sidecars (init containers with `restartPolicy: Always`), which NodePorts
/// counts as it counts the app containers'.
fn sidecar_ports(rng: &mut Rng, pod: &mut Value) {
    let Some(init) = pod["spec"].get_mut("initContainers").and_then(Value::as_array_mut) else { return };
    for c in init.iter_mut().filter(|c| c["restartPolicy"] == "Always") {
        if !rng.percent(35) {
            continue;
        }
        let port = *rng.pick(&[80, 8080, 9090]);
        let mut p = json!({"containerPort": port, "hostPort": port, "protocol": rng.pick(&["TCP", "UDP"])});
        if rng.percent(30) {
            p["hostIP"] = json!(rng.pick(&["127.0.0.1", "10.0.0.1", "0.0.0.0"]));
        }
        c["ports"] = json!([p]);
    }
}

/// A `matchFields` requirement on the node name: in a term of the pod's required node affinity,
/// or the whole affinity, as the DaemonSet controller gives its pods (`nodeSelectorTerms` of one
/// `metadata.name In [node]`; now and then a node the cluster no longer has).
fn match_fields(rng: &mut Rng, nodes: &[String], pod: &mut Value) {
    let required = pod
        .pointer_mut("/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms")
        .and_then(Value::as_array_mut);
    match required {
        Some(terms) => {
            if !rng.percent(25) {
                return;
            }
            let operator = if rng.percent(60) { "In" } else { "NotIn" };
            let requirement = json!({"key": "metadata.name", "operator": operator, "values": [node_name(rng, nodes)]});
            if rng.percent(50) {
                terms.push(json!({"matchFields": [requirement]}));
            } else {
                let i = rng.below(terms.len() as u64) as usize;
                terms[i]["matchFields"] = json!([requirement]);
            }
        }
        None => {
            if !rng.percent(5) {
                return;
            }
            let requirement = json!({"key": "metadata.name", "operator": "In", "values": [node_name(rng, nodes)]});
            if !pod["spec"]["affinity"].is_object() {
                pod["spec"]["affinity"] = json!({});
            }
            pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] =
                json!({"nodeSelectorTerms": [{"matchFields": [requirement]}]});
        }
    }
}

/// One of the case's nodes, now and then one the cluster no longer has.
fn node_name(rng: &mut Rng, nodes: &[String]) -> String {
    if rng.percent(90) && !nodes.is_empty() {
        rng.pick(nodes).clone()
    } else {
        "gone".to_string()
    }
}

/// An inline AWS EBS, Azure Disk, iSCSI or RBD volume, from a small set so that pods meet on one.
fn inline_volume(rng: &mut Rng, pod: &mut Value) {
    let names = volume_names(pod);
    let read_only = rng.percent(40);
    let volume = match rng.below(4) {
        0 => {
            let mut source =
                json!({"volumeID": rng.pick(&["vol-0a1", "vol-0b2"]), "fsType": "ext4", "readOnly": read_only});
            if rng.percent(20) {
                source["partition"] = json!(1);
            }
            json!({"name": "ebs", "awsElasticBlockStore": source})
        }
        1 => {
            let disk = *rng.pick(&["disk1", "disk2"]);
            json!({"name": "azure", "azureDisk": {
                "diskName": disk,
                "diskURI": format!("/subscriptions/s1/resourceGroups/rg/providers/Microsoft.Compute/disks/{disk}"),
                "kind": "Managed", "cachingMode": rng.pick(&["None", "ReadOnly", "ReadWrite"]),
                "fsType": "ext4", "readOnly": read_only,
            }})
        }
        2 => json!({"name": "iscsi", "iscsi": {
            "targetPortal": "10.0.0.5:3260",
            "iqn": rng.pick(&["iqn.2026-01.com.example:t1", "iqn.2026-01.com.example:t2"]),
            "lun": 0, "iscsiInterface": "default", "fsType": "ext4", "readOnly": read_only,
        }}),
        _ => {
            let monitors = rng
                .pick(&[vec!["10.0.0.7:6789"], vec!["10.0.0.7:6789", "10.0.0.8:6789"], vec!["10.0.0.8:6789"]])
                .clone();
            // `pool`, `user` and `keyring` as the API server defaults them (the `+default` markers of
            // core/v1 RBDVolumeSource, `zz_generated.defaults.go`): a stored pod always has a pool,
            // and VolumeRestrictions compares it as it is ("" is no pool).
            let pool = if rng.percent(70) { "rbd" } else { "kube" };
            json!({"name": "rbd", "rbd": {
                "monitors": monitors, "image": rng.pick(&["img1", "img2"]), "pool": pool,
                "user": "admin", "keyring": "/etc/ceph/keyring", "fsType": "ext4", "readOnly": read_only,
            }})
        }
    };
    if !names.iter().any(|n| Some(n.as_str()) == volume["name"].as_str()) {
        push_volume(pod, volume);
    }
}

/// The class of the ephemeral volumes' templates, `dyn` as `oracle_volumes` draws it (a CSI
/// provisioner, `WaitForFirstConsumer`), added when the case has none.
fn ephemeral_class(has_dyn: &mut bool, added: &mut Vec<Value>) {
    if !*has_dyn {
        *has_dyn = true;
        added.push(json!({
            "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": "dyn"}, "provisioner": DRIVER, "volumeBindingMode": "WaitForFirstConsumer",
        }));
    }
}

/// A generic ephemeral volume named `scratch` and its claim template.
fn ephemeral_volume() -> Value {
    json!({"name": "scratch", "ephemeral": {"volumeClaimTemplate": {
        "metadata": {"labels": {"type": "scratch"}},
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "dyn", "resources": {"requests": {"storage": "1Gi"}}},
    }}})
}

/// The claim the ephemeral volume controller makes for `pod`'s volume `scratch`, owned by `owner_uid`
/// (the pod's, or an earlier pod's of the same name).
fn ephemeral_claim(pod: &Value, owner_uid: &str) -> Value {
    let pod_name = pod["metadata"]["name"].as_str().unwrap_or_default();
    let namespace = pod["metadata"]["namespace"].as_str().unwrap_or("default");
    let name = format!("{pod_name}-scratch");
    json!({
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": name, "namespace": namespace, "uid": format!("uid-{namespace}-{name}"),
            "labels": {"type": "scratch"},
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pod_name, "uid": owner_uid,
                "controller": true, "blockOwnerDeletion": true}],
        },
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "dyn", "resources": {"requests": {"storage": "1Gi"}}},
        "status": {"phase": "Pending"},
    })
}

/// Binds `claim` to a new CSI volume of its class, provisioned for it.
fn bind(claim: &mut Value, added: &mut Vec<Value>) {
    let (namespace, name) = (
        claim["metadata"]["namespace"].as_str().unwrap_or("default").to_string(),
        claim["metadata"]["name"].as_str().unwrap_or_default().to_string(),
    );
    let pv = format!("pv-{namespace}-{name}");
    added.push(json!({
        "apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": pv, "annotations": {"pv.kubernetes.io/provisioned-by": DRIVER}},
        "spec": {
            "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "persistentVolumeReclaimPolicy": "Delete",
            "storageClassName": claim["spec"]["storageClassName"].clone(),
            "csi": {"driver": DRIVER, "volumeHandle": format!("h-{pv}")},
            "claimRef": {"kind": "PersistentVolumeClaim", "namespace": namespace, "name": name,
                "uid": claim["metadata"]["uid"].clone()},
        },
        "status": {"phase": "Bound"},
    }));
    claim["spec"]["volumeName"] = json!(pv);
    claim["metadata"]["annotations"] = json!({"pv.kubernetes.io/bind-completed": "yes"});
    claim["status"] = json!({"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}});
}

/// The pod's ephemeral volume: its claim not made yet, made and waiting for the pod's node, bound,
/// or left by an earlier pod of the same name (not this pod's: the pod cannot use it).
fn pending_ephemeral_volume(rng: &mut Rng, pod: &mut Value, added: &mut Vec<Value>) {
    push_volume(pod, ephemeral_volume());
    let uid = pod["metadata"]["uid"].as_str().unwrap_or_default().to_string();
    match rng.below(10) {
        0 | 1 => {} // the controller has not made the claim yet
        2 => added.push(ephemeral_claim(pod, "uid-earlier-pod")),
        3 | 4 => {
            let mut claim = ephemeral_claim(pod, &uid);
            bind(&mut claim, added);
            added.push(claim);
        }
        _ => added.push(ephemeral_claim(pod, &uid)),
    }
}

/// A `Released` in-tree volume whose claim is gone (reclaim policy `Retain`): no claim can bind it.
fn released_in_tree_volume(rng: &mut Rng, objects: &[Value]) -> Value {
    let n = objects.iter().filter(|o| o["kind"] == "PersistentVolume").count();
    let name = format!("pv-retained{n}");
    let source = match rng.below(3) {
        0 => json!({"awsElasticBlockStore": {"volumeID": "vol-0c3", "fsType": "ext4"}}),
        1 => json!({"azureDisk": {"diskName": "disk3",
            "diskURI": "/subscriptions/s1/resourceGroups/rg/providers/Microsoft.Compute/disks/disk3",
            "kind": "Managed", "cachingMode": "ReadOnly", "fsType": "ext4"}}),
        _ => json!({"gcePersistentDisk": {"pdName": "pd3", "fsType": "ext4"}}),
    };
    let mut spec = json!({
        "capacity": {"storage": "2Gi"}, "accessModes": ["ReadWriteOnce"], "persistentVolumeReclaimPolicy": "Retain",
        "storageClassName": "wffc",
        "claimRef": {"kind": "PersistentVolumeClaim", "namespace": "default", "name": format!("gone{n}"), "uid": format!("uid-gone{n}")},
    });
    if let (Some(spec), Some(source)) = (spec.as_object_mut(), source.as_object()) {
        spec.extend(source.clone());
    }
    json!({
        "apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": name, "labels": {}}, "spec": spec, "status": {"phase": "Released"},
    })
}

/// Claims' and volumes' modes, attribute classes, selectors, deletion and annotations.
fn claims_and_volumes(rng: &mut Rng, objects: &mut [Value]) {
    // Per bound volume, the mode and attributes class of its claim.
    let mut bound: Map<String, Value> = Map::new();
    for o in objects.iter_mut().filter(|o| o["kind"] == "PersistentVolumeClaim") {
        if o["metadata"].get("ownerReferences").is_some() {
            // An ephemeral volume's claim: its spec is the pod's template.
            continue;
        }
        let spec = &mut o["spec"];
        match rng.below(20) {
            0 | 1 => spec["volumeMode"] = json!("Filesystem"),
            2 => spec["volumeMode"] = json!("Block"),
            _ => {}
        }
        if rng.percent(8) {
            spec["volumeAttributesClassName"] = json!(rng.pick(VOLUME_ATTRIBUTES_CLASSES));
        }
        let pending = o["status"]["phase"] == "Pending";
        if pending && rng.percent(12) {
            o["spec"]["selector"] = match rng.below(4) {
                0 => json!({"matchLabels": {"tier": rng.pick(&["fast", "slow"])}}),
                1 => json!({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["fast", "slow"]}]}),
                2 => json!({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["slow"]}]}),
                _ => json!({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}),
            };
        }
        if rng.percent(4) {
            o["metadata"]["deletionTimestamp"] = json!(DELETED_AT);
            o["metadata"]["deletionGracePeriodSeconds"] = json!(0);
            o["metadata"]["finalizers"] = json!(["kubernetes.io/pvc-protection"]);
        }
        if let Some(pv) = o["spec"]["volumeName"].as_str() {
            bound.insert(
                pv.to_string(),
                json!([o["spec"].get("volumeMode").cloned(), o["spec"].get("volumeAttributesClassName").cloned()]),
            );
        }
    }
    for o in objects.iter_mut().filter(|o| o["kind"] == "PersistentVolume" && o["status"]["phase"] != "Released") {
        let name = o["metadata"]["name"].as_str().unwrap_or_default().to_string();
        let claimed = o["spec"].get("claimRef").is_some();
        let spec = &mut o["spec"];
        match bound.get(&name).cloned().or_else(|| claimed.then(|| json!([null, null]))) {
            // The claim's mode and class: what the PV controller bound them by.
            Some(claim) => {
                match &claim[0] {
                    Value::String(mode) => spec["volumeMode"] = json!(mode),
                    _ if rng.percent(10) => spec["volumeMode"] = json!("Filesystem"),
                    _ => {}
                }
                if let Value::String(class) = &claim[1] {
                    spec["volumeAttributesClassName"] = json!(class);
                }
            }
            None => {
                match rng.below(20) {
                    0 | 1 => spec["volumeMode"] = json!("Filesystem"),
                    2 | 3 => spec["volumeMode"] = json!("Block"),
                    _ => {}
                }
                if rng.percent(10) {
                    spec["volumeAttributesClassName"] = json!(rng.pick(VOLUME_ATTRIBUTES_CLASSES));
                }
                if rng.percent(40) {
                    o["metadata"]["labels"]["tier"] = json!(rng.pick(&["fast", "slow"]));
                }
            }
        }
        volume_metadata(rng, o);
        pv_match_fields(rng, o);
    }
}

/// A volume's annotations (its provisioner's, the legacy storage class) and, now and then, its
/// deletion (held by the PV protection finalizer).
fn volume_metadata(rng: &mut Rng, pv: &mut Value) {
    let mut annotations = Map::new();
    if pv["spec"]["csi"]["driver"] == DRIVER && rng.percent(50) {
        annotations.insert("pv.kubernetes.io/provisioned-by".into(), json!(DRIVER));
    }
    if let Some(class) = pv["spec"]["storageClassName"].as_str().map(String::from) {
        if rng.percent(15) {
            // The legacy annotation: beside the field, or alone (a volume made before 1.6).
            annotations.insert(BETA_STORAGE_CLASS.into(), json!(class));
            if rng.percent(50) {
                if let Some(spec) = pv["spec"].as_object_mut() {
                    spec.remove("storageClassName");
                }
            }
        }
    }
    if let Some(existing) = pv["metadata"].get_mut("annotations").and_then(Value::as_object_mut) {
        existing.extend(annotations);
    } else if !annotations.is_empty() {
        pv["metadata"]["annotations"] = Value::Object(annotations);
    }
    if rng.percent(5) {
        pv["metadata"]["deletionTimestamp"] = json!(DELETED_AT);
        pv["metadata"]["deletionGracePeriodSeconds"] = json!(0);
        pv["metadata"]["finalizers"] = json!(["kubernetes.io/pv-protection"]);
    }
}

/// Now and then a volume's node affinity on the node name (`matchFields`), which upstream matches
/// against a node without a name (`CheckNodeAffinity` builds the node from its labels).
fn pv_match_fields(rng: &mut Rng, pv: &mut Value) {
    if !rng.percent(6) {
        return;
    }
    let operator = if rng.percent(50) { "In" } else { "NotIn" };
    let node = format!("n{}", rng.below(3));
    let term = json!({"matchFields": [{"key": "metadata.name", "operator": operator, "values": [node]}]});
    match pv.pointer_mut("/spec/nodeAffinity/required/nodeSelectorTerms").and_then(Value::as_array_mut) {
        Some(terms) => terms.push(term),
        None => pv["spec"]["nodeAffinity"] = json!({"required": {"nodeSelectorTerms": [term]}}),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::Value;

    use crate::oracle::{generate, Domain};

    /// The shapes are those the API server and its controllers make: an ephemeral volume's claim is
    /// `<pod>-<volume>` in the pod's namespace and, but for the one an earlier pod left, controlled
    /// by the pod; a bound claim and its volume agree on `volumeMode` and
    /// `volumeAttributesClassName`; a stored RBD volume has its pool.
    #[test]
    fn claims_and_volumes_are_as_the_api_server_and_controllers_make_them() {
        let (mut ephemeral, mut bound_pairs, mut rbd) = (0, 0, 0);
        for seed in 1..=2000 {
            let case = generate(&Domain::shared(), seed);
            let by_name = |kind: &str| -> BTreeMap<String, &Value> {
                case.objects
                    .iter()
                    .filter(|o| o["kind"] == kind)
                    .map(|o| {
                        let m = &o["metadata"];
                        (format!("{}/{}", m["namespace"].as_str().unwrap_or(""), m["name"].as_str().unwrap_or("")), o)
                    })
                    .collect()
            };
            let (claims, volumes) = (by_name("PersistentVolumeClaim"), by_name("PersistentVolume"));
            for pod in case.objects.iter().filter(|o| o["kind"] == "Pod").chain(std::iter::once(&case.pod)) {
                for v in pod["spec"]["volumes"].as_array().into_iter().flatten() {
                    if let Some(source) = v.get("rbd") {
                        rbd += 1;
                        assert!(source["pool"].is_string(), "seed {seed}: {v}");
                    }
                    if v.get("ephemeral").is_none() {
                        continue;
                    }
                    ephemeral += 1;
                    let key = format!(
                        "{}/{}-{}",
                        pod["metadata"]["namespace"].as_str().unwrap(),
                        pod["metadata"]["name"].as_str().unwrap(),
                        v["name"].as_str().unwrap()
                    );
                    let placed = pod["spec"].get("nodeName").is_some();
                    match claims.get(&key) {
                        Some(claim) => {
                            let owner = &claim["metadata"]["ownerReferences"][0];
                            assert_eq!(owner["controller"], true, "seed {seed}: {claim}");
                            assert!(
                                owner["uid"] == pod["metadata"]["uid"]
                                    || (!placed && owner["uid"] == "uid-earlier-pod"),
                                "seed {seed}: {claim}"
                            );
                        }
                        None => assert!(!placed, "seed {seed}: placed pod without its claim {key}"),
                    }
                }
            }
            for claim in claims.values() {
                let Some(pv) = claim["spec"]["volumeName"].as_str().and_then(|n| volumes.get(&format!("/{n}"))) else {
                    continue;
                };
                bound_pairs += 1;
                let mode = |o: &Value| o["spec"]["volumeMode"].as_str().unwrap_or("Filesystem").to_string();
                assert_eq!(mode(claim), mode(pv), "seed {seed}: {claim} {pv}");
                assert_eq!(
                    claim["spec"]["volumeAttributesClassName"], pv["spec"]["volumeAttributesClassName"],
                    "seed {seed}: {claim} {pv}"
                );
            }
        }
        assert!(ephemeral > 100 && bound_pairs > 200 && rbd > 50, "{ephemeral} {bound_pairs} {rbd}");
    }
}
