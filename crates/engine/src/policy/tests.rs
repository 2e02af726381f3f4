//! The Policy loader's tests: ordering, arguments, and errors that name the file and the field.

use super::*;

fn plan(json: &str) -> Result<Plan, PolicyError> {
    parse("policy.json", json.as_bytes(), Overrides::default())
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

/// kube-scheduler ran PodToleratesNodeTaints and CheckNodeUnschedulable with every Policy (1.12's
/// `RegisterMandatoryFitPredicate` to v1.22's `mandatoryPredicates` in
/// `framework/plugins/legacy_registry.go`), so an empty list runs them, and v1.22 agrees
/// (`tests/policy_oracle_smoke.rs`).
#[test]
fn an_empty_list_runs_only_the_mandatory_predicates() {
    assert_eq!(names(&format!(r#"{{{HEAD},"predicates":[]}}"#)), ["CheckNodeUnschedulable", "PodToleratesNodeTaints"]);
}

#[test]
fn listed_predicates_run_in_static_order() {
    let got = names(&format!(
        r#"{{{HEAD},"predicates":[{{"name":"PodToleratesNodeTaints"}},{{"name":"PodFitsResources"}},{{"name":"CheckNodeCondition"}}]}}"#
    ));
    // CheckNodeUnschedulable is mandatory.
    assert_eq!(got, ["CheckNodeCondition", "CheckNodeUnschedulable", "PodFitsResources", "PodToleratesNodeTaints"]);
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
            "CheckNodeUnschedulable",
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
        ["PodToleratesNodeTaints", "HostName", "CheckNodeCondition", "CheckNodeUnschedulable", "PodFitsResources"]
    );
    let d = plan(&format!(r#"{{{HEAD},"predicateOrdering":"dynamic"}}"#)).unwrap();
    assert_eq!((d.ordering.mode(), d.pinned()), (OrderingMode::Dynamic, 0));
    let overridden = parse(
        "p",
        format!(r#"{{{HEAD},"predicateOrdering":"dynamic"}}"#).as_bytes(),
        Overrides { ordering: Some(OrderingMode::Static) },
    );
    assert_eq!(overridden.unwrap().ordering.mode(), OrderingMode::Static);
    assert_eq!(
        plan(&format!(r#"{{{HEAD},"predicateOrdering":"fastest"}}"#)).unwrap_err().to_string(),
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
    assert_eq!(
        got,
        ["CheckNodeCondition", "CheckNodeUnschedulable", "PodFitsResources", "PodToleratesNodeTaints", "ZoneRequired"]
    );
}

#[test]
fn yaml_policies_are_read_too() {
    let got = names(
        "kind: Policy\napiVersion: v1\nalwaysCheckAllPredicates: true\npredicates:\n- name: HostName\n  order: 3\n",
    );
    assert_eq!(got, ["HostName", "CheckNodeUnschedulable", "PodToleratesNodeTaints"]);
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
        let got = parse("p.yaml", format!("{head}{tail}").as_bytes(), Overrides::default()).unwrap_err().to_string();
        assert_eq!(got, want, "for {tail:?}");
    }
}

/// Upstream's old name, read as PodFitsHostPorts to the last Policy release (v1.22
/// `legacy_registry.go`, `ProcessPredicatePolicy`), as `MaxCSIVolumeCountPred` is MaxCSIVolumeCount.
#[test]
fn upstream_spellings_are_their_predicates() {
    let got =
        names(&format!(r#"{{{HEAD},"predicates":[{{"name":"PodFitsPorts"}},{{"name":"MaxCSIVolumeCountPred"}}]}}"#));
    assert_eq!(got, ["CheckNodeUnschedulable", "PodFitsHostPorts", "PodToleratesNodeTaints", "MaxCSIVolumeCount"]);
}

#[test]
fn validation_errors_name_the_entry() {
    let cases = [
        (r#"{"kind":"Policy","apiVersion":"v1","predicates":[{"name":"MaxCinderVolumeCount"}]}"#, "policy.json: predicates[0] (\"MaxCinderVolumeCount\"): unknown predicate; this version knows CheckNodeCondition,"),
        (&format!(r#"{{{HEAD},"predicates":[{{"name":"HostName","order":0}}]}}"#), "policy.json: predicates[0] (\"HostName\").order: must be a positive integer, found 0"),
        (&format!(r#"{{{HEAD},"predicates":[{{"name":"HostName","order":-3}}]}}"#), "policy.json: predicates[0] (\"HostName\").order: must be a positive integer, found -3"),
        (&format!(r#"{{{HEAD},"predicates":[{{"name":"HostName","order":1.5}}]}}"#), "policy.json: predicates[0].order: invalid type: floating point `1.5`, expected i64"),
        (&format!(r#"{{{HEAD},"predicates":[{{"name":"HostName"}},{{"name":"HostName"}}]}}"#), "policy.json: predicates[1] (\"HostName\"): listed twice"),
        (&format!(r#"{{{HEAD},"predicates":[{{"name":"CheckNodeLabelPresence"}}]}}"#), "policy.json: predicates[0] (\"CheckNodeLabelPresence\"): argument.labelsPresence: required by CheckNodeLabelPresence"),
        (&format!(r#"{{{HEAD},"predicates":[{{"name":"LabelsRequired","argument":{{"labelsPresence":{{"labels":[],"presence":true}}}}}}]}}"#), "policy.json: predicates[0] (\"LabelsRequired\"): argument.labelsPresence.labels: must list at least one label"),
        (&format!(r#"{{{HEAD},"predicates":[{{"name":"HostName","argument":{{"labelsPresence":{{"labels":["a"],"presence":true}}}}}}]}}"#), "policy.json: predicates[0] (\"HostName\"): argument: HostName takes no argument"),
        (&format!(r#"{{{HEAD},"predicates":[{{"name":"ServiceZone","argument":{{"serviceAffinity":{{"labels":[]}}}}}}]}}"#), "policy.json: predicates[0] (\"ServiceZone\"): argument.serviceAffinity.labels: must list at least one label"),
        (&format!(r#"{{{HEAD},"predicates":[{{"name":"HostName","argument":{{}}}}]}}"#), "policy.json: predicates[0] (\"HostName\"): argument: HostName takes no argument"),
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
        (&format!(r#"{{{HEAD},"priorities":[{{"name":"EqualPriority","weight":1,"argument":{{"labelPreference":{{"label":"a","presence":true}}}}}}]}}"#), "policy.json: priorities[0] (\"EqualPriority\"): argument: EqualPriority takes no argument"),
        (&format!(r#"{{{HEAD},"priorities":[{{"name":"Custom","weight":1,"argument":{{"bogus":{{}}}}}}]}}"#), "policy.json: priorities[0] (\"Custom\"): argument.bogus: unknown priority argument"),
        (&format!(r#"{{{HEAD},"priorities":[{{"name":"Custom","weight":1,"argument":{{"labelPreference":{{}},"serviceAntiAffinity":{{}}}}}}]}}"#), "policy.json: priorities[0] (\"Custom\"): argument: must hold exactly one of requestedToCapacityRatioArguments, labelPreference, serviceAntiAffinity"),
        (&format!(r#"{{{HEAD},"priorities":[{{"name":"EqualPriority","weight":9223372036854775807}}]}}"#), "policy.json: priorities[0] (\"EqualPriority\").weight: the weights add up to more than the scores can hold"),
        (&format!(r#"{{{HEAD},"predicates":[{{"name":"zone label!","argument":{{"labelsPresence":{{"labels":["a"],"presence":true}}}}}}]}}"#), "policy.json: predicates[0] (\"zone label!\"): name: a custom predicate name must be letters, digits and inner '-' only"),
        ("{\"kind\":", "policy.json: kind: EOF while parsing a value at line 1 column 8"),
    ];
    for (input, want) in cases {
        let got = plan(input).unwrap_err().to_string();
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
    assert_eq!(
        plan.predicate_names(),
        ["CheckNodeUnschedulable", "GeneralPredicates", "PodFitsResources", "PodToleratesNodeTaints"]
    );
    let node = crate::cluster::NodeInfo::from_parts(NodeBuilder::new("n").build(), []);
    let pod = || {
        PodBuilder::new("p")
            .req(&[("example.com/foo", "1"), ("devices.example.org/fpga", "1"), ("example.com/bar", "1")])
            .build()
    };
    let want = vec![Reason::resolvable("Insufficient example.com/bar")];
    // The two listed (the mandatory ones check no resources).
    let resources = |p: &&std::sync::Arc<dyn crate::framework::AnyPredicate>| {
        ["GeneralPredicates", "PodFitsResources"].contains(&p.name())
    };
    for predicate in plan.predicates.iter().filter(resources) {
        assert_eq!(reasons_of(predicate.as_ref(), pod(), &node), want, "{}", predicate.name());
    }
    // Without the argument both check every extended resource; an empty argument ignores nothing.
    for text in [
        format!(r#"{{{HEAD},"predicates":[{{"name":"GeneralPredicates"}},{{"name":"PodFitsResources"}}]}}"#),
        format!(
            r#"{{{HEAD},"predicates":[{{"name":"GeneralPredicates"}},{{"name":"PodFitsResources","argument":{{}}}}]}}"#
        ),
    ] {
        for predicate in plan_of(&text).predicates.iter().filter(resources) {
            assert_eq!(reasons_of(predicate.as_ref(), pod(), &node).len(), 3, "{text}");
        }
    }
}

fn plan_of(text: &str) -> Plan {
    plan(text).unwrap()
}

#[test]
fn pod_fits_resources_argument_errors_name_the_field() {
    let fit =
        |argument: &str| format!(r#"{{{HEAD},"predicates":[{{"name":"PodFitsResources","argument":{argument}}}]}}"#);
    let cases = [
        (fit(r#"{"ignoredResource":["example.com/foo"]}"#), "policy.json: predicates[0] (\"PodFitsResources\"): argument.ignoredResource: PodFitsResources takes only ignoredResources and ignoredResourceGroups"),
        (fit(r#"{"ignoredResources":["example.com/foo",3]}"#), "policy.json: predicates[0] (\"PodFitsResources\"): argument.ignoredResources[1]: invalid type: integer `3`, expected a string"),
        (fit(r#"{"ignoredResourceGroups":[null]}"#), "policy.json: predicates[0] (\"PodFitsResources\"): argument.ignoredResourceGroups[0]: invalid type: null, expected a string"),
        (fit(r#"{"ignoredResources":"example.com/foo"}"#), "policy.json: predicates[0] (\"PodFitsResources\"): argument.ignoredResources: invalid type: string \"example.com/foo\", expected a sequence"),
        (fit(r#"{"ignoredResources":["Example.com/foo"]}"#), "policy.json: predicates[0] (\"PodFitsResources\"): argument.ignoredResources[0]: \"Example.com/foo\": prefix part must be a lowercase RFC 1123 subdomain"),
        (fit(r#"{"ignoredResourceGroups":["example.com/foo"]}"#), "policy.json: predicates[0] (\"PodFitsResources\"): argument.ignoredResourceGroups[0]: \"example.com/foo\": a resource group name can't contain '/'"),
        (fit(r#"{"labelsPresence":{"labels":["a"],"presence":true}}"#), "policy.json: predicates[0] (\"PodFitsResources\"): argument.labelsPresence: PodFitsResources takes only ignoredResources and ignoredResourceGroups"),
        (format!(r#"{{{HEAD},"predicates":[{{"name":"GeneralPredicates","argument":{{"ignoredResources":["example.com/foo"]}}}}]}}"#), "policy.json: predicates[0] (\"GeneralPredicates\"): argument: GeneralPredicates takes no argument"),
        (format!(r#"{{{HEAD},"predicates":[{{"name":"Custom","argument":{{"ignoredResourceGroups":["example.com"]}}}}]}}"#), "policy.json: predicates[0] (\"Custom\"): argument.ignoredResourceGroups: unknown predicate argument"),
    ];
    for (input, want) in cases {
        let got = plan(&input).unwrap_err().to_string();
        assert!(got.starts_with(want), "for {input}\n got: {got}\nwant: {want}");
    }
}
