//! The predicate order of the plan in force, read at scrape time: each predicate's position, and
//! under dynamic ordering the rejection rate and mean sampled cost the order is computed from
//! (the same numbers as `GET /debug/ordering`).

use std::sync::Arc;

use arc_swap::ArcSwap;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Unit;

use predicate_engine::engine::ordering::OrderingView;
use predicate_engine::engine::Plan;

#[derive(Debug)]
pub struct OrderingCollector {
    plan: Arc<ArcSwap<Plan>>,
}

impl OrderingCollector {
    pub fn new(plan: Arc<ArcSwap<Plan>>) -> Self {
        OrderingCollector { plan }
    }
}

impl Collector for OrderingCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let view = OrderingView::of(&self.plan.load());
        let mut position = encoder.encode_descriptor(
            "predicate_order_position",
            "Where a predicate runs in the order a /filter request starting now uses (0 first); ordering is static or dynamic",
            None,
            MetricType::Gauge,
        )?;
        for p in &view.predicates {
            let value = ConstGauge::new(i64::try_from(p.position).unwrap_or(i64::MAX));
            value.encode(position.encode_family(&[("predicate", p.name.as_str()), ("ordering", view.ordering)])?)?;
        }
        let mut rate = encoder.encode_descriptor(
            "predicate_rejection_rate",
            "Dynamic ordering: a predicate's estimated probability of rejecting a node it runs on (decayed counts)",
            None,
            MetricType::Gauge,
        )?;
        for p in &view.predicates {
            if let Some(r) = p.rejection_rate {
                ConstGauge::new(r).encode(rate.encode_family(&[("predicate", p.name.as_str())])?)?;
            }
        }
        let mut cost = encoder.encode_descriptor(
            "predicate_cost",
            "Dynamic ordering: a predicate's mean time on one node, from the sampled /filter candidates (decayed)",
            Some(&Unit::Seconds),
            MetricType::Gauge,
        )?;
        for p in &view.predicates {
            if let Some(c) = p.cost_seconds {
                ConstGauge::new(c).encode(cost.encode_family(&[("predicate", p.name.as_str())])?)?;
            }
        }
        Ok(())
    }
}
