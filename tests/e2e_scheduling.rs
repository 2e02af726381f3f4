//! End to end: a real kube-scheduler (built from k8s.io/kubernetes, e2e/build.sh) with the shipped
//! `config/scheduler-config.yaml` calls the real extender binary, which watches a real
//! kube-apiserver (on a real etcd) under the project's own RBAC and binds through it. Each test
//! starts its own cluster on 127.0.0.1 and stops it at its end (crates/testing/src/kube_cluster).
//!
//! The tests named `in_process_*` run the same scenarios on the in-process kube-scheduler
//! (docs/in-process.md: kube-scheduler with the PredicateEngine plugin, the engine linked in; no
//! extender process): the same pods, the same assertions on where they go.
//!
//! Without Go these tests say SKIPPED on the terminal and pass; `.ci/run` (CI=true) makes that a
//! failure.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

use predicate_extender_testing::kube_cluster;

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Event, Pod};
use kube::api::{ListParams, ObjectList};
use kube::Api;
use kube_cluster::bindings;
use kube_cluster::explain::assert_explain_says_what_kube_scheduler_says;
use kube_cluster::objects::{create, delete_pod_now, node, pod};
use kube_cluster::scheduler_config::{self, ALLOWED_CHANGES};
use kube_cluster::{merged, Cluster, InProcess, Options, DEADLINE};
use predicate_extender::server::handlers::UNKNOWN_NODE;
use predicate_extender_testing::eventually;
use serde_json::{json, Value};

const NS: &str = "e2e";

/// Where the engine runs: the extender beside kube-scheduler, or inside kube-scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Extender,
    InProcess,
}

/// A cluster of `minor` for `mode`: `options` as they are for the extender; for the in-process
/// kube-scheduler the same with no extender and the Policy file `policy` (the extender's
/// `--policy`), if any. `None` when the end-to-end tests are skipped.
async fn start(
    minor: &str,
    test: &str,
    mode: Mode,
    options: Options,
    policy: Option<&std::path::Path>,
) -> Option<Cluster> {
    let options = match mode {
        Mode::Extender => options,
        Mode::InProcess => {
            let binary = kube_cluster::binaries::in_process_scheduler(minor, test)?;
            let policy = policy.map(std::path::Path::to_path_buf);
            Options {
                extender: false,
                extender_args: Vec::new(),
                in_process: Some(InProcess { binary, policy }),
                ..options
            }
        }
    };
    let test = match mode {
        Mode::Extender => test.to_string(),
        Mode::InProcess => format!("in-process-{test}"),
    };
    Cluster::start_on(minor, &test, options).await
}

/// Every pod of the namespace bound once, `expected` of them: by the extender, or by the in-process
/// kube-scheduler itself.
async fn assert_bound_once_each(cluster: &Cluster, mode: Mode, expected: usize) {
    let binder = match mode {
        Mode::Extender => bindings::EXTENDER,
        Mode::InProcess => bindings::KUBE_SCHEDULER,
    };
    bindings::assert_bound_once_each_by(cluster, NS, expected, binder).await;
}

async fn namespace(cluster: &Cluster) {
    create(&cluster.client, json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})).await;
}

fn pods(cluster: &Cluster) -> Api<Pod> {
    Api::namespaced(cluster.client.clone(), NS)
}

async fn wait_bound(cluster: &Cluster, name: &str) -> String {
    kube_cluster::bindings::wait_bound(cluster, NS, name).await
}

/// Every pod of the namespace and its node ("" while unbound).
async fn placements(cluster: &Cluster) -> BTreeMap<String, String> {
    let list: ObjectList<Pod> = pods(cluster).list(&ListParams::default()).await.unwrap();
    list.items
        .into_iter()
        .map(|p| {
            let node = p.spec.and_then(|s| s.node_name).unwrap_or_default();
            (p.metadata.name.unwrap_or_default(), node)
        })
        .collect()
}

/// Every binding was made by the extender, `expected` of them, and no pod was bound twice.
async fn assert_bound_once_each_by_the_extender(cluster: &Cluster, expected: usize) {
    kube_cluster::bindings::assert_bound_once_each_by_the_extender(cluster, NS, expected).await
}

/// The FailedScheduling events of a pod, newest last.
async fn failed_scheduling(cluster: &Cluster, name: &str) -> Vec<String> {
    let events: Api<Event> = Api::namespaced(cluster.client.clone(), NS);
    let params = ListParams::default().fields(&format!("involvedObject.name={name}"));
    let list = events.list(&params).await.unwrap();
    list.items
        .into_iter()
        .filter(|e| e.reason.as_deref() == Some("FailedScheduling"))
        .filter_map(|e| e.message)
        .collect()
}

/// `explain` against the live cluster (the real binary, the admin's kubeconfig): the feasible
/// nodes for this pod as the API server now has it.
fn explain_feasible(cluster: &Cluster, pod: &Pod) -> Vec<String> {
    let file = cluster.dir.join(format!("explain-{}.json", pod.metadata.name.as_deref().unwrap_or_default()));
    std::fs::write(&file, serde_json::to_string(pod).unwrap()).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_predicate-extender"))
        .arg("explain")
        .arg(format!("--kubeconfig={}", cluster.admin_kubeconfig.display()))
        .arg(format!("--pod={}", file.display()))
        .arg("--format=json")
        .output()
        .unwrap();
    assert!(out.status.success(), "explain failed: {}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    report["feasible"].as_array().unwrap().iter().map(|n| n.as_str().unwrap().to_string()).collect()
}

/// The harness runs kube-scheduler with the shipped configuration, changing only the addresses,
/// the kubeconfig and leader election's timings.
#[test]
fn the_harness_changes_only_addresses_kubeconfig_and_leader_election_timings_of_the_shipped_config() {
    let shipped = scheduler_config::shipped();
    let adjusted = scheduler_config::adjusted(&shipped, std::path::Path::new("/tmp/k"), "http://127.0.0.1:1234");
    let changed = scheduler_config::differences(&shipped, &adjusted);
    let unexpected: Vec<_> = changed.iter().filter(|p| !ALLOWED_CHANGES.contains(&p.as_str())).collect();
    assert!(unexpected.is_empty(), "the harness changes more than it may: {unexpected:?}");
    assert!(changed.contains(&"extenders[0].urlPrefix".to_string()), "{changed:?}");
    // What the tests rely on stays as shipped.
    assert_eq!(adjusted["extenders"][0]["nodeCacheCapable"], true);
    assert_eq!(adjusted["extenders"][0]["bindVerb"], "bind");
    assert_eq!(adjusted["extenders"][0]["ignorable"], false);
    assert_eq!(adjusted["leaderElection"]["leaderElect"], true);
    // The differ sees a change anywhere (a harness that changed a verb would be caught).
    let mut tampered = adjusted.clone();
    tampered["extenders"][0]["filterVerb"] = json!("other");
    assert!(scheduler_config::differences(&shipped, &tampered).contains(&"extenders[0].filterVerb".to_string()));
}

/// The default profile's plugins as each minor's kube-scheduler enables them beside the extender
/// (`multiPoint`, with the Score weights that are not 0), in its order.
fn default_plugins(minor: &str) -> Vec<&'static str> {
    let (unschedulable_first, declared_features) = match minor {
        "1.35" => (true, false),
        "1.36" => (true, true),
        "1.37" => (false, true),
        other => panic!("Kubernetes {other}: pin its default plugins here"),
    };
    let mut plugins = vec!["SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName"];
    if !unschedulable_first {
        plugins.swap(2, 3);
    }
    plugins.extend([
        "TaintToleration=3",
        "NodeAffinity=2",
        "NodePorts",
        "NodeResourcesFit=1",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread=2",
        "InterPodAffinity=2",
        "DynamicResources=2",
        "DefaultPreemption",
        "NodeResourcesBalancedAllocation=1",
        "ImageLocality=1",
        "DefaultBinder",
    ]);
    if declared_features {
        plugins.push("NodeDeclaredFeatures");
    }
    plugins
}

predicate_extender_testing::on_each_minor!(
    every_minor_reads_the_shipped_extender_settings_and_runs_its_own_plugins_beside_them
);

/// The defaults each minor adds to the shipped configuration beyond 1.35's, as
/// [`added_defaults`] names them.
fn later_defaults(minor: &str) -> Vec<&'static str> {
    match minor {
        "1.35" => vec![],
        "1.36" => vec!["DynamicResources.bindingTimeout", "placementGenerate", "placementScore"],
        "1.37" => vec![
            "DynamicResources.bindingTimeout",
            "VolumeBinding.shape",
            "placementGenerate",
            "placementScore",
            "podGroupPostFilter",
        ],
        other => panic!("Kubernetes {other}: pin its added defaults here"),
    }
}

/// Which of the defaults later minors add a defaulted configuration has: a plugin argument
/// (`Plugin.field`) or an extension point of the profile.
fn added_defaults(profile: &Value) -> Vec<&'static str> {
    let argument = |plugin: &str, field: &str| {
        profile["pluginConfig"].as_array().unwrap().iter().any(|c| c["name"] == plugin && !c["args"][field].is_null())
    };
    let mut added = Vec::new();
    if argument("DynamicResources", "bindingTimeout") {
        added.push("DynamicResources.bindingTimeout");
    }
    if argument("VolumeBinding", "shape") {
        added.push("VolumeBinding.shape");
    }
    for point in ["placementGenerate", "placementScore", "podGroupPostFilter"] {
        if profile["plugins"].get(point).is_some() {
            added.push(point);
        }
    }
    added
}

/// What each minor's kube-scheduler makes of the shipped configuration (its defaulted form,
/// `--write-config-to`): the extender's settings and the lease exactly as shipped, on every minor;
/// the profile's own plugins beside the extender and the defaults kube-scheduler adds differ
/// between minors, and are pinned here (docs/operations.md, "Kubernetes minors").
async fn every_minor_reads_the_shipped_extender_settings_and_runs_its_own_plugins_beside_them(minor: &str) {
    let Some(binaries) = kube_cluster::binaries_of(minor, "defaults") else { return };
    let dir = tempfile::tempdir().unwrap();
    // Never contacted: kube-scheduler writes the configuration and exits before connecting.
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"https://127.0.0.1:1\"}}]\n\
         users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n",
    )
    .unwrap();
    let config = scheduler_config::adjusted(&scheduler_config::shipped(), &kubeconfig, "http://127.0.0.1:8888");
    let input = dir.path().join("config.json");
    std::fs::write(&input, config.to_string()).unwrap();
    let output = dir.path().join("defaulted.yaml");
    let run = std::process::Command::new(binaries.path("kube-scheduler"))
        .arg(format!("--config={}", input.display()))
        .arg(format!("--write-config-to={}", output.display()))
        .output()
        .unwrap();
    assert!(run.status.success(), "kube-scheduler {}: {}", binaries.version, String::from_utf8_lossy(&run.stderr));
    let written: Value = serde_saphyr::from_str(&std::fs::read_to_string(&output).unwrap()).unwrap();

    // The extender: every shipped setting (Go leaves the false ones out), nothing added.
    let shipped = config["extenders"][0].as_object().unwrap();
    let read = written["extenders"][0].as_object().unwrap();
    for (key, value) in shipped {
        let expected = if *value == json!(false) { None } else { Some(value) };
        assert_eq!(read.get(key), expected, "Kubernetes {minor}: extenders[0].{key}");
    }
    assert!(read.keys().all(|k| shipped.contains_key(k)), "Kubernetes {minor} added settings: {read:?}");
    for key in ["leaderElect", "resourceLock", "resourceNamespace", "resourceName"] {
        assert_eq!(written["leaderElection"][key], config["leaderElection"][key], "Kubernetes {minor}: {key}");
    }
    let profiles = written["profiles"].as_array().unwrap();
    assert_eq!(profiles.len(), 1);
    assert_eq!(profiles[0]["schedulerName"], "predicate-scheduler");
    let plugins: Vec<String> = profiles[0]["plugins"]["multiPoint"]["enabled"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| match p["weight"].as_i64().unwrap_or(0) {
            0 => p["name"].as_str().unwrap().to_string(),
            w => format!("{}={w}", p["name"].as_str().unwrap()),
        })
        .collect();
    assert_eq!(plugins, default_plugins(minor), "Kubernetes {minor}'s default plugins");
    assert_eq!(added_defaults(&profiles[0]), later_defaults(minor), "Kubernetes {minor}'s added defaults");
}

fn with_labels(object: Value, labels: Value) -> Value {
    merged(object, json!({"metadata": {"labels": labels}}))
}

fn with_spec(object: Value, spec: Value) -> Value {
    merged(object, json!({"spec": spec}))
}

predicate_extender_testing::on_each_minor!(
    a_batch_of_every_kind_of_pod_is_bound_by_the_extender_where_explain_says_it_fits
);

/// Pods of every kind the shipped profile and the extender both judge (resources, node selector,
/// taints and tolerations, host ports, required anti-affinity, topology spread, a local PV bound
/// at first consumer) are all bound, by the extender, each once, each to a node where `explain`
/// says it fits; kube-scheduler sent NodeNames (nodeCacheCapable) and the extender never met a
/// name it had not seen; the node only the extender rejects (Ready=False, which today's plugins do
/// not read) gets no pod.
async fn a_batch_of_every_kind_of_pod_is_bound_by_the_extender_where_explain_says_it_fits(minor: &str) {
    batch(minor, "batch", None, Mode::Extender).await
}

predicate_extender_testing::on_each_minor!(
    with_kube_schedulers_replaced_plugins_off_the_batch_is_bound_where_explain_says_it_fits
);

/// The same batch with kube-scheduler running `config/scheduler-config-policy.yaml`'s profile (its
/// own plugins that config/policy.json replaces turned off, as `scheduler-config` prints it): the
/// extender alone keeps pods apart by host port, anti-affinity and spread, and every pod is bound
/// where explain says it fits.
async fn with_kube_schedulers_replaced_plugins_off_the_batch_is_bound_where_explain_says_it_fits(minor: &str) {
    batch(minor, "batch-policy-only", Some(scheduler_config::with_policy_only_plugins), Mode::Extender).await
}

predicate_extender_testing::on_each_minor!(in_process_the_batch_is_bound_where_explain_says_it_fits);

/// The batch on the in-process kube-scheduler, with its profile (`scheduler-config --in-process`:
/// kube-scheduler's own plugins that the Policy replaces off, the filters counting placed pods
/// included): the engine alone keeps the pods apart, Reserve counting each on its node before the
/// next cycle, and every pod is bound once, by kube-scheduler, where explain says it fits; no pod
/// reaches the node only the engine rejects.
async fn in_process_the_batch_is_bound_where_explain_says_it_fits(minor: &str) {
    batch(minor, "batch", None, Mode::InProcess).await
}

/// The batch with the profile of the test above and without the extender's `bindVerb`, on the
/// newest minor: kube-scheduler binds, and the extender learns of each pod's node only from its
/// watch, possibly after it has answered `/filter` for the next pods; kube-scheduler's own
/// filters that count the placed pods (left on in that profile) see the pods it has assumed, so
/// still no host port, anti-affinity or spread is broken and no pod is bound twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_kube_scheduler_binding_the_batch_is_bound_once_each_where_explain_says_it_fits() {
    fn config(shipped: Value) -> Value {
        scheduler_config::with_kube_scheduler_binding(scheduler_config::with_policy_only_plugins(shipped))
    }
    batch(kube_cluster::binaries::NEWEST, "batch-kube-binds", Some(config), Mode::Extender).await
}

/// The batch test, with a change to kube-scheduler's configuration (`Options::scheduler_config`).
/// Whoever the configuration has bind (the extender, or kube-scheduler without `bindVerb`) binds
/// every pod, once.
async fn batch(minor: &str, name: &str, scheduler_config: Option<fn(Value) -> Value>, mode: Mode) {
    let options = Options { controller_manager: true, scheduler_config, ..Options::default() };
    let Some(cluster) = start(minor, name, mode, options, None).await else {
        return;
    };
    namespace(&cluster).await;
    let c = &cluster.client;
    for (name, zone) in [("n1", "zone-a"), ("n2", "zone-a"), ("n3", "zone-b")] {
        create(c, node(name, zone, "4", "16Gi")).await;
    }
    // n4 is tainted; n5 reports Ready=False (the classic CheckNodeCondition rejects it, kube-scheduler's
    // own plugins would place pods there: only the extender keeps them away).
    create(
        c,
        with_spec(
            node("n4-tainted", "zone-b", "4", "16Gi"),
            json!({"taints": [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]}),
        ),
    )
    .await;
    let mut not_ready = node("n5-not-ready", "zone-b", "64", "256Gi");
    not_ready["status"]["conditions"][0]["status"] = json!("False");
    create(c, not_ready).await;
    // A local PV on n2, its StorageClass binding at first consumer, and a claim for it.
    create(
        c,
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "local"},
        "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"}),
    )
    .await;
    create(
        c,
        json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-n2"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "local",
            "persistentVolumeReclaimPolicy": "Retain", "local": {"path": "/mnt/disk"},
            "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n2"]}]}]}}}}),
    )
    .await;
    create(c, json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": NS},
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "local", "resources": {"requests": {"storage": "1Gi"}}}})).await;

    let mut batch = Vec::new();
    // Half a cpu each: where scores tie (the extender's rounded 0..10 mean, with kube-scheduler's
    // own resource scores off in the policy-only run), all four may land on one node, and they must
    // not fill n2, the only node with-volume fits.
    for i in 0..4 {
        batch.push(pod(NS, &format!("cpu-{i}"), "500m"));
    }
    batch.push(with_spec(
        pod(NS, "zone-b-only", "100m"),
        json!({"nodeSelector": {"topology.kubernetes.io/zone": "zone-b"}}),
    ));
    batch.push(with_spec(
        pod(NS, "tolerates-db", "100m"),
        json!({"nodeSelector": {"kubernetes.io/hostname": "n4-tainted"},
               "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "db", "effect": "NoSchedule"}]}),
    ));
    for i in 0..2 {
        let mut p = pod(NS, &format!("host-port-{i}"), "100m");
        p["spec"]["containers"][0]["ports"] = json!([{"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}]);
        batch.push(with_spec(p, json!({"nodeSelector": {"topology.kubernetes.io/zone": "zone-a"}})));
    }
    for i in 0..3 {
        let p = with_labels(pod(NS, &format!("anti-{i}"), "100m"), json!({"group": "anti"}));
        batch.push(with_spec(
            p,
            json!({"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"group": "anti"}}, "topologyKey": "kubernetes.io/hostname"}]}}}),
        ));
    }
    for i in 0..4 {
        let p = with_labels(pod(NS, &format!("spread-{i}"), "100m"), json!({"group": "spread"}));
        batch.push(with_spec(
            p,
            json!({"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"group": "spread"}}}]}),
        ));
    }
    let mut with_volume = pod(NS, "with-volume", "100m");
    with_volume["spec"]["volumes"] = json!([{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]);
    batch.push(with_volume);
    let names: Vec<String> = batch.iter().map(|p| p["metadata"]["name"].as_str().unwrap().to_string()).collect();
    for p in batch {
        create(c, p).await;
    }

    let mut placed = BTreeMap::new();
    for name in &names {
        placed.insert(name.clone(), wait_bound(&cluster, name).await);
    }
    let on = |name: &str| placed[name].clone();
    assert!(
        !placed.values().any(|n| n == "n5-not-ready"),
        "a pod went to the node only the extender rejects: {placed:?}"
    );
    assert!(["n3", "n4-tainted"].contains(&on("zone-b-only").as_str()), "{placed:?}");
    assert_eq!(on("tolerates-db"), "n4-tainted");
    assert_ne!(on("host-port-0"), on("host-port-1"), "two pods on one host port");
    let anti: BTreeSet<String> = (0..3).map(|i| on(&format!("anti-{i}"))).collect();
    assert_eq!(anti.len(), 3, "required anti-affinity broken: {placed:?}");
    let zone_a = (0..4).filter(|i| ["n1", "n2"].contains(&on(&format!("spread-{i}")).as_str())).count();
    assert_eq!(zone_a, 2, "spread over zones broken (maxSkew 1): {placed:?}");
    assert_eq!(on("with-volume"), "n2", "the local PV is on n2");
    for name in (0..4).map(|i| format!("cpu-{i}")) {
        assert!(!on(&name).starts_with("n4") && !on(&name).starts_with("n5"), "{placed:?}");
    }

    // Every process of the cluster listens on loopback only (and each on something).
    let listeners = cluster.listeners();
    let mut processes = vec!["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler-0"];
    if mode == Mode::Extender {
        processes.push("predicate-extender");
    }
    for process in processes {
        assert!(listeners.iter().any(|(p, _)| p == process), "{process} listens on nothing? {listeners:?}");
    }
    let outside: Vec<_> = listeners.iter().filter(|(_, addr)| !addr.starts_with("127.")).collect();
    assert!(outside.is_empty(), "listening outside 127.0.0.0/8: {outside:?}");

    // Each pod's node is one where explain, against the same cluster, says it fits.
    for p in pods(&cluster).list(&ListParams::default()).await.unwrap().items {
        let name = p.metadata.name.clone().unwrap();
        let feasible = explain_feasible(&cluster, &p);
        assert!(
            feasible.contains(&placed[&name]),
            "explain: {name} does not fit {}: feasible {feasible:?}",
            placed[&name]
        );
    }

    if mode == Mode::InProcess {
        // kube-scheduler bound every pod, once: no extender in the cluster.
        assert_bound_once_each(&cluster, mode, names.len()).await;
        return;
    }
    // The extender bound every pod, once, and kube-scheduler none; or, without `bindVerb`, the
    // other way round.
    let written: Value = serde_json::from_slice(&std::fs::read(&cluster.scheduler_config).unwrap()).unwrap();
    let extender_binds = written["extenders"][0].get("bindVerb").is_some();
    let (binder, by_extender) =
        if extender_binds { (bindings::EXTENDER, names.len()) } else { (bindings::KUBE_SCHEDULER, 0) };
    bindings::assert_bound_once_each_by(&cluster, NS, names.len(), binder).await;
    assert_eq!(
        cluster.extender_metric("predicate_extender_bind_total", &["outcome=\"success\""]).await,
        by_extender as f64
    );
    // NodeNames from kube-scheduler (nodeCacheCapable), every one known to the extender's watch
    // cache, and never a whole Nodes list.
    let metrics = cluster.extender_metrics().await;
    let candidates = |form: &str| {
        kube_cluster::metric_sum(
            &metrics,
            "predicate_extender_candidate_nodes_total",
            &["verb=\"filter\"", &format!("form=\"{form}\"")],
        )
    };
    assert!(candidates("NodeNames") >= names.len() as f64, "{metrics}");
    assert_eq!((candidates("Nodes"), candidates("unknown")), (0.0, 0.0), "{metrics}");
}

/// The preemption tests' cluster: `n1` and `cheap` (its network unavailable, which only the classic
/// predicates read), each full with two 1.5-cpu pods (n1's of priority `low` with 30 s to
/// terminate, and no kubelet to finish them: the window in which the preemptor is only
/// nominated; cheap's of `lowest`, kube-scheduler's own choice), and a 2-cpu preemptor of `high`.
/// Returns the node the preemptor is nominated to.
async fn preemption_scene(cluster: &Cluster) -> String {
    namespace(cluster).await;
    let c = &cluster.client;
    for (name, value) in [("lowest", 10), ("low", 100), ("medium", 500), ("high", 1000), ("highest", 2000)] {
        create(c, priority_class(name, value)).await;
    }
    create(c, node("n1", "zone-a", "4", "16Gi")).await;
    create(c, condition(node("cheap", "zone-a", "4", "16Gi"), "NetworkUnavailable", "True")).await;
    for i in 0..2 {
        create(c, running(&format!("n1-victim-{i}"), "n1", "1500m", "low", 30)).await;
        create(c, running(&format!("cheap-victim-{i}"), "cheap", "1500m", "lowest", 0)).await;
    }
    create(c, with_spec(pod(NS, "preemptor", "2"), json!({"priorityClassName": "high"}))).await;
    eventually("the preemptor nominated", DEADLINE, || async {
        let p = pods(cluster).get("preemptor").await.ok()?;
        p.status?.nominated_node_name.filter(|n| !n.is_empty())
    })
    .await
}

/// The pods kube-scheduler has deleted (preemption's victims), from the audit log, once there is
/// one.
async fn victims_deleted(cluster: &Cluster) -> BTreeSet<String> {
    eventually("kube-scheduler deleted a victim", DEADLINE, || async {
        let deleted: BTreeSet<String> = cluster
            .audit_events()
            .into_iter()
            .filter(|e| {
                e["stage"] == "ResponseComplete" && e["verb"] == "delete" && e["objectRef"]["resource"] == "pods"
            })
            .filter(|e| e["userAgent"].as_str().unwrap_or_default().starts_with(bindings::KUBE_SCHEDULER))
            .map(|e| e["objectRef"]["name"].as_str().unwrap_or_default().to_string())
            .collect();
        (!deleted.is_empty()).then_some(deleted)
    })
    .await
}

fn priority_class(name: &str, value: i64) -> Value {
    json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value})
}

fn condition(mut node: Value, type_: &str, status: &str) -> Value {
    let conditions = node["status"]["conditions"].as_array_mut().unwrap();
    conditions.retain(|c| c["type"] != type_);
    conditions.push(json!({"type": type_, "status": status, "reason": "e2e", "message": "e2e"}));
    node
}

/// A pod placed directly on `node` (spec.nodeName, no scheduler involved), at `priority`.
fn running(name: &str, node: &str, cpu: &str, priority: &str, grace: i64) -> Value {
    with_spec(
        pod(NS, name, cpu),
        json!({"nodeName": node, "priorityClassName": priority, "terminationGracePeriodSeconds": grace}),
    )
}

predicate_extender_testing::on_each_minor!(
    an_unschedulable_pod_carries_the_extenders_reasons_in_its_event_and_condition
);

/// A pod only the extender rejects everywhere (kube-scheduler's own plugins pass every node): its
/// FailedScheduling event and its PodScheduled condition carry the extender's own reasons, as
/// kube-scheduler aggregates them ("0/N nodes are available: ..."), next to kube-scheduler's reason
/// for the node its own plugins rejected.
async fn an_unschedulable_pod_carries_the_extenders_reasons_in_its_event_and_condition(minor: &str) {
    unschedulable(minor, Mode::Extender).await
}

predicate_extender_testing::on_each_minor!(in_process_an_unschedulable_pod_carries_the_engines_reasons_in_its_event);

/// The same pod on the in-process kube-scheduler: the PredicateEngine plugin's statuses carry the
/// engine's reasons, which kube-scheduler aggregates as it does the extender's (the tainted node's
/// too: kube-scheduler's TaintToleration is off in-process), and explain's first line is that message.
async fn in_process_an_unschedulable_pod_carries_the_engines_reasons_in_its_event(minor: &str) {
    unschedulable(minor, Mode::InProcess).await
}

async fn unschedulable(minor: &str, mode: Mode) {
    let Some(cluster) = start(minor, "unschedulable", mode, Options::default(), None).await else { return };
    namespace(&cluster).await;
    let c = &cluster.client;
    create(c, condition(node("not-ready", "zone-a", "4", "16Gi"), "Ready", "False")).await;
    create(c, condition(node("memory-pressure", "zone-a", "4", "16Gi"), "MemoryPressure", "True")).await;
    create(
        c,
        with_spec(
            node("tainted", "zone-a", "4", "16Gi"),
            json!({"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]}),
        ),
    )
    .await;
    // BestEffort (no requests): CheckNodeMemoryPressure applies to it.
    let mut best_effort = pod(NS, "best-effort", "1");
    best_effort["spec"]["containers"][0]["resources"] = json!({});

    // The extender's own answer for the two nodes kube-scheduler's plugins pass (in-process, the
    // same engine's words, as the extender gives them). Asked before the pod exists, until the
    // extender's watch has both nodes: a pod scheduled while they are still unknown to it fails
    // them as not in its cache, and kube-scheduler then holds the pod as unschedulable until a
    // cluster event it waits for (none comes here) or its five-minute flush.
    let reasons: BTreeSet<String> = match mode {
        Mode::Extender => {
            eventually("the extender's answer for both nodes, from its cache", DEADLINE, || async {
                let request = json!({"Pod": best_effort, "NodeNames": ["not-ready", "memory-pressure"]});
                let (status, answer) = cluster.extender_post("/filter", &request).await;
                assert_eq!(status, 200, "{answer}");
                let unresolvable = answer["FailedAndUnresolvableNodes"].as_object().cloned().unwrap_or_default();
                let failed = answer["FailedNodes"].as_object().cloned().unwrap_or_default();
                assert_eq!(unresolvable.len() + failed.len(), 2, "{answer}");
                let reasons: BTreeSet<String> =
                    unresolvable.values().chain(failed.values()).map(|r| r.as_str().unwrap().to_string()).collect();
                (!reasons.contains(UNKNOWN_NODE)).then_some(reasons)
            })
            .await
        }
        Mode::InProcess => ["node(s) had memory pressure", "node(s) were not ready"].map(String::from).into(),
    };
    create(c, best_effort.clone()).await;

    let message = eventually("a FailedScheduling event naming every reason", DEADLINE, || async {
        let events = failed_scheduling(&cluster, "best-effort").await;
        events
            .into_iter()
            .find(|m| m.starts_with("0/3 nodes are available") && reasons.iter().all(|r| m.contains(r.as_str())))
    })
    .await;
    // The whole message, pinned per minor: kube-scheduler's aggregation of the extender's reasons,
    // then the PostFilter plugins' own words (1.35 and 1.36's DynamicResources adds one; 1.37's no
    // longer does: docs/operations.md, "Kubernetes minors").
    let dra = match minor {
        "1.35" | "1.36" => "no new claims to deallocate, ",
        "1.37" => "",
        other => panic!("Kubernetes {other}: pin its event wording here"),
    };
    // The tainted node: kube-scheduler's TaintToleration rejects it beside the extender; in-process
    // that plugin is off (the Policy's PodToleratesNodeTaints replaces it) and the engine does, in
    // the classic words.
    let taint = match mode {
        Mode::Extender => "had untolerated taint(s)",
        Mode::InProcess => "had taints that the pod didn't tolerate",
    };
    assert_eq!(
        message,
        format!(
            "0/3 nodes are available: 1 node(s) had memory pressure, 1 node(s) {taint}, \
             1 node(s) were not ready. {dra}preemption: 0/3 nodes are available: 3 Preemption is not helpful \
             for scheduling."
        ),
        "Kubernetes {minor}"
    );
    // kube-scheduler records the event and patches the pod's status separately: the condition may
    // land after the event (seen once on 1.36: no conditions yet when the event was read).
    let scheduled = eventually("the pod's PodScheduled condition with the event's message", DEADLINE, || async {
        let pod = pods(&cluster).get("best-effort").await.ok()?;
        let scheduled = pod.status?.conditions?.into_iter().find(|c| c.type_ == "PodScheduled")?;
        (scheduled.message.as_deref() == Some(message.as_str())).then_some(scheduled)
    })
    .await;
    let pod = pods(&cluster).get("best-effort").await.unwrap();
    assert_eq!((scheduled.status.as_str(), scheduled.reason.as_deref()), ("False", Some("Unschedulable")));
    let condition_message = scheduled.message.unwrap_or_default();
    assert_eq!(condition_message, message, "the condition says what the event says");
    assert!(reasons.iter().all(|r| condition_message.contains(r.as_str())), "{condition_message} lacks {reasons:?}");
    assert_eq!(pod.spec.unwrap().node_name, None);
    assert_eq!(kube_cluster::bindings::bindings(&cluster, NS).len(), 0);
    // explain's first line is the event's, word for word, each node counted once.
    assert_explain_says_what_kube_scheduler_says(&cluster, NS, "best-effort", None).await;
}

predicate_extender_testing::on_each_minor!(
    preemption_takes_victims_the_extender_returned_and_the_nomination_reaches_its_double_pass
);

/// Preemption through the extender: kube-scheduler's own choice would be the node whose victims
/// have the lowest priority (`cheap`), but the extender's `/preempt` drops that node (its network is
/// unavailable, a condition only the classic predicates read), so the victims come from `n1` only,
/// and the preemptor is nominated there. While the victim terminates, the extender's double pass
/// counts the nominated preemptor for lower-priority pods and not for higher ones; once the victim
/// is gone the preemptor is bound to n1 by the extender.
async fn preemption_takes_victims_the_extender_returned_and_the_nomination_reaches_its_double_pass(minor: &str) {
    let Some(cluster) = Cluster::start_on(minor, "preemption", Options::default()).await else { return };
    let nominated = preemption_scene(&cluster).await;
    assert_eq!(nominated, "n1", "the extender's /preempt dropped `cheap`");
    assert!(
        cluster.extender_metric("predicate_extender_http_requests_total", &["verb=\"preempt\"", "code=\"200\""]).await
            >= 1.0
    );
    let victims = victims_deleted(&cluster).await;
    assert!(
        victims.iter().all(|v| v.starts_with("n1-victim-")),
        "victims outside what the extender returned: {victims:?}"
    );
    assert_eq!(victims.len(), 1, "one 1.5-cpu victim frees enough for 2 cpu: {victims:?}");

    // The victim is terminating; the preemptor is nominated to n1. A 0.5-cpu pod of lower priority
    // must count the nominated preemptor (pass 1: 3 + 2 + 0.5 > 4); one of higher priority must not
    // (3 + 0.5 <= 4).
    let probe = |name: &str, priority: i64| {
        let mut p = pod(NS, name, "500m");
        p["metadata"]["uid"] = json!(format!("uid-{name}"));
        p["spec"]["priority"] = json!(priority);
        json!({"Pod": p, "NodeNames": ["n1"]})
    };
    let (_, lower) = cluster.extender_post("/filter", &probe("probe-lower", 500)).await;
    assert_eq!(lower["NodeNames"], json!([]), "the nominated preemptor must count for a lower-priority pod: {lower}");
    let (_, higher) = cluster.extender_post("/filter", &probe("probe-higher", 2000)).await;
    assert_eq!(higher["NodeNames"], json!(["n1"]), "nominated pods of lower priority do not count: {higher}");

    // The victim goes (nothing runs kubelet to finish its grace period); the preemptor follows.
    for victim in &victims {
        delete_pod_now(&cluster.client, NS, victim).await;
    }
    assert_eq!(wait_bound(&cluster, "preemptor").await, "n1");
    // The victims were created bound; the preemptor is the one binding.
    assert_bound_once_each_by_the_extender(&cluster, 1).await;
    let placed = placements(&cluster).await;
    assert_eq!(placed.get("cheap-victim-0").map(String::as_str), Some("cheap"), "{placed:?}");
    assert_eq!(placed.get("cheap-victim-1").map(String::as_str), Some("cheap"), "{placed:?}");
}

predicate_extender_testing::on_each_minor!(
    in_process_preemption_spares_the_node_the_engine_rejects_and_honours_the_nomination
);

/// Preemption on the in-process kube-scheduler: kube-scheduler's own DefaultPreemption would take
/// the cheapest victims, on `cheap`, but the engine rejects that node as unresolvable (its network
/// is unavailable, which only the classic predicates read), so the victim comes from `n1`. The
/// dry run that finds it passes only because the plugin is told of the removed victim
/// (PreFilterExtensions) and the engine filters `n1` without it. While the victim terminates, the
/// nominated preemptor counts for a lower-priority pod (it stays Pending) and not for a
/// higher-priority one (bound to `n1`); once the victim is gone the preemptor is bound there.
async fn in_process_preemption_spares_the_node_the_engine_rejects_and_honours_the_nomination(minor: &str) {
    let Some(cluster) = start(minor, "preemption", Mode::InProcess, Options::default(), None).await else { return };
    let nominated = preemption_scene(&cluster).await;
    let c = &cluster.client;
    assert_eq!(nominated, "n1", "the engine rejects `cheap`, which preemption must not pick");
    let victims = victims_deleted(&cluster).await;
    assert_eq!(victims.len(), 1, "one 1.5-cpu victim frees enough for 2 cpu: {victims:?}");
    assert!(victims.iter().all(|v| v.starts_with("n1-victim-")), "{victims:?}");
    // kube-scheduler's cache must have the victim terminating before the probes' bindings retry the
    // preemptor: a retry that finds the victim not yet terminating (kube-scheduler's own informer
    // lagging the API by a few milliseconds) preempts a second victim, as kube-scheduler does with
    // any Filter plugin. A second is far more than that lag.
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;

    // The victim terminates (30 s grace, no kubelet): the preemptor is only nominated. Below the
    // preemptor's priority, 3 + 2 + 0.5 > 4 (it stays Pending); above it, 3 + 0.5 <= 4.
    create(c, with_spec(pod(NS, "probe-lower", "500m"), json!({"priorityClassName": "lowest"}))).await;
    create(c, with_spec(pod(NS, "probe-higher", "500m"), json!({"priorityClassName": "highest"}))).await;
    assert_eq!(wait_bound(&cluster, "probe-higher").await, "n1", "a nominated pod of lower priority does not count");
    eventually("probe-lower reported unschedulable", DEADLINE, || async {
        (!failed_scheduling(&cluster, "probe-lower").await.is_empty()).then_some(())
    })
    .await;
    assert_eq!(placements(&cluster).await["probe-lower"], "", "the nominated preemptor counts for a lower priority");

    for victim in &victims {
        delete_pod_now(c, NS, victim).await;
    }
    assert_eq!(wait_bound(&cluster, "preemptor").await, "n1");
    let placed = placements(&cluster).await;
    assert_eq!(placed["probe-lower"], "", "{placed:?}");
    assert_eq!((placed["cheap-victim-0"].as_str(), placed["cheap-victim-1"].as_str()), ("cheap", "cheap"));
    // The probes and the preemptor: two bound, each once, by kube-scheduler.
    assert_bound_once_each(&cluster, Mode::InProcess, 2).await;
}

predicate_extender_testing::on_each_minor!(with_the_extender_down_pods_wait_and_are_bound_once_it_is_back);

/// The extender down (`ignorable: false`): kube-scheduler does not place the pod, says why in an
/// event, and retries; the extender back on its address syncs and the pod is bound, once. The
/// extender's model then counts what the API server has.
async fn with_the_extender_down_pods_wait_and_are_bound_once_it_is_back(minor: &str) {
    let Some(mut cluster) = Cluster::start_on(minor, "extender-down", Options::default()).await else { return };
    namespace(&cluster).await;
    let c = &cluster.client;
    for name in ["n1", "n2"] {
        create(c, node(name, "zone-a", "4", "16Gi")).await;
    }
    create(c, pod(NS, "before", "100m")).await;
    wait_bound(&cluster, "before").await;

    cluster.extender.as_mut().unwrap().kill();
    for i in 0..3 {
        create(c, pod(NS, &format!("while-down-{i}"), "100m")).await;
    }
    let event = eventually("a FailedScheduling event for the unreachable extender", DEADLINE, || async {
        failed_scheduling(&cluster, "while-down-0").await.into_iter().find(|m| m.contains(&cluster.extender_addr))
    })
    .await;
    assert!(event.contains("connect") || event.contains("refused"), "{event}");
    let placed = placements(&cluster).await;
    assert!((0..3).all(|i| placed[&format!("while-down-{i}")].is_empty()), "placed without the extender: {placed:?}");

    let mark = std::fs::metadata(&cluster.extender.as_ref().unwrap().log).unwrap().len();
    cluster.extender.as_mut().unwrap().restart();
    cluster.wait_extender_ready().await;
    assert!(std::fs::metadata(&cluster.extender.as_ref().unwrap().log).unwrap().len() > mark);
    for i in 0..3 {
        wait_bound(&cluster, &format!("while-down-{i}")).await;
    }
    assert_bound_once_each_by_the_extender(&cluster, 4).await;
    assert_model_counts_match(&cluster).await;
}

/// The extender's model (its `cache_objects` series) holds as many nodes and pods as the API server.
async fn assert_model_counts_match(cluster: &Cluster) {
    eventually("the extender's model counts what the API server has", DEADLINE, || async {
        kube_cluster::model_counts_match(&cluster.client, &cluster.extender_metrics().await).await.then_some(())
    })
    .await;
}

predicate_extender_testing::on_each_minor!(a_killed_leader_and_a_second_replica_bind_no_pod_twice);

/// Two kube-scheduler replicas with leader election as shipped; the leader is killed mid-batch and
/// started again: the other takes the lease and finishes, and no pod is bound twice.
async fn a_killed_leader_and_a_second_replica_bind_no_pod_twice(minor: &str) {
    killed_leader(minor, Mode::Extender).await
}

predicate_extender_testing::on_each_minor!(in_process_a_killed_leader_and_a_second_replica_bind_no_pod_twice);

/// The kill of the engine's side in-process: the engine is inside kube-scheduler, so the leader
/// killed mid-batch takes its engine with it; the other replica's engine, fed by its own informers
/// all along, finishes the batch and no pod is lost or bound twice.
async fn in_process_a_killed_leader_and_a_second_replica_bind_no_pod_twice(minor: &str) {
    killed_leader(minor, Mode::InProcess).await
}

async fn killed_leader(minor: &str, mode: Mode) {
    let options = Options { schedulers: 2, ..Options::default() };
    let Some(mut cluster) = start(minor, "replicas", mode, options, None).await else {
        return;
    };
    namespace(&cluster).await;
    let c = &cluster.client;
    for i in 0..4 {
        create(c, node(&format!("n{i}"), "zone-a", "8", "32Gi")).await;
    }
    const PODS: usize = 40;
    for i in 0..PODS / 2 {
        create(c, pod(NS, &format!("p-{i:02}"), "100m")).await;
    }
    // The leader is the replica that logged taking the lease (client-go's leaderelection line).
    let acquired = |s: &kube_cluster::Process| {
        std::fs::read_to_string(&s.log).unwrap_or_default().matches("Successfully acquired lease").count()
    };
    let leader = eventually("a replica logged taking the lease", DEADLINE, || async {
        cluster.schedulers.iter().position(|s| acquired(s) > 0)
    })
    .await;
    // Half the batch bound; the leader crashes (SIGKILL: no lease release) with the other half
    // arriving, and comes back as a replica.
    for i in 0..PODS / 2 {
        wait_bound(&cluster, &format!("p-{i:02}")).await;
    }
    cluster.schedulers[leader].kill();
    for i in PODS / 2..PODS {
        create(c, pod(NS, &format!("p-{i:02}"), "100m")).await;
    }
    cluster.schedulers[leader].restart();
    for i in 0..PODS {
        wait_bound(&cluster, &format!("p-{i:02}")).await;
    }
    let (first, second) = (acquired(&cluster.schedulers[leader]), acquired(&cluster.schedulers[1 - leader]));
    assert!(first + second >= 2, "after the kill, a replica took the lease again ({first} + {second})");
    assert_bound_once_each(&cluster, mode, PODS).await;
}

predicate_extender_testing::on_each_minor!(a_swapped_policy_file_changes_where_pods_go_without_a_restart);

/// The Policy file replaced while the extender serves: the next pods are judged by the new Policy,
/// without a restart (CheckNodeLabelPresence keeps them off the unlabelled node).
async fn a_swapped_policy_file_changes_where_pods_go_without_a_restart(minor: &str) {
    swapped_policy(minor, Mode::Extender).await
}

predicate_extender_testing::on_each_minor!(in_process_a_swapped_policy_file_changes_where_pods_go_without_a_restart);

/// The Policy swap in-process: the plugin's Policy file (its `policy` arg) replaced while
/// kube-scheduler runs; the plugin reads it again and the next pods follow the new Policy.
async fn in_process_a_swapped_policy_file_changes_where_pods_go_without_a_restart(minor: &str) {
    swapped_policy(minor, Mode::InProcess).await
}

/// How many times the engine put a new Policy in force: the extender's metric, or the in-process
/// plugin's log line.
async fn policy_reloads(cluster: &Cluster, mode: Mode) -> f64 {
    match mode {
        Mode::Extender => {
            cluster.extender_metric("predicate_extender_policy_reload_total", &["result=\"success\""]).await
        }
        Mode::InProcess => {
            let log = std::fs::read_to_string(&cluster.schedulers[0].log).unwrap_or_default();
            log.matches("New Policy in force").count() as f64
        }
    }
}

async fn swapped_policy(minor: &str, mode: Mode) {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.json");
    let shipped =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config/policy.json")).unwrap();
    std::fs::write(&policy, &shipped).unwrap();
    let options = Options { extender_args: vec![format!("--policy={}", policy.display())], ..Options::default() };
    let Some(cluster) = start(minor, "policy-swap", mode, options, Some(&policy)).await else { return };
    namespace(&cluster).await;
    let c = &cluster.client;
    create(c, with_labels(node("ssd", "zone-a", "8", "32Gi"), json!({"disk": "ssd"}))).await;
    create(c, node("plain", "zone-a", "8", "32Gi")).await;
    // Spread over both nodes under the shipped Policy (required anti-affinity, one per node).
    for i in 0..2 {
        let p = with_labels(pod(NS, &format!("before-{i}"), "100m"), json!({"group": "before"}));
        create(
            c,
            with_spec(
                p,
                json!({"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"group": "before"}}, "topologyKey": "kubernetes.io/hostname"}]}}}),
            ),
        )
        .await;
    }
    let before: BTreeSet<String> =
        [wait_bound(&cluster, "before-0").await, wait_bound(&cluster, "before-1").await].into();
    assert_eq!(before.len(), 2);

    let mut swapped: Value = serde_json::from_str(&shipped).unwrap();
    swapped["predicates"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "NeedsSSD", "argument": {"labelsPresence": {"labels": ["disk"], "presence": true}}}));
    let reloads = policy_reloads(&cluster, mode).await;
    // Written next to it and renamed over it, as a ConfigMap volume swaps its files.
    let next = dir.path().join("policy.json.next");
    std::fs::write(&next, swapped.to_string()).unwrap();
    std::fs::rename(&next, &policy).unwrap();
    eventually("the engine reloaded the Policy", DEADLINE, || async {
        (policy_reloads(&cluster, mode).await > reloads).then_some(())
    })
    .await;
    for i in 0..4 {
        create(c, pod(NS, &format!("after-{i}"), "100m")).await;
    }
    for i in 0..4 {
        assert_eq!(wait_bound(&cluster, &format!("after-{i}")).await, "ssd", "the new Policy's NeedsSSD");
    }
    assert_bound_once_each(&cluster, mode, 6).await;
}

/// `POST /whatif` before a Policy change, on the real cluster: the Policy that adds NeedsSSD names
/// exactly the running pods on the node without the label, and which of them fit no other node.
/// After the swap, those pods evicted and recreated (a rollout), kube-scheduler leaves exactly the
/// ones whatif said fit nowhere Pending and binds the others to the labelled node.
#[tokio::test]
async fn whatif_names_the_pods_a_swapped_policy_leaves_pending() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.json");
    let shipped =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config/policy.json")).unwrap();
    std::fs::write(&policy, &shipped).unwrap();
    let options = Options { extender_args: vec![format!("--policy={}", policy.display())], ..Options::default() };
    let Some(cluster) = Cluster::start("whatif", options).await else { return };
    namespace(&cluster).await;
    let c = &cluster.client;
    create(c, with_labels(node("ssd", "zone-a", "8", "32Gi"), json!({"disk": "ssd"}))).await;
    create(c, node("plain", "zone-a", "8", "32Gi")).await;
    // A pair that keeps apart (one per node), and pods anywhere.
    let mut names = Vec::new();
    for i in 0..2 {
        let p = with_labels(pod(NS, &format!("pair-{i}"), "100m"), json!({"group": "pair"}));
        create(
            c,
            with_spec(
                p,
                json!({"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"group": "pair"}}, "topologyKey": "kubernetes.io/hostname"}]}}}),
            ),
        )
        .await;
        names.push(format!("pair-{i}"));
    }
    for i in 0..6 {
        create(c, pod(NS, &format!("web-{i}"), "500m")).await;
        names.push(format!("web-{i}"));
    }
    let mut placed = BTreeMap::new();
    for name in &names {
        placed.insert(name.clone(), wait_bound(&cluster, name).await);
    }
    let on_plain: BTreeSet<String> =
        placed.iter().filter(|(_, node)| node.as_str() == "plain").map(|(p, _)| format!("{NS}/{p}")).collect();
    assert!(on_plain.iter().any(|p| p.contains("pair-")), "the pair is on both nodes: {placed:?}");

    let mut swapped: Value = serde_json::from_str(&shipped).unwrap();
    swapped["predicates"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "NeedsSSD", "argument": {"labelsPresence": {"labels": ["disk"], "presence": true}}}));
    let (status, report) = cluster.extender_post("/whatif", &swapped).await;
    assert_eq!(status, 200, "{report}");
    let stopped = report["running"]["stopFitting"].as_array().unwrap();
    let named: BTreeSet<String> = stopped.iter().map(|s| s["pod"].as_str().unwrap().to_string()).collect();
    assert_eq!(named, on_plain, "whatif names exactly the pods on the unlabelled node: {report}");
    assert_eq!(report["running"]["checked"], names.len());
    let nowhere: BTreeSet<String> =
        stopped.iter().filter(|s| s["fitsElsewhere"] == 0).map(|s| s["pod"].as_str().unwrap().to_string()).collect();
    assert!(nowhere.iter().all(|p| p.contains("pair-")) && nowhere.len() == 1, "{report}");

    // The swap, then the stopped pods evicted and recreated as a rollout would.
    let reloads = cluster.extender_metric("predicate_extender_policy_reload_total", &["result=\"success\""]).await;
    let next = dir.path().join("policy.json.next");
    std::fs::write(&next, swapped.to_string()).unwrap();
    std::fs::rename(&next, &policy).unwrap();
    eventually("the extender reloaded the Policy", DEADLINE, || async {
        let now = cluster.extender_metric("predicate_extender_policy_reload_total", &["result=\"success\""]).await;
        (now > reloads).then_some(())
    })
    .await;
    let pods: Api<Pod> = Api::namespaced(c.clone(), NS);
    for key in &named {
        let name = key.trim_start_matches(&format!("{NS}/"));
        let mut spec = serde_json::to_value(pods.get(name).await.unwrap()).unwrap();
        delete_pod_now(c, NS, name).await;
        eventually("the pod is gone", DEADLINE, || async { pods.get_opt(name).await.unwrap().is_none().then_some(()) })
            .await;
        spec["spec"].as_object_mut().unwrap().remove("nodeName");
        let recreated = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NS, "labels": spec["metadata"]["labels"]},
            "spec": {"schedulerName": spec["spec"]["schedulerName"], "containers": spec["spec"]["containers"],
                     "affinity": spec["spec"]["affinity"]}});
        create(c, recreated).await;
    }
    for key in named.difference(&nowhere) {
        let name = key.trim_start_matches(&format!("{NS}/"));
        assert_eq!(wait_bound(&cluster, name).await, "ssd", "whatif said it fits elsewhere");
    }
    for key in &nowhere {
        let name = key.trim_start_matches(&format!("{NS}/"));
        let event = eventually(&format!("{name} reported unschedulable"), DEADLINE, || async {
            let events: Api<Event> = Api::namespaced(c.clone(), NS);
            let list: ObjectList<Event> = events.list(&ListParams::default()).await.ok()?;
            list.items.into_iter().find(|e| {
                e.involved_object.name.as_deref() == Some(name) && e.reason.as_deref() == Some("FailedScheduling")
            })
        })
        .await;
        let message = event.message.unwrap_or_default();
        assert!(message.contains("didn't have the requested labels"), "{message}");
        assert!(pods.get(name).await.unwrap().spec.unwrap().node_name.is_none(), "{name} stays Pending");
        assert_explain_says_what_kube_scheduler_says(&cluster, NS, name, Some(&policy)).await;
    }
}

/// The minors these tests run on are the module files e2e/build.sh builds, one each.
#[test]
fn the_tested_minors_are_e2e_build_sh_s() {
    let listed = kube_cluster::binaries::listed_versions();
    let mut minors: Vec<String> =
        listed.iter().map(|v| v.trim_start_matches('v').rsplit_once('.').unwrap().0.to_string()).collect();
    minors.reverse();
    assert_eq!(minors, kube_cluster::binaries::MINORS, "e2e/build.sh --list gave {listed:?}");
}
