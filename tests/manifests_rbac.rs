//! The ClusterRole in manifests/ grants exactly what the live source watches and the binder
//! creates: get/list/watch on each watched kind, create on pods/binding, nothing more. kube-scheduler
//! beside it gets the built-in roles of the cluster's own scheduler and nothing broader.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

use std::collections::BTreeSet;

use predicate_extender::source::kube::WATCHED_KINDS;
use serde_json::Value;

fn rbac_docs() -> Vec<Value> {
    docs_of("manifests/rbac.yaml")
}

fn docs_of(path: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap();
    serde_saphyr::from_multiple(&text).unwrap()
}

/// `(resource.group, verb)` pairs; the core group is written without a suffix.
fn granted(role: &Value) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for rule in role["rules"].as_array().unwrap() {
        let strings = |key: &str| -> Vec<String> {
            rule[key].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect()
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

#[test]
fn kube_scheduler_gets_the_built_in_scheduler_roles_and_the_authentication_reader() {
    let docs = rbac_docs();
    let account = docs.iter().find(|d| d["kind"] == "ServiceAccount").expect("a ServiceAccount");
    let the_account = |binding: &Value| {
        let subjects = binding["subjects"].as_array().expect("subjects");
        assert_eq!(subjects.len(), 1, "{:?}", binding["metadata"]["name"]);
        assert_eq!(subjects[0]["kind"], "ServiceAccount");
        assert_eq!(subjects[0]["name"], account["metadata"]["name"]);
        assert_eq!(subjects[0]["namespace"], account["metadata"]["namespace"]);
    };

    let scheduler = docs_of("manifests/scheduler-rbac.yaml");
    // Cluster-wide: exactly the two built-in roles the default scheduler has.
    let mut cluster_roles = BTreeSet::new();
    for binding in scheduler.iter().filter(|d| d["kind"] == "ClusterRoleBinding") {
        assert_eq!(binding["roleRef"]["kind"], "ClusterRole");
        cluster_roles.insert(binding["roleRef"]["name"].as_str().unwrap().to_string());
        the_account(binding);
    }
    assert_eq!(
        cluster_roles,
        BTreeSet::from(["system:kube-scheduler".to_string(), "system:volume-scheduler".to_string()])
    );
    assert!(!scheduler.iter().any(|d| d["kind"] == "ClusterRole"), "no ClusterRole of its own");

    // Reading the authentication ConfigMap in kube-system, for the secure port's delegated authn.
    let reader = scheduler
        .iter()
        .find(|d| d["kind"] == "RoleBinding" && d["metadata"]["namespace"] == "kube-system")
        .expect("a RoleBinding in kube-system");
    assert_eq!(reader["roleRef"]["kind"], "Role");
    assert_eq!(reader["roleRef"]["name"], "extension-apiserver-authentication-reader");
    the_account(reader);

    // Every RoleBinding names the same account (the lease Role is checked against the
    // configuration in tests/scheduler_config.rs).
    for binding in scheduler.iter().filter(|d| d["kind"] == "RoleBinding") {
        the_account(binding);
    }
}
