//! Bind outcomes: `success`, or the kind of [`BindError`].

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

use crate::bind::BindError;

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: &'static str,
}

/// Every outcome, so each series exists (at 0) from the start.
pub const OUTCOMES: [&str; 13] = [
    "success",
    "unknown_pod",
    "pod_gone",
    "uid_mismatch",
    "unknown_node",
    "bound_elsewhere",
    "conflict",
    "invalid",
    "forbidden",
    "api_server",
    "unreachable",
    "timeout",
    "transport",
];

/// The `outcome` label of a bind's result.
pub fn outcome(result: &Result<(), BindError>) -> &'static str {
    match result {
        Ok(()) => "success",
        Err(BindError::UnknownPod(_)) => "unknown_pod",
        Err(BindError::PodGone(_)) => "pod_gone",
        Err(BindError::UidMismatch { .. }) => "uid_mismatch",
        Err(BindError::UnknownNode(_)) => "unknown_node",
        Err(BindError::BoundElsewhere { .. }) => "bound_elsewhere",
        Err(BindError::Conflict { .. }) => "conflict",
        Err(BindError::Invalid { .. }) => "invalid",
        Err(BindError::Forbidden { .. }) => "forbidden",
        Err(BindError::ApiServer { .. }) => "api_server",
        Err(BindError::Unreachable { .. }) => "unreachable",
        Err(BindError::Timeout { .. }) => "timeout",
        Err(BindError::Transport { .. }) => "transport",
    }
}

#[derive(Debug)]
pub struct BindMetrics {
    outcomes: Family<OutcomeLabels, Counter>,
}

impl BindMetrics {
    pub(super) fn register(registry: &mut Registry) -> Self {
        let outcomes = Family::<OutcomeLabels, Counter>::default();
        for outcome in OUTCOMES {
            outcomes.get_or_create_owned(&OutcomeLabels { outcome });
        }
        registry.register("bind", "Binds of decoded /bind requests, by outcome", outcomes.clone());
        BindMetrics { outcomes }
    }

    pub fn record(&self, result: &Result<(), BindError>) {
        self.outcomes.get_or_create(&OutcomeLabels { outcome: outcome(result) }).inc();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_outcome_is_listed() {
        let p = || "ns/p".to_string();
        let errors = [
            BindError::UnknownPod(p()),
            BindError::PodGone(p()),
            BindError::UidMismatch { pod: p(), actual: p(), requested: p() },
            BindError::UnknownNode(p()),
            BindError::BoundElsewhere { pod: p(), bound: p(), requested: p() },
            BindError::Conflict { pod: p(), message: p() },
            BindError::Invalid { pod: p(), message: p() },
            BindError::Forbidden { pod: p(), namespace: p(), message: p() },
            BindError::ApiServer { pod: p(), code: 500, message: p() },
            BindError::Unreachable { pod: p(), attempts: 3, error: p() },
            BindError::Timeout { pod: p(), after: p() },
            BindError::Transport { pod: p(), error: p() },
        ];
        let mut seen: Vec<&str> = errors.into_iter().map(|e| outcome(&Err(e))).collect();
        seen.insert(0, outcome(&Ok(())));
        assert_eq!(seen, OUTCOMES);
    }
}
