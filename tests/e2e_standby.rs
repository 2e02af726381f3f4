//! A standby replica's extender, against the real kube-apiserver: it follows the Lease its
//! kube-scheduler elects with (the one in `--scheduler-config`), says which replica it is in
//! `predicate_extender_leader`, keeps answering from its warm model if it is called anyway, counts
//! those calls (`predicate_extender_standby_requests_total`), and a second bind of a pod that the
//! leader's extender already bound is refused by the API server, in the answer's `Error`.
//!
//! No kube-scheduler runs here: the test holds the Lease itself, as another replica or as this
//! machine (kube-scheduler's identity is `<hostname>_<uuid>`, the extender's hostname its pod's).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{Patch, PatchParams};
use kube::Api;
use predicate_extender_testing::eventually;
use predicate_extender_testing::kube_cluster::objects::{create, node, pod};
use predicate_extender_testing::kube_cluster::scheduler_config::{LEASE_NAME, LEASE_NAMESPACE};
use predicate_extender_testing::kube_cluster::{Cluster, Options, DEADLINE};
use serde_json::json;

const NS: &str = "e2e-standby";

/// This machine's hostname, as the extender reads it (the kernel's, as in a pod).
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap().trim().to_string()
}

/// The Lease held by `holder`, renewed `renewed_ago` before now, for 60 s.
async fn hold(cluster: &Cluster, holder: &str, renewed_ago: SignedDuration) {
    let leases: Api<Lease> = Api::namespaced(cluster.client.clone(), LEASE_NAMESPACE);
    // A MicroTime: exactly six fractional digits.
    let renewed = Timestamp::now().checked_sub(renewed_ago).unwrap().strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string();
    let lease = json!({
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": LEASE_NAME, "namespace": LEASE_NAMESPACE},
        "spec": {
            "holderIdentity": holder,
            "leaseDurationSeconds": 60,
            "acquireTime": renewed,
            "renewTime": renewed,
        },
    });
    let params = PatchParams::apply("e2e-standby").force();
    leases.patch(LEASE_NAME, &params, &Patch::Apply(&lease)).await.unwrap();
}

/// The `predicate_extender_leader` sample, absent (`None`) until the extender has read the Lease.
async fn leader_gauge(cluster: &Cluster) -> Option<f64> {
    let text = cluster.extender_metrics().await;
    text.lines().find_map(|l| l.strip_prefix("predicate_extender_leader ")).map(|v| v.trim().parse().unwrap())
}

async fn becomes(cluster: &Cluster, what: &str, want: f64) {
    eventually(what, DEADLINE, || async { (leader_gauge(cluster).await == Some(want)).then_some(()) }).await;
}

async fn standby_calls(cluster: &Cluster, verb: &str) -> f64 {
    cluster.extender_metric("predicate_extender_standby_requests_total", &[&format!("verb=\"{verb}\"")]).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_standby_follows_the_lease_answers_if_called_and_a_second_bind_is_refused() {
    let options = Options { schedulers: 0, ..Options::default() };
    let Some(cluster) = Cluster::start("standby", options).await else { return };
    let c = &cluster.client;
    create(c, json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": LEASE_NAMESPACE}})).await;
    create(c, json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})).await;
    for name in ["node-a", "node-b"] {
        create(c, node(name, "zone-a", "4", "8Gi")).await;
    }

    // No Lease yet: nobody leads, this replica is a standby.
    becomes(&cluster, "a standby before any Lease", 0.0).await;
    // This machine's kube-scheduler holds it, then another replica does.
    hold(&cluster, &format!("{}_1a9f", hostname()), SignedDuration::ZERO).await;
    becomes(&cluster, "the leader under this machine's identity", 1.0).await;
    hold(&cluster, "predicate-scheduler-other_4b1d", SignedDuration::ZERO).await;
    becomes(&cluster, "a standby under another holder", 0.0).await;
    assert_eq!(cluster.extender_metric("predicate_extender_lease_read_errors_total", &[]).await, 0.0);

    // Called anyway: it answers from its model, and counts the call.
    let pending = create(c, pod(NS, "p", "100m")).await;
    let filter_body = json!({"Pod": pending, "NodeNames": ["node-a", "node-b"]});
    let answer = eventually("the standby's model has both nodes", DEADLINE, || async {
        let (status, answer) = cluster.extender_post("/filter", &filter_body).await;
        assert_eq!(status, 200, "{answer}");
        (answer["NodeNames"] == json!(["node-a", "node-b"])).then_some(answer)
    })
    .await;
    assert_eq!(answer["Error"].as_str().unwrap_or_default(), "", "{answer}");
    assert!(standby_calls(&cluster, "filter").await >= 1.0);

    // The leader's extender binds the pod first (here: the test, as it would through the API)...
    let uid = pending["metadata"]["uid"].as_str().unwrap();
    let bind = |node: &str| json!({"PodName": "p", "PodNamespace": NS, "PodUID": uid, "Node": node});
    let (status, first) = cluster.extender_post("/bind", &bind("node-a")).await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["Error"].as_str().unwrap_or_default(), "", "{first}");
    // ...and the standby's bind of the same pod is refused by the API server, not made twice.
    let (_, second) = cluster.extender_post("/bind", &bind("node-b")).await;
    let error = second["Error"].as_str().unwrap_or_default();
    assert!(error.contains("already") || error.contains("409") || error.contains("onflict"), "{second}");
    let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(c.clone(), NS);
    assert_eq!(pods.get("p").await.unwrap().spec.unwrap().node_name.as_deref(), Some("node-a"));
    assert_eq!(standby_calls(&cluster, "bind").await, 2.0);

    // This machine takes the Lease: the leader, and its calls are no longer counted as a standby's.
    hold(&cluster, &format!("{}_7c2e", hostname()), SignedDuration::ZERO).await;
    becomes(&cluster, "the leader once it holds the Lease", 1.0).await;
    let before = standby_calls(&cluster, "filter").await;
    let (status, _) = cluster.extender_post("/filter", &filter_body).await;
    assert_eq!(status, 200);
    assert_eq!(standby_calls(&cluster, "filter").await, before);

    // Its holder stopped renewing past the Lease's duration: nobody leads until another takes it.
    hold(&cluster, &format!("{}_7c2e", hostname()), SignedDuration::from_secs(120)).await;
    becomes(&cluster, "a standby once its Lease expired", 0.0).await;
    let text = cluster.extender_metrics().await;
    let help: Vec<&str> = text.lines().filter(|l| l.starts_with("# HELP predicate_extender_leader ")).collect();
    assert_eq!(help.len(), 1, "{text}");
}
