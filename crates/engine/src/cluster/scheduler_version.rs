//! Which kube-scheduler the model counts as: the tested minors whose rules differ in what the
//! extender mirrors (today, how a pod being resized in place is counted: `cluster::pod_requests`).

use std::fmt;
use std::str::FromStr;

/// A tested kube-scheduler minor. The extender counts a pod's requests as this minor's
/// kube-scheduler does (`serve --kube-scheduler-version`); the default is the newest, the one the
/// shipped manifests run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SchedulerVersion {
    V1_35,
    V1_36,
    #[default]
    V1_37,
}

impl SchedulerVersion {
    /// Every tested minor, oldest first.
    pub const ALL: [SchedulerVersion; 3] = [SchedulerVersion::V1_35, SchedulerVersion::V1_36, SchedulerVersion::V1_37];

    /// `1.35`, `1.36`, `1.37`.
    pub fn minor(self) -> &'static str {
        match self {
            SchedulerVersion::V1_35 => "1.35",
            SchedulerVersion::V1_36 => "1.36",
            SchedulerVersion::V1_37 => "1.37",
        }
    }

    /// `InPlacePodLevelResourcesVerticalScaling` as the minor's kube-scheduler has it by default:
    /// alpha (off) in 1.35, beta (on) from 1.36. With it, a pod's pod-level status
    /// (`status.allocatedResources`, `status.resources`) counts while it is resized.
    pub fn reads_pod_level_status(self) -> bool {
        self >= SchedulerVersion::V1_36
    }
}

impl fmt::Display for SchedulerVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.minor())
    }
}

/// Why a version was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "kube-scheduler version {0:?} is not one the extender is tested with: give 1.35, 1.36 or 1.37 \
     (v1.37.2 and 1.37 are the same; for a newer kube-scheduler give 1.37, the newest rules known)"
)]
pub struct UnknownVersion(pub String);

impl FromStr for SchedulerVersion {
    type Err = UnknownVersion;
    /// A minor (`1.36`), with or without a leading `v` and a patch (`v1.36.3`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let trimmed = s.strip_prefix('v').unwrap_or(s);
        let mut parts = trimmed.split('.');
        let (major, minor) = (parts.next(), parts.next());
        let patch_ok = match parts.next() {
            None => true,
            Some(p) => !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) && parts.next().is_none(),
        };
        let version = match (major, minor) {
            (Some("1"), Some("35")) => SchedulerVersion::V1_35,
            (Some("1"), Some("36")) => SchedulerVersion::V1_36,
            (Some("1"), Some("37")) => SchedulerVersion::V1_37,
            _ => return Err(UnknownVersion(s.to_string())),
        };
        if patch_ok {
            Ok(version)
        } else {
            Err(UnknownVersion(s.to_string()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minors_patches_and_a_leading_v_are_read() {
        for (text, want) in [
            ("1.35", SchedulerVersion::V1_35),
            ("v1.36", SchedulerVersion::V1_36),
            ("v1.37.2", SchedulerVersion::V1_37),
            ("1.37.0", SchedulerVersion::V1_37),
        ] {
            assert_eq!(text.parse::<SchedulerVersion>(), Ok(want), "{text}");
        }
        for text in ["1.34", "1.38", "2.37", "1.37.", "1.37.x", "1.37.1.1", "", "latest"] {
            let err = text.parse::<SchedulerVersion>().unwrap_err();
            assert!(err.to_string().contains("give 1.35, 1.36 or 1.37"), "{text}: {err}");
        }
    }

    #[test]
    fn the_default_is_the_newest() {
        assert_eq!(SchedulerVersion::default(), *SchedulerVersion::ALL.last().unwrap());
        assert!(!SchedulerVersion::V1_35.reads_pod_level_status());
        assert!(SchedulerVersion::V1_36.reads_pod_level_status() && SchedulerVersion::V1_37.reads_pod_level_status());
    }
}
