//! The live cluster source: lists and watches the API server and keeps the cluster model current.

pub mod health;
pub mod kinds;
pub mod leadership;
pub mod lean;
mod list_pages;
pub mod watch_loop;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::{ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{Namespace, PersistentVolume, PersistentVolumeClaim, ReplicationController, Service};
use k8s_openapi::api::storage::v1::{CSINode, StorageClass};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Api, Client};
use tokio::task::JoinHandle;

pub use health::{HealthReport, WatchHealth};
use kinds::WatchedKind;
use lean::{LeanNode, LeanPod};
use predicate_engine::cluster::model_writer::ModelWriter;
use predicate_engine::cluster::{ObjectKind, SchedulerVersion, Snapshot};
pub use watch_loop::WatchSettings;

/// How to reach the API server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Connection {
    /// `--kubeconfig PATH` (its current context).
    Kubeconfig(PathBuf),
    /// The pod's service account (`KUBERNETES_SERVICE_HOST` is set).
    InCluster,
}

/// Why the API server client could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("--kubeconfig {path}: {message}")]
    Kubeconfig { path: String, message: String },
    #[error("in-cluster configuration (KUBERNETES_SERVICE_HOST is set): {0}")]
    InCluster(String),
    #[error("{0}: cannot create the API client: {1}")]
    Client(String, String),
    #[error("cannot list {resource}: {message}")]
    List { resource: &'static str, message: String },
}

/// Builds the API client.
pub async fn connect(connection: &Connection) -> Result<Client, ConnectError> {
    let (config, label) = match connection {
        Connection::Kubeconfig(path) => {
            let fail = |message: String| ConnectError::Kubeconfig { path: path.display().to_string(), message };
            let kubeconfig = Kubeconfig::read_from(path).map_err(|e| fail(e.to_string()))?;
            let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                .await
                .map_err(|e| fail(e.to_string()))?;
            (config, format!("--kubeconfig {}", path.display()))
        }
        Connection::InCluster => {
            let config = kube::Config::incluster().map_err(|e| ConnectError::InCluster(e.to_string()))?;
            (config, "in-cluster configuration".to_string())
        }
    };
    let mut config = config;
    // Named in the API server's audit log and its per-client metrics, beside kube-scheduler (which
    // binds under the same service account when the extender is not the binder).
    config.headers.push((hyper::header::USER_AGENT, hyper::header::HeaderValue::from_static(USER_AGENT)));
    Client::try_from(config).map_err(|e| ConnectError::Client(label, e.to_string()))
}

/// The `User-Agent` of every request to the API server.
pub const USER_AGENT: &str = concat!("predicate-extender/", env!("CARGO_PKG_VERSION"));

/// Expands `$m!(K1, K2, ...)` over every kind the live source watches: the one list of them that
/// the watches, `list_once` and [`WATCHED_KINDS`] are made from.
macro_rules! for_each_watched_kind {
    ($m:ident) => {
        $m!(
            LeanNode,
            LeanPod,
            Namespace,
            Service,
            PersistentVolume,
            PersistentVolumeClaim,
            StorageClass,
            CSINode,
            ReplicaSet,
            ReplicationController,
            StatefulSet
        )
    };
}

macro_rules! kinds_of {
    ($($k:ty),*) => { [$(<$k as predicate_engine::cluster::source::kinds::ModelKind>::KIND),*] };
}

/// Every kind the live source watches.
pub const WATCHED_KINDS: [ObjectKind; 11] = for_each_watched_kind!(kinds_of);

fn spawn<K: WatchedKind>(
    client: &Client,
    writer: &Arc<ModelWriter>,
    health: &Arc<WatchHealth>,
    settings: WatchSettings,
) -> JoinHandle<()> {
    let api: Api<K> = Api::all(client.clone());
    tokio::spawn(watch_loop::run(api, Arc::clone(writer), Arc::clone(health), settings))
}

/// Starts one list-and-watch task per kind, and the task that expires unconfirmed assumptions.
pub fn start(
    client: &Client,
    writer: &Arc<ModelWriter>,
    health: &Arc<WatchHealth>,
    settings: WatchSettings,
) -> Vec<JoinHandle<()>> {
    macro_rules! spawn_each {
        ($($k:ty),*) => { vec![$(spawn::<$k>(client, writer, health, settings)),*] };
    }
    let mut tasks = for_each_watched_kind!(spawn_each);
    tasks.push(tokio::spawn(expire_assumptions(Arc::clone(writer))));
    tasks
}

/// Checks the assumptions once a second: at most a second late on a 30s default.
async fn expire_assumptions(writer: Arc<ModelWriter>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        for ((namespace, name), node) in writer.expire_assumed(Instant::now()) {
            tracing::warn!(
                pod = %format!("{namespace}/{name}"),
                node = %node,
                "assumed pod expired: no watch event confirmed its binding within --assume-ttl"
            );
        }
    }
}

async fn list_into<K: WatchedKind>(client: &Client, snapshot: &mut Snapshot) -> Result<(), ConnectError> {
    let api: Api<K> = Api::all(client.clone());
    let mut objects = Vec::new();
    watch_loop::list_all(&api, WatchSettings::default(), |_| true, |page| objects.extend(page))
        .await
        .map_err(|e| ConnectError::List { resource: K::KIND.resource(), message: e.to_string() })?;
    snapshot.replace(K::KIND, objects);
    Ok(())
}

/// The cluster as the API server lists it now, once (for `explain`): the same kinds, decoded and
/// stripped as the watches do.
pub async fn list_once(connection: &Connection, version: SchedulerVersion) -> Result<Snapshot, ConnectError> {
    let client = connect(connection).await?;
    let mut s = Snapshot::empty(version);
    macro_rules! list_each {
        ($($k:ty),*) => { $(list_into::<$k>(&client, &mut s).await?;)* };
    }
    for_each_watched_kind!(list_each);
    Ok(s)
}

/// The connection to use when none is named: in-cluster inside a pod, else none.
pub fn default_connection(kubeconfig: Option<&Path>) -> Option<Connection> {
    match kubeconfig {
        Some(path) => Some(Connection::Kubeconfig(path.to_path_buf())),
        None if std::env::var_os("KUBERNETES_SERVICE_HOST").is_some_and(|v| !v.is_empty()) => {
            Some(Connection::InCluster)
        }
        None => None,
    }
}
