//! Which of kube-scheduler's own Filter plugins run before the extender, in their order: the
//! default profile of the tested minor, less the plugins a KubeSchedulerConfiguration turns off
//! (the `policy-only` overlay's `scheduler-config --policy` output turns off those the Policy
//! replaces).

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use crate::cluster::SchedulerVersion;

/// One of kube-scheduler's default Filter plugins that the extender can stand in for.
/// DynamicResources and NodeDeclaredFeatures (1.36 on) are left out: no pod the extender models
/// claims devices or needs declared features, so they pass every node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Plugin {
    NodeUnschedulable,
    NodeName,
    TaintToleration,
    NodeAffinity,
    NodePorts,
    NodeResourcesFit,
    VolumeRestrictions,
    NodeVolumeLimits,
    VolumeBinding,
    VolumeZone,
    PodTopologySpread,
    InterPodAffinity,
}

impl Plugin {
    /// The plugin's name in kube-scheduler's configuration and in its statuses.
    pub fn name(self) -> &'static str {
        match self {
            Plugin::NodeUnschedulable => "NodeUnschedulable",
            Plugin::NodeName => "NodeName",
            Plugin::TaintToleration => "TaintToleration",
            Plugin::NodeAffinity => "NodeAffinity",
            Plugin::NodePorts => "NodePorts",
            Plugin::NodeResourcesFit => "NodeResourcesFit",
            Plugin::VolumeRestrictions => "VolumeRestrictions",
            Plugin::NodeVolumeLimits => "NodeVolumeLimits",
            Plugin::VolumeBinding => "VolumeBinding",
            Plugin::VolumeZone => "VolumeZone",
            Plugin::PodTopologySpread => "PodTopologySpread",
            Plugin::InterPodAffinity => "InterPodAffinity",
        }
    }

    /// The default profile's Filter plugins in the order `version` runs them
    /// (`pkg/scheduler/apis/config/v1/default_plugins.go`): 1.37 moved NodeName before
    /// NodeUnschedulable.
    pub fn default_order(version: SchedulerVersion) -> Vec<Plugin> {
        use Plugin::*;
        let first = match version {
            SchedulerVersion::V1_35 | SchedulerVersion::V1_36 => [NodeUnschedulable, NodeName],
            SchedulerVersion::V1_37 => [NodeName, NodeUnschedulable],
        };
        let rest = [
            TaintToleration,
            NodeAffinity,
            NodePorts,
            NodeResourcesFit,
            VolumeRestrictions,
            NodeVolumeLimits,
            VolumeBinding,
            VolumeZone,
            PodTopologySpread,
            InterPodAffinity,
        ];
        first.into_iter().chain(rest).collect()
    }
}

/// kube-scheduler's filters in front of the extender.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    pub version: SchedulerVersion,
    /// Filter plugins the configuration turns off (`plugins.filter.disabled`, or
    /// `plugins.multiPoint.disabled`).
    pub disabled: BTreeSet<String>,
}

/// Why a scheduler configuration could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{file}: cannot read: {source}")]
    Io { file: String, source: std::io::Error },
    #[error("{file}: not a KubeSchedulerConfiguration: {message}")]
    Parse { file: String, message: String },
}

impl Profile {
    /// The shipped configuration (`config/scheduler-config.yaml`): the default profile, every
    /// filter on.
    pub fn shipped(version: SchedulerVersion) -> Profile {
        Profile { version, disabled: BTreeSet::new() }
    }

    /// The filters of a KubeSchedulerConfiguration's first profile (the shipped files have one).
    pub fn from_config(path: &Path, version: SchedulerVersion) -> Result<Profile, ConfigError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io { file: file.clone(), source })?;
        Profile::parse(&file, &text, version)
    }

    pub fn parse(file: &str, text: &str, version: SchedulerVersion) -> Result<Profile, ConfigError> {
        let parse = |message: String| ConfigError::Parse { file: file.to_string(), message };
        let config: Value = serde_saphyr::from_str(text).map_err(|e| parse(e.to_string()))?;
        if config["kind"] != "KubeSchedulerConfiguration" {
            return Err(parse(format!("kind: {} (expected KubeSchedulerConfiguration)", config["kind"])));
        }
        let plugins = &config["profiles"][0]["plugins"];
        let mut disabled = BTreeSet::new();
        for point in ["filter", "multiPoint"] {
            for (i, entry) in plugins[point]["disabled"].as_array().into_iter().flatten().enumerate() {
                let Some(name) = entry["name"].as_str() else {
                    return Err(parse(format!("profiles[0].plugins.{point}.disabled[{i}].name: missing")));
                };
                disabled.insert(name.to_string());
            }
        }
        Ok(Profile { version, disabled })
    }

    /// The filter plugins that run, in order.
    pub fn filters(&self) -> Vec<Plugin> {
        if self.disabled.contains("*") {
            return Vec::new();
        }
        Plugin::default_order(self.version).into_iter().filter(|p| !self.disabled.contains(p.name())).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_configurations_filters() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let shipped =
            Profile::from_config(&root.join("config/scheduler-config.yaml"), SchedulerVersion::V1_37).unwrap();
        assert_eq!(shipped, Profile::shipped(SchedulerVersion::V1_37));
        assert_eq!(shipped.filters()[..2], [Plugin::NodeName, Plugin::NodeUnschedulable]);
        assert_eq!(
            Profile::shipped(SchedulerVersion::V1_36).filters()[..2],
            [Plugin::NodeUnschedulable, Plugin::NodeName]
        );
        let policy_only =
            Profile::from_config(&root.join("config/scheduler-config-policy.yaml"), SchedulerVersion::V1_37).unwrap();
        let names: Vec<&str> = policy_only.filters().iter().map(|p| p.name()).collect();
        assert_eq!(
            names,
            [
                "NodePorts",
                "NodeResourcesFit",
                "VolumeRestrictions",
                "NodeVolumeLimits",
                "VolumeBinding",
                "VolumeZone",
                "PodTopologySpread",
                "InterPodAffinity"
            ]
        );
    }

    #[test]
    fn a_file_that_is_not_a_scheduler_configuration_is_refused_by_name() {
        let err = Profile::parse("p.yaml", "kind: Policy\n", SchedulerVersion::V1_37).unwrap_err();
        assert_eq!(
            err.to_string(),
            "p.yaml: not a KubeSchedulerConfiguration: kind: \"Policy\" (expected KubeSchedulerConfiguration)"
        );
        let err = Profile::parse(
            "p.yaml",
            "kind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    filter:\n      disabled:\n      - {}\n",
            SchedulerVersion::V1_37,
        )
        .unwrap_err();
        assert!(err.to_string().contains("profiles[0].plugins.filter.disabled[0].name: missing"), "{err}");
        let all = Profile::parse(
            "p.yaml",
            "kind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    multiPoint:\n      disabled:\n      - name: '*'\n",
            SchedulerVersion::V1_37,
        )
        .unwrap();
        assert!(all.filters().is_empty());
    }
}
