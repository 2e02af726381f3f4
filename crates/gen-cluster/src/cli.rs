//! `gen-cluster`'s flags, and the generator's spec and output they make: the binary's command
//! line, public so that a test can replay a documented command as the binary runs it.

use std::path::PathBuf;

use clap::{Parser, ValueEnum};

use crate::{ArgsMode, ClusterSpec, Output};

/// Writes a synthetic cluster of realistic API objects as a snapshot file, the pod waiting to be
/// scheduled, or a complete /filter request for it: the same flags and seed write the same bytes.
#[derive(Debug, Parser)]
#[command(name = "gen-cluster", version)]
#[command(group(clap::ArgGroup::new("what").args(["pending_pod", "extender_args"])))]
pub struct GenClusterArgs {
    /// Nodes in the cluster.
    #[arg(long, default_value_t = 5000, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub nodes: u32,

    /// Pods running on each node.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(0..=110))]
    pub pods_per_node: u32,

    /// Zones (`topology.kubernetes.io/zone`), nodes assigned round-robin.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub zones: u32,

    /// How many of the pods are nominated to their node (`status.nominatedNodeName`) instead of
    /// running on it.
    #[arg(long, default_value_t = 0)]
    pub nominated: u64,

    /// Percentage of pods with required anti-affinity to their own app per host.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(0..=100))]
    pub anti_affinity_percent: u32,

    /// Percentage of nodes tainted `dedicated=batch:NoSchedule`.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(0..=100))]
    pub tainted_percent: u32,

    /// Seed of the generator: the same flags and seed write the same bytes.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Write the pod waiting to be scheduled (a Pod object) instead of the cluster.
    #[arg(long)]
    pub pending_pod: bool,

    /// Write a complete /filter (and /prioritize) request body for the pending pod instead of the
    /// cluster, with the candidates as node names or as full node objects.
    #[arg(long, value_enum, value_name = "MODE")]
    pub extender_args: Option<ArgsModeFlag>,

    /// With --extender-args: how many candidate nodes, spread evenly over the cluster (default:
    /// every node). kube-scheduler sends 500 of 5,000 nodes by default (percentageOfNodesToScore).
    #[arg(long, requires = "extender_args", value_parser = clap::value_parser!(u32).range(1..))]
    pub candidates: Option<u32>,

    /// The file to write (it is written next to it first and renamed when complete).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
}

impl GenClusterArgs {
    /// The cluster's shape; `Err` names a flag out of range.
    pub fn spec(&self) -> Result<ClusterSpec, String> {
        let nodes = self.nodes as usize;
        let pods_per_node = self.pods_per_node as usize;
        let pods = nodes * pods_per_node;
        if self.nominated > pods as u64 {
            return Err(format!("--nominated {}: the cluster has only {pods} pods", self.nominated));
        }
        Ok(ClusterSpec {
            nodes,
            pods_per_node,
            zones: self.zones as usize,
            anti_affinity_percent: self.anti_affinity_percent,
            tainted_percent: self.tainted_percent,
            nominated: self.nominated as usize,
            seed: self.seed,
        })
    }

    /// What the flags ask to write.
    pub fn output(&self) -> Output {
        match (self.pending_pod, self.extender_args) {
            (true, _) => Output::PendingPod,
            (false, Some(mode)) => {
                Output::ExtenderArgs { mode: mode.into(), candidates: self.candidates.map(|c| c as usize) }
            }
            (false, None) => Output::Cluster,
        }
    }
}

/// `--extender-args`: how the candidate nodes are sent in a filter/prioritize request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ArgsModeFlag {
    /// `NodeNames`, as kube-scheduler sends them to a `nodeCacheCapable` extender.
    NodeNames,
    /// `Nodes`, the full node objects.
    Nodes,
}

impl From<ArgsModeFlag> for ArgsMode {
    fn from(flag: ArgsModeFlag) -> Self {
        match flag {
            ArgsModeFlag::NodeNames => ArgsMode::NodeNames,
            ArgsModeFlag::Nodes => ArgsMode::Nodes,
        }
    }
}

/// Writes what the flags ask for; `Ok` is a line saying what was written, `Err` the message.
pub fn run(args: &GenClusterArgs) -> Result<String, String> {
    crate::run(&args.spec()?, args.output(), &args.out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(argv: &[&str]) -> Result<GenClusterArgs, String> {
        GenClusterArgs::try_parse_from(std::iter::once("gen-cluster").chain(argv.iter().copied()))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn bad_numbers_and_combinations_are_refused_with_the_flag_named() {
        for (argv, flag) in [
            (vec!["--out", "x", "--nodes", "0"], "--nodes"),
            (vec!["--out", "x", "--nodes", "many"], "--nodes"),
            (vec!["--out", "x", "--pods-per-node", "111"], "--pods-per-node"),
            (vec!["--out", "x", "--tainted-percent", "101"], "--tainted-percent"),
            (vec!["--out", "x", "--candidates", "5"], "--extender-args"),
            (vec!["--out", "x", "--pending-pod", "--extender-args", "nodes"], "--extender-args"),
            (vec!["--out", "x", "--extender-args", "both"], "--extender-args"),
        ] {
            let e = parse(&argv).map(|_| ()).unwrap_err();
            assert!(e.contains(flag), "{argv:?}: {e}");
        }
        let names = parse(&["--out", "x", "--extender-args", "node-names", "--candidates", "5"]).unwrap();
        assert_eq!(names.output(), Output::ExtenderArgs { mode: ArgsMode::NodeNames, candidates: Some(5) });
        assert_eq!(parse(&["--out", "x", "--pending-pod"]).unwrap().output(), Output::PendingPod);
        let too_many = parse(&["--out", "x", "--nodes", "2", "--pods-per-node", "3", "--nominated", "7"]).unwrap();
        assert!(too_many.spec().unwrap_err().contains("--nominated 7"));
    }

    #[test]
    fn an_unwritable_path_is_a_message_and_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("missing-dir").join("c.json");
        let args = parse(&["--nodes", "2", "--out", out.to_str().unwrap()]).unwrap();
        assert_eq!(args.output(), Output::Cluster);
        let e = run(&args).unwrap_err();
        assert!(e.contains("cannot create") && e.contains("missing-dir"), "{e}");
    }
}
