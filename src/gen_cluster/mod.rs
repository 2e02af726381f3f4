//! `predicate-extender gen-cluster`: writes a synthetic cluster of realistic API objects (the
//! [`api_objects`] generator, shaped by [`cluster_shape`]) as a snapshot file, the pod waiting to
//! be scheduled, or a complete `/filter` request for it, the same for the same flags and seed.
//! Benchmarks and `bench/load.sh` measure these; [`generate`] renders the same cluster as model
//! objects for benchmarks, scale tests and examples.

pub mod api_objects;
pub mod cluster_shape;
pub mod generate;
pub mod write;

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use clap::Args;

use generate::ClusterSpec;
pub use write::ArgsMode;

#[derive(Debug, Args)]
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
    pub extender_args: Option<ArgsMode>,

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
}

/// Writes what the flags ask for; `Ok` is a line saying what was written, `Err` the message.
pub fn run(args: &GenClusterArgs) -> Result<String, String> {
    let spec = args.spec()?;
    let what = if args.pending_pod {
        write_file(&args.out, |w| write::write_pending_pod(w, &spec))?;
        "the pending pod".to_string()
    } else if let Some(mode) = args.extender_args {
        let count = args.candidates.map_or(spec.nodes, |c| c as usize).min(spec.nodes);
        write_file(&args.out, |w| write::write_extender_args(w, &spec, mode, count))?;
        let form = match mode {
            ArgsMode::NodeNames => "NodeNames",
            ArgsMode::Nodes => "Nodes",
        };
        format!("ExtenderArgs with {count} {form}")
    } else {
        write_file(&args.out, |w| write::write_snapshot(w, &spec))?;
        let controllers = crate::gen_cluster::api_objects::controllers(&spec).len();
        format!(
            "{} nodes, {} pods ({} nominated), {controllers} Services and ReplicaSets",
            spec.nodes,
            spec.nodes * spec.pods_per_node,
            spec.nominated
        )
    };
    let bytes = std::fs::metadata(&args.out).map(|m| m.len()).unwrap_or(0);
    Ok(format!("wrote {}: {what}, {bytes} bytes", args.out.display()))
}

/// Writes through a buffer into `FILE.partial`, renamed to `FILE` once complete, so an
/// interrupted run never leaves a truncated file under the real name.
fn write_file(path: &Path, write: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>) -> Result<(), String> {
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    let file = File::create(&partial).map_err(|e| format!("cannot create {}: {e}", partial.display()))?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let written = write(&mut out).and_then(|()| out.flush()).and_then(|()| out.get_ref().sync_all());
    if let Err(e) = written {
        let _ = std::fs::remove_file(&partial);
        return Err(format!("cannot write {}: {e}", partial.display()));
    }
    std::fs::rename(&partial, path).map_err(|e| {
        let _ = std::fs::remove_file(&partial);
        format!("cannot rename {} to {}: {e}", partial.display(), path.display())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: GenClusterArgs,
    }

    fn parse(argv: &[&str]) -> Result<GenClusterArgs, String> {
        Wrapper::try_parse_from(std::iter::once("gen").chain(argv.iter().copied()))
            .map(|w| w.args)
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
        let too_many = parse(&["--out", "x", "--nodes", "2", "--pods-per-node", "3", "--nominated", "7"]).unwrap();
        assert!(too_many.spec().unwrap_err().contains("--nominated 7"));
    }

    #[test]
    fn an_unwritable_path_is_a_message_and_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("missing-dir").join("c.json");
        let args = parse(&["--nodes", "2", "--out", out.to_str().unwrap()]).unwrap();
        let e = run(&args).unwrap_err();
        assert!(e.contains("cannot create") && e.contains("missing-dir"), "{e}");
    }
}
