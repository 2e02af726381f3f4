//! A duration histogram that many threads observe at once without a lock.
//!
//! prometheus-client's `Histogram` takes a write lock per observation. The /filter requests
//! observe once per predicate per sampled node (thousands of observations a request) from all
//! the evaluator's threads at once: under load the lock and the thread switches it caused were a
//! quarter of the server's CPU time (`perf record` on the server at c=1, when a sampled request
//! timed every node). Here each observation
//! is three relaxed atomic adds; the sum is kept in whole nanoseconds, so it is exact.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use prometheus_client::encoding::{EncodeMetric, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::{MetricType, TypedMetric};

/// Clones share the counts, as prometheus-client's metrics do (a `Family` hands out clones).
#[derive(Debug, Clone)]
pub struct DurationHistogram(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    /// Upper bounds in seconds, ascending, the last +Inf.
    bounds: Box<[f64]>,
    /// Observations per bucket (not cumulative), one per bound.
    buckets: Box<[AtomicU64]>,
    sum_nanos: AtomicU64,
}

impl DurationHistogram {
    /// A histogram with these upper bounds (seconds, ascending) and a +Inf bucket.
    pub fn new(bounds: impl IntoIterator<Item = f64>) -> Self {
        let bounds: Box<[f64]> = bounds.into_iter().chain([f64::INFINITY]).collect();
        let buckets = bounds.iter().map(|_| AtomicU64::new(0)).collect();
        DurationHistogram(Arc::new(Inner { bounds, buckets, sum_nanos: AtomicU64::new(0) }))
    }

    pub fn observe(&self, took: Duration) {
        let h = &self.0;
        h.buckets[self.bucket(took)].fetch_add(1, Ordering::Relaxed);
        h.sum_nanos.fetch_add(nanos(took), Ordering::Relaxed);
    }

    /// The first bucket whose bound is >= the value; the +Inf bucket takes the rest.
    fn bucket(&self, took: Duration) -> usize {
        let seconds = took.as_secs_f64();
        self.0.bounds.partition_point(|bound| *bound < seconds).min(self.0.buckets.len() - 1)
    }

    /// A tally of observations kept by one thread and added to this histogram at once by
    /// [`Tally::commit`]: many observations, one atomic add per bucket.
    pub fn tally(&self) -> Tally {
        Tally { histogram: self.clone(), buckets: vec![0; self.0.buckets.len()], sum_nanos: 0 }
    }

    /// (sum in seconds, count, per-bucket counts with their bounds), the count taken from the
    /// buckets so the three always agree in one scrape.
    fn snapshot(&self) -> (f64, u64, Vec<(f64, u64)>) {
        let h = &self.0;
        let buckets: Vec<(f64, u64)> =
            h.bounds.iter().zip(h.buckets.iter()).map(|(b, n)| (*b, n.load(Ordering::Relaxed))).collect();
        let count = buckets.iter().map(|(_, n)| n).sum();
        (h.sum_nanos.load(Ordering::Relaxed) as f64 / 1e9, count, buckets)
    }
}

fn nanos(took: Duration) -> u64 {
    u64::try_from(took.as_nanos()).unwrap_or(u64::MAX)
}

/// Observations not yet in their histogram (see [`DurationHistogram::tally`]).
#[derive(Debug)]
pub struct Tally {
    histogram: DurationHistogram,
    buckets: Vec<u64>,
    sum_nanos: u64,
}

impl Tally {
    pub fn observe(&mut self, took: Duration) {
        let i = self.histogram.bucket(took);
        if let Some(n) = self.buckets.get_mut(i) {
            *n += 1;
        }
        self.sum_nanos = self.sum_nanos.saturating_add(nanos(took));
    }

    /// Adds the tallied observations to the histogram.
    pub fn commit(self) {
        let h = &self.histogram.0;
        for (bucket, n) in h.buckets.iter().zip(&self.buckets).filter(|(_, n)| **n > 0) {
            bucket.fetch_add(*n, Ordering::Relaxed);
        }
        h.sum_nanos.fetch_add(self.sum_nanos, Ordering::Relaxed);
    }
}

impl TypedMetric for DurationHistogram {
    const TYPE: MetricType = MetricType::Histogram;
}

impl EncodeMetric for DurationHistogram {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        let (sum, count, buckets) = self.snapshot();
        encoder.encode_histogram::<NoLabelSet>(sum, count, &buckets, None)
    }

    fn metric_type(&self) -> MetricType {
        Self::TYPE
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prometheus_client::encoding::text::encode;
    use prometheus_client::metrics::histogram::Histogram;
    use prometheus_client::registry::Registry;

    fn text(register: impl FnOnce(&mut Registry)) -> String {
        let mut registry = Registry::default();
        register(&mut registry);
        let mut out = String::new();
        encode(&mut out, &registry).unwrap();
        out
    }

    #[test]
    fn encodes_as_prometheus_clients_histogram_does() {
        let bounds = [0.001, 0.01, 0.1];
        let ours = DurationHistogram::new(bounds);
        let theirs = Histogram::new(bounds);
        for ms in [0, 1, 2, 10, 50, 100, 1000] {
            ours.observe(Duration::from_millis(ms));
            theirs.observe(ms as f64 / 1000.0);
        }
        let a = text(|r| r.register("d", "h", ours));
        let b = text(|r| r.register("d", "h", theirs));
        // The sums differ only in float rounding (theirs adds floats, ours nanoseconds).
        let without_sum = |t: &str| t.lines().filter(|l| !l.starts_with("d_sum")).collect::<Vec<_>>().join("\n");
        assert_eq!(without_sum(&a), without_sum(&b));
        assert!(a.contains("d_sum 1.163\n"), "{a}");
        assert!(a.contains("d_bucket{le=\"0.001\"} 2"), "{a}");
        assert!(a.contains("d_count 7"), "{a}");
    }

    #[test]
    fn a_committed_tally_counts_as_its_observations_would() {
        let (direct, tallied) = (DurationHistogram::new([0.001, 0.01]), DurationHistogram::new([0.001, 0.01]));
        let mut tally = tallied.tally();
        for us in [1, 999, 1000, 1001, 20_000] {
            direct.observe(Duration::from_micros(us));
            tally.observe(Duration::from_micros(us));
        }
        assert_eq!(tallied.snapshot().1, 0, "nothing until committed");
        tally.commit();
        assert_eq!(tallied.snapshot(), direct.snapshot());
    }

    #[test]
    fn threads_observe_without_losing_counts() {
        let h = DurationHistogram::new([0.5]);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| (0..10_000).for_each(|_| h.observe(Duration::from_nanos(3))));
            }
        });
        let (sum, count, buckets) = h.snapshot();
        assert_eq!(count, 80_000);
        assert_eq!(buckets[0].1, 80_000);
        assert!((sum - 240_000e-9).abs() < 1e-12, "{sum}");
    }
}
