//! Which replica this is (`leader`: 1 when the kube-scheduler in this pod holds its Lease, 0 when
//! it is a standby, absent while unknown; `lease_read_errors_total` counts why it is unknown), and
//! the scheduling calls a standby answered anyway (`standby_requests_total{verb}`). kube-scheduler calls its extender only while it leads, so a
//! standby that is called is either a takeover racing the Lease poll (one retry period) or two
//! schedulers believing they lead; it answers as a leader would, from its warm model, and a second
//! bind of a pod is refused by the API server (409 Conflict, in the answer's `Error`).

use std::sync::Arc;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;

use crate::source::kube::leadership::{Leadership, Role};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct VerbLabels {
    verb: &'static str,
}

#[derive(Debug)]
pub struct LeadershipMetrics {
    leadership: Arc<Leadership>,
    standby_requests: Family<VerbLabels, Counter>,
}

impl LeadershipMetrics {
    pub(super) fn register(registry: &mut Registry, leadership: Arc<Leadership>) -> Self {
        let standby_requests = Family::<VerbLabels, Counter>::default();
        for verb in SCHEDULING_VERBS {
            standby_requests.get_or_create_owned(&VerbLabels { verb });
        }
        registry.register(
            "standby_requests",
            "Scheduling calls (filter, prioritize, preempt, bind) answered while the kube-scheduler in this pod did not hold its Lease, by verb",
            standby_requests.clone(),
        );
        registry.register_collector(Box::new(LeaderCollector { leadership: Arc::clone(&leadership) }));
        LeadershipMetrics { leadership, standby_requests }
    }

    /// A call of `verb` was answered: counted when this replica is a standby.
    pub fn answered(&self, verb: &'static str) {
        if SCHEDULING_VERBS.contains(&verb) && self.leadership.role() == Role::Standby {
            self.standby_requests.get_or_create(&VerbLabels { verb }).inc();
        }
    }
}

const SCHEDULING_VERBS: [&str; 4] = ["filter", "prioritize", "preempt", "bind"];

#[derive(Debug)]
struct LeaderCollector {
    leadership: Arc<Leadership>,
}

impl Collector for LeaderCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let errors = encoder.encode_descriptor(
            "lease_read_errors",
            "Reads of kube-scheduler's Lease that failed or timed out (whether this replica leads is unknown until one succeeds)",
            None,
            prometheus_client::metrics::MetricType::Counter,
        )?;
        ConstCounter::new(self.leadership.read_errors()).encode(errors)?;
        let value = match self.leadership.role() {
            Role::Leader => 1,
            Role::Standby => 0,
            Role::Unknown => return Ok(()),
        };
        let gauge = encoder.encode_descriptor(
            "leader",
            "1 when the kube-scheduler in this pod holds its Lease (it calls this extender), 0 when it is a standby (absent until the Lease has been read)",
            None,
            prometheus_client::metrics::MetricType::Gauge,
        )?;
        ConstGauge::new(value).encode(gauge)
    }
}
