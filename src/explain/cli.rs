//! The `explain` subcommand's flags and output.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::cluster::source::kube::default_connection;
use crate::explain::table::{render_table, Style};
use crate::explain::{explain, ExplainError, ExplainRequest, ExplainSource};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExplainFormat {
    /// An aligned table, coloured on a terminal (not with NO_COLOR).
    Table,
    /// The report as JSON (docs/explain-json.md).
    Json,
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The pod to explain: a file holding one Pod, YAML or JSON.
    #[arg(long, value_name = "FILE")]
    pub pod: PathBuf,

    /// The cluster as Kubernetes objects, as for `serve`.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["demo", "kubeconfig"])]
    pub cluster_snapshot: Option<PathBuf>,

    /// The embedded demo cluster.
    #[arg(long, conflicts_with = "kubeconfig")]
    pub demo: bool,

    /// A live cluster: list it once through this kubeconfig's current context. Inside a pod,
    /// with no source flag, the pod's service account is used.
    #[arg(long, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,

    /// A scheduler Policy file (JSON or YAML); `alwaysCheckAllPredicates` is turned on regardless.
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,

    /// Explain this node only.
    #[arg(long, value_name = "NAME")]
    pub node: Option<String>,

    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: ExplainFormat,
}

impl ExplainArgs {
    /// The request; `Err` when no cluster source is given or found.
    pub fn to_request(&self) -> Result<ExplainRequest, ExplainError> {
        let source = match (&self.cluster_snapshot, self.demo) {
            (Some(path), _) => ExplainSource::File(path.clone()),
            (None, true) => ExplainSource::Demo,
            (None, false) => match default_connection(self.kubeconfig.as_deref()) {
                Some(connection) => ExplainSource::Kube(connection),
                None => return Err(ExplainError::Live(crate::cli::NO_SOURCE.to_string())),
            },
        };
        Ok(ExplainRequest { pod_file: self.pod.clone(), source, policy: self.policy.clone(), node: self.node.clone() })
    }
}

/// What `explain` prints on stdout.
pub fn output(args: &ExplainArgs, style: Style) -> Result<String, ExplainError> {
    let report = explain(&args.to_request()?)?;
    Ok(match args.format {
        ExplainFormat::Table => render_table(&report, style),
        ExplainFormat::Json => {
            let mut text = serde_json::to_string_pretty(&report).unwrap_or_default();
            text.push('\n');
            text
        }
    })
}
