//! Binding through the API server (`POST .../pods/{name}/binding`), as kube-scheduler's default
//! binder does, with the pod assumed on its node in the cluster model from before the POST, so the
//! very next filter counts it before the watch reports the binding.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use kube::{Api, Client};

use crate::bind::{protobuf, BindError, Binder};
use crate::source::kube::lean::LeanPod;
use crate::wire::ExtenderBindingArgs;
use predicate_engine::cluster::model_writer::ModelWriter;
use predicate_engine::cluster::objects::Pod;

/// Attempts on connection errors (the request never reached the API server), and the pause
/// before each retry.
const CONNECT_RETRIES: [Duration; 2] = [Duration::from_millis(100), Duration::from_millis(400)];

/// Binds through the API server.
pub struct ApiServerBinder {
    client: Client,
    writer: Arc<ModelWriter>,
    assume_ttl: Duration,
    /// Deadline of one bind, retries included.
    timeout: Duration,
}

impl ApiServerBinder {
    pub fn new(client: Client, writer: Arc<ModelWriter>, assume_ttl: Duration, timeout: Duration) -> Self {
        ApiServerBinder { client, writer, assume_ttl, timeout }
    }

    /// kube-scheduler's order: the pod is assumed on its node before the Binding is posted (so a
    /// filter that runs meanwhile counts it), and forgotten if the binding fails.
    async fn bind_now(&self, args: &ExtenderBindingArgs) -> Result<(), BindError> {
        let pod = format!("{}/{}", args.pod_namespace, args.pod_name);
        let before = self.assume_from_model(args);
        let posted = match tokio::time::timeout(self.timeout, self.post_binding(args, &pod)).await {
            Ok(result) => result,
            Err(_) => Err(BindError::Timeout {
                pod: pod.clone(),
                after: humantime::format_duration(self.timeout).to_string(),
            }),
        };
        if let Err(e) = posted {
            if before == InModel::Assumed {
                self.writer.forget(&(args.pod_namespace.clone(), args.pod_name.clone()), &args.node);
            }
            return Err(e);
        }
        // Bound: whatever happens to the assumption now, the answer is success.
        if before == InModel::Unknown
            && tokio::time::timeout(self.timeout, self.assume_from_api_server(args)).await.is_err()
        {
            tracing::warn!(pod = %pod, "bound, but reading the pod to assume it timed out; the watch will report it");
        }
        Ok(())
    }

    /// POSTs the Binding, retrying connection errors, and explains a failure. The Binding goes
    /// in protobuf, as kube-scheduler's binder sends it (the API server decodes it for a quarter
    /// of a JSON one's CPU); the answer comes back in JSON, a `Status` either way.
    async fn post_binding(&self, args: &ExtenderBindingArgs, pod: &str) -> Result<(), BindError> {
        let binding = protobuf::Binding::of(&args.pod_namespace, &args.pod_name, &args.pod_uid, &args.node);
        let mut attempt = 0;
        let outcome = loop {
            let result = binding.post(&self.client).await;
            match result {
                Err(e) if is_connection_error(&e) && attempt < CONNECT_RETRIES.len() => {
                    tracing::debug!(pod, error = %e, "binding: no connection to the API server; retrying");
                    tokio::time::sleep(CONNECT_RETRIES[attempt]).await;
                    attempt += 1;
                }
                other => break other,
            }
        };
        match outcome {
            Ok(_) => {}
            Err(kube::Error::Api(status)) => self.explain_failure(args, pod, status.code, status.message).await?,
            Err(e) if is_connection_error(&e) => {
                return Err(BindError::Unreachable {
                    pod: pod.to_string(),
                    attempts: CONNECT_RETRIES.len() as u32 + 1,
                    error: e.to_string(),
                })
            }
            Err(e) => return Err(BindError::Transport { pod: pod.to_string(), error: e.to_string() }),
        }
        Ok(())
    }

    /// Maps an API error to what happened. A 409 is looked into: a pod already bound to this
    /// very node is success (kube-scheduler retries a bind whose answer it did not get).
    async fn explain_failure(
        &self,
        args: &ExtenderBindingArgs,
        pod: &str,
        code: u16,
        message: String,
    ) -> Result<(), BindError> {
        let pod = pod.to_string();
        match code {
            404 => Err(BindError::PodGone(pod)),
            403 => Err(BindError::Forbidden { pod, namespace: args.pod_namespace.clone(), message }),
            422 => Err(BindError::Invalid { pod, message }),
            409 => {
                let api: Api<LeanPod> = Api::namespaced(self.client.clone(), &args.pod_namespace);
                let current = match api.get(&args.pod_name).await {
                    Ok(p) => p.object,
                    Err(kube::Error::Api(s)) if s.code == 404 => return Err(BindError::PodGone(pod)),
                    Err(_) => return Err(BindError::Conflict { pod, message }),
                };
                let uid = &current.metadata.uid;
                if !args.pod_uid.is_empty() && !uid.is_empty() && *uid != args.pod_uid {
                    return Err(BindError::UidMismatch { pod, actual: uid.clone(), requested: args.pod_uid.clone() });
                }
                match current.spec.node_name.as_str() {
                    bound if bound == args.node => Ok(()),
                    "" => Err(BindError::Conflict { pod, message }),
                    bound => {
                        Err(BindError::BoundElsewhere { pod, bound: bound.to_string(), requested: args.node.clone() })
                    }
                }
            }
            _ => Err(BindError::ApiServer { pod, code, message }),
        }
    }

    /// Counts the pod on its node in the model now, if the watch has delivered it pending (with
    /// the UID kube-scheduler sent).
    fn assume_from_model(&self, args: &ExtenderBindingArgs) -> InModel {
        let known = self.writer.store().snapshot().pod(&args.pod_namespace, &args.pod_name).map(|p| p.pod.clone());
        let same_uid = |p: &Pod| args.pod_uid.is_empty() || p.metadata.uid == args.pod_uid;
        match known.filter(same_uid) {
            Some(pod) if pod.spec.node_name.is_empty() => {
                self.writer.assume(pod, &args.node, self.assume_ttl);
                InModel::Assumed
            }
            Some(_) => InModel::Bound,
            None => InModel::Unknown,
        }
    }

    /// After a binding of a pod the watch had not delivered: reads it from the API server and
    /// counts it on its node (the model decides: nothing is assumed if the watch has the pod bound
    /// by now).
    async fn assume_from_api_server(&self, args: &ExtenderBindingArgs) {
        let api: Api<LeanPod> = Api::namespaced(self.client.clone(), &args.pod_namespace);
        let mut pending = match api.get(&args.pod_name).await {
            Ok(p) => p.object,
            Err(e) => {
                tracing::warn!(
                    pod = %format!("{}/{}", args.pod_namespace, args.pod_name),
                    error = %e,
                    "bound, but cannot read the pod to assume it; the watch will report it"
                );
                return;
            }
        };
        pending.spec.node_name.clear();
        self.writer.assume(pending, &args.node, self.assume_ttl);
    }
}

/// What the model had of a pod when its bind began.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum InModel {
    /// Pending: now assumed on the requested node.
    Assumed,
    /// Already bound (a retried bind the watch has reported).
    Bound,
    /// Not delivered by the watch yet (or another pod of that name).
    Unknown,
}

/// Whether the request failed before reaching the API server (refused, reset, unreachable).
fn is_connection_error(e: &kube::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind::*;
            if matches!(
                io.kind(),
                ConnectionRefused
                    | ConnectionReset
                    | ConnectionAborted
                    | NotConnected
                    | AddrNotAvailable
                    | HostUnreachable
                    | NetworkUnreachable
            ) {
                return true;
            }
        }
        source = err.source();
    }
    false
}

impl Binder for ApiServerBinder {
    fn bind(&self, args: ExtenderBindingArgs) -> Pin<Box<dyn Future<Output = Result<(), BindError>> + Send + '_>> {
        Box::pin(async move { self.bind_now(&args).await })
    }
}
