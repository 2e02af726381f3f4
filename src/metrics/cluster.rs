//! Series computed at scrape time, never per event: the model's object counts from the current
//! snapshot, each watch's last-event age, sync and staleness from [`WatchHealth`] and, in a live
//! cluster, the pods assumed and not yet confirmed.

use std::sync::Arc;
use std::time::Instant;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Unit;

use crate::source::kube::{WatchHealth, WATCHED_KINDS};
use predicate_engine::cluster::model_writer::ModelWriter;
use predicate_engine::cluster::ClusterStore;

#[derive(Debug)]
pub struct ClusterCollector {
    store: Arc<ClusterStore>,
    watches: Option<Arc<WatchHealth>>,
}

impl ClusterCollector {
    pub fn new(store: Arc<ClusterStore>, watches: Option<Arc<WatchHealth>>) -> Self {
        ClusterCollector { store, watches }
    }
}

impl Collector for ClusterCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let snapshot = self.store.snapshot();
        let mut objects = encoder.encode_descriptor(
            "cache_objects",
            "Objects of each watched resource in the extender's cluster model",
            None,
            prometheus_client::metrics::MetricType::Gauge,
        )?;
        for kind in WATCHED_KINDS {
            let count = i64::try_from(snapshot.count(kind)).unwrap_or(i64::MAX);
            ConstGauge::new(count).encode(objects.encode_family(&[("resource", kind.resource())])?)?;
        }

        if let Some(watches) = &self.watches {
            let now = Instant::now();
            let mut ages = encoder.encode_descriptor(
                "watch_last_event_age",
                "Time since each watch last listed, delivered an event or a bookmark (absent until it first does)",
                Some(&Unit::Seconds),
                prometheus_client::metrics::MetricType::Gauge,
            )?;
            for (kind, last) in watches.last_events() {
                if let Some(last) = last {
                    let age = now.saturating_duration_since(last).as_secs_f64();
                    ConstGauge::new(age).encode(ages.encode_family(&[("resource", kind.resource())])?)?;
                }
            }

            // More than one list of a resource is a relist: a watch whose resourceVersion expired
            // (410 Gone), a full read of that resource from the API server each time.
            let mut lists = encoder.encode_descriptor(
                "watch_lists",
                "Live cluster: lists of each watched resource completed, the first one and every relist after 410 Gone",
                None,
                prometheus_client::metrics::MetricType::Counter,
            )?;
            for (kind, count) in watches.lists() {
                ConstCounter::new(count).encode(lists.encode_family(&[("resource", kind.resource())])?)?;
            }

            // What /readyz says, per resource, for alerts.
            let report = watches.report(now);
            let mut synced = encoder.encode_descriptor(
                "cache_synced",
                "Live cluster: 1 once the watch of a resource has listed it, 0 before (/readyz waits for every one)",
                None,
                prometheus_client::metrics::MetricType::Gauge,
            )?;
            for (kind, _) in watches.last_events() {
                let value = i64::from(!report.not_synced.contains(&kind.resource()));
                ConstGauge::new(value).encode(synced.encode_family(&[("resource", kind.resource())])?)?;
            }
            let mut stale = encoder.encode_descriptor(
                "cache_stale",
                "Live cluster: 1 while the watch of a resource has been failing for longer than --max-cache-staleness (/readyz then answers 503)",
                None,
                prometheus_client::metrics::MetricType::Gauge,
            )?;
            for (kind, _) in watches.last_events() {
                let value = i64::from(report.stale.iter().any(|s| s.resource == kind.resource()));
                ConstGauge::new(value).encode(stale.encode_family(&[("resource", kind.resource())])?)?;
            }
        }

        Ok(())
    }
}

/// kube-scheduler's `scheduler_cache_size{type="assumed_pods"}`: pods this extender bound that no
/// watch event has confirmed yet. Each is confirmed or expires within `--assume-ttl`, so a count
/// that stays up means the pod watch is not delivering.
#[derive(Debug)]
pub struct AssumedPods {
    writer: Arc<ModelWriter>,
}

impl AssumedPods {
    pub fn new(writer: Arc<ModelWriter>) -> Self {
        AssumedPods { writer }
    }
}

impl Collector for AssumedPods {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let count = ConstGauge::new(i64::try_from(self.writer.assumed_count()).unwrap_or(i64::MAX));
        count.encode(encoder.encode_descriptor(
            "assumed_pods",
            "Pods bound by this extender and counted on their node that no watch event has confirmed yet",
            None,
            count.metric_type(),
        )?)
    }
}
