//! kube-scheduler's configuration for the end-to-end clusters: `config/scheduler-config.yaml` as
//! shipped, with only what a test cluster must change: the kubeconfig (the shipped file runs in a
//! pod with its service account), the extender's address (a free port on 127.0.0.1, not 8888) and
//! leader election's timings (seconds instead of the defaults' 15 s, so a replica takes over within
//! a test). [`differences`] lists what differs, and a test checks that nothing else does.

use std::path::Path;

use serde_json::{json, Value};

pub const SHIPPED: &str = "config/scheduler-config.yaml";

/// The shipped lease (`leaderElection.resourceNamespace` / `resourceName`).
pub const LEASE_NAMESPACE: &str = "predicate-scheduler";
pub const LEASE_NAME: &str = "predicate-scheduler";

/// The paths the harness may change, as [`differences`] names them.
pub const ALLOWED_CHANGES: [&str; 5] = [
    "clientConnection.kubeconfig",
    "extenders[0].urlPrefix",
    "leaderElection.leaseDuration",
    "leaderElection.renewDeadline",
    "leaderElection.retryPeriod",
];

/// The shipped configuration as JSON.
pub fn shipped() -> Value {
    let path = crate::workspace_root().as_path().join(SHIPPED);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `config/scheduler-config-policy.yaml`: the shipped configuration with kube-scheduler's own
/// plugins that `config/policy.json` replaces turned off (`predicate-extender scheduler-config`).
pub const POLICY_ONLY: &str = "config/scheduler-config-policy.yaml";

/// `config` with the profile's `plugins` of [`POLICY_ONLY`], the only part in which that file
/// differs from the shipped one (`src/scheduler_config` checks it).
pub fn with_policy_only_plugins(mut config: Value) -> Value {
    let path = crate::workspace_root().as_path().join(POLICY_ONLY);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let file: Value = serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let plugins = file["profiles"][0]["plugins"].clone();
    assert!(plugins["filter"]["disabled"].as_array().is_some_and(|d| !d.is_empty()), "{}: {plugins}", path.display());
    config["profiles"][0]["plugins"] = plugins;
    config
}

/// `config` with kube-scheduler's NodeResourcesFit off at PreFilter and Filter: only the
/// extender's PodFitsResources guards a node's capacity.
pub fn without_node_resources_fit(mut config: Value) -> Value {
    let off = json!({"disabled": [{"name": "NodeResourcesFit"}]});
    config["profiles"][0]["plugins"] = json!({"preFilter": off, "filter": off});
    config
}

/// `config` without the extender's `bindVerb`: kube-scheduler binds every pod itself (its
/// DefaultBinder), and the extender learns of each binding from its watch of the pods.
pub fn with_kube_scheduler_binding(mut config: Value) -> Value {
    let extender = config.pointer_mut("/extenders/0").and_then(Value::as_object_mut);
    let removed = extender.and_then(|e| e.remove("bindVerb"));
    assert!(removed.is_some(), "the shipped configuration has no extenders[0].bindVerb: {config}");
    config
}

/// `config` for the in-process kube-scheduler (docs/in-process.md): no `extenders`, and the
/// profile's `plugins` and `pluginConfig` as `predicate-extender scheduler-config --in-process`
/// writes them for `policy` (the file it reads and the plugin's `policy` argument; `None`: the
/// default plan): the PredicateEngine plugin on at every extension point it implements, and
/// kube-scheduler's own plugins the Policy replaces off. What `overlays/in-process` ships for
/// config/policy.json (`config/scheduler-config-in-process.yaml`, tests/scheduler_config.rs).
pub fn in_process(mut config: Value, policy: Option<&Path>) -> Value {
    use predicate_extender::scheduler_config::{policy_plugins, render, Engine, DEFAULT_POLICY};
    let (file, bytes) = match policy {
        Some(path) => {
            let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            (path.display().to_string(), bytes)
        }
        None => ("the default Policy".to_string(), DEFAULT_POLICY.to_vec()),
    };
    let plugins = policy_plugins(&file, &bytes).unwrap_or_else(|e| panic!("{e}"));
    let path = policy.map(|p| p.display().to_string());
    let text = render("the harness", &plugins, Engine::InProcess { policy: path.as_deref() });
    let rendered: Value = serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    let Some(object) = config.as_object_mut() else { panic!("kube-scheduler's configuration is not an object") };
    object.remove("extenders");
    for key in ["plugins", "pluginConfig"] {
        config["profiles"][0][key] = rendered["profiles"][0][key].clone();
    }
    config
}

/// The shipped configuration for a test cluster.
pub fn adjusted(shipped: &Value, kubeconfig: &Path, extender_url: &str) -> Value {
    let mut config = shipped.clone();
    config["clientConnection"] = json!({"kubeconfig": kubeconfig.display().to_string()});
    if let Some(extender) = config.pointer_mut("/extenders/0") {
        extender["urlPrefix"] = json!(extender_url);
    }
    // Fast fail-over between replicas; the lease itself (namespace, name, lock) stays as shipped.
    config["leaderElection"]["leaseDuration"] = json!("4s");
    config["leaderElection"]["renewDeadline"] = json!("3s");
    config["leaderElection"]["retryPeriod"] = json!("500ms");
    config
}

/// Every path at which `a` and `b` differ (a key on one side only, or another value).
pub fn differences(a: &Value, b: &Value) -> Vec<String> {
    let mut out = Vec::new();
    diff("", a, b, &mut out);
    out
}

fn diff(path: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let sub = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                // A section on one side only is named by its leaves, as if empty on the other.
                let empty = Value::Object(serde_json::Map::new());
                match (x.get(k), y.get(k)) {
                    (Some(p), Some(q)) => diff(&sub, p, q, out),
                    (Some(p @ Value::Object(_)), None) => diff(&sub, p, &empty, out),
                    (None, Some(q @ Value::Object(_))) => diff(&sub, &empty, q, out),
                    _ => out.push(sub),
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                diff(&format!("{path}[{i}]"), p, q, out);
            }
        }
        _ if a == b => {}
        _ => out.push(path.to_string()),
    }
}
