//! `gen-cluster`: writes a synthetic cluster of realistic API objects (the
//! [`api_objects`] generator, shaped by [`cluster_shape`]) as a snapshot file, the pod waiting to
//! be scheduled, or a complete `/filter` request for it, the same for the same flags and seed.
//! Benchmarks and `bench/load.sh` measure these; [`generate`] renders the same cluster as model
//! objects for benchmarks, scale tests and examples.

pub mod api_objects;
pub mod cli;
pub mod cluster_shape;
pub mod generate;
pub mod write;

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

pub use generate::ClusterSpec;
pub use write::ArgsMode;

/// What to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// The cluster, as a snapshot file.
    Cluster,
    /// The pod waiting to be scheduled (a Pod object).
    PendingPod,
    /// A complete /filter (and /prioritize) request body for the pending pod, with this many
    /// candidate nodes spread evenly over the cluster (every node when `None`).
    ExtenderArgs { mode: ArgsMode, candidates: Option<usize> },
}

/// Writes `output` for the cluster `spec` into `out`; `Ok` is a line saying what was written, `Err`
/// the message.
pub fn run(spec: &ClusterSpec, output: Output, out: &Path) -> Result<String, String> {
    let what = match output {
        Output::PendingPod => {
            write_file(out, |w| write::write_pending_pod(w, spec))?;
            "the pending pod".to_string()
        }
        Output::ExtenderArgs { mode, candidates } => {
            let count = candidates.unwrap_or(spec.nodes).min(spec.nodes);
            write_file(out, |w| write::write_extender_args(w, spec, mode, count))?;
            let form = match mode {
                ArgsMode::NodeNames => "NodeNames",
                ArgsMode::Nodes => "Nodes",
            };
            format!("ExtenderArgs with {count} {form}")
        }
        Output::Cluster => {
            write_file(out, |w| write::write_snapshot(w, spec))?;
            let controllers = api_objects::controllers(spec).len();
            format!(
                "{} nodes, {} pods ({} nominated), {controllers} Services and ReplicaSets",
                spec.nodes,
                spec.nodes * spec.pods_per_node,
                spec.nominated
            )
        }
    };
    let bytes = std::fs::metadata(out).map(|m| m.len()).unwrap_or(0);
    Ok(format!("wrote {}: {what}, {bytes} bytes", out.display()))
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

    #[test]
    fn an_unwritable_path_is_a_message_and_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("missing-dir").join("c.json");
        let spec = ClusterSpec { nodes: 2, ..ClusterSpec::default() };
        let e = run(&spec, Output::Cluster, &out).unwrap_err();
        assert!(e.contains("cannot create") && e.contains("missing-dir"), "{e}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing left behind");
    }
}
