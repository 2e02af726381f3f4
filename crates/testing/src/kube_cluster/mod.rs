//! Real Kubernetes on 127.0.0.1 for the end-to-end tests and `cargo run --example dev-cluster`:
//! etcd, kube-apiserver (RBAC on, the project's own RBAC manifests applied), optionally
//! kube-controller-manager (the PV binder), the real extender binary in live mode under its
//! service account, and kube-scheduler with `config/scheduler-config.yaml` as shipped (addresses,
//! kubeconfig and leader-election timings adjusted, nothing else: see `scheduler_config`).
//!
//! Every process is killed when the [`Cluster`] is dropped, a failing test included; on a failure
//! the end of each log is printed and the directory kept.
#![allow(dead_code)] // each test binary uses a different part of this

pub mod binaries;
pub mod bindings;
pub mod explain;
pub mod helm;
pub mod node;
pub mod null_extender;
pub mod objects;
pub mod process;
pub mod prometheus;
pub mod scheduler_config;
pub mod throughput;
pub mod workloads;

use crate::pki;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::Client;
use serde_json::Value;

pub use binaries::{binaries_of, Binaries, NEWEST};
pub use process::{free_port, Process};
pub use prometheus::metric_sum;

/// Long enough for a loaded 2-core machine; every wait polls and returns as soon as it can.
pub const DEADLINE: Duration = Duration::from_secs(90);

/// The extender's and kube-scheduler's identity: the ServiceAccount of manifests/rbac.yaml, as
/// the API server authenticates it (a token from the token file, so the RBAC bindings to the
/// ServiceAccount apply exactly as they would to a pod's token).
pub const SERVICE_ACCOUNT_USER: &str = "system:serviceaccount:predicate-scheduler:predicate-scheduler";
const SERVICE_ACCOUNT_GROUPS: &str =
    "system:serviceaccounts,system:serviceaccounts:predicate-scheduler,system:authenticated";
const ADMIN_TOKEN: &str = "e2e-admin-token";
const SERVICE_ACCOUNT_TOKEN: &str = "e2e-predicate-scheduler-token";

/// The project's manifests applied to every cluster, in order.
pub const MANIFESTS: [&str; 3] = ["manifests/namespace.yaml", "manifests/rbac.yaml", "manifests/scheduler-rbac.yaml"];

/// What to start beside etcd and kube-apiserver.
#[derive(Debug, Clone)]
pub struct Options {
    /// The extender binary, in live mode.
    pub extender: bool,
    /// Extra `serve` flags for the extender (a `--policy`, say).
    pub extender_args: Vec<String>,
    /// kube-scheduler replicas with the shipped configuration (leader election as shipped).
    pub schedulers: usize,
    /// kube-controller-manager with the PV binder (VolumeBinding's PreBind waits for it).
    pub controller_manager: bool,
    /// The controllers kube-controller-manager runs (`--controllers`).
    pub controllers: Vec<&'static str>,
    /// kube-apiserver for pods on a real node (crates/testing/src/kube_cluster/node.rs): on this address, port
    /// 443, which is also the `kubernetes` Service's ClusterIP, with ServiceAccount admission and the
    /// Service's endpoints, as a cluster with kubelets has them. `None`: 127.0.0.1, no kubelet.
    pub apiserver_for_pods: Option<ApiServerForPods>,
    /// Extra kube-apiserver flags.
    pub apiserver_args: Vec<String>,
    /// A change to kube-scheduler's configuration after the harness's own adjustments (the
    /// throughput runs: no extender, or the profile's own plugins off, client QPS raised). The
    /// end-to-end tests leave it `None`: they run the shipped configuration.
    pub scheduler_config: Option<fn(Value) -> Value>,
    /// The extender kube-scheduler calls, when it is not this project's (`extender: false`).
    pub extender_url: Option<String>,
    /// Values set in kube-scheduler's configuration before `scheduler_config` runs, by dotted
    /// path (`extenders.0.nodeCacheCapable`, `percentageOfNodesToScore`).
    pub scheduler_settings: Vec<(String, Value)>,
    /// The in-process kube-scheduler instead of kube-scheduler and the extender: its binary
    /// (`binaries::in_process_scheduler`) runs the configuration with `extenders` replaced by the
    /// PredicateEngine plugin (`scheduler_config::in_process`), after `scheduler_config`'s change.
    /// `extender` must be false.
    pub in_process: Option<InProcess>,
}

/// The in-process kube-scheduler of a cluster (`Options::in_process`).
#[derive(Debug, Clone)]
pub struct InProcess {
    /// Its binary (e2e/build.sh inprocess).
    pub binary: PathBuf,
    /// The plugin's Policy file; `None`: the default plan.
    pub policy: Option<PathBuf>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            extender: true,
            extender_args: Vec::new(),
            schedulers: 1,
            controller_manager: false,
            controllers: vec!["persistentvolume-binder-controller"],
            apiserver_for_pods: None,
            apiserver_args: Vec::new(),
            scheduler_config: None,
            extender_url: None,
            scheduler_settings: Vec::new(),
            in_process: None,
        }
    }
}

/// Where kube-apiserver listens when pods of a real node call it (see `Options::apiserver_for_pods`).
#[derive(Debug, Clone)]
pub struct ApiServerForPods {
    /// The address it binds and advertises; the first address of `service_range`, so that the
    /// `kubernetes` Service's ClusterIP is the API server itself and no kube-proxy is needed.
    pub ip: String,
    /// `--service-cluster-ip-range`.
    pub service_range: String,
}

pub struct Cluster {
    pub dir: PathBuf,
    keep_dir: Option<tempfile::TempDir>,
    pub binaries: Binaries,
    pub etcd: Process,
    pub etcd_url: String,
    pub apiserver: Process,
    pub apiserver_url: String,
    pub admin_kubeconfig: PathBuf,
    pub service_account_kubeconfig: PathBuf,
    /// The admin's client (system:masters).
    pub client: Client,
    pub extender: Option<Process>,
    /// host:port of the extender's verbs and of its admin listener (fixed for the cluster's life, so
    /// that a restarted extender is where kube-scheduler's configuration says).
    pub extender_addr: String,
    pub extender_admin_addr: String,
    pub schedulers: Vec<Process>,
    /// Each replica's secure port (its /metrics and /debug/pprof, with the admin's token).
    pub scheduler_ports: Vec<u16>,
    pub scheduler_config: PathBuf,
    /// The kube-scheduler binary its replicas run: the version's, or the in-process one.
    pub scheduler_binary: PathBuf,
    pub controller_manager: Option<Process>,
    /// The audit log: who created each binding and deleted each pod.
    pub audit_log: PathBuf,
    http: reqwest::Client,
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

fn kubeconfig(server: &str, ca: &Path, token: &str, user: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: e2e\n  cluster:\n    server: {server}\n    certificate-authority: {ca}\n\
users:\n- name: {user}\n  user:\n    token: {token}\ncontexts:\n- name: e2e\n  context:\n    cluster: e2e\n    user: {user}\n\
current-context: e2e\n",
        ca = ca.display()
    )
}

/// A client from a kubeconfig file.
pub async fn client_from(path: &Path) -> Client {
    let kubeconfig = Kubeconfig::read_from(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Client::try_from(config).unwrap_or_else(|e| panic!("client for {}: {e}", path.display()))
}

/// The extender binary: the one cargo builds beside the running test, bench or example, in the
/// same target directory (cargo builds a package's binaries before its integration tests).
pub fn extender_binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("the running executable: {e}"));
    // target/<profile>/{deps,examples}/<test or example> -> target/<profile>/predicate-extender
    let profile = exe.parent().and_then(Path::parent).unwrap_or_else(|| panic!("{} has no target dir", exe.display()));
    profile.join("predicate-extender")
}

impl Cluster {
    /// Starts etcd and kube-apiserver, applies the project's manifests, then starts what `options`
    /// asks for and waits until each is ready. `None` when the end-to-end tests are skipped (no
    /// Go, and not required): the caller returns.
    pub async fn start(test: &str, options: Options) -> Option<Cluster> {
        Cluster::start_on(NEWEST, test, options).await
    }

    /// [`Cluster::start`] with a tested minor's binaries (`"1.35"`); its logs and directory name it.
    pub async fn start_on(minor: &str, test: &str, options: Options) -> Option<Cluster> {
        let binaries = binaries_of(minor, test)?;
        let test = format!("{test}-{}", binaries.version);
        Some(Cluster::start_with(binaries, &test, options).await)
    }

    /// [`Cluster::start`] with binaries already built.
    pub async fn start_with(binaries: Binaries, test: &str, options: Options) -> Cluster {
        let temp = tempfile::Builder::new()
            .prefix(&format!("e2e-{test}-"))
            .tempdir()
            .unwrap_or_else(|e| panic!("a temporary directory: {e}"));
        let dir = temp.path().to_path_buf();

        // Serving certificate, service-account signing key, tokens, audit policy.
        let ca = pki::Ca::new("e2e-ca");
        let pod_network = options.apiserver_for_pods.clone();
        let extra_sans: Vec<&str> = match &pod_network {
            Some(p) => vec![p.ip.as_str(), "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"],
            None => Vec::new(),
        };
        let serving = ca.server_for("kube-apiserver", &extra_sans);
        let ca_file = dir.join("ca.crt");
        write(&ca_file, &ca.pem);
        write(&dir.join("apiserver.crt"), &serving.cert_pem);
        write(&dir.join("apiserver.key"), &serving.key_pem);
        let sa_key = rcgen::KeyPair::generate().unwrap_or_else(|e| panic!("service-account key: {e}"));
        write(&dir.join("sa.key"), &sa_key.serialize_pem());
        write(&dir.join("sa.pub"), &sa_key.public_key_pem());
        write(
            &dir.join("tokens.csv"),
            &format!(
                "{ADMIN_TOKEN},e2e-admin,e2e-admin,\"system:masters\"\n\
                 {SERVICE_ACCOUNT_TOKEN},{SERVICE_ACCOUNT_USER},e2e-sa-uid,\"{SERVICE_ACCOUNT_GROUPS}\"\n"
            ),
        );
        write(
            &dir.join("audit-policy.yaml"),
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n\
             - level: Metadata\n  verbs: [create, delete]\n  resources:\n  - group: \"\"\n    resources: [pods, pods/binding]\n\
             - level: Metadata\n  verbs: [list]\n  resources:\n  - group: \"\"\n    resources: [nodes, pods]\n\
             - level: None\n",
        );

        let etcd_port = free_port();
        let etcd_url = format!("http://127.0.0.1:{etcd_port}");
        let peer_port = free_port();
        let etcd = Process::start(
            "etcd",
            &binaries.path("etcd"),
            [
                "--name=e2e".to_string(),
                format!("--data-dir={}", dir.join("etcd").display()),
                format!("--listen-client-urls={etcd_url}"),
                format!("--advertise-client-urls={etcd_url}"),
                format!("--listen-peer-urls=http://127.0.0.1:{peer_port}"),
                format!("--initial-advertise-peer-urls=http://127.0.0.1:{peer_port}"),
                format!("--initial-cluster=e2e=http://127.0.0.1:{peer_port}"),
                // A test's etcd lives for minutes: durability buys nothing and fsync costs.
                "--unsafe-no-fsync".to_string(),
                "--log-level=warn".to_string(),
            ]
            .to_vec(),
            dir.join("etcd.log"),
        );

        let (apiserver_ip, apiserver_port) = match &pod_network {
            Some(p) => (p.ip.clone(), 443),
            None => ("127.0.0.1".to_string(), free_port()),
        };
        let apiserver_url = format!("https://{apiserver_ip}:{apiserver_port}");
        let audit_log = dir.join("audit.log");
        let mut apiserver_args = vec![
            format!("--etcd-servers={etcd_url}"),
            format!("--bind-address={apiserver_ip}"),
            format!("--advertise-address={apiserver_ip}"),
            format!("--secure-port={apiserver_port}"),
            format!("--tls-cert-file={}", dir.join("apiserver.crt").display()),
            format!("--tls-private-key-file={}", dir.join("apiserver.key").display()),
            format!("--token-auth-file={}", dir.join("tokens.csv").display()),
            // Publishes kube-system/extension-apiserver-authentication, which kube-scheduler's
            // delegated authentication reads (no client certificate is used here).
            format!("--client-ca-file={}", ca_file.display()),
            "--authorization-mode=RBAC".to_string(),
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local".to_string(),
            format!("--service-account-key-file={}", dir.join("sa.pub").display()),
            format!("--service-account-signing-key-file={}", dir.join("sa.key").display()),
            format!(
                "--service-cluster-ip-range={}",
                pod_network.as_ref().map_or("10.96.0.0/16", |p| p.service_range.as_str())
            ),
            format!("--audit-policy-file={}", dir.join("audit-policy.yaml").display()),
            format!("--audit-log-path={}", audit_log.display()),
            "--audit-log-mode=blocking".to_string(),
            "--profiling=false".to_string(),
        ];
        if pod_network.is_some() {
            // Pods run: ServiceAccount admission gives them their projected token, and the
            // `kubernetes` Service's endpoints name the API server's own address. No node lifecycle
            // controller runs, so TaintNodesByCondition's not-ready taint would stay for good.
            apiserver_args.push("--disable-admission-plugins=TaintNodesByCondition".to_string());
        } else {
            apiserver_args.extend([
                // No kubelet and no node lifecycle controller here: TaintNodesByCondition would taint
                // every new node not-ready for good, and ServiceAccount admission wants tokens that no
                // controller makes.
                "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition".to_string(),
                // The `kubernetes` Service's endpoints would name 127.0.0.1, which the reconciler refuses.
                "--endpoint-reconciler-type=none".to_string(),
            ]);
        }
        apiserver_args.extend(options.apiserver_args.iter().cloned());
        let apiserver = Process::start(
            "kube-apiserver",
            &binaries.path("kube-apiserver"),
            apiserver_args,
            dir.join("kube-apiserver.log"),
        );

        let admin_kubeconfig = dir.join("admin.kubeconfig");
        write(&admin_kubeconfig, &kubeconfig(&apiserver_url, &ca_file, ADMIN_TOKEN, "e2e-admin"));
        let service_account_kubeconfig = dir.join("predicate-scheduler.kubeconfig");
        write(
            &service_account_kubeconfig,
            &kubeconfig(&apiserver_url, &ca_file, SERVICE_ACCOUNT_TOKEN, "predicate-scheduler"),
        );
        let client = client_from(&admin_kubeconfig).await;

        let extender_addr = format!("127.0.0.1:{}", free_port());
        let extender_admin_addr = format!("127.0.0.1:{}", free_port());
        let scheduler_config = dir.join("scheduler-config.json");
        assert!(
            !(options.extender && options.in_process.is_some()),
            "the in-process kube-scheduler runs without the extender (Options::extender false)"
        );
        let scheduler_binary = match &options.in_process {
            Some(in_process) => in_process.binary.clone(),
            None => binaries.path("kube-scheduler"),
        };
        let mut cluster = Cluster {
            dir,
            keep_dir: Some(temp),
            binaries,
            etcd,
            etcd_url,
            apiserver,
            apiserver_url,
            admin_kubeconfig,
            service_account_kubeconfig,
            client,
            extender: None,
            extender_addr,
            extender_admin_addr,
            schedulers: Vec::new(),
            scheduler_ports: Vec::new(),
            scheduler_config,
            scheduler_binary,
            controller_manager: None,
            audit_log,
            http: reqwest::Client::new(),
        };
        cluster.wait_apiserver_ready().await;
        for manifest in MANIFESTS {
            objects::apply_file(&cluster.client, &crate::workspace_root().as_path().join(manifest)).await;
        }
        if options.controller_manager {
            cluster.start_controller_manager(&options.controllers);
        }
        let shipped = scheduler_config::shipped();
        let adjusted = scheduler_config::adjusted(
            &shipped,
            &cluster.service_account_kubeconfig,
            &options.extender_url.clone().unwrap_or_else(|| format!("http://{}", cluster.extender_addr)),
        );
        let adjusted = options.scheduler_settings.iter().fold(adjusted, |c, (path, value)| set_path(c, path, value));
        let adjusted = match options.scheduler_config {
            Some(change) => change(adjusted),
            None => adjusted,
        };
        let adjusted = match &options.in_process {
            Some(in_process) => scheduler_config::in_process(adjusted, in_process.policy.as_deref()),
            None => adjusted,
        };
        write(&cluster.scheduler_config, &adjusted.to_string());
        // After kube-scheduler's configuration: the extender reads it (`--scheduler-config`).
        if options.extender {
            cluster.start_extender(&options.extender_args).await;
        }
        for _ in 0..options.schedulers {
            cluster.add_scheduler();
        }
        if options.schedulers > 0 {
            cluster.wait_scheduler_leader().await;
        }
        cluster
    }

    async fn wait_apiserver_ready(&mut self) {
        let start = Instant::now();
        loop {
            self.etcd.check_running();
            self.apiserver.check_running();
            let request = hyper::Request::get("/readyz").body(Vec::new()).unwrap_or_else(|e| panic!("{e}"));
            if let Ok(text) = self.client.request_text(request).await {
                if text.trim() == "ok" {
                    return;
                }
            }
            assert!(start.elapsed() < DEADLINE, "kube-apiserver not ready within {DEADLINE:?}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    fn start_controller_manager(&mut self, controllers: &[&str]) {
        let port = free_port();
        let kubeconfig = self.admin_kubeconfig.display().to_string();
        let args = vec![
            format!("--kubeconfig={kubeconfig}"),
            format!("--authentication-kubeconfig={kubeconfig}"),
            format!("--authorization-kubeconfig={kubeconfig}"),
            // Only what the tests need (by default the PV binder, which VolumeBinding's PreBind
            // waits for).
            format!("--controllers={}", controllers.join(",")),
            // What the root CA publisher puts in every namespace's kube-root-ca.crt (the CA a
            // pod's projected token volume carries).
            format!("--root-ca-file={}", self.dir.join("ca.crt").display()),
            "--leader-elect=false".to_string(),
            "--use-service-account-credentials=false".to_string(),
            // The PV binder writes the volume, the claim and their statuses per binding: at the
            // default 20 requests a second it, not the scheduler, sets the pace of the volumes
            // workload (about 3 pods a second). Raised as kube-scheduler's is for the runs.
            "--kube-api-qps=5000".to_string(),
            "--kube-api-burst=5000".to_string(),
            "--bind-address=127.0.0.1".to_string(),
            format!("--secure-port={port}"),
            format!("--cert-dir={}", self.dir.join("kcm-certs").display()),
        ];
        self.controller_manager = Some(Process::start(
            "kube-controller-manager",
            &self.binaries.path("kube-controller-manager"),
            args,
            self.dir.join("kube-controller-manager.log"),
        ));
    }

    /// The extender's `serve` arguments, on the cluster's fixed ports.
    fn extender_args(&self, extra: &[String]) -> Vec<String> {
        let mut args = vec![
            "serve".to_string(),
            format!("--kubeconfig={}", self.service_account_kubeconfig.display()),
            format!("--listen={}", self.extender_addr),
            format!("--admin-listen={}", self.extender_admin_addr),
            "--log-format=json".to_string(),
        ];
        args.extend(self.kube_scheduler_args());
        args.extend(extra.iter().cloned());
        args
    }

    /// What the extender is told of the kube-scheduler beside it: its version (how it counts a
    /// pod being resized) and its configuration (which of its filters run in front of the
    /// extender, for what explain says it reports).
    pub fn kube_scheduler_args(&self) -> Vec<String> {
        vec![
            format!("--kube-scheduler-version={}", self.binaries.version),
            format!("--scheduler-config={}", self.scheduler_config.display()),
        ]
    }

    /// Starts the extender binary and waits until `/readyz` says its model has synced.
    pub async fn start_extender(&mut self, extra: &[String]) {
        let args = self.extender_args(extra);
        let bin = extender_binary();
        let mut process = Process::start("predicate-extender", &bin, args, self.dir.join("predicate-extender.log"));
        process.check_running();
        self.extender = Some(process);
        self.wait_extender_ready().await;
    }

    pub async fn wait_extender_ready(&mut self) {
        let url = format!("http://{}/readyz", self.extender_admin_addr);
        let start = Instant::now();
        loop {
            if let Some(p) = self.extender.as_mut() {
                p.check_running();
            }
            if let Ok(resp) = self.http.get(&url).send().await {
                if resp.status().is_success() {
                    return;
                }
            }
            assert!(start.elapsed() < DEADLINE, "the extender was not ready within {DEADLINE:?}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Starts one more kube-scheduler replica with the adjusted shipped configuration.
    pub fn add_scheduler(&mut self) -> usize {
        let index = self.schedulers.len();
        let kubeconfig = self.service_account_kubeconfig.display().to_string();
        let port = free_port();
        self.scheduler_ports.push(port);
        let args = vec![
            format!("--config={}", self.scheduler_config.display()),
            format!("--authentication-kubeconfig={kubeconfig}"),
            format!("--authorization-kubeconfig={kubeconfig}"),
            "--bind-address=127.0.0.1".to_string(),
            format!("--secure-port={port}"),
            format!("--cert-dir={}", self.dir.join(format!("scheduler-{index}-certs")).display()),
            "--v=2".to_string(),
        ];
        self.schedulers.push(Process::start(
            &format!("kube-scheduler-{index}"),
            &self.scheduler_binary,
            args,
            self.dir.join(format!("kube-scheduler-{index}.log")),
        ));
        index
    }

    /// The holder of the shipped leader-election lease, once someone holds it.
    pub async fn wait_scheduler_leader(&mut self) -> String {
        let leases: kube::Api<k8s_openapi::api::coordination::v1::Lease> =
            kube::Api::namespaced(self.client.clone(), scheduler_config::LEASE_NAMESPACE);
        let start = Instant::now();
        loop {
            for s in &mut self.schedulers {
                if s.pid().is_some() {
                    s.check_running();
                }
            }
            if let Ok(Some(lease)) = leases.get_opt(scheduler_config::LEASE_NAME).await {
                if let Some(holder) = lease.spec.and_then(|s| s.holder_identity).filter(|h| !h.is_empty()) {
                    return holder;
                }
            }
            assert!(start.elapsed() < DEADLINE, "no kube-scheduler took the lease within {DEADLINE:?}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// A GET on kube-scheduler replica `index`'s secure port (its self-signed certificate is not
    /// checked) with the admin's token: `/metrics`, `/debug/pprof/profile?seconds=N`.
    pub async fn scheduler_get(&self, index: usize, path: &str) -> Vec<u8> {
        scheduler_get_at(self.scheduler_ports[index], path.to_string()).await
    }

    /// The extender's `/metrics` text.
    pub async fn extender_metrics(&self) -> String {
        let url = format!("http://{}/metrics", self.extender_admin_addr);
        let resp = self.http.get(&url).send().await.unwrap_or_else(|e| panic!("GET {url}: {e}"));
        resp.text().await.unwrap_or_else(|e| panic!("GET {url}: {e}"))
    }

    /// The sum of a metric's samples that carry every one of `labels` (each `key="value"`).
    pub async fn extender_metric(&self, name: &str, labels: &[&str]) -> f64 {
        metric_sum(&self.extender_metrics().await, name, labels)
    }

    /// POSTs a body to one of the extender's verbs and parses the JSON answer (`/explain` and
    /// `/whatif` are asked for JSON).
    pub async fn extender_post(&self, path: &str, body: &Value) -> (u16, Value) {
        let url = format!("http://{}{path}", self.extender_addr);
        let request = self.http.post(&url).header("Accept", "application/json").json(body);
        let resp = request.send().await.unwrap_or_else(|e| panic!("POST {url}: {e}"));
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap_or_else(|e| panic!("POST {url}: {e}"));
        (status, serde_json::from_str(&text).unwrap_or_else(|e| panic!("POST {url}: not JSON ({e}): {text}")))
    }

    /// The audit log's events (JSON lines) so far.
    pub fn audit_events(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.audit_log).unwrap_or_default();
        text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
    }

    /// Every process of the cluster, in start order (etcd first).
    pub fn processes(&self) -> Vec<&Process> {
        let mut all: Vec<&Process> = vec![&self.etcd, &self.apiserver];
        all.extend(self.controller_manager.iter());
        all.extend(self.extender.iter());
        all.extend(self.schedulers.iter());
        all
    }

    /// Every address each process of the cluster listens on, as `(process, ip:port)`.
    pub fn listeners(&self) -> Vec<(String, String)> {
        self.processes()
            .into_iter()
            .filter_map(|p| Some((p.name.clone(), p.pid()?)))
            .flat_map(|(name, pid)| process::listening(pid).into_iter().map(move |a| (name.clone(), a)))
            .collect()
    }

    /// Every process's log tail, for a failure message.
    pub fn logs(&self) -> String {
        let mut out = String::new();
        for p in self.processes() {
            let _ = writeln!(out, "----- {} ({}), last lines:\n{}", p.name, p.log.display(), p.tail(40));
        }
        out
    }

    /// Keeps the directory (logs, kubeconfigs, etcd data) after the cluster stops.
    pub fn keep(&mut self) -> PathBuf {
        if let Some(temp) = self.keep_dir.take() {
            let _ = temp.keep();
        }
        self.dir.clone()
    }
}

/// Set to `1`: every cluster's directory (logs, kubeconfigs, etcd data) is kept after its test,
/// not only a failed one's.
pub const KEEP_ENV: &str = "PREDICATE_EXTENDER_E2E_KEEP";

impl Drop for Cluster {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let dir = self.keep();
            eprintln!("end-to-end cluster kept in {}\n{}", dir.display(), self.logs());
        } else if std::env::var(KEEP_ENV).is_ok_and(|v| v == "1") {
            eprintln!("end-to-end cluster kept in {} ({KEEP_ENV}=1)", self.keep().display());
        }
        // Schedulers and the extender first, so they do not log the API server's going away.
        for s in &mut self.schedulers {
            s.kill();
        }
        if let Some(e) = &mut self.extender {
            e.kill();
        }
        if let Some(c) = &mut self.controller_manager {
            c.kill();
        }
        self.apiserver.kill();
        self.etcd.kill();
    }
}

/// [`Cluster::scheduler_get`] on the kube-scheduler listening on `port`.
pub async fn scheduler_get_at(port: u16, path: String) -> Vec<u8> {
    let mut config = kube::Config::new(format!("https://127.0.0.1:{port}").parse().unwrap_or_else(|e| panic!("{e}")));
    config.accept_invalid_certs = true;
    config.auth_info.token = Some(ADMIN_TOKEN.to_string().into());
    config.read_timeout = Some(Duration::from_secs(120));
    let client = Client::try_from(config).unwrap_or_else(|e| panic!("kube-scheduler client: {e}"));
    let request = hyper::Request::get(path.as_str()).body(Vec::new()).unwrap_or_else(|e| panic!("{e}"));
    let mut stream = client.request_stream(request).await.unwrap_or_else(|e| panic!("GET {path}: {e}"));
    let mut out = Vec::new();
    futures::AsyncReadExt::read_to_end(&mut stream, &mut out).await.unwrap_or_else(|e| panic!("GET {path}: {e}"));
    out
}

/// Whether an extender's `/metrics` text (its `cache_objects` series) counts as many nodes and
/// pods as the API server now has.
pub async fn model_counts_match(client: &Client, metrics: &str) -> bool {
    use k8s_openapi::api::core::v1::{Node, Pod};
    let params = kube::api::ListParams::default();
    let (Ok(nodes), Ok(pods)) = (
        kube::Api::<Node>::all(client.clone()).list(&params).await,
        kube::Api::<Pod>::all(client.clone()).list(&params).await,
    ) else {
        return false;
    };
    let count = |r: &str| metric_sum(metrics, "predicate_extender_cache_objects", &[&format!("resource=\"{r}\"")]);
    count("nodes") == nodes.items.len() as f64 && count("pods") == pods.items.len() as f64
}

/// `value` set at a dotted `path` of `config` (a number steps into an array); panics naming the
/// path when a step does not exist.
pub fn set_path(mut config: Value, path: &str, value: &Value) -> Value {
    let mut at = &mut config;
    let steps: Vec<&str> = path.split('.').collect();
    for (i, step) in steps.iter().enumerate() {
        let last = i + 1 == steps.len();
        at = match (at, step.parse::<usize>()) {
            (Value::Array(items), Ok(index)) => items.get_mut(index),
            (Value::Object(map), _) => {
                if last {
                    map.entry(step.to_string()).or_insert(Value::Null);
                }
                map.get_mut(*step)
            }
            _ => None,
        }
        .unwrap_or_else(|| panic!("kube-scheduler configuration: no {path:?} (at {step:?})"));
    }
    *at = value.clone();
    config
}

/// A JSON merge of `patch` into `base` (objects merged key by key, anything else replaced).
pub fn merged(mut base: Value, patch: Value) -> Value {
    merge(&mut base, patch);
    base
}

fn merge(base: &mut Value, patch: Value) {
    match (base, patch) {
        (Value::Object(b), Value::Object(p)) => {
            for (k, v) in p {
                merge(b.entry(k).or_insert(Value::Null), v);
            }
        }
        (b, p) => *b = p,
    }
}
