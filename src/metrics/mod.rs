//! Prometheus metrics, served by `GET /metrics` on the admin listener in the OpenMetrics text
//! format ([`CONTENT_TYPE`]), which Prometheus scrapes natively. Every series starts with
//! `predicate_extender_`; none has a per-node or per-pod label.
//!
//! Mirrored from kube-scheduler (`pkg/scheduler/metrics/metrics.go`, subsystem `scheduler`), with
//! our prefix in place of `scheduler_` and the same labels and buckets, so dashboards carry over by
//! renaming the prefix:
//! - `framework_extension_point_duration_seconds{extension_point,status,profile}`: histogram,
//!   exponential buckets from 0.0001 by 2, 12 of them. One observation per request: `Filter`
//!   (/filter), `Score` (/prioritize), `Bind` (/bind), `PostFilter` (/preempt); status `Success`,
//!   or `Error` when the answer carries an error or is not a 200.
//! - `plugin_execution_duration_seconds{plugin,extension_point,status}`: histogram, exponential
//!   buckets from 0.00001 by 1.5, 20 of them. One observation per predicate per timed node.
//!   Upstream times every node of a sampled scheduling cycle
//!   (`rand.Intn(100) < pluginMetricsSamplePercent`, 10, in `schedule_one.go`); the engine times
//!   the same share, one candidate in ten of every /filter from a random offset
//!   ([`predicate_engine::engine::observe::Sampler`]), so no request pays for all of it at once. Status as
//!   upstream's codes: `Success`, `Unschedulable`, `UnschedulableAndUnresolvable`.
//! - `plugin_evaluation_total{plugin,extension_point,profile}`: counter. Upstream counts every
//!   Filter call; we count the same from the verdicts, per request: a node that fails at a
//!   predicate ran the predicates up to it, one that fits ran them all (with
//!   `alwaysCheckAllPredicates`, every node ran every predicate). A node's second nominated-pod
//!   pass is not counted again.
//!
//! "plugin" is the classic predicate name (`PodFitsResources`), `profile` is [`PROFILE`].
//!
//! Our own: requests and their latency by verb ([`requests`]), per-predicate rejections
//! ([`predicates`]), binds by outcome ([`bind`]), the cluster model ([`cluster`]) and the Policy in
//! force and its reloads ([`policy`]), and whether this replica's kube-scheduler leads
//! ([`leadership`]).

pub mod bind;
pub mod cluster;
pub mod duration_histogram;
pub mod leadership;
pub mod ordering;
pub mod phases;
pub mod policy;
pub mod predicates;
pub mod requests;

use std::fmt;
use std::sync::Arc;

use arc_swap::ArcSwap;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::Registry;

use crate::source::kube::leadership::Leadership;
use crate::source::kube::WatchHealth;
use predicate_engine::cluster::model_writer::ModelWriter;
use predicate_engine::cluster::ClusterStore;
use predicate_engine::engine::Plan;

/// The media type of [`Metrics::encode`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The value of the `profile` label of the mirrored kube-scheduler series.
pub const PROFILE: &str = "predicate-extender";

/// Every series the server exports, in one registry.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    pub requests: requests::RequestMetrics,
    pub predicates: predicates::PredicateMetrics,
    pub bind: bind::BindMetrics,
    pub policy: policy::PolicyMetrics,
    /// The leader or standby, with a live source and a scheduler configuration that elects one.
    pub leadership: Option<leadership::LeadershipMetrics>,
}

impl Metrics {
    /// The series of a server running `plan` on the model in `store`, with the live source's
    /// `watches` when there are any.
    pub fn new(plan: &Plan, store: Arc<ClusterStore>, watches: Option<Arc<WatchHealth>>) -> Metrics {
        let mut registry = Registry::with_prefix("predicate_extender");
        let requests = requests::RequestMetrics::register(&mut registry);
        let predicates = predicates::PredicateMetrics::register(&mut registry, plan);
        let bind = bind::BindMetrics::register(&mut registry);
        let policy = policy::PolicyMetrics::register(&mut registry);
        registry.register_collector(Box::new(cluster::ClusterCollector::new(store, watches)));
        registry.register(
            "build",
            "The extender's version and target; the value is always 1",
            Info::new(vec![
                ("version", env!("CARGO_PKG_VERSION")),
                ("target_arch", std::env::consts::ARCH),
                ("target_os", std::env::consts::OS),
            ]),
        );
        Metrics { registry, requests, predicates, bind, policy, leadership: None }
    }

    /// Adds the predicate order of the plan in force and, under dynamic ordering, each
    /// predicate's rejection rate and cost (read at scrape time).
    pub fn with_ordering(mut self, plan: Arc<ArcSwap<Plan>>) -> Metrics {
        self.registry.register_collector(Box::new(ordering::OrderingCollector::new(plan)));
        self
    }

    /// Adds the live source's pods assumed on their nodes and not yet confirmed by a watch event
    /// (`assumed_pods`).
    pub fn with_assumed_pods(mut self, writer: Arc<ModelWriter>) -> Metrics {
        self.registry.register_collector(Box::new(cluster::AssumedPods::new(writer)));
        self
    }

    /// Adds whether this replica's kube-scheduler leads (`leader`) and the scheduling calls answered
    /// while it did not (`standby_requests_total`).
    pub fn with_leadership(mut self, leadership: Arc<Leadership>) -> Metrics {
        self.leadership = Some(leadership::LeadershipMetrics::register(&mut self.registry, leadership));
        self
    }

    /// The OpenMetrics text of every series.
    pub fn encode(&self) -> Result<String, fmt::Error> {
        let mut text = String::with_capacity(16 << 10);
        encode(&mut text, &self.registry)?;
        Ok(text)
    }
}
