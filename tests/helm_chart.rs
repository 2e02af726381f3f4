//! The Helm chart (charts/predicate-extender) against what it must equal and refuse: `helm lint
//! --strict`; its defaults render the objects `kubectl kustomize manifests/` renders, object by
//! object (bar the Namespace, which a release is installed into), and its monitoring switch renders
//! manifests/monitoring/'s, and its policyOnly and inProcess switches the overlays'; the in-process
//! overlay changes only the Deployment's scheduler; `values.schema.json` refuses a bad value naming it; a changed scheduler
//! configuration changes the pod template (a rollout) and a changed Policy does not (it reloads in
//! place); another namespace moves every namespaced object, subject and the Lease; and the rendered
//! objects pass every tested minor's API server (a server-side dry run, Pod Security's `restricted`
//! level enforced on the pods).
//!
//! helm is built from helm.sh/helm/v4 (`e2e/build.sh helm`), kubectl with the newest tested minor.
//! Without Go these say SKIPPED on the terminal and pass, except under CI, where that is a failure.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use predicate_extender_testing::kube_cluster::helm::Helm;
use predicate_extender_testing::kube_cluster::objects::{by_key, key};
use predicate_extender_testing::kube_cluster::scheduler_config::differences;
use predicate_extender_testing::kube_cluster::{self, binaries, Cluster, Options};
use serde_json::{json, Value};

const TEST: &str = "helm-chart";
const CHART: &str = "charts/predicate-extender";
const RELEASE: &str = "predicate-scheduler";
/// manifests/' namespace, which the comparison installs the chart into.
const NAMESPACE: &str = "predicate-scheduler";
/// The labels only one of the two renderers adds: kustomization.yaml's, and Helm's own.
const RENDERER_LABELS: [&str; 3] = ["app.kubernetes.io/managed-by", "app.kubernetes.io/instance", "helm.sh/chart"];
/// The scheduler configuration's ConfigMap, which kustomize names with a hash of its content.
const SCHEDULER_CONFIG_MAP: &str = "predicate-scheduler-config";

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).to_string()
}

/// `helm template` into `namespace` with `args` (--set ...), as it ended.
fn rendered(helm: &Helm, namespace: &str, args: &[&str]) -> Output {
    let mut all = vec!["template", RELEASE, CHART, "--namespace", namespace];
    all.extend_from_slice(args);
    helm.output(&all)
}

/// `helm template` into `namespace` with `args`: its objects by kind/namespace/name.
fn render(helm: &Helm, namespace: &str, args: &[&str]) -> BTreeMap<String, Value> {
    let out = rendered(helm, namespace, args);
    assert!(out.status.success(), "helm template {args:?}: {}", text(&out.stderr));
    by_key(&text(&out.stdout))
}

/// `kubectl kustomize` of a directory of the repository, with the newest tested minor's kubectl.
fn kustomize(dir: &str) -> Option<BTreeMap<String, Value>> {
    let kube = binaries::binaries(TEST)?;
    let out = Command::new(kube.path("kubectl")).arg("kustomize").arg(repo().join(dir)).output().unwrap();
    assert!(out.status.success(), "kubectl kustomize {dir}: {}", text(&out.stderr));
    Some(by_key(&text(&out.stdout)))
}

/// What only one renderer says, taken out: the renderers' labels, kustomize's hash suffix on the
/// scheduler configuration's name, and the chart's checksum of it on the pod template.
fn normalized(mut object: Value) -> Value {
    fn strip_labels(labels: &mut Value) {
        if let Some(map) = labels.as_object_mut() {
            for label in RENDERER_LABELS {
                map.remove(label);
            }
        }
    }
    strip_labels(&mut object["metadata"]["labels"]);
    if let Some(template) = object.pointer_mut("/spec/template/metadata") {
        strip_labels(&mut template["labels"]);
        if let Some(annotations) = template.get_mut("annotations").and_then(Value::as_object_mut) {
            annotations.remove("checksum/scheduler-config");
            if annotations.is_empty() {
                template.as_object_mut().unwrap().remove("annotations");
            }
        }
    }
    unhash(&mut object);
    object
}

/// `predicate-scheduler-config-<hash>` (kustomize's generated name, and the Deployment's
/// reference to it) becomes `predicate-scheduler-config`.
fn unhash(value: &mut Value) {
    match value {
        Value::String(s) => {
            if let Some(hash) = s.strip_prefix(&format!("{SCHEDULER_CONFIG_MAP}-")) {
                if hash.len() == 10 && hash.chars().all(|c| c.is_ascii_alphanumeric()) {
                    *s = SCHEDULER_CONFIG_MAP.to_string();
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(unhash),
        Value::Object(map) => {
            let renamed: Vec<(String, Value)> = std::mem::take(map)
                .into_iter()
                .map(|(k, mut v)| {
                    unhash(&mut v);
                    (k, v)
                })
                .collect();
            map.extend(renamed);
        }
        _ => {}
    }
    if let Some(name) = value.pointer_mut("/metadata/name") {
        unhash(name);
    }
}

fn normalized_all(objects: BTreeMap<String, Value>) -> BTreeMap<String, Value> {
    objects.into_values().map(normalized).map(|o| (key(&o), o)).collect()
}

fn deployment(objects: &BTreeMap<String, Value>, namespace: &str) -> Value {
    objects[&format!("Deployment/{namespace}/predicate-scheduler")].clone()
}

fn checksum(objects: &BTreeMap<String, Value>) -> String {
    deployment(objects, NAMESPACE)["spec"]["template"]["metadata"]["annotations"]["checksum/scheduler-config"]
        .as_str()
        .expect("the pod template's checksum/scheduler-config")
        .to_string()
}

#[test]
fn helm_lint_strict_passes_with_the_defaults_and_every_switch_on() {
    let Some(helm) = Helm::new(TEST) else { return };
    for args in [
        vec![],
        vec![
            "--set",
            "monitoring.podMonitor.enabled=true,monitoring.prometheusRule.enabled=true,networkPolicy.enabled=true",
        ],
        vec!["--set", "replicas=1,policyOnly=true"],
        vec!["--set", "inProcess.enabled=true"],
    ] {
        let mut all = vec!["lint", "--strict", CHART];
        all.extend_from_slice(&args);
        let out = helm.output(&all);
        assert!(out.status.success(), "helm lint --strict {args:?}:\n{}{}", text(&out.stdout), text(&out.stderr));
    }
}

#[test]
fn the_chart_renders_the_objects_kustomize_renders_from_manifests() {
    let Some(helm) = Helm::new(TEST) else { return };
    let Some(manifests) = kustomize("manifests") else { return };
    let chart = normalized_all(render(&helm, NAMESPACE, &[]));
    let mut manifests = normalized_all(manifests);
    // The one object the chart leaves out: the namespace a release is installed into.
    let namespace = manifests.remove(&format!("Namespace//{NAMESPACE}")).expect("manifests/ has the Namespace");
    assert_eq!(namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"], "restricted");
    assert_eq!(chart.keys().collect::<Vec<_>>(), manifests.keys().collect::<Vec<_>>());
    for (k, object) in &chart {
        let differ = differences(object, &manifests[k]);
        assert!(differ.is_empty(), "the chart (left) and manifests/ (right) differ in {k} at {differ:?}");
    }
}

/// The chart with `--set <set>` renders the Deployment `kubectl kustomize <overlay>` does.
fn assert_switch_renders_overlay(set: &str, overlay: &str) {
    let Some(helm) = Helm::new(TEST) else { return };
    let Some(rendered) = kustomize(overlay) else { return };
    let chart = normalized_all(render(&helm, NAMESPACE, &["--set", set]));
    let rendered = normalized_all(rendered);
    let k = format!("Deployment/{NAMESPACE}/predicate-scheduler");
    let differ = differences(&chart[&k], &rendered[&k]);
    assert!(differ.is_empty(), "the chart (left) and {overlay} (right) differ in {k} at {differ:?}");
}

#[test]
fn the_policy_only_switch_renders_the_policy_only_overlay() {
    assert_switch_renders_overlay("policyOnly=true", "overlays/policy-only");
}

#[test]
fn the_in_process_switch_renders_the_in_process_overlay() {
    assert_switch_renders_overlay("inProcess.enabled=true", "overlays/in-process");
}

/// overlays/in-process changes the Deployment only, and in it only what the engine's move into
/// kube-scheduler needs: the sidecar gone, the in-process image reading
/// config/scheduler-config-in-process.yaml, the Policy mounted where that file's plugin args say,
/// and the sidecar's memory added to kube-scheduler's.
#[test]
fn the_in_process_overlay_changes_only_what_moving_the_engine_into_kube_scheduler_needs() {
    let (Some(base), Some(overlay)) = (kustomize("manifests"), kustomize("overlays/in-process")) else { return };
    let k = format!("Deployment/{NAMESPACE}/predicate-scheduler");
    assert_eq!(base.keys().collect::<Vec<_>>(), overlay.keys().collect::<Vec<_>>());
    for (key, object) in &base {
        if *key != k {
            assert_eq!(object, &overlay[key], "{key}");
        }
    }
    let (mut base, overlay) = (base[&k].clone(), overlay[&k].clone());
    let pod = &overlay["spec"]["template"]["spec"];
    assert!(pod.get("initContainers").is_none(), "the extender sidecar is still there: {pod}");
    let scheduler = &pod["containers"][0];
    assert_eq!(
        scheduler["image"],
        format!("registry.example.com/predicate-scheduler-in-process:{}", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(scheduler["command"][1], "--config=/etc/predicate-scheduler/scheduler-config-in-process.yaml");
    let config: Value = serde_saphyr::from_str(
        &std::fs::read_to_string(repo().join("config/scheduler-config-in-process.yaml")).unwrap(),
    )
    .unwrap();
    let policy = config["profiles"][0]["pluginConfig"][0]["args"]["policy"].as_str().unwrap();
    let mounted = scheduler["volumeMounts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "policy")
        .unwrap_or_else(|| panic!("the Policy is not mounted: {scheduler}"));
    assert_eq!(Path::new(policy).parent(), Some(Path::new(mounted["mountPath"].as_str().unwrap())));
    // Memory: the sidecar's and kube-scheduler's requests and limits, added.
    let quantity = |v: &Value| v.as_str().unwrap().strip_suffix("Mi").unwrap().parse::<u64>().unwrap();
    let base_pod = &base["spec"]["template"]["spec"];
    for bound in ["requests", "limits"] {
        let sum = quantity(&base_pod["initContainers"][0]["resources"][bound]["memory"])
            + quantity(&base_pod["containers"][0]["resources"][bound]["memory"]);
        assert_eq!(quantity(&scheduler["resources"][bound]["memory"]), sum, "{bound}");
    }
    // Everything else as the base has it.
    let base_pod = &mut base["spec"]["template"]["spec"];
    base_pod.as_object_mut().unwrap().remove("initContainers");
    let container = &mut base_pod["containers"][0];
    container["image"] = scheduler["image"].clone();
    container["command"] = scheduler["command"].clone();
    container["volumeMounts"] = scheduler["volumeMounts"].clone();
    container["resources"] = scheduler["resources"].clone();
    let differ = differences(&base, &overlay);
    assert!(differ.is_empty(), "overlays/in-process changes more: {differ:?}");
}

#[test]
fn the_monitoring_switches_render_manifests_monitoring() {
    let Some(helm) = Helm::new(TEST) else { return };
    let off = render(&helm, NAMESPACE, &[]);
    assert!(!off.keys().any(|k| k.starts_with("PodMonitor/") || k.starts_with("PrometheusRule/")), "{:?}", off.keys());
    let on = normalized_all(render(
        &helm,
        NAMESPACE,
        &["--set", "monitoring.podMonitor.enabled=true,monitoring.prometheusRule.enabled=true"],
    ));
    for file in ["manifests/monitoring/pod-monitor.yaml", "manifests/monitoring/prometheus-rule.yaml"] {
        let shipped: Value = serde_saphyr::from_str(&std::fs::read_to_string(repo().join(file)).unwrap()).unwrap();
        let k = key(&shipped);
        let rendered = on.get(&k).unwrap_or_else(|| panic!("the chart renders no {k}"));
        let differ = differences(rendered, &normalized(shipped));
        assert!(differ.is_empty(), "the chart (left) and {file} (right) differ in {k} at {differ:?}");
    }
    // The labels a Prometheus selects by are added, not substituted.
    let labelled = render(
        &helm,
        NAMESPACE,
        &["--set", "monitoring.prometheusRule.enabled=true,monitoring.prometheusRule.labels.release=kps"],
    );
    let rule = &labelled[&format!("PrometheusRule/{NAMESPACE}/predicate-extender")];
    assert_eq!(rule["metadata"]["labels"]["release"], "kps");
    assert_eq!(rule["metadata"]["labels"]["app.kubernetes.io/name"], "predicate-scheduler");
}

#[test]
fn a_bad_value_is_refused_by_the_schema_naming_it() {
    let Some(helm) = Helm::new(TEST) else { return };
    for (set, named) in [
        ("replicas=two", "replicas"),
        ("replicas=0", "replicas"),
        ("extender.logFromat=json", "logFromat"),
        ("image.pullPolicy=Sometimes", "pullPolicy"),
        ("extender.kubeSchedulerVersion=1.37.2", "kubeSchedulerVersion"),
        ("extender.adminPort=8888", "adminPort"),
        ("extender.adminPort=10259", "adminPort"),
        ("image.digest=latest", "digest"),
        ("extender.resources.limits.memory=lots", "memory"),
        ("monitoring.podMonitor.enabeld=true", "enabeld"),
        ("inProcess.enabled=yes", "enabled"),
    ] {
        let out = rendered(&helm, NAMESPACE, &["--set", set]);
        let stderr = text(&out.stderr);
        assert!(!out.status.success(), "--set {set} was accepted");
        assert!(stderr.contains("values don't meet the specifications of the schema"), "--set {set}: {stderr}");
        assert!(stderr.contains(named), "--set {set}: the error does not name {named}: {stderr}");
    }
}

/// The monitoring switches watch the extender's metrics: with the engine in-process (no extender)
/// they are refused, naming both, rather than rendering a monitor of a port no container has.
#[test]
fn in_process_refuses_the_monitoring_of_the_extender() {
    let Some(helm) = Helm::new(TEST) else { return };
    for switch in ["monitoring.podMonitor.enabled=true", "monitoring.prometheusRule.enabled=true"] {
        let out = rendered(&helm, NAMESPACE, &["--set", &format!("inProcess.enabled=true,{switch}")]);
        let stderr = text(&out.stderr);
        assert!(!out.status.success(), "{switch} with inProcess was accepted");
        assert!(
            stderr.contains("monitoring.podMonitor.enabled and monitoring.prometheusRule.enabled watch the extender's metrics, which inProcess.enabled does not run"),
            "{switch}: {stderr}"
        );
        let alone = rendered(&helm, NAMESPACE, &["--set", switch]);
        assert!(alone.status.success(), "{switch} without inProcess: {}", text(&alone.stderr));
    }
}

#[test]
fn the_values_operators_write_are_taken() {
    let Some(helm) = Helm::new(TEST) else { return };
    // A values file: YAML numbers for quantities, Helm's `global` (set when the chart is a
    // dependency), a digest and a pull secret.
    let dir = tempfile::tempdir().unwrap();
    let values = dir.path().join("values.yaml");
    let digest = format!("sha256:{}", "ab".repeat(32));
    std::fs::write(
        &values,
        format!(
            "global: {{imageRegistry: mirror.example.com}}\nimage: {{digest: \"{digest}\"}}\n\
             imagePullSecrets: [{{name: registry-credentials}}]\n\
             extender:\n  resources:\n    requests: {{cpu: 0.5, memory: 1Gi, ephemeral-storage: 100Mi}}\n    limits: {{cpu: 2, memory: 1.5Gi}}\n"
        ),
    )
    .unwrap();
    let objects = render(&helm, NAMESPACE, &["--values", values.to_str().unwrap()]);
    let pod = &deployment(&objects, NAMESPACE)["spec"]["template"]["spec"];
    assert_eq!(pod["initContainers"][0]["image"], format!("registry.example.com/predicate-extender@{digest}"));
    assert_eq!(pod["containers"][0]["image"], "registry.k8s.io/kube-scheduler:v1.37.2");
    assert_eq!(pod["imagePullSecrets"], json!([{"name": "registry-credentials"}]));
    assert_eq!(pod["initContainers"][0]["resources"]["requests"]["cpu"], 0.5);
    assert_eq!(pod["initContainers"][0]["resources"]["requests"]["ephemeral-storage"], "100Mi");
}

#[test]
fn a_changed_scheduler_configuration_rolls_the_pods_and_a_changed_policy_does_not() {
    let Some(helm) = Helm::new(TEST) else { return };
    let shipped = render(&helm, NAMESPACE, &[]);
    // The Policy replaced: its ConfigMap changes, the pod template does not (kubelet swaps the
    // mounted file and the extender reloads it).
    let minimal = repo().join("config/policy-minimal.json");
    let policy = render(&helm, NAMESPACE, &["--set-file", &format!("policy={}", minimal.display())]);
    let policy_map = format!("ConfigMap/{NAMESPACE}/predicate-extender-policy");
    assert_eq!(policy[&policy_map]["data"]["policy.json"], std::fs::read_to_string(&minimal).unwrap());
    assert_ne!(policy[&policy_map], shipped[&policy_map]);
    assert_eq!(deployment(&policy, NAMESPACE), deployment(&shipped, NAMESPACE));
    // The scheduler configuration changed, either way: the template's checksum changes.
    let policy_only = render(&helm, NAMESPACE, &["--set", "policyOnly=true"]);
    let config = std::fs::read_to_string(repo().join("config/scheduler-config.yaml")).unwrap();
    let own = render(
        &helm,
        NAMESPACE,
        &["--set-string", &format!("schedulerConfig={}", config.replace("weight: 1", "weight: 2").replace(',', "\\,"))],
    );
    let config_map = format!("ConfigMap/{NAMESPACE}/{SCHEDULER_CONFIG_MAP}");
    assert!(own[&config_map]["data"]["scheduler-config.yaml"].as_str().unwrap().contains("weight: 2"));
    let in_process = render(&helm, NAMESPACE, &["--set", "inProcess.enabled=true"]);
    let sums = [checksum(&shipped), checksum(&policy_only), checksum(&own), checksum(&in_process)];
    assert_eq!(sums.iter().collect::<std::collections::BTreeSet<_>>().len(), 4, "{sums:?}");
    // And the same values render the same checksum (a no-op upgrade rolls nothing).
    assert_eq!(checksum(&render(&helm, NAMESPACE, &[])), sums[0]);
}

#[test]
fn another_namespace_moves_every_namespaced_object_subject_and_the_lease() {
    let Some(helm) = Helm::new(TEST) else { return };
    let other = "scheduling";
    let objects = render(&helm, other, &[]);
    for (k, object) in &objects {
        let namespace = object["metadata"]["namespace"].as_str();
        // The one object outside the release's namespace: the authentication reader's binding.
        if k == "RoleBinding/kube-system/predicate-scheduler-extension-apiserver-authentication-reader" {
            assert_eq!(namespace, Some("kube-system"));
        } else if !["ClusterRole", "ClusterRoleBinding"].contains(&object["kind"].as_str().unwrap()) {
            assert_eq!(namespace, Some(other), "{k}");
        }
        for subject in object["subjects"].as_array().into_iter().flatten() {
            assert_eq!(subject["namespace"], other, "{k}");
        }
    }
    let config_map = &objects[&format!("ConfigMap/{other}/{SCHEDULER_CONFIG_MAP}")];
    for file in ["scheduler-config.yaml", "scheduler-config-policy.yaml"] {
        let config: Value = serde_saphyr::from_str(config_map["data"][file].as_str().unwrap()).unwrap();
        assert_eq!(config["leaderElection"]["resourceNamespace"], other, "{file}");
    }
}

#[test]
fn the_disruption_budget_comes_with_more_than_one_replica_and_the_network_policy_when_asked() {
    let Some(helm) = Helm::new(TEST) else { return };
    let pdb = format!("PodDisruptionBudget/{NAMESPACE}/predicate-scheduler");
    assert_eq!(render(&helm, NAMESPACE, &[])[&pdb]["spec"]["minAvailable"], 1);
    assert!(!render(&helm, NAMESPACE, &["--set", "replicas=1"]).contains_key(&pdb));
    assert!(render(&helm, NAMESPACE, &["--set", "replicas=3"]).contains_key(&pdb));
    let network_policy = format!("NetworkPolicy/{NAMESPACE}/predicate-scheduler");
    assert!(!render(&helm, NAMESPACE, &[]).contains_key(&network_policy));
    let objects = render(&helm, NAMESPACE, &["--set", "networkPolicy.enabled=true"]);
    let spec = &objects[&network_policy]["spec"];
    assert_eq!(spec["policyTypes"], json!(["Ingress"]));
    assert_eq!(spec["ingress"].as_array().unwrap().len(), 1);
    // Only the admin port, by number (the sidecar's named port is not resolved by every plugin).
    let extender = &deployment(&objects, NAMESPACE)["spec"]["template"]["spec"]["initContainers"][0];
    assert_eq!(extender["ports"][0]["name"], "admin");
    assert_eq!(
        spec["ingress"][0]["ports"],
        json!([{"port": extender["ports"][0]["containerPort"], "protocol": "TCP"}])
    );
    let moved = render(&helm, NAMESPACE, &["--set", "networkPolicy.enabled=true,extender.adminPort=9000"]);
    assert_eq!(moved[&network_policy]["spec"]["ingress"][0]["ports"][0]["port"], 9000);
    assert_eq!(
        spec["ingress"][0]["from"][0]["namespaceSelector"],
        json!({"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}})
    );
}

#[test]
fn the_chart_is_this_version_and_carries_byte_identical_copies_of_config() {
    let chart: Value =
        serde_saphyr::from_str(&std::fs::read_to_string(repo().join(CHART).join("Chart.yaml")).unwrap()).unwrap();
    assert_eq!(chart["appVersion"], env!("CARGO_PKG_VERSION"));
    assert_eq!(chart["version"], env!("CARGO_PKG_VERSION"));
    let values: Value =
        serde_saphyr::from_str(&std::fs::read_to_string(repo().join(CHART).join("values.yaml")).unwrap()).unwrap();
    assert_eq!(values["image"]["tag"], env!("CARGO_PKG_VERSION"));
    let mut copies =
        vec![("manifests/monitoring/prometheus-rule.yaml".to_string(), "prometheus-rule.yaml".to_string())];
    for entry in std::fs::read_dir(repo().join("config")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        copies.push((format!("config/{name}"), name));
    }
    let mut in_files: Vec<String> = std::fs::read_dir(repo().join(CHART).join("files"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    in_files.sort();
    let mut wanted: Vec<String> = copies.iter().map(|(_, n)| n.clone()).collect();
    wanted.sort();
    assert_eq!(in_files, wanted, "{CHART}/files/ holds exactly the copies");
    for (source, name) in copies {
        let copy = format!("{CHART}/files/{name}");
        assert!(
            std::fs::read(repo().join(&source)).unwrap() == std::fs::read(repo().join(&copy)).unwrap(),
            "{copy} differs from {source}: cp {source} {copy}"
        );
    }
}

predicate_extender_testing::on_each_minor!(the_rendered_objects_pass_the_api_server_and_pod_security_restricted);

/// Every rendered object (every switch on) through the API server's server-side dry run, into a
/// namespace labelled as the README says (Pod Security `restricted`, enforced); and the
/// Deployment's pod itself, which Pod Security admission checks against that level.
async fn the_rendered_objects_pass_the_api_server_and_pod_security_restricted(minor: &str) {
    let Some(helm) = Helm::new(TEST) else { return };
    let Some(newest) = binaries::binaries(TEST) else { return };
    let options = Options { extender: false, schedulers: 0, ..Options::default() };
    let Some(cluster) = Cluster::start_on(minor, TEST, options).await else { return };
    let kubectl = |args: &[&str], stdin: Option<&str>| -> Output {
        use std::io::Write as _;
        let mut child = Command::new(newest.path("kubectl"))
            .arg(format!("--kubeconfig={}", cluster.admin_kubeconfig.display()))
            .arg(format!("--cache-dir={}", cluster.dir.join("kubectl-cache").display()))
            .env("NO_PROXY", kube_cluster::process::NO_PROXY)
            .env("no_proxy", kube_cluster::process::NO_PROXY)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(stdin.unwrap_or_default().as_bytes()).unwrap();
        child.wait_with_output().unwrap()
    };
    // The namespace labelled as README.md says (the harness may have made it already).
    let namespace = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE,
        "labels": {"pod-security.kubernetes.io/enforce": "restricted"}}});
    let out = kubectl(&["apply", "-f", "-"], Some(&namespace.to_string()));
    assert!(out.status.success(), "the namespace: {}", text(&out.stderr));
    // The PodMonitor and PrometheusRule are the Prometheus Operator's kinds: left out here (no CRDs).
    let out = rendered(&helm, NAMESPACE, &["--set", "networkPolicy.enabled=true,replicas=3"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rendered = text(&out.stdout);
    let out = kubectl(&["apply", "--server-side", "--dry-run=server", "-f", "-"], Some(&rendered));
    assert!(out.status.success(), "the API server ({minor}) refused the chart's objects: {}", text(&out.stderr));
    let applied = text(&out.stdout);
    let count = by_key(&rendered).len();
    assert_eq!(applied.lines().filter(|l| l.contains("(server dry run)")).count(), count, "{applied}");
    // The pod the Deployment makes: Pod Security admission enforces `restricted` on pods.
    let objects = by_key(&rendered);
    let template = &deployment(&objects, NAMESPACE)["spec"]["template"];
    let pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "predicate-scheduler-dry-run", "namespace": NAMESPACE, "labels": template["metadata"]["labels"]},
        "spec": template["spec"],
    });
    let out = kubectl(&["create", "--dry-run=server", "-f", "-"], Some(&pod.to_string()));
    assert!(out.status.success(), "the API server ({minor}) refused the Deployment's pod: {}", text(&out.stderr));
    // And a pod that breaks the level is refused there: the namespace does enforce it.
    let mut root = pod.clone();
    root["spec"]["securityContext"]["runAsNonRoot"] = json!(false);
    root["spec"]["securityContext"]["runAsUser"] = json!(0);
    let out = kubectl(&["create", "--dry-run=server", "-f", "-"], Some(&root.to_string()));
    assert!(!out.status.success(), "a root pod passed the restricted namespace ({minor})");
    assert!(text(&out.stderr).contains("violates PodSecurity \"restricted"), "{}", text(&out.stderr));
}
