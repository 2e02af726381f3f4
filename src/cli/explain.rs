//! `predicate-extender explain`: its flags, the request they make, and which output is printed.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use predicate_extender::explain::table::Style;
use predicate_extender::explain::view::View;
use predicate_extender::explain::{explain, ExplainError, ExplainRequest};

use super::{ClusterArgs, KubeSchedulerArgs};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ExplainFormat {
    /// Aligned tables, coloured on a terminal (not with NO_COLOR).
    Table,
    /// The whole report as JSON (docs/explain-json.md).
    Json,
}

#[derive(Debug, Args)]
pub(crate) struct ExplainArgs {
    /// The pod to explain: a file holding one Pod, YAML or JSON.
    #[arg(long, value_name = "FILE")]
    pub pod: PathBuf,

    #[command(flatten)]
    pub cluster: ClusterArgs,

    #[command(flatten)]
    pub kube_scheduler: KubeSchedulerArgs,

    /// A scheduler Policy file (JSON or YAML); `alwaysCheckAllPredicates` is turned on regardless.
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,

    /// Show every predicate on this node, both passes (repeatable). The summary and the ranking
    /// still cover the whole cluster; in JSON, `nodes` keeps only these.
    #[arg(long = "node", value_name = "NAME")]
    pub nodes: Vec<String>,

    /// How many of the feasible nodes the ranking shows, best first [default: 10].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub top: Option<u32>,

    /// Print the full report: every predicate on every node, and a score column per feasible node.
    #[arg(long)]
    pub all: bool,

    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: ExplainFormat,
}

impl ExplainArgs {
    /// The request; `Err` when no cluster source is given or found.
    pub(crate) fn to_request(&self) -> Result<ExplainRequest, ExplainError> {
        let source = self.cluster.source().map_err(ExplainError::Live)?;
        Ok(ExplainRequest {
            pod_file: self.pod.clone(),
            source,
            scheduler_version: self.kube_scheduler.kube_scheduler_version,
            scheduler_config: self.kube_scheduler.scheduler_config.clone(),
            policy: self.policy.clone(),
            nodes: self.view().nodes,
        })
    }

    fn view(&self) -> View {
        View { nodes: self.nodes.clone(), top: self.top.map(|n| n as usize), all: self.all }
    }
}

fn flag(name: &str) -> String {
    format!("--{name}")
}

/// What `explain` prints on stdout.
pub(crate) fn output(args: &ExplainArgs, style: Style) -> Result<String, ExplainError> {
    let view = args.view();
    view.check(args.format == ExplainFormat::Json, &flag).map_err(ExplainError::Flags)?;
    let report = explain(&args.to_request()?)?;
    Ok(match args.format {
        ExplainFormat::Table => view.render(&report, style, &flag),
        ExplainFormat::Json => {
            let mut text = serde_json::to_string_pretty(&report).unwrap_or_default();
            text.push('\n');
            text
        }
    })
}
