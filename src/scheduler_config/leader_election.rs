//! The Lease a kube-scheduler configuration elects its leader with (`leaderElection`), read with
//! kube-scheduler's defaults (`pkg/scheduler/apis/config/v1/defaults.go`, which takes component-base's
//! `RecommendedDefaultLeaderElectionConfiguration`: leaderElect true, leases, 15s/10s/2s) and its
//! own namespace and name defaults (kube-system/kube-scheduler).

use std::time::Duration;

use serde_json::Value;

/// Where kube-scheduler's leader election holds its Lease, and how often a candidate retries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseSpec {
    pub namespace: String,
    pub name: String,
    /// `leaderElection.retryPeriod`: how often candidates try to take or renew the Lease.
    pub retry_period: Duration,
}

/// kube-scheduler's defaults (see the module's comment).
const DEFAULT_NAMESPACE: &str = "kube-system";
const DEFAULT_NAME: &str = "kube-scheduler";
const DEFAULT_RETRY_PERIOD: Duration = Duration::from_secs(2);

/// The Lease of a parsed KubeSchedulerConfiguration; `None` when `leaderElection.leaderElect` is
/// false (every replica schedules, none is a standby). `Err` names the field that does not read.
pub fn lease_of(config: &Value) -> Result<Option<LeaseSpec>, String> {
    let election = &config["leaderElection"];
    match &election["leaderElect"] {
        Value::Null | Value::Bool(true) => {}
        Value::Bool(false) => return Ok(None),
        other => return Err(format!("leaderElection.leaderElect: {other} (expected true or false)")),
    }
    // Unset or empty: kube-scheduler's default (its defaulting tests `len(...) == 0`).
    let text = |field: &str, default: &str| match &election[field] {
        Value::Null => Ok(default.to_string()),
        Value::String(s) if s.is_empty() => Ok(default.to_string()),
        Value::String(s) => Ok(s.clone()),
        other => Err(format!("leaderElection.{field}: {other} (expected a string)")),
    };
    let retry_period = match &election["retryPeriod"] {
        Value::Null => DEFAULT_RETRY_PERIOD,
        Value::String(s) if s.is_empty() => DEFAULT_RETRY_PERIOD,
        Value::String(s) => go_duration(s)
            .filter(|d| !d.is_zero())
            .ok_or_else(|| format!("leaderElection.retryPeriod: {s:?} (expected a duration such as 2s)"))?,
        other => return Err(format!("leaderElection.retryPeriod: {other} (expected a duration such as 2s)")),
    };
    Ok(Some(LeaseSpec {
        namespace: text("resourceNamespace", DEFAULT_NAMESPACE)?,
        name: text("resourceName", DEFAULT_NAME)?,
        retry_period,
    }))
}

/// A non-negative Go duration (`2s`, `500ms`, `1m30s`, `+2s`), as Go's time.ParseDuration reads
/// it (units ns, us, µs, μs, ms, s, m, h).
fn go_duration(text: &str) -> Option<Duration> {
    let mut total = Duration::ZERO;
    let mut rest = text.strip_prefix('+').unwrap_or(text);
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(rest.len());
        let number: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit_len = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let seconds = match &rest[..unit_len] {
            "ns" => 1e-9,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        rest = &rest[unit_len..];
        total += Duration::try_from_secs_f64(number * seconds).ok()?;
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_shipped_configuration_s_lease() {
        let text = include_str!("../../config/scheduler-config.yaml");
        let config: Value = serde_saphyr::from_str(text).unwrap();
        let lease = lease_of(&config).unwrap().unwrap();
        assert_eq!(lease.namespace, "predicate-scheduler");
        assert_eq!(lease.name, "predicate-scheduler");
        assert_eq!(lease.retry_period, Duration::from_secs(2));
    }

    #[test]
    fn kube_scheduler_s_defaults_and_what_does_not_read() {
        // pkg/scheduler/apis/config/v1/defaults_test.go: an empty configuration elects on
        // kube-system/kube-scheduler, retrying every 2s.
        let default = lease_of(&json!({})).unwrap().unwrap();
        assert_eq!((default.namespace.as_str(), default.name.as_str()), ("kube-system", "kube-scheduler"));
        assert_eq!(default.retry_period, Duration::from_secs(2));
        assert_eq!(lease_of(&json!({"leaderElection": {"leaderElect": false}})).unwrap(), None);
        let fast = lease_of(&json!({"leaderElection": {"retryPeriod": "1m500ms"}})).unwrap().unwrap();
        assert_eq!(fast.retry_period, Duration::from_millis(60_500));
        // time.ParseDuration's sign and both micro signs.
        let signed = lease_of(&json!({"leaderElection": {"retryPeriod": "+1500\u{3bc}s"}})).unwrap().unwrap();
        assert_eq!(signed.retry_period, Duration::from_micros(1500));
        // Empty strings are unset: kube-scheduler defaults them.
        let empty = json!({"leaderElection": {"resourceNamespace": "", "resourceName": "", "retryPeriod": ""}});
        assert_eq!(lease_of(&empty).unwrap(), Some(default.clone()));
        for (bad, field) in [
            (json!({"leaderElection": {"leaderElect": "yes"}}), "leaderElection.leaderElect"),
            (json!({"leaderElection": {"retryPeriod": "2 seconds"}}), "leaderElection.retryPeriod"),
            (json!({"leaderElection": {"retryPeriod": "0s"}}), "leaderElection.retryPeriod"),
            (json!({"leaderElection": {"resourceName": 7}}), "leaderElection.resourceName"),
            (json!({"leaderElection": {"retryPeriod": "-2s"}}), "leaderElection.retryPeriod"),
        ] {
            let error = lease_of(&bad).unwrap_err();
            assert!(error.starts_with(field), "{error}");
        }
    }
}
