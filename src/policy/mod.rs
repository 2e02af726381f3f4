//! The Policy file (kube-scheduler's `kind: Policy`, `apiVersion: v1`, 1.10-1.22) with the
//! per-predicate `order` of the predicates-ordering design, turned into a validated [`Plan`].
//!
//! Ordering: entries with `order` run first, ascending; equal orders keep the static order among
//! themselves; entries without `order` follow in static order. No file, or a file without
//! `predicates`, runs the default set in static order; `predicates: []` runs none.

use std::path::Path;

use serde::Deserialize;

use crate::engine::ordering::Settings;
pub use crate::engine::{OrderingMode, Plan, WeightedPriority};
use crate::framework::IgnoredResources;
use crate::registry::validate::{build_predicate, build_priority};
use crate::registry::{self, predicate_row_named};

/// `hardPodAffinitySymmetricWeight` when the Policy does not set it (or sets 0), as upstream.
pub const DEFAULT_HARD_POD_AFFINITY_WEIGHT: i64 = 1;

/// The registry's default priorities with their weights.
fn default_priorities(hard_weight: i64) -> Vec<WeightedPriority> {
    registry::default_priorities(hard_weight)
        .into_iter()
        .map(|(priority, weight)| WeightedPriority { priority, weight })
        .collect()
}

impl Plan {
    /// The default predicates in static order, stopping at the first failure, and the default
    /// priorities: what runs without a Policy file.
    pub fn default_plan() -> Plan {
        Plan {
            predicates: registry::default_predicates(),
            always_check_all: false,
            priorities: default_priorities(DEFAULT_HARD_POD_AFFINITY_WEIGHT),
            ..Plan::default()
        }
    }
}

/// Why a Policy is invalid; the message names the file and the entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {message}")]
pub struct PolicyError {
    pub file: String,
    pub message: String,
}

/// The Policy document.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PolicyFile {
    pub kind: Option<String>,
    pub api_version: Option<String>,
    pub predicates: Option<Vec<PredicatePolicy>>,
    pub priorities: Option<Vec<PriorityPolicy>>,
    pub hard_pod_affinity_symmetric_weight: Option<i64>,
    #[serde(default)]
    pub always_check_all_predicates: bool,
    /// `"static"` (the default) or `"dynamic"` (see [`crate::engine::ordering`]).
    pub predicate_ordering: Option<String>,
}

/// One `predicates` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PredicatePolicy {
    pub name: String,
    pub order: Option<i64>,
    pub argument: Option<PredicateArgument>,
}

/// A predicate's `argument`: `serviceAffinity` or `labelsPresence` (each read by its predicate),
/// or PodFitsResources' own fields (`ignoredResources`, `ignoredResourceGroups`, as
/// kube-scheduler's `NodeResourcesFitArgs`).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PredicateArgument {
    pub service_affinity: Option<serde_json::Value>,
    pub labels_presence: Option<serde_json::Value>,
    pub ignored_resources: Option<Vec<String>>,
    pub ignored_resource_groups: Option<Vec<String>>,
}

impl PredicateArgument {
    /// Whether it holds PodFitsResources' fields.
    fn has_fit_fields(&self) -> bool {
        self.ignored_resources.is_some() || self.ignored_resource_groups.is_some()
    }
}

/// One `priorities` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriorityPolicy {
    pub name: String,
    pub weight: i64,
    pub argument: Option<serde_json::Value>,
}

/// Reads and validates a Policy file.
pub fn load_policy(path: &Path) -> Result<Plan, PolicyError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| PolicyError { file: file.clone(), message: format!("cannot read: {e}") })?;
    parse_policy(&file, &text)
}

/// Parses and validates Policy text (JSON or YAML); `file` names it in errors.
pub fn parse_policy(file: &str, text: &str) -> Result<Plan, PolicyError> {
    parse_policy_ordered(file, text, None)
}

/// [`parse_policy`], the predicates ordered by `ordering` when it is given (`--predicate-ordering`,
/// which wins over the file's `predicateOrdering`).
pub fn parse_policy_ordered(file: &str, text: &str, ordering: Option<OrderingMode>) -> Result<Plan, PolicyError> {
    let err = |message: String| PolicyError { file: file.to_string(), message };
    let policy: PolicyFile = if text.trim_start().starts_with('{') {
        let mut de = serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(&mut de).map_err(|e| err(path_message(e.path(), e.inner())))?
    } else {
        // The path of the field that failed, beside serde-saphyr's error (which says the line).
        let mut path = None;
        serde_saphyr::with_deserializer_from_str_with_options(text, crate::yaml::options(), |de| {
            serde_path_to_error::deserialize(de).map_err(|e| {
                path = Some(e.path().clone());
                e.into_inner()
            })
        })
        .map_err(|e| {
            let message = crate::yaml::message(&e);
            err(match &path {
                Some(path) => path_message(path, &message),
                None => message,
            })
        })?
    };
    plan_from_ordered(policy, ordering).map_err(err)
}

fn path_message(path: &serde_path_to_error::Path, inner: &dyn std::fmt::Display) -> String {
    let path = path.to_string();
    // "." is the document itself; "?" a place serde_path_to_error could not name (a syntax error).
    if path == "." || path == "?" {
        inner.to_string()
    } else {
        format!("{path}: {inner}")
    }
}

/// Validates a decoded Policy and orders its predicates.
pub fn plan_from(policy: PolicyFile) -> Result<Plan, String> {
    plan_from_ordered(policy, None)
}

/// [`plan_from`], ordered by `ordering` rather than the file's `predicateOrdering` when given.
pub fn plan_from_ordered(policy: PolicyFile, ordering: Option<OrderingMode>) -> Result<Plan, String> {
    let overridden = ordering;
    match policy.kind.as_deref() {
        Some("Policy") => {}
        other => return Err(format!("kind: must be \"Policy\", found {other:?}")),
    }
    match policy.api_version.as_deref() {
        Some("v1") => {}
        other => return Err(format!("apiVersion: must be \"v1\", found {other:?}")),
    }
    let hard_weight = match policy.hard_pod_affinity_symmetric_weight {
        Some(w) if !(0..=100).contains(&w) => {
            return Err(format!("hardPodAffinitySymmetricWeight: must be in the range 0-100, found {w}"))
        }
        Some(w) if w > 0 => w,
        _ => DEFAULT_HARD_POD_AFFINITY_WEIGHT,
    };
    let priorities = match &policy.priorities {
        None => default_priorities(hard_weight),
        Some(entries) => plan_priorities(entries, hard_weight)?,
    };

    let from_file = match policy.predicate_ordering.as_deref() {
        None => OrderingMode::Static,
        Some(mode) => mode.parse().map_err(|e| format!("predicateOrdering: {e}"))?,
    };
    let ordering = overridden.unwrap_or(from_file);

    let Some(entries) = policy.predicates else {
        let mut plan = Plan::default_plan();
        plan.always_check_all = policy.always_check_all_predicates;
        plan.priorities = priorities;
        return Ok(plan.with_ordering(ordering));
    };

    struct Placed {
        order: Option<i64>,
        rank: usize,
        index: usize,
        predicate: std::sync::Arc<dyn crate::framework::AnyPredicate>,
    }
    let ignored = ignored_resources(&entries)?;
    let mut placed: Vec<Placed> = Vec::with_capacity(entries.len());
    for (index, entry) in entries.iter().enumerate() {
        let at = format!("predicates[{index}] ({:?})", entry.name);
        if entry.name.is_empty() {
            return Err(format!("predicates[{index}].name: must not be empty"));
        }
        if entries[..index].iter().any(|e| e.name == entry.name) {
            return Err(format!("{at}: listed twice"));
        }
        if let Some(order) = entry.order {
            if order <= 0 {
                return Err(format!("{at}.order: must be a positive integer, found {order}"));
            }
        }
        let argument = keyed_argument(entry).map_err(|why| format!("{at}: {why}"))?;
        let (rank, predicate) = build_predicate(&entry.name, argument, &ignored).map_err(|e| e.at(&at))?;
        placed.push(Placed { order: entry.order, rank, index, predicate });
    }
    // Ordered entries first by (order, static rank); then the rest in static order. The sort is
    // stable and the file index breaks the remaining ties, so the result never depends on chance.
    placed.sort_by_key(|p| (p.order.is_none(), p.order.unwrap_or(0), p.rank, p.index));
    let pinned = placed.iter().filter(|p| p.order.is_some()).count();
    let plan = Plan {
        predicates: placed.into_iter().map(|p| p.predicate).collect(),
        always_check_all: policy.always_check_all_predicates,
        priorities,
        ..Plan::default()
    };
    Ok(plan.with_ordering_pinned(ordering, pinned, Settings::default()))
}

/// Validates the `priorities` entries and builds them (see [`build_priority`]).
fn plan_priorities(entries: &[PriorityPolicy], hard_weight: i64) -> Result<Vec<WeightedPriority>, String> {
    let mut out = Vec::with_capacity(entries.len());
    let mut total_weight: i64 = 0;
    for (index, entry) in entries.iter().enumerate() {
        let at = format!("priorities[{index}] ({:?})", entry.name);
        if entry.name.is_empty() {
            return Err(format!("priorities[{index}].name: must not be empty"));
        }
        if entries[..index].iter().any(|e| e.name == entry.name) {
            return Err(format!("{at}: listed twice"));
        }
        if entry.weight <= 0 {
            return Err(format!("{at}.weight: must be a positive integer, found {}", entry.weight));
        }
        total_weight = total_weight
            .checked_add(entry.weight)
            .filter(|t| t.checked_mul(crate::framework::MAX_PRIORITY).is_some())
            .ok_or_else(|| format!("{at}.weight: the weights add up to more than the scores can hold"))?;
        let priority = build_priority(&entry.name, entry.argument.as_ref(), hard_weight).map_err(|e| e.at(&at))?;
        out.push(WeightedPriority { priority, weight: entry.weight });
    }
    Ok(out)
}

/// The extended resources the PodFitsResources entry's argument ignores (none without one). The
/// same list goes to GeneralPredicates: in the Policy era it was predicate metadata, which both
/// resource checks read.
fn ignored_resources(entries: &[PredicatePolicy]) -> Result<IgnoredResources, String> {
    let fit = entries.iter().enumerate().find(|(_, e)| is_pod_fits_resources(&e.name));
    let Some((index, entry)) = fit else { return Ok(IgnoredResources::default()) };
    let Some(argument) = entry.argument.as_ref() else { return Ok(IgnoredResources::default()) };
    IgnoredResources::new(
        argument.ignored_resources.clone().unwrap_or_default(),
        argument.ignored_resource_groups.clone().unwrap_or_default(),
    )
    .map_err(|e| format!("predicates[{index}] ({:?}).argument.{e}", entry.name))
}

/// PodFitsResources: the one predicate whose Policy argument is its own fields rather than a key
/// (they become the Policy-wide [`IgnoredResources`]).
fn is_pod_fits_resources(name: &str) -> bool {
    predicate_row_named(name).is_some_and(|(_, row)| row.name == "PodFitsResources")
}

/// The keyed argument of a predicate entry (`labelsPresence` or `serviceAffinity`), once the
/// argument object is checked: PodFitsResources' fields only on PodFitsResources, one key at most.
fn keyed_argument(entry: &PredicatePolicy) -> Result<Option<(&'static str, &serde_json::Value)>, String> {
    let Some(a) = entry.argument.as_ref() else { return Ok(None) };
    if is_pod_fits_resources(&entry.name) {
        if a.labels_presence.is_some() || a.service_affinity.is_some() {
            return Err("argument: PodFitsResources takes only ignoredResources and ignoredResourceGroups".to_string());
        }
        return Ok(None);
    }
    if a.has_fit_fields() {
        let field = if a.ignored_resources.is_some() { "ignoredResources" } else { "ignoredResourceGroups" };
        return Err(format!("argument.{field}: only PodFitsResources takes it"));
    }
    match (&a.labels_presence, &a.service_affinity) {
        (Some(_), Some(_)) => Err("argument: give either labelsPresence or serviceAffinity, not both".to_string()),
        (Some(value), None) => Ok(Some(("labelsPresence", value))),
        (None, Some(value)) => Ok(Some(("serviceAffinity", value))),
        (None, None) => Err("argument: must hold labelsPresence or serviceAffinity".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(json: &str) -> Result<Plan, String> {
        parse_policy("policy.json", json).map_err(|e| e.to_string())
    }

    fn names(json: &str) -> Vec<String> {
        plan(json).unwrap().predicate_names().into_iter().map(String::from).collect()
    }

    const HEAD: &str = r#""kind":"Policy","apiVersion":"v1""#;

    #[test]
    fn no_predicates_key_means_the_default_set_in_static_order() {
        let got = names(&format!("{{{HEAD}}}"));
        // kube-scheduler's default provider set, in static order.
        let default_set = [
            "CheckNodeCondition",
            "CheckNodeUnschedulable",
            "GeneralPredicates",
            "NoDiskConflict",
            "PodToleratesNodeTaints",
            "MaxEBSVolumeCount",
            "MaxGCEPDVolumeCount",
            "MaxCSIVolumeCount",
            "MaxAzureDiskVolumeCount",
            "CheckVolumeBinding",
            "NoVolumeZoneConflict",
            "CheckNodeMemoryPressure",
            "CheckNodePIDPressure",
            "CheckNodeDiskPressure",
            "EvenPodsSpread",
            "MatchInterPodAffinity",
        ];
        assert_eq!(got, default_set);
        assert_eq!(Plan::default_plan().predicate_names(), got);
    }

    #[test]
    fn an_empty_list_runs_nothing() {
        assert!(names(&format!(r#"{{{HEAD},"predicates":[]}}"#)).is_empty());
    }

    #[test]
    fn listed_predicates_run_in_static_order() {
        let got = names(&format!(
            r#"{{{HEAD},"predicates":[{{"name":"PodToleratesNodeTaints"}},{{"name":"PodFitsResources"}},{{"name":"CheckNodeCondition"}}]}}"#
        ));
        assert_eq!(got, ["CheckNodeCondition", "PodFitsResources", "PodToleratesNodeTaints"]);
    }

    #[test]
    fn ordered_entries_run_first_ascending_ties_in_static_order() {
        let got = names(&format!(
            r#"{{{HEAD},"predicates":[
                {{"name":"CheckNodeCondition"}},
                {{"name":"PodToleratesNodeTaints","order":1}},
                {{"name":"PodFitsResources","order":2}},
                {{"name":"MatchNodeSelector","order":2}},
                {{"name":"HostName"}},
                {{"name":"CheckNodeDiskPressure","order":1}}
            ]}}"#
        ));
        assert_eq!(
            got,
            [
                "PodToleratesNodeTaints",
                "CheckNodeDiskPressure",
                "MatchNodeSelector",
                "PodFitsResources",
                "CheckNodeCondition",
                "HostName"
            ]
        );
    }

    #[test]
    fn predicate_ordering_is_static_by_default_and_dynamic_keeps_the_pinned_entries_first() {
        assert_eq!(plan(&format!("{{{HEAD}}}")).unwrap().ordering.mode(), OrderingMode::Static);
        let p = plan(&format!(
            r#"{{{HEAD},"predicateOrdering":"dynamic","predicates":[
                {{"name":"PodFitsResources"}},
                {{"name":"HostName","order":2}},
                {{"name":"CheckNodeCondition"}},
                {{"name":"PodToleratesNodeTaints","order":1}}
            ]}}"#
        ))
        .unwrap();
        assert_eq!(p.ordering.mode(), OrderingMode::Dynamic);
        assert_eq!(p.pinned(), 2);
        // Before anything is measured: the pinned two in the admin's order, then the
        // unresolvable-only CheckNodeCondition before PodFitsResources.
        assert_eq!(
            p.ordered_predicate_names(),
            ["PodToleratesNodeTaints", "HostName", "CheckNodeCondition", "PodFitsResources"]
        );
        let d = plan(&format!(r#"{{{HEAD},"predicateOrdering":"dynamic"}}"#)).unwrap();
        assert_eq!((d.ordering.mode(), d.pinned()), (OrderingMode::Dynamic, 0));
        let overridden = parse_policy_ordered(
            "p",
            &format!(r#"{{{HEAD},"predicateOrdering":"dynamic"}}"#),
            Some(OrderingMode::Static),
        );
        assert_eq!(overridden.unwrap().ordering.mode(), OrderingMode::Static);
        assert_eq!(
            plan(&format!(r#"{{{HEAD},"predicateOrdering":"fastest"}}"#)).unwrap_err(),
            "policy.json: predicateOrdering: must be \"static\" or \"dynamic\", found \"fastest\""
        );
    }

    #[test]
    fn label_presence_takes_an_argument_and_may_have_a_custom_name() {
        let got = names(&format!(
            r#"{{{HEAD},"predicates":[
                {{"name":"PodFitsResources"}},
                {{"name":"ZoneRequired","argument":{{"labelsPresence":{{"labels":["zone"],"presence":true}}}}}},
                {{"name":"CheckNodeCondition"}}
            ]}}"#
        ));
        assert_eq!(got, ["CheckNodeCondition", "PodFitsResources", "ZoneRequired"]);
    }

    #[test]
    fn yaml_policies_are_read_too() {
        let got = names(
            "kind: Policy\napiVersion: v1\nalwaysCheckAllPredicates: true\npredicates:\n- name: HostName\n  order: 3\n",
        );
        assert_eq!(got, ["HostName"]);
        assert!(plan("kind: Policy\napiVersion: v1\nalwaysCheckAllPredicates: true\n").unwrap().always_check_all);
    }

    #[test]
    fn yaml_errors_name_the_field_and_the_line() {
        let head = "kind: Policy\napiVersion: v1\n";
        let cases = [
            ("predicates:\n- name: HostName\n  order: 1.5\n", "p.yaml: predicates[0].order: invalid i64 at line 5, column 10"),
            ("predicates:\n- name: HostName\n  weight: 1\n", "p.yaml: predicates[0].weight: unknown field `weight`, expected one of name, order, argument at line 5, column 3"),
            ("priorities:\n- name: EqualPriority\n", "p.yaml: priorities[0]: missing field `weight` at line 4, column 3"),
            ("predicates: [\n", "p.yaml: predicates: unclosed bracket '[' at line 3, column 13"),
            ("---\nkind: Policy\n", "p.yaml: holds more than one YAML document (a second one starts at line 4 after `---`)"),
            ("predicates:\n- name: HostName\n  order: 0\n", "p.yaml: predicates[0] (\"HostName\").order: must be a positive integer, found 0"),
        ];
        for (tail, want) in cases {
            let got = parse_policy("p.yaml", &format!("{head}{tail}")).unwrap_err().to_string();
            assert_eq!(got, want, "for {tail:?}");
        }
    }

    #[test]
    fn validation_errors_name_the_entry() {
        let cases = [
            (r#"{"kind":"Policy","apiVersion":"v1","predicates":[{"name":"PodFitsPorts"}]}"#, "policy.json: predicates[0] (\"PodFitsPorts\"): unknown predicate; this version knows CheckNodeCondition,"),
            (&format!(r#"{{{HEAD},"predicates":[{{"name":"HostName","order":0}}]}}"#), "policy.json: predicates[0] (\"HostName\").order: must be a positive integer, found 0"),
            (&format!(r#"{{{HEAD},"predicates":[{{"name":"HostName","order":-3}}]}}"#), "policy.json: predicates[0] (\"HostName\").order: must be a positive integer, found -3"),
            (&format!(r#"{{{HEAD},"predicates":[{{"name":"HostName","order":1.5}}]}}"#), "policy.json: predicates[0].order: invalid type: floating point `1.5`, expected i64"),
            (&format!(r#"{{{HEAD},"predicates":[{{"name":"HostName"}},{{"name":"HostName"}}]}}"#), "policy.json: predicates[1] (\"HostName\"): listed twice"),
            (&format!(r#"{{{HEAD},"predicates":[{{"name":"CheckNodeLabelPresence"}}]}}"#), "policy.json: predicates[0] (\"CheckNodeLabelPresence\"): argument.labelsPresence: required by CheckNodeLabelPresence"),
            (&format!(r#"{{{HEAD},"predicates":[{{"name":"LabelsRequired","argument":{{"labelsPresence":{{"labels":[],"presence":true}}}}}}]}}"#), "policy.json: predicates[0] (\"LabelsRequired\"): argument.labelsPresence.labels: must list at least one label"),
            (&format!(r#"{{{HEAD},"predicates":[{{"name":"HostName","argument":{{"labelsPresence":{{"labels":["a"],"presence":true}}}}}}]}}"#), "policy.json: predicates[0] (\"HostName\"): argument: HostName takes no argument"),
            (&format!(r#"{{{HEAD},"predicates":[{{"name":"ServiceZone","argument":{{"serviceAffinity":{{"labels":[]}}}}}}]}}"#), "policy.json: predicates[0] (\"ServiceZone\"): argument.serviceAffinity.labels: must list at least one label"),
            (&format!(r#"{{{HEAD},"predicates":[{{"name":"HostName","argument":{{}}}}]}}"#), "policy.json: predicates[0] (\"HostName\"): argument: must hold labelsPresence or serviceAffinity"),
            (&format!(r#"{{{HEAD},"predicates":[{{"name":"HostName","weight":1}}]}}"#), "policy.json: predicates[0].weight: unknown field `weight`, expected one of `name`, `order`, `argument`"),
            (&format!(r#"{{{HEAD},"predicate":[]}}"#), "policy.json: predicate: unknown field `predicate`, expected one of `kind`"),
            (r#"{"kind":"Pod","apiVersion":"v1"}"#, "policy.json: kind: must be \"Policy\", found Some(\"Pod\")"),
            (r#"{"kind":"Policy"}"#, "policy.json: apiVersion: must be \"v1\", found None"),
            (&format!(r#"{{{HEAD},"hardPodAffinitySymmetricWeight":101}}"#), "policy.json: hardPodAffinitySymmetricWeight: must be in the range 0-100, found 101"),
            (&format!(r#"{{{HEAD},"priorities":[{{"name":"MostRequested","weight":1}}]}}"#), "policy.json: priorities[0] (\"MostRequested\"): unknown priority; this version knows SelectorSpreadPriority,"),
            (&format!(r#"{{{HEAD},"priorities":[{{"name":"EqualPriority","weight":0}}]}}"#), "policy.json: priorities[0] (\"EqualPriority\").weight: must be a positive integer, found 0"),
            (&format!(r#"{{{HEAD},"priorities":[{{"name":"EqualPriority","weight":-2}}]}}"#), "policy.json: priorities[0] (\"EqualPriority\").weight: must be a positive integer, found -2"),
            (&format!(r#"{{{HEAD},"priorities":[{{"name":"EqualPriority"}}]}}"#), "policy.json: priorities[0]: missing field `weight`"),
            (&format!(r#"{{{HEAD},"priorities":[{{"name":"EqualPriority","weight":1}},{{"name":"EqualPriority","weight":2}}]}}"#), "policy.json: priorities[1] (\"EqualPriority\"): listed twice"),
            (&format!(r#"{{{HEAD},"priorities":[{{"name":"EqualPriority","weight":1,"argument":{{"labelPreference":{{"label":"a","presence":true}}}}}}]}}"#), "policy.json: priorities[0] (\"EqualPriority\").argument.labelPreference: EqualPriority takes no such argument"),
            (&format!(r#"{{{HEAD},"priorities":[{{"name":"Custom","weight":1,"argument":{{"bogus":{{}}}}}}]}}"#), "policy.json: priorities[0] (\"Custom\").argument.bogus: unknown priority argument"),
            (&format!(r#"{{{HEAD},"priorities":[{{"name":"Custom","weight":1,"argument":{{"labelPreference":{{}},"serviceAntiAffinity":{{}}}}}}]}}"#), "policy.json: priorities[0] (\"Custom\").argument: must hold exactly one of requestedToCapacityRatioArguments, labelPreference, serviceAntiAffinity"),
            (&format!(r#"{{{HEAD},"priorities":[{{"name":"EqualPriority","weight":9223372036854775807}}]}}"#), "policy.json: priorities[0] (\"EqualPriority\").weight: the weights add up to more than the scores can hold"),
            (&format!(r#"{{{HEAD},"predicates":[{{"name":"zone label!","argument":{{"labelsPresence":{{"labels":["a"],"presence":true}}}}}}]}}"#), "policy.json: predicates[0] (\"zone label!\"): name: a custom predicate name must be letters, digits and inner '-' only"),
            ("{\"kind\":", "policy.json: kind: EOF while parsing a value at line 1 column 8"),
        ];
        for (input, want) in cases {
            let got = plan(input).unwrap_err();
            assert!(got.starts_with(want), "for {input}\n got: {got}\nwant: {want}");
        }
    }

    #[test]
    fn pod_fits_resources_takes_ignored_resources_and_shares_them_with_general_predicates() {
        use crate::framework::Reason;
        use crate::predicates::reasons_of;
        use crate::testing::{NodeBuilder, PodBuilder};
        let plan = plan(&format!(
            r#"{{{HEAD},"predicates":[
                {{"name":"GeneralPredicates"}},
                {{"name":"PodFitsResources","argument":{{"ignoredResources":["example.com/foo"],"ignoredResourceGroups":["devices.example.org"]}}}}
            ]}}"#
        ))
        .unwrap();
        assert_eq!(plan.predicate_names(), ["GeneralPredicates", "PodFitsResources"]);
        let node = crate::cluster::NodeInfo::from_parts(NodeBuilder::new("n").build(), []);
        let pod = || {
            PodBuilder::new("p")
                .req(&[("example.com/foo", "1"), ("devices.example.org/fpga", "1"), ("example.com/bar", "1")])
                .build()
        };
        let want = vec![Reason::resolvable("Insufficient example.com/bar")];
        for predicate in &plan.predicates {
            assert_eq!(reasons_of(predicate.as_ref(), pod(), &node), want, "{}", predicate.name());
        }
        // Without the argument both check every extended resource; an empty argument ignores nothing.
        for text in [
            format!(r#"{{{HEAD},"predicates":[{{"name":"GeneralPredicates"}},{{"name":"PodFitsResources"}}]}}"#),
            format!(
                r#"{{{HEAD},"predicates":[{{"name":"GeneralPredicates"}},{{"name":"PodFitsResources","argument":{{}}}}]}}"#
            ),
        ] {
            for predicate in &plan_of(&text).predicates {
                assert_eq!(reasons_of(predicate.as_ref(), pod(), &node).len(), 3, "{text}");
            }
        }
    }

    fn plan_of(text: &str) -> Plan {
        plan(text).unwrap()
    }

    #[test]
    fn pod_fits_resources_argument_errors_name_the_field() {
        let fit = |argument: &str| {
            format!(r#"{{{HEAD},"predicates":[{{"name":"PodFitsResources","argument":{argument}}}]}}"#)
        };
        let cases = [
            (fit(r#"{"ignoredResource":["example.com/foo"]}"#), "policy.json: predicates[0].argument.ignoredResource: unknown field `ignoredResource`, expected one of `serviceAffinity`, `labelsPresence`, `ignoredResources`, `ignoredResourceGroups`"),
            (fit(r#"{"ignoredResources":["example.com/foo",3]}"#), "policy.json: predicates[0].argument.ignoredResources[1]: invalid type: integer `3`, expected a string"),
            (fit(r#"{"ignoredResourceGroups":[null]}"#), "policy.json: predicates[0].argument.ignoredResourceGroups[0]: invalid type: null, expected a string"),
            (fit(r#"{"ignoredResources":"example.com/foo"}"#), "policy.json: predicates[0].argument.ignoredResources: invalid type: string \"example.com/foo\", expected a sequence"),
            (fit(r#"{"ignoredResources":["Example.com/foo"]}"#), "policy.json: predicates[0] (\"PodFitsResources\").argument.ignoredResources[0]: \"Example.com/foo\": prefix part must be a lowercase RFC 1123 subdomain"),
            (fit(r#"{"ignoredResourceGroups":["example.com/foo"]}"#), "policy.json: predicates[0] (\"PodFitsResources\").argument.ignoredResourceGroups[0]: \"example.com/foo\": a resource group name can't contain '/'"),
            (fit(r#"{"labelsPresence":{"labels":["a"],"presence":true}}"#), "policy.json: predicates[0] (\"PodFitsResources\"): argument: PodFitsResources takes only ignoredResources and ignoredResourceGroups"),
            (format!(r#"{{{HEAD},"predicates":[{{"name":"GeneralPredicates","argument":{{"ignoredResources":["example.com/foo"]}}}}]}}"#), "policy.json: predicates[0] (\"GeneralPredicates\"): argument.ignoredResources: only PodFitsResources takes it"),
            (format!(r#"{{{HEAD},"predicates":[{{"name":"Custom","argument":{{"ignoredResourceGroups":["example.com"]}}}}]}}"#), "policy.json: predicates[0] (\"Custom\"): argument.ignoredResourceGroups: only PodFitsResources takes it"),
        ];
        for (input, want) in cases {
            let got = plan(&input).unwrap_err();
            assert!(got.starts_with(want), "for {input}\n got: {got}\nwant: {want}");
        }
    }
}
