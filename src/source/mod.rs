//! Where the cluster model comes from: a snapshot file, the embedded demo cluster, a model built in
//! memory, or a live cluster's API server. [`ClusterSource`] is the one type `serve` and `explain`
//! both take, and [`ClusterSource::open`] the one place a source becomes a model.

pub mod kube;

use std::path::PathBuf;

use predicate_engine::cluster::source::{demo, load_snapshot, SourceError};
use predicate_engine::cluster::{SchedulerVersion, Snapshot};

use kube::Connection;

/// Where the cluster model comes from.
#[derive(Debug, Clone)]
pub enum ClusterSource {
    /// A file of Kubernetes objects (`--cluster-snapshot`).
    File(PathBuf),
    /// The embedded demo cluster (`--demo`).
    Demo,
    /// A model built in memory (tests, tools).
    Snapshot(Box<Snapshot>),
    /// A live cluster: its API server (`--kubeconfig`, or the pod's service account).
    Kube(Connection),
}

/// A source, opened: the model of a fixed source, or the API server of a live cluster, which
/// `serve` lists and watches and `explain` lists once.
// One value per load, moved once: its size does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Opened<'a> {
    Fixed(Snapshot),
    Live(&'a Connection),
}

impl ClusterSource {
    /// The one loader of `serve` and `explain`: reads a file or the demo cluster into a model
    /// whose pods are counted as `version`'s kube-scheduler counts them (an in-memory model is
    /// copied, counted as it was built); a live cluster is handed back as its connection.
    pub fn open(&self, version: SchedulerVersion) -> Result<Opened<'_>, SourceError> {
        Ok(match self {
            ClusterSource::File(path) => Opened::Fixed(load_snapshot(path, version)?),
            ClusterSource::Demo => Opened::Fixed(demo::demo_objects()?.into_snapshot_for(version)),
            ClusterSource::Snapshot(snapshot) => Opened::Fixed((**snapshot).clone()),
            ClusterSource::Kube(connection) => Opened::Live(connection),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_open() {
        let Opened::Fixed(demo) = ClusterSource::Demo.open(SchedulerVersion::default()).unwrap() else {
            panic!("the demo is fixed")
        };
        assert_eq!(demo.node_count(), 6);
        let in_memory = ClusterSource::Snapshot(Box::new(demo));
        assert!(
            matches!(in_memory.open(SchedulerVersion::default()).unwrap(), Opened::Fixed(s) if s.node_count() == 6)
        );
        let missing =
            ClusterSource::File(PathBuf::from("/nonexistent/cluster.yaml")).open(SchedulerVersion::V1_35).unwrap_err();
        assert!(missing.to_string().starts_with("/nonexistent/cluster.yaml: cannot read"), "{missing}");
        let live = ClusterSource::Kube(Connection::InCluster);
        assert!(matches!(live.open(SchedulerVersion::default()).unwrap(), Opened::Live(Connection::InCluster)));
    }
}
