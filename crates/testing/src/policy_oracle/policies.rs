//! Random Policy files (issue 37): subsets of the classic predicates, with and without
//! `alwaysCheckAllPredicates` and the extender's `order`; priorities with random weights; every
//! argument type (`labelsPresence`, `serviceAffinity`, `labelPreference`, `serviceAntiAffinity`,
//! `requestedToCapacityRatioArguments`) with random values; `hardPodAffinitySymmetricWeight`; and
//! now and then an invalid entry, so that both sides are asked to refuse the same files.
//!
//! The labels the arguments name are those the generated nodes carry (`disk`, `size`, the zone) and
//! one no node has.

use serde_json::{json, Map, Value};

use gen_cluster::generate::Rng;

/// Predicates both the extender and v1.22 register.
pub const SHARED_PREDICATES: &[&str] = &[
    "CheckNodeUnschedulable",
    "GeneralPredicates",
    "HostName",
    "PodFitsHostPorts",
    "MatchNodeSelector",
    "PodFitsResources",
    "NoDiskConflict",
    "PodToleratesNodeTaints",
    "MaxEBSVolumeCount",
    "MaxGCEPDVolumeCount",
    "MaxAzureDiskVolumeCount",
    "MaxCSIVolumeCountPred",
    "CheckVolumeBinding",
    "NoVolumeZoneConflict",
    "EvenPodsSpread",
    "MatchInterPodAffinity",
];

/// Predicates only one side registers: the classic ones v1.22 no longer has, and v1.22's own
/// names (docs/semantics.md).
pub const ONE_SIDED_PREDICATES: &[&str] = &[
    "CheckNodeCondition",
    "CheckNodeMemoryPressure",
    "CheckNodeDiskPressure",
    "CheckNodePIDPressure",
    "PodToleratesNodeNoExecuteTaints",
    "MaxCSIVolumeCount",
    "MaxCinderVolumeCount",
    "PodFitsPorts",
];

/// Priorities both register that take no argument.
pub const SHARED_PRIORITIES: &[&str] = &[
    "SelectorSpreadPriority",
    "InterPodAffinityPriority",
    "LeastRequestedPriority",
    "MostRequestedPriority",
    "BalancedResourceAllocation",
    "NodePreferAvoidPodsPriority",
    "NodeAffinityPriority",
    "TaintTolerationPriority",
    "ImageLocalityPriority",
    "EvenPodsSpreadPriority",
    "EqualPriority",
    "ServiceSpreadingPriority",
];

/// Priorities only one side registers.
pub const ONE_SIDED_PRIORITIES: &[&str] = &["ResourceLimitsPriority", "RequestedToCapacityRatioPriority"];

const ZONE: &str = "topology.kubernetes.io/zone";
/// Labels the arguments name: on some generated nodes, and one on none.
const LABELS: &[&str] = &["disk", "size", ZONE, "kubernetes.io/hostname", "absent"];

fn shuffle<T>(rng: &mut Rng, items: &mut [T]) {
    for i in (1..items.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        items.swap(i, j);
    }
}

fn labels(rng: &mut Rng) -> Value {
    let mut out: Vec<&str> = LABELS.iter().copied().filter(|_| rng.percent(30)).collect();
    if out.is_empty() {
        out.push(*rng.pick(LABELS));
    }
    json!(out)
}

/// A custom predicate's name: letters and digits, as Policies name them.
fn custom_name(rng: &mut Rng, prefix: &str) -> String {
    format!("{prefix}{}", rng.below(1000))
}

fn predicates(rng: &mut Rng) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for name in SHARED_PREDICATES {
        if rng.percent(35) {
            out.push(json!({"name": name}));
        }
    }
    if rng.percent(3) {
        out.push(json!({"name": rng.pick(ONE_SIDED_PREDICATES)}));
    }
    for _ in 0..rng.below(3) {
        if rng.percent(50) {
            let argument = json!({"labelsPresence": {"labels": labels(rng), "presence": rng.percent(50)}});
            out.push(json!({"name": custom_name(rng, "Labels"), "argument": argument}));
        } else if rng.percent(50) {
            let l = if rng.percent(70) { json!([ZONE]) } else { labels(rng) };
            out.push(json!({"name": custom_name(rng, "Affinity"), "argument": {"serviceAffinity": {"labels": l}}}));
        }
    }
    if rng.percent(3) {
        // Invalid on both sides, each its own way.
        out.push(match rng.below(5) {
            0 => json!({"name": "NoSuchPredicate"}),
            1 => json!({"name": "Both", "argument": {"labelsPresence": {"labels": ["disk"], "presence": true}, "serviceAffinity": {"labels": [ZONE]}}}),
            2 => json!({"name": "Empty", "argument": {}}),
            3 => json!({"name": "NoLabels", "argument": {"labelsPresence": {"labels": [], "presence": true}}}),
            _ => json!({"name": "PodFitsResources", "argument": {"labelsPresence": {"labels": ["disk"], "presence": true}}}),
        });
    }
    if rng.percent(2) && !out.is_empty() {
        let again = out[rng.below(out.len() as u64) as usize].clone();
        out.push(again);
    }
    shuffle(rng, &mut out);
    // The extender's own ordering: v1.22 never sees it.
    if rng.percent(25) {
        for entry in out.iter_mut() {
            if rng.percent(40) {
                entry["order"] = json!(1 + rng.below(5));
            }
        }
    }
    out
}

fn weight(rng: &mut Rng) -> i64 {
    if rng.percent(10) {
        *rng.pick(&[10, 100, 10000])
    } else {
        1 + rng.below(5) as i64
    }
}

fn shape(rng: &mut Rng) -> Value {
    let mut points = Vec::new();
    let mut utilization = rng.below(30) as i64;
    for _ in 0..1 + rng.below(4) {
        points.push(json!({"utilization": utilization, "score": rng.below(11)}));
        utilization += 1 + rng.below(50) as i64;
        if utilization > 100 {
            break;
        }
    }
    json!(points)
}

fn ratio_arguments(rng: &mut Rng) -> Value {
    let mut argument = json!({"shape": shape(rng)});
    if rng.percent(60) {
        let mut resources = Vec::new();
        for name in ["cpu", "memory"] {
            if rng.percent(70) {
                resources.push(json!({"name": name, "weight": 1 + rng.below(3)}));
            }
        }
        if !resources.is_empty() {
            argument["resources"] = json!(resources);
        }
    }
    argument
}

fn priorities(rng: &mut Rng) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for name in SHARED_PRIORITIES {
        // ServiceSpreadingPriority and SelectorSpreadPriority are one plugin in v1.22: rarely both.
        let chance = if *name == "ServiceSpreadingPriority" { 8 } else { 35 };
        if rng.percent(chance) {
            out.push(json!({"name": name, "weight": weight(rng)}));
        }
    }
    if rng.percent(3) {
        out.push(json!({"name": rng.pick(ONE_SIDED_PRIORITIES), "weight": weight(rng)}));
    }
    // Custom label preferences share one weight, as v1.22 requires (a different one is below).
    let label_weight = weight(rng);
    for _ in 0..rng.below(3) {
        let argument = json!({"labelPreference": {"label": rng.pick(LABELS), "presence": rng.percent(50)}});
        out.push(json!({"name": custom_name(rng, "Prefer"), "weight": label_weight, "argument": argument}));
    }
    if rng.percent(20) {
        let argument = json!({"serviceAntiAffinity": {"label": if rng.percent(70) { ZONE } else { "disk" }}});
        out.push(json!({"name": custom_name(rng, "Spread"), "weight": weight(rng), "argument": argument}));
    }
    if rng.percent(20) {
        let argument = json!({"requestedToCapacityRatioArguments": ratio_arguments(rng)});
        out.push(json!({"name": "RequestedToCapacityRatioPriority", "weight": weight(rng), "argument": argument}));
    }
    if rng.percent(4) {
        out.push(match rng.below(6) {
            0 => json!({"name": "NoSuchPriority", "weight": 1}),
            1 => json!({"name": "LeastRequestedPriority", "weight": 0}),
            2 => json!({"name": "ImageLocalityPriority", "weight": -2}),
            3 => json!({"name": "Prefer9999", "weight": label_weight + 1, "argument": {"labelPreference": {"label": "disk", "presence": true}}}),
            4 => json!({"name": "Ratio2", "weight": 1, "argument": {"requestedToCapacityRatioArguments": {"shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]}}}),
            _ => json!({"name": "BadShape", "weight": 1, "argument": {"requestedToCapacityRatioArguments": {"shape": [{"utilization": 50, "score": 11}]}}}),
        });
    }
    shuffle(rng, &mut out);
    out
}

/// A random Policy document (the extender's, `order` included).
pub fn policy(rng: &mut Rng) -> Value {
    let mut p = Map::new();
    p.insert("kind".into(), json!("Policy"));
    p.insert("apiVersion".into(), json!("v1"));
    if rng.percent(85) {
        p.insert("predicates".into(), json!(predicates(rng)));
    }
    if rng.percent(85) {
        p.insert("priorities".into(), json!(priorities(rng)));
    }
    if rng.percent(50) {
        p.insert("alwaysCheckAllPredicates".into(), json!(true));
    }
    if rng.percent(1) {
        // v1.22 reads a file without them as a Policy; the extender wants both.
        p.remove(if rng.percent(50) { "kind" } else { "apiVersion" });
    }
    if rng.percent(30) {
        let w = if rng.percent(5) { *rng.pick(&[-1, 101]) } else { rng.below(101) as i64 };
        p.insert("hardPodAffinitySymmetricWeight".into(), json!(w));
    }
    Value::Object(p)
}
