//! `predicate-extender scheduler-config --policy FILE`: the shipped kube-scheduler configuration
//! with kube-scheduler's own plugins that the Policy's predicates and priorities replace turned off
//! at the extension points they replace (`replaced.rs`), each commented with what replaces it and
//! what an operator gives up. kube-scheduler then filters and scores with the extender alone where
//! the Policy speaks, instead of doing the same work twice.

pub mod leader_election;
pub mod replaced;

use std::collections::BTreeSet;
use std::fmt::Write as _;

use predicate_engine::policy::file::decode;
use predicate_engine::policy::{parse, Overrides, PolicyError};
use predicate_engine::registry::validate::{predicate_plugin, priority_plugin};
use predicate_engine::registry::{PREDICATES, PRIORITIES};

pub use replaced::{disabled, disabled_in_process, kept, Disabled, Point, KEPT, KEPT_OFF_IN_PROCESS};

/// The in-process kube-scheduler's plugin (e2e/kube/inprocess/plugin.go's `Name`), as a profile's
/// `plugins` and `pluginConfig` name it.
pub const IN_PROCESS_PLUGIN: &str = "PredicateEngine";

/// The configuration the Deployment ships (`config/scheduler-config.yaml`), which this one extends.
pub const SHIPPED: &str = include_str!("../../config/scheduler-config.yaml");

/// The scheduler name of the shipped configuration's profile (`config/scheduler-config.yaml`):
/// the pods that set `schedulerName: predicate-scheduler` are the extender's. `whatif` looks at
/// them unless told otherwise. (A pod without a schedulerName is the API server's
/// `default-scheduler`'s: `predicate_engine::cluster::objects::DEFAULT_SCHEDULER`.)
pub const SHIPPED_SCHEDULER_NAME: &str = "predicate-scheduler";

/// The profile line the `plugins:` block goes under.
const PROFILE_LINE: &str = "  - schedulerName: predicate-scheduler\n";

/// A Policy that lists nothing: the default predicates and priorities, as `serve` runs them
/// without `--policy`.
pub const DEFAULT_POLICY: &[u8] = br#"{"kind": "Policy", "apiVersion": "v1"}"#;

/// The classic plugins (registered names) a Policy runs: its entries, or the default sets where it
/// lists none. The Policy is validated first, so an invalid file is refused as `serve` refuses it.
pub fn policy_plugins(file: &str, bytes: &[u8]) -> Result<BTreeSet<&'static str>, PolicyError> {
    parse(file, bytes, Overrides::default())?;
    let text = std::str::from_utf8(bytes).map_err(|source| PolicyError::NotUtf8 { file: file.to_string(), source })?;
    let policy = decode(text).map_err(|source| PolicyError::Decode { file: file.to_string(), source })?;
    let mut plugins = BTreeSet::new();
    match &policy.predicates {
        None => plugins.extend(PREDICATES.iter().filter(|r| r.default).map(|r| r.name)),
        Some(entries) => {
            plugins.extend(entries.iter().filter_map(|e| predicate_plugin(&e.name, e.argument.as_ref())));
        }
    }
    match &policy.priorities {
        None => plugins.extend(PRIORITIES.iter().filter(|r| r.default_weight.is_some()).map(|r| r.name)),
        Some(entries) => plugins.extend(
            entries.iter().filter(|e| e.weight > 0).filter_map(|e| priority_plugin(&e.name, e.argument.as_ref())),
        ),
    }
    Ok(plugins)
}

/// Where the rendered configuration runs the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine<'a> {
    /// Beside kube-scheduler, as the shipped `extenders` entry (`config/scheduler-config-policy.yaml`).
    Extender,
    /// Inside kube-scheduler as the [`IN_PROCESS_PLUGIN`] (`config/scheduler-config-in-process.yaml`,
    /// docs/in-process.md), reading the Policy at `policy` (its path where kube-scheduler runs; `None`:
    /// the default plan).
    InProcess { policy: Option<&'a str> },
}

/// The shipped configuration with kube-scheduler's own plugins that the Policy's classic plugins
/// (`policy`, [`policy_plugins`]) replace turned off, for the engine run as `engine`, headed by how
/// it was made (`command`).
pub fn render(command: &str, policy: &BTreeSet<&'static str>, engine: Engine<'_>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Generated: do not edit; after a change to the Policy, run again:\n#   {command}");
    // The shipped file without its own header (which says it is the file to edit).
    let body = SHIPPED.split_inclusive('\n').skip_while(|l| l.starts_with('#')).collect::<String>();
    let Some(at) = body.find(PROFILE_LINE).map(|i| i + PROFILE_LINE.len()) else {
        // The shipped file is compiled in: a test keeps the profile line in it.
        out.push_str(&body);
        return out;
    };
    let (head, tail) = body.split_at(at);
    match engine {
        Engine::Extender => {
            out.push_str(EXTENDER_HEADER);
            out.push_str(head);
            out.push_str(&plugins_block(engine, &disabled(policy), &kept(policy)));
            out.push_str(tail);
        }
        Engine::InProcess { policy: path } => {
            out.push_str(IN_PROCESS_HEADER);
            out.push_str(head);
            out.push_str(&plugins_block(engine, &disabled_in_process(policy), &kept(policy)));
            out.push_str(&plugin_config(path));
            // The profile is the last thing before `extenders`, which the in-process scheduler has not.
            let rest = tail.find(EXTENDERS_LINE).map_or(tail, |i| &tail[..i]);
            out.push_str(rest);
        }
    }
    out
}

const EXTENDER_HEADER: &str = "\
# kube-scheduler's configuration for the predicate-scheduler Deployment, as shipped
# (config/scheduler-config.yaml), with kube-scheduler's own plugins whose Filter or Score the
# Policy's predicates and priorities replace turned off (the `plugins:` block of the profile), so
# that the extender's verdicts and scores are the only ones where the Policy speaks and no check
# runs twice. Left on: the filters that count the pods already placed (see `filter:` below),
# the volume plugins (VolumeRestrictions checks ReadWriteOncePod claims,
# NodeVolumeLimits counts in-tree volumes migrated to CSI, VolumeBinding binds the claims,
# VolumeZone runs only for pods with volumes), DynamicResources, NodeDeclaredFeatures where the
# version has it, and whatever the Policy does not replace. With kube-scheduler's filters off,
# its sample of nodes (percentageOfNodesToScore, 10% of 5,000 nodes by default) is taken before
# any node is checked: on a large cluster a pod that fits few nodes can take several scheduling
# cycles (docs/operations.md, \"kube-scheduler's own plugins off\").
";

const IN_PROCESS_HEADER: &str = "\
# kube-scheduler's configuration for the in-process scheduler (overlays/in-process,
# docs/in-process.md): kube-scheduler built with the PredicateEngine plugin (e2e/kube/inprocess),
# which runs the predicate engine inside the scheduling cycle; no extender, no sidecar. The shipped
# configuration (config/scheduler-config.yaml) without `extenders`, the plugin on at every
# extension point it implements, and kube-scheduler's own plugins whose Filter or Score the
# Policy's predicates and priorities replace turned off, the ones that count the pods already
# placed included: the engine counts a pod from the plugin's Reserve. Left on: the volume plugins
# (VolumeRestrictions checks ReadWriteOncePod claims, NodeVolumeLimits counts in-tree volumes
# migrated to CSI, VolumeBinding binds the claims, VolumeZone runs only for pods with volumes),
# DynamicResources, NodeDeclaredFeatures where the version has it, and whatever the Policy does not
# replace.
";

/// The line the shipped `extenders` section starts with.
const EXTENDERS_LINE: &str = "extenders:\n";

/// The profile's `plugins:` block, indented under the profile. `kept`: the rows the extender's
/// configuration leaves on (in-process, they are in `disabled` and said to be off).
fn plugins_block(engine: Engine<'_>, disabled: &[Disabled], kept: &[Disabled]) -> String {
    let in_process = matches!(engine, Engine::InProcess { .. });
    let mut out = String::new();
    if disabled.is_empty() && !in_process {
        out.push_str("    # The Policy replaces none of the plugins that may be turned off: they all stay on.\n");
        return out;
    }
    out.push_str("    plugins:\n");
    if in_process {
        comment(
            &mut out,
            "      ",
            "The engine at every extension point it implements: PreFilter (the pod prepared once), Filter \
             (the Policy's predicates, in its order, with the nominated-pod double pass), Score (the \
             Policy's priorities; weight 1 as the extender's, scaled as kube-scheduler scales an \
             extender's 0..10), Reserve and Unreserve (the engine's model counts the pod at once).",
        );
        let _ = writeln!(
            out,
            "      multiPoint:\n        enabled:\n          - name: {IN_PROCESS_PLUGIN}\n            weight: 1"
        );
    }
    for (point, pre, main) in [(Point::Filter, "preFilter", "filter"), (Point::Score, "preScore", "score")] {
        let here: Vec<&Disabled> = disabled.iter().filter(|d| d.point == point).collect();
        if here.is_empty() {
            continue;
        }
        comment(
            &mut out,
            "      ",
            &format!("Their {pre} too, where they have one: it prepares only for the {main} below."),
        );
        let _ = writeln!(out, "      {pre}:\n        disabled:");
        for d in &here {
            let _ = writeln!(out, "          - name: {}", d.plugin);
        }
        if point == Point::Score {
            comment(&mut out, "      ", if in_process { SCORES_GIVEN_UP_IN_PROCESS } else { SCORES_GIVEN_UP });
        }
        let _ = writeln!(out, "      {main}:\n        disabled:");
        for d in &here {
            comment(&mut out, "          ", &format!("Replaced by {}.", d.by.join(", ")));
            if !d.gives_up.is_empty() {
                comment(&mut out, "          ", &format!("Given up: {}.", d.gives_up));
            }
            let _ = writeln!(out, "          - name: {}", d.plugin);
        }
        let left_on: Vec<&Disabled> = kept.iter().filter(|d| d.point == point).collect();
        if !left_on.is_empty() {
            let names: Vec<&str> = left_on.iter().map(|d| d.plugin).collect();
            let text = if in_process {
                format!(
                    "Off here, though the extender's configuration leaves them on: {}: {KEPT_OFF_IN_PROCESS}.",
                    names.join(", ")
                )
            } else {
                let names: Vec<String> =
                    left_on.iter().map(|d| format!("{} (which {} replaces)", d.plugin, d.by.join(", "))).collect();
                format!("Left on: {}: {KEPT}.", names.join(", "))
            };
            comment(&mut out, "          ", &text);
        }
    }
    out
}

const SCORES_GIVEN_UP: &str = "Given up with every score below (spreading and balance only: nothing is \
     double-booked): the extender answers one score per node, the Policy's weighted mean rounded to 0..10, so \
     nodes the classic weighted sum tells apart by less than half a point of that mean tie, and kube-scheduler \
     picks one of them at random (docs/policy.md); and the priorities count a pod only from when kube-scheduler \
     calls the extender's /bind for it, which on a busy machine can come after the next pod is scored.";

const SCORES_GIVEN_UP_IN_PROCESS: &str = "Given up with every score below (spreading and balance only: nothing \
     is double-booked): the engine gives one score per node, the Policy's weighted mean rounded to 0..10 as the \
     extender's, so nodes the classic weighted sum tells apart by less than half a point of that mean tie, and \
     kube-scheduler picks one of them at random (docs/policy.md).";

/// The profile's `pluginConfig:` for the in-process plugin: the Policy it reads.
fn plugin_config(policy: Option<&str>) -> String {
    let mut out = format!("    pluginConfig:\n      - name: {IN_PROCESS_PLUGIN}\n");
    match policy {
        Some(path) => {
            out.push_str("        args:\n");
            comment(
                &mut out,
                "          ",
                "The Policy (the extender's --policy): read again every two seconds, a change put in force \
                 when it loads, a broken one logged and the previous kept.",
            );
            let _ = writeln!(out, "          policy: {}", yaml_string(path));
        }
        None => {
            comment(&mut out, "        ", "No Policy file: the default predicates and priorities.");
            out.push_str("        args: {}\n");
        }
    }
    out
}

/// `s` as a YAML scalar: plain when it is a plain path, else double-quoted (JSON's escapes are YAML's).
fn yaml_string(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || "/._-".contains(c))
        && !s.starts_with(['-', '.']);
    if plain {
        s.to_string()
    } else {
        serde_json::Value::String(s.to_string()).to_string()
    }
}

/// `text` as comment lines at `indent`, wrapped at 100 columns.
fn comment(out: &mut String, indent: &str, text: &str) {
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && indent.len() + 2 + line.len() + 1 + word.len() > 100 {
            let _ = writeln!(out, "{indent}# {line}");
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    let _ = writeln!(out, "{indent}# {line}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_profile_is_the_shipped_scheduler_name() {
        assert!(SHIPPED.contains(&format!("schedulerName: {SHIPPED_SCHEDULER_NAME}\n")), "{SHIPPED}");
    }

    #[test]
    fn the_shipped_file_has_the_profile_line_and_a_header() {
        assert!(SHIPPED.contains(PROFILE_LINE));
        assert!(SHIPPED.starts_with('#'));
    }

    #[test]
    fn the_default_policy_replaces_its_plugins_and_keeps_the_volume_ones() {
        let plugins = policy_plugins("p.json", br#"{"kind": "Policy", "apiVersion": "v1"}"#).unwrap();
        let text = render("cmd", &plugins, Engine::Extender);
        assert!(text.starts_with("# Generated: do not edit; after a change to the Policy, run again:\n#   cmd\n"));
        let config: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
        let shipped: serde_json::Value = serde_saphyr::from_str(SHIPPED).unwrap();
        // Only the profile's plugins differ from the shipped file.
        let mut without = config.clone();
        without["profiles"][0].as_object_mut().unwrap().remove("plugins");
        assert_eq!(without, shipped);
        let names = |point: &str| -> Vec<String> {
            config["profiles"][0]["plugins"][point]["disabled"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["name"].as_str().unwrap().to_string())
                .collect()
        };
        let filters = ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity"];
        assert_eq!(names("filter"), filters);
        assert_eq!(names("preFilter"), filters);
        // SelectorSpreadPriority without EvenPodsSpreadPriority: PodTopologySpread keeps scoring.
        let scores = [
            "TaintToleration",
            "NodeAffinity",
            "NodeResourcesFit",
            "InterPodAffinity",
            "NodeResourcesBalancedAllocation",
            "ImageLocality",
        ];
        assert_eq!(names("score"), scores);
        assert_eq!(names("preScore"), scores);
        assert!(text.contains("          # Replaced by GeneralPredicates.\n          - name: NodeName\n"), "{text}");
        assert!(text.contains("# Left on: NodePorts (which GeneralPredicates replaces), NodeResourcesFit"), "{text}");
        let (generated, _) = text.split_once("\nextenders:").unwrap();
        assert!(generated.lines().all(|l| l.len() <= 100), "{generated}");
    }

    #[test]
    fn custom_names_count_as_their_plugin_and_an_invalid_policy_is_refused() {
        let policy = br#"{"kind": "Policy", "apiVersion": "v1", "predicates": [{"name": "PodFitsResources"}],
            "priorities": [{"name": "MyRatio", "weight": 2, "argument": {"requestedToCapacityRatioArguments":
            {"shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]}}}]}"#;
        let plugins = policy_plugins("p.json", policy).unwrap();
        assert_eq!(plugins.into_iter().collect::<Vec<_>>(), ["PodFitsResources", "RequestedToCapacityRatioPriority"]);
        let bad = br#"{"kind": "Policy", "apiVersion": "v1", "predicates": [{"name": "NoSuchPredicate"}]}"#;
        let e = policy_plugins("bad.json", bad).unwrap_err().to_string();
        assert!(e.starts_with("bad.json: ") && e.contains("NoSuchPredicate"), "{e}");
        let none = render("cmd", &BTreeSet::new(), Engine::Extender);
        assert!(none.contains("they all stay on"), "{none}");
        let config: serde_json::Value = serde_saphyr::from_str(&none).unwrap();
        assert!(config["profiles"][0].get("plugins").is_none());
    }

    fn names(config: &serde_json::Value, point: &str, list: &str) -> Vec<String> {
        config["profiles"][0]["plugins"][point][list]
            .as_array()
            .unwrap_or_else(|| panic!("{point}.{list}: {config}"))
            .iter()
            .map(|p| p["name"].as_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn in_process_the_plugin_replaces_the_extender_and_the_kept_filters_are_off_too() {
        let plugins = policy_plugins("p.json", br#"{"kind": "Policy", "apiVersion": "v1"}"#).unwrap();
        let text = render("cmd", &plugins, Engine::InProcess { policy: Some("/etc/p/policy.json") });
        let config: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
        let shipped: serde_json::Value = serde_saphyr::from_str(SHIPPED).unwrap();
        // The shipped file without `extenders`, the profile's plugins and pluginConfig aside.
        let mut without = config.clone();
        let profile = without["profiles"][0].as_object_mut().unwrap();
        profile.remove("plugins");
        profile.remove("pluginConfig");
        let mut expected = shipped;
        expected.as_object_mut().unwrap().remove("extenders");
        assert_eq!(without, expected);
        assert_eq!(names(&config, "multiPoint", "enabled"), [IN_PROCESS_PLUGIN]);
        assert_eq!(config["profiles"][0]["plugins"]["multiPoint"]["enabled"][0]["weight"], 1);
        assert_eq!(
            config["profiles"][0]["pluginConfig"],
            serde_json::json!([{"name": IN_PROCESS_PLUGIN, "args": {"policy": "/etc/p/policy.json"}}])
        );
        // Every filter the Policy replaces is off, those the extender keeps on included.
        let filters = [
            "NodeUnschedulable",
            "NodeName",
            "TaintToleration",
            "NodeAffinity",
            "NodePorts",
            "NodeResourcesFit",
            "PodTopologySpread",
            "InterPodAffinity",
        ];
        assert_eq!(names(&config, "filter", "disabled"), filters);
        assert_eq!(names(&config, "preFilter", "disabled"), filters);
        let extender: serde_json::Value = serde_saphyr::from_str(&render("cmd", &plugins, Engine::Extender)).unwrap();
        assert_eq!(names(&config, "score", "disabled"), names(&extender, "score", "disabled"));
        assert!(text.contains("# Off here, though the extender's configuration leaves them on: NodePorts,"), "{text}");
        assert!(!text.contains("Left on: NodePorts"), "{text}");
        assert!(text.lines().all(|l| l.len() <= 100), "{text}");
        // No Policy file: empty args; an odd path is quoted.
        let default = render("cmd", &plugins, Engine::InProcess { policy: None });
        let config: serde_json::Value = serde_saphyr::from_str(&default).unwrap();
        assert_eq!(config["profiles"][0]["pluginConfig"][0]["args"], serde_json::json!({}));
        let odd = render("cmd", &plugins, Engine::InProcess { policy: Some("/p: #1.json") });
        let config: serde_json::Value = serde_saphyr::from_str(&odd).unwrap();
        assert_eq!(config["profiles"][0]["pluginConfig"][0]["args"]["policy"], "/p: #1.json");
        // A Policy that replaces nothing still enables the plugin.
        let nothing = render("cmd", &BTreeSet::new(), Engine::InProcess { policy: None });
        let config: serde_json::Value = serde_saphyr::from_str(&nothing).unwrap();
        assert_eq!(names(&config, "multiPoint", "enabled"), [IN_PROCESS_PLUGIN]);
        assert!(config["profiles"][0]["plugins"].get("filter").is_none(), "{nothing}");
    }
}
