//! The command-line parts the examples share: a generated cluster's size, and a run of an oracle
//! comparison.
#![allow(dead_code)] // each example uses a different part of this

use std::path::PathBuf;

use clap::Args;
use gen_cluster::ClusterSpec;

/// A generated cluster's size: `[NODES] [PODS_PER_NODE]`, gen-cluster's shape otherwise.
#[derive(Debug, Args)]
pub struct ClusterSize {
    /// Nodes in the cluster.
    #[arg(default_value_t = 5000, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    nodes: u32,
    /// Pods on each node.
    #[arg(default_value_t = 20, value_parser = clap::value_parser!(u32).range(0..=110))]
    pods_per_node: u32,
}

impl ClusterSize {
    pub fn spec(&self) -> ClusterSpec {
        ClusterSpec { nodes: self.nodes as usize, pods_per_node: self.pods_per_node as usize, ..ClusterSpec::default() }
    }
}

/// A run of an oracle comparison: the seeds, the oracle, what is printed.
#[derive(Debug, Args)]
pub struct OracleRun {
    /// How many cases: the seeds `seed .. seed+cases`.
    #[arg(long, default_value_t = 1000)]
    pub cases: u64,
    /// The first seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The oracle binary (default: the one `e2e/build.sh` builds, built if missing).
    #[arg(long, value_name = "PATH")]
    pub oracle: Option<PathBuf>,
    /// Compare the reasons too.
    #[arg(long)]
    pub reasons: bool,
    /// How many disagreeing cases to print.
    #[arg(long, default_value_t = 3)]
    pub show: usize,
    /// Cases sent to the oracle at once.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..))]
    pub batch: u64,
    /// Both sides' answers on the case of one oracle input line (as a disagreeing case prints).
    #[arg(long, value_name = "FILE", conflicts_with = "print")]
    pub replay: Option<PathBuf>,
    /// Print the case of this seed as the oracle's input line, and nothing else.
    #[arg(long, value_name = "SEED")]
    pub print: Option<u64>,
}
