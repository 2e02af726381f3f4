//! Binding into the in-memory cluster model (snapshot and demo mode): the model itself is the API
//! server, so the pod is placed on the node at once and the next filter sees its resources and
//! ports.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::bind::{BindError, Binder};
use crate::wire::ExtenderBindingArgs;
use predicate_engine::cluster::ClusterStore;

/// Binds into the in-memory cluster model (snapshot file and demo cluster).
#[derive(Debug)]
pub struct ModelBinder {
    store: Arc<ClusterStore>,
}

impl ModelBinder {
    pub fn new(store: Arc<ClusterStore>) -> Self {
        ModelBinder { store }
    }

    /// Binds synchronously. Binding a pod to the node it is already on succeeds: kube-scheduler
    /// retries a bind whose answer it did not get.
    pub fn bind_now(&self, args: &ExtenderBindingArgs) -> Result<(), BindError> {
        let key = format!("{}/{}", args.pod_namespace, args.pod_name);
        self.store.update(|snapshot| {
            let info =
                snapshot.pod(&args.pod_namespace, &args.pod_name).ok_or_else(|| BindError::UnknownPod(key.clone()))?;
            let pod = &info.pod;
            if !args.pod_uid.is_empty() && pod.metadata.uid != args.pod_uid {
                return Err(BindError::UidMismatch {
                    pod: key.clone(),
                    actual: pod.metadata.uid.clone(),
                    requested: args.pod_uid.clone(),
                });
            }
            if !snapshot.has_node(&args.node) {
                return Err(BindError::UnknownNode(args.node.clone()));
            }
            match pod.spec.node_name.as_str() {
                "" => {}
                bound if bound == args.node => return Ok(()),
                bound => {
                    return Err(BindError::BoundElsewhere {
                        pod: key.clone(),
                        bound: bound.to_string(),
                        requested: args.node.clone(),
                    })
                }
            }
            let mut bound = pod.clone();
            bound.spec.node_name = args.node.clone();
            snapshot.upsert_pod(bound);
            Ok(())
        })
    }
}

impl Binder for ModelBinder {
    fn bind(&self, args: ExtenderBindingArgs) -> Pin<Box<dyn Future<Output = Result<(), BindError>> + Send + '_>> {
        Box::pin(async move { self.bind_now(&args) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use predicate_engine::cluster::Snapshot;
    use predicate_engine::testing::{NodeBuilder, PodBuilder};

    fn binder() -> ModelBinder {
        let snapshot = Snapshot::build(
            [NodeBuilder::new("n1").build(), NodeBuilder::new("n2").build()],
            [
                PodBuilder::new("pending").uid("u1").req(&[("cpu", "1")]).nominated("n2").build(),
                PodBuilder::new("running").node("n1").build(),
            ],
        );
        ModelBinder::new(Arc::new(ClusterStore::new(snapshot)))
    }

    fn args(pod: &str, uid: &str, node: &str) -> ExtenderBindingArgs {
        ExtenderBindingArgs {
            pod_name: pod.to_string(),
            pod_namespace: "default".to_string(),
            pod_uid: uid.to_string(),
            node: node.to_string(),
        }
    }

    #[test]
    fn binding_places_the_pod_and_clears_its_nomination() {
        let b = binder();
        b.bind_now(&args("pending", "u1", "n1")).unwrap();
        let s = b.store.snapshot();
        assert_eq!(s.node_info("n1").unwrap().pods.requested().milli_cpu, 1000);
        assert!(s.nominated_on("n2").is_empty());
    }

    #[test]
    fn outcomes() {
        let b = binder();
        let cases = [
            (args("ghost", "", "n1"), Err(BindError::UnknownPod("default/ghost".into()))),
            (
                args("pending", "u2", "n1"),
                Err(BindError::UidMismatch {
                    pod: "default/pending".into(),
                    actual: "u1".into(),
                    requested: "u2".into(),
                }),
            ),
            (args("pending", "", "n9"), Err(BindError::UnknownNode("n9".into()))),
            (args("running", "", "n1"), Ok(())),
            (
                args("running", "", "n2"),
                Err(BindError::BoundElsewhere {
                    pod: "default/running".into(),
                    bound: "n1".into(),
                    requested: "n2".into(),
                }),
            ),
            (args("pending", "", "n2"), Ok(())),
            (args("pending", "u1", "n2"), Ok(())),
        ];
        for (a, want) in cases {
            assert_eq!(b.bind_now(&a), want, "{a:?}");
        }
    }
}
