//! `predicate-extender scheduler-config [--policy FILE]`: prints kube-scheduler's configuration
//! with its own plugins that the Policy replaces turned off (`predicate_extender::scheduler_config`).

use std::path::PathBuf;

use clap::Args;

use predicate_engine::policy::{read, PolicyError};
use predicate_extender::scheduler_config::{disabled, kept, policy_plugins, render};

#[derive(Debug, Args)]
pub(crate) struct SchedulerConfigArgs {
    /// The scheduler Policy file the extender serves (JSON or YAML); without it, the default
    /// predicates and priorities, as `serve` runs them without one.
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
}

/// The configuration text, or why the Policy could not be read.
pub(crate) fn output(args: &SchedulerConfigArgs) -> Result<String, PolicyError> {
    let (file, bytes, command) = match &args.policy {
        Some(path) => (
            path.display().to_string(),
            read(path)?,
            format!("predicate-extender scheduler-config --policy {}", path.display()),
        ),
        None => (
            "the default Policy".to_string(),
            br#"{"kind": "Policy", "apiVersion": "v1"}"#.to_vec(),
            "predicate-extender scheduler-config".to_string(),
        ),
    };
    let plugins = policy_plugins(&file, &bytes)?;
    Ok(render(&command, &disabled(&plugins), &kept(&plugins)))
}
