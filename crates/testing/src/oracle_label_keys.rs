//! The oracle generator's topology spread `matchLabelKeys` (issue 25), as pods really arrive: a
//! `rev` label (a Deployment's `pod-template-hash` stands for it) on some pods, and on some of the
//! pod's constraints `matchLabelKeys` naming keys its `labelSelector` does not use (validation
//! refuses a key in both: `pkg/apis/core/validation`, `ValidateMatchLabelKeysAndMismatchLabelKeys`),
//! merged into the selector as the API server does at creation since v1.34
//! (`pkg/registry/core/pod/strategy.go`, `mutateTopologySpreadConstraints`, gate
//! `MatchLabelKeysInPodTopologySpreadSelectorMerge`, beta and on by default): `key In (value)` for
//! each key the pod has. The scheduler merges again (`podtopologyspread/common.go`,
//! `filterTopologySpreadConstraints`), which selects the same pods.
//!
//! Drawn from its own random stream, so that a case's other objects are those of the same seed
//! before `matchLabelKeys` were generated.

use serde_json::{json, Value};

use gen_cluster::generate::Rng;

const KEYS: &[&str] = &["rev", "app", "tier"];

/// The label keys a selector names.
fn selector_keys(selector: &Value) -> Vec<String> {
    let mut keys: Vec<String> =
        selector["matchLabels"].as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default();
    for e in selector["matchExpressions"].as_array().into_iter().flatten() {
        if let Some(k) = e["key"].as_str() {
            keys.push(k.to_string());
        }
    }
    keys
}

fn add_rev(rng: &mut Rng, pod: &mut Value, percent: u32) {
    if rng.percent(percent) {
        let rev = if rng.percent(50) { "r1" } else { "r2" };
        if let Some(labels) = pod["metadata"].get_mut("labels").and_then(Value::as_object_mut) {
            labels.insert("rev".into(), json!(rev));
        }
    }
}

/// Adds `rev` labels to the pods and `matchLabelKeys`, merged, to the pod's spread constraints.
pub(super) fn add_match_label_keys(seed: u64, objects: &mut [Value], pod: &mut Value) {
    let mut rng = Rng::derive(seed, 25, 2);
    let Some(constraints) = pod["spec"]["topologySpreadConstraints"].as_array().map(Vec::len) else { return };
    for o in objects.iter_mut().filter(|o| o["kind"] == "Pod") {
        add_rev(&mut rng, o, 60);
    }
    add_rev(&mut rng, pod, 80);
    let labels = pod["metadata"]["labels"].clone();
    for i in 0..constraints {
        if !rng.percent(40) {
            continue;
        }
        let c = &mut pod["spec"]["topologySpreadConstraints"][i];
        let used = selector_keys(&c["labelSelector"]);
        let keys: Vec<&str> =
            KEYS.iter().copied().filter(|k| !used.iter().any(|u| u == k) && rng.percent(60)).collect();
        if keys.is_empty() {
            continue;
        }
        c["matchLabelKeys"] = json!(keys);
        // The API server's merge: `key In (value)` for each key the pod has.
        for key in keys {
            let Some(value) = labels.get(key) else { continue };
            let requirement = json!({"key": key, "operator": "In", "values": [value]});
            match c["labelSelector"].get_mut("matchExpressions").and_then(Value::as_array_mut) {
                Some(list) => list.push(requirement),
                None => c["labelSelector"]["matchExpressions"] = json!([requirement]),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::oracle::{generate, Domain};

    /// Every generated `matchLabelKeys` key the pod has is merged into the selector as
    /// `key In (value)`, and none is in the selector otherwise (pkg/registry/core/pod/strategy.go,
    /// applyMatchLabelKeys; pkg/apis/core/validation, ValidateMatchLabelKeysAndMismatchLabelKeys).
    #[test]
    fn match_label_keys_arrive_merged_as_the_api_server_merges_them() {
        let mut seen = 0;
        for seed in 1..=2000 {
            let case = generate(&Domain::shared(), seed);
            for c in case.pod["spec"]["topologySpreadConstraints"].as_array().into_iter().flatten() {
                let Some(keys) = c["matchLabelKeys"].as_array() else { continue };
                seen += 1;
                for key in keys.iter().filter_map(|k| k.as_str()) {
                    let merged: Vec<_> = c["labelSelector"]["matchExpressions"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter(|e| e["key"] == key)
                        .collect();
                    assert!(c["labelSelector"]["matchLabels"].get(key).is_none(), "seed {seed}: {key} in matchLabels");
                    match case.pod["metadata"]["labels"].get(key) {
                        Some(value) => assert!(
                            merged.len() == 1
                                && merged[0]["operator"] == "In"
                                && merged[0]["values"] == serde_json::json!([value]),
                            "seed {seed}: {key} not merged: {c}"
                        ),
                        None => assert!(merged.is_empty(), "seed {seed}: {key} merged without a label"),
                    }
                }
            }
        }
        assert!(seen > 50, "{seen} constraints with matchLabelKeys");
    }
}
