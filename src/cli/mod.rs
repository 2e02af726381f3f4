//! The command line of the binary: `predicate-extender serve|explain|whatif|gen-cluster|scheduler-config ...`, parsed
//! here and turned into the library's configuration (`ServeConfig`, `ExplainRequest`, the
//! generator's spec). The library knows nothing of it.

pub(crate) mod explain;
pub(crate) mod scheduler_config;
pub(crate) mod serve;
pub(crate) mod whatif;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use predicate_engine::cluster::SchedulerVersion;
use predicate_extender::explain::kube_scheduler::{ConfigError, KubeSchedulerConfig};
use predicate_extender::source::kube::default_connection;
use predicate_extender::source::ClusterSource;

#[derive(Debug, Parser)]
#[command(
    name = "predicate-extender",
    version,
    about = "A kube-scheduler extender running the classic scheduling predicates"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

// One value per process, parsed once: its size does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Serve the extender verbs (/filter, /prioritize, /preempt, /bind) and, on the admin
    /// listener, /healthz, /readyz and /metrics.
    Serve(serve::ServeArgs),
    /// Explain why a pod fits each node or not: the summary, the failing nodes by reason, the
    /// best-scored nodes and hints; every predicate on chosen nodes (--node) or all (--all).
    Explain(explain::ExplainArgs),
    /// Print kube-scheduler's configuration with its own plugins that the Policy's predicates and
    /// priorities replace turned off, each commented (docs/operations.md).
    SchedulerConfig(scheduler_config::SchedulerConfigArgs),
    /// Before a Policy change: which pending pods become unschedulable or schedulable, which
    /// running pods would no longer fit where they run, how rejections and the ranking move.
    Whatif(whatif::WhatifArgs),
}

/// Where the cluster comes from: the flags `serve` and `explain` share.
#[derive(Debug, Args)]
pub(crate) struct ClusterArgs {
    /// The cluster as Kubernetes objects: a List as `kubectl get ... -o json|yaml` prints it, or
    /// multi-document YAML.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["demo", "kubeconfig"])]
    pub cluster_snapshot: Option<PathBuf>,

    /// The embedded demo cluster (six nodes in two zones).
    #[arg(long, conflicts_with = "kubeconfig")]
    pub demo: bool,

    /// A live cluster, through this kubeconfig's current context: `serve` watches it and binds
    /// through its API server, `explain` lists it once. Inside a pod, with no source flag, the
    /// pod's service account is used.
    #[arg(long, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,
}

/// The kube-scheduler the extender works beside: the flags `serve`, `explain` and `whatif` share.
#[derive(Debug, Args)]
pub(crate) struct KubeSchedulerArgs {
    /// Its minor (1.35, 1.36 or 1.37): the model counts a pod being resized in place as that
    /// version counts it, and explain runs its default plugins in its order. The shipped manifests
    /// run kube-scheduler v1.37.
    #[arg(long, value_name = "VERSION", default_value_t = SchedulerVersion::default())]
    pub kube_scheduler_version: SchedulerVersion,

    /// Its configuration (a KubeSchedulerConfiguration): which of its own filters run in front of
    /// the extender, for what explain says kube-scheduler reports. Without it: the shipped
    /// config/scheduler-config.yaml, every default filter on; give config/scheduler-config-policy.yaml
    /// for the policy-only overlay.
    #[arg(long, value_name = "FILE")]
    pub scheduler_config: Option<PathBuf>,
}

impl KubeSchedulerArgs {
    /// Its filters in front of the extender.
    pub(crate) fn config(&self) -> Result<KubeSchedulerConfig, ConfigError> {
        KubeSchedulerConfig::load(self.scheduler_config.as_deref())
    }
}

impl ClusterArgs {
    /// The source; `Err` ([`NO_SOURCE`]) when no flag is given and this is not a pod.
    pub(crate) fn source(&self) -> Result<ClusterSource, String> {
        Ok(match (&self.cluster_snapshot, self.demo) {
            (Some(path), _) => ClusterSource::File(path.clone()),
            (None, true) => ClusterSource::Demo,
            (None, false) => match default_connection(self.kubeconfig.as_deref()) {
                Some(connection) => ClusterSource::Kube(connection),
                None => return Err(NO_SOURCE.to_string()),
            },
        })
    }
}

/// What startup says when no cluster source is given and none is found.
pub(crate) const NO_SOURCE: &str =
    "no cluster given: pass --kubeconfig PATH, run inside a pod (KUBERNETES_SERVICE_HOST is \
not set, so this is not one), or use --cluster-snapshot FILE or --demo";
