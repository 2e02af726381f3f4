//! `predicate-extender scheduler-config [--policy FILE] [--in-process [--policy-in-pod PATH]]`:
//! prints kube-scheduler's configuration with its own plugins that the Policy replaces turned off
//! (`predicate_extender::scheduler_config`), for the extender or for the in-process kube-scheduler.

use std::path::PathBuf;

use clap::Args;

use predicate_engine::policy::{read, PolicyError};
use predicate_extender::scheduler_config::{policy_plugins, render, Engine, DEFAULT_POLICY};

#[derive(Debug, Args)]
pub(crate) struct SchedulerConfigArgs {
    /// The scheduler Policy file the extender serves (JSON or YAML); without it, the default
    /// predicates and priorities, as `serve` runs them without one.
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// The configuration of the in-process kube-scheduler (docs/in-process.md): the PredicateEngine
    /// plugin instead of the extender, and the filters that count placed pods off too.
    #[arg(long)]
    pub in_process: bool,
    /// With --in-process: the Policy's path where kube-scheduler reads it (the plugin's `policy`
    /// argument); by default the --policy path as given.
    #[arg(long, value_name = "PATH", requires_all = ["in_process", "policy"])]
    pub policy_in_pod: Option<String>,
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
            DEFAULT_POLICY.to_vec(),
            "predicate-extender scheduler-config".to_string(),
        ),
    };
    let plugins = policy_plugins(&file, &bytes)?;
    if !args.in_process {
        return Ok(render(&command, &plugins, Engine::Extender));
    }
    let mut command = format!("{command} --in-process");
    if let Some(path) = &args.policy_in_pod {
        command.push_str(&format!(" --policy-in-pod {path}"));
    }
    let path = args.policy_in_pod.clone().or_else(|| args.policy.as_ref().map(|p| p.display().to_string()));
    Ok(render(&command, &plugins, Engine::InProcess { policy: path.as_deref() }))
}
