//! A real node on this machine for the end-to-end tests: containerd and runc (Debian's packages),
//! kubelet built from the same `k8s.io/kubernetes` module as the control plane, and pod networking
//! from Debian's CNI plugins (a bridge with host-local addresses).
//!
//! Addresses come from 198.18.0.0/15, a block no network here uses: pods get 198.18.0.0/24 on the
//! bridge `pe-br0` (gateway 198.18.0.1), and kube-apiserver listens on 198.18.1.1:443, an address
//! on a veth pair the test creates, which is also the first address of the Service range and so the
//! `kubernetes` Service's ClusterIP. A pod's in-cluster client therefore reaches the API server at
//! the Service's address without kube-proxy and without a single iptables rule. Pods get a route to
//! 198.18.0.0/15 only (no default route) and no resolv.conf, the bridge has no uplink and no
//! masquerading: nothing routes off the machine. Every listener is on loopback or on those
//! test-made interfaces.
//!
//! One real node at a time on a machine: a lock file serialises runs. Everything it starts is
//! removed by [`RealNode::teardown`] (and by `Drop` when a test fails): kubelet, containerd, every
//! shim and container process (killed through the node's cgroups), every mount under the node's
//! directory, the pods' network namespaces, the bridge and the veth pair, the node's cgroups in
//! every hierarchy, the files containerd, the CNI library and kubelet leave in /run/containerd,
//! /var/lib/cni and /var/log/containers, and the kernel settings kubelet and the bridge plugin
//! change (restored). `teardown` then lists whatever it still finds, so the test can fail on a leak.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Node;
use kube::Api;

use super::{free_port, write, ApiServerForPods, Binaries, Cluster, Process, DEADLINE};

/// The API server's address: the `kubernetes` Service's ClusterIP and the node's InternalIP.
pub const API_IP: &str = "198.18.1.1";
pub const SERVICE_RANGE: &str = "198.18.1.0/24";
pub const POD_SUBNET: &str = "198.18.0.0/24";
pub const POD_GATEWAY: &str = "198.18.0.1";
pub const NODE_NAME: &str = "pe-node";
const BRIDGE: &str = "pe-br0";
const API_LINK: &str = "pe-api0";
const API_LINK_PEER: &str = "pe-api1";
/// kubelet's `cgroupRoot`: the pods' cgroups, in every hierarchy, live below it.
const CGROUP_ROOT: &str = "pe-node";
const NETNS_DIR: &str = "/var/run/netns";
const CONTAINER_LOG_LINKS: &str = "/var/log/containers";
/// Serialises real nodes on one machine (their names and addresses are fixed).
const LOCK_FILE: &str = "/run/lock/predicate-extender-real-node.lock";
/// Directories outside the node's own where containerd, its shims and the CNI library write per
/// container or sandbox: what is new in them after the node stops is removed.
const SHARED_STATE_DIRS: [&str; 4] =
    ["/var/lib/cni/results", "/run/containerd/s", "/run/containerd/fifo", CONTAINER_LOG_LINKS];
/// Kernel settings kubelet sets at start (unless protectKernelDefaults) and the bridge plugin's
/// forwarding switch: restored by the teardown.
const SYSCTLS: [&str; 7] = [
    "kernel/panic",
    "kernel/panic_on_oops",
    "vm/overcommit_memory",
    "vm/panic_on_oom",
    "kernel/keys/root_maxkeys",
    "kernel/keys/root_maxbytes",
    "net/ipv4/ip_forward",
];

/// The API server placement a cluster needs for this node's pods.
pub fn apiserver_for_pods() -> ApiServerForPods {
    ApiServerForPods { ip: API_IP.to_string(), service_range: SERVICE_RANGE.to_string() }
}

/// Why a real node cannot run here, or `None` when it can (root, cgroups, the packages).
pub fn unavailable() -> Option<String> {
    let uid = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("Uid:")).map(|l| l.split_whitespace().nth(1).map(str::to_string))
        })
        .flatten();
    if uid.as_deref() != Some("0") {
        return Some("a real node needs root (containerd, mounts, network namespaces, cgroups)".to_string());
    }
    if !Path::new("/sys/fs/cgroup/cpu").is_dir() && !Path::new("/sys/fs/cgroup/cgroup.controllers").exists() {
        return Some("no cgroup hierarchy is mounted at /sys/fs/cgroup".to_string());
    }
    None
}

/// What of containerd, runc and the CNI plugins is missing, if anything: the test does not install
/// system packages itself; `e2e/node-packages.sh` does (as `.ci/run` runs it).
pub fn missing_packages() -> Option<String> {
    let on_path = |p: &str| {
        Command::new("sh").args(["-c", &format!("command -v {p}")]).output().is_ok_and(|o| o.status.success())
    };
    let mut missing: Vec<&str> =
        ["containerd", "ctr", "runc", "ip", "iptables-save"].into_iter().filter(|p| !on_path(p)).collect();
    missing.extend(
        ["bridge", "host-local", "loopback"].into_iter().filter(|p| !Path::new("/usr/lib/cni").join(p).exists()),
    );
    (!missing.is_empty()).then(|| format!("{} not installed (as root: bash e2e/node-packages.sh)", missing.join(", ")))
}

fn run(program: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(program).args(args).output().map_err(|e| format!("{program} {}: {e}", args.join(" ")))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).to_string())
    } else {
        Err(format!("{program} {}: {}{}", args.join(" "), String::from_utf8_lossy(&out.stderr), out.status))
    }
}

fn must(program: &str, args: &[&str]) -> String {
    run(program, args).unwrap_or_else(|e| panic!("{e}"))
}

fn link_exists(name: &str) -> bool {
    Path::new("/sys/class/net").join(name).exists()
}

/// The cgroup hierarchies mounted under /sys/fs/cgroup (v1: one per controller; v2: the root).
fn cgroup_hierarchies() -> Vec<PathBuf> {
    let root = Path::new("/sys/fs/cgroup");
    if root.join("cgroup.controllers").exists() {
        return vec![root.to_path_buf()];
    }
    let mut out: Vec<PathBuf> =
        std::fs::read_dir(root).map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect()).unwrap_or_default();
    // cpu,cpuacct-style names are symlinks to the same mount: each hierarchy once.
    out.retain(|p| p.is_dir() && !p.is_symlink() && p.join("cgroup.procs").exists());
    out.sort();
    out
}

/// Every cgroup directory below `dir`, deepest first.
fn cgroups_below(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() && !p.is_symlink() {
                out.extend(cgroups_below(&p));
                out.push(p);
            }
        }
    }
    out
}

/// The mount points whose path starts with `prefix`, deepest first.
fn mounts_under(prefix: &str) -> Vec<String> {
    mounts_where(|p| p == prefix || p.starts_with(&format!("{prefix}/")))
}

/// The mount points `keep` accepts, deepest first.
fn mounts_where(keep: impl Fn(&str) -> bool) -> Vec<String> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mut points: Vec<String> =
        text.lines().filter_map(|l| l.split(' ').nth(4)).map(|p| p.replace("\\040", " ")).filter(|p| keep(p)).collect();
    points.sort_by_key(|p| std::cmp::Reverse(p.len()));
    points.dedup();
    points
}

fn netns_entries() -> BTreeSet<String> {
    std::fs::read_dir(NETNS_DIR)
        .map(|d| d.filter_map(|e| Some(e.ok()?.file_name().to_string_lossy().to_string())).collect())
        .unwrap_or_default()
}

fn entries(dir: &str) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| Some(e.ok()?.file_name().to_string_lossy().to_string())).collect())
        .unwrap_or_default()
}

fn sysctls() -> Vec<(String, String)> {
    SYSCTLS
        .iter()
        .map(|k| {
            (k.to_string(), std::fs::read_to_string(format!("/proc/sys/{k}")).unwrap_or_default().trim().to_string())
        })
        .collect()
}

/// The `iptables-save` rules of every table, without counters and comments (to compare).
fn iptables_rules() -> Vec<String> {
    must("iptables-save", &[])
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| if l.starts_with(':') { l.split(' ').take(2).collect::<Vec<_>>().join(" ") } else { l.to_string() })
        .collect()
}

pub struct RealNode {
    pub dir: PathBuf,
    keep_dir: Option<tempfile::TempDir>,
    pub containerd: Option<Process>,
    pub kubelet: Option<Process>,
    /// kubelet's server and healthz ports (on 127.0.0.1).
    pub kubelet_ports: Vec<u16>,
    pub socket: PathBuf,
    /// /var/run/netns before the node started: the pods' namespaces are the new `cni-` entries.
    netns_before: BTreeSet<String>,
    iptables_before: Vec<String>,
    sysctls_before: Vec<(String, String)>,
    shared_before: Vec<BTreeSet<String>>,
    links_created: bool,
    torn_down: bool,
    /// Held for the node's life (see LOCK_FILE).
    _lock: std::fs::File,
}

impl RealNode {
    /// The node's network (the veth pair with the API server's address), before the cluster
    /// starts; leftovers of a run that was killed before its cleanup are removed first.
    pub fn prepare(test: &str) -> RealNode {
        if let Some(dir) = Path::new(LOCK_FILE).parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let lock = std::fs::File::create(LOCK_FILE).unwrap_or_else(|e| panic!("{LOCK_FILE}: {e}"));
        lock.lock().unwrap_or_else(|e| panic!("locking {LOCK_FILE}: {e}"));
        let temp = tempfile::Builder::new()
            .prefix(&format!("e2e-{test}-node-"))
            .tempdir()
            .unwrap_or_else(|e| panic!("a temporary directory: {e}"));
        let dir = temp.path().to_path_buf();
        remove_leftovers();
        // Built before anything is created, so that a failure from here on is cleaned up by Drop.
        let mut node = RealNode {
            socket: dir.join("containerd/containerd.sock"),
            dir,
            keep_dir: Some(temp),
            containerd: None,
            kubelet: None,
            kubelet_ports: Vec::new(),
            netns_before: netns_entries(),
            iptables_before: iptables_rules(),
            sysctls_before: sysctls(),
            shared_before: SHARED_STATE_DIRS.iter().map(|d| entries(d)).collect(),
            links_created: false,
            torn_down: false,
            _lock: lock,
        };
        node.links_created = true;
        must("ip", &["link", "add", API_LINK, "type", "veth", "peer", "name", API_LINK_PEER]);
        must("ip", &["addr", "add", &format!("{API_IP}/32"), "dev", API_LINK]);
        must("ip", &["link", "set", API_LINK, "up"]);
        must("ip", &["link", "set", API_LINK_PEER, "up"]);
        node
    }

    /// `ctr` against this node's containerd, in kubelet's namespace.
    pub fn ctr(&self, args: &[&str]) -> Result<String, String> {
        let mut all = vec!["--address", self.socket.to_str().unwrap_or_default(), "--namespace", "k8s.io"];
        all.extend_from_slice(args);
        run("ctr", &all)
    }

    /// Starts containerd, imports `images` (OCI archives, which must register
    /// `expected_references`; `pause_image` is the pod sandbox), starts kubelet against
    /// `cluster`, and waits until the Node is Ready.
    pub async fn start(
        &mut self,
        cluster: &Cluster,
        binaries: &Binaries,
        images: &[PathBuf],
        expected_references: &[&str],
        pause_image: &str,
    ) {
        self.start_containerd(pause_image);
        for image in images {
            let path = image.to_str().unwrap_or_default();
            self.ctr(&["images", "import", path]).unwrap_or_else(|e| panic!("importing {path}: {e}"));
        }
        // `ctr images import` exits 0 having registered nothing when an archive names no image.
        let listed = self.ctr(&["images", "list", "--quiet"]).unwrap_or_else(|e| panic!("{e}"));
        for reference in expected_references {
            assert!(listed.lines().any(|l| l == *reference), "image {reference} not imported: {listed}");
        }
        self.start_kubelet(cluster, binaries);
        self.wait_ready(cluster).await;
    }

    fn start_containerd(&mut self, pause_image: &str) {
        let d = self.dir.join("containerd");
        let cni_conf = self.dir.join("cni/net.d");
        std::fs::create_dir_all(&cni_conf).unwrap_or_else(|e| panic!("{}: {e}", cni_conf.display()));
        // The pods' bridge; host-local keeps its leases in the node's directory, not /var/lib/cni.
        write(
            &cni_conf.join("10-pe-bridge.conflist"),
            &serde_json::json!({
                "cniVersion": "1.0.0",
                "name": "pe-pods",
                "plugins": [
                    {
                        "type": "bridge",
                        "bridge": BRIDGE,
                        "isGateway": true,
                        "ipMasq": false,
                        "hairpinMode": true,
                        "ipam": {
                            "type": "host-local",
                            "dataDir": self.dir.join("cni/ipam").display().to_string(),
                            "ranges": [[{"subnet": POD_SUBNET, "gateway": POD_GATEWAY}]],
                            // The API server's address and the pods' own, nothing beyond.
                            "routes": [{"dst": "198.18.0.0/15"}],
                        },
                    },
                    {"type": "loopback"},
                ],
            })
            .to_string(),
        );
        let config = format!(
            r#"version = 2
root = "{d}/root"
state = "{d}/state"
# No CNI, image or snapshot state outside this directory; no listener but the socket.
[grpc]
  address = "{d}/containerd.sock"
[ttrpc]
  address = "{d}/containerd.sock.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "{d}/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{pause_image}"
  # This machine runs the test in a container without CAP_SYS_RESOURCE: without this, runc fails
  # every sandbox ("can't get final child's PID from pipe: EOF") raising oom_score_adj.
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        Root = "{d}/runc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "{cni}"
"#,
            d = d.display(),
            cni = cni_conf.display(),
        );
        std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        let config_path = d.join("config.toml");
        write(&config_path, &config);
        let mut containerd = Process::start(
            "containerd",
            Path::new("containerd"),
            vec![format!("--config={}", config_path.display())],
            self.dir.join("containerd.log"),
        );
        let start = Instant::now();
        while self.ctr(&["version"]).is_err() {
            containerd.check_running();
            assert!(start.elapsed() < DEADLINE, "containerd did not answer within {DEADLINE:?}");
            std::thread::sleep(Duration::from_millis(100));
        }
        self.containerd = Some(containerd);
    }

    fn start_kubelet(&mut self, cluster: &Cluster, binaries: &Binaries) {
        for hierarchy in cgroup_hierarchies() {
            let _ = std::fs::create_dir_all(hierarchy.join(CGROUP_ROOT));
        }
        let config_path = self.dir.join("kubelet-config.json");
        self.kubelet_ports = vec![free_port(), free_port()];
        let config = serde_json::json!({
            "apiVersion": "kubelet.config.k8s.io/v1beta1",
            "kind": "KubeletConfiguration",
            // This machine mounts cgroup v1: kubelet 1.35 and later start there only when told.
            "failCgroupV1": false,
            "cgroupDriver": "cgroupfs",
            "cgroupRoot": format!("/{CGROUP_ROOT}"),
            "failSwapOn": false,
            "containerRuntimeEndpoint": format!("unix://{}", self.socket.display()),
            // kubelet's own server and healthz on loopback only; no read-only port.
            "address": "127.0.0.1",
            "port": self.kubelet_ports[0],
            "readOnlyPort": 0,
            "healthzBindAddress": "127.0.0.1",
            "healthzPort": self.kubelet_ports[1],
            "authentication": {"anonymous": {"enabled": false}, "webhook": {"enabled": false}},
            "authorization": {"mode": "AlwaysAllow"},
            "podLogsDir": self.dir.join("pod-logs").display().to_string(),
            // No kube-proxy: kubelet's own iptables chains would be the only rules on the machine.
            "makeIPTablesUtilChains": false,
            // No DNS server for the pods: nothing they could ask is on this machine.
            "resolvConf": "",
            // Eviction only on a nearly full machine: the test's pods must not be evicted because
            // this machine's disk is fuller than kubelet's defaults (10-15% free) allow.
            "evictionHard": {
                "memory.available": "50Mi",
                "nodefs.available": "1%",
                "nodefs.inodesFree": "1%",
                "imagefs.available": "1%",
                "imagefs.inodesFree": "1%",
            },
            // Pod syncs (ConfigMap volume updates included) every 5 s instead of a minute, so that
            // an edited Policy reaches the pod within a test's patience.
            "syncFrequency": "5s",
            "nodeStatusUpdateFrequency": "2s",
            "imageGCHighThresholdPercent": 100,
            "imageGCLowThresholdPercent": 99,
            "serializeImagePulls": false,
        });
        write(&config_path, &config.to_string());
        let args = vec![
            format!("--config={}", config_path.display()),
            format!("--kubeconfig={}", cluster.admin_kubeconfig.display()),
            format!("--root-dir={}", self.dir.join("kubelet").display()),
            format!("--cert-dir={}", self.dir.join("kubelet-pki").display()),
            format!("--hostname-override={NODE_NAME}"),
            format!("--node-ip={API_IP}"),
            "--v=2".to_string(),
        ];
        self.kubelet = Some(Process::start("kubelet", &binaries.path("kubelet"), args, self.dir.join("kubelet.log")));
    }

    async fn wait_ready(&mut self, cluster: &Cluster) {
        let nodes: Api<Node> = Api::all(cluster.client.clone());
        let start = Instant::now();
        loop {
            if let Some(k) = self.kubelet.as_mut() {
                k.check_running();
            }
            if let Ok(Some(node)) = nodes.get_opt(NODE_NAME).await {
                let ready = node
                    .status
                    .and_then(|s| s.conditions)
                    .unwrap_or_default()
                    .iter()
                    .any(|c| c.type_ == "Ready" && c.status == "True");
                if ready {
                    return;
                }
            }
            assert!(start.elapsed() < DEADLINE, "node {NODE_NAME} not Ready within {DEADLINE:?}\n{}", self.logs());
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// The IDs of the containers (running or not) whose kubelet labels match.
    pub fn container_ids(&self, pod: &str, container: &str) -> Vec<String> {
        let filter =
            format!("labels.\"io.kubernetes.pod.name\"=={pod},labels.\"io.kubernetes.container.name\"=={container}");
        self.ctr(&["containers", "list", "--quiet", &filter])
            .unwrap_or_else(|e| panic!("listing containers: {e}"))
            .lines()
            .map(str::to_string)
            .filter(|id| !id.is_empty())
            .collect()
    }

    /// The host PID of a container's task (`ctr tasks list`: TASK PID STATUS).
    pub fn task_pid(&self, id: &str) -> Option<u32> {
        let list = self.ctr(&["tasks", "list"]).ok()?;
        list.lines().find_map(|l| {
            let mut fields = l.split_whitespace();
            (fields.next()? == id).then(|| fields.next()?.parse().ok()).flatten()
        })
    }

    /// kubelet's whole log so far.
    pub fn kubelet_log(&self) -> String {
        self.kubelet.as_ref().map(|k| std::fs::read_to_string(&k.log).unwrap_or_default()).unwrap_or_default()
    }

    /// The end of containerd's and kubelet's logs.
    pub fn logs(&self) -> String {
        let mut out = String::new();
        for p in self.containerd.iter().chain(self.kubelet.iter()) {
            out.push_str(&format!("----- {} ({}), last lines:\n{}\n", p.name, p.log.display(), p.tail(40)));
        }
        out
    }

    /// Stops and removes everything the node started; returns what is still there afterwards
    /// (nothing, when the cleanup worked).
    pub fn teardown(&mut self) -> Vec<String> {
        self.torn_down = true;
        if let Some(k) = self.kubelet.as_mut() {
            k.stop(Duration::from_secs(5));
        }
        // Containers first, through the runtime; whatever is left is killed through its cgroup.
        let tasks = self.ctr(&["tasks", "list", "--quiet"]).unwrap_or_default();
        for id in tasks.lines().filter(|l| !l.is_empty()) {
            let _ = self.ctr(&["tasks", "kill", "--signal", "SIGKILL", id]);
        }
        if let Some(c) = self.containerd.as_mut() {
            c.stop(Duration::from_secs(5));
        }
        kill_processes_mentioning(&self.socket.display().to_string());
        kill_cgroup_members();
        let dir = self.dir.display().to_string();
        // Stacked and propagated mounts (kubelet makes its directory shared) need several passes.
        for _ in 0..10 {
            let points = mounts_under(&dir);
            if points.is_empty() {
                break;
            }
            for point in points {
                let _ = run("umount", &["--lazy", &point]);
            }
        }
        for ns in netns_entries().difference(&self.netns_before) {
            if ns.starts_with("cni-") {
                let _ = run("ip", &["netns", "delete", ns]);
            }
        }
        for (dir, before) in SHARED_STATE_DIRS.iter().zip(&self.shared_before) {
            for new in entries(dir).difference(before) {
                let path = Path::new(dir).join(new);
                let _ = std::fs::remove_file(&path).or_else(|_| std::fs::remove_dir_all(&path));
            }
        }
        if self.links_created {
            remove_links();
        }
        remove_cgroups();
        for (key, value) in &self.sysctls_before {
            let _ = std::fs::write(format!("/proc/sys/{key}"), value);
        }

        let mut left = Vec::new();
        left.extend(mounts_under(&dir).into_iter().map(|m| format!("mount {m}")));
        for ns in netns_entries().difference(&self.netns_before) {
            left.push(format!("network namespace {ns}"));
        }
        for link in [BRIDGE, API_LINK, API_LINK_PEER] {
            if link_exists(link) {
                left.push(format!("interface {link}"));
            }
        }
        for hierarchy in cgroup_hierarchies() {
            if hierarchy.join(CGROUP_ROOT).exists() {
                left.push(format!("cgroup {}", hierarchy.join(CGROUP_ROOT).display()));
            }
        }
        left.extend(
            processes_mentioning(&self.socket.display().to_string()).into_iter().map(|p| format!("process {p}")),
        );
        for (dir, before) in SHARED_STATE_DIRS.iter().zip(&self.shared_before) {
            for new in entries(dir).difference(before) {
                left.push(format!("{dir}/{new}"));
            }
        }
        let now = sysctls();
        for ((key, before), (_, after)) in self.sysctls_before.iter().zip(&now) {
            if before != after {
                left.push(format!("sysctl {key}: {before} became {after}"));
            }
        }
        let iptables = iptables_rules();
        if iptables != self.iptables_before {
            let new: Vec<&String> = iptables.iter().filter(|r| !self.iptables_before.contains(r)).collect();
            left.push(format!("iptables rules changed: {new:?}"));
        }
        left
    }

    /// Keeps the node's directory (logs, configuration) after the test.
    pub fn keep(&mut self) -> PathBuf {
        if let Some(temp) = self.keep_dir.take() {
            let _ = temp.keep();
        }
        self.dir.clone()
    }
}

impl Drop for RealNode {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let dir = self.keep();
            eprintln!("real node kept in {}\n{}", dir.display(), self.logs());
        }
        if !self.torn_down {
            let left = self.teardown();
            if !left.is_empty() {
                eprintln!("real node: left behind after its cleanup: {left:?}");
            }
        }
    }
}

/// Processes whose command line mentions `needle` (containerd's shims name its socket), as
/// `pid command`.
fn processes_mentioning(needle: &str) -> Vec<String> {
    let mut out = Vec::new();
    let me = std::process::id().to_string();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let pid = entry.file_name().to_string_lossy().to_string();
        if !pid.chars().all(|c| c.is_ascii_digit()) || pid == me {
            continue;
        }
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(needle) {
            out.push(format!("{pid} {cmdline}"));
        }
    }
    out
}

fn kill_processes_mentioning(needle: &str) {
    for p in processes_mentioning(needle) {
        if let Some(pid) = p.split(' ').next() {
            let _ = run("kill", &["-KILL", pid]);
        }
    }
}

/// SIGKILL to every process in the node's cgroups (the containers, their shims' children).
fn kill_cgroup_members() {
    for _ in 0..20 {
        let mut any = false;
        for hierarchy in cgroup_hierarchies() {
            let root = hierarchy.join(CGROUP_ROOT);
            for group in cgroups_below(&root).into_iter().chain([root.clone()]) {
                let procs = std::fs::read_to_string(group.join("cgroup.procs")).unwrap_or_default();
                for pid in procs.lines().filter(|l| !l.is_empty()) {
                    any = true;
                    let _ = run("kill", &["-KILL", pid]);
                }
            }
        }
        if !any {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn remove_cgroups() {
    for hierarchy in cgroup_hierarchies() {
        let root = hierarchy.join(CGROUP_ROOT);
        if !root.exists() {
            continue;
        }
        for _ in 0..20 {
            for group in cgroups_below(&root) {
                let _ = std::fs::remove_dir(&group);
            }
            if std::fs::remove_dir(&root).is_ok() || !root.exists() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

fn remove_links() {
    for link in [BRIDGE, API_LINK] {
        if link_exists(link) {
            let _ = run("ip", &["link", "delete", link]);
        }
    }
}

/// What a run killed before its cleanup left: its node's processes, mounts, links and cgroups.
fn remove_leftovers() {
    let temp = std::env::temp_dir().display().to_string();
    for p in processes_mentioning("/containerd/containerd.sock") {
        if p.contains(&format!("{temp}/e2e-")) {
            if let Some(pid) = p.split(' ').next() {
                let _ = run("kill", &["-KILL", pid]);
            }
        }
    }
    kill_cgroup_members();
    for point in mounts_where(|p| p.starts_with(&format!("{temp}/e2e-")) && p.contains("-node-")) {
        let _ = run("umount", &["--lazy", &point]);
    }
    remove_links();
    remove_cgroups();
}

/// The cluster's own kube-scheduler (the default profile, no extender), which places the
/// Deployment's pods as any cluster's scheduler would.
pub fn default_scheduler(cluster: &Cluster) -> Process {
    let kubeconfig = cluster.admin_kubeconfig.display().to_string();
    let port = free_port();
    let args = vec![
        format!("--kubeconfig={kubeconfig}"),
        format!("--authentication-kubeconfig={kubeconfig}"),
        format!("--authorization-kubeconfig={kubeconfig}"),
        "--leader-elect=false".to_string(),
        "--bind-address=127.0.0.1".to_string(),
        format!("--secure-port={port}"),
        format!("--cert-dir={}", cluster.dir.join("default-scheduler-certs").display()),
    ];
    Process::start(
        "kube-scheduler (default)",
        &cluster.binaries.path("kube-scheduler"),
        args,
        cluster.dir.join("default-scheduler.log"),
    )
}
