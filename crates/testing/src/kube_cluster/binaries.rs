//! The real Kubernetes binaries: built once per test process and tested minor by `e2e/build.sh`
//! (which skips the build when its version-keyed directory is complete and locks against a
//! concurrent build).
#![allow(dead_code)] // each test binary uses a different part of this

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, OnceLock};

use crate::oracle::e2e_build;
use parking_lot::Mutex;

/// Set to `require` (as `.ci/run` does, and as any CI=true run does) to fail instead of skipping
/// when Go is missing.
pub const REQUIRE_ENV: &str = "PREDICATE_EXTENDER_E2E";

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
    skip_without_go(built(minor), &format!("end-to-end test {test} (Kubernetes {minor})"))
}

/// What was built; `None` (after saying so on the terminal, past the test harness's capture) when
/// Go is not installed and the run does not require the tests that need it; otherwise a failure.
fn skip_without_go<T>(built: Result<T, String>, what: &str) -> Option<T> {
    match built {
        Ok(b) => Some(b),
        Err(why) if why.starts_with(NO_GO) && !required() => {
            // Straight to the terminal: a skipped test must be seen, not captured.
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED {what}: {why} (set {REQUIRE_ENV}=require or CI=true to make this a failure)"
            );
            None
        }
        Err(why) => panic!("{what}: {why}"),
    }
}

/// `Err` starting with [`NO_GO`] when `go` does not run.
fn go_installed(needed_for: &str) -> Result<(), String> {
    if Command::new("go").arg("version").output().map(|o| !o.status.success()).unwrap_or(true) {
        return Err(format!("{NO_GO}: {needed_for} built from Go modules (e2e/build.sh)"));
    }
    Ok(())
}

/// A minor's binaries, built on first use, or why they could not be.
pub fn built(minor: &str) -> Result<Binaries, String> {
    type Once = Arc<OnceLock<Result<Binaries, String>>>;
    static BUILT: OnceLock<Mutex<BTreeMap<String, Once>>> = OnceLock::new();
    // The map is held only to find the minor's cell; a second test of the same minor waits on the
    // cell (not on another minor's build).
    let once = BUILT.get_or_init(Default::default).lock().entry(minor.to_string()).or_default().clone();
    once.get_or_init(|| build(minor)).clone()
}

const NO_GO: &str = "Go is not installed";

fn build(minor: &str) -> Result<Binaries, String> {
    go_installed("the real kube-apiserver, kube-scheduler and etcd are")?;
    let dir = e2e_build(Some(minor))?;
    // kubernetes-<version>-etcd-<etcd version>
    let name = dir.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    let version = name.strip_prefix("kubernetes-").and_then(|n| n.split("-etcd-").next()).unwrap_or_default();
    if !version.starts_with(&format!("v{minor}.")) {
        return Err(format!("e2e/build.sh {minor} printed {}, not a directory of v{minor}", dir.display()));
    }
    Ok(Binaries { version: version.to_string(), dir })
}

/// The in-process kube-scheduler of a tested minor (`e2e/build.sh inprocess <minor>`: the
/// PredicateEngine plugin linked to the engine, in the cargo profile PREDICATE_ENGINE_PROFILE names),
/// built once per test process and minor; `None` (saying so) when Go is not installed and the run
/// does not require it.
pub fn in_process_scheduler(minor: &str, test: &str) -> Option<PathBuf> {
    type Once = Arc<OnceLock<Result<PathBuf, String>>>;
    static BUILT: OnceLock<Mutex<BTreeMap<String, Once>>> = OnceLock::new();
    let once = BUILT.get_or_init(Default::default).lock().entry(minor.to_string()).or_default().clone();
    let built = once
        .get_or_init(|| {
            go_installed("the in-process kube-scheduler is")?;
            let script = crate::workspace_root().as_path().join("e2e/build.sh");
            let out = Command::new("bash")
                .arg(&script)
                .args(["inprocess", minor])
                .stderr(std::process::Stdio::inherit())
                .output()
                .map_err(|e| format!("{}: {e}", script.display()))?;
            if !out.status.success() {
                return Err(format!("{} inprocess {minor} failed ({})", script.display(), out.status));
            }
            let dir = String::from_utf8_lossy(&out.stdout).lines().last().unwrap_or_default().trim().to_string();
            let path = PathBuf::from(dir).join("kube-scheduler");
            if !path.is_file() {
                return Err(format!("e2e/build.sh inprocess {minor} printed no directory with kube-scheduler"));
            }
            Ok(path)
        })
        .clone();
    skip_without_go(built, &format!("{test} (the in-process kube-scheduler, Kubernetes {minor})"))
}

/// kube-scheduler v1.22.17's Policy oracle (`e2e/build.sh policy-oracle`), built once per test
/// process; `None` (saying so) when Go is not installed and the run does not require it.
pub fn policy_oracle(test: &str) -> Option<PathBuf> {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let built = BUILT.get_or_init(|| build_tool("policy-oracle", "oracle")).clone();
    skip_without_go(built, &format!("{test} (kube-scheduler v1.22 Policy oracle)"))
}

/// helm (`e2e/build.sh helm`: helm.sh/helm/v4 at e2e/helm/go.mod's version), built once per test
/// process; `None` (saying so) when Go is not installed and the run does not require it.
pub fn helm(test: &str) -> Option<PathBuf> {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    skip_without_go(BUILT.get_or_init(|| build_tool("helm", "helm")).clone(), &format!("{test} (helm)"))
}

/// `e2e/build.sh <arg>`, and the file `file` in the directory it prints.
fn build_tool(arg: &str, file: &str) -> Result<PathBuf, String> {
    go_installed(&format!("{file} ({arg}) is"))?;
    let path = e2e_build(Some(arg))?.join(file);
    if !path.is_file() {
        return Err(format!("e2e/build.sh {arg} printed no directory with {file}"));
    }
    Ok(path)
}

/// `e2e/build.sh --list`: the exact versions of the tested minors, newest first.
pub fn listed_versions() -> Vec<String> {
    let script = crate::workspace_root().as_path().join("e2e/build.sh");
    let out = Command::new("bash")
        .arg(&script)
        .arg("--list")
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", script.display()));
    assert!(out.status.success(), "{} --list: {}", script.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect()
}

/// The Kubernetes minors tested end to end, oldest first, in one list: [`MINORS`] and the
/// `predicate_extender_testing::on_each_minor!(name)` macro, which, beside `async fn name(minor: &str)`, makes a module `name`
/// with a test per minor (`name::v1_35`, ...) awaiting `name("1.35")`, so that a failure names the
/// version. Each minor is a module file of e2e/kube that pins its exact version (`e2e/build.sh
/// --list`; `the_tested_minors_are_e2e_build_sh_s` keeps the two the same). The `$` passed in is
/// the inner macro's own (a macro cannot write `$` itself).
macro_rules! tested_minors {
    ($d:tt $($test:ident => $minor:literal),+) => {
        pub const MINORS: &[&str] = &[$($minor),+];

        #[macro_export]
        macro_rules! on_each_minor {
            ($d name:ident) => {
                mod $d name {
                    $(
                        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                        async fn $test() {
                            super::$d name($minor).await
                        }
                    )+
                }
            };
        }
    };
}

tested_minors!($ v1_35 => "1.35", v1_36 => "1.36", v1_37 => "1.37");
