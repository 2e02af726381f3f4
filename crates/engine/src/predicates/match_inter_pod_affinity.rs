//! MatchInterPodAffinity: the pod's required pod affinity and anti-affinity terms, and the required
//! anti-affinity terms of the pods already placed, evaluated over topology domains (the nodes that
//! share a value of a term's `topologyKey` label).
//!
//! The terms read as kube-scheduler's InterPodAffinity filter reads them as of 1.22, the last
//! release with the Policy API (`pkg/scheduler/framework/plugins/interpodaffinity/filtering.go`):
//!
//! - A term selects pods by `labelSelector` (absent: no pod) in its namespaces: those listed, plus
//!   those whose Namespace object matches `namespaceSelector` (absent: none; `{}`: all). With
//!   neither, the namespace of the pod that owns the term.
//! - Affinity: every term's topology key must be on the node, and some placed pod that matches
//!   *all* the terms must run in the node's domain of each key. When no placed pod matches them
//!   anywhere and the pod matches its own terms, the first pod of a group may go to any node that
//!   has the keys.
//! - Anti-affinity: no pod matching a term may run in the node's domain of the term's key.
//! - Existing pods' anti-affinity (the symmetric rule): no pod whose required anti-affinity term
//!   selects the incoming pod may run in the node's domain of that term's key.
//! - A node without a term's key is never in its domain: affinity fails there, anti-affinity never
//!   blocks it.
//!
//! The checks run in the classic order (1.12-1.15 `InterPodAffinityMatches`): existing pods'
//! anti-affinity first, then the pod's affinity, then its anti-affinity; the first that fails
//! decides, reported as upstream lists it: `ErrPodAffinityNotMatch` ("node(s) didn't match pod
//! affinity/anti-affinity") and then the specific reason. As in upstream's
//! `unresolvablePredicateFailureErrors`, only the pod's own affinity failing is unresolvable; the
//! general reason and both anti-affinity reasons are resolvable (evicting the matching pods would
//! clear the domain), so a node reports unresolvable exactly when its affinity failed.
//! When every term involved (the pod's, and the placed pods' that select it) has one topology key
//! other than the hostname, the verdict depends only on the node's value of that key: it is
//! computed once per value at prepare time ([`DomainVerdicts`]) and looked up per node. A node
//! without the key, and the states the nominated-pod pass and preemption change, are judged per
//! node.
//! `matchLabelKeys`/`mismatchLabelKeys` are not read: the API server merges them into
//! `labelSelector` when it admits the pod. A selector that does not convert (see
//! [`crate::labels::selectors`]) selects nothing.

use std::collections::BTreeMap;

use crate::hashing::HashMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::PodAffinityTerm;

use crate::cluster::objects::Pod;
use crate::cluster::{NodeInfo, PodInfo};
use crate::framework::PodContext;
use crate::framework::{ArgumentError, PredicateArgs};
use crate::framework::{Cause, ReasonKind};
use crate::framework::{ClusterView, DomainVerdicts};
use crate::framework::{Failures, Predicate, PredicateState, Reason};
use crate::plugin_helpers::affinity_terms::{for_each_candidate, namespace_labels, Term};

/// The registry name.
pub const NAME: &str = "MatchInterPodAffinity";

/// Builds it (it takes no argument).
pub fn build(_args: &PredicateArgs<'_>) -> Result<Arc<dyn crate::framework::AnyPredicate>, ArgumentError> {
    Ok(Arc::new(MatchInterPodAffinity))
}

/// Listed first beside each of the three below (upstream's `ErrPodAffinityNotMatch`); resolvable.
pub const ERR_POD_AFFINITY_NOT_MATCH: Reason =
    Reason::of(Cause::InterPodAffinity, ReasonKind::Resolvable, "node(s) didn't match pod affinity/anti-affinity");
/// Unresolvable: evicting pods cannot bring the pods the affinity asks for.
pub const ERR_AFFINITY_RULES_NOT_MATCH: Reason =
    Reason::of(Cause::PodAffinityRules, ReasonKind::Unresolvable, "node(s) didn't match pod affinity rules");
/// Resolvable (this one and the next): evicting the matching pods would clear the domain.
pub const ERR_ANTI_AFFINITY_RULES_NOT_MATCH: Reason =
    Reason::of(Cause::PodAntiAffinityRules, ReasonKind::Resolvable, "node(s) didn't match pod anti-affinity rules");
pub const ERR_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH: Reason = Reason::of(
    Cause::ExistingPodsAntiAffinity,
    ReasonKind::Resolvable,
    "node(s) didn't satisfy existing pods anti-affinity rules",
);

/// Whether a pod joins the counts or leaves them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    Add,
    Remove,
}

/// How many matching pods run in each topology domain: topology key → value → count. Looked up by
/// `(&str, &str)` without allocating. The keys are few (one per distinct `topologyKey` of the
/// terms involved), so they are a list: finding one compares a short string instead of hashing it
/// for every pod counted.
#[derive(Debug, Clone, Default)]
struct TopologyCounts(Vec<(String, HashMap<String, usize>)>);

impl TopologyCounts {
    fn values(&self, key: &str) -> Option<&HashMap<String, usize>> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, values)| values)
    }

    fn position(&self, key: &str) -> Option<usize> {
        self.0.iter().position(|(k, _)| k == key)
    }

    /// Counts one pod in the domain of `key` of a node with these labels, if the node has the key.
    fn add_on(&mut self, key: &str, node_labels: &BTreeMap<String, String>) {
        let Some(value) = node_labels.get(key) else { return };
        let values = match self.position(key) {
            Some(i) => &mut self.0[i].1,
            None => {
                self.0.push((key.to_string(), HashMap::default()));
                let last = self.0.len() - 1;
                &mut self.0[last].1
            }
        };
        match values.get_mut(value) {
            Some(count) => *count += 1,
            None => {
                values.insert(value.clone(), 1);
            }
        }
    }

    /// Uncounts one pod from the domain of `key` of a node with these labels. A domain left
    /// without pods is forgotten, and a key left without domains too, as upstream deletes empty
    /// topology pairs: "no pod matches anywhere" must read the same as if it was never counted.
    fn remove_on(&mut self, key: &str, node_labels: &BTreeMap<String, String>) {
        let Some(value) = node_labels.get(key) else { return };
        let Some(i) = self.position(key) else { return };
        let values = &mut self.0[i].1;
        if let Some(count) = values.get_mut(value) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                values.remove(value);
            }
        }
        if values.is_empty() {
            self.0.swap_remove(i);
        }
    }

    /// Counts (`Change::Add`) or uncounts (`Change::Remove`) one pod.
    fn change_on(&mut self, change: Change, key: &str, node_labels: &BTreeMap<String, String>) {
        match change {
            Change::Add => self.add_on(key, node_labels),
            Change::Remove => self.remove_on(key, node_labels),
        }
    }

    /// Whether a counted pod runs in the node's domain of `key`; false when the node lacks the key.
    fn in_domain(&self, key: &str, node_labels: &BTreeMap<String, String>) -> bool {
        node_labels
            .get(key)
            .is_some_and(|value| self.values(key).and_then(|values| values.get(value)).is_some_and(|c| *c > 0))
    }

    /// Whether a counted pod runs in any of the node's domains.
    fn in_any_domain(&self, node_labels: &BTreeMap<String, String>) -> bool {
        self.0.iter().any(|(key, _)| self.in_domain(key, node_labels))
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// What the predicate computes once per request: the incoming pod's terms, compiled, and the
/// topology counts the per-node check looks up.
#[derive(Debug, Clone, Default)]
pub struct State {
    affinity_terms: Arc<Vec<Term>>,
    anti_affinity_terms: Arc<Vec<Term>>,
    /// The pod matches all its own affinity terms: it may be the first of its group.
    matches_own_affinity: bool,
    /// The labels of the incoming pod's Namespace, for other pods' `namespaceSelector`s.
    namespace_labels: Arc<BTreeMap<String, String>>,
    /// Placed pods matching all the pod's affinity terms, per domain of each term's key.
    affinity_counts: TopologyCounts,
    /// Placed pods matching one of the pod's anti-affinity terms, per domain of that term's key.
    anti_affinity_counts: TopologyCounts,
    /// Placed pods with an anti-affinity term selecting the pod, per domain of that term's key.
    existing_anti_affinity_counts: TopologyCounts,
    /// The verdict per value of the one topology key of every term involved, for the counts as
    /// `compute` left them; `None` when there are several keys, or the hostname, or the counts
    /// changed since (`add_pod`, `remove_pod`).
    domain_verdicts: Option<Arc<DomainVerdicts>>,
}

#[cfg(test)]
thread_local! {
    /// How many times a node's verdict was computed on this thread (tests only): what shows the
    /// verdicts are computed once per domain.
    pub(crate) static VERDICTS_COMPUTED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl State {
    /// Computes the state for the incoming pod over the whole cluster.
    pub fn compute(ctx: &PodContext, view: &ClusterView<'_>) -> Self {
        let pod = &ctx.pod;
        let compile =
            |terms: &[PodAffinityTerm]| -> Vec<Term> { terms.iter().map(|t| Term::compile(pod, t, view)).collect() };
        let affinity_terms = compile(pod.required_affinity_terms());
        let anti_affinity_terms = compile(pod.required_anti_affinity_terms());
        let matches_own_affinity = !affinity_terms.is_empty() && affinity_terms.iter().all(|t| t.matches(pod));
        let mut state = State {
            affinity_terms: Arc::new(affinity_terms),
            anti_affinity_terms: Arc::new(anti_affinity_terms),
            matches_own_affinity,
            namespace_labels: Arc::new(namespace_labels(view, &pod.metadata.namespace).clone()),
            ..State::default()
        };

        // Only pods whose anti-affinity terms could select the incoming pod's labels (the
        // snapshot files them by the labels their selectors require).
        for existing in view.snapshot.anti_affinity_candidates(&pod.metadata.labels) {
            if let Some(node_labels) = view.node_labels(&existing.pod.spec.node_name) {
                state.count_anti_affinity_of(Change::Add, existing, pod, node_labels);
            }
        }

        // A placed pod counts for affinity only when it matches every term, so the pods one term
        // selects are all the candidates there are.
        let affinity_terms = Arc::clone(&state.affinity_terms);
        if let Some(first) = affinity_terms.first() {
            // Counted under every term's key: a pod on a node without the first term's key still
            // counts in the domains of the others (upstream records each term's pair alone).
            let keys: Vec<&str> = affinity_terms.iter().map(|t| t.topology_key.as_str()).collect();
            for_each_candidate(view, first, &keys, |existing, node_labels| {
                if affinity_terms.iter().all(|t| t.matches(existing)) {
                    for term in affinity_terms.iter() {
                        state.affinity_counts.add_on(&term.topology_key, node_labels);
                    }
                }
            });
        }
        let anti_affinity_terms = Arc::clone(&state.anti_affinity_terms);
        for term in anti_affinity_terms.iter() {
            for_each_candidate(view, term, &[term.topology_key.as_str()], |existing, node_labels| {
                if term.matches(existing) {
                    state.anti_affinity_counts.add_on(&term.topology_key, node_labels);
                }
            });
        }
        state.domain_verdicts = state.tabulate().map(Arc::new);
        state
    }

    /// The verdict per domain, when every term involved has the same topology key.
    fn tabulate(&self) -> Option<DomainVerdicts> {
        let mut keys = self
            .affinity_terms
            .iter()
            .chain(self.anti_affinity_terms.iter())
            .map(|t| t.topology_key.as_str())
            .chain(self.existing_anti_affinity_counts.0.iter().map(|(key, _)| key.as_str()));
        let key = keys.next()?;
        if !keys.all(|k| k == key) {
            return None;
        }
        let values = [&self.affinity_counts, &self.anti_affinity_counts, &self.existing_anti_affinity_counts]
            .into_iter()
            .filter_map(|counts| counts.values(key))
            .flat_map(|values| values.keys().map(String::as_str));
        DomainVerdicts::build(key, values, |labels| self.verdict(labels))
    }

    fn change(&mut self, change: Change, incoming: &Pod, other: &PodInfo, node: &NodeInfo) {
        // The table was computed from the counts as they were.
        self.domain_verdicts = None;
        let node_labels = &node.node().metadata.labels;
        self.count_anti_affinity_of(change, other, incoming, node_labels);
        self.count_against_own_terms(change, &other.pod, node_labels);
    }

    /// Counts (or uncounts) `other`'s required anti-affinity terms that select the incoming pod, in
    /// the domains of `other`'s node.
    fn count_anti_affinity_of(
        &mut self,
        change: Change,
        other: &PodInfo,
        incoming: &Pod,
        node_labels: &BTreeMap<String, String>,
    ) {
        let terms = other.terms.as_deref().map(|t| t.required_anti_affinity.as_slice()).unwrap_or_default();
        for term in terms {
            if term.selects(incoming, &self.namespace_labels) {
                self.existing_anti_affinity_counts.change_on(change, &term.topology_key, node_labels);
            }
        }
    }

    /// Counts (or uncounts) `other`, on a node with these labels, against the incoming pod's own
    /// terms.
    fn count_against_own_terms(&mut self, change: Change, other: &Pod, node_labels: &BTreeMap<String, String>) {
        // Affinity counts a pod only when it matches every term: a single group satisfies them all.
        if !self.affinity_terms.is_empty() && self.affinity_terms.iter().all(|t| t.matches(other)) {
            for term in self.affinity_terms.iter() {
                self.affinity_counts.change_on(change, &term.topology_key, node_labels);
            }
        }
        for term in self.anti_affinity_terms.iter() {
            if term.matches(other) {
                self.anti_affinity_counts.change_on(change, &term.topology_key, node_labels);
            }
        }
    }

    fn satisfies_affinity(&self, node_labels: &BTreeMap<String, String>) -> bool {
        let mut pods_in_domains = true;
        for term in self.affinity_terms.iter() {
            if !node_labels.contains_key(&term.topology_key) {
                return false; // even the first pod of a group needs the node in every domain
            }
            pods_in_domains &= self.affinity_counts.in_domain(&term.topology_key, node_labels);
        }
        pods_in_domains || (self.affinity_counts.is_empty() && self.matches_own_affinity)
    }

    fn satisfies_anti_affinity(&self, node_labels: &BTreeMap<String, String>) -> bool {
        !self.anti_affinity_terms.iter().any(|t| self.anti_affinity_counts.in_domain(&t.topology_key, node_labels))
    }

    fn satisfies_existing_anti_affinity(&self, node_labels: &BTreeMap<String, String>) -> bool {
        !self.existing_anti_affinity_counts.in_any_domain(node_labels)
    }

    /// The reason today's InterPodAffinity gives on a node with these labels
    /// (`interpodaffinity/filtering.go`, `Filter`): the pod's own affinity is checked first, then
    /// its anti-affinity, then the placed pods' anti-affinity; only the first that fails is
    /// reported. (The classic order is [`State::verdict`]'s.)
    pub fn todays_reason(&self, node_labels: &BTreeMap<String, String>) -> Option<Reason> {
        if !self.satisfies_affinity(node_labels) {
            Some(ERR_AFFINITY_RULES_NOT_MATCH)
        } else if !self.satisfies_anti_affinity(node_labels) {
            Some(ERR_ANTI_AFFINITY_RULES_NOT_MATCH)
        } else if !self.satisfies_existing_anti_affinity(node_labels) {
            Some(ERR_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
        } else {
            None
        }
    }

    /// The specific reason the pod may not go to a node with these labels, if it may not: the
    /// first check that fails decides.
    fn verdict(&self, node_labels: &BTreeMap<String, String>) -> Option<Reason> {
        #[cfg(test)]
        VERDICTS_COMPUTED.with(|c| c.set(c.get() + 1));
        if !self.satisfies_existing_anti_affinity(node_labels) {
            Some(ERR_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
        } else if !self.satisfies_affinity(node_labels) {
            Some(ERR_AFFINITY_RULES_NOT_MATCH)
        } else if !self.satisfies_anti_affinity(node_labels) {
            Some(ERR_ANTI_AFFINITY_RULES_NOT_MATCH)
        } else {
            None
        }
    }
}

impl PredicateState for State {
    /// As if `added` ran on `node` (the nominated-pod pass).
    fn add_pod(&mut self, pod: &PodContext, added: &PodInfo, node: &NodeInfo) {
        self.change(Change::Add, &pod.pod, added, node);
    }

    /// As if `removed` no longer ran on `node` (a preemption victim): upstream's `RemovePod` of
    /// the predicate metadata.
    fn remove_pod(&mut self, pod: &PodContext, removed: &PodInfo, node: &NodeInfo) {
        self.change(Change::Remove, &pod.pod, removed, node);
    }
}

#[derive(Debug)]
pub struct MatchInterPodAffinity;

impl Predicate for MatchInterPodAffinity {
    type State = State;

    fn name(&self) -> &str {
        NAME
    }

    /// The pod's own affinity failing is unresolvable; the rest is resolvable.
    fn failures(&self) -> Failures {
        Failures::MaybeResolvable
    }

    fn prepare(&self, pod: &PodContext, view: &ClusterView<'_>) -> State {
        State::compute(pod, view)
    }

    fn check(&self, _pod: &PodContext, state: &State, node: &NodeInfo, reasons: &mut Vec<Reason>) {
        let failed = match state.domain_verdicts.as_deref().and_then(|table| table.of_node(node)) {
            Some(tabled) => tabled.cloned(),
            None => state.verdict(&node.node().metadata.labels),
        };
        if let Some(failed) = failed {
            reasons.extend([ERR_POD_AFFINITY_NOT_MATCH, failed]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::objects::Node;
    use crate::cluster::{ClusterObject, Snapshot};
    use crate::engine::fits::{fits_on_node, run_predicates};
    use crate::engine::{Plan, Prepared};
    use crate::testing::zoned::{reasons_on_zoned_nodes, zoned_nodes};
    use crate::testing::{NodeBuilder, PodBuilder};
    use k8s_openapi::api::core::v1::{Affinity, Namespace, PodAffinity, PodAntiAffinity};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
        LabelSelector as K8sSelector, LabelSelectorRequirement, ObjectMeta as K8sMeta,
    };

    const ZONE: &str = "topology.kubernetes.io/zone";
    const HOST: &str = "kubernetes.io/hostname";

    const OK: Option<Reason> = None;
    const AFF: Option<Reason> = Some(ERR_AFFINITY_RULES_NOT_MATCH);
    const ANTI: Option<Reason> = Some(ERR_ANTI_AFFINITY_RULES_NOT_MATCH);
    const EXIST: Option<Reason> = Some(ERR_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH);

    /// a1 and a2 in zone a, b1 and b2 in zone b, and a node without a zone; each has its hostname.
    const NODES: [&str; 5] = ["a1", "a2", "b1", "b2", "nozone"];

    fn nodes() -> Vec<Node> {
        NODES
            .iter()
            .map(|name| match name.as_bytes()[0] {
                b'a' => NodeBuilder::new(name).label(ZONE, "a").build(),
                b'b' => NodeBuilder::new(name).label(ZONE, "b").build(),
                _ => NodeBuilder::new(name).build(),
            })
            .collect()
    }

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn match_labels(pairs: &[(&str, &str)]) -> K8sSelector {
        K8sSelector { match_labels: Some(labels(pairs)), match_expressions: None }
    }

    /// A term selecting pods with these labels, in the owner's namespace.
    fn term(pairs: &[(&str, &str)], topology_key: &str) -> PodAffinityTerm {
        PodAffinityTerm {
            label_selector: Some(match_labels(pairs)),
            topology_key: topology_key.to_string(),
            ..Default::default()
        }
    }

    fn in_namespaces(mut t: PodAffinityTerm, namespaces: &[&str]) -> PodAffinityTerm {
        t.namespaces = Some(namespaces.iter().map(|n| n.to_string()).collect());
        t
    }

    fn with_namespace_selector(mut t: PodAffinityTerm, pairs: &[(&str, &str)]) -> PodAffinityTerm {
        t.namespace_selector = Some(match_labels(pairs));
        t
    }

    fn expression(key: &str, operator: &str, values: &[&str]) -> LabelSelectorRequirement {
        LabelSelectorRequirement {
            key: key.to_string(),
            operator: operator.to_string(),
            values: (!values.is_empty()).then(|| values.iter().map(|v| v.to_string()).collect()),
        }
    }

    fn expressions_term(exprs: Vec<LabelSelectorRequirement>, topology_key: &str) -> PodAffinityTerm {
        PodAffinityTerm {
            label_selector: Some(K8sSelector { match_labels: None, match_expressions: Some(exprs) }),
            topology_key: topology_key.to_string(),
            ..Default::default()
        }
    }

    /// The pod with these required affinity and anti-affinity terms.
    fn with_terms(mut pod: Pod, affinity: Vec<PodAffinityTerm>, anti: Vec<PodAffinityTerm>) -> Pod {
        pod.spec.affinity = Some(Affinity {
            pod_affinity: (!affinity.is_empty()).then(|| PodAffinity {
                required_during_scheduling_ignored_during_execution: Some(affinity),
                ..Default::default()
            }),
            pod_anti_affinity: (!anti.is_empty()).then(|| PodAntiAffinity {
                required_during_scheduling_ignored_during_execution: Some(anti),
                ..Default::default()
            }),
            ..Default::default()
        });
        pod
    }

    fn affinity(pod: PodBuilder, terms: Vec<PodAffinityTerm>) -> Pod {
        with_terms(pod.build(), terms, vec![])
    }

    fn anti(pod: PodBuilder, terms: Vec<PodAffinityTerm>) -> Pod {
        with_terms(pod.build(), vec![], terms)
    }

    /// A placed pod with these labels.
    fn placed(name: &str, node: &str, pairs: &[(&str, &str)]) -> PodBuilder {
        pairs.iter().fold(PodBuilder::new(name).node(node), |b, (k, v)| b.label(k, v))
    }

    fn namespace(name: &str, pairs: &[(&str, &str)]) -> ClusterObject {
        ClusterObject::Namespace(Box::new(Namespace {
            metadata: K8sMeta { name: Some(name.to_string()), labels: Some(labels(pairs)), ..Default::default() },
            ..Default::default()
        }))
    }

    /// The five nodes with these pods, and Namespaces team-a (`team=a`) and team-b (`team=b`).
    fn cluster(pods: Vec<Pod>) -> Snapshot {
        let mut snapshot = Snapshot::build(nodes(), pods);
        snapshot.upsert(namespace("team-a", &[("team", "a")]));
        snapshot.upsert(namespace("team-b", &[("team", "b")]));
        snapshot
    }

    /// The pod and the predicate's state for it.
    struct Ctx {
        pod: PodContext,
        state: State,
    }

    fn context(snapshot: &Snapshot, pod: Pod) -> Ctx {
        let pod = PodContext::new(pod);
        let state = MatchInterPodAffinity.prepare(&pod, &ClusterView::of(snapshot));
        Ctx { pod, state }
    }

    /// The specific reason on the node, after checking it comes second, behind
    /// [`ERR_POD_AFFINITY_NOT_MATCH`], as upstream lists them.
    fn reason_on(ctx: &Ctx, node: &NodeInfo) -> Option<Reason> {
        let mut reasons = Vec::new();
        Predicate::check(&MatchInterPodAffinity, &ctx.pod, &ctx.state, node, &mut reasons);
        match reasons.as_slice() {
            [] => None,
            [general, specific] if *general == ERR_POD_AFFINITY_NOT_MATCH => Some(specific.clone()),
            other => panic!("expected the general reason and one specific one: {other:?}"),
        }
    }

    /// The verdict on each of [`NODES`], in order.
    fn verdicts(snapshot: &Snapshot, pod: Pod) -> Vec<Option<Reason>> {
        let ctx = context(snapshot, pod);
        NODES.iter().map(|n| reason_on(&ctx, &snapshot.node_info(n).unwrap())).collect()
    }

    /// (name, placed pods, incoming pod, verdicts on a1, a2, b1, b2, nozone)
    type Case = (&'static str, Vec<Pod>, Pod, [Option<Reason>; 5]);

    #[test]
    fn topology_domains() {
        let db = || placed("db", "a1", &[("app", "db")]);
        let web_on_b2 = || placed("web", "b2", &[("app", "web")]);
        let incoming = || PodBuilder::new("p");
        let web_incoming = || PodBuilder::new("p").label("app", "web");
        let cases: Vec<Case> = vec![
            ("no terms, nothing against the pod", vec![db().build()], incoming().build(), [OK, OK, OK, OK, OK]),
            (
                "zone affinity is satisfied by a pod on another node of the zone",
                vec![db().build()],
                affinity(incoming(), vec![term(&[("app", "db")], ZONE)]),
                [OK, OK, AFF, AFF, AFF],
            ),
            (
                "hostname affinity: only the node that runs the pod",
                vec![db().build()],
                affinity(incoming(), vec![term(&[("app", "db")], HOST)]),
                [OK, AFF, AFF, AFF, AFF],
            ),
            (
                "the pod's anti-affinity blocks the whole zone, not a node without the zone label",
                vec![web_on_b2().build()],
                anti(incoming(), vec![term(&[("app", "web")], ZONE)]),
                [OK, OK, ANTI, ANTI, OK],
            ),
            (
                "hostname anti-affinity blocks one node",
                vec![web_on_b2().build()],
                anti(incoming(), vec![term(&[("app", "web")], HOST)]),
                [OK, OK, OK, ANTI, OK],
            ),
            (
                "anti-affinity to pods that run nowhere",
                vec![web_on_b2().build()],
                anti(incoming(), vec![term(&[("app", "cache")], ZONE)]),
                [OK, OK, OK, OK, OK],
            ),
            (
                "an existing pod's anti-affinity blocks its zone for the pods it selects",
                vec![anti(placed("guard", "a2", &[]), vec![term(&[("app", "web")], ZONE)])],
                web_incoming().build(),
                [EXIST, EXIST, OK, OK, OK],
            ),
            (
                "an existing pod's anti-affinity that does not select the pod",
                vec![anti(placed("guard", "a2", &[]), vec![term(&[("app", "db")], ZONE)])],
                web_incoming().build(),
                [OK, OK, OK, OK, OK],
            ),
            (
                "an existing pod's anti-affinity on a key its node does not have",
                vec![anti(placed("guard", "nozone", &[]), vec![term(&[("app", "web")], ZONE)])],
                web_incoming().build(),
                [OK, OK, OK, OK, OK],
            ),
            (
                "an existing pod's anti-affinity applies in its own namespace by default",
                vec![anti(placed("guard", "a2", &[]).namespace("team-a"), vec![term(&[("app", "web")], ZONE)])],
                web_incoming().build(),
                [OK, OK, OK, OK, OK],
            ),
            (
                "an existing pod's anti-affinity naming the pod's namespace",
                vec![anti(
                    placed("guard", "a2", &[]).namespace("team-a"),
                    vec![in_namespaces(term(&[("app", "web")], ZONE), &["default"])],
                )],
                web_incoming().build(),
                [EXIST, EXIST, OK, OK, OK],
            ),
            (
                "an existing pod's namespaceSelector matches the labels of the pod's Namespace",
                vec![anti(
                    placed("guard", "b1", &[]),
                    vec![with_namespace_selector(term(&[("app", "web")], ZONE), &[("team", "a")])],
                )],
                web_incoming().namespace("team-a").build(),
                [OK, OK, EXIST, EXIST, OK],
            ),
            (
                "an existing pod's namespaceSelector and a pod in another namespace",
                vec![anti(
                    placed("guard", "b1", &[]),
                    vec![with_namespace_selector(term(&[("app", "web")], ZONE), &[("team", "a")])],
                )],
                web_incoming().namespace("team-b").build(),
                [OK, OK, OK, OK, OK],
            ),
            (
                "the first pod of a self-affine group may go to any node with the topology key",
                vec![],
                affinity(PodBuilder::new("p").label("app", "db"), vec![term(&[("app", "db")], ZONE)]),
                [OK, OK, OK, OK, AFF],
            ),
            (
                "no first-pod exception for a pod that does not match its own terms",
                vec![],
                affinity(incoming(), vec![term(&[("app", "db")], ZONE)]),
                [AFF, AFF, AFF, AFF, AFF],
            ),
            (
                "no first-pod exception once a matching pod runs somewhere",
                vec![placed("db", "b1", &[("app", "db")]).build()],
                affinity(PodBuilder::new("p").label("app", "db"), vec![term(&[("app", "db")], ZONE)]),
                [AFF, AFF, OK, OK, AFF],
            ),
            (
                "affinity to a listed namespace",
                vec![db().namespace("team-a").build()],
                affinity(incoming(), vec![in_namespaces(term(&[("app", "db")], ZONE), &["team-a"])]),
                [OK, OK, AFF, AFF, AFF],
            ),
            (
                "no namespaces means the pod's own namespace",
                vec![db().namespace("team-a").build()],
                affinity(incoming(), vec![term(&[("app", "db")], ZONE)]),
                [AFF, AFF, AFF, AFF, AFF],
            ),
            (
                "a namespaceSelector selects over the Namespace objects",
                vec![
                    db().namespace("team-a").build(),
                    placed("db", "b1", &[("app", "db")]).namespace("team-b").build(),
                ],
                affinity(incoming(), vec![with_namespace_selector(term(&[("app", "db")], ZONE), &[("team", "b")])]),
                [AFF, AFF, OK, OK, AFF],
            ),
            (
                "an empty namespaceSelector selects every namespace",
                vec![db().namespace("elsewhere").build()],
                affinity(incoming(), vec![with_namespace_selector(term(&[("app", "db")], ZONE), &[])]),
                [OK, OK, AFF, AFF, AFF],
            ),
            (
                "listed namespaces and the namespaceSelector add up",
                vec![
                    db().namespace("team-a").build(),
                    placed("db", "b1", &[("app", "db")]).namespace("team-b").build(),
                ],
                anti(
                    incoming(),
                    vec![with_namespace_selector(
                        in_namespaces(term(&[("app", "db")], HOST), &["team-a"]),
                        &[("team", "b")],
                    )],
                ),
                [ANTI, OK, ANTI, OK, OK],
            ),
            (
                "affinity terms are ANDed: one pod must match them all",
                vec![db().build(), placed("cache", "a2", &[("app", "cache")]).build()],
                affinity(incoming(), vec![term(&[("app", "db")], ZONE), term(&[("app", "cache")], ZONE)]),
                [AFF, AFF, AFF, AFF, AFF],
            ),
            (
                "affinity terms are ANDed: each term's domain must hold the pod",
                vec![placed("both", "a1", &[("app", "db"), ("tier", "cache")]).build()],
                affinity(incoming(), vec![term(&[("app", "db")], ZONE), term(&[("tier", "cache")], HOST)]),
                [OK, AFF, AFF, AFF, AFF],
            ),
            (
                "any anti-affinity term blocks",
                vec![db().build(), web_on_b2().build()],
                anti(incoming(), vec![term(&[("app", "db")], HOST), term(&[("app", "web")], ZONE)]),
                [ANTI, OK, ANTI, ANTI, OK],
            ),
            (
                "matchExpressions",
                vec![placed("cache", "b1", &[("app", "cache")]).build()],
                with_terms(
                    incoming().build(),
                    vec![expressions_term(vec![expression("app", "In", &["db", "cache"])], ZONE)],
                    vec![expressions_term(vec![expression("app", "Exists", &[])], HOST)],
                ),
                [AFF, AFF, ANTI, OK, AFF],
            ),
            (
                "a term without a labelSelector selects no pod",
                vec![db().build()],
                affinity(incoming(), vec![PodAffinityTerm { topology_key: ZONE.to_string(), ..Default::default() }]),
                [AFF, AFF, AFF, AFF, AFF],
            ),
            (
                "existing pods' anti-affinity is checked first, then the pod's affinity, then its anti-affinity",
                vec![
                    db().build(),
                    web_on_b2().build(),
                    anti(placed("guard", "b1", &[]), vec![term(&[("app", "web")], ZONE)]),
                ],
                with_terms(
                    web_incoming().build(),
                    vec![term(&[("app", "db")], HOST)],
                    vec![term(&[("app", "web")], HOST)],
                ),
                // b1 and b2 fail all three; the guard's zone decides.
                [OK, AFF, EXIST, EXIST, AFF],
            ),
            (
                "existing pods' anti-affinity is reported before the pod's own",
                vec![web_on_b2().build(), anti(placed("guard", "b1", &[]), vec![term(&[("app", "web")], ZONE)])],
                anti(web_incoming(), vec![term(&[("app", "web")], HOST)]),
                [OK, OK, EXIST, EXIST, OK],
            ),
            (
                "the pod's affinity is reported before its anti-affinity",
                vec![web_on_b2().build()],
                with_terms(
                    web_incoming().build(),
                    vec![term(&[("app", "db")], ZONE)],
                    vec![term(&[("app", "web")], ZONE)],
                ),
                [AFF, AFF, AFF, AFF, AFF],
            ),
            (
                "an anti-affinity selector that does not convert selects nothing",
                vec![web_on_b2().build()],
                anti(
                    incoming(),
                    vec![expressions_term(vec![expression("app", "NotIn", &["invalid value: ___@#$%^"])], ZONE)],
                ),
                [OK, OK, OK, OK, OK],
            ),
        ];
        for (name, pods, pod, want) in cases {
            let snapshot = cluster(pods);
            assert_eq!(verdicts(&snapshot, pod), want, "{name}");
        }
    }

    /// upstream: TestInterPodAffinity (1.12-1.14 predicates_test.go), node1 = machine1 with
    /// region=r1, zone=z11; reasons as `InterPodAffinityMatches` lists them. Cases taken whole:
    /// "A pod that has no required pod affinity scheduling rules can schedule onto a node with no
    /// existing pods", "satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the
    /// existing pod", "satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity
    /// symmetry with the existing pod", "pod matches its own Label in PodAffinity and that matches
    /// the existing pod Labels", the two "verify that PodAntiAffinity from existing pod is respected
    /// when pod has no AntiAffinity constraints" cases, and "PodAntiAffinity symmetry check" a1, a2
    /// and b1. b1 fails both the pod's anti-affinity and an existing pod's: the existing pod's is
    /// the one reported (1.20+ reports the pod's own).
    #[test]
    fn upstream_inter_pod_affinity() {
        let service = || ("service", "securityscan");
        let security = || ("security", "S1");
        let scan_in = |key: &str| expressions_term(vec![expression("service", "In", &["securityscan", "value2"])], key);
        let scan_not_in =
            |key: &str| expressions_term(vec![expression("service", "NotIn", &["securityscan", "value2"])], key);
        let exists = |label: &str| expressions_term(vec![expression(label, "Exists", &[])], "zone");
        let exists_in = |label: &str, key: &str| expressions_term(vec![expression(label, "Exists", &[])], key);
        let on_machine1 = |labels: &[(&str, &str)]| placed("existing", "machine1", labels);
        let pod = |labels: &[(&str, &str)]| labels.iter().fold(PodBuilder::new("p"), |b, (k, v)| b.label(k, v));
        let (nm, aff, anti_r, exist) = (
            ERR_POD_AFFINITY_NOT_MATCH,
            ERR_AFFINITY_RULES_NOT_MATCH,
            ERR_ANTI_AFFINITY_RULES_NOT_MATCH,
            ERR_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
        );
        // (name, existing pods, incoming pod, reasons on machine1)
        let cases: Vec<(&str, Vec<Pod>, Pod, Vec<Reason>)> = vec![
            (
                "A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
                vec![],
                PodBuilder::new("p").build(),
                vec![],
            ),
            (
                "satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
                vec![on_machine1(&[service()]).build()],
                with_terms(pod(&[security()]).build(), vec![scan_in("region")], vec![scan_in("zone")]),
                vec![nm.clone(), anti_r.clone()],
            ),
            (
                "satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the existing pod",
                vec![anti(on_machine1(&[service()]), vec![scan_in("zone")])],
                with_terms(
                    pod(&[service()]).build(),
                    vec![scan_in("region")],
                    vec![expressions_term(vec![expression("service", "In", &["antivirusscan", "value2"])], "node")],
                ),
                vec![nm.clone(), exist.clone()],
            ),
            (
                "pod matches its own Label in PodAffinity and that matches the existing pod Labels",
                // The existing pod runs on machine2, which the test's node lister does not know.
                vec![placed("existing", "machine2", &[service()]).build()],
                affinity(pod(&[service()]), vec![scan_not_in("region")]),
                vec![nm.clone(), aff.clone()],
            ),
            (
                "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. doesn't satisfy PodAntiAffinity symmetry with the existing pod",
                vec![anti(on_machine1(&[service()]), vec![scan_in("zone")])],
                pod(&[service()]).build(),
                vec![nm.clone(), exist.clone()],
            ),
            (
                "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. satisfy PodAntiAffinity symmetry with the existing pod",
                vec![anti(on_machine1(&[service()]), vec![scan_not_in("zone")])],
                pod(&[service()]).build(),
                vec![],
            ),
            (
                "PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on AffinityTerms",
                vec![anti(on_machine1(&[security()]), vec![exists("security")])],
                anti(pod(&[service()]), vec![exists_in("service", "region"), exists_in("security", "region")]),
                vec![nm.clone(), anti_r.clone()],
            ),
            (
                "PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on AffinityTerms",
                vec![anti(on_machine1(&[service()]), vec![exists("service"), exists("security")])],
                anti(pod(&[security()]), vec![exists("security")]),
                vec![nm.clone(), exist.clone()],
            ),
            (
                "PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on AffinityTerms",
                vec![anti(on_machine1(&[("def", ""), ("xyz", "")]), vec![exists("abc"), exists("def")])],
                anti(pod(&[("abc", ""), ("xyz", "")]), vec![exists("abc"), exists("def")]),
                vec![nm.clone(), exist.clone()],
            ),
        ];
        for (name, pods, incoming, want) in cases {
            let node1 = NodeBuilder::new("machine1").label("region", "r1").label("zone", "z11").build();
            let snapshot = Snapshot::build([node1], pods);
            let ctx = context(&snapshot, incoming);
            let mut got = Vec::new();
            Predicate::check(
                &MatchInterPodAffinity,
                &ctx.pod,
                &ctx.state,
                &snapshot.node_info("machine1").unwrap(),
                &mut got,
            );
            assert_eq!(got, want, "{name}");
            let unresolvable = got.iter().any(|r| !r.is_resolvable());
            assert_eq!(unresolvable, want.contains(&aff), "{name}: only the pod's affinity is unresolvable");
        }
    }

    /// Found by the oracle comparison (issue 25, seed 3916; upstream
    /// `interpodaffinity/filtering.go`, `getIncomingAffinityAntiAffinityCounts` records each term's
    /// topology pair on its own): a pod matching every affinity term counts in the domain of each
    /// term whose key its node has, even when the node lacks another term's key. So the group has
    /// started, and the first-pod exception no longer lets the pod go anywhere.
    #[test]
    fn a_matching_pod_counts_under_every_term_whose_key_its_node_has() {
        let db = PodBuilder::new("db").label("app", "db").node("nozone").build();
        let snapshot = cluster(vec![db]);
        // Selectors without a `key=value` pair: every placed pod is a candidate.
        let terms = vec![
            expressions_term(vec![expression("app", "Exists", &[])], ZONE),
            expressions_term(vec![expression("app", "Exists", &[])], HOST),
        ];
        let pod = affinity(PodBuilder::new("p").label("app", "db"), terms);
        let ctx = context(&snapshot, pod);
        for n in ["a1", "b1", "nozone"] {
            assert_eq!(reason_on(&ctx, &snapshot.node_info(n).unwrap()), AFF, "{n}");
        }
    }

    #[test]
    fn a_missing_state_is_an_error_not_a_pass() {
        let node = NodeBuilder::new("n").info();
        let pod = PodContext::new(affinity(PodBuilder::new("p"), vec![term(&[("app", "db")], ZONE)]));
        let mut reasons = Vec::new();
        let got = crate::framework::AnyPredicate::check(&MatchInterPodAffinity, &pod, None, &node, &mut reasons);
        assert_eq!(got, Err(crate::framework::MissingState { predicate: "MatchInterPodAffinity".into() }));
        // Another predicate's state is no better.
        assert!(crate::framework::AnyPredicate::check(&MatchInterPodAffinity, &pod, Some(&()), &node, &mut reasons)
            .is_err());
        assert!(reasons.is_empty());
        // Prepared over the one node (no db anywhere, the pod not a db itself): the affinity fails.
        assert_eq!(crate::predicates::reasons_of(&MatchInterPodAffinity, pod.pod.clone(), &node).len(), 2);
        let ctx = Ctx { pod: PodContext::new(PodBuilder::new("p").build()), state: State::default() };
        assert_eq!(reason_on(&ctx, &node), None);
    }

    fn nominated(pod: Pod) -> Arc<PodInfo> {
        Arc::new(PodInfo::new(pod))
    }

    #[test]
    fn added_pods_count_in_their_nodes_domains() {
        let snapshot = cluster(vec![]);
        let node = |n: &str| snapshot.node_info(n).unwrap();
        let on = |state: &State, pod: &Pod, n: &str| {
            reason_on(&Ctx { pod: PodContext::new(pod.clone()), state: state.clone() }, &node(n))
        };
        let ctx = |pod: &Pod| PodContext::new(pod.clone());
        let db = nominated(PodBuilder::new("db").label("app", "db").nominated("a1").build());

        // The pod's affinity: satisfied in the zone of the node the nominated pod is added on.
        let pod = affinity(PodBuilder::new("p"), vec![term(&[("app", "db")], ZONE)]);
        let state = context(&snapshot, pod.clone()).state;
        let mut added = state.clone();
        added.add_pod(&ctx(&pod), &db, &node("a1"));
        assert_eq!(on(&state, &pod, "a2"), AFF);
        assert_eq!(on(&added, &pod, "a2"), OK);
        assert_eq!(on(&added, &pod, "b1"), AFF);

        // The pod's anti-affinity: the nominated pod's zone is blocked.
        let pod = anti(PodBuilder::new("p"), vec![term(&[("app", "db")], ZONE)]);
        let mut added = context(&snapshot, pod.clone()).state;
        added.add_pod(&ctx(&pod), &db, &node("a1"));
        assert_eq!(on(&added, &pod, "a2"), ANTI);
        assert_eq!(on(&added, &pod, "b1"), OK);

        // The nominated pod's anti-affinity to the incoming pod, with the pod's Namespace labels.
        let guard = nominated(anti(
            PodBuilder::new("guard").namespace("team-b").nominated("b1"),
            vec![with_namespace_selector(term(&[("app", "web")], ZONE), &[("team", "a")])],
        ));
        let pod = PodBuilder::new("p").namespace("team-a").label("app", "web").build();
        let mut added = context(&snapshot, pod.clone()).state;
        added.add_pod(&ctx(&pod), &guard, &node("b1"));
        assert_eq!(on(&added, &pod, "b2"), EXIST);
        assert_eq!(on(&added, &pod, "a1"), OK);
    }

    /// Removing placed pods from the state gives the verdicts of a state computed without them
    /// (upstream's `RemovePod`, used by preemption to take the victims away).
    #[test]
    fn removed_pods_leave_their_domains() {
        let db = || placed("db", "a1", &[("app", "db")]).build();
        let db2 = || placed("db2", "b1", &[("app", "db")]).build();
        let guard = || anti(placed("guard", "b1", &[]), vec![term(&[("app", "web")], ZONE)]);
        let web = || PodBuilder::new("p").label("app", "web");
        // (name, placed pods, incoming pod, names of the pods removed)
        let cases: Vec<(&str, Vec<Pod>, Pod, Vec<&str>)> = vec![
            ("anti-affinity cleared", vec![db(), db2()], anti(web(), vec![term(&[("app", "db")], ZONE)]), vec!["db"]),
            (
                "anti-affinity, both gone",
                vec![db(), db2()],
                anti(web(), vec![term(&[("app", "db")], ZONE)]),
                vec!["db", "db2"],
            ),
            (
                "affinity loses a domain",
                vec![db(), db2()],
                affinity(web(), vec![term(&[("app", "db")], ZONE)]),
                vec!["db2"],
            ),
            (
                "affinity loses every pod: the first-pod exception applies again",
                vec![db()],
                affinity(PodBuilder::new("p").label("app", "db"), vec![term(&[("app", "db")], ZONE)]),
                vec!["db"],
            ),
            ("existing anti-affinity gone with its pod", vec![guard(), db()], web().build(), vec!["guard"]),
            ("unrelated pod removed", vec![guard(), db()], web().build(), vec!["db"]),
        ];
        for (name, pods, pod, removed) in cases {
            let snapshot = cluster(pods.clone());
            let mut ctx = context(&snapshot, pod.clone());
            for p in pods.iter().filter(|p| removed.contains(&p.metadata.name.as_str())) {
                let node = snapshot.node_info(&p.spec.node_name).unwrap();
                ctx.state.remove_pod(&ctx.pod, &nominated(p.clone()), &node);
            }
            let got: Vec<_> = NODES.iter().map(|n| reason_on(&ctx, &snapshot.node_info(n).unwrap())).collect();
            let kept = pods.into_iter().filter(|p| !removed.contains(&p.metadata.name.as_str())).collect();
            assert_eq!(got, verdicts(&cluster(kept), pod), "{name}");
        }
    }

    fn plan() -> Plan {
        Plan::of_predicates(vec![Arc::new(MatchInterPodAffinity)])
    }

    fn aff_reasons() -> Vec<Reason> {
        vec![ERR_POD_AFFINITY_NOT_MATCH, ERR_AFFINITY_RULES_NOT_MATCH]
    }

    /// Pass 1 of the double pass sees the nominated pods; pass 2 must hold without them.
    #[test]
    fn double_pass_with_nominated_pods() {
        let snapshot = cluster(vec![
            PodBuilder::new("db").label("app", "db").nominated("a1").priority(100).build(),
            anti(PodBuilder::new("guard").nominated("b1").priority(100), vec![term(&[("app", "web")], ZONE)]),
        ]);
        let view = ClusterView::of(&snapshot);
        let fits = |pod: Pod, name: &str| {
            let ctx = Prepared::new(&plan(), pod, &view);
            let (node, nominated) = snapshot.candidate(name).unwrap();
            fits_on_node(&plan(), &ctx, &node, &nominated).unwrap()
        };

        // Affinity to the nominated db holds in pass 1 only: the db may never land.
        let needs_db = || affinity(PodBuilder::new("p"), vec![term(&[("app", "db")], ZONE)]);
        let ctx = Prepared::new(&plan(), needs_db(), &view);
        let (node, nominated) = snapshot.candidate("a2").unwrap();
        let (a1, on_a1) = snapshot.candidate("a1").unwrap();
        let pass_one = ctx.with_added_pods(&a1, &[&on_a1[0]]).unwrap();
        assert!(run_predicates(&plan(), &pass_one, &a1.with_added_pods(on_a1.iter())).unwrap().is_empty(), "pass 1");
        assert_eq!(
            run_predicates(&plan(), &pass_one, &node).unwrap(),
            vec![],
            "the added db counts for its whole zone"
        );
        assert_eq!(run_predicates(&plan(), &ctx, &a1).unwrap(), aff_reasons(), "pass 2");
        assert_eq!(fits(needs_db(), "a1"), aff_reasons());
        assert!(nominated.is_empty());

        // Without the first-pod exception spoiling it: a placed db elsewhere.
        let mut with_db = snapshot.clone();
        with_db.upsert_pod(PodBuilder::new("db-b").label("app", "db").node("b2").build());
        let view = ClusterView::of(&with_db);
        let ctx = Prepared::new(&plan(), needs_db(), &view);
        let (node, nominated) = with_db.candidate("a1").unwrap();
        assert_eq!(fits_on_node(&plan(), &ctx, &node, &nominated).unwrap(), aff_reasons());
        let (node, nominated) = with_db.candidate("b2").unwrap();
        assert!(fits_on_node(&plan(), &ctx, &node, &nominated).unwrap().is_empty());

        // The nominated guard's anti-affinity fails pass 1 on its node.
        let web = || PodBuilder::new("web").label("app", "web").build();
        assert_eq!(fits(web(), "b1"), vec![ERR_POD_AFFINITY_NOT_MATCH, ERR_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH]);
        assert!(fits(web(), "a1").is_empty());

        // A pod of higher priority than the nominated ones does not see them.
        let vip = || PodBuilder::new("web").label("app", "web").priority(1000).build();
        assert!(fits(vip(), "b1").is_empty());
    }

    /// Every node's reasons, in `zoned_nodes` order.
    fn all_reasons(snapshot: &Snapshot, pod: &PodContext, state: &State) -> Vec<Vec<Reason>> {
        reasons_on_zoned_nodes(&MatchInterPodAffinity, snapshot, pod, state)
    }

    /// The same state judging every node on its own: the path a node without the key takes.
    fn per_node(state: &State) -> State {
        State { domain_verdicts: None, ..state.clone() }
    }

    fn prepared(snapshot: &Snapshot, pod: &Pod) -> (PodContext, State) {
        let ctx = PodContext::new(pod.clone());
        let state = MatchInterPodAffinity.prepare(&ctx, &ClusterView::of(snapshot));
        (ctx, state)
    }

    /// The verdicts looked up per zone are the verdicts computed per node, on nodes with and
    /// without the zone, before and after nominated pods are added and placed pods removed; and a
    /// zone's verdict is computed once, not once per node.
    #[test]
    fn verdicts_per_domain_agree_with_verdicts_per_node() {
        let db = || placed("db", "a1", &[("app", "db")]).build();
        let web = || placed("web", "b2", &[("app", "web")]).build();
        let guard = || anti(placed("guard", "c3", &[]), vec![term(&[("app", "web")], ZONE)]);
        let host_guard = || anti(placed("host-guard", "c4", &[]), vec![term(&[("app", "web")], HOST)]);
        let incoming = || PodBuilder::new("p");
        let web_incoming = || PodBuilder::new("p").label("app", "web");
        // (name, placed pods, incoming pod, tabled per zone)
        let cases: Vec<(&str, Vec<Pod>, Pod, bool)> = vec![
            ("zone affinity", vec![db(), web()], affinity(incoming(), vec![term(&[("app", "db")], ZONE)]), true),
            ("zone anti-affinity", vec![db(), web()], anti(incoming(), vec![term(&[("app", "web")], ZONE)]), true),
            ("an existing pod's zone anti-affinity", vec![db(), guard()], web_incoming().build(), true),
            (
                "the first pod of its group may go to any node with the zone",
                vec![db(), web()],
                affinity(PodBuilder::new("p").label("app", "new"), vec![term(&[("app", "new")], ZONE)]),
                true,
            ),
            (
                "all three, one key",
                vec![db(), web(), guard()],
                with_terms(
                    web_incoming().build(),
                    vec![term(&[("app", "db")], ZONE)],
                    vec![term(&[("app", "cache")], ZONE)],
                ),
                true,
            ),
            (
                "zone affinity and hostname anti-affinity: two keys, judged per node",
                vec![db(), web()],
                with_terms(incoming().build(), vec![term(&[("app", "db")], ZONE)], vec![term(&[("app", "web")], HOST)]),
                false,
            ),
            (
                "an existing pod's hostname anti-affinity beside zone affinity",
                vec![db(), host_guard()],
                affinity(web_incoming(), vec![term(&[("app", "db")], ZONE)]),
                false,
            ),
            (
                "hostname affinity: not tabled",
                vec![db()],
                affinity(incoming(), vec![term(&[("app", "db")], HOST)]),
                false,
            ),
            ("no terms: nothing to table", vec![db(), web()], incoming().build(), false),
        ];
        // Pods the nominated-pod pass may add, and where.
        let nominees = [
            (placed("db2", "b1", &[("app", "db")]).build(), "b1"),
            (placed("web2", "a4", &[("app", "web")]).build(), "a4"),
            (anti(placed("guard2", "a2", &[]), vec![term(&[("app", "web")], ZONE)]), "a2"),
            (placed("db3", "bare1", &[("app", "db")]).build(), "bare1"),
        ];
        for (name, pods, pod, tabled) in cases {
            let snapshot = Snapshot::build(zoned_nodes(), pods.clone());
            VERDICTS_COMPUTED.with(|c| c.set(0));
            let (ctx, state) = prepared(&snapshot, &pod);
            let at_prepare = VERDICTS_COMPUTED.with(|c| c.get());
            assert_eq!(state.domain_verdicts.is_some(), tabled, "{name}");
            let got = all_reasons(&snapshot, &ctx, &state);
            let on_nodes = VERDICTS_COMPUTED.with(|c| c.get()) - at_prepare;
            if tabled {
                assert!(at_prepare <= 4, "{name}: at most the 3 zones and the rest, got {at_prepare}");
                assert_eq!(on_nodes, 2, "{name}: only the two nodes without a zone are judged per node");
            } else {
                assert_eq!((at_prepare, on_nodes), (0, 14), "{name}: every node judged on its own");
            }
            assert_eq!(got, all_reasons(&snapshot, &ctx, &per_node(&state)), "{name}");

            for (nominee, on) in &nominees {
                // Added: the same as if the nominee ran there, and the unchanged state unchanged.
                let mut added = state.clone();
                added.add_pod(&ctx, &nominated(nominee.clone()), &snapshot.node_info(on).unwrap());
                assert!(added.domain_verdicts.is_none(), "{name}: a changed state is judged per node");
                let with_nominee = Snapshot::build(zoned_nodes(), [pods.clone(), vec![nominee.clone()]].concat());
                let (_, fresh) = prepared(&with_nominee, &pod);
                let expected = all_reasons(&with_nominee, &ctx, &fresh);
                assert_eq!(all_reasons(&snapshot, &ctx, &added), expected, "{name}: {} added", nominee.metadata.name);
                assert_eq!(all_reasons(&snapshot, &ctx, &state), got, "{name}: the pass without nominees");
            }
            for (i, victim) in pods.iter().enumerate() {
                let mut removed = state.clone();
                removed.remove_pod(
                    &ctx,
                    &nominated(victim.clone()),
                    &snapshot.node_info(&victim.spec.node_name).unwrap(),
                );
                let mut rest = pods.clone();
                rest.remove(i);
                let without = Snapshot::build(zoned_nodes(), rest);
                let (_, fresh) = prepared(&without, &pod);
                assert_eq!(
                    all_reasons(&snapshot, &ctx, &removed),
                    all_reasons(&without, &ctx, &fresh),
                    "{name}: {} removed",
                    victim.metadata.name
                );
            }
        }
    }

    /// The table's verdicts for a hand-checked case: zone a has the db, so a's nodes pass, b and c
    /// fail the affinity, and a node without a zone fails it too.
    #[test]
    fn zone_affinity_verdicts_by_hand() {
        let snapshot = Snapshot::build(zoned_nodes(), vec![placed("db", "a1", &[("app", "db")]).build()]);
        let (ctx, state) = prepared(&snapshot, &affinity(PodBuilder::new("p"), vec![term(&[("app", "db")], ZONE)]));
        assert!(state.domain_verdicts.is_some());
        let fail = vec![ERR_POD_AFFINITY_NOT_MATCH, ERR_AFFINITY_RULES_NOT_MATCH];
        let expected: Vec<Vec<Reason>> =
            [vec![vec![]; 4], vec![fail.clone(); 4], vec![fail.clone(); 4], vec![fail.clone(); 2]].concat();
        assert_eq!(all_reasons(&snapshot, &ctx, &state), expected);
    }
}
