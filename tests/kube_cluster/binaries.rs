//! The real Kubernetes binaries: built once per test process and tested minor by `e2e/build.sh`
//! (which skips the build when its version-keyed directory is complete and locks against a
//! concurrent build).
#![allow(dead_code)] // each test binary uses a different part of this

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use parking_lot::Mutex;

/// Set to `require` (as `.ci/run` does, and as any CI=true run does) to fail instead of skipping
/// when Go is missing.
pub const REQUIRE_ENV: &str = "PREDICATE_EXTENDER_E2E";

/// The Kubernetes minors tested end to end, oldest first. Each is a module file of e2e/kube that
/// pins its exact version (`e2e/build.sh --list`; `the_tested_minors_are_e2e_build_sh_s` keeps the
/// two the same); [`on_each_minor!`](crate::on_each_minor) runs a test on each.
pub const MINORS: [&str; 3] = ["1.35", "1.36", "1.37"];

/// The newest tested minor: what the tests that run one version (the real node, throughput, the
/// development cluster) run.
pub const NEWEST: &str = MINORS[MINORS.len() - 1];

/// Where `e2e/build.sh` put etcd, kube-apiserver, kube-scheduler, kube-controller-manager (and, for
/// the newest minor, kubelet and kubectl) and the oracle.
#[derive(Debug, Clone)]
pub struct Binaries {
    pub dir: PathBuf,
    /// The exact Kubernetes version built (`v1.37.2`).
    pub version: String,
}

impl Binaries {
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

pub fn required() -> bool {
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    ci || std::env::var(REQUIRE_ENV).is_ok_and(|v| v == "require")
}

/// The newest minor's binaries; see [`binaries_of`].
pub fn binaries(test: &str) -> Option<Binaries> {
    binaries_of(NEWEST, test)
}

/// A tested minor's binaries, built on first use; `None` (after saying so on the terminal, past
/// the test harness's capture) when Go is not installed and the run does not require the
/// end-to-end tests.
pub fn binaries_of(minor: &str, test: &str) -> Option<Binaries> {
    match built(minor) {
        Ok(b) => Some(b),
        Err(why) if why.starts_with(NO_GO) && !required() => {
            // Straight to the terminal: a skipped end-to-end test must be seen, not captured.
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED end-to-end test {test} (Kubernetes {minor}): {why} (set {REQUIRE_ENV}=require or CI=true to make this a failure)"
            );
            None
        }
        Err(why) => panic!("end-to-end test {test} (Kubernetes {minor}): {why}"),
    }
}

/// A minor's binaries, built on first use, or why they could not be.
pub fn built(minor: &str) -> Result<Binaries, String> {
    static BUILT: OnceLock<Mutex<BTreeMap<String, Result<Binaries, String>>>> = OnceLock::new();
    // Held through a build: a second test of the same process waits for it rather than starting
    // its own (e2e/build.sh would make it wait anyway).
    let mut built = BUILT.get_or_init(Default::default).lock();
    built.entry(minor.to_string()).or_insert_with(|| build(minor)).clone()
}

const NO_GO: &str = "Go is not installed";

fn build(minor: &str) -> Result<Binaries, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    if Command::new("go").arg("version").output().map(|o| !o.status.success()).unwrap_or(true) {
        return Err(format!(
            "{NO_GO}: the real kube-apiserver, kube-scheduler and etcd are built from Go modules (e2e/build.sh)"
        ));
    }
    let script = root.join("e2e/build.sh");
    // Progress goes to the terminal (a cold build takes minutes); the directory comes on stdout.
    let out = Command::new("bash")
        .arg(&script)
        .arg(minor)
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("{}: {e}", script.display()))?;
    if !out.status.success() {
        return Err(format!("{} {minor} failed ({})", script.display(), out.status));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let dir = PathBuf::from(stdout.lines().last().map(str::trim).unwrap_or_default());
    // kubernetes-<version>-etcd-<etcd version>
    let name = dir.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    let version = name.strip_prefix("kubernetes-").and_then(|n| n.split("-etcd-").next()).unwrap_or_default();
    if !version.starts_with(&format!("v{minor}.")) {
        return Err(format!("{} {minor} printed {}, not a directory of v{minor}", script.display(), dir.display()));
    }
    Ok(Binaries { version: version.to_string(), dir })
}

/// `e2e/build.sh --list`: the exact versions of the tested minors, newest first.
pub fn listed_versions() -> Vec<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("e2e/build.sh");
    let out = Command::new("bash")
        .arg(&script)
        .arg("--list")
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", script.display()));
    assert!(out.status.success(), "{} --list: {}", script.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect()
}

/// One test on each tested minor: `on_each_minor!(name)` beside `async fn name(minor: &str)` makes
/// a module `name` with a test per minor (`name::v1_35`, ...) that awaits `name(minor)`, so a
/// failure names the version. Keep the arms and [`MINORS`] the same.
#[macro_export]
macro_rules! on_each_minor {
    ($name:ident) => {
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn v1_35() {
                super::$name("1.35").await
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn v1_36() {
                super::$name("1.36").await
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn v1_37() {
                super::$name("1.37").await
            }
        }
    };
}
