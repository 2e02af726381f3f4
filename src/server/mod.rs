//! The HTTP side: the verbs on one listener (loopback by default), health and readiness on another.

pub mod admin;
mod answer_bytes;
pub mod body;
pub mod connections;
pub mod explain_handler;
pub mod filter_result;
pub mod handlers;
mod item_archive;
pub mod large_bodies;
pub mod listener;
pub mod policy_reload;
mod pool;
pub mod preempt_handler;
pub mod reload;
mod streamed_nodes;
pub mod tls;
pub mod verb;
pub mod web;
pub mod whatif_handler;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::routing::post;
use axum::Router;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::bind::{ApiServerBinder, Binder, ModelBinder};
use crate::explain::kube_scheduler::{ConfigError, KubeSchedulerConfig};
use crate::metrics::Metrics;
use crate::scheduler_config::leader_election::LeaseSpec;
use crate::server::large_bodies::LargeBodies;
use crate::source::kube::leadership::{self, Leadership};
use crate::source::kube::{WatchHealth, WatchSettings, WATCHED_KINDS};
use crate::source::Opened;
use predicate_engine::cluster::model_writer::ModelWriter;
use predicate_engine::cluster::{ClusterStore, SchedulerVersion, Snapshot};
use predicate_engine::engine::evaluator::default_parallelism;
use predicate_engine::engine::observe::Sampler;
use predicate_engine::engine::{Evaluator, OrderingMode, Plan};
// `ServeConfig::cluster`'s type (defined with the sources), named beside the config.
pub use crate::source::ClusterSource;
pub use admin::Readiness;
pub use connections::ConnectionLimits;
use policy_reload::{log_plan, PlanCell, ReloadingPolicy};
pub use tls::{TlsError, TlsFiles};

/// Where the plan comes from.
#[derive(Debug, Clone)]
pub enum PolicySource {
    /// No Policy file: the default predicates.
    Default,
    /// A Policy file (`--policy`), read again when it changes.
    File(PathBuf),
    /// A plan built in memory (tests, tools).
    Plan(Plan),
}

/// Everything `serve` needs, validated.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub listen: SocketAddr,
    pub admin_listen: SocketAddr,
    /// "" or a path starting with '/' and not ending with one.
    pub url_prefix: String,
    pub cluster: ClusterSource,
    /// Whose rules count the pods' requests, and whose default plugins run in front of the
    /// extender (`--kube-scheduler-version`).
    pub scheduler_version: SchedulerVersion,
    /// kube-scheduler's configuration (`--scheduler-config`), for which of its filters run in
    /// front of the extender; `None`: the shipped one (all of them).
    pub scheduler_config: Option<PathBuf>,
    pub policy: PolicySource,
    /// `--predicate-ordering`: overrides the Policy's `predicateOrdering` (on every reload too).
    pub predicate_ordering: Option<OrderingMode>,
    pub parallelism: usize,
    /// /filter and /prioritize bodies up to this size are answered on the thread that read them,
    /// without the evaluator's pool (0: every request goes to the pool).
    pub inline_max_bytes: usize,
    pub max_body_bytes: usize,
    pub request_timeout: Duration,
    /// Live source: how long a watch may keep failing before `/readyz` turns 503.
    pub max_cache_staleness: Duration,
    /// Live source: how long a bound pod counts on its node without the watch confirming it.
    pub assume_ttl: Duration,
    /// Live source: list page size, watch timeout, event batching.
    pub watch: WatchSettings,
    /// HTTPS on the verbs listener; `None` serves plain HTTP.
    pub tls: Option<TlsFiles>,
    /// On shutdown, how long in-flight requests may take before their connections are closed.
    pub shutdown_grace: Duration,
    /// Both listeners: header, body and idle timeouts, and the cap on open connections.
    pub connections: ConnectionLimits,
    /// How often the TLS files and the Policy file are read again to notice a change (SIGHUP: at
    /// once).
    pub reload_interval: Duration,
    /// The deadline of one `POST /whatif` (and of one web page).
    pub whatif_timeout: Duration,
    /// Serve the read-only web pages under `<urlPrefix>/ui` on the verbs listener.
    pub web: bool,
}

impl ServeConfig {
    /// Defaults as the CLI has them, on the given source.
    pub fn new(cluster: ClusterSource) -> Self {
        ServeConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], 8888)),
            admin_listen: SocketAddr::from(([0, 0, 0, 0], 8889)),
            url_prefix: String::new(),
            cluster,
            scheduler_version: SchedulerVersion::default(),
            scheduler_config: None,
            policy: PolicySource::Default,
            predicate_ordering: None,
            parallelism: default_parallelism(),
            inline_max_bytes: DEFAULT_INLINE_MAX_BYTES,
            max_body_bytes: 128 << 20,
            request_timeout: Duration::from_secs(4),
            max_cache_staleness: Duration::from_secs(60),
            assume_ttl: Duration::from_secs(30),
            watch: WatchSettings::default(),
            tls: None,
            shutdown_grace: Duration::from_secs(10),
            connections: ConnectionLimits::default(),
            reload_interval: reload::RELOAD_INTERVAL,
            whatif_timeout: whatif_handler::DEFAULT_TIMEOUT,
            web: false,
        }
    }
}

/// The default `--inline-max-bytes`: a `NodeNames` request of about 1,300 names of 20 characters
/// beside its pod. kube-scheduler's adaptive `percentageOfNodesToScore` sends at most about 800 (at
/// 3,750 nodes; 500 at 5,000), so with it a `NodeNames` request is answered inline unless the names
/// are longer than about 35 characters, and `Nodes` requests of more than a few nodes go to the
/// pool.
pub const DEFAULT_INLINE_MAX_BYTES: usize = 32 << 10;

/// Shared by every request.
pub struct AppState {
    pub store: Arc<ClusterStore>,
    /// The plan in force: a request takes it once (`load_full`) and keeps it to the end.
    pub plan: Arc<PlanCell>,
    pub evaluator: Arc<Evaluator>,
    /// Picks the /filter requests whose predicates are timed node by node.
    pub sampler: Sampler,
    pub binder: Arc<dyn Binder>,
    /// Bodies up to this size are answered inline ([`ServeConfig::inline_max_bytes`]).
    pub inline_max_bytes: usize,
    pub max_body_bytes: usize,
    /// How long a request body may take to arrive once its head is in.
    pub body_timeout: Duration,
    pub request_timeout: Duration,
    /// The live source's watches; `None` for a snapshot or the demo cluster (always synced).
    pub watches: Option<Arc<WatchHealth>>,
    pub metrics: Arc<Metrics>,
    /// Large bodies (whole `Nodes`) are read and answered one at a time.
    pub large_bodies: LargeBodies,
    /// `/whatif`'s deadline and its one run at a time.
    pub whatif: whatif_handler::WhatifGate,
    /// kube-scheduler's filters in front of the extender, for what `/explain`, `/whatif` and the
    /// pages say kube-scheduler reports.
    pub kube_scheduler: KubeSchedulerConfig,
}

impl AppState {
    /// The state of a server on a fixed model (as from a snapshot file or the demo cluster: no
    /// watches, binds go into the model) with the CLI's default limits: for answering the verbs
    /// without the listeners (the fuzz checks and tests: the `test-util` feature).
    #[cfg(any(test, feature = "test-util"))]
    pub fn fixed(snapshot: Snapshot, plan: Plan, evaluator: Evaluator) -> AppState {
        let defaults = ServeConfig::new(ClusterSource::Demo);
        let kube_scheduler = KubeSchedulerConfig::shipped();
        let store = Arc::new(ClusterStore::new(snapshot));
        let metrics = Arc::new(Metrics::new(&plan, Arc::clone(&store), None));
        AppState {
            binder: Arc::new(ModelBinder::new(Arc::clone(&store))),
            store,
            plan: Arc::new(PlanCell::from_pointee(plan)),
            evaluator: Arc::new(evaluator),
            sampler: Sampler::default(),
            inline_max_bytes: defaults.inline_max_bytes,
            max_body_bytes: defaults.max_body_bytes,
            body_timeout: defaults.connections.body_timeout,
            request_timeout: defaults.request_timeout,
            watches: None,
            metrics,
            large_bodies: LargeBodies::default(),
            whatif: whatif_handler::WhatifGate::new(defaults.whatif_timeout),
            kube_scheduler,
        }
    }

    /// Why the model cannot answer yet: the watches that have not listed once.
    pub fn not_synced(&self) -> Option<String> {
        let watches = self.watches.as_ref()?;
        if watches.synced() {
            return None;
        }
        let report = watches.report(std::time::Instant::now());
        Some(format!(
            "the extender's cluster cache has not synced with the API server yet (waiting for {})",
            report.not_synced.join(", ")
        ))
    }
}

/// A startup failure, naming the file or flag at fault.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Cluster(#[from] predicate_engine::cluster::source::SourceError),
    #[error(transparent)]
    Policy(#[from] predicate_engine::policy::PolicyError),
    #[error(transparent)]
    Connect(#[from] crate::source::kube::ConnectError),
    #[error(transparent)]
    Tls(#[from] TlsError),
    #[error("--scheduler-config {0}")]
    SchedulerConfig(#[from] ConfigError),
    #[error("--parallelism {0}: cannot start the evaluator pool: {1}")]
    Pool(usize, String),
    #[error("{flag} {addr}: cannot listen: {source}")]
    Listen {
        flag: &'static str,
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
}

/// The router of the verbs under `prefix`.
pub fn verbs_router(state: Arc<AppState>, prefix: &str) -> Router {
    Router::new()
        .route(&format!("{prefix}/filter"), post(handlers::filter))
        .route(&format!("{prefix}/prioritize"), post(handlers::prioritize))
        .route(&format!("{prefix}/bind"), post(handlers::bind))
        .route(&format!("{prefix}/preempt"), post(preempt_handler::preempt))
        .route(&format!("{prefix}/explain"), post(explain_handler::explain))
        .route(&format!("{prefix}/whatif"), post(whatif_handler::whatif))
        .route_layer(axum::middleware::from_fn_with_state(Arc::clone(&state.metrics), crate::metrics::requests::track))
        .with_state(state)
}

/// The verbs, and with `web` the pages beside them.
fn verbs_and_pages(state: Arc<AppState>, prefix: &str, web: bool) -> Router {
    let verbs = verbs_router(Arc::clone(&state), prefix);
    if web {
        verbs.merge(web::router(state, prefix))
    } else {
        verbs
    }
}

/// A running server.
pub struct RunningServer {
    pub verbs_addr: SocketAddr,
    pub admin_addr: SocketAddr,
    pub store: Arc<ClusterStore>,
    shutdown: watch::Sender<bool>,
    shutdown_grace: Duration,
    /// The listeners' accept loops; each ends with the number of connections the grace cut off.
    tasks: Vec<JoinHandle<usize>>,
    /// The live source's watches, the file reloaders and the SIGHUP listener, stopped once the
    /// listeners have closed.
    background: Vec<JoinHandle<()>>,
}

impl RunningServer {
    /// Stops accepting and lets in-flight requests finish within the shutdown grace; connections
    /// still open when it runs out are closed, with a warning. `Err` only if a listener panicked.
    pub async fn shutdown(self) -> std::io::Result<()> {
        let _ = self.shutdown.send(true);
        let mut still_open = 0;
        for t in self.tasks {
            still_open += t.await.map_err(std::io::Error::other)?;
        }
        if still_open > 0 {
            tracing::warn!(
                still_open,
                grace = %humantime::format_duration(self.shutdown_grace),
                "the shutdown grace ran out with {still_open} connection(s) still open; closed them"
            );
        }
        for t in self.background {
            t.abort();
        }
        Ok(())
    }
}

/// The cluster model and how binds reach it, with the live source's watches when there is one.
struct Model {
    store: Arc<ClusterStore>,
    binder: Arc<dyn Binder>,
    watches: Option<Arc<WatchHealth>>,
    /// The live source's writer, which holds the assumed pods.
    writer: Option<Arc<ModelWriter>>,
    /// Whether the kube-scheduler beside it leads (a live source, and a configuration that elects).
    leadership: Option<Arc<Leadership>>,
    background: Vec<JoinHandle<()>>,
}

async fn open_model(config: &ServeConfig, lease: Option<&LeaseSpec>) -> Result<Model, StartError> {
    let fixed = |snapshot: Snapshot| {
        tracing::info!(nodes = snapshot.node_count(), pods = snapshot.pod_count(), "cluster model loaded");
        let store = Arc::new(ClusterStore::new(snapshot));
        let binder: Arc<dyn Binder> = Arc::new(ModelBinder::new(Arc::clone(&store)));
        Model { store, binder, watches: None, writer: None, leadership: None, background: Vec::new() }
    };
    Ok(match config.cluster.open(config.scheduler_version)? {
        Opened::Fixed(snapshot) => fixed(snapshot),
        Opened::Live(connection) => {
            let client = crate::source::kube::connect(connection).await?;
            let store = Arc::new(ClusterStore::new(Snapshot::empty(config.scheduler_version)));
            let writer = Arc::new(ModelWriter::new(Arc::clone(&store)));
            let watches = Arc::new(WatchHealth::new(WATCHED_KINDS, config.max_cache_staleness));
            let mut background = crate::source::kube::start(&client, &writer, &watches, config.watch);
            // Which replica this is, when kube-scheduler elects a leader and this pod has a name.
            let leadership = match (lease, leadership::hostname()) {
                (Some(lease), Some(identity)) => {
                    let leadership = Arc::new(Leadership::default());
                    tracing::info!(lease = %format!("{}/{}", lease.namespace, lease.name), %identity, "following kube-scheduler's Lease");
                    background.push(leadership::spawn(
                        client.clone(),
                        lease.clone(),
                        identity,
                        Arc::clone(&leadership),
                    ));
                    Some(leadership)
                }
                _ => None,
            };
            let binder = ApiServerBinder::new(client, Arc::clone(&writer), config.assume_ttl, config.request_timeout);
            tracing::info!(?connection, "watching the API server");
            Model {
                store,
                binder: Arc::new(binder),
                watches: Some(watches),
                writer: Some(writer),
                leadership,
                background,
            }
        }
    })
}

/// Loads the cluster and the policy, binds both listeners and starts serving.
pub async fn start(config: ServeConfig) -> Result<RunningServer, StartError> {
    let tls = config.tls.clone().map(tls::ReloadingTls::load).transpose()?.map(Arc::new);
    let kube_scheduler = KubeSchedulerConfig::load(config.scheduler_config.as_deref())?;
    // An invalid Policy file at startup is an error; later, a change that does not load is not.
    let overrides = predicate_engine::policy::Overrides { ordering: config.predicate_ordering };
    let in_memory = |plan: Plan| match overrides.ordering {
        Some(mode) => plan.with_ordering(mode),
        None => plan,
    };
    let (policy_file, plan) = match &config.policy {
        PolicySource::Default => (None, in_memory(Plan::default_plan())),
        PolicySource::File(path) => {
            let loaded = predicate_engine::policy::load(path, overrides)?;
            (Some((path.clone(), loaded.bytes)), loaded.plan)
        }
        PolicySource::Plan(plan) => (None, in_memory(plan.clone())),
    };
    log_plan(&plan, "plan");
    let evaluator =
        Evaluator::new(config.parallelism).map_err(|e| StartError::Pool(config.parallelism, e.to_string()))?;
    let evaluator_workers = evaluator.parallelism();
    let listen = |flag, addr| listener::bind(addr).map_err(|source| StartError::Listen { flag, addr, source });
    let verbs = listen("--listen", config.listen)?;
    let admin = listen("--admin-listen", config.admin_listen)?;
    let verbs_addr =
        verbs.local_addr().map_err(|source| StartError::Listen { flag: "--listen", addr: config.listen, source })?;
    let admin_addr = admin.local_addr().map_err(|source| StartError::Listen {
        flag: "--admin-listen",
        addr: config.admin_listen,
        source,
    })?;

    // The model last: the live source starts its watches here.
    let Model { store, binder, watches, writer, leadership, mut background } =
        open_model(&config, kube_scheduler.lease()).await?;
    let readiness = Arc::new(Readiness::new(watches.clone()));
    let metrics = Metrics::new(&plan, Arc::clone(&store), watches.clone());
    let plan = Arc::new(PlanCell::from_pointee(plan));
    let metrics = metrics.with_ordering(Arc::clone(&plan));
    let metrics = match writer {
        Some(writer) => metrics.with_assumed_pods(writer),
        None => metrics,
    };
    let metrics = Arc::new(match leadership {
        Some(leadership) => metrics.with_leadership(leadership),
        None => metrics,
    });
    let wake = reload::on_sighup().map(|(wake, task)| {
        background.push(task);
        wake
    });
    if let Some((path, bytes)) = policy_file {
        let policy = ReloadingPolicy::new(path, bytes, overrides, Arc::clone(&plan), Arc::clone(&metrics));
        background.push(reload::spawn(Arc::new(policy), config.reload_interval, wake.clone()));
    }
    if let Some(tls) = &tls {
        background.push(reload::spawn(Arc::clone(tls), config.reload_interval, wake.clone()));
    }
    let state = Arc::new(AppState {
        store: Arc::clone(&store),
        plan: Arc::clone(&plan),
        evaluator: Arc::new(evaluator),
        sampler: Sampler::default(),
        binder,
        inline_max_bytes: config.inline_max_bytes,
        max_body_bytes: config.max_body_bytes,
        body_timeout: config.connections.body_timeout,
        request_timeout: config.request_timeout,
        watches,
        metrics: Arc::clone(&metrics),
        large_bodies: LargeBodies::default(),
        whatif: whatif_handler::WhatifGate::new(config.whatif_timeout),
        kube_scheduler,
    });

    let (shutdown, _) = watch::channel(false);
    let grace = config.shutdown_grace;
    let serve = |listener: TcpListener, router: Router, name, tls: Option<Arc<tls::ReloadingTls>>| {
        let settings = listener::ListenerSettings { name, tls, limits: config.connections, grace };
        tokio::spawn(listener::serve(listener, router, settings, shutdown.subscribe()))
    };
    let https = tls.is_some();
    let tasks = vec![
        serve(verbs, verbs_and_pages(state, &config.url_prefix, config.web), "verbs", tls),
        // The admin listener stays plain HTTP: kubelet probes it at the pod IP.
        serve(admin, admin::router(Arc::clone(&readiness), metrics, Arc::clone(&plan)), "admin", None),
    ];
    readiness.set_ready();
    tracing::info!(
        verbs = %verbs_addr, https, admin = %admin_addr, prefix = %config.url_prefix, evaluator_workers, "listening"
    );
    Ok(RunningServer { verbs_addr, admin_addr, store, shutdown, shutdown_grace: grace, tasks, background })
}
