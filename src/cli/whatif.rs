//! `predicate-extender whatif`: its flags, the comparison they ask for, and what is printed.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use predicate_engine::engine::evaluator::default_parallelism;
use predicate_engine::engine::{CancelFlag, Evaluator, Plan};
use predicate_engine::policy::Overrides;
use predicate_extender::explain::source::load_snapshot;
use predicate_extender::explain::table::Style;
use predicate_extender::scheduler_config::SHIPPED_SCHEDULER_NAME;
use predicate_extender::whatif::render::render;
use predicate_extender::whatif::{evaluate, Input, Source, WhatifError, DEFAULT_SAMPLE};

use super::{ClusterArgs, KubeSchedulerArgs};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum WhatifFormat {
    /// The summary and tables, coloured on a terminal (not with NO_COLOR).
    Table,
    /// The whole report as JSON (docs/whatif.md).
    Json,
}

#[derive(Debug, Args)]
pub(crate) struct WhatifArgs {
    /// The new scheduler Policy file (JSON or YAML).
    #[arg(long, value_name = "FILE")]
    pub policy: PathBuf,

    /// The Policy in force now; without it, the default predicates and priorities (no Policy).
    #[arg(long, value_name = "FILE")]
    pub against: Option<PathBuf>,

    #[command(flatten)]
    pub cluster: ClusterArgs,

    #[command(flatten)]
    pub kube_scheduler: KubeSchedulerArgs,

    /// Only the pods of this scheduler (`spec.schedulerName`; pods without one are
    /// default-scheduler's).
    #[arg(long, value_name = "NAME", default_value = SHIPPED_SCHEDULER_NAME)]
    pub scheduler: String,

    /// How many running pods are scored on the whole cluster under both Policies, for how the
    /// ranking moves.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_SAMPLE)]
    pub sample: usize,

    /// Print every pod that changes and every predicate.
    #[arg(long)]
    pub all: bool,

    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: WhatifFormat,
}

fn load(flag: &'static str, path: &std::path::Path) -> Result<Plan, WhatifError> {
    predicate_engine::policy::load(path, Overrides::default())
        .map(|l| l.plan)
        .map_err(|source| WhatifError::Policy { flag, source })
}

/// What `whatif` prints on stdout.
pub(crate) fn output(args: &WhatifArgs, style: Style) -> Result<String, WhatifError> {
    let new = load("--policy", &args.policy)?;
    let (current, current_name) = match &args.against {
        Some(path) => (load("--against", path)?, path.display().to_string()),
        None => (Plan::default_plan(), "default, no Policy".to_string()),
    };
    // Before the cluster: a bad file fails before a live cluster is listed.
    let kube_scheduler = args.kube_scheduler.config()?;
    let source = args.cluster.source().map_err(WhatifError::Live)?;
    let snapshot = load_snapshot(&source, args.kube_scheduler.kube_scheduler_version).map_err(WhatifError::from)?;
    let evaluator = Evaluator::new(default_parallelism()).map_err(|e| WhatifError::Evaluator(e.to_string()))?;
    let input = Input {
        current: Source { plan: &current, name: current_name },
        new: Source { plan: &new, name: args.policy.display().to_string() },
        snapshot: &snapshot,
        scheduler: &args.scheduler,
        sample: args.sample,
        kube_scheduler: &kube_scheduler,
    };
    let report = evaluate(&input, &evaluator, &CancelFlag::new())?;
    Ok(match args.format {
        WhatifFormat::Table => render(&report, args.all, style, &|name| format!("--{name}")),
        WhatifFormat::Json => {
            let mut text = serde_json::to_string_pretty(&report).unwrap_or_default();
            text.push('\n');
            text
        }
    })
}
