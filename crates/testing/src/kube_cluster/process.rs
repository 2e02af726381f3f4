//! A child process of the harness: its output in a log file, killed when dropped (a failing or
//! panicking test included) and, through `setpriv --pdeathsig`, when the test process dies first.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Every address a test cluster uses: loopback and the real node's block (crates/testing/src/kube_cluster/node.rs).
pub const NO_PROXY: &str = "127.0.0.1,localhost,198.18.0.0/15";

pub struct Process {
    pub name: String,
    child: Option<Child>,
    pub log: PathBuf,
    program: PathBuf,
    args: Vec<String>,
}

fn setpriv() -> Option<&'static str> {
    static FOUND: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let found = *FOUND.get_or_init(|| {
        Command::new("setpriv").args(["--pdeathsig", "KILL", "true"]).status().is_ok_and(|s| s.success())
    });
    found.then_some("setpriv")
}

impl Process {
    /// Starts `program args`, appending its stdout and stderr to `log`.
    pub fn start(name: &str, program: &Path, args: Vec<String>, log: PathBuf) -> Process {
        let mut p = Process { name: name.to_string(), child: None, log, program: program.to_path_buf(), args };
        p.spawn();
        p
    }

    fn spawn(&mut self) {
        let out = File::options()
            .create(true)
            .append(true)
            .open(&self.log)
            .unwrap_or_else(|e| panic!("{}: {e}", self.log.display()));
        let err = out.try_clone().unwrap_or_else(|e| panic!("{}: {e}", self.log.display()));
        let mut command = match setpriv() {
            Some(setpriv) => {
                let mut c = Command::new(setpriv);
                c.args(["--pdeathsig", "KILL", "--"]).arg(&self.program);
                c
            }
            None => Command::new(&self.program),
        };
        let child = command
            .args(&self.args)
            .env_remove("KUBERNETES_SERVICE_HOST")
            // The cluster's addresses are this machine's: never through a proxy of the environment.
            .env("NO_PROXY", NO_PROXY)
            .env("no_proxy", NO_PROXY)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .unwrap_or_else(|e| panic!("start {} ({}): {e}", self.name, self.program.display()));
        self.child = Some(child);
    }

    /// Whether it is still running (and not a zombie).
    pub fn running(&mut self) -> bool {
        match &mut self.child {
            Some(c) => matches!(c.try_wait(), Ok(None)),
            None => false,
        }
    }

    /// Panics, with the log's tail, if the process has exited.
    pub fn check_running(&mut self) {
        if !self.running() {
            panic!("{} exited; the end of its log:\n{}", self.name, self.tail(60));
        }
    }

    /// SIGTERM, then SIGKILL after `grace`; waits for the exit.
    pub fn stop(&mut self, grace: Duration) {
        let Some(mut child) = self.child.take() else { return };
        let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
        let start = Instant::now();
        while start.elapsed() < grace {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
    }

    /// SIGKILL at once (a crash), and wait.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again with the same program, arguments and log (after `stop` or `kill`).
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The process's peak resident memory so far (`VmHWM`), in MiB.
    pub fn peak_rss_mib(&self) -> Option<f64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()?)).ok()?;
        let kib: f64 =
            status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?.trim().strip_suffix("kB")?.trim().parse().ok()?;
        Some(kib / 1024.0)
    }

    /// CPU time (user and system) it has used so far.
    pub fn cpu_seconds(&self) -> Option<f64> {
        cpu_seconds(&format!("/proc/{}/stat", self.pid()?))
    }

    /// The last `lines` lines of its log.
    pub fn tail(&self, lines: usize) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A free port on 127.0.0.1 (the listener is closed before the port is handed out), below
/// Linux's ephemeral range (32768-60999 by default): a port the kernel hands out itself can be
/// taken by one of the thousands of outgoing connections a throughput run makes before the
/// process meant to listen on it starts. Counted from a point that differs per test process.
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    const LOW: u32 = 20_000;
    const SPAN: u32 = 12_000;
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let start = std::process::id() % SPAN;
    for _ in 0..SPAN {
        let offset = (start + NEXT.fetch_add(1, Ordering::Relaxed) % SPAN) % SPAN;
        let port = (LOW + offset) as u16;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free port on 127.0.0.1 between {LOW} and {}", LOW + SPAN)
}

/// The TCP addresses a process listens on (from /proc: its socket inodes, matched in
/// /proc/net/tcp and tcp6), as `ip:port` with IPv4 in dotted form and IPv6 as 32 hex digits.
pub fn listening(pid: u32) -> Vec<String> {
    let inodes: std::collections::HashSet<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|dir| {
            dir.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
                .filter_map(|target| {
                    let t = target.to_string_lossy().to_string();
                    Some(t.strip_prefix("socket:[")?.strip_suffix(']')?.to_string())
                })
                .collect()
        })
        .unwrap_or_default();
    let mut out = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // local_address, state (0A: LISTEN), inode
            let (Some(local), Some(state), Some(inode)) = (fields.get(1), fields.get(3), fields.get(9)) else {
                continue;
            };
            if *state != "0A" || !inodes.contains(*inode) {
                continue;
            }
            let Some((ip, port)) = local.split_once(':') else { continue };
            let port = u16::from_str_radix(port, 16).unwrap_or_default();
            let ip = if ip.len() == 8 {
                let n = u32::from_str_radix(ip, 16).unwrap_or_default().to_le_bytes();
                format!("{}.{}.{}.{}", n[0], n[1], n[2], n[3])
            } else {
                ip.to_string()
            };
            out.push(format!("{ip}:{port}"));
        }
    }
    out
}

/// User plus system CPU time from a `/proc/<pid>/stat` file (fields 14 and 15, in USER_HZ, which
/// Linux fixes at 100 in its ABI); `/proc/self/stat` for this process.
pub fn cpu_seconds(stat_path: &str) -> Option<f64> {
    let text = std::fs::read_to_string(stat_path).ok()?;
    // The command name (field 2) may hold spaces: count from after its closing parenthesis.
    let fields: Vec<&str> = text.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i)?.parse::<f64>().ok();
    Some((ticks(11)? + ticks(12)?) / 100.0)
}
