//! End to end, on each tested minor: pods counted as today's kube-scheduler counts them. A node
//! filled by a pod whose only requests are pod-level (`spec.resources`) and a node filled by a pod
//! the kubelet is resizing in place (its status allocates more than its spec asks) reject the next
//! pod in the extender (`/filter`) as in kube-scheduler (its FailedScheduling event), and explain's
//! first line is that event's; under the `policy-only` overlay's profile a batch fills them without
//! double-booking either, and with kube-scheduler's NodeResourcesFit off, pods arriving one at a
//! time fill them by the extender's count alone.
//!
//! Real kube-apiserver and kube-scheduler (e2e/build.sh), the extender binary in live mode; no
//! kubelet: the test writes the resized pod's status as the kubelet would.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

use predicate_extender_testing::kube_cluster;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Patch, PatchParams};
use kube::Api;
use kube_cluster::explain::assert_explain_says_what_kube_scheduler_says;
use kube_cluster::objects::{create, node, pod};
use kube_cluster::scheduler_config;
use kube_cluster::{Cluster, Options};
use predicate_extender_testing::eventually;
use serde_json::{json, Value};

const NS: &str = "e2e";
const INSUFFICIENT_CPU: &str = "Insufficient cpu";

/// A pod placed on `node` (spec.nodeName) whose one container asks nothing and whose pod-level
/// requests take `cpu`.
fn pod_level(name: &str, node: &str, cpu: &str) -> Value {
    let mut p = pod(NS, name, "0");
    p["spec"]["nodeName"] = json!(node);
    p["spec"]["containers"][0]["resources"] = json!({});
    p["spec"]["resources"] = json!({"requests": {"cpu": cpu, "memory": "128Mi"}});
    p
}

/// A pod placed on `node` asking `spec_cpu` in its spec.
fn placed(name: &str, node: &str, spec_cpu: &str) -> Value {
    let mut p = pod(NS, name, spec_cpu);
    p["spec"]["nodeName"] = json!(node);
    p
}

/// Writes the status a kubelet writes while it resizes the pod's container down from `running`
/// cpu to its spec: allocated and configured at `running` still, the resize in progress.
async fn resizing_down_from(cluster: &Cluster, name: &str, running: &str) {
    let pods: Api<Pod> = Api::namespaced(cluster.client.clone(), NS);
    let status = json!({"status": {
        "phase": "Running",
        "conditions": [{"type": "PodResizeInProgress", "status": "True"}],
        "containerStatuses": [{
            "name": "c",
            "image": "registry.k8s.io/pause:3.10",
            "imageID": "",
            "ready": true,
            "restartCount": 0,
            "started": true,
            "state": {"running": {}},
            "allocatedResources": {"cpu": running, "memory": "128Mi"},
            "resources": {"requests": {"cpu": running, "memory": "128Mi"}},
        }],
    }});
    pods.patch_status(name, &PatchParams::default(), &Patch::Merge(&status)).await.unwrap();
}

/// The extender's `/filter` answer for `pod` on `nodes`, once its model has the cluster's pods.
async fn extender_rejects(cluster: &Cluster, pod: &Value, nodes: &[&str]) -> Value {
    eventually("the extender rejecting both full nodes", kube_cluster::DEADLINE, || async {
        let (status, answer) = cluster.extender_post("/filter", &json!({"Pod": pod, "NodeNames": nodes})).await;
        assert_eq!(status, 200, "{answer}");
        let failed = answer["FailedNodes"].as_object()?;
        nodes.iter().all(|n| failed.get(*n).and_then(Value::as_str) == Some(INSUFFICIENT_CPU)).then_some(answer)
    })
    .await
}

predicate_extender_testing::on_each_minor!(
    pod_level_and_resized_pods_fill_their_nodes_for_the_extender_and_kube_scheduler
);

async fn pod_level_and_resized_pods_fill_their_nodes_for_the_extender_and_kube_scheduler(minor: &str) {
    let Some(cluster) = Cluster::start_on(minor, "pod-requests", Options::default()).await else { return };
    let c = &cluster.client;
    create(c, json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})).await;
    create(c, node("pod-level", "zone-a", "4", "16Gi")).await;
    create(c, node("resized", "zone-a", "4", "16Gi")).await;
    // 3700m of 4 cpu taken on each: by pod-level requests, and by a resize down not done yet
    // (the spec asks 1 cpu; kube-scheduler counts the 3700m the kubelet still allocates).
    create(c, pod_level("big", "pod-level", "3700m")).await;
    create(c, placed("shrinking", "resized", "1")).await;
    resizing_down_from(&cluster, "shrinking", "3700m").await;

    let next = pod(NS, "next", "500m");
    extender_rejects(&cluster, &next, &["pod-level", "resized"]).await;
    create(c, next).await;
    let line = assert_explain_says_what_kube_scheduler_says(&cluster, NS, "next", None).await;
    // Both nodes rejected by kube-scheduler's NodeResourcesFit, in its words.
    assert_eq!(line, "0/2 nodes are available: 2 Insufficient cpu.", "Kubernetes {minor}");
}

/// Nodes `pod-level` and `resized` of 4 cpu, 2 taken on each (by a pod-level pod, and by a pod
/// resized down from 2 cpu to 500m, not done yet): room for two 1-cpu pods per node, four in all.
/// Returns once the extender's model counts both.
async fn two_nodes_half_taken(cluster: &Cluster) {
    let c = &cluster.client;
    create(c, json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})).await;
    create(c, node("pod-level", "zone-a", "4", "16Gi")).await;
    create(c, node("resized", "zone-a", "4", "16Gi")).await;
    create(c, pod_level("big", "pod-level", "2")).await;
    create(c, placed("shrinking", "resized", "500m")).await;
    resizing_down_from(cluster, "shrinking", "2").await;
    extender_rejects(cluster, &pod(NS, "probe", "2500m"), &["pod-level", "resized"]).await;
}

predicate_extender_testing::on_each_minor!(
    under_the_policy_only_profile_pod_level_and_resized_pods_are_not_double_booked
);

/// A batch of 1-cpu pods onto the two nodes, partly filled by a pod-level pod and a pod being
/// resized, with kube-scheduler running the `policy-only` overlay's profile
/// (config/scheduler-config-policy.yaml: its plugins the Policy replaces off, NodeResourcesFit
/// kept, as it counts the pods kube-scheduler has assumed): exactly the pods that fit are bound,
/// the others wait with what both count, and explain, told of that profile, says so.
async fn under_the_policy_only_profile_pod_level_and_resized_pods_are_not_double_booked(minor: &str) {
    let options = Options { scheduler_config: Some(scheduler_config::with_policy_only_plugins), ..Options::default() };
    let Some(cluster) = Cluster::start_on(minor, "pod-requests-policy-only", options).await else { return };
    two_nodes_half_taken(&cluster).await;
    let c = &cluster.client;

    let names: Vec<String> = (0..6).map(|i| format!("batch-{i}")).collect();
    for name in &names {
        create(c, pod(NS, name, "1")).await;
    }
    // Four are bound, two per node; the last two wait, rejected on both nodes by kube-scheduler's
    // NodeResourcesFit, which counts its assumed pods before the extender is asked.
    let pods: Api<Pod> = Api::namespaced(c.clone(), NS);
    let placements = eventually("four of the batch bound", kube_cluster::DEADLINE, || async {
        let mut bound = Vec::new();
        for name in &names {
            let pod = pods.get(name).await.ok()?;
            if let Some(node) = pod.spec.and_then(|s| s.node_name) {
                bound.push(node);
            }
        }
        (bound.len() == 4).then_some(bound)
    })
    .await;
    for node in ["pod-level", "resized"] {
        assert_eq!(placements.iter().filter(|n| *n == node).count(), 2, "{node}: {placements:?}");
    }
    let pending: Vec<&String> = {
        let mut p = Vec::new();
        for name in &names {
            if pods.get(name).await.unwrap().spec.and_then(|s| s.node_name).is_none() {
                p.push(name);
            }
        }
        p
    };
    assert_eq!(pending.len(), 2, "{pending:?}");
    for name in pending {
        let line = assert_explain_says_what_kube_scheduler_says(&cluster, NS, name, None).await;
        assert_eq!(line, "0/2 nodes are available: 2 Insufficient cpu.", "Kubernetes {minor}, {name}");
    }
    // And nothing more became bound while it waited.
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    let bound_now = {
        let mut n = 0;
        for name in &names {
            n += usize::from(pods.get(name).await.unwrap().spec.and_then(|s| s.node_name).is_some());
        }
        n
    };
    assert_eq!(bound_now, 4, "a node was double-booked");
}

predicate_extender_testing::on_each_minor!(
    with_node_resources_fit_off_the_extender_alone_counts_pod_level_and_resized_pods
);

/// kube-scheduler's NodeResourcesFit off (PreFilter and Filter): the extender is the only one to
/// count capacity. 1-cpu pods arrive one at a time (each bound, or rejected, before the next is
/// created, so no `/filter` can run before the previous `/bind` reaches the extender): the
/// extender places exactly the four that fit beside the pod-level and the resized pods, and
/// rejects the others with `Insufficient cpu`, which kube-scheduler reports as the extender's.
async fn with_node_resources_fit_off_the_extender_alone_counts_pod_level_and_resized_pods(minor: &str) {
    let options =
        Options { scheduler_config: Some(scheduler_config::without_node_resources_fit), ..Options::default() };
    let Some(cluster) = Cluster::start_on(minor, "pod-requests-extender-only", options).await else { return };
    two_nodes_half_taken(&cluster).await;
    let c = &cluster.client;

    let pods: Api<Pod> = Api::namespaced(c.clone(), NS);
    let mut bound = Vec::new();
    for i in 0..6 {
        let name = format!("one-{i}");
        create(c, pod(NS, &name, "1")).await;
        if i < 4 {
            let node = eventually("the pod bound", kube_cluster::DEADLINE, || async {
                pods.get(&name).await.ok()?.spec?.node_name
            })
            .await;
            bound.push(node);
            continue;
        }
        let line = assert_explain_says_what_kube_scheduler_says(&cluster, NS, &name, None).await;
        assert_eq!(line, "0/2 nodes are available: 2 Insufficient cpu.", "Kubernetes {minor}, {name}");
        // Said by the extender: kube-scheduler's plugins passed both nodes.
        let explained = kube_cluster::explain::explain(&cluster, &pods.get(&name).await.unwrap(), None);
        let by: Vec<&str> = explained["kubeScheduler"]["rejected"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["by"].as_str().unwrap())
            .collect();
        assert_eq!(by, ["Extender", "Extender"], "Kubernetes {minor}, {name}: {explained}");
    }
    for node in ["pod-level", "resized"] {
        assert_eq!(bound.iter().filter(|n| *n == node).count(), 2, "{node}: {bound:?}");
    }
}
