//! Writes the generated objects as JSON, object by object: a 5,000-node cluster is about 660 MB
//! and is never held whole. Objects are generated in parallel in chunks and written in order.

use std::io::{self, Write};

use rayon::prelude::*;
use serde_json::{json, Value};

use crate::api_objects::{cluster_node, cluster_pod, controllers, pending_pod};
use crate::generate::{node_name, ClusterSpec};

/// How the candidate nodes are sent in a filter/prioritize request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgsMode {
    /// `NodeNames`, as kube-scheduler sends them to a `nodeCacheCapable` extender.
    NodeNames,
    /// `Nodes`, the full node objects.
    Nodes,
}

/// Objects generated per parallel chunk: large enough to keep the pool busy, small enough that a
/// chunk of pods (a few MB) stays cheap to hold.
const CHUNK: usize = 256;

/// Writes `items` in order, generating `CHUNK` of them at a time in parallel; each item is preceded
/// by a comma except the first.
fn write_items(
    out: &mut impl Write,
    count: usize,
    first: &mut bool,
    item: impl Fn(usize) -> Value + Sync,
) -> io::Result<()> {
    for start in (0..count).step_by(CHUNK) {
        let end = (start + CHUNK).min(count);
        let chunk: Vec<Vec<u8>> = (start..end)
            .into_par_iter()
            .map(|k| serde_json::to_vec(&item(k)).map_err(io::Error::other))
            .collect::<io::Result<_>>()?;
        for bytes in chunk {
            if !std::mem::take(first) {
                out.write_all(b",\n")?;
            }
            out.write_all(&bytes)?;
        }
    }
    Ok(())
}

/// The cluster as a `List` (what `serve --cluster-snapshot` reads): every node, every pod, then
/// the Services and ReplicaSets.
pub fn write_snapshot(out: &mut impl Write, spec: &ClusterSpec) -> io::Result<()> {
    out.write_all(b"{\"kind\":\"List\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"\"},\"items\":[\n")?;
    let mut first = true;
    write_items(out, spec.nodes, &mut first, |i| cluster_node(spec, i))?;
    let per_node = spec.pods_per_node.max(1);
    write_items(out, spec.nodes * spec.pods_per_node, &mut first, |g| cluster_pod(spec, g / per_node, g % per_node))?;
    let others = controllers(spec);
    write_items(out, others.len(), &mut first, |k| others[k].clone())?;
    out.write_all(b"\n]}\n")
}

/// The pending pod as a `Pod` object.
pub fn write_pending_pod(out: &mut impl Write, spec: &ClusterSpec) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &pending_pod(spec)).map_err(io::Error::other)?;
    out.write_all(b"\n")
}

/// The indexes of `count` nodes spread evenly over the cluster (every node when `count` is at
/// least the cluster's size): kube-scheduler sends extenders the nodes its own filter kept.
pub fn candidate_indexes(spec: &ClusterSpec, count: usize) -> Vec<usize> {
    let count = count.min(spec.nodes);
    (0..count).map(|k| k * spec.nodes / count.max(1)).collect()
}

/// An object as kube-scheduler's Go client encodes it from its informer cache: no `kind` and
/// `apiVersion` (the cache's objects have an empty TypeMeta, which encoding/json omits).
fn without_type_meta(mut object: Value) -> Value {
    if let Some(map) = object.as_object_mut() {
        map.remove("kind");
        map.remove("apiVersion");
    }
    object
}

/// A complete `/filter` (or `/prioritize`) body, `ExtenderArgs`, for the pending pod and `count`
/// candidate nodes (see [`candidate_indexes`]).
pub fn write_extender_args(out: &mut impl Write, spec: &ClusterSpec, mode: ArgsMode, count: usize) -> io::Result<()> {
    let indexes = candidate_indexes(spec, count);
    out.write_all(b"{\"Pod\":")?;
    serde_json::to_writer(&mut *out, &without_type_meta(pending_pod(spec))).map_err(io::Error::other)?;
    match mode {
        ArgsMode::NodeNames => {
            let names: Vec<String> = indexes.iter().map(|&i| node_name(i)).collect();
            out.write_all(b",\"NodeNames\":")?;
            serde_json::to_writer(&mut *out, &json!(names)).map_err(io::Error::other)?;
        }
        ArgsMode::Nodes => {
            out.write_all(b",\"Nodes\":{\"metadata\":{},\"items\":[")?;
            let mut first = true;
            write_items(out, indexes.len(), &mut first, |k| without_type_meta(cluster_node(spec, indexes[k])))?;
            out.write_all(b"]}")?;
        }
    }
    out.write_all(b"}\n")
}

/// [`write_extender_args`] into memory, for benchmarks and tests.
pub fn extender_args(spec: &ClusterSpec, mode: ArgsMode, count: usize) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    write_extender_args(&mut out, spec, mode, count)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_are_spread_evenly_and_never_repeat() {
        let spec = ClusterSpec { nodes: 5000, ..ClusterSpec::default() };
        let picked = candidate_indexes(&spec, 500);
        assert_eq!(picked.len(), 500);
        assert_eq!(&picked[..3], &[0, 10, 20]);
        assert_eq!(candidate_indexes(&spec, 9999).len(), 5000);
        let small = ClusterSpec { nodes: 7, ..ClusterSpec::default() };
        let mut three = candidate_indexes(&small, 3);
        three.dedup();
        assert_eq!(three, vec![0, 2, 4]);
    }
}
