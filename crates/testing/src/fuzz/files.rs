//! The files an operator gives: the Policy (startup and every reload read it with
//! [`predicate_engine::policy::parse`]) and the cluster snapshot (`--cluster-snapshot`, `explain`: [`parse_objects`]).
//! What loads is then put to work: the verbs are answered under the plan, or on the model.

use std::sync::LazyLock;

use crate::fuzz::{ensure, shown, verbs, Harness, Violation};
use predicate_engine::cluster::source::demo::demo_objects;
use predicate_engine::cluster::source::{parse_objects, SourceError};
use predicate_engine::cluster::Snapshot;
use predicate_engine::policy::Plan;

/// The demo cluster, loaded once.
static DEMO: LazyLock<Result<Snapshot, String>> =
    LazyLock::new(|| demo_objects().map(|o| o.into_snapshot()).map_err(|e| e.to_string()));

/// The demo cluster's pending pod, with a host port and requests.
const WEB2: &str = r#"{"metadata":{"name":"web-2","namespace":"default","uid":"0b7f2a10-1111-4c3e-8a55-00000000a102","labels":{"app":"web"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-7d4b9c","uid":"5b0e3f9a-7777-4c3e-8a55-0000000000aa","controller":true}]},"spec":{"priority":0,"containers":[{"name":"web","image":"nginx:1.27","ports":[{"containerPort":80,"hostPort":80,"protocol":"TCP"}],"resources":{"requests":{"cpu":"1","memory":"1Gi"}}}]}}"#;

/// A pod that gives every predicate and priority something to do: node and pod (anti-)affinity,
/// a spread constraint, tolerations, volumes, a host port, requests and limits.
const BUSY: &str = r#"{"metadata":{"name":"busy","namespace":"default","uid":"u-busy","labels":{"app":"web","tier":"front"}},"spec":{"priority":10,"nodeSelector":{"kubernetes.io/os":"linux"},"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"topology.kubernetes.io/zone","operator":"In","values":["zone-a","zone-b"]}]}]},"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":5,"preference":{"matchExpressions":[{"key":"disktype","operator":"In","values":["ssd"]}]}}]},"podAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":10,"podAffinityTerm":{"labelSelector":{"matchLabels":{"app":"db"}},"topologyKey":"topology.kubernetes.io/zone"}}]},"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":{"matchExpressions":[{"key":"app","operator":"In","values":["web"]}]},"topologyKey":"kubernetes.io/hostname"}]}},"topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"topology.kubernetes.io/zone","whenUnsatisfiable":"ScheduleAnyway","labelSelector":{"matchLabels":{"app":"web"}}}],"tolerations":[{"key":"dedicated","operator":"Equal","value":"gpu","effect":"NoSchedule"}],"volumes":[{"name":"r","persistentVolumeClaim":{"claimName":"reports"}},{"name":"d","gcePersistentDisk":{"pdName":"disk-web"}}],"containers":[{"name":"web","image":"nginx:1.27","ports":[{"containerPort":8080,"hostPort":8080}],"resources":{"requests":{"cpu":"500m","memory":"512Mi"},"limits":{"cpu":"2","memory":"1Gi"}}}]}}"#;

/// A Policy file: an error names the file and says what is wrong; a plan that loads answers
/// /filter, /prioritize and /preempt on the demo cluster well-formed.
pub fn policy(file: &str, input: &[u8]) -> Result<(), Violation> {
    let plan = match predicate_engine::policy::parse(file, input, predicate_engine::policy::Overrides::default()) {
        Ok(plan) => plan,
        Err(e) => {
            let prefix = format!("{file}: ");
            return ensure(
                e.file() == file && e.to_string().strip_prefix(&prefix).is_some_and(|m| !m.trim().is_empty()),
                || format!("Policy {}: the error {e:?} does not name the file or says nothing", shown(input)),
            );
        }
    };
    let snapshot = DEMO.clone()?;
    let names = snapshot.node_names().iter().map(|n| json_string(n)).collect::<Vec<_>>().join(",");
    let h = Harness::on(snapshot, plan)?;
    put_to_work(&h, &names).map_err(|v| format!("under the Policy {}: {v}", shown(input)))
}

/// A cluster file: an error names the file (and the object, when one is at fault); a model that
/// loads answers /filter, /prioritize and /preempt over its nodes well-formed, every predicate run
/// on every node.
pub fn snapshot(input: &[u8]) -> Result<(), Violation> {
    // The file is read as text (`read_to_string`): bytes that are not UTF-8 never reach the parser.
    let Ok(text) = std::str::from_utf8(input) else {
        return Ok(());
    };
    const FILE: &str = "cluster.yaml";
    let objects = match parse_objects(FILE, text) {
        Ok(objects) => objects,
        Err(e) => {
            let named = match &e {
                SourceError::Io { file, .. } | SourceError::Syntax { file, .. } => file == FILE,
                SourceError::Object { file, location, .. } => file == FILE && !location.is_empty(),
            };
            let said = e.to_string();
            return ensure(named && said.starts_with("cluster.yaml: ") && said.len() > FILE.len() + 2, || {
                format!("cluster file {}: the error {e:?} does not name the file and the object", shown(input))
            });
        }
    };
    let snapshot = objects.into_snapshot();
    // A handful of nodes is enough to reach every code path; a big file is not a slower check.
    let names = snapshot.node_names().iter().take(32).map(|n| json_string(n)).collect::<Vec<_>>().join(",");
    let plan = Plan { always_check_all: true, ..Plan::default_plan() };
    let h = Harness::on(snapshot, plan)?;
    put_to_work(&h, &names).map_err(|v| format!("on the cluster file {}: {v}", shown(input)))
}

/// /filter and /prioritize for two pods over `names` (JSON strings, comma-separated), and /preempt
/// with every pod on those nodes named as a victim.
fn put_to_work(h: &Harness, names: &str) -> Result<(), Violation> {
    for pod in [WEB2, BUSY] {
        let body = format!(r#"{{"Pod":{pod},"NodeNames":[{names}]}}"#);
        verbs::filter(h, body.as_bytes())?;
        verbs::prioritize(h, body.as_bytes())?;
    }
    let victims: Vec<String> = h
        .snapshot
        .node_names()
        .iter()
        .take(32)
        .filter_map(|n| h.snapshot.node_info(n))
        .map(|info| {
            let uids: Vec<String> =
                info.pods.pods().iter().map(|p| format!(r#"{{"UID":{}}}"#, json_string(&p.pod.metadata.uid))).collect();
            format!(r#"{}:{{"Pods":[{}],"NumPDBViolations":1}}"#, json_string(info.name()), uids.join(","))
        })
        .collect();
    let body = format!(r#"{{"Pod":{BUSY},"NodeNameToMetaVictims":{{{}}}}}"#, victims.join(","));
    verbs::preempt(h, body.as_bytes())
}

/// `s` as a JSON string.
fn json_string(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}
