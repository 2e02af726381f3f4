//! The real Kubernetes binaries: built once per test process by `e2e/build.sh` (which skips the
//! build when its version-keyed directory is complete and locks against a concurrent build).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Set to `require` (as `.ci/run` does, and as any CI=true run does) to fail instead of skipping
/// when Go is missing.
pub const REQUIRE_ENV: &str = "PREDICATE_EXTENDER_E2E";

/// Where `e2e/build.sh` put etcd, kube-apiserver, kube-scheduler and kube-controller-manager.
#[derive(Debug, Clone)]
pub struct Binaries {
    pub dir: PathBuf,
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

/// The binaries, built on first use; `None` (after saying so on the terminal, past the test
/// harness's capture) when Go is not installed and the run does not require the end-to-end tests.
pub fn binaries(test: &str) -> Option<Binaries> {
    match built() {
        Ok(b) => Some(b.clone()),
        Err(why) if why.starts_with(NO_GO) && !required() => {
            // Straight to the terminal: a skipped end-to-end test must be seen, not captured.
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED end-to-end test {test}: {why} (set {REQUIRE_ENV}=require or CI=true to make this a failure)"
            );
            None
        }
        Err(why) => panic!("end-to-end test {test}: {why}"),
    }
}

/// The binaries, built on first use, or why they could not be.
pub fn built() -> &'static Result<Binaries, String> {
    static BUILT: OnceLock<Result<Binaries, String>> = OnceLock::new();
    BUILT.get_or_init(build)
}

const NO_GO: &str = "Go is not installed";

fn build() -> Result<Binaries, String> {
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
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("{}: {e}", script.display()))?;
    if !out.status.success() {
        return Err(format!("{} failed ({})", script.display(), out.status));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let dir = stdout.lines().last().map(str::trim).unwrap_or_default();
    if dir.is_empty() {
        return Err(format!("{} printed no directory", script.display()));
    }
    Ok(Binaries { dir: PathBuf::from(dir) })
}
