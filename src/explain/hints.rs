//! What would change the answer, for the most common reasons, where the cluster's data says it:
//! resources (what the pod asks against the most that is free where nothing else fails), node
//! selector and required node affinity (on how many nodes each requirement holds, and the label
//! values seen), taints (which ones the pod does not tolerate, on how many nodes), host ports
//! (which of the pod's ports are taken). Every number is counted here from the nodes the report
//! evaluated; a reason without such data gets no hint. A group's hint is chosen by what its reason
//! is (`framework::Cause`), never by its words.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{NodeSelectorRequirement, NodeSelectorTerm, Taint};
use serde::Serialize;

use crate::explain::failures::{failures_of, FailureGroup};
use crate::explain::report::EvaluatedNode;
use predicate_engine::cluster::resources::{Resource, CPU, EPHEMERAL_STORAGE, MEMORY};
use predicate_engine::framework::{Cause, PodContext, ResourceName};
use predicate_engine::labels::selectors::NodeSelectorTerms;
use predicate_engine::plugin_helpers::tolerations::{untolerated, TaintEffects};

/// At most this many hints, for the largest groups that have one.
pub const MAX_HINTS: usize = 5;
/// At most this many items (taints, ports, label values, requirements) named in one hint.
const MAX_ITEMS: usize = 3;

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Hint {
    /// The failure group the hint is about.
    pub predicate: String,
    pub reason: String,
    /// How many nodes failed with it.
    pub nodes: usize,
    /// What the data says would change the answer.
    pub hint: String,
}

/// Hints for the largest failure groups that have one, largest first.
pub fn hints(pod: &PodContext, evaluated: &[EvaluatedNode], groups: &[FailureGroup]) -> Vec<Hint> {
    groups
        .iter()
        .filter_map(|g| {
            let hint = hint_for(pod, evaluated, g)?;
            Some(Hint { predicate: g.predicate.clone(), reason: g.reason.clone(), nodes: g.nodes, hint })
        })
        .take(MAX_HINTS)
        .collect()
}

/// The nodes of a group, each with whether the group's reason is its only failure.
fn members<'a>(evaluated: &'a [EvaluatedNode], g: &'a FailureGroup) -> impl Iterator<Item = (&'a EvaluatedNode, bool)> {
    evaluated.iter().filter(|e| !e.report.fits).filter_map(move |e| {
        let pairs = failures_of(&e.report);
        pairs.contains(&(g.predicate.as_str(), &g.given)).then_some((e, pairs.len() == 1))
    })
}

/// The hint for a group, chosen by what its reason is (its cause), never by its words.
fn hint_for(pod: &PodContext, evaluated: &[EvaluatedNode], g: &FailureGroup) -> Option<String> {
    match &g.given.cause {
        Cause::UntoleratedTaint { effects, .. } => taints_hint(pod, evaluated, g, *effects),
        Cause::NodeSelectorMismatch => selector_hint(pod, evaluated),
        Cause::HostPortConflict => ports_hint(evaluated, g),
        Cause::Insufficient { resource: ResourceName::Pods } => None,
        Cause::Insufficient { resource } => resource_hint(pod, evaluated, g, resource.as_str()),
        _ => None,
    }
}

fn amount(r: &Resource, name: &str) -> i64 {
    match name {
        CPU => r.milli_cpu,
        MEMORY => r.memory,
        EPHEMERAL_STORAGE => r.ephemeral_storage,
        _ => r.scalar(name),
    }
}

/// An amount of a resource as a person reads it: cpu in cores, bytes in binary units (at most two
/// decimals, rounded down, so a free amount is never overstated), other resources as counts.
pub fn show(name: &str, amount: i64) -> String {
    let decimals = |whole: i64, part: i64, scale: i64| {
        let digits = format!("{:0width$}", part, width = scale.to_string().len() - 1);
        let digits = digits.trim_end_matches('0');
        if digits.is_empty() {
            whole.to_string()
        } else {
            format!("{whole}.{digits}")
        }
    };
    if name == CPU {
        return decimals(amount / 1000, amount % 1000, 1000);
    }
    if name == MEMORY || name == EPHEMERAL_STORAGE || name.starts_with("hugepages-") {
        for (unit, size) in [("Ti", 1i64 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)] {
            if amount >= size {
                let hundredths = (amount % size) * 100 / size;
                return format!("{}{unit}", decimals(amount / size, hundredths, 100));
            }
        }
    }
    amount.to_string()
}

fn resource_hint(pod: &PodContext, evaluated: &[EvaluatedNode], g: &FailureGroup, name: &str) -> Option<String> {
    let want = amount(&pod.requests, name);
    if want <= 0 {
        return None;
    }
    let most_free = |alone_only: bool| {
        members(evaluated, g)
            .filter(|(_, alone)| *alone || !alone_only)
            .map(|(e, _)| (amount(&e.facts.free, name), e))
            // The most free; on a tie, the first name.
            .fold(None, |best: Option<(i64, &EvaluatedNode)>, (free, e)| match best {
                Some((b, _)) if b >= free => best,
                _ => Some((free, e)),
            })
    };
    // Where pass 1 decided, the nominated pods it added took their share of the node.
    let on = |e: &EvaluatedNode| {
        let r = &e.report;
        if r.pass2.is_none() && !r.nominated_pods.is_empty() {
            format!("{}, counting the pod(s) nominated to it: {}", r.node, r.nominated_pods.join(", "))
        } else {
            r.node.clone()
        }
    };
    let mut text = format!("the pod requests {} {name}; ", show(name, want));
    match (most_free(true), most_free(false)) {
        (Some((free, e)), _) => text.push_str(&format!(
            "the most free {name} on a node where nothing else fails is {} ({})",
            show(name, free),
            on(e)
        )),
        (None, Some((free, e))) => text.push_str(&format!(
            "each of these nodes fails something else too; the most free {name} among them is {} ({})",
            show(name, free),
            on(e)
        )),
        (None, None) => return None,
    }
    let biggest = evaluated.iter().map(|e| (amount(e.node.allocatable(), name), e.report.node.as_str())).fold(
        None,
        |best: Option<(i64, &str)>, (alloc, node)| match best {
            Some((b, _)) if b >= alloc => best,
            _ => Some((alloc, node)),
        },
    );
    if let Some((alloc, node)) = biggest.filter(|(alloc, _)| *alloc < want) {
        text.push_str(&format!(
            "; no node has that much {name} allocatable even when empty (the most is {} on {node})",
            show(name, alloc)
        ));
    }
    Some(text)
}

/// `key=value:Effect`, or `key:Effect` without a value.
fn show_taint(t: &Taint) -> String {
    match t.value.as_deref().filter(|v| !v.is_empty()) {
        Some(v) => format!("{}={v}:{}", t.key, t.effect),
        None => format!("{}:{}", t.key, t.effect),
    }
}

/// `a on 3 nodes, b on 1 node, and 2 more`, from counts, the largest first.
fn counted(counts: BTreeMap<String, usize>, unit: &str) -> String {
    let mut counts: Vec<(String, usize)> = counts.into_iter().collect();
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let more = counts.len().saturating_sub(MAX_ITEMS);
    let mut parts: Vec<String> =
        counts.into_iter().take(MAX_ITEMS).map(|(what, n)| format!("{what} on {}", nodes(n, unit))).collect();
    if more > 0 {
        parts.push(format!("{more} more"));
    }
    parts.join(", ")
}

fn nodes(n: usize, unit: &str) -> String {
    format!("{n} {unit}{}", if n == 1 { "" } else { "s" })
}

fn alone_note(alone: usize) -> String {
    match alone {
        0 => "every one of these nodes fails something else too".to_string(),
        1 => "1 of these nodes fails nothing else".to_string(),
        n => format!("{n} of these nodes fail nothing else"),
    }
}

fn taints_hint(
    pod: &PodContext,
    evaluated: &[EvaluatedNode],
    g: &FailureGroup,
    effects: TaintEffects,
) -> Option<String> {
    let tolerations = &pod.pod.spec.tolerations;
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut alone = 0;
    for (e, only) in members(evaluated, g) {
        alone += usize::from(only);
        for taint in untolerated(&e.node.node().spec.taints, tolerations, effects) {
            *counts.entry(show_taint(taint)).or_default() += 1;
        }
    }
    if counts.is_empty() {
        return None;
    }
    Some(format!("taints the pod does not tolerate: {}; {}", counted(counts, "node"), alone_note(alone)))
}

fn ports_hint(evaluated: &[EvaluatedNode], g: &FailureGroup) -> Option<String> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut alone = 0;
    for (e, only) in members(evaluated, g) {
        alone += usize::from(only);
        for p in &e.facts.taken_ports {
            let ip = if p.ip == predicate_engine::cluster::host_ports::ANY_IP {
                String::new()
            } else {
                format!("{}:", p.ip)
            };
            *counts.entry(format!("hostPort {ip}{}/{}", p.port, p.protocol)).or_default() += 1;
        }
    }
    if counts.is_empty() {
        return None;
    }
    Some(format!("taken by pods already there: {}; {}", counted(counts, "node"), alone_note(alone)))
}

/// How the nodes' values of a label key spread: `zone: a on 3 nodes, b on 2 nodes; unset on 1`.
fn spread(key: &str, evaluated: &[EvaluatedNode]) -> String {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut unset = 0;
    for e in evaluated {
        match e.node.node().metadata.labels.get(key) {
            Some(v) => *counts.entry(v.clone()).or_default() += 1,
            None => unset += 1,
        }
    }
    let mut text = format!("{key}: ");
    if !counts.is_empty() {
        text.push_str(&counted(counts, "node"));
    }
    if unset > 0 {
        text.push_str(&format!("{}unset on {}", if text.ends_with(": ") { "" } else { "; " }, nodes(unset, "node")));
    }
    text
}

fn show_requirement(r: &NodeSelectorRequirement) -> String {
    let values = r.values.as_deref().unwrap_or_default();
    match r.operator.as_str() {
        "Exists" | "DoesNotExist" => format!("{} {}", r.key, r.operator),
        "Gt" | "Lt" => format!("{} {} {}", r.key, r.operator, values.join(" ")),
        _ => format!("{} {} [{}]", r.key, r.operator, values.join(", ")),
    }
}

fn selector_hint(pod: &PodContext, evaluated: &[EvaluatedNode]) -> Option<String> {
    let total = evaluated.len();
    let holds = |matches: &dyn Fn(&EvaluatedNode) -> bool| evaluated.iter().filter(|e| matches(e)).count();
    let mut items: Vec<String> = Vec::new();
    for (key, value) in &pod.pod.spec.node_selector {
        let n = holds(&|e| e.node.node().metadata.labels.get(key) == Some(value));
        items.push(format!("nodeSelector {key}={value} holds on {n} of {total} nodes ({})", spread(key, evaluated)));
    }
    let terms: &[NodeSelectorTerm] = pod
        .pod
        .spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|na| na.required_during_scheduling_ignored_during_execution.as_ref())
        .map_or(&[], |s| s.node_selector_terms.as_slice());
    for (i, term) in terms.iter().enumerate() {
        let which = if terms.len() > 1 {
            format!("required node affinity term {}", i + 1)
        } else {
            "required node affinity".to_string()
        };
        let alone = |expr: Option<&NodeSelectorRequirement>, field: Option<&NodeSelectorRequirement>| {
            NodeSelectorTerms::compile(&[NodeSelectorTerm {
                match_expressions: expr.map(|r| vec![r.clone()]),
                match_fields: field.map(|r| vec![r.clone()]),
            }])
        };
        for r in term.match_expressions.iter().flatten() {
            let one = alone(Some(r), None);
            let n = holds(&|e| one.matches(e.node.name(), &e.node.node().metadata.labels));
            items.push(format!(
                "{which}: {} holds on {n} of {total} nodes ({})",
                show_requirement(r),
                spread(&r.key, evaluated)
            ));
        }
        for r in term.match_fields.iter().flatten() {
            let one = alone(None, Some(r));
            let n = holds(&|e| one.matches(e.node.name(), &e.node.node().metadata.labels));
            items.push(format!("{which}: field {} holds on {n} of {total} nodes", show_requirement(r)));
        }
    }
    if items.is_empty() {
        return None;
    }
    if items.len() > MAX_ITEMS + 1 {
        let more = items.len() - MAX_ITEMS;
        items.truncate(MAX_ITEMS);
        items.push(format!("and {more} more requirements"));
    }
    Some(items.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::report::{build, Report};
    use predicate_engine::cluster::objects::Pod;
    use predicate_engine::cluster::Snapshot;
    use predicate_engine::engine::{CancelFlag, Evaluator};
    use predicate_engine::policy::Plan;
    use predicate_engine::testing::{requirement, term, NodeBuilder, PodBuilder};

    /// The report of `pod` under the default plan.
    fn report(nodes: Vec<NodeBuilder>, pods: Vec<PodBuilder>, pod: Pod) -> Report {
        let snapshot =
            Snapshot::build(nodes.into_iter().map(NodeBuilder::build), pods.into_iter().map(PodBuilder::build));
        let plan = Plan::default_plan();
        build(
            crate::explain::report::Against::shipped(&plan, &snapshot),
            pod,
            &[],
            &Evaluator::new(2).unwrap(),
            &CancelFlag::new(),
        )
        .unwrap()
    }

    fn hint<'a>(report: &'a Report, reason: &str) -> &'a str {
        let found = report.hints.iter().find(|h| h.reason == reason);
        found.map(|h| h.hint.as_str()).unwrap_or_else(|| panic!("no hint for {reason}: {:?}", report.hints))
    }

    fn running(name: &str, node: &str, cpu: &str) -> PodBuilder {
        PodBuilder::new(name).node(node).req(&[("cpu", cpu)])
    }

    #[test]
    fn cpu_the_most_free_where_nothing_else_fails() {
        // Free cpu, by hand: n1 4-3.5 = 0.5; n2 2-0.53 = 1.47 but tainted; n3 2-0.6 = 1.4; n4 fits.
        let nodes = vec![
            NodeBuilder::new("n1"),
            NodeBuilder::new("n2").alloc(&[("cpu", "2")]).taint("dedicated", "batch", "NoSchedule"),
            NodeBuilder::new("n3").alloc(&[("cpu", "2")]),
            NodeBuilder::new("n4"),
        ];
        let pods = vec![running("a", "n1", "3500m"), running("b", "n2", "530m"), running("c", "n3", "600m")];
        let r = report(nodes, pods, PodBuilder::new("p").req(&[("cpu", "2")]).build());
        assert_eq!(
            hint(&r, "Insufficient cpu"),
            "the pod requests 2 cpu; the most free cpu on a node where nothing else fails is 1.4 (n3)"
        );
        assert_eq!(r.hints[0].nodes, 3, "n1, n2, n3 are short of cpu");
    }

    #[test]
    fn cpu_where_every_short_node_fails_something_else_and_no_node_is_big_enough() {
        let nodes =
            vec![NodeBuilder::new("n1").unschedulable(), NodeBuilder::new("n2").alloc(&[("cpu", "3")]).unschedulable()];
        let r = report(nodes, vec![running("a", "n2", "1")], PodBuilder::new("p").req(&[("cpu", "6")]).build());
        assert_eq!(
            hint(&r, "Insufficient cpu"),
            "the pod requests 6 cpu; each of these nodes fails something else too; the most free cpu among them is 4 \
             (n1); no node has that much cpu allocatable even when empty (the most is 4 on n1)"
        );
    }

    #[test]
    fn a_nominated_pod_counts_in_the_free_amount_of_the_pass_that_decided() {
        // n1 has 2 cpu and nothing running, but a pod of higher priority is nominated to it with
        // 1 cpu: pass 1 (with it) decides, and sees 1 cpu free.
        let vip = PodBuilder::new("vip").nominated("n1").priority(10).req(&[("cpu", "1")]);
        let nodes = vec![NodeBuilder::new("n1").alloc(&[("cpu", "2")])];
        let r = report(nodes, vec![vip], PodBuilder::new("p").req(&[("cpu", "1500m")]).build());
        assert_eq!(
            hint(&r, "Insufficient cpu"),
            "the pod requests 1.5 cpu; the most free cpu on a node where nothing else fails is 1 (n1, counting the \
             pod(s) nominated to it: default/vip)"
        );
    }

    #[test]
    fn memory_and_extended_resources() {
        let nodes = vec![NodeBuilder::new("n1").alloc(&[("memory", "3Gi"), ("example.com/gpu", "2")])];
        let pods = vec![PodBuilder::new("a").node("n1").req(&[("memory", "1536Mi"), ("example.com/gpu", "2")])];
        let pod = PodBuilder::new("p").req(&[("memory", "2Gi"), ("example.com/gpu", "1")]).build();
        let r = report(nodes, pods, pod);
        assert_eq!(
            hint(&r, "Insufficient memory"),
            "the pod requests 2Gi memory; each of these nodes fails something else too; the most free memory among \
             them is 1.5Gi (n1)"
        );
        assert_eq!(
            hint(&r, "Insufficient example.com/gpu"),
            "the pod requests 1 example.com/gpu; each of these nodes fails something else too; the most free \
             example.com/gpu among them is 0 (n1)"
        );
    }

    #[test]
    fn taints_the_pod_does_not_tolerate_counted_per_node() {
        let batch = |n: &str| NodeBuilder::new(n).taint("dedicated", "batch", "NoSchedule");
        let nodes = vec![
            batch("n1"),
            batch("n2").taint("gpu", "", "NoExecute"),
            batch("n3").taint("tolerated", "x", "NoSchedule").taint("soft", "", "PreferNoSchedule"),
            NodeBuilder::new("n4").taint("tolerated", "x", "NoSchedule"),
        ];
        let pod = PodBuilder::new("p").toleration("tolerated", "Equal", "x", "NoSchedule").build();
        let r = report(nodes, vec![], pod);
        assert_eq!(
            hint(&r, "node(s) had taints that the pod didn't tolerate"),
            "taints the pod does not tolerate: dedicated=batch:NoSchedule on 3 nodes, gpu:NoExecute on 1 node; 3 of \
             these nodes fail nothing else"
        );
    }

    #[test]
    fn node_selector_and_required_affinity_with_the_label_values_seen() {
        let nodes = vec![
            NodeBuilder::new("n1").label("disk", "hdd").label("zone", "a"),
            NodeBuilder::new("n2").label("disk", "hdd").label("zone", "b"),
            NodeBuilder::new("n3").label("disk", "ssd").label("zone", "b"),
            NodeBuilder::new("n4").label("zone", "a"),
        ];
        let pod = PodBuilder::new("p")
            .node_selector("disk", "ssd")
            .node_affinity_term(term(vec![requirement("zone", "In", &["a", "c"])]))
            .build();
        let r = report(nodes, vec![], pod);
        assert_eq!(r.feasible, Vec::<String>::new());
        assert_eq!(
            hint(&r, "node(s) didn't match node selector"),
            "nodeSelector disk=ssd holds on 1 of 4 nodes (disk: hdd on 2 nodes, ssd on 1 node; unset on 1 node); \
             required node affinity: zone In [a, c] holds on 2 of 4 nodes (zone: a on 2 nodes, b on 2 nodes)"
        );
    }

    #[test]
    fn host_ports_taken() {
        let nodes = vec![NodeBuilder::new("n1"), NodeBuilder::new("n2").unschedulable(), NodeBuilder::new("n3")];
        let pods = vec![
            PodBuilder::new("a").node("n1").host_port(8080, "", ""),
            PodBuilder::new("b").node("n2").host_port(8080, "", "").host_port(9090, "UDP", ""),
        ];
        let pod = PodBuilder::new("p").host_port(8080, "", "").host_port(9090, "UDP", "").build();
        let r = report(nodes, pods, pod);
        assert_eq!(
            hint(&r, "node(s) didn't have free ports for the requested pod ports"),
            "taken by pods already there: hostPort 8080/TCP on 2 nodes, hostPort 9090/UDP on 1 node; 1 of these \
             nodes fails nothing else"
        );
    }

    #[test]
    fn reasons_without_data_get_no_hint_and_hints_follow_the_largest_groups() {
        let nodes = vec![
            NodeBuilder::new("n1").unschedulable(),
            NodeBuilder::new("n2").unschedulable(),
            NodeBuilder::new("n3").alloc(&[("cpu", "1")]),
        ];
        let r = report(nodes, vec![], PodBuilder::new("p").req(&[("cpu", "2")]).build());
        let reasons: Vec<&str> = r.hints.iter().map(|h| h.reason.as_str()).collect();
        assert_eq!(reasons, ["Insufficient cpu"], "unschedulable nodes: nothing the data could add");
        assert_eq!(r.failures[0].reason, "node(s) were unschedulable");
    }

    /// The hint follows what the reason is: a plugin that says "Insufficient cpu" without saying
    /// what it is gets none, and a reason whose cause is cpu gets the cpu hint in any words.
    #[test]
    fn hints_follow_the_cause_not_the_words() {
        use predicate_engine::cluster::NodeInfo;
        use predicate_engine::framework::{ClusterView, Failures, Predicate, Reason, ReasonKind};

        #[derive(Debug)]
        struct Says(Reason);
        impl Predicate for Says {
            type State = ();
            fn name(&self) -> &str {
                "Says"
            }
            fn failures(&self) -> Failures {
                Failures::MaybeResolvable
            }
            fn prepare(&self, _pod: &PodContext, _view: &ClusterView<'_>) {}
            fn check(&self, _pod: &PodContext, _state: &(), _node: &NodeInfo, reasons: &mut Vec<Reason>) {
                reasons.push(self.0.clone());
            }
        }
        let snapshot = Snapshot::build([NodeBuilder::new("n1").alloc(&[("cpu", "1")]).build()], []);
        let run = |reason: Reason| {
            let plan = Plan::of_predicates(vec![std::sync::Arc::new(Says(reason))]);
            let pod = PodBuilder::new("p").req(&[("cpu", "2")]).build();
            let against = crate::explain::report::Against::shipped(&plan, &snapshot);
            build(against, pod, &[], &Evaluator::new(2).unwrap(), &CancelFlag::new()).unwrap()
        };
        let words_only = run(Reason::resolvable("Insufficient cpu"));
        assert_eq!(words_only.failures[0].reason, "Insufficient cpu");
        assert_eq!(words_only.hints, vec![], "no cause, no hint");
        let cpu = Cause::Insufficient { resource: ResourceName::Cpu };
        let typed = run(Reason::of(cpu, ReasonKind::Resolvable, "short of processors"));
        assert_eq!(
            hint(&typed, "short of processors"),
            "the pod requests 2 cpu; the most free cpu on a node where nothing else fails is 1 (n1); no node has \
             that much cpu allocatable even when empty (the most is 1 on n1)"
        );
    }

    #[test]
    fn amounts_read_as_people_write_them() {
        let cases = [
            ("cpu", 2000, "2"),
            ("cpu", 1470, "1.47"),
            ("cpu", 500, "0.5"),
            ("cpu", 1, "0.001"),
            ("cpu", 0, "0"),
            ("memory", 1 << 30, "1Gi"),
            ("memory", (1 << 30) + (1 << 29), "1.5Gi"),
            // 1.999... Gi is shown as 1.99Gi: a free amount is rounded down, never up.
            ("memory", (2 << 30) - 1, "1.99Gi"),
            ("memory", 512 << 20, "512Mi"),
            ("memory", 1000, "1000"),
            ("ephemeral-storage", 100 << 30, "100Gi"),
            ("hugepages-2Mi", 4 << 20, "4Mi"),
            ("nvidia.com/gpu", 3, "3"),
        ];
        for (name, amount, want) in cases {
            assert_eq!(show(name, amount), want, "{name} {amount}");
        }
    }
}
