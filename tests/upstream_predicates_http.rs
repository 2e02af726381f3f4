//! Classic (1.12-1.16) predicate rules that kube-scheduler's own unit tests pin down, driven through
//! `/filter` on the real server in both `nodeCacheCapable` modes: `NodeNames` (nodes from the
//! model) and full `Nodes` (the request's node objects, decoded per request). The cluster is
//! tests/fixtures/clusters/upstream-predicates.yaml; each case names the upstream test it follows.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod common;

use common::{cluster, config, feasible, policy, shop_pod, TestServer};
use serde_json::{json, Value};

const FIXTURE: &str = "clusters/upstream-predicates.yaml";

const POLICY: &str = r#"{"kind":"Policy","apiVersion":"v1","predicates":[
    {"name":"CheckNodeCondition"},{"name":"MatchNodeSelector"},{"name":"MaxEBSVolumeCount"},
    {"name":"EvenPodsSpread"},{"name":"MatchInterPodAffinity"}]}"#;

fn fixture_text() -> String {
    std::fs::read_to_string(common::fixture_path(FIXTURE)).unwrap()
}

async fn server() -> TestServer {
    let mut c = config(cluster(&fixture_text()));
    c.policy = policy(POLICY);
    TestServer::start(c).await
}

/// The fixture's Node objects with these names, in this order, as a `NodeList` value.
fn node_list(names: &[&str]) -> Value {
    let list: Value = serde_saphyr::from_str(&fixture_text()).unwrap();
    let nodes: Vec<&Value> = list["items"].as_array().unwrap().iter().filter(|o| o["kind"] == "Node").collect();
    let items: Vec<Value> = names
        .iter()
        .map(|n| {
            let node = nodes.iter().find(|o| o["metadata"]["name"] == *n);
            (*node.unwrap_or_else(|| panic!("no node {n} in the fixture"))).clone()
        })
        .collect();
    json!({"metadata": {"resourceVersion": "7"}, "items": items})
}

/// What a /filter answer says, the same in both modes.
#[derive(Debug, PartialEq)]
struct Verdict {
    feasible: Vec<String>,
    failed: Value,
    unresolvable: Value,
}

fn map(entries: &[(&str, &str)]) -> Value {
    Value::Object(entries.iter().map(|(k, v)| (k.to_string(), json!(v))).collect())
}

fn verdict(feasible_nodes: &[&str], failed: &[(&str, &str)], unresolvable: &[(&str, &str)]) -> Verdict {
    Verdict {
        feasible: feasible_nodes.iter().map(|n| n.to_string()).collect(),
        failed: map(failed),
        unresolvable: map(unresolvable),
    }
}

/// Filters the pod on these nodes once by `NodeNames` and once by `Nodes`; both answers must be
/// `want`, and the `Nodes` answer must echo the feasible node objects.
async fn check_both_modes(server: &TestServer, name: &str, pod: &Value, nodes: &[&str], want: &Verdict) {
    let by_names = json!({"Pod": pod, "NodeNames": nodes, "Nodes": null});
    let by_nodes = json!({"Pod": pod, "Nodes": node_list(nodes), "NodeNames": null});
    for (mode, body) in [("NodeNames", by_names), ("Nodes", by_nodes)] {
        let (status, answer) = server.post("/filter", body.to_string()).await;
        assert_eq!(status, 200, "{name} ({mode}): {answer}");
        assert_eq!(answer["Error"], "", "{name} ({mode})");
        let got = Verdict {
            feasible: feasible(&answer),
            failed: answer["FailedNodes"].clone(),
            unresolvable: answer["FailedAndUnresolvableNodes"].clone(),
        };
        assert_eq!(&got, want, "{name} ({mode})");
        if mode == "Nodes" {
            let echoed: Vec<Value> = answer["Nodes"]["items"].as_array().cloned().unwrap_or_default();
            let expected: Vec<Value> = node_list(&want.feasible.iter().map(String::as_str).collect::<Vec<_>>())
                ["items"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            assert_eq!(echoed, expected, "{name}: the feasible node objects come back unchanged");
        }
    }
}

/// Item 2. upstream: CheckNodeConditionPredicate (1.12 predicates.go) and TestNodeConditionPredicate
/// (1.11-1.12 factory_test.go): Ready not True, OutOfDisk not False, NetworkUnavailable not False
/// and spec.unschedulable each fail the node; every reason is listed, conditions in the node's
/// order, and all are unresolvable (1.12 nodesWherePreemptionMightHelp).
#[tokio::test(flavor = "multi_thread")]
async fn check_node_condition_lists_every_reason() {
    let server = server().await;
    let want = verdict(
        &["ready"],
        &[],
        &[
            ("out-of-disk", "node(s) were out of disk space, node(s) were not ready, node(s) were unschedulable"),
            ("net-down", "node(s) had unavailable network"),
        ],
    );
    let plain = shop_pod("plain", json!({}), json!({}));
    check_both_modes(&server, "node conditions", &plain, &["ready", "out-of-disk", "net-down"], &want).await;
    server.stop().await;
}

/// Item 3. upstream: TestVolumeCountConflicts (1.12 max_attachable_volume_predicate_test.go), "pod
/// with missing PVC is counted towards the PV limit", "pod with unbound PVC is counted towards the
/// PV limit", "the same unbound PVC in multiple pods is counted towards the PV limit only once".
/// vol-1 holds EBS vol-a and the unbound claim shop/pending (2 of 2); vol-2 holds vol-b (1 of 2).
#[tokio::test(flavor = "multi_thread")]
async fn claims_that_cannot_be_followed_count_toward_the_volume_limit() {
    let server = server().await;
    let claims = |names: &[&str]| {
        let volumes: Vec<Value> = names
            .iter()
            .map(|c| json!({"name": format!("v-{c}"), "persistentVolumeClaim": {"claimName": c}}))
            .collect();
        json!({"volumes": volumes})
    };
    let full = "node(s) exceed max volume count";
    let cases = [
        ("a missing claim counts: vol-1 would hold 3", vec!["missing"], verdict(&["vol-2"], &[("vol-1", full)], &[])),
        ("the same unbound claim counts once", vec!["pending"], verdict(&["vol-1", "vol-2"], &[], &[])),
        (
            "a missing and an unbound claim: 3 on each node",
            vec!["pending", "missing"],
            verdict(&[], &[("vol-1", full), ("vol-2", full)], &[]),
        ),
    ];
    for (name, names, want) in cases {
        let p = shop_pod("ebs", json!({}), claims(&names));
        check_both_modes(&server, name, &p, &["vol-1", "vol-2"], &want).await;
    }
    server.stop().await;
}

/// Item 4. upstream: TestPodFitsSelector (1.12 predicates_test.go), "Pod with an invalid value in
/// Affinity term won't be scheduled onto the node": a NotIn value that is no label value makes the
/// term fail to convert (labels.NewRequirement), and a term that does not convert matches nothing.
#[tokio::test(flavor = "multi_thread")]
async fn an_unparsable_node_selector_term_matches_nothing() {
    let server = server().await;
    let not_in = |value: &str| {
        json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "foo", "operator": "NotIn", "values": [value]}]}]}}}})
    };
    let selector = "node(s) didn't match node selector";
    let invalid = shop_pod("invalid", json!({}), not_in("invalid value: ___@#$%^"));
    let want = verdict(&[], &[], &[("ready", selector), ("vol-2", selector)]);
    check_both_modes(&server, "invalid NotIn value", &invalid, &["ready", "vol-2"], &want).await;
    // The same term with a valid value: ready has foo=bar, vol-2 no foo at all.
    let valid = shop_pod("valid", json!({}), not_in("baz"));
    check_both_modes(
        &server,
        "valid NotIn value",
        &valid,
        &["ready", "vol-2"],
        &verdict(&["ready", "vol-2"], &[], &[]),
    )
    .await;
    server.stop().await;
}

/// Item 5. upstream: InterPodAffinityMatches (1.12-1.15 predicates.go) and TestInterPodAffinity,
/// "PodAntiAffinity symmetry check b1": existing pods' anti-affinity is checked before the pod's
/// own terms, and reported after ErrPodAffinityNotMatch. zone-a1 fails both (guard's zone
/// anti-affinity and web-0 on the host): the existing pod's rule is the one reported. Both
/// anti-affinity reasons are resolvable (FailedNodes).
#[tokio::test(flavor = "multi_thread")]
async fn inter_pod_affinity_checks_existing_pods_first() {
    let server = server().await;
    let web = shop_pod(
        "web-2",
        json!({"app": "web"}),
        json!({"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}}}),
    );
    let existing =
        "node(s) didn't match pod affinity/anti-affinity, node(s) didn't satisfy existing pods anti-affinity rules";
    let own = "node(s) didn't match pod affinity/anti-affinity, node(s) didn't match pod anti-affinity rules";
    let want = verdict(&["zone-b2"], &[("zone-a1", existing), ("zone-a2", existing), ("zone-b1", own)], &[]);
    check_both_modes(&server, "anti-affinity both ways", &web, &["zone-a1", "zone-a2", "zone-b1", "zone-b2"], &want)
        .await;
    server.stop().await;
}

/// Item 8. upstream: TestSingleConstraint (podtopologyspread filtering_test.go, 1.18+), "terminating
/// Pods should be excluded": spread-0 on spread-1 is being deleted, so rack r1 counts 0 and r2 counts
/// 1; the pod fits r1 only. By `NodeNames` the domains come from the model's label indexes, by
/// `Nodes` from walking the request's nodes: both leave the terminating pod out.
#[tokio::test(flavor = "multi_thread")]
async fn terminating_pods_do_not_count_for_spreading() {
    let server = server().await;
    let spread = shop_pod(
        "spread-2",
        json!({"app": "spread"}),
        json!({"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "rack", "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "spread"}}}]}),
    );
    let want = verdict(&["spread-1"], &[("spread-2", "node(s) didn't match pod topology spread constraints")], &[]);
    check_both_modes(&server, "terminating pod", &spread, &["spread-1", "spread-2"], &want).await;
    server.stop().await;
}
