//! The oracle generator's volumes bound through claims (issue 25): StorageClasses, PersistentVolumes
//! and PersistentVolumeClaims, the pod's `persistentVolumeClaim` volumes and some existing pods'
//! ones, and CSINodes with a CSI driver's attach limit. What the extender's CheckVolumeBinding,
//! NoVolumeZoneConflict and MaxCSIVolumeCount and today's VolumeBinding, VolumeZone,
//! VolumeRestrictions and NodeVolumeLimits plugins read.
//!
//! Drawn from its own random stream, so that a case's other objects are those of the same seed
//! before volumes were generated. In the shared domain only: ReadWriteOnce claims (no
//! ReadWriteOncePod), CSI persistent volumes of one driver (no in-tree volume migrated to CSI), no
//! CSIDriver or CSIStorageCapacity objects (docs/semantics.md, "Out of the generated domain").

use serde_json::{json, Value};

use gen_cluster::generate::Rng;

const DRIVER: &str = "csi.example.com";
const ZONE: &str = "topology.kubernetes.io/zone";
const BETA_ZONE: &str = "failure-domain.beta.kubernetes.io/zone";
const REGION: &str = "topology.kubernetes.io/region";
const HOSTNAME: &str = "kubernetes.io/hostname";
/// Classes a claim or a volume may name: "gone" has no StorageClass object.
const CLASSES: &[&str] = &["wffc", "dyn", "imm", "", "gone"];

fn zone(rng: &mut Rng) -> String {
    format!("z{}", rng.below(3))
}

struct Storage<'a> {
    rng: Rng,
    nodes: &'a [String],
    objects: Vec<Value>,
    volumes: u64,
    claims: u64,
}

impl Storage<'_> {
    fn class(&mut self, name: &str, provisioner: &str, mode: &str) {
        let mut class = json!({
            "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": name}, "provisioner": provisioner, "volumeBindingMode": mode,
        });
        if provisioner != "kubernetes.io/no-provisioner" && self.rng.percent(40) {
            let values: Vec<String> = (0..1 + self.rng.below(2)).map(|_| zone(&mut self.rng)).collect();
            class["allowedTopologies"] = json!([{"matchLabelExpressions": [{"key": ZONE, "values": values}]}]);
        }
        self.objects.push(class);
    }

    /// A PersistentVolume of `class`, bound to `claim` (namespace, name) when given.
    fn volume(&mut self, class: &str, claim: Option<(&str, &str)>) -> String {
        let ordinal = self.volumes;
        let name = format!("pv{ordinal}");
        self.volumes += 1;
        let rng = &mut self.rng;
        let mut labels = serde_json::Map::new();
        if rng.percent(40) {
            let value = if rng.percent(20) { "z0__z1".to_string() } else { zone(rng) };
            labels.insert(if rng.percent(30) { BETA_ZONE } else { ZONE }.into(), json!(value));
        }
        if rng.percent(5) {
            labels.insert(REGION.into(), json!("r0"));
        }
        // About 1Gi or 2Gi, never two of one size: of PVs of one size, kube-scheduler takes the
        // first its cache lists, in Go map order (docs/semantics.md, "PVs of one size").
        let gib: i64 = if *rng.pick(&["1Gi", "2Gi"]) == "1Gi" { 1 } else { 2 };
        let mut spec = json!({
            "capacity": {"storage": format!("{}Mi", gib * 1024 + ordinal as i64)},
            "accessModes": ["ReadWriteOnce"],
            "persistentVolumeReclaimPolicy": "Delete",
            "csi": {"driver": DRIVER, "volumeHandle": format!("h-{name}")},
        });
        if !class.is_empty() {
            spec["storageClassName"] = json!(class);
        }
        if rng.percent(50) {
            let expr = if rng.percent(50) {
                json!({"key": HOSTNAME, "operator": "In", "values": [rng.pick(self.nodes)]})
            } else {
                json!({"key": ZONE, "operator": "In", "values": [zone(rng)]})
            };
            spec["nodeAffinity"] = json!({"required": {"nodeSelectorTerms": [{"matchExpressions": [expr]}]}});
        }
        let phase = match claim {
            Some((namespace, claim)) => {
                spec["claimRef"] = json!({"kind": "PersistentVolumeClaim", "namespace": namespace, "name": claim, "uid": format!("uid-{namespace}-{claim}")});
                "Bound"
            }
            None => "Available",
        };
        self.objects.push(json!({
            "apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "labels": labels}, "spec": spec, "status": {"phase": phase},
        }));
        name
    }

    /// A claim in `namespace` (made, or only named when missing), as a pod's volume, and whether it
    /// is bound. `bound` asks for a bound claim (a pod already on a node has its volumes bound).
    fn claim(&mut self, namespace: &str, bound: bool) -> (Value, bool) {
        let name = format!("c{}", self.claims);
        self.claims += 1;
        let volume = json!({"name": format!("v-{name}"), "persistentVolumeClaim": {"claimName": name}});
        let kind = if bound { self.rng.below(42) } else { self.rng.below(100) };
        if kind < 4 && !bound {
            return (volume, false); // no such claim
        }
        let mut metadata = json!({"name": name, "namespace": namespace, "uid": format!("uid-{namespace}-{name}")});
        let request = *self.rng.pick(&["1Gi", "2Gi"]);
        let mut spec = json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": request}}});
        let class = if kind < 45 {
            *self.rng.pick(&["wffc", "dyn", "wffc", "imm", ""])
        } else if kind < 95 {
            *self.rng.pick(&["wffc", "wffc", "dyn"])
        } else {
            *self.rng.pick(CLASSES)
        };
        if !class.is_empty() {
            spec["storageClassName"] = json!(class);
        }
        let phase = if kind < 45 {
            // Bound, to a volume that exists (or, now and then, one that does not).
            let pv = if kind < 42 { self.volume(class, Some((namespace, &name))) } else { "pv-gone".to_string() };
            spec["volumeName"] = json!(pv);
            metadata["annotations"] = json!({"pv.kubernetes.io/bind-completed": "yes"});
            "Bound"
        } else {
            "Pending"
        };
        self.objects.push(json!({
            "apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": metadata, "spec": spec, "status": {"phase": phase},
        }));
        (volume, phase == "Bound")
    }
}

fn push_volume(pod: &mut Value, volume: Value) {
    match pod["spec"].get_mut("volumes").and_then(Value::as_array_mut) {
        Some(list) => list.push(volume),
        None => pod["spec"]["volumes"] = json!([volume]),
    }
}

/// Adds storage to a case (about a third of the cases): classes, volumes, claims of the pod to
/// schedule and of some existing pods, CSINodes. `seed` picks the draw; `objects` are the case's
/// objects so far (nodes and pods) and `pod` the pod to schedule.
pub(super) fn add_storage(seed: u64, nodes: &[String], objects: &mut Vec<Value>, pod: &mut Value) {
    let mut rng = Rng::derive(seed, 25, 1);
    if !rng.percent(35) || nodes.is_empty() {
        return;
    }
    let mut s = Storage { rng, nodes, objects: Vec::new(), volumes: 0, claims: 0 };
    for (name, provisioner, mode) in [
        ("wffc", "kubernetes.io/no-provisioner", "WaitForFirstConsumer"),
        ("dyn", DRIVER, "WaitForFirstConsumer"),
        ("imm", DRIVER, "Immediate"),
    ] {
        if s.rng.percent(85) {
            s.class(name, provisioner, mode);
        }
    }
    // Volumes waiting for a claim.
    for _ in 0..s.rng.below(5) {
        let class = *s.rng.pick(&["wffc", "wffc", "dyn", "imm", ""]);
        s.volume(class, None);
    }
    let namespace = pod["metadata"]["namespace"].as_str().unwrap_or("default").to_string();
    let mut shared = Vec::new();
    for _ in 0..1 + s.rng.below(2) {
        let (v, bound) = s.claim(&namespace, false);
        push_volume(pod, v.clone());
        if bound {
            shared.push(v);
        }
    }
    // Existing pods with bound claims of their own, or sharing one of the pod's bound ones.
    for o in objects.iter_mut() {
        if o["kind"] != "Pod" || o["spec"].get("nodeName").is_none() || !s.rng.percent(30) {
            continue;
        }
        let ns = o["metadata"]["namespace"].as_str().unwrap_or("default").to_string();
        let v = if ns == namespace && !shared.is_empty() && s.rng.percent(30) {
            s.rng.pick(&shared).clone()
        } else {
            s.claim(&ns, true).0
        };
        push_volume(o, v);
    }
    for node in nodes {
        if s.rng.percent(50) {
            let mut driver = json!({"name": DRIVER, "nodeID": node, "topologyKeys": [ZONE]});
            if s.rng.percent(80) {
                driver["allocatable"] = json!({"count": 1 + s.rng.below(3)});
            }
            s.objects.push(json!({
                "apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
                "metadata": {"name": node}, "spec": {"drivers": [driver]},
            }));
        }
    }
    objects.append(&mut s.objects);
}

#[cfg(test)]
mod tests {
    use crate::oracle::{generate, Domain};

    /// The shared domain draws claims, of every kind the plugins tell apart (volumebinding
    /// binder.go: bound, unbound WaitForFirstConsumer, unbound Immediate; volumezone: zone labels).
    #[test]
    fn the_generator_draws_pods_with_claims_of_every_kind() {
        let (mut with_claims, mut bound, mut pending, mut zoned, mut csinodes) = (0, 0, 0, 0, 0);
        for seed in 1..=1000 {
            let case = generate(&Domain::shared(), seed);
            let claims = case.pod["spec"]["volumes"]
                .as_array()
                .is_some_and(|v| v.iter().any(|v| v.get("persistentVolumeClaim").is_some()));
            with_claims += usize::from(claims);
            for o in &case.objects {
                match (o["kind"].as_str(), o["status"]["phase"].as_str()) {
                    (Some("PersistentVolumeClaim"), Some("Bound")) => bound += 1,
                    (Some("PersistentVolumeClaim"), Some("Pending")) => pending += 1,
                    (Some("PersistentVolume"), _) => {
                        zoned += usize::from(o["metadata"]["labels"].as_object().is_some_and(|l| !l.is_empty()))
                    }
                    (Some("CSINode"), _) => csinodes += 1,
                    _ => {}
                }
            }
        }
        assert!(with_claims > 250, "{with_claims} of 1000 cases with claims");
        for (what, n) in [("bound", bound), ("pending", pending), ("zoned", zoned), ("csinodes", csinodes)] {
            assert!(n > 50, "{n} {what}");
        }
    }
}
