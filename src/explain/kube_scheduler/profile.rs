//! Which of kube-scheduler's own PreFilter and Filter plugins run before the extender, in their
//! order: the default profile of the tested minor, less the plugins a KubeSchedulerConfiguration
//! turns off (the `policy-only` overlay's `scheduler-config --policy` output turns off those the
//! Policy replaces), for the profile of the pod's `schedulerName`.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use crate::scheduler_config::leader_election::{lease_of, LeaseSpec};

use predicate_engine::cluster::objects::Pod;
use predicate_engine::cluster::SchedulerVersion;

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
    const ALL: [Plugin; 12] = [
        Plugin::NodeUnschedulable,
        Plugin::NodeName,
        Plugin::TaintToleration,
        Plugin::NodeAffinity,
        Plugin::NodePorts,
        Plugin::NodeResourcesFit,
        Plugin::VolumeRestrictions,
        Plugin::NodeVolumeLimits,
        Plugin::VolumeBinding,
        Plugin::VolumeZone,
        Plugin::PodTopologySpread,
        Plugin::InterPodAffinity,
    ];

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

    fn named(name: &str) -> Option<Plugin> {
        Plugin::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The default profile's Filter plugins in the order `version` runs them (their PreFilters run
    /// in the same order; `pkg/scheduler/apis/config/v1/default_plugins.go`): 1.37 moved NodeName
    /// before NodeUnschedulable.
    pub fn default_order(version: SchedulerVersion) -> [Plugin; 12] {
        let mut order = Plugin::ALL;
        if version >= SchedulerVersion::V1_37 {
            order.swap(0, 1);
        }
        order
    }
}

/// Default plugins the extender does not play, which pass every pod it models (or take no part in
/// filtering): enabling them changes nothing here.
const PASSING_DEFAULTS: &[&str] = &[
    "DynamicResources",
    "NodeDeclaredFeatures",
    "SchedulingGates",
    "PrioritySort",
    "DefaultPreemption",
    "NodeResourcesBalancedAllocation",
    "ImageLocality",
    "DefaultBinder",
];

/// The in-process kube-scheduler's plugin ([`IN_PROCESS_PLUGIN`], docs/in-process.md) is the engine
/// itself, at Filter after the default plugins, where explain plays the extender. Its rejections
/// count as the extender's do (one string per node), under its own name; with it, every node is
/// filtered (no extender call after the search), which is what explain counts.
pub use crate::scheduler_config::IN_PROCESS_PLUGIN;

/// Which default plugins an extension point runs: all but those turned off, or, after `*` is
/// turned off, only those turned on again.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Point {
    all_off: bool,
    off: BTreeSet<Plugin>,
    on: BTreeSet<Plugin>,
}

impl Point {
    const ALL_ON: Point = Point { all_off: false, off: BTreeSet::new(), on: BTreeSet::new() };

    /// Turns `name` (one of the plugins played, `plugin`; `*`; or another default plugin, which
    /// changes nothing here) on or off.
    fn set(&mut self, name: &str, plugin: Option<Plugin>, on: bool) {
        match (plugin, on) {
            (_, false) if name == "*" => self.all_off = true,
            (Some(plugin), false) => {
                self.off.insert(plugin);
            }
            (Some(plugin), true) => {
                self.on.insert(plugin);
            }
            (None, _) => {}
        }
    }

    fn runs(&self, plugin: Plugin) -> bool {
        self.on.contains(&plugin) || !(self.all_off || self.off.contains(&plugin))
    }
}

/// One profile of kube-scheduler's configuration, as far as its PreFilter and Filter plugins go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    pre_filter: Point,
    filter: Point,
    /// The engine runs as the in-process plugin ([`IN_PROCESS_PLUGIN`]) rather than as an extender.
    in_process: bool,
}

impl Profile {
    /// The default profile: every default plugin on.
    pub const DEFAULT: Profile = Profile { pre_filter: Point::ALL_ON, filter: Point::ALL_ON, in_process: false };

    /// Who rejects the nodes the default plugins pass: the extender, or the in-process plugin.
    pub fn engine_name(&self) -> &'static str {
        if self.in_process {
            IN_PROCESS_PLUGIN
        } else {
            "Extender"
        }
    }

    /// The Filter plugins that run, in `version`'s order.
    pub fn filters(&self, version: SchedulerVersion) -> Vec<Plugin> {
        Plugin::default_order(version).into_iter().filter(|p| self.filter.runs(*p)).collect()
    }

    /// The plugins whose PreFilter runs, in `version`'s order.
    pub fn pre_filters(&self, version: SchedulerVersion) -> Vec<Plugin> {
        Plugin::default_order(version).into_iter().filter(|p| self.pre_filter.runs(*p)).collect()
    }
}

/// Why a scheduler configuration could not be read, or has no profile for a pod.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{file}: cannot read: {source}")]
    Io { file: String, source: std::io::Error },
    #[error("{file}: not a KubeSchedulerConfiguration: {message}")]
    Parse { file: String, message: String },
    #[error("{file}: no profile schedules pods of schedulerName {scheduler:?} (its profiles: {profiles})")]
    NoProfile { file: String, scheduler: String, profiles: String },
}

/// kube-scheduler's configuration, as explain reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubeSchedulerConfig {
    /// The file it came from; `None`: the shipped configuration, whose one profile runs every
    /// default plugin and stands for any pod's scheduler.
    file: Option<String>,
    /// By `schedulerName`.
    profiles: Vec<(String, Profile)>,
    /// The Lease its replicas elect a leader with (`None`: no file, or `leaderElect: false`).
    lease: Option<LeaseSpec>,
}

impl KubeSchedulerConfig {
    /// The shipped configuration (`config/scheduler-config.yaml`): the default profile, every
    /// plugin on.
    pub const fn shipped() -> KubeSchedulerConfig {
        KubeSchedulerConfig { file: None, profiles: Vec::new(), lease: None }
    }

    /// The file's configuration, or the shipped one without a file.
    pub fn load(path: Option<&Path>) -> Result<KubeSchedulerConfig, ConfigError> {
        let Some(path) = path else { return Ok(KubeSchedulerConfig::shipped()) };
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io { file: file.clone(), source })?;
        KubeSchedulerConfig::parse(&file, &text)
    }

    pub fn parse(file: &str, text: &str) -> Result<KubeSchedulerConfig, ConfigError> {
        let parse = |message: String| ConfigError::Parse { file: file.to_string(), message };
        let config: Value = serde_saphyr::from_str(text).map_err(|e| parse(e.to_string()))?;
        if config["kind"] != "KubeSchedulerConfiguration" {
            return Err(parse(format!("kind: {} (expected KubeSchedulerConfiguration)", config["kind"])));
        }
        let listed = config["profiles"].as_array().cloned().unwrap_or_default();
        // No profile at all: kube-scheduler defaults one, default-scheduler's.
        let listed = if listed.is_empty() { vec![Value::Null] } else { listed };
        let mut profiles = Vec::new();
        for (i, p) in listed.iter().enumerate() {
            let name = p["schedulerName"].as_str().unwrap_or("default-scheduler").to_string();
            let plugins = &p["plugins"];
            let mut profile = Profile::DEFAULT;
            for (point, targets) in
                [("multiPoint", [true, true]), ("preFilter", [true, false]), ("filter", [false, true])]
            {
                for (kind, on) in [("disabled", false), ("enabled", true)] {
                    for (j, entry) in plugins[point][kind].as_array().into_iter().flatten().enumerate() {
                        let at = || format!("profiles[{i}].plugins.{point}.{kind}[{j}].name");
                        let Some(name) = entry["name"].as_str() else {
                            return Err(parse(format!("{}: missing", at())));
                        };
                        let plugin = Plugin::named(name);
                        if name == IN_PROCESS_PLUGIN {
                            if targets[1] {
                                profile.in_process = on;
                            }
                            continue;
                        }
                        if on && plugin.is_none() && !PASSING_DEFAULTS.contains(&name) {
                            return Err(parse(format!(
                                "{}: {name:?} is not one of kube-scheduler's default plugins, which explain plays",
                                at()
                            )));
                        }
                        if targets[0] {
                            profile.pre_filter.set(name, plugin, on);
                        }
                        if targets[1] {
                            profile.filter.set(name, plugin, on);
                        }
                    }
                }
            }
            profiles.push((name, profile));
        }
        let lease = lease_of(&config).map_err(parse)?;
        Ok(KubeSchedulerConfig { file: Some(file.to_string()), profiles, lease })
    }

    /// The Lease kube-scheduler's replicas elect a leader with, when they do.
    pub fn lease(&self) -> Option<&LeaseSpec> {
        self.lease.as_ref()
    }

    /// The profile that schedules `pod` (its `schedulerName`).
    pub fn profile_for(&self, pod: &Pod) -> Result<&Profile, ConfigError> {
        static DEFAULT: Profile = Profile::DEFAULT;
        let Some(file) = &self.file else {
            return Ok(&DEFAULT);
        };
        let scheduler = pod.spec.scheduler();
        self.profiles.iter().find(|(name, _)| name == scheduler).map(|(_, p)| p).ok_or_else(|| ConfigError::NoProfile {
            file: file.clone(),
            scheduler: scheduler.to_string(),
            profiles: self.profiles.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", "),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use predicate_engine::testing::PodBuilder;

    fn ours() -> Pod {
        let mut pod = PodBuilder::new("p").build();
        pod.spec.scheduler_name = predicate_engine::cluster::IStr::new("predicate-scheduler");
        pod
    }

    fn names(plugins: Vec<Plugin>) -> Vec<&'static str> {
        plugins.into_iter().map(Plugin::name).collect()
    }

    #[test]
    fn the_shipped_configurations_filters() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let shipped = KubeSchedulerConfig::load(Some(&root.join("config/scheduler-config.yaml"))).unwrap();
        let profile = shipped.profile_for(&ours()).unwrap();
        assert_eq!(profile, &Profile::DEFAULT);
        assert_eq!(names(profile.filters(SchedulerVersion::V1_37))[..2], ["NodeName", "NodeUnschedulable"]);
        assert_eq!(names(profile.filters(SchedulerVersion::V1_36))[..2], ["NodeUnschedulable", "NodeName"]);
        let policy_only = KubeSchedulerConfig::load(Some(&root.join("config/scheduler-config-policy.yaml"))).unwrap();
        let profile = policy_only.profile_for(&ours()).unwrap();
        let kept = [
            "NodePorts",
            "NodeResourcesFit",
            "VolumeRestrictions",
            "NodeVolumeLimits",
            "VolumeBinding",
            "VolumeZone",
            "PodTopologySpread",
            "InterPodAffinity",
        ];
        assert_eq!(names(profile.filters(SchedulerVersion::V1_37)), kept);
        assert_eq!(names(profile.pre_filters(SchedulerVersion::V1_37)), kept, "their PreFilters are off too");
        let err = policy_only.profile_for(&PodBuilder::new("p").build()).unwrap_err();
        assert!(
            err.to_string().ends_with(
                "no profile schedules pods of schedulerName \"default-scheduler\" (its profiles: predicate-scheduler)"
            ),
            "{err}"
        );
    }

    /// The in-process scheduler's configuration: the policy-only profile's default plugins but the
    /// filters that count placed pods (the engine counts them from its Reserve), and the engine
    /// named as its plugin rather than as the extender.
    #[test]
    fn the_in_process_configuration_runs_only_the_volume_filters_and_names_the_plugin() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let load = |file: &str| KubeSchedulerConfig::load(Some(&root.join(file))).unwrap();
        let (in_process, policy_only) =
            (load("config/scheduler-config-in-process.yaml"), load("config/scheduler-config-policy.yaml"));
        let profile = in_process.profile_for(&ours()).unwrap();
        let policy_profile = policy_only.profile_for(&ours()).unwrap();
        let counting = ["NodePorts", "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity"];
        for version in SchedulerVersion::ALL {
            let expected: Vec<Plugin> =
                policy_profile.filters(version).into_iter().filter(|p| !counting.contains(&p.name())).collect();
            assert_eq!(profile.filters(version), expected, "{version}");
            let expected: Vec<Plugin> =
                policy_profile.pre_filters(version).into_iter().filter(|p| !counting.contains(&p.name())).collect();
            assert_eq!(profile.pre_filters(version), expected, "{version}");
        }
        let volumes = ["VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone"];
        assert_eq!(names(profile.filters(SchedulerVersion::V1_37)), volumes);
        assert_eq!((profile.engine_name(), policy_profile.engine_name()), ("PredicateEngine", "Extender"));
    }

    #[test]
    fn points_turn_plugins_off_and_on_again() {
        let config = KubeSchedulerConfig::parse(
            "c.yaml",
            "kind: KubeSchedulerConfiguration
profiles:
- schedulerName: predicate-scheduler
  plugins:
    filter:
      disabled: [{name: '*'}]
      enabled: [{name: NodeResourcesFit}, {name: DynamicResources}]
    preFilter:
      disabled: [{name: NodeAffinity}]
",
        )
        .unwrap();
        let profile = config.profile_for(&ours()).unwrap();
        assert_eq!(names(profile.filters(SchedulerVersion::V1_37)), ["NodeResourcesFit"]);
        let pre = names(profile.pre_filters(SchedulerVersion::V1_37));
        assert!(!pre.contains(&"NodeAffinity") && pre.contains(&"NodeName"), "{pre:?}");
    }

    #[test]
    fn a_file_that_is_not_a_scheduler_configuration_is_refused_by_name() {
        let err = KubeSchedulerConfig::parse("p.yaml", "kind: Policy\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "p.yaml: not a KubeSchedulerConfiguration: kind: \"Policy\" (expected KubeSchedulerConfiguration)"
        );
        let err = KubeSchedulerConfig::parse(
            "p.yaml",
            "kind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    filter:\n      disabled:\n      - {}\n",
        )
        .unwrap_err();
        assert!(err.to_string().contains("profiles[0].plugins.filter.disabled[0].name: missing"), "{err}");
        let err = KubeSchedulerConfig::parse(
            "p.yaml",
            "kind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    filter:\n      enabled:\n      - {name: MyPlugin}\n",
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("profiles[0].plugins.filter.enabled[0].name: \"MyPlugin\" is not one of"),
            "{err}"
        );
        let all = KubeSchedulerConfig::parse(
            "p.yaml",
            "kind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    multiPoint:\n      disabled:\n      - name: '*'\n",
        )
        .unwrap();
        let profile = all.profile_for(&PodBuilder::new("p").build()).unwrap();
        assert!(
            profile.filters(SchedulerVersion::V1_37).is_empty()
                && profile.pre_filters(SchedulerVersion::V1_37).is_empty()
        );
    }
}
