//! Where `explain` gets the cluster and the pod: a snapshot file, the demo cluster, or the API
//! server of a live cluster, listed once.

use std::path::Path;

use crate::explain::ExplainError;
use crate::source::kube::list_once;
use crate::source::{ClusterSource, Opened};
use predicate_engine::cluster::objects::Pod;
use predicate_engine::cluster::source::{load_file, Objects};
use predicate_engine::cluster::{SchedulerVersion, Snapshot};

/// The cluster as it is now: a fixed source's model, or a live cluster listed once.
pub fn load_snapshot(source: &ClusterSource, version: SchedulerVersion) -> Result<Snapshot, ExplainError> {
    Ok(match source.open(version)? {
        Opened::Fixed(snapshot) => snapshot,
        Opened::Live(connection) => {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| ExplainError::Live(format!("cannot start the async runtime: {e}")))?;
            runtime.block_on(list_once(connection, version)).map_err(|e| ExplainError::Live(e.to_string()))?
        }
    })
}

/// The pod of a file holding exactly one Pod (YAML or JSON, as `kubectl get pod -o yaml` prints
/// it), read by the same decoder as cluster files.
pub fn load_pod(path: &Path) -> Result<Pod, ExplainError> {
    let file = path.display().to_string();
    single_pod(load_file(path)?).map_err(|message| ExplainError::Pod { file, message: message.to_string() })
}

/// The one Pod of what was read (a file, a request body); `Err` says what is wrong with it.
pub fn single_pod(objects: Objects) -> Result<Pod, &'static str> {
    let others = objects.nodes.len() + objects.others.len() + objects.skipped.values().sum::<usize>();
    let mut pods = objects.pods;
    match (pods.pop(), pods.is_empty(), others) {
        (Some(pod), true, 0) => Ok(pod),
        (None, _, _) => Err("holds no Pod (kind: Pod)"),
        _ => Err("must hold exactly one object, a Pod"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn temp(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("explain-source-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn a_pod_file_holds_one_pod() {
        let ok = temp("ok.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\n");
        assert_eq!(load_pod(&ok).unwrap().metadata.name, "p");
        let cases = [
            ("none.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n", "holds no Pod (kind: Pod)"),
            (
                "more.yaml",
                "kind: Pod\nmetadata: {name: a}\n---\nkind: Namespace\nmetadata: {name: x}\n",
                "must hold exactly one object, a Pod",
            ),
            ("empty.yaml", "", "holds no Pod (kind: Pod)"),
            (
                "two.yaml",
                "kind: Pod\nmetadata: {name: a}\n---\nkind: Pod\nmetadata: {name: b}\n",
                "must hold exactly one object, a Pod",
            ),
        ];
        for (name, text, want) in cases {
            let e = load_pod(&temp(name, text)).unwrap_err().to_string();
            assert!(e.starts_with("--pod ") && e.ends_with(want), "{name}: {e}");
        }
        let bad = temp("bad.yaml", "kind: Pod\nspec: {containers: [{name: c, resources: {requests: {cpu: lots}}}]}\n");
        assert!(load_pod(&bad).unwrap_err().to_string().contains("invalid quantity \"lots\""));
    }

    #[test]
    fn sources_load() {
        assert_eq!(load_snapshot(&ClusterSource::Demo, SchedulerVersion::default()).unwrap().node_count(), 6);
        let missing = load_snapshot(
            &ClusterSource::File(PathBuf::from("/nonexistent/cluster.yaml")),
            SchedulerVersion::default(),
        );
        assert!(missing.unwrap_err().to_string().starts_with("/nonexistent/cluster.yaml: cannot read"));
    }
}
