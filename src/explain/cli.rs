//! The `explain` subcommand's flags and output.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::cli::ClusterArgs;
use crate::explain::table::{render_table, Style};
use crate::explain::{explain, ExplainError, ExplainRequest};

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

    #[command(flatten)]
    pub cluster: ClusterArgs,

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
        let source = self.cluster.choice().map_err(ExplainError::Live)?;
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
