//! The Helm chart as operators install it (`helm install`, two replicas, the images built here),
//! on the same real node after the kustomize deployment is removed, under a steady stream of pods:
//! the leader's pod deleted, its kube-scheduler killed, its extender killed, and `helm upgrade` to
//! a new image tag and to a changed scheduler configuration (rolling updates). After each: every
//! pod bound exactly once, by an extender, to a node the placement rules allow (checked here from
//! the objects, not by asking the extender), none left Pending, the Lease held by one live replica
//! whose extender says it leads while the others say they stand by; and the longest stretch without
//! a binding, printed as a table (docs/operations.md, "Failover and upgrades", has the figures).
//!
//! The pods go to Node objects without a kubelet (tainted, as in the first part), so the real node
//! runs only the schedulers.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::jiff::Timestamp;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams};
use kube::Api;
use predicate_extender_testing::eventually;
use predicate_extender_testing::kube_cluster::bindings::EXTENDER as EXTENDER_AGENT;
use predicate_extender_testing::kube_cluster::helm::Helm;
use predicate_extender_testing::kube_cluster::node::RealNode;
use predicate_extender_testing::kube_cluster::objects::{create, node as fake_node};
use predicate_extender_testing::kube_cluster::{self, Binaries, Cluster, DEADLINE};
use serde_json::{json, Value};

use crate::{kubectl, DEPLOYMENT, EXTENDER, EXTENDER_IMAGE, EXTENDER_TAG, FAKE_TAINT, SCHEDULER_IMAGE};

/// The release's namespace (the kustomize deployment's stays behind, Terminating without a
/// namespace controller).
const HELM_NS: &str = "predicate-helm";
const RELEASE: &str = "predicate-scheduler";
/// The stream's pods.
const STREAM_NS: &str = "e2e-stream";
/// The label of the Node objects the stream's pods go to (the real node does not have it).
const STREAM_LABEL: &str = "e2e.predicate-extender/stream";
const STREAM_NODES: usize = 200;
const NODE_CPU_MILLIS: u64 = 8000;
const NODE_MEMORY_MI: u64 = 32 * 1024;
/// Each stream's pods at least (more while its disruption lasts).
const PODS_PER_SCENARIO: usize = 600;
const PODS_PER_SECOND: u64 = 20;
/// When, into each stream, the disruption comes.
const DISRUPT_AFTER: Duration = Duration::from_secs(5);
/// A Lease renewed within this is held by a live kube-scheduler (it renews every retryPeriod, 2s).
const LEASE_FRESH: Duration = Duration::from_secs(5);
/// How long each stream goes on once the disruption is over (the rollout done, the Lease held).
const STREAM_AFTER: Duration = Duration::from_secs(5);
/// The tag the image upgrade moves to: the same image under another name.
const NEXT_TAG: &str = "e2e-next";

#[derive(Debug, Clone, Copy)]
enum Scenario {
    LeaderPodDeleted,
    LeaderSchedulerKilled,
    LeaderExtenderKilled,
    UpgradeToNewImage,
    UpgradeToNewSchedulerConfig,
}

impl Scenario {
    const ALL: [Scenario; 5] = [
        Scenario::LeaderPodDeleted,
        Scenario::LeaderSchedulerKilled,
        Scenario::LeaderExtenderKilled,
        Scenario::UpgradeToNewImage,
        Scenario::UpgradeToNewSchedulerConfig,
    ];

    fn name(self) -> &'static str {
        match self {
            Scenario::LeaderPodDeleted => "leader-pod-deleted",
            Scenario::LeaderSchedulerKilled => "leader-kube-scheduler-killed",
            Scenario::LeaderExtenderKilled => "leader-extender-killed",
            Scenario::UpgradeToNewImage => "helm-upgrade-image",
            Scenario::UpgradeToNewSchedulerConfig => "helm-upgrade-scheduler-config",
        }
    }
}

/// What one scenario measured.
struct Measured {
    scenario: Scenario,
    pods: usize,
    longest_gap: Duration,
    until_all_bound: Duration,
}

pub(crate) async fn the_chart_under_a_stream_of_pods(
    binaries: &Binaries,
    cluster: &Cluster,
    node: &RealNode,
    overlay: &Path,
) {
    let Some(helm) = Helm::new("real-node") else { return };
    let helm = helm.against(&cluster.admin_kubeconfig);
    remove_the_kustomize_deployment(binaries, cluster, overlay).await;
    // The new tag: the imported image under a second name.
    let current = format!("{EXTENDER_IMAGE}:{EXTENDER_TAG}");
    node.ctr(&["images", "tag", &current, &format!("{EXTENDER_IMAGE}:{NEXT_TAG}")]).unwrap();

    let c = &cluster.client;
    // The namespace as README.md creates it: Pod Security's restricted level enforced.
    create(
        c,
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": HELM_NS,
            "labels": {"pod-security.kubernetes.io/enforce": "restricted"}}}),
    )
    .await;
    let image = format!("image.repository={EXTENDER_IMAGE},image.tag={EXTENDER_TAG}");
    let scheduler = format!("kubeScheduler.image.repository={SCHEDULER_IMAGE}");
    helm.run(&[
        "install",
        RELEASE,
        "charts/predicate-extender",
        "--namespace",
        HELM_NS,
        "--set",
        &image,
        "--set",
        &scheduler,
        "--wait",
        "--timeout",
        "5m",
    ]);
    settled(cluster, "helm install").await;

    create(c, json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": STREAM_NS}})).await;
    let taint = json!([{"key": FAKE_TAINT, "value": "true", "effect": "NoSchedule"}]);
    for i in 0..STREAM_NODES {
        let mut n = fake_node(&format!("stream-{i:03}"), &format!("zone-{}", i % 3), "8", "32Gi");
        let mut labels = json!({STREAM_LABEL: "true"});
        if i % 2 == 0 {
            labels["disk"] = json!("ssd");
        }
        n["metadata"]["labels"] = kube_cluster::merged(n["metadata"]["labels"].take(), labels);
        n["spec"]["taints"] = taint.clone();
        create(c, n).await;
    }

    let mut measured = Vec::new();
    let mut total = 0;
    for (index, scenario) in Scenario::ALL.into_iter().enumerate() {
        let holder = leader_identity(cluster).await;
        let leader = holder.split('_').next().unwrap_or_default().to_string();
        let started = Instant::now();
        // The stream runs until the disruption is over (an upgrade's rollout included) and a
        // while after, so that every handover falls inside it.
        let (done, until) = tokio::sync::watch::channel(false);
        let stream = tokio::spawn(stream(cluster.client.clone(), scenario, index, until));
        tokio::time::sleep(DISRUPT_AFTER).await;
        let disrupted_at = Timestamp::now();
        match scenario {
            Scenario::LeaderPodDeleted => {
                let pods: Api<Pod> = Api::namespaced(c.clone(), HELM_NS);
                pods.delete(&leader, &DeleteParams::default()).await.unwrap();
            }
            Scenario::LeaderSchedulerKilled => kill(node, &leader, "kube-scheduler"),
            Scenario::LeaderExtenderKilled => kill(node, &leader, EXTENDER),
            Scenario::UpgradeToNewImage | Scenario::UpgradeToNewSchedulerConfig => {
                let set = match scenario {
                    Scenario::UpgradeToNewImage => format!("image.tag={NEXT_TAG}"),
                    _ => "policyOnly=true".to_string(),
                };
                let args: Vec<String> = ["upgrade", RELEASE, "charts/predicate-extender", "--namespace", HELM_NS]
                    .into_iter()
                    .map(str::to_string)
                    .chain(["--reuse-values", "--set", &set, "--wait", "--timeout", "5m"].map(str::to_string))
                    .collect();
                let helm = helm.clone();
                tokio::task::spawn_blocking(move || {
                    let args: Vec<&str> = args.iter().map(String::as_str).collect();
                    helm.run(&args)
                })
                .await
                .unwrap();
            }
        }
        settled(cluster, scenario.name()).await;
        tokio::time::sleep(STREAM_AFTER).await;
        done.send(true).unwrap();
        let created = stream.await.unwrap();
        all_bound(cluster, scenario, created).await;
        let until_all_bound = started.elapsed();
        total += created;
        kube_cluster::bindings::assert_bound_once_each_by(cluster, STREAM_NS, total, EXTENDER_AGENT).await;
        placements_follow_the_rules(cluster).await;
        let longest_gap = longest_gap_without_a_binding(cluster, scenario, disrupted_at);
        // Every disruption but the extender's kill moves the Lease to another kube-scheduler (an
        // upgrade replaces the leader's pod too; a killed one's restart has a new identity), and
        // it moved while the stream ran, which went on past it.
        let now_holding = leader_identity(cluster).await;
        if !matches!(scenario, Scenario::LeaderExtenderKilled) {
            assert_ne!(now_holding, holder, "{}: the Lease stayed with {holder}", scenario.name());
        }
        measured.push(Measured { scenario, pods: created, longest_gap, until_all_bound });
    }
    let mut table = String::from(
        "\nchart under load (real node): scenario, pods, longest gap without a binding, all bound after\n",
    );
    for m in &measured {
        table.push_str(&format!(
            "  {:<32} {:>4} pods  gap {:>6.1} s  all bound after {:>5.1} s\n",
            m.scenario.name(),
            m.pods,
            m.longest_gap.as_secs_f64(),
            m.until_all_bound.as_secs_f64()
        ));
    }
    // Past the harness's capture: the figures docs/operations.md quotes.
    let _ = std::io::stderr().write_all(table.as_bytes());
    helm.run(&["uninstall", RELEASE, "--namespace", HELM_NS, "--wait", "--timeout", "2m"]);
}

/// The kustomize deployment scaled to nothing (its pods gone from the real node), then deleted.
async fn remove_the_kustomize_deployment(binaries: &Binaries, cluster: &Cluster, overlay: &Path) {
    let deployments: Api<Deployment> = Api::namespaced(cluster.client.clone(), crate::DEPLOYMENT_NS);
    let scale = json!({"spec": {"replicas": 0}});
    deployments.patch(DEPLOYMENT, &PatchParams::default(), &Patch::Merge(&scale)).await.unwrap();
    let pods: Api<Pod> = Api::namespaced(cluster.client.clone(), crate::DEPLOYMENT_NS);
    eventually("the kustomize deployment's pods are gone", DEADLINE, || async {
        pods.list(&ListParams::default()).await.ok()?.items.is_empty().then_some(())
    })
    .await;
    // --wait=false: without a namespace controller the Namespace stays Terminating.
    kubectl(binaries, cluster, &["delete", "-k", overlay.to_str().unwrap(), "--wait=false"]);
}

/// After `step`: the Deployment rolled out (every replica updated and available), a live replica
/// holding the Lease, its extender saying it leads and the others that they stand by.
async fn settled(cluster: &Cluster, step: &str) {
    let deployments: Api<Deployment> = Api::namespaced(cluster.client.clone(), HELM_NS);
    eventually(&format!("after {step}: rolled out, two replicas available"), DEADLINE * 3, || async {
        let d = deployments.get_opt(DEPLOYMENT).await.ok()??;
        let status = d.status?;
        let done = status.observed_generation == d.metadata.generation
            && status.updated_replicas == Some(2)
            && status.available_replicas == Some(2)
            && status.replicas == Some(2);
        done.then_some(())
    })
    .await;
    let leading = format!(
        "after {step}: one live replica leads (its Lease renewed within {LEASE_FRESH:?}), its extender says so, the other's says it stands by"
    );
    let leases: Api<Lease> = Api::namespaced(cluster.client.clone(), HELM_NS);
    eventually(&leading, DEADLINE, || async {
        // A killed holder's Lease stays with it until it expires: renewed lately, or not led.
        let renewed = leases.get_opt("predicate-scheduler").await.ok()??.spec?.renew_time?.0;
        let age = Timestamp::now().duration_since(renewed);
        if Duration::try_from(age).ok()? > LEASE_FRESH {
            return None;
        }
        let leader = leader_pod(cluster).await;
        let pods: Api<Pod> = Api::namespaced(cluster.client.clone(), HELM_NS);
        let live: Vec<String> = pods
            .list(&ListParams::default().labels("app.kubernetes.io/name=predicate-scheduler"))
            .await
            .ok()?
            .items
            .into_iter()
            .filter(|p| p.metadata.deletion_timestamp.is_none())
            .filter_map(|p| p.metadata.name)
            .collect();
        if !live.contains(&leader) || live.len() != 2 {
            return None;
        }
        for pod in &live {
            let says = crate::metric_in(cluster, HELM_NS, pod, "predicate_extender_leader", &[]).await?;
            if says != f64::from(u8::from(*pod == leader)) {
                return None;
            }
        }
        Some(())
    })
    .await;
}

/// The pod whose kube-scheduler holds the release's Lease (its identity is `<hostname>_<uuid>`).
async fn leader_pod(cluster: &Cluster) -> String {
    let holder = leader_identity(cluster).await;
    holder.split('_').next().unwrap_or_default().to_string()
}

/// The release's Lease's holder: one kube-scheduler process (a restarted one has a new uuid).
async fn leader_identity(cluster: &Cluster) -> String {
    let leases: Api<Lease> = Api::namespaced(cluster.client.clone(), HELM_NS);
    eventually("a replica holds the release's Lease", DEADLINE, || async {
        leases.get_opt("predicate-scheduler").await.ok()??.spec?.holder_identity.filter(|h| !h.is_empty())
    })
    .await
}

fn kill(node: &RealNode, pod: &str, container: &str) {
    let ids = node.container_ids(pod, container);
    assert_eq!(ids.len(), 1, "{pod}/{container}: {ids:?}");
    node.ctr(&["tasks", "kill", "--signal", "SIGKILL", &ids[0]]).unwrap();
}

/// The stream: pods at PODS_PER_SECOND, at least PODS_PER_SCENARIO and until `until` says stop, in
/// four shapes: small; on an ssd node (nodeSelector); in groups of five that must not share a node
/// (required anti-affinity); large. Returns how many it created.
async fn stream(
    client: kube::Client,
    scenario: Scenario,
    index: usize,
    until: tokio::sync::watch::Receiver<bool>,
) -> usize {
    let mut tick = tokio::time::interval(Duration::from_millis(1000 / PODS_PER_SECOND));
    let mut creating = Vec::new();
    for i in 0.. {
        if i >= PODS_PER_SCENARIO && *until.borrow() {
            break;
        }
        tick.tick().await;
        let client = client.clone();
        creating.push(tokio::spawn(async move { create(&client, stream_pod(scenario, index, i)).await }));
    }
    let created = creating.len();
    for c in creating {
        c.await.unwrap();
    }
    created
}

fn stream_pod(scenario: Scenario, index: usize, i: usize) -> Value {
    let shape = i % 4;
    let (cpu, memory) = if shape == 3 { ("500m", "1Gi") } else { ("50m", "16Mi") };
    let mut selector = json!({STREAM_LABEL: "true"});
    let mut labels = json!({"scenario": scenario.name(), "shape": shape.to_string()});
    let mut affinity = Value::Null;
    if shape == 1 {
        selector["disk"] = json!("ssd");
    }
    if shape == 2 {
        let group = format!("s{index}-g{}", i / 20);
        labels["group"] = json!(group);
        affinity = json!({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"group": group}}, "topologyKey": "kubernetes.io/hostname"}]}});
    }
    let mut spec = json!({
        "schedulerName": "predicate-scheduler",
        "terminationGracePeriodSeconds": 0,
        "automountServiceAccountToken": false,
        "nodeSelector": selector,
        "tolerations": [{"key": FAKE_TAINT, "operator": "Exists", "effect": "NoSchedule"}],
        "containers": [{"name": "c", "image": crate::PAUSE_IMAGE, "resources": {"requests": {"cpu": cpu, "memory": memory}}}],
    });
    if !affinity.is_null() {
        spec["affinity"] = affinity;
    }
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": format!("{}-{i:04}", scenario.name()), "namespace": STREAM_NS, "labels": labels},
        "spec": spec,
    })
}

async fn all_bound(cluster: &Cluster, scenario: Scenario, created: usize) {
    let pods: Api<Pod> = Api::namespaced(cluster.client.clone(), STREAM_NS);
    let selector = format!("scenario={}", scenario.name());
    eventually(&format!("the {created} pods of {} bound", scenario.name()), DEADLINE * 2, || async {
        let list = pods.list(&ListParams::default().labels(&selector)).await.ok()?;
        let bound = list.items.iter().filter(|p| p.spec.as_ref().is_some_and(|s| s.node_name.is_some())).count();
        (list.items.len() == created && bound == created).then_some(())
    })
    .await;
}

/// Every stream pod's node, checked from the objects: one of the stream's nodes, ssd where the pod
/// asks for it, no two pods of an anti-affinity group on one node, and no node's requests over its
/// allocatable (8 CPUs, 32Gi).
async fn placements_follow_the_rules(cluster: &Cluster) {
    let nodes: Api<Node> = Api::all(cluster.client.clone());
    let labels: BTreeMap<String, BTreeMap<String, String>> = nodes
        .list(&ListParams::default().labels(&format!("{STREAM_LABEL}=true")))
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|n| (n.metadata.name.unwrap(), n.metadata.labels.unwrap_or_default()))
        .collect();
    let pods: Api<Pod> = Api::namespaced(cluster.client.clone(), STREAM_NS);
    let mut cpu: BTreeMap<String, u64> = BTreeMap::new();
    let mut memory: BTreeMap<String, u64> = BTreeMap::new();
    let mut groups: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for pod in pods.list(&ListParams::default()).await.unwrap().items {
        let name = pod.metadata.name.clone().unwrap();
        let pod_labels = pod.metadata.labels.clone().unwrap_or_default();
        let spec = pod.spec.unwrap();
        let node = spec.node_name.clone().unwrap_or_else(|| panic!("{name} is not bound"));
        let node_labels = labels.get(&node).unwrap_or_else(|| panic!("{name} is on {node}, not a stream node"));
        for (k, v) in spec.node_selector.unwrap_or_default() {
            assert_eq!(node_labels.get(&k), Some(&v), "{name} on {node}: its nodeSelector {k}={v}");
        }
        if let Some(group) = pod_labels.get("group") {
            assert!(
                groups.entry(group.clone()).or_default().insert(node.clone()),
                "{name}: group {group} twice on {node}"
            );
        }
        let shape_large = pod_labels.get("shape").map(String::as_str) == Some("3");
        *cpu.entry(node.clone()).or_default() += if shape_large { 500 } else { 50 };
        *memory.entry(node).or_default() += if shape_large { 1024 } else { 16 };
    }
    for (node, millis) in &cpu {
        assert!(*millis <= NODE_CPU_MILLIS, "{node}: {millis}m of CPU requested");
        assert!(memory[node] <= NODE_MEMORY_MI, "{node}: {}Mi of memory requested", memory[node]);
    }
}

/// The longest time without a binding, from `from` (the disruption) to the scenario's last binding,
/// read from the audit log's `stageTimestamp`s of the scenario's pods' bindings.
fn longest_gap_without_a_binding(cluster: &Cluster, scenario: Scenario, from: Timestamp) -> Duration {
    let prefix = format!("{}-", scenario.name());
    let mut times: Vec<Timestamp> = kube_cluster::bindings::binding_events(cluster, STREAM_NS)
        .into_iter()
        .filter(|b| b.pod.starts_with(&prefix))
        .filter_map(|b| b.at.parse().ok())
        .collect();
    times.push(from);
    times.sort();
    let times: Vec<Timestamp> = times.into_iter().filter(|t| *t >= from).collect();
    times
        .windows(2)
        .map(|w| Duration::try_from(w[1].duration_since(w[0])).unwrap_or_default())
        .max()
        .unwrap_or_default()
}
