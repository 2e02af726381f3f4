//! The failing nodes grouped by the predicate and reason that decided them: what a person reads
//! first on a large cluster instead of one row per predicate per node.

use std::collections::HashMap;

use serde::Serialize;

use crate::explain::report::NodeReport;
use predicate_engine::framework::{Cause, Reason, ReasonKind};

/// Example node names shown per group.
pub const EXAMPLES: usize = 3;

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct FailureGroup {
    /// The predicate that gave the reason.
    pub predicate: String,
    /// The reason's message.
    pub reason: String,
    /// The reason itself, as the group's first node got it: equal to every node's reason of the
    /// group, and its cause is what the hints read (what the predicate knew of that one node, a
    /// taint or a label, may differ from another node's).
    #[serde(skip)]
    pub given: Reason,
    /// How many nodes failed with it in the pass that decided them.
    pub nodes: usize,
    /// How many of those failed with nothing else: they would fit without this reason.
    pub alone: usize,
    /// The first few of those nodes, by name.
    pub examples: Vec<String>,
    /// The first node, by name, that fails for this reason only: the node this reason decides
    /// (`None` when every node of the group fails for something else too).
    pub deciding: Option<String>,
}

/// The verdicts of the pass that decided a node: pass 2 when it ran, else pass 1 (the only pass,
/// or a pass 1 that failed).
pub fn deciding_pass(node: &NodeReport) -> &[crate::explain::report::PredicateVerdict] {
    node.pass2.as_deref().unwrap_or(&node.pass1)
}

/// The distinct (predicate, reason) pairs that decided a failing node, in plan order (reasons
/// being equal when they say the same: [`Reason`]'s equality). The general
/// "didn't match pod affinity/anti-affinity" ([`Cause::InterPodAffinity`]) that
/// MatchInterPodAffinity puts before its specific reason (as upstream lists them) is left out when
/// the specific one is there: it says nothing more, and counted apart it would make every affinity
/// failure look like two.
pub fn failures_of(node: &NodeReport) -> Vec<(&str, &Reason)> {
    let general = |r: &Reason| r.cause == Cause::InterPodAffinity;
    let mut pairs: Vec<(&str, &Reason)> = Vec::new();
    for v in deciding_pass(node).iter().filter(|v| !v.fits) {
        let specific = v.reasons.iter().any(|r| !general(r));
        for reason in v.reasons.iter().filter(|r| !(specific && general(r))) {
            if !pairs.contains(&(v.predicate.as_str(), reason)) {
                pairs.push((v.predicate.as_str(), reason));
            }
        }
    }
    pairs
}

/// The groups, largest first; ties in plan order of the predicate, then by reason. `nodes` is in
/// name order, so the examples are the first names.
pub fn group<'a>(nodes: impl IntoIterator<Item = &'a NodeReport>) -> Vec<FailureGroup> {
    let mut plan_order: HashMap<&str, usize> = HashMap::new();
    let mut groups: Vec<FailureGroup> = Vec::new();
    // A group is a predicate and a reason, as reasons are equal: by what they say (the message,
    // as the tables show it) and their kind.
    let mut index: HashMap<(&str, &str, ReasonKind), usize> = HashMap::new();
    for node in nodes.into_iter().filter(|n| !n.fits) {
        for (i, v) in deciding_pass(node).iter().enumerate() {
            plan_order.entry(v.predicate.as_str()).or_insert(i);
        }
        let pairs = failures_of(node);
        let alone = pairs.len() == 1;
        for (predicate, reason) in pairs {
            let at = *index.entry((predicate, reason.message.as_ref(), reason.kind)).or_insert_with(|| {
                groups.push(FailureGroup {
                    predicate: predicate.to_string(),
                    reason: reason.to_string(),
                    given: reason.clone(),
                    nodes: 0,
                    alone: 0,
                    examples: Vec::new(),
                    deciding: None,
                });
                groups.len() - 1
            });
            if let Some(g) = groups.get_mut(at) {
                g.nodes += 1;
                g.alone += usize::from(alone);
                if alone && g.deciding.is_none() {
                    g.deciding = Some(node.node.clone());
                }
                if g.examples.len() < EXAMPLES {
                    g.examples.push(node.node.clone());
                }
            }
        }
    }
    let order = |g: &FailureGroup| plan_order.get(g.predicate.as_str()).copied().unwrap_or(usize::MAX);
    groups.sort_by(|a, b| b.nodes.cmp(&a.nodes).then(order(a).cmp(&order(b))).then(a.reason.cmp(&b.reason)));
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::report::PredicateVerdict;
    use predicate_engine::predicates::match_inter_pod_affinity::{
        ERR_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH, ERR_POD_AFFINITY_NOT_MATCH,
    };

    fn verdict(predicate: &str, reasons: &[&str]) -> PredicateVerdict {
        let words_only = |r: &&str| Reason::new(r.to_string().into(), ReasonKind::Resolvable);
        verdict_of(predicate, reasons.iter().map(words_only).collect())
    }

    fn verdict_of(predicate: &str, reasons: Vec<Reason>) -> PredicateVerdict {
        PredicateVerdict { predicate: predicate.to_string(), fits: reasons.is_empty(), reasons }
    }

    fn node(name: &str, pass1: Vec<PredicateVerdict>, pass2: Option<Vec<PredicateVerdict>>) -> NodeReport {
        let deciding = pass2.as_ref().unwrap_or(&pass1);
        let reasons: Vec<String> = deciding.iter().flat_map(|v| v.reasons.iter().map(|r| r.to_string())).collect();
        NodeReport {
            node: name.to_string(),
            fits: reasons.is_empty(),
            reasons,
            nominated_pods: if pass2.is_some() { vec!["ns/vip".to_string()] } else { vec![] },
            pass1,
            pass2,
        }
    }

    const CPU: &str = "Insufficient cpu";
    const TAINT: &str = "node(s) had taints that the pod didn't tolerate";

    #[test]
    fn nodes_are_counted_per_deciding_predicate_and_reason_with_examples_and_alone() {
        let res = |r: &[&str]| verdict("GeneralPredicates", r);
        let taints = |r: &[&str]| verdict("PodToleratesNodeTaints", r);
        let nodes = vec![
            node("a", vec![res(&[CPU]), taints(&[])], None),
            node("b", vec![res(&[CPU]), taints(&[TAINT])], None),
            node("c", vec![res(&[]), taints(&[TAINT])], None),
            node("d", vec![res(&[CPU, "Insufficient memory"]), taints(&[])], None),
            node("e", vec![res(&[CPU]), taints(&[])], None),
            node("f", vec![res(&[CPU]), taints(&[])], None),
            node("ok", vec![res(&[]), taints(&[])], None),
            // Pass 1 (with a nominated pod) passed; pass 2 decided, on cpu alone.
            node("g", vec![res(&[]), taints(&[])], Some(vec![res(&[CPU]), taints(&[])])),
        ];
        let groups = group(&nodes);
        let got: Vec<_> = groups
            .iter()
            .map(|g| (g.predicate.as_str(), g.reason.as_str(), g.nodes, g.alone, g.examples.clone()))
            .collect();
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            got,
            vec![
                ("GeneralPredicates", CPU, 6, 4, names(&["a", "b", "d"])),
                ("PodToleratesNodeTaints", TAINT, 2, 1, names(&["b", "c"])),
                ("GeneralPredicates", "Insufficient memory", 1, 0, names(&["d"])),
            ]
        );
    }

    #[test]
    fn the_general_affinity_reason_is_not_a_group_of_its_own_beside_a_specific_one() {
        let general = ERR_POD_AFFINITY_NOT_MATCH.message.to_string();
        let existing = "node(s) didn't satisfy existing pods anti-affinity rules";
        let nodes = vec![
            node(
                "a",
                vec![verdict_of(
                    "MatchInterPodAffinity",
                    vec![ERR_POD_AFFINITY_NOT_MATCH, ERR_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH],
                )],
                None,
            ),
            // Only the general reason (no specific one beside it): kept.
            node("b", vec![verdict_of("MatchInterPodAffinity", vec![ERR_POD_AFFINITY_NOT_MATCH])], None),
        ];
        let got: Vec<_> = group(&nodes).into_iter().map(|g| (g.reason, g.nodes, g.alone)).collect();
        assert_eq!(got, vec![(general.clone(), 1, 1), (existing.to_string(), 1, 1)]);
    }

    /// The general reason is known by its cause, not its words: a reason of other words with that
    /// cause is left out beside a specific one, and one with its words but another cause is not.
    #[test]
    fn the_general_affinity_reason_is_known_by_its_cause() {
        let specific = ERR_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH;
        let reworded = Reason::of(Cause::InterPodAffinity, ERR_POD_AFFINITY_NOT_MATCH.kind, "in other words");
        let same_words = Reason::resolvable("node(s) didn't match pod affinity/anti-affinity");
        let nodes = vec![
            node("a", vec![verdict_of("MatchInterPodAffinity", vec![reworded, specific.clone()])], None),
            node("b", vec![verdict_of("MatchInterPodAffinity", vec![same_words, specific.clone()])], None),
        ];
        let got: Vec<_> = group(&nodes).into_iter().map(|g| (g.reason, g.given.cause, g.nodes)).collect();
        assert_eq!(
            got,
            vec![
                (specific.message.to_string(), Cause::ExistingPodsAntiAffinity, 2),
                (ERR_POD_AFFINITY_NOT_MATCH.message.to_string(), Cause::Other, 1),
            ]
        );
    }

    #[test]
    fn equal_counts_keep_plan_order() {
        let nodes = vec![
            node("a", vec![verdict("Z-first", &["z"]), verdict("A-second", &[])], None),
            node("b", vec![verdict("Z-first", &[]), verdict("A-second", &["a"])], None),
        ];
        let order: Vec<_> = group(&nodes).into_iter().map(|g| g.predicate).collect();
        assert_eq!(order, ["Z-first", "A-second"]);
    }
}
