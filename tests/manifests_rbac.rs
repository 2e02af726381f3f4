//! The ClusterRole in manifests/ grants exactly what the live source watches and the binder
//! creates: get/list/watch on each watched kind, create on pods/binding, nothing more.

use std::collections::BTreeSet;

use predicate_extender::cluster::source::kube::WATCHED_KINDS;
use serde_yaml::Value;

fn rbac_docs() -> Vec<Value> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/manifests/rbac.yaml");
    let text = std::fs::read_to_string(path).unwrap();
    serde_yaml::Deserializer::from_str(&text).map(|d| serde::Deserialize::deserialize(d).unwrap()).collect()
}

/// `(resource.group, verb)` pairs; the core group is written without a suffix.
fn granted(role: &Value) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for rule in role["rules"].as_sequence().unwrap() {
        let strings = |key: &str| -> Vec<String> {
            rule[key].as_sequence().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect()
        };
        for group in strings("apiGroups") {
            for resource in strings("resources") {
                for verb in strings("verbs") {
                    let name = if group.is_empty() { resource.clone() } else { format!("{resource}.{group}") };
                    out.insert((name, verb));
                }
            }
        }
    }
    out
}

#[test]
fn the_cluster_role_matches_what_the_extender_does() {
    let docs = rbac_docs();
    let role = docs.iter().find(|d| d["kind"] == "ClusterRole").expect("a ClusterRole");
    let mut want = BTreeSet::new();
    for kind in WATCHED_KINDS {
        for verb in ["get", "list", "watch"] {
            want.insert((kind.resource().to_string(), verb.to_string()));
        }
    }
    want.insert(("pods/binding".to_string(), "create".to_string()));
    assert_eq!(granted(role), want);

    let binding = docs.iter().find(|d| d["kind"] == "ClusterRoleBinding").expect("a ClusterRoleBinding");
    assert_eq!(binding["roleRef"]["name"], role["metadata"]["name"]);
    let account = docs.iter().find(|d| d["kind"] == "ServiceAccount").expect("a ServiceAccount");
    assert_eq!(binding["subjects"][0]["name"], account["metadata"]["name"]);
    assert_eq!(binding["subjects"][0]["namespace"], account["metadata"]["namespace"]);
}
