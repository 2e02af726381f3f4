//! The Policy in force and its reloads:
//! - `policy_reload_total{result="success"|"error"}`: counter, one per change of the `--policy`
//!   file seen while serving (both series exist from the start, at 0);
//! - `policy_last_reload_successful`: gauge, 0 while the file on disk is one that did not load
//!   (the previous plan serving on), 1 otherwise (as Prometheus's own
//!   `prometheus_config_last_reload_successful`);
//! - `policy_info{file,sha256}`: info, the file whose plan is in force and the SHA-256 of the
//!   bytes it was read from; without `--policy` (the default plan) both labels are empty.

use std::sync::Arc;

use arc_swap::ArcSwap;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::Registry;

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    result: &'static str,
}

/// The Policy file in force: its path and the hex SHA-256 of its bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ActivePolicy {
    pub file: String,
    pub sha256: String,
}

impl ActivePolicy {
    /// The file at `file` read as `bytes`.
    pub fn of(file: &str, bytes: &[u8]) -> Self {
        let digest = ring::digest::digest(&ring::digest::SHA256, bytes);
        let sha256 = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
        ActivePolicy { file: file.to_string(), sha256 }
    }
}

#[derive(Debug)]
pub struct PolicyMetrics {
    reloads: Family<ResultLabels, Counter>,
    last_successful: Gauge,
    active: Arc<ArcSwap<ActivePolicy>>,
}

impl PolicyMetrics {
    pub(super) fn register(registry: &mut Registry) -> Self {
        let reloads = Family::<ResultLabels, Counter>::default();
        for result in ["success", "error"] {
            reloads.get_or_create_owned(&ResultLabels { result });
        }
        registry.register(
            "policy_reload",
            "Changes of the --policy file seen while serving: loaded (success) or refused, the previous plan serving on (error)",
            reloads.clone(),
        );
        let last_successful = Gauge::default();
        last_successful.set(1);
        registry.register(
            "policy_last_reload_successful",
            "0 while the --policy file is a change that did not load (the previous plan serving on), 1 otherwise",
            last_successful.clone(),
        );
        let active = Arc::new(ArcSwap::from_pointee(ActivePolicy::default()));
        registry.register_collector(Box::new(ActiveCollector(Arc::clone(&active))));
        PolicyMetrics { reloads, last_successful, active }
    }

    /// Counts a change of the file: loaded or not.
    pub fn reloaded(&self, ok: bool) {
        let result = if ok { "success" } else { "error" };
        self.reloads.get_or_create(&ResultLabels { result }).inc();
        self.last_successful.set(i64::from(ok));
    }

    /// Says which file is in force.
    pub fn set_active(&self, active: ActivePolicy) {
        self.active.store(Arc::new(active));
    }

    /// The file in force, as `policy_info` says it.
    pub fn active(&self) -> Arc<ActivePolicy> {
        self.active.load_full()
    }
}

/// `policy_info` at scrape time, from the file in force then.
#[derive(Debug)]
struct ActiveCollector(Arc<ArcSwap<ActivePolicy>>);

impl Collector for ActiveCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let active = self.0.load();
        let info = Info::new(vec![("file", active.file.as_str()), ("sha256", active.sha256.as_str())]);
        info.encode(encoder.encode_descriptor(
            "policy",
            "The --policy file whose plan is in force and the SHA-256 of its bytes (empty: the default plan); the value is always 1",
            None,
            info.metric_type(),
        )?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_is_sha256_in_hex() {
        // The SHA-256 of "abc" (FIPS 180-2, appendix B.1).
        let want = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(ActivePolicy::of("p.json", b"abc").sha256, want);
    }

    #[test]
    fn both_results_are_exported_from_the_start_and_the_info_follows_the_file() {
        let mut registry = Registry::with_prefix("predicate_extender");
        let m = PolicyMetrics::register(&mut registry);
        let text = |registry: &Registry| {
            let mut text = String::new();
            prometheus_client::encoding::text::encode(&mut text, registry).unwrap();
            text
        };
        let t = text(&registry);
        assert!(t.contains("predicate_extender_policy_reload_total{result=\"success\"} 0\n"), "{t}");
        assert!(t.contains("predicate_extender_policy_reload_total{result=\"error\"} 0\n"), "{t}");
        assert!(t.contains("# TYPE predicate_extender_policy info\n"), "{t}");
        assert!(t.contains("predicate_extender_policy_info{file=\"\",sha256=\"\"} 1\n"), "{t}");
        assert!(t.contains("predicate_extender_policy_last_reload_successful 1\n"), "{t}");
        m.reloaded(false);
        m.set_active(ActivePolicy::of("/etc/p.json", b"abc"));
        let t = text(&registry);
        assert!(t.contains("predicate_extender_policy_reload_total{result=\"error\"} 1\n"), "{t}");
        assert!(t.contains("predicate_extender_policy_last_reload_successful 0\n"), "{t}");
        assert!(t.contains("predicate_extender_policy_info{file=\"/etc/p.json\",sha256=\"ba7816bf"), "{t}");
    }
}
