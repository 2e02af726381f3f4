//! helm (built by `e2e/build.sh helm`) for the chart's tests: its configuration, cache and data
//! directories in a directory of its own (not the user's), run from the repository's root, with
//! `NO_PROXY` for the test clusters' addresses and, against a cluster, its admin kubeconfig.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use super::binaries;

#[derive(Clone)]
pub struct Helm {
    binary: PathBuf,
    home: Arc<tempfile::TempDir>,
    kubeconfig: Option<PathBuf>,
}

impl Helm {
    /// helm, built on first use; `None` (saying so) when Go is missing and the run does not require it.
    pub fn new(test: &str) -> Option<Helm> {
        let binary = binaries::helm(test)?;
        let home = Arc::new(tempfile::tempdir().unwrap_or_else(|e| panic!("helm's home directory: {e}")));
        Some(Helm { binary, home, kubeconfig: None })
    }

    /// The same helm against the cluster of `kubeconfig`.
    pub fn against(mut self, kubeconfig: &Path) -> Helm {
        self.kubeconfig = Some(kubeconfig.to_path_buf());
        self
    }

    /// `helm ARGS`, as it ended.
    pub fn output(&self, args: &[&str]) -> Output {
        let home = self.home.path();
        let mut command = Command::new(&self.binary);
        command
            .current_dir(crate::workspace_root())
            .env("HELM_CONFIG_HOME", home.join("config"))
            .env("HELM_CACHE_HOME", home.join("cache"))
            .env("HELM_DATA_HOME", home.join("data"))
            .env("NO_PROXY", super::process::NO_PROXY)
            .env("no_proxy", super::process::NO_PROXY);
        if let Some(kubeconfig) = &self.kubeconfig {
            command.arg(format!("--kubeconfig={}", kubeconfig.display()));
        }
        command.args(args).output().unwrap_or_else(|e| panic!("{}: {e}", self.binary.display()))
    }

    /// `helm ARGS`, which must succeed: its standard output.
    pub fn run(&self, args: &[&str]) -> String {
        let out = self.output(args);
        let text = |b: &[u8]| String::from_utf8_lossy(b).to_string();
        assert!(out.status.success(), "helm {}: {}{}", args.join(" "), text(&out.stdout), text(&out.stderr));
        text(&out.stdout)
    }
}
