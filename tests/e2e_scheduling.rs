//! End to end: a real kube-scheduler (built from k8s.io/kubernetes, e2e/build.sh) with the shipped
//! `config/scheduler-config.yaml` calls the real extender binary, which watches a real
//! kube-apiserver (on a real etcd) under the project's own RBAC and binds through it. Each test
//! starts its own cluster on 127.0.0.1 and stops it at its end (tests/kube_cluster).
//!
//! Without Go these tests say SKIPPED on the terminal and pass; `.ci/run` (CI=true) makes that a
//! failure.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod kube_cluster;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use k8s_openapi::api::core::v1::{Event, Pod};
use kube::api::{ListParams, ObjectList};
use kube::Api;
use kube_cluster::objects::{create, delete_pod_now, node, pod};
use kube_cluster::scheduler_config::{self, ALLOWED_CHANGES};
use kube_cluster::{eventually, merged, Cluster, Options};
use serde_json::{json, Value};

const NS: &str = "e2e";

async fn namespace(cluster: &Cluster) {
    create(&cluster.client, json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})).await;
}

fn pods(cluster: &Cluster) -> Api<Pod> {
    Api::namespaced(cluster.client.clone(), NS)
}

/// The node a pod is bound to, once the API server says it is (spec.nodeName set by the binding,
/// and PodScheduled True: no kubelet runs, so the pod itself stays Pending).
async fn wait_bound(cluster: &Cluster, name: &str) -> String {
    let api = pods(cluster);
    eventually(&format!("pod {NS}/{name} bound"), || async {
        let pod = api.get_opt(name).await.ok()??;
        let node = pod.spec.as_ref()?.node_name.clone()?;
        let scheduled =
            pod.status.as_ref()?.conditions.as_ref()?.iter().any(|c| c.type_ == "PodScheduled" && c.status == "True");
        scheduled.then_some(node)
    })
    .await
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

/// The audit log's pods/binding creations: (pod, user agent).
fn bindings(cluster: &Cluster) -> Vec<(String, String)> {
    cluster
        .audit_events()
        .into_iter()
        .filter(|e| e["stage"] == "ResponseComplete" && e["verb"] == "create")
        .filter(|e| e["objectRef"]["resource"] == "pods" && e["objectRef"]["subresource"] == "binding")
        .filter(|e| e["responseStatus"]["code"].as_u64().is_some_and(|c| c < 300))
        .map(|e| {
            (
                e["objectRef"]["name"].as_str().unwrap_or_default().to_string(),
                e["userAgent"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// Every binding was made by the extender, and no pod was bound twice.
fn assert_bound_once_each_by_the_extender(cluster: &Cluster) -> usize {
    let all = bindings(cluster);
    let by_other: Vec<_> = all.iter().filter(|(_, agent)| !agent.starts_with("predicate-extender/")).collect();
    assert!(by_other.is_empty(), "bindings not made by the extender: {by_other:?}");
    let mut seen = BTreeSet::new();
    let twice: Vec<_> = all.iter().filter(|(pod, _)| !seen.insert(pod.clone())).collect();
    assert!(twice.is_empty(), "pods bound more than once: {twice:?}");
    all.len()
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

fn with_labels(object: Value, labels: Value) -> Value {
    merged(object, json!({"metadata": {"labels": labels}}))
}

fn with_spec(object: Value, spec: Value) -> Value {
    merged(object, json!({"spec": spec}))
}

/// Pods of every kind the shipped profile and the extender both judge (resources, node selector,
/// taints and tolerations, host ports, required anti-affinity, topology spread, a local PV bound
/// at first consumer) are all bound, by the extender, each once, each to a node where `explain`
/// says it fits; kube-scheduler sent NodeNames (nodeCacheCapable) and the extender never met a
/// name it had not seen; the node only the extender rejects (Ready=False, which today's plugins do
/// not read) gets no pod.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_of_every_kind_of_pod_is_bound_by_the_extender_where_explain_says_it_fits() {
    let Some(cluster) = Cluster::start("batch", Options { controller_manager: true, ..Options::default() }).await
    else {
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
    for i in 0..4 {
        batch.push(pod(NS, &format!("cpu-{i}"), "1"));
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

    // The extender bound every pod, once; kube-scheduler never bound one itself.
    assert_eq!(assert_bound_once_each_by_the_extender(&cluster), names.len());
    assert_eq!(
        cluster.extender_metric("predicate_extender_bind_total", &["outcome=\"success\""]).await,
        names.len() as f64
    );
    // NodeNames from kube-scheduler, every one known to the extender's watch cache.
    let filters =
        cluster.extender_metric("predicate_extender_http_requests_total", &["verb=\"filter\"", "code=\"200\""]).await;
    assert!(filters >= names.len() as f64, "kube-scheduler called /filter {filters} times for {} pods", names.len());
    let log = std::fs::read_to_string(&cluster.extender.as_ref().unwrap().log).unwrap();
    assert!(!log.contains("unknown node") && !log.contains("not in the cluster model"), "{log}");
}
