//! Binding a pod to a node: through the API server in a live cluster, or into the cluster model
//! itself in snapshot and demo mode. Both answer with the same errors, whose messages are what
//! kube-scheduler's user reads in the pod's events.

pub mod api_server;
pub mod model;
pub mod protobuf;

use std::future::Future;
use std::pin::Pin;

use crate::wire::ExtenderBindingArgs;

pub use api_server::ApiServerBinder;
pub use model::ModelBinder;

/// Why a bind did not happen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BindError {
    /// The pod is not in the cluster model (snapshot and demo mode).
    #[error("pod {0} is not known to the extender")]
    UnknownPod(String),
    /// The API server has no such pod (404): it was deleted after it was scheduled.
    #[error("pod {0} was not found by the API server (404): it was deleted after it was scheduled")]
    PodGone(String),
    /// The pod with that name has another UID: it was deleted and re-created.
    #[error("pod {pod} has UID {actual}, not {requested}: it was deleted and re-created since it was scheduled")]
    UidMismatch { pod: String, actual: String, requested: String },
    /// The node is not in the cluster model.
    #[error("node {0} is not known to the extender")]
    UnknownNode(String),
    /// The pod already runs elsewhere.
    #[error("pod {pod} is already bound to node {bound}, not {requested}")]
    BoundElsewhere { pod: String, bound: String, requested: String },
    /// 409 from the API server that the pod's current state does not explain.
    #[error("binding pod {pod} conflicted (409): {message}")]
    Conflict { pod: String, message: String },
    /// 422: the API server found the binding invalid.
    #[error("the API server rejected the binding of pod {pod} as invalid (422): {message}")]
    Invalid { pod: String, message: String },
    /// 403: RBAC does not let the extender bind.
    #[error(
        "the extender may not bind pod {pod} (403): its service account needs RBAC verb \"create\" on resource \"pods/binding\" in namespace {namespace}; the API server said: {message}"
    )]
    Forbidden { pod: String, namespace: String, message: String },
    /// Any other answer of the API server.
    #[error("binding pod {pod} failed: the API server answered {code}: {message}")]
    ApiServer { pod: String, code: u16, message: String },
    /// No connection to the API server, after retrying.
    #[error(
        "binding pod {pod} failed: the API server is unreachable after {attempts} attempts (if a connection broke after the request was sent, the binding may have happened): {error}"
    )]
    Unreachable { pod: String, attempts: u32, error: String },
    /// No answer within the deadline; the binding may or may not have happened (a retry by
    /// kube-scheduler will find out).
    #[error("binding pod {pod} failed: the API server did not answer within {after}")]
    Timeout { pod: String, after: String },
    /// The request failed on the way (a broken response, a TLS error).
    #[error("binding pod {pod} failed: {error}")]
    Transport { pod: String, error: String },
}

/// Binds pods.
pub trait Binder: Send + Sync {
    fn bind(&self, args: ExtenderBindingArgs) -> Pin<Box<dyn Future<Output = Result<(), BindError>> + Send + '_>>;
}
