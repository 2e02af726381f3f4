//! What an operator deploys, run for real: the images built without Docker (image/build.sh),
//! imported into containerd, and `manifests/` applied with kubectl's kustomize (only the image
//! references overridden) to a cluster whose one real node is a kubelet built from the same
//! `k8s.io/kubernetes` module as the control plane (crates/testing/src/kube_cluster/node.rs). The cluster's own
//! kube-scheduler places the Deployment's pods; kube-controller-manager runs the deployment,
//! replicaset, service-account and root-CA controllers the Deployment and its projected token need.
//!
//! On that node: the sidecar starts before kube-scheduler, one replica holds the Lease, pods are
//! bound by the extender, the extender killed through the runtime comes back, an edited Policy
//! ConfigMap reaches the extender without a restart, the leader's deletion hands the Lease over,
//! and the metrics are scraped through the pod's admin port as the shipped PodMonitor says. Then
//! the Helm chart replaces the kustomize deployment and is put through failover and upgrades
//! under a stream of pods (chart_under_load.rs), after the same Deployment has been switched to
//! the in-process overlay and run there (in_process.rs).
//!
//! Needs root, Go and Debian's containerd, runc and CNI plugins (`e2e/node-packages.sh` installs
//! them; `.ci/run` runs it). Without them it says SKIPPED on the terminal and passes, except under
//! CI (`CI=true` or `PREDICATE_EXTENDER_E2E=require`), where that is a failure.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod chart_under_load;
mod in_process;

use predicate_extender_testing::kube_cluster;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Event, Pod};
use kube::api::{DeleteParams, ListParams, Patch, PatchParams};
use kube::Api;
use kube_cluster::binaries::binaries;
use kube_cluster::bindings::{assert_bound_once_each_by_the_extender, wait_bound};
use kube_cluster::node::{self, RealNode, NODE_NAME};
use kube_cluster::objects::{by_key, create, key, node as fake_node};
use kube_cluster::scheduler_config::{differences, LEASE_NAME, LEASE_NAMESPACE};
use kube_cluster::{metric_sum, Binaries, Cluster, Options, DEADLINE};
use predicate_extender_testing::eventually;
use serde_json::{json, Value};

const TEST: &str = "real-node";
/// The test's pods, scheduled by the shipped profile.
const NS: &str = "e2e-real-node";
/// Where manifests/ puts the Deployment.
const DEPLOYMENT_NS: &str = "predicate-scheduler";
const DEPLOYMENT: &str = "predicate-scheduler";
const EXTENDER: &str = "predicate-extender";
/// Where kube-scheduler calls the extender in the pod (config/scheduler-config.yaml's urlPrefix).
const EXTENDER_URL: &str = "127.0.0.1:8888";
/// The references kustomize rewrites (manifests/kustomization.yaml's and the Deployment's).
const EXTENDER_IMAGE_SHIPPED: &str = "registry.example.com/predicate-extender";
const SCHEDULER_IMAGE_SHIPPED: &str = "registry.k8s.io/kube-scheduler";
/// What they become here: images built by image/build.sh and imported into the node's containerd.
const EXTENDER_IMAGE: &str = "localhost/predicate-extender";
const EXTENDER_TAG: &str = "e2e";
const SCHEDULER_IMAGE: &str = "localhost/kube-scheduler";
const PAUSE_IMAGE: &str = "localhost/pause:e2e";
/// Nodes without a kubelet beside the real one, tainted so that only the test's pods (which
/// tolerate it) go there: the Deployment's pods stay on the real node.
const FAKE_TAINT: &str = "e2e.predicate-extender/no-kubelet";

fn skip_or_fail(why: &str) {
    if kube_cluster::binaries::required() {
        panic!("end-to-end test {TEST}: {why}");
    }
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED end-to-end test {TEST}: {why} (set {}=require or CI=true to make this a failure)",
        kube_cluster::binaries::REQUIRE_ENV
    );
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn build_image(kind: &str, binary: Option<&Path>, reference: &str, out: &Path) {
    let mut command = Command::new("bash");
    command.arg(repo().join("image/build.sh")).arg(kind);
    if let Some(binary) = binary {
        command.arg(binary);
    }
    let status = command.arg(reference).arg(out).stdout(std::process::Stdio::null()).status().unwrap();
    assert!(status.success(), "image/build.sh {kind} {reference}: {status}");
}

/// The three images: the extender's (CI's release image when PREDICATE_EXTENDER_IMAGE names it,
/// else one built from this test's binary), kube-scheduler's from the binary the tests built, and
/// the pod sandbox.
fn images(binaries: &Binaries, dir: &Path, version: &str) -> Vec<PathBuf> {
    let extender = match std::env::var_os("PREDICATE_EXTENDER_IMAGE") {
        Some(path) => PathBuf::from(path),
        None => {
            let out = dir.join("predicate-extender.oci.tar");
            let binary = Path::new(env!("CARGO_BIN_EXE_predicate-extender"));
            build_image("extender", Some(binary), &format!("{EXTENDER_IMAGE}:{EXTENDER_TAG}"), &out);
            out
        }
    };
    let scheduler = dir.join("kube-scheduler.oci.tar");
    build_image(
        "kube-scheduler",
        Some(&binaries.path("kube-scheduler")),
        &format!("{SCHEDULER_IMAGE}:{version}"),
        &scheduler,
    );
    let pause = dir.join("pause.oci.tar");
    build_image("pause", None, PAUSE_IMAGE, &pause);
    let mut archives = vec![pause, extender, scheduler];
    archives.extend(in_process::image(dir));
    archives
}

fn kubectl(binaries: &Binaries, cluster: &Cluster, args: &[&str]) -> String {
    let out = Command::new(binaries.path("kubectl"))
        .arg(format!("--kubeconfig={}", cluster.admin_kubeconfig.display()))
        // Its discovery cache in the cluster's directory, not the user's ~/.kube.
        .arg(format!("--cache-dir={}", cluster.dir.join("kubectl-cache").display()))
        .env("NO_PROXY", kube_cluster::process::NO_PROXY)
        .env("no_proxy", kube_cluster::process::NO_PROXY)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "kubectl {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// `kubectl kustomize DIR` as objects keyed by kind/namespace/name.
fn kustomize(binaries: &Binaries, dir: &Path) -> BTreeMap<String, Value> {
    let out = Command::new(binaries.path("kubectl")).arg("kustomize").arg(dir).output().unwrap();
    assert!(out.status.success(), "kubectl kustomize {}: {}", dir.display(), String::from_utf8_lossy(&out.stderr));
    by_key(&String::from_utf8_lossy(&out.stdout))
}

/// The paths at which `live` lacks or changes what `applied` says (what the API server added,
/// defaults and status, is not a difference).
fn lost_fields(path: &str, applied: &Value, live: &Value, out: &mut Vec<String>) {
    match (applied, live) {
        (Value::Object(a), Value::Object(l)) => {
            for (k, v) in a {
                match l.get(k) {
                    Some(lv) => lost_fields(&format!("{path}.{k}"), v, lv, out),
                    None => out.push(format!("{path}.{k}")),
                }
            }
        }
        (Value::Array(a), Value::Array(l)) if a.len() == l.len() => {
            for (i, (v, lv)) in a.iter().zip(l).enumerate() {
                lost_fields(&format!("{path}[{i}]"), v, lv, out);
            }
        }
        _ if applied == live => {}
        _ => out.push(format!("{path}: {applied} became {live}")),
    }
}

fn test_pod(name: &str, labels: Value, spec: Value) -> Value {
    let mut pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "labels": labels},
        "spec": {
            "schedulerName": "predicate-scheduler",
            "terminationGracePeriodSeconds": 0,
            "automountServiceAccountToken": false,
            "tolerations": [{"key": FAKE_TAINT, "operator": "Exists", "effect": "NoSchedule"}],
            "containers": [{
                "name": "c",
                "image": PAUSE_IMAGE,
                "imagePullPolicy": "Never",
                "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
            }],
        },
    });
    pod["spec"] = kube_cluster::merged(pod["spec"].take(), spec);
    pod
}

/// The pod holding the shipped Lease (kube-scheduler's identity is `<hostname>_<uuid>`, and a
/// pod's hostname is its name).
async fn leader(cluster: &Cluster) -> String {
    let leases: Api<Lease> = Api::namespaced(cluster.client.clone(), LEASE_NAMESPACE);
    eventually("a replica holds the Lease", DEADLINE, || async {
        let lease = leases.get_opt(LEASE_NAME).await.ok()??;
        let holder = lease.spec?.holder_identity.filter(|h| !h.is_empty())?;
        Some(holder.split('_').next()?.to_string())
    })
    .await
}

/// The shipped PodMonitor, read once.
fn pod_monitor() -> &'static Value {
    static MONITOR: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    MONITOR.get_or_init(|| {
        let path = repo().join("manifests/monitoring/pod-monitor.yaml");
        serde_saphyr::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
    })
}

/// The Deployment's live pods, selected as the shipped PodMonitor selects them.
async fn deployment_pods(cluster: &Cluster) -> Vec<Pod> {
    let api: Api<Pod> = Api::namespaced(cluster.client.clone(), DEPLOYMENT_NS);
    let selector: Vec<String> = pod_monitor()["spec"]["selector"]["matchLabels"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap()))
        .collect();
    let params = ListParams::default().labels(&selector.join(","));
    api.list(&params).await.unwrap().items.into_iter().filter(|p| p.metadata.deletion_timestamp.is_none()).collect()
}

/// The extender's /metrics in pod `name` of the kustomize deployment; see [`scrape_in`].
async fn scrape(cluster: &Cluster, name: &str) -> Option<String> {
    scrape_in(cluster, DEPLOYMENT_NS, name).await
}

/// The extender's /metrics in pod `namespace/name`, scraped as the shipped PodMonitor says: its
/// `podMetricsEndpoints[0]` port (by name, resolved in the live pod's containers) and path.
async fn scrape_in(cluster: &Cluster, namespace: &str, name: &str) -> Option<String> {
    let monitor = pod_monitor();
    let endpoint = &monitor["spec"]["podMetricsEndpoints"][0];
    let (port_name, path) = (endpoint["port"].as_str().unwrap(), endpoint["path"].as_str().unwrap());
    let api: Api<Pod> = Api::namespaced(cluster.client.clone(), namespace);
    let pod = api.get_opt(name).await.ok()??;
    let spec = pod.spec?;
    let port = spec
        .init_containers
        .unwrap_or_default()
        .into_iter()
        .chain(spec.containers)
        .flat_map(|c| c.ports.unwrap_or_default())
        .find(|p| p.name.as_deref() == Some(port_name))?
        .container_port;
    let ip = pod.status?.pod_ip?;
    let url = format!("http://{ip}:{port}{path}");
    let http = reqwest::Client::builder().no_proxy().build().ok()?;
    let resp = http.get(&url).timeout(Duration::from_secs(5)).send().await.ok()?;
    resp.status().is_success().then_some(())?;
    resp.text().await.ok()
}

async fn metric(cluster: &Cluster, pod: &str, name: &str, labels: &[&str]) -> Option<f64> {
    metric_in(cluster, DEPLOYMENT_NS, pod, name, labels).await
}

/// A metric of the extender in pod `namespace/pod`; `None` when it cannot be scraped or the
/// extender does not export it.
async fn metric_in(cluster: &Cluster, namespace: &str, pod: &str, name: &str, labels: &[&str]) -> Option<f64> {
    let text = scrape_in(cluster, namespace, pod).await?;
    let exported = text.lines().any(|l| l.starts_with(name) && l[name.len()..].starts_with([' ', '{']));
    exported.then(|| metric_sum(&text, name, labels))
}

/// A local wall-clock time as (month, day, nanoseconds into the day), to order lines of kubelet's
/// log (klog: `I1128 00:47:44.586072 ...`) and of containers' logs (containerd's CRI format:
/// `2026-11-28T00:47:44.586335100Z stdout F ...`, in the machine's time zone). Both are written by
/// this machine's clock in its zone; the year and the zone are left out.
type WallClock = (u32, u32, u64);

fn nanos_of_day(hms: &str, fraction: &str) -> Option<u64> {
    let mut t = hms.split(':').map(|p| p.parse::<u64>());
    let secs = t.next()?.ok()? * 3600 + t.next()?.ok()? * 60 + t.next()?.ok()?;
    let digits: String = fraction.chars().take_while(char::is_ascii_digit).collect();
    let nanos: u64 = format!("{digits:0<9}")[..9].parse().ok()?;
    Some(secs * 1_000_000_000 + nanos)
}

fn cri_log_time(line: &str) -> Option<WallClock> {
    let (date, time) = line.split(' ').next()?.split_once('T')?;
    let mut d = date.split('-').skip(1).map(|p| p.parse::<u32>());
    let (month, day) = (d.next()?.ok()?, d.next()?.ok()?);
    let (hms, fraction) = time.split_once('.').unwrap_or((time.get(..8)?, ""));
    Some((month, day, nanos_of_day(hms, fraction)?))
}

fn klog_time(line: &str) -> Option<WallClock> {
    let mut fields = line.split_whitespace();
    let date = fields.next()?.get(1..5)?;
    let (month, day) = (date.get(..2)?.parse().ok()?, date.get(2..)?.parse().ok()?);
    let (hms, fraction) = fields.next()?.split_once('.')?;
    Some((month, day, nanos_of_day(hms, fraction)?))
}

/// The lines of a container's first log file (kubelet's podLogsDir/<ns>_<pod>_<uid>/<container>/0.log).
fn container_log(node: &RealNode, pod: &Pod, container: &str) -> Vec<String> {
    let meta = &pod.metadata;
    let dir = node.dir.join("pod-logs").join(format!(
        "{}_{}_{}",
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default(),
        meta.uid.as_deref().unwrap_or_default()
    ));
    let text = std::fs::read_to_string(dir.join(container).join("0.log")).unwrap_or_default();
    text.lines().map(str::to_string).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shipped_manifests_run_on_a_real_kubelet() {
    if let Some(why) = node::unavailable().or_else(node::missing_packages) {
        return skip_or_fail(&why);
    }
    let Some(binaries) = binaries(TEST) else { return };
    let version = binaries.version.clone();
    let work = tempfile::tempdir().unwrap();
    let archives = images(&binaries, work.path(), &version);

    // Declared first, dropped last: the node is torn down after the control plane stops.
    let mut node = RealNode::prepare(TEST);
    let options = Options {
        extender: false,
        schedulers: 0,
        controller_manager: true,
        controllers: vec![
            "deployment-controller",
            "replicaset-controller",
            "serviceaccount-controller",
            "root-ca-certificate-publisher-controller",
        ],
        apiserver_for_pods: Some(node::apiserver_for_pods()),
        ..Options::default()
    };
    let cluster = Cluster::start_with(binaries.clone(), TEST, options).await;
    let _default_scheduler = node::default_scheduler(&cluster);
    let extender_ref = format!("{EXTENDER_IMAGE}:{EXTENDER_TAG}");
    let scheduler_ref = format!("{SCHEDULER_IMAGE}:{version}");
    let in_process_ref = format!("{}:{}", in_process::IN_PROCESS_IMAGE, in_process::IN_PROCESS_TAG);
    node.start(
        &cluster,
        &binaries,
        &archives,
        &[&extender_ref, &scheduler_ref, PAUSE_IMAGE, &in_process_ref],
        PAUSE_IMAGE,
    )
    .await;

    apply_manifests(&binaries, &cluster, &scheduler_ref);
    let leader = deployment_comes_up(&cluster, &node).await;
    extender_binds_pods(&cluster).await;
    killed_extender_comes_back(&cluster, &node, &leader).await;
    edited_policy_is_followed(&cluster, &leader).await;
    leader_deletion_hands_over(&cluster, &leader).await;
    node_has_no_pressure(&cluster).await;
    // The same Deployment switched to the engine inside kube-scheduler (in_process.rs).
    in_process::the_in_process_overlay_runs_on_a_real_kubelet(&binaries, &cluster, &node).await;
    node_has_no_pressure(&cluster).await;
    // The chart in its place, under a stream of pods (chart_under_load.rs).
    chart_under_load::the_chart_under_a_stream_of_pods(&binaries, &cluster, &node, &cluster.dir.join("overlay")).await;
    node_has_no_pressure(&cluster).await;

    let left = node.teardown();
    assert!(left.is_empty(), "the node's cleanup left: {left:?}");
}

/// The manifests, as an operator applies them: kustomize with only the images overridden.
fn apply_manifests(binaries: &Binaries, cluster: &Cluster, scheduler_ref: &str) {
    let overlay = cluster.dir.join("overlay");
    std::fs::create_dir_all(&overlay).unwrap();
    std::fs::write(
        overlay.join("kustomization.yaml"),
        format!(
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - {manifests}\n\
             images:\n  - name: {EXTENDER_IMAGE_SHIPPED}\n    newName: {EXTENDER_IMAGE}\n    newTag: {EXTENDER_TAG}\n\
             \x20 - name: {SCHEDULER_IMAGE_SHIPPED}\n    newName: {SCHEDULER_IMAGE}\n",
            manifests = relative_to(&overlay, &repo().join("manifests")).display()
        ),
    )
    .unwrap();
    let shipped = kustomize(binaries, &repo().join("manifests"));
    let rendered = kustomize(binaries, &overlay);
    assert_eq!(shipped.keys().collect::<Vec<_>>(), rendered.keys().collect::<Vec<_>>());
    let changed: Vec<String> = shipped
        .iter()
        .flat_map(|(k, object)| differences(object, &rendered[k]).into_iter().map(move |d| format!("{k}: {d}")))
        .collect();
    let deployment_key = format!("Deployment/{DEPLOYMENT_NS}/{DEPLOYMENT}");
    assert_eq!(
        changed,
        [
            format!("{deployment_key}: spec.template.spec.containers[0].image"),
            format!("{deployment_key}: spec.template.spec.initContainers[0].image"),
        ],
        "the overlay changes only the two image references"
    );
    // The shipped kube-scheduler tag is the version built and imported here (the overlay changes
    // its registry only).
    let shipped_scheduler =
        rendered[&deployment_key]["spec"]["template"]["spec"]["containers"][0]["image"].as_str().unwrap().to_string();
    assert_eq!(shipped_scheduler, scheduler_ref, "the Deployment's kube-scheduler is the version built here");
    kubectl(binaries, cluster, &["apply", "-k", overlay.to_str().unwrap()]);
    let rendered_file = cluster.dir.join("rendered.yaml");
    let docs: Vec<String> = rendered.values().map(|d| serde_json::to_string(d).unwrap()).collect();
    std::fs::write(&rendered_file, docs.join("\n---\n")).unwrap();
    let live: Value = serde_json::from_str(&kubectl(
        binaries,
        cluster,
        &["get", "-f", rendered_file.to_str().unwrap(), "-o", "json"],
    ))
    .unwrap();
    let live: BTreeMap<String, Value> = live["items"].as_array().unwrap().iter().map(|o| (key(o), o.clone())).collect();
    for (k, applied) in &rendered {
        let mut lost = Vec::new();
        lost_fields("", applied, live.get(k).unwrap_or_else(|| panic!("{k} was not created")), &mut lost);
        assert!(lost.is_empty(), "{k}: the API server does not hold what was applied: {lost:?}");
    }
}

/// The Deployment becomes Available, its pods on the real node, the sidecar first; returns the
/// pod whose kube-scheduler holds the Lease.
async fn deployment_comes_up(cluster: &Cluster, node: &RealNode) -> String {
    let deployments: Api<Deployment> = Api::namespaced(cluster.client.clone(), DEPLOYMENT_NS);
    eventually("the Deployment is Available with both replicas", DEADLINE * 3, || async {
        let status = deployments.get_opt(DEPLOYMENT).await.ok()??.status?;
        let available = status
            .conditions?
            .iter()
            .any(|c| c.type_.as_deref() == Some("Available") && c.status.as_deref() == Some("True"));
        (available && status.available_replicas == Some(2)).then_some(())
    })
    .await;
    let pods = deployment_pods(cluster).await;
    assert_eq!(pods.len(), 2);
    for pod in &pods {
        let name = pod.metadata.name.clone().unwrap();
        assert_eq!(pod.spec.as_ref().unwrap().node_name.as_deref(), Some(NODE_NAME), "{name}");
        let extender_log = container_log(node, pod, EXTENDER);
        let scheduler_log = container_log(node, pod, "kube-scheduler");
        // kubelet started kube-scheduler only once the extender's startup probe passed: the
        // pod's first successful startup probe (kubelet's log; kube-scheduler's own probe can only
        // pass after kube-scheduler runs, so the first one is the extender's) comes before
        // kube-scheduler's first log line. Without the sidecar's probe, kube-scheduler would start
        // as soon as the extender's container did, and its own probe would pass after it logged.
        let probe_passed = node
            .kubelet_log()
            .lines()
            .filter(|l| l.contains("\"SyncLoop (probe)\" probe=\"startup\" status=\"started\""))
            .find(|l| l.contains(&format!("pod=\"{DEPLOYMENT_NS}/{name}\"")))
            .and_then(klog_time)
            .unwrap_or_else(|| panic!("{name}: kubelet logged no passed startup probe"));
        let scheduler_started = scheduler_log
            .first()
            .and_then(|l| cri_log_time(l))
            .unwrap_or_else(|| panic!("{name}: kube-scheduler's log: {scheduler_log:?}"));
        assert!(
            probe_passed < scheduler_started,
            "{name}: kube-scheduler logged ({scheduler_started:?}) before the startup probe passed ({probe_passed:?})"
        );
        // And the extender had listed every resource it watches (what its /readyz waits for).
        let listed: BTreeSet<String> =
            extender_log.iter().filter(|l| l.contains("\"listed\"")).filter_map(|l| resource_of(l)).collect();
        assert!(!listed.is_empty(), "{name}: the extender logged no list:\n{}", extender_log.join("\n"));
        let mut seen = BTreeSet::new();
        let synced = extender_log
            .iter()
            .find(|l| {
                if let Some(r) = resource_of(l).filter(|_| l.contains("\"listed\"")) {
                    seen.insert(r);
                }
                seen == listed
            })
            .and_then(|l| cri_log_time(l))
            .unwrap_or_else(|| panic!("{name}: the extender's log: {extender_log:?}"));
        assert!(synced < scheduler_started, "{name}: kube-scheduler logged before the extender's cache had synced");
        // The extender runs as the image's user, on a read-only root filesystem.
        let ids = node.container_ids(&name, EXTENDER);
        assert_eq!(ids.len(), 1, "{name}: {ids:?}");
        let spec: Value = serde_json::from_str(&node.ctr(&["containers", "info", &ids[0]]).unwrap()).unwrap();
        let oci = &spec["Spec"];
        assert_eq!(oci["process"]["user"]["uid"], 65532, "{name}: {}", oci["process"]["user"]);
        assert_eq!(oci["root"]["readonly"], true, "{name}: {}", oci["root"]);
        // And so it runs: the process's user, and its root mount read-only, as the kernel has them.
        let pid = node.task_pid(&ids[0]).unwrap_or_else(|| panic!("{name}: no task for {}", ids[0]));
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let uids = status.lines().find(|l| l.starts_with("Uid:")).unwrap();
        assert_eq!(uids.split_whitespace().skip(1).collect::<Vec<_>>(), ["65532"; 4], "{name}: {uids}");
        let mounts = std::fs::read_to_string(format!("/proc/{pid}/mountinfo")).unwrap();
        let root = mounts.lines().find(|l| l.split(' ').nth(4) == Some("/")).unwrap();
        assert!(root.split(' ').nth(5).is_some_and(|o| o.split(',').any(|f| f == "ro")), "{name}: {root}");
    }
    let first_leader = leader(cluster).await;
    assert!(pods.iter().any(|p| p.metadata.name.as_deref() == Some(first_leader.as_str())), "{first_leader}");

    // kubelet and containerd listen on loopback only (kubelet's server and healthz among them).
    let mut listening = BTreeSet::new();
    for process in node.containerd.iter().chain(node.kubelet.iter()) {
        for address in kube_cluster::process::listening(process.pid().unwrap()) {
            assert!(address.starts_with("127.0.0.1:"), "{}: {address}", process.name);
            listening.insert(address);
        }
    }
    for port in &node.kubelet_ports {
        assert!(listening.contains(&format!("127.0.0.1:{port}")), "kubelet's port {port}: {listening:?}");
    }
    first_leader
}

/// Pods for the predicate-scheduler profile: bound by the extender, once each.
async fn extender_binds_pods(cluster: &Cluster) {
    let c = &cluster.client;
    create(c, json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})).await;
    eventually("the namespace's default ServiceAccount", DEADLINE, || async {
        let sa: Api<k8s_openapi::api::core::v1::ServiceAccount> = Api::namespaced(c.clone(), NS);
        sa.get_opt("default").await.ok()?
    })
    .await;
    let taint = json!([{"key": FAKE_TAINT, "value": "true", "effect": "NoSchedule"}]);
    for (name, labels) in [("pe-fake-ssd", json!({"disk": "ssd"})), ("pe-fake-plain", json!({}))] {
        let mut n = fake_node(name, "zone-a", "8", "32Gi");
        n["metadata"]["labels"] = kube_cluster::merged(n["metadata"]["labels"].take(), labels);
        n["spec"]["taints"] = taint.clone();
        create(c, n).await;
    }
    for i in 0..4 {
        create(c, test_pod(&format!("first-{i}"), json!({}), json!({}))).await;
    }
    for i in 0..4 {
        wait_bound(cluster, NS, &format!("first-{i}")).await;
    }
    assert_bound_once_each_by_the_extender(cluster, NS, 4).await;
    // A pod bound to the real node runs there.
    let on_real =
        create(c, test_pod("on-real-node", json!({}), json!({"nodeSelector": {"kubernetes.io/hostname": NODE_NAME}})))
            .await;
    assert_eq!(on_real["metadata"]["name"], "on-real-node");
    assert_eq!(wait_bound(cluster, NS, "on-real-node").await, NODE_NAME);
    let test_pods: Api<Pod> = Api::namespaced(c.clone(), NS);
    eventually("the pod bound to the real node runs", DEADLINE, || async {
        (test_pods.get_opt("on-real-node").await.ok()??.status?.phase? == "Running").then_some(())
    })
    .await;
}

/// The leader's extender killed through the runtime (as an OOM kill would): kubelet
/// restarts the sidecar, the pods created meanwhile are bound once each afterwards.
async fn killed_extender_comes_back(cluster: &Cluster, node: &RealNode, first_leader: &str) {
    let c = &cluster.client;
    let ids = node.container_ids(first_leader, EXTENDER);
    assert_eq!(ids.len(), 1, "{ids:?}");
    node.ctr(&["tasks", "kill", "--signal", "SIGKILL", &ids[0]]).unwrap();
    for i in 0..3 {
        create(c, test_pod(&format!("while-down-{i}"), json!({}), json!({}))).await;
    }
    // kube-scheduler found the extender gone (not ignorable): the pods wait, with an event.
    let events: Api<Event> = Api::namespaced(c.clone(), NS);
    let event = eventually("a FailedScheduling event naming the unreachable extender", DEADLINE, || async {
        let list = events.list(&ListParams::default()).await.ok()?;
        list.items
            .into_iter()
            .filter(|e| e.reason.as_deref() == Some("FailedScheduling"))
            .filter(|e| e.involved_object.name.as_deref().is_some_and(|n| n.starts_with("while-down-")))
            .find_map(|e| e.message.filter(|m| extender_unavailable(m)))
    })
    .await;
    assert!(extender_unavailable(&event), "{event}");
    let pod_api: Api<Pod> = Api::namespaced(c.clone(), DEPLOYMENT_NS);
    eventually("kubelet restarted the killed sidecar and it is ready", DEADLINE * 2, || async {
        let pod = pod_api.get_opt(first_leader).await.ok()??;
        let status = pod.status?.init_container_statuses?.into_iter().find(|s| s.name == EXTENDER)?;
        (status.restart_count >= 1 && status.ready).then_some(())
    })
    .await;
    for i in 0..3 {
        wait_bound(cluster, NS, &format!("while-down-{i}")).await;
    }
    assert_bound_once_each_by_the_extender(cluster, NS, 8).await;
    // Its model equals the API server's (the cache_objects series, scraped through the pod).
    eventually("the restarted extender's model counts what the API server has", DEADLINE, || async {
        let text = scrape(cluster, first_leader).await?;
        kube_cluster::model_counts_match(c, &text).await.then_some(())
    })
    .await;
    eventually("the restarted extender counted the binds of the pods that waited", DEADLINE, || async {
        let binds = metric(cluster, first_leader, "predicate_extender_bind_total", &["outcome=\"success\""]).await?;
        (binds >= 3.0).then_some(())
    })
    .await;
}

/// The Policy ConfigMap edited: kubelet swaps the mounted files, the extender reloads them
/// without a restart, and the next pods follow the new Policy.
async fn edited_policy_is_followed(cluster: &Cluster, first_leader: &str) {
    let c = &cluster.client;
    let events: Api<Event> = Api::namespaced(c.clone(), NS);
    // Under the shipped Policy every node is feasible: three pods that must not share a node land
    // on three different ones.
    for i in 0..3 {
        let anti = json!({"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"group": "before"}}, "topologyKey": "kubernetes.io/hostname"}]}}});
        create(c, test_pod(&format!("before-{i}"), json!({"group": "before"}), anti)).await;
    }
    let mut spread = BTreeSet::new();
    for i in 0..3 {
        spread.insert(wait_bound(cluster, NS, &format!("before-{i}")).await);
    }
    assert_eq!(spread.len(), 3, "{spread:?}");
    let reloads_metric = "predicate_extender_policy_reload_total";
    let success = ["result=\"success\""];
    let mut reloads_before = BTreeMap::new();
    for pod in deployment_pods(cluster).await {
        let name = pod.metadata.name.unwrap();
        let count = eventually(&format!("{name}'s reload count"), DEADLINE, || {
            metric(cluster, &name, reloads_metric, &success)
        })
        .await;
        reloads_before.insert(name, count);
    }
    let restarts_before = extender_restarts(cluster, first_leader).await;
    let config_maps: Api<ConfigMap> = Api::namespaced(c.clone(), DEPLOYMENT_NS);
    let current = config_maps.get("predicate-extender-policy").await.unwrap();
    let mut policy: Value = serde_json::from_str(&current.data.unwrap()["policy.json"]).unwrap();
    policy["predicates"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "NeedsSSD", "argument": {"labelsPresence": {"labels": ["disk"], "presence": true}}}));
    let patch = json!({"data": {"policy.json": serde_json::to_string_pretty(&policy).unwrap()}});
    config_maps.patch("predicate-extender-policy", &PatchParams::default(), &Patch::Merge(&patch)).await.unwrap();
    // Each pod's kubelet sync swaps its own mounted files: every replica reloads, the standby
    // included (it may lead next).
    for (name, before) in &reloads_before {
        eventually(&format!("the edited Policy reached {name}'s extender"), DEADLINE * 2, || async {
            let now = metric(cluster, name, reloads_metric, &success).await?;
            (now > *before).then_some(())
        })
        .await;
    }
    assert_eq!(extender_restarts(cluster, first_leader).await, restarts_before, "reloaded without a restart");
    for i in 0..4 {
        create(c, test_pod(&format!("after-edit-{i}"), json!({}), json!({}))).await;
    }
    // One that may only go to the unlabelled node now fits nowhere, with the new predicate's reason.
    let pinned = json!({"nodeSelector": {"kubernetes.io/hostname": "pe-fake-plain"}});
    create(c, test_pod("after-edit-plain", json!({}), pinned)).await;
    let reason = eventually("after-edit-plain's FailedScheduling event", DEADLINE, || async {
        let list = events.list(&ListParams::default().fields("involvedObject.name=after-edit-plain")).await.ok()?;
        list.items.into_iter().filter(|e| e.reason.as_deref() == Some("FailedScheduling")).find_map(|e| e.message)
    })
    .await;
    assert!(reason.contains("didn't have the requested labels"), "{reason}");
    for i in 0..4 {
        assert_eq!(
            wait_bound(cluster, NS, &format!("after-edit-{i}")).await,
            "pe-fake-ssd",
            "the edited Policy's NeedsSSD"
        );
    }
}

/// The leading pod deleted (as a drain or a rollout would): kube-scheduler releases the
/// Lease on SIGTERM, another replica takes it (the standby, or the Deployment's replacement pod
/// if it tries first) and schedules the next pods.
async fn leader_deletion_hands_over(cluster: &Cluster, first_leader: &str) {
    let c = &cluster.client;
    let pod_api: Api<Pod> = Api::namespaced(c.clone(), DEPLOYMENT_NS);
    let deployments: Api<Deployment> = Api::namespaced(c.clone(), DEPLOYMENT_NS);
    pod_api.delete(first_leader, &DeleteParams::default()).await.unwrap();
    let second_leader = eventually("another replica takes the Lease", DEADLINE, || async {
        let now = leader(cluster).await;
        (now != first_leader).then_some(now)
    })
    .await;
    let live: Vec<String> = deployment_pods(cluster).await.into_iter().filter_map(|p| p.metadata.name).collect();
    assert!(live.contains(&second_leader), "the new leader {second_leader} is one of the Deployment's pods {live:?}");
    let binds_before = eventually("the new leader's extender answers through its admin port", DEADLINE, || async {
        metric(cluster, &second_leader, "predicate_extender_bind_total", &["outcome=\"success\""]).await
    })
    .await;
    for i in 0..3 {
        create(c, test_pod(&format!("after-handover-{i}"), json!({}), json!({}))).await;
    }
    for i in 0..3 {
        // The edited Policy holds in every replica: the ConfigMap is mounted in both.
        assert_eq!(wait_bound(cluster, NS, &format!("after-handover-{i}")).await, "pe-fake-ssd");
    }
    // The counter moves once the binding's response is in: awaited, then exactly three.
    eventually("the new leader's extender counted its three binds", DEADLINE, || async {
        let after = metric(cluster, &second_leader, "predicate_extender_bind_total", &["outcome=\"success\""]).await?;
        (after - binds_before >= 3.0).then_some(())
    })
    .await;
    let after = metric(cluster, &second_leader, "predicate_extender_bind_total", &["outcome=\"success\""]).await;
    assert_eq!(after.map(|a| a - binds_before), Some(3.0), "the new leader's extender bound the three pods");
    assert_bound_once_each_by_the_extender(cluster, NS, 8 + 3 + 4 + 3).await;
    // The Deployment replaces the deleted pod.
    eventually("the Deployment is back to two available replicas", DEADLINE * 2, || async {
        (deployments.get_opt(DEPLOYMENT).await.ok()??.status?.available_replicas == Some(2)).then_some(())
    })
    .await;
}

/// The node's own conditions after all that: Ready, and no pressure kubelet's eviction manager
/// would act on (it reads this machine's root filesystem and memory).
async fn node_has_no_pressure(cluster: &Cluster) {
    let nodes: Api<k8s_openapi::api::core::v1::Node> = Api::all(cluster.client.clone());
    let conditions: BTreeMap<String, String> = nodes
        .get(NODE_NAME)
        .await
        .unwrap()
        .status
        .and_then(|s| s.conditions)
        .unwrap_or_default()
        .into_iter()
        .map(|c| (c.type_, c.status))
        .collect();
    let want: BTreeMap<String, String> =
        [("DiskPressure", "False"), ("MemoryPressure", "False"), ("PIDPressure", "False"), ("Ready", "True")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
    assert_eq!(conditions, want, "the real node's conditions");
}

/// `to` as a path relative to `from` (kustomize takes no absolute path to a base).
fn relative_to(from: &Path, to: &Path) -> PathBuf {
    let up = from.components().skip(1).map(|_| "..").collect::<PathBuf>();
    up.join(to.strip_prefix("/").unwrap())
}

/// A FailedScheduling message saying the extender could not answer: its address refused (the
/// container gone), or its answer that its cache has not synced yet (restarted, still listing).
fn extender_unavailable(message: &str) -> bool {
    let refused = message.contains(EXTENDER_URL) && (message.contains("refused") || message.contains("connect"));
    refused || message.contains("cluster cache has not synced")
}

/// The resource a `listed` log line names (the extender's JSON log inside a CRI log line).
fn resource_of(line: &str) -> Option<String> {
    let json = line.splitn(4, ' ').nth(3)?;
    let value: Value = serde_json::from_str(json).ok()?;
    value["fields"]["resource"].as_str().map(str::to_string)
}

async fn extender_restarts(cluster: &Cluster, pod: &str) -> i32 {
    let api: Api<Pod> = Api::namespaced(cluster.client.clone(), DEPLOYMENT_NS);
    let pod = api.get(pod).await.unwrap();
    let statuses = pod.status.and_then(|s| s.init_container_statuses).unwrap_or_default();
    statuses.into_iter().find(|s| s.name == EXTENDER).map_or(0, |s| s.restart_count)
}
