//! config/scheduler-config.yaml, the Policy files in config/ and the Deployment in manifests/ agree
//! with what the extender serves: the verbs are its routes, the URL is its --listen address, the
//! timeout is above its own deadline, the lease is the one the RBAC grants, the copies kustomize
//! reads are the files in config/, and the Policy files load (policy.json as the default plan).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod common;
// The binary's own command line (src/cli/ belongs to the binary, not the library), compiled in here
// to parse the Deployment's arguments exactly as `predicate-extender` does.
#[allow(dead_code)]
#[path = "../src/cli/mod.rs"]
mod cli;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use clap::Parser;
use cli::serve::ServeArgs;
use cli::{Cli, Command};
use predicate_engine::policy::{load, Overrides, Plan};
use predicate_extender::server::{ClusterSource, PolicySource};
use serde::Deserialize;
use serde_json::Value;

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn read(path: &str) -> String {
    std::fs::read_to_string(repo(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Every document of a YAML file.
fn docs(path: &str) -> Vec<Value> {
    serde_saphyr::from_multiple(&read(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn one(path: &str, kind: &str) -> Value {
    let mut found: Vec<Value> = docs(path).into_iter().filter(|d| d["kind"] == kind).collect();
    assert_eq!(found.len(), 1, "{path}: expected one {kind}");
    found.remove(0)
}

fn str_of<'a>(v: &'a Value, what: &str) -> &'a str {
    v.as_str().unwrap_or_else(|| panic!("{what}: not a string: {v:?}"))
}

fn strings(v: &Value, what: &str) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("{what}: not a list: {v:?}"))
        .iter()
        .map(|s| str_of(s, what).to_string())
        .collect()
}

// The fields of kubescheduler.config.k8s.io/v1 this file may set. Unknown keys are errors, so a
// misspelt key (`extender:`, `nodeCacheCapabel:`) fails here instead of being dropped silently by
// kube-scheduler's lenient decoding. Fields only listed for that are never read.

#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SchedulerConfig {
    api_version: String,
    kind: String,
    leader_election: LeaderElection,
    profiles: Vec<Profile>,
    extenders: Vec<Extender>,
    parallelism: Option<i32>,
    client_connection: Option<Value>,
    percentage_of_nodes_to_score: Option<i32>,
    pod_initial_backoff_seconds: Option<i64>,
    pod_max_backoff_seconds: Option<i64>,
    enable_profiling: Option<bool>,
    enable_contention_profiling: Option<bool>,
    delay_cache_until_active: Option<bool>,
}

#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct LeaderElection {
    leader_elect: bool,
    resource_lock: Option<String>,
    resource_name: String,
    resource_namespace: String,
    lease_duration: Option<String>,
    renew_deadline: Option<String>,
    retry_period: Option<String>,
}

#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Profile {
    scheduler_name: String,
    plugins: Option<Value>,
    plugin_config: Option<Value>,
    percentage_of_nodes_to_score: Option<i32>,
}

#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Extender {
    url_prefix: String,
    filter_verb: Option<String>,
    prioritize_verb: Option<String>,
    preempt_verb: Option<String>,
    bind_verb: Option<String>,
    weight: i64,
    #[serde(rename = "enableHTTPS")]
    enable_https: bool,
    tls_config: Option<Value>,
    http_timeout: String,
    node_cache_capable: bool,
    managed_resources: Option<Vec<Value>>,
    ignorable: bool,
}

fn scheduler_config() -> SchedulerConfig {
    let text = read("config/scheduler-config.yaml");
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("config/scheduler-config.yaml: {e}"))
}

fn the_extender(config: &SchedulerConfig) -> &Extender {
    assert_eq!(config.extenders.len(), 1, "one extender, the sidecar");
    &config.extenders[0]
}

/// The verbs the configuration names, with the field each comes from.
fn configured_verbs(ext: &Extender) -> Vec<(&'static str, String)> {
    [
        ("filterVerb", &ext.filter_verb),
        ("prioritizeVerb", &ext.prioritize_verb),
        ("preemptVerb", &ext.preempt_verb),
        ("bindVerb", &ext.bind_verb),
    ]
    .into_iter()
    .map(|(field, verb)| (field, verb.clone().unwrap_or_else(|| panic!("{field} is not set"))))
    .collect()
}

/// `http://host:port/path` split into host, port and path ("" or "/path").
fn split_url(url: &str) -> (String, u16, String) {
    let rest = url.strip_prefix("http://").unwrap_or_else(|| panic!("urlPrefix {url:?}: not http://"));
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
        None => (rest, ""),
    };
    let (host, port) = authority.rsplit_once(':').unwrap_or_else(|| panic!("urlPrefix {url:?}: no port"));
    (host.to_string(), port.parse().unwrap_or_else(|e| panic!("urlPrefix {url:?}: port: {e}")), path.to_string())
}

fn deployment() -> Value {
    one("manifests/deployment.yaml", "Deployment")
}

fn pod_spec(deployment: &Value) -> &Value {
    &deployment["spec"]["template"]["spec"]
}

/// The extender's container: the one init container, a native sidecar.
fn extender_container(deployment: &Value) -> &Value {
    let inits = pod_spec(deployment)["initContainers"].as_array().expect("initContainers");
    assert_eq!(inits.len(), 1, "one init container, the extender");
    &inits[0]
}

fn scheduler_container(deployment: &Value) -> &Value {
    let containers = pod_spec(deployment)["containers"].as_array().expect("containers");
    assert_eq!(containers.len(), 1, "one container, kube-scheduler");
    &containers[0]
}

/// The extender's arguments in the Deployment, parsed by the extender's own command line.
fn deployed_serve_args(deployment: &Value) -> ServeArgs {
    let args = strings(&extender_container(deployment)["args"], "extender args");
    let argv = std::iter::once("predicate-extender".to_string()).chain(args.iter().cloned());
    match Cli::try_parse_from(argv) {
        Ok(Cli { command: Command::Serve(serve) }) => serve,
        Ok(other) => panic!("the Deployment's extender args are not `serve`: {other:?}"),
        Err(e) => panic!("the Deployment's extender args {args:?} do not parse: {e}"),
    }
}

/// `mountPath` of the container's mount of the named volume.
fn mount_path<'a>(container: &'a Value, volume: &str) -> &'a str {
    let mounts = container["volumeMounts"].as_array().expect("volumeMounts");
    let mount = mounts.iter().find(|m| m["name"] == volume).unwrap_or_else(|| panic!("no mount of {volume}"));
    str_of(&mount["mountPath"], "mountPath")
}

/// The ConfigMap name behind a pod volume.
fn volume_config_map<'a>(deployment: &'a Value, volume: &str) -> &'a str {
    let volumes = pod_spec(deployment)["volumes"].as_array().expect("volumes");
    let v = volumes.iter().find(|v| v["name"] == volume).unwrap_or_else(|| panic!("no volume {volume}"));
    str_of(&v["configMap"]["name"], "configMap.name")
}

fn kustomization() -> Value {
    one("manifests/kustomization.yaml", "Kustomization")
}

/// configMapGenerator: name -> the files (paths relative to manifests/).
fn generated_config_maps() -> BTreeMap<String, Vec<String>> {
    let k = kustomization();
    let mut out = BTreeMap::new();
    for g in k["configMapGenerator"].as_array().expect("configMapGenerator") {
        assert_eq!(g["namespace"], "predicate-scheduler", "generator {:?}: namespace", g["name"]);
        out.insert(str_of(&g["name"], "generator name").to_string(), strings(&g["files"], "generator files"));
    }
    out
}

/// `--flag=value` or `--flag value` in a command line.
fn flag_value(args: &[String], flag: &str) -> Option<String> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if let Some(v) = a.strip_prefix(&format!("{flag}=")) {
            return Some(v.to_string());
        }
        if a == flag {
            return it.next().cloned();
        }
    }
    None
}

#[test]
fn the_extender_entry_matches_the_deployed_extender() {
    let config = scheduler_config();
    assert_eq!(config.api_version, "kubescheduler.config.k8s.io/v1");
    assert_eq!(config.kind, "KubeSchedulerConfiguration");
    let ext = the_extender(&config);
    let serve = deployed_serve_args(&deployment());

    // kube-scheduler calls urlPrefix + "/" + verb over plain HTTP; the sidecar listens on loopback.
    assert!(!ext.enable_https, "enableHTTPS: the extender serves plain HTTP");
    assert!(ext.tls_config.is_none());
    let (host, port, path) = split_url(&ext.url_prefix);
    assert_eq!(port, serve.listen.port(), "urlPrefix's port is the Deployment's --listen port");
    assert_eq!(host.parse::<std::net::IpAddr>().ok(), Some(serve.listen.ip()), "urlPrefix's host is --listen's");
    assert!(serve.listen.ip().is_loopback(), "--listen stays on loopback: /bind must not reach the pod network");
    assert_eq!(path, serve.url_prefix, "urlPrefix's path is the extender's --url-prefix");

    assert!(ext.node_cache_capable, "nodeCacheCapable: the extender keeps its own node cache");
    assert!(!ext.ignorable, "ignorable: false, the extender's predicates are not optional");
    assert!(ext.weight > 0, "weight must be positive");
    assert!(ext.managed_resources.as_ref().is_none_or(|m| m.is_empty()), "interested in every pod");

    // Above the extender's own deadline, so that the extender answers (with Error set) first.
    let http_timeout = humantime::parse_duration(&ext.http_timeout)
        .unwrap_or_else(|e| panic!("httpTimeout {:?}: {e}", ext.http_timeout));
    assert!(
        http_timeout > serve.request_timeout,
        "httpTimeout {http_timeout:?} must be above the extender's --request-timeout {:?}",
        serve.request_timeout
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_configured_verbs_are_the_routes_the_extender_serves() {
    let config = scheduler_config();
    let ext = the_extender(&config);
    let serve = deployed_serve_args(&deployment());
    let mut server_config = common::config(ClusterSource::Demo);
    server_config.url_prefix = serve.url_prefix.clone();
    let server = common::TestServer::start(server_config).await;

    let verbs = configured_verbs(ext);
    let distinct: BTreeSet<&str> = verbs.iter().map(|(_, v)| v.as_str()).collect();
    assert_eq!(distinct.len(), 4, "four different verbs: {verbs:?}");
    for (field, verb) in &verbs {
        let path = format!("{}/{verb}", serve.url_prefix);
        let (status, body) = server.post_text(&path, "{}").await;
        assert!(
            status != 404 && status != 405,
            "{field}: POST {path} is not a route of the extender ({status}): {body}"
        );
    }
    // The check above can fail: a verb the server does not serve is a 404.
    let (status, _) = server.post_text(&format!("{}/filterz", serve.url_prefix), "{}").await;
    assert_eq!(status, 404);
    server.stop().await;
}

#[test]
fn leader_election_uses_the_lease_the_rbac_grants() {
    let config = scheduler_config();
    let le = &config.leader_election;
    assert!(le.leader_elect, "two replicas need leader election");
    assert_eq!(le.resource_lock.as_deref().unwrap_or("leases"), "leases");
    // Not the cluster's own scheduler's lease (kube-system/kube-scheduler).
    assert_ne!((le.resource_namespace.as_str(), le.resource_name.as_str()), ("kube-system", "kube-scheduler"));

    let deployment = deployment();
    assert_eq!(deployment["metadata"]["namespace"], le.resource_namespace.as_str());
    assert!(deployment["spec"]["replicas"].as_i64().unwrap_or(1) >= 2, "leader election is for several replicas");
    let account = str_of(&pod_spec(&deployment)["serviceAccountName"], "serviceAccountName");

    let rbac = docs("manifests/scheduler-rbac.yaml");
    let role = rbac
        .iter()
        .find(|d| d["kind"] == "Role" && d["metadata"]["namespace"] == le.resource_namespace.as_str())
        .expect("a Role in the lease's namespace");
    let rules = role["rules"].as_array().expect("rules");
    let named = rules
        .iter()
        .find(|r| r["resources"] == Value::from(vec!["leases"]) && !r["resourceNames"].is_null())
        .expect("a rule on the lease by name");
    assert_eq!(strings(&named["resourceNames"], "resourceNames"), [le.resource_name.as_str()]);
    assert_eq!(strings(&named["verbs"], "verbs"), ["get", "update"]);
    assert!(rules.iter().any(|r| r["resources"] == Value::from(vec!["leases"])
        && r["resourceNames"].is_null()
        && strings(&r["verbs"], "verbs") == ["create"]));

    let binding = rbac
        .iter()
        .find(|d| d["kind"] == "RoleBinding" && d["roleRef"]["name"] == role["metadata"]["name"])
        .expect("a RoleBinding of the lease Role");
    assert_eq!(binding["metadata"]["namespace"], le.resource_namespace.as_str());
    assert_eq!(binding["subjects"][0]["name"], account);
    assert_eq!(binding["subjects"][0]["namespace"], le.resource_namespace.as_str());
}

#[test]
fn the_example_pod_asks_for_the_profile() {
    let config = scheduler_config();
    assert_eq!(config.profiles.len(), 1);
    let pod = one("manifests/examples/pod.yaml", "Pod");
    assert_eq!(pod["spec"]["schedulerName"], config.profiles[0].scheduler_name.as_str());
    assert_ne!(config.profiles[0].scheduler_name, "default-scheduler");
}

#[test]
fn the_deployment_mounts_the_generated_config_maps_where_the_args_point() {
    let deployment = deployment();
    let generated = generated_config_maps();

    // kube-scheduler: --config is scheduler-config.yaml in the mounted ConfigMap.
    let scheduler = scheduler_container(&deployment);
    let command = strings(&scheduler["command"], "kube-scheduler command");
    let config_path = flag_value(&command, "--config").expect("kube-scheduler --config");
    let dir = mount_path(scheduler, "scheduler-config");
    assert_eq!(config_path, format!("{dir}/scheduler-config.yaml"));
    let files = &generated[volume_config_map(&deployment, "scheduler-config")];
    assert!(files.contains(&"config/scheduler-config.yaml".to_string()), "{files:?}");

    // The extender: --policy is policy.json in the mounted ConfigMap.
    let serve = deployed_serve_args(&deployment);
    let extender = extender_container(&deployment);
    let policy = serve.policy.expect("the Deployment passes --policy");
    let dir = mount_path(extender, "policy");
    assert_eq!(policy, Path::new(dir).join("policy.json"));
    let files = &generated[volume_config_map(&deployment, "policy")];
    assert!(files.contains(&"config/policy.json".to_string()), "{files:?}");

    // Probes reach the admin listener.
    let admin_port = extender["ports"]
        .as_array()
        .and_then(|ports| ports.iter().find(|p| p["name"] == "admin"))
        .and_then(|p| p["containerPort"].as_u64())
        .expect("the admin port");
    assert_eq!(admin_port, u64::from(serve.admin_listen.port()));
    assert!(!serve.admin_listen.ip().is_loopback(), "kubelet probes the admin port at the pod IP");
    for (probe, path) in [("startupProbe", "/readyz"), ("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")] {
        assert_eq!(extender[probe]["httpGet"]["path"], path, "{probe}");
        assert_eq!(extender[probe]["httpGet"]["port"], "admin", "{probe}");
    }
}

#[test]
fn the_extender_is_a_native_sidecar_and_both_containers_are_locked_down() {
    let deployment = deployment();
    let extender = extender_container(&deployment);
    assert_eq!(extender["restartPolicy"], "Always", "a native sidecar: starts first, stops last");
    for container in [extender, scheduler_container(&deployment)] {
        let name = &container["name"];
        let sc = &container["securityContext"];
        assert_eq!(sc["runAsNonRoot"], true, "{name:?}");
        assert_eq!(sc["readOnlyRootFilesystem"], true, "{name:?}");
        assert_eq!(sc["allowPrivilegeEscalation"], false, "{name:?}");
        assert_eq!(sc["capabilities"]["drop"], Value::from(vec!["ALL"]), "{name:?}");
        assert_eq!(sc["seccompProfile"]["type"], "RuntimeDefault", "{name:?}");
        for kind in ["requests", "limits"] {
            for resource in ["cpu", "memory"] {
                assert!(!container["resources"][kind][resource].is_null(), "{name:?}: resources.{kind}.{resource}");
            }
        }
    }
}

/// The Deployment runs a kube-scheduler the end-to-end tests run: one of the tested versions (the
/// `k8s.io/kubernetes` each module file of e2e/kube pins), and the newest of them, the one the
/// real-node test runs from these manifests.
#[test]
fn the_deployments_kube_scheduler_is_the_version_tested_end_to_end() {
    let mut tested: Vec<(Vec<u64>, String)> = std::fs::read_dir(repo("e2e/kube"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|f| f == "go.mod" || (f.starts_with("go.v") && f.ends_with(".mod")))
        .map(|f| {
            let text = read(&format!("e2e/kube/{f}"));
            let version = text
                .lines()
                .map(|l| l.trim().trim_start_matches("require").trim())
                .find_map(|l| l.strip_prefix("k8s.io/kubernetes "))
                .map(|v| v.split_whitespace().next().unwrap_or_default().to_string())
                .unwrap_or_else(|| panic!("e2e/kube/{f} requires no k8s.io/kubernetes"));
            let numbers = version.trim_start_matches('v').split('.').map(|n| n.parse().unwrap()).collect();
            (numbers, version)
        })
        .collect();
    tested.sort();
    assert!(tested.len() >= 3, "the three supported minors are tested: {tested:?}");
    let image = str_of(&scheduler_container(&deployment())["image"], "kube-scheduler's image").to_string();
    let tag = image.strip_prefix("registry.k8s.io/kube-scheduler:").unwrap_or_else(|| panic!("{image}"));
    let versions: Vec<&str> = tested.iter().map(|(_, v)| v.as_str()).collect();
    assert!(versions.contains(&tag), "kube-scheduler {tag} is not a tested version: {versions:?}");
    assert_eq!(Some(&tag), versions.last(), "the newest tested version, the one the real node runs");
}

/// The extender is told of the kube-scheduler beside it: that image's minor
/// (`--kube-scheduler-version`: how it counts a pod being resized), and the configuration file it
/// reads, mounted at the same place (`--scheduler-config`: which of its filters run in front of
/// the extender, for explain).
#[test]
fn the_extender_is_told_of_the_kube_scheduler_beside_it() {
    let deployment = deployment();
    let serve = deployed_serve_args(&deployment);
    let scheduler = scheduler_container(&deployment);
    let image = str_of(&scheduler["image"], "kube-scheduler's image");
    let tag = image.strip_prefix("registry.k8s.io/kube-scheduler:").unwrap_or_else(|| panic!("{image}"));
    let version: predicate_engine::cluster::SchedulerVersion = tag.parse().unwrap();
    assert_eq!(serve.kube_scheduler.kube_scheduler_version, version, "--kube-scheduler-version against {image}");
    let command = strings(&scheduler["command"], "kube-scheduler command");
    let config = flag_value(&command, "--config").expect("kube-scheduler's --config");
    assert_eq!(serve.kube_scheduler.scheduler_config.as_deref(), Some(Path::new(&config)));
    let extender = extender_container(&deployment);
    assert_eq!(mount_path(extender, "scheduler-config"), mount_path(scheduler, "scheduler-config"));
}

#[test]
fn the_image_is_this_version_and_kustomize_rewrites_it() {
    let deployment = deployment();
    let image = str_of(&extender_container(&deployment)["image"], "image");
    let (name, tag) = image.rsplit_once(':').expect("a tagged image");
    assert_eq!(tag, env!("CARGO_PKG_VERSION"), "the image tag is the crate version");
    let k = kustomization();
    let entry = k["images"]
        .as_array()
        .and_then(|images| images.iter().find(|i| i["name"] == name))
        .unwrap_or_else(|| panic!("kustomization.yaml has no images: entry for {name}"));
    assert_eq!(entry["newTag"], env!("CARGO_PKG_VERSION"));
}

#[test]
fn kustomize_reads_byte_identical_copies_of_config() {
    let mut copied = BTreeSet::new();
    for files in generated_config_maps().values() {
        for file in files {
            let name = file.strip_prefix("config/").unwrap_or_else(|| panic!("{file}: not under manifests/config/"));
            let source = read(&format!("config/{name}"));
            let copy = read(&format!("manifests/{file}"));
            assert!(source == copy, "manifests/{file} differs from config/{name}: cp config/{name} manifests/{file}");
            copied.insert(name.to_string());
        }
    }
    // Every file in config/ reaches the cluster.
    let mut in_config = BTreeSet::new();
    for entry in std::fs::read_dir(repo("config")).unwrap() {
        in_config.insert(entry.unwrap().file_name().into_string().unwrap());
    }
    assert_eq!(copied, in_config);
}

#[test]
fn the_kustomization_applies_every_manifest_but_the_examples() {
    let k = kustomization();
    let resources: BTreeSet<String> = strings(&k["resources"], "resources").into_iter().collect();
    let mut on_disk = BTreeSet::new();
    for entry in std::fs::read_dir(repo("manifests")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".yaml") && name != "kustomization.yaml" {
            on_disk.insert(name);
        }
    }
    assert_eq!(resources, on_disk);
    assert!(k["namespace"].is_null(), "a namespace: field would move the kube-system RoleBinding");
}

#[test]
fn policy_json_is_the_default_plan_written_out() {
    let plan = load(&repo("config/policy.json"), Overrides::default()).unwrap_or_else(|e| panic!("{e}")).plan;
    let default = Plan::default_plan();
    assert_eq!(plan.predicate_names(), default.predicate_names());
    assert_eq!(plan.priority_names(), default.priority_names());
    assert_eq!(plan.always_check_all, default.always_check_all);
    // Everything else too: arguments, weights, hardPodAffinitySymmetricWeight.
    assert_eq!(format!("{plan:?}"), format!("{default:?}"));
}

#[test]
fn policy_minimal_runs_its_predicates_in_the_order_written_with_inter_pod_affinity_last() {
    let path = repo("config/policy-minimal.json");
    let plan = load(&path, Overrides::default()).unwrap_or_else(|e| panic!("{e}")).plan;
    let file: serde_json::Value = serde_json::from_str(&read("config/policy-minimal.json")).unwrap();
    let mut entries: Vec<(i64, String)> = file["predicates"]
        .as_array()
        .expect("predicates")
        .iter()
        .map(|p| (p["order"].as_i64().expect("every entry has an order"), p["name"].as_str().unwrap().to_string()))
        .collect();
    entries.sort();
    let want: Vec<&str> = entries.iter().map(|(_, n)| n.as_str()).collect();
    assert_eq!(plan.predicate_names(), want);
    assert_eq!(plan.predicate_names().last(), Some(&"MatchInterPodAffinity"));
    assert!(plan.predicates.len() < Plan::default_plan().predicates.len());
}

/// The same requests to a server with `--policy config/policy.json` and to one without a policy.
#[tokio::test(flavor = "multi_thread")]
async fn serving_with_policy_json_answers_as_serving_without_a_policy() {
    let mut with_file = common::config(ClusterSource::Demo);
    with_file.policy = PolicySource::File(repo("config/policy.json"));
    let with_file = common::TestServer::start(with_file).await;
    let without = common::TestServer::demo().await;

    let mut compared = 0;
    for entry in std::fs::read_dir(repo("examples/demo")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let verbs: &[&str] = if name.starts_with("filter-") {
            &["/filter", "/prioritize"]
        } else if name.starts_with("preempt-") {
            &["/preempt"]
        } else {
            continue;
        };
        let body = read(&format!("examples/demo/{name}"));
        for verb in verbs {
            let a = with_file.post_text(verb, body.clone()).await;
            let b = without.post_text(verb, body.clone()).await;
            assert_eq!(a, b, "{verb} {name}");
            compared += 1;
        }
    }
    assert!(compared >= 5, "only {compared} requests compared");
    with_file.stop().await;
    without.stop().await;
}

/// `config/scheduler-config-policy.yaml` (and its copy for kustomize) is what `predicate-extender
/// scheduler-config --policy config/policy.json` prints now.
#[test]
fn the_policy_only_configuration_is_what_scheduler_config_prints_for_the_shipped_policy() {
    let args = cli::scheduler_config::SchedulerConfigArgs {
        policy: Some(PathBuf::from("config/policy.json")),
        in_process: false,
        policy_in_pod: None,
    };
    let printed = cli::scheduler_config::output(&args).unwrap();
    assert!(
        printed == read("config/scheduler-config-policy.yaml"),
        "config/scheduler-config-policy.yaml is stale: cargo run -- scheduler-config --policy config/policy.json \
         > config/scheduler-config-policy.yaml, and copy it to manifests/config/"
    );
}

/// The Policy's path in the Deployment: the extender's --policy, and the in-process plugin's.
const POLICY_IN_POD: &str = "/etc/predicate-extender/policy.json";

/// `config/scheduler-config-in-process.yaml` is what `predicate-extender scheduler-config --policy
/// config/policy.json --in-process --policy-in-pod <the extender's --policy>` prints now, and what
/// the end-to-end tests run in-process (`scheduler_config::in_process`) for the same Policy.
#[test]
fn the_in_process_configuration_is_what_scheduler_config_prints_and_what_the_end_to_end_tests_run() {
    let deployment = deployment();
    let extender_args: Vec<&str> =
        extender_container(&deployment)["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    assert!(extender_args.contains(&format!("--policy={POLICY_IN_POD}").as_str()), "{extender_args:?}");
    let args = cli::scheduler_config::SchedulerConfigArgs {
        policy: Some(PathBuf::from("config/policy.json")),
        in_process: true,
        policy_in_pod: Some(POLICY_IN_POD.to_string()),
    };
    let printed = cli::scheduler_config::output(&args).unwrap();
    assert!(
        printed == read("config/scheduler-config-in-process.yaml"),
        "config/scheduler-config-in-process.yaml is stale: cargo run -- scheduler-config --policy \
         config/policy.json --in-process --policy-in-pod {POLICY_IN_POD} > config/scheduler-config-in-process.yaml, \
         and copy it to manifests/config/ and charts/predicate-extender/files/"
    );
    use predicate_extender_testing::kube_cluster::scheduler_config::in_process;
    let parse = |file: &str| -> Value { serde_saphyr::from_str(&read(file)).unwrap_or_else(|e| panic!("{file}: {e}")) };
    let policy = repo("config/policy.json");
    let mut expected = parse("config/scheduler-config-in-process.yaml");
    expected["profiles"][0]["pluginConfig"][0]["args"]["policy"] = Value::String(policy.display().to_string());
    assert_eq!(in_process(parse("config/scheduler-config.yaml"), Some(&policy)), expected);
}
