//! The pod-relationship and volume predicates through `/filter`, on a snapshot file with Nodes,
//! Pods, Namespaces, Services, PersistentVolumes, PersistentVolumeClaims, StorageClasses and a
//! CSINode (tests/fixtures/clusters/relationships-and-volumes.yaml). Each case is a pod aimed at one
//! predicate, with the answer kube-scheduler's rules give on that cluster.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod common;

use common::{cluster, config, feasible, policy, shop_pod, TestServer};
use serde_json::{json, Value};

const NODES: [&str; 5] = ["n-a1", "n-a2", "n-b1", "n-b2", "n-x"];

// MatchInterPodAffinity lists upstream's ErrPodAffinityNotMatch before the specific reason.
const AFFINITY: &str = "node(s) didn't match pod affinity/anti-affinity, node(s) didn't match pod affinity rules";
const ANTI_AFFINITY: &str =
    "node(s) didn't match pod affinity/anti-affinity, node(s) didn't match pod anti-affinity rules";
const EXISTING_ANTI_AFFINITY: &str =
    "node(s) didn't match pod affinity/anti-affinity, node(s) didn't satisfy existing pods anti-affinity rules";
const SPREAD: &str = "node(s) didn't match pod topology spread constraints";
const SPREAD_LABEL: &str = "node(s) didn't match pod topology spread constraints (missing required label)";
const DISK: &str = "node(s) had no available disk";
const VOLUME_COUNT: &str = "node(s) exceed max volume count";
const VOLUME_ZONE: &str = "node(s) had no available volume zone";
const VOLUME_AFFINITY: &str = "node(s) had volume node affinity conflict";
const NO_PV: &str = "node(s) didn't find available persistent volumes to bind";
const UNBOUND_IMMEDIATE: &str = "pod has unbound immediate PersistentVolumeClaims";
const SERVICE_AFFINITY: &str = "node(s) didn't match service affinity";

fn fixture_cluster() -> predicate_extender::server::ClusterSource {
    let text = std::fs::read_to_string(common::fixture_path("clusters/relationships-and-volumes.yaml")).unwrap();
    cluster(&text)
}

fn claim(name: &str) -> Value {
    json!({"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": name}}]})
}

struct Case {
    name: &'static str,
    pod: Value,
    feasible: Vec<&'static str>,
    failed: Vec<(&'static str, &'static str)>,
    unresolvable: Vec<(&'static str, &'static str)>,
}

fn map(entries: &[(&str, &str)]) -> Value {
    Value::Object(entries.iter().map(|(k, v)| (k.to_string(), json!(v))).collect())
}

async fn check(server: &TestServer, case: &Case) {
    let (status, answer) = server.post("/filter", json!({"Pod": case.pod, "NodeNames": NODES}).to_string()).await;
    assert_eq!(status, 200, "{}: {answer}", case.name);
    assert_eq!(answer["Error"], "", "{}", case.name);
    assert_eq!(feasible(&answer), case.feasible, "{}: feasible nodes in {answer}", case.name);
    assert_eq!(answer["FailedNodes"], map(&case.failed), "{}: FailedNodes", case.name);
    assert_eq!(
        answer["FailedAndUnresolvableNodes"],
        map(&case.unresolvable),
        "{}: FailedAndUnresolvableNodes",
        case.name
    );
}

fn affinity_term(selector: Value, topology_key: &str, extra: Value) -> Value {
    let mut term = json!({"labelSelector": selector, "topologyKey": topology_key});
    if let (Some(t), Some(e)) = (term.as_object_mut(), extra.as_object()) {
        t.extend(e.clone());
    }
    term
}

#[tokio::test(flavor = "multi_thread")]
async fn each_predicate_through_filter() {
    let server = TestServer::start(config(fixture_cluster())).await;
    let zone = "topology.kubernetes.io/zone";
    let cases = vec![
        Case {
            name: "pod affinity to db is satisfied zone-wide, by a pod on another node of the zone",
            pod: shop_pod(
                "api-1",
                json!({"app": "api"}),
                json!({"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                affinity_term(json!({"matchLabels": {"app": "db"}}), zone, json!({}))]}}}),
            ),
            feasible: vec!["n-a1", "n-a2"],
            failed: vec![],
            unresolvable: vec![("n-b1", AFFINITY), ("n-b2", AFFINITY), ("n-x", AFFINITY)],
        },
        Case {
            name: "pod anti-affinity to db per host",
            pod: shop_pod(
                "api-2",
                json!({"app": "api"}),
                json!({"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                affinity_term(json!({"matchLabels": {"app": "db"}}), "kubernetes.io/hostname", json!({}))]}}}),
            ),
            feasible: vec!["n-a2", "n-b1", "n-b2", "n-x"],
            failed: vec![("n-a1", ANTI_AFFINITY)],
            unresolvable: vec![],
        },
        Case {
            name: "an existing pod's anti-affinity blocks its whole zone, not a node without the label",
            pod: shop_pod("frontend-1", json!({"app": "frontend"}), json!({})),
            feasible: vec!["n-a1", "n-a2", "n-x"],
            failed: vec![("n-b1", EXISTING_ANTI_AFFINITY), ("n-b2", EXISTING_ANTI_AFFINITY)],
            unresolvable: vec![],
        },
        Case {
            name: "namespaceSelector reaches pods of other namespaces",
            pod: shop_pod(
                "api-3",
                json!({"app": "api"}),
                json!({"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                affinity_term(json!({"matchLabels": {"app": "cache"}}), zone, json!({"namespaceSelector": {"matchLabels": {"team": "infra"}}}))]}}}),
            ),
            feasible: vec!["n-b1", "n-b2"],
            failed: vec![],
            unresolvable: vec![("n-a1", AFFINITY), ("n-a2", AFFINITY), ("n-x", AFFINITY)],
        },
        Case {
            name: "topology spread: two spread pods in zone-a, none in zone-b, maxSkew 1",
            pod: shop_pod(
                "spread-3",
                json!({"app": "spread"}),
                json!({"topologySpreadConstraints": [
                {"maxSkew": 1, "topologyKey": zone, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "spread"}}}]}),
            ),
            feasible: vec!["n-b1", "n-b2"],
            failed: vec![("n-a1", SPREAD), ("n-a2", SPREAD)],
            unresolvable: vec![("n-x", SPREAD_LABEL)],
        },
        Case {
            name: "NoDiskConflict: GCE PD disk-1 is in use on n-a2",
            pod: shop_pod(
                "disk-1-user",
                json!({}),
                json!({"volumes": [{"name": "d", "gcePersistentDisk": {"pdName": "disk-1"}}]}),
            ),
            feasible: vec!["n-a1", "n-b1", "n-b2", "n-x"],
            failed: vec![("n-a2", DISK)],
            unresolvable: vec![],
        },
        Case {
            name: "MaxCSIVolumeCount: n-a1's CSINode allows one pd.csi volume and has it",
            pod: shop_pod("csi-2", json!({}), claim("csi-new")),
            feasible: vec!["n-a2", "n-b1", "n-b2", "n-x"],
            failed: vec![("n-a1", VOLUME_COUNT)],
            unresolvable: vec![],
        },
        Case {
            name: "NoVolumeZoneConflict: a zone-b volume; a node without zone labels passes",
            pod: shop_pod("zone-b-user", json!({}), claim("data-b")),
            feasible: vec!["n-b1", "n-b2", "n-x"],
            failed: vec![],
            unresolvable: vec![("n-a1", VOLUME_ZONE), ("n-a2", VOLUME_ZONE)],
        },
        Case {
            name: "CheckVolumeBinding: a bound local volume pins the pod to its node",
            pod: shop_pod("local-user", json!({}), claim("local-bound")),
            feasible: vec!["n-a2"],
            failed: vec![],
            unresolvable: vec![
                ("n-a1", VOLUME_AFFINITY),
                ("n-b1", VOLUME_AFFINITY),
                ("n-b2", VOLUME_AFFINITY),
                ("n-x", VOLUME_AFFINITY),
            ],
        },
        Case {
            name: "CheckVolumeBinding: a WaitForFirstConsumer claim fits where an available volume matches",
            pod: shop_pod("local-wanter", json!({}), claim("local-wanted")),
            feasible: vec!["n-b2"],
            failed: vec![],
            unresolvable: vec![("n-a1", NO_PV), ("n-a2", NO_PV), ("n-b1", NO_PV), ("n-x", NO_PV)],
        },
        Case {
            // On n-a1 MaxCSIVolumeCount, earlier in the static order, already counts the claim by
            // its class's CSI provisioner against the CSINode's limit of one.
            name: "CheckVolumeBinding: an unbound Immediate claim fails everywhere",
            pod: shop_pod("immediate-user", json!({}), claim("unbound-immediate")),
            feasible: vec![],
            failed: vec![("n-a1", VOLUME_COUNT)],
            unresolvable: NODES[1..].iter().map(|n| (*n, UNBOUND_IMMEDIATE)).collect(),
        },
    ];
    for case in &cases {
        check(&server, case).await;
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn service_affinity_keeps_a_services_pods_on_one_zone() {
    let mut c = config(fixture_cluster());
    c.policy = policy(
        r#"{"kind":"Policy","apiVersion":"v1","predicates":[
            {"name":"ServiceZone","argument":{"serviceAffinity":{"labels":["topology.kubernetes.io/zone"]}}}]}"#,
    );
    let server = TestServer::start(c).await;
    check(
        &server,
        &Case {
            name: "web-0 runs in zone-a, so web pods go to zone-a",
            pod: shop_pod("web-1", json!({"app": "web"}), json!({})),
            feasible: vec!["n-a1", "n-a2"],
            failed: vec![("n-b1", SERVICE_AFFINITY), ("n-b2", SERVICE_AFFINITY), ("n-x", SERVICE_AFFINITY)],
            unresolvable: vec![],
        },
    )
    .await;
    check(
        &server,
        &Case {
            name: "a pod of no service fits everywhere",
            pod: shop_pod("loner", json!({"app": "loner"}), json!({})),
            feasible: NODES.to_vec(),
            failed: vec![],
            unresolvable: vec![],
        },
    )
    .await;
    server.stop().await;
}
