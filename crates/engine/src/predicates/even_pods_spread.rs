//! EvenPodsSpread: the pod's `topologySpreadConstraints` with `whenUnsatisfiable: DoNotSchedule`,
//! with the semantics of today's PodTopologySpread filter (kube-scheduler's
//! `pkg/scheduler/framework/plugins/podtopologyspread`, `filtering.go` and `common.go`).
//!
//! Once per request ([`State::compute`]) the domains are counted: a node is eligible
//! for a constraint when it has the topology keys of *all* the constraints and passes the
//! constraint's node inclusion policies (`nodeAffinityPolicy`, default `Honor`: the pod's
//! nodeSelector and required node affinity; `nodeTaintsPolicy`, default `Ignore`: when `Honor`,
//! every `NoSchedule`/`NoExecute` taint must be tolerated). The pods of the incoming pod's
//! namespace that match the constraint's selector (`labelSelector`, narrowed by `matchLabelKeys`)
//! and are not terminating (`deletionTimestamp` set: upstream bypasses them) are counted per
//! topology value (domain) over the eligible nodes, and the global minimum kept.
//! When no inclusion policy can leave a node out and every node is eligible, the domains come from
//! the model's node label counts and only the selected pods are visited; otherwise every node of
//! the cluster is walked.
//!
//! Per node, constraint by constraint in order: a node without the constraint's topology key fails
//! unresolvably; otherwise `count in the node's domain + (1 if the pod matches its own selector) -
//! global minimum > maxSkew` fails (resolvable). The global minimum is 0 while there are fewer
//! eligible domains than `minDomains` (default 1).
//!
//! When every constraint has the same topology key, other than the hostname, the verdict depends
//! only on the node's value of that key: it is computed once per domain at prepare time
//! ([`DomainVerdicts`]) and looked up per node. A node without the key, and the states the
//! nominated-pod pass and preemption change, are judged per node.

use crate::hashing::HashMap;
use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Affinity;

use crate::cluster::objects::Pod;
use crate::cluster::{NodeInfo, PodInfo};
use crate::framework::PodContext;
use crate::framework::{ArgumentError, PredicateArgs};
use crate::framework::{Cause, ReasonKind};
use crate::framework::{ClusterView, DomainVerdicts};
use crate::framework::{Failures, Predicate, PredicateState, Reason};
use crate::plugin_helpers::node_affinity::matches_node_selector;
use crate::plugin_helpers::tolerations::{tolerates_node, TaintEffects};
use crate::plugin_helpers::topology_spread::SpreadConstraint;

/// The registry name.
pub const NAME: &str = "EvenPodsSpread";

/// Builds it (it takes no argument).
pub fn build(_args: &PredicateArgs<'_>) -> Result<Arc<dyn crate::framework::AnyPredicate>, ArgumentError> {
    Ok(Arc::new(EvenPodsSpread))
}

pub const ERR_TOPOLOGY_SPREAD_CONSTRAINTS_NOT_MATCH: Reason = Reason::of(
    Cause::TopologySpreadSkew,
    ReasonKind::Resolvable,
    "node(s) didn't match pod topology spread constraints",
);

pub const ERR_TOPOLOGY_SPREAD_MISSING_LABEL: Reason = Reason::of(
    Cause::TopologySpreadMissingLabel,
    ReasonKind::Unresolvable,
    "node(s) didn't match pod topology spread constraints (missing required label)",
);

const DO_NOT_SCHEDULE: &str = "DoNotSchedule";

/// The global minimum of a constraint without any eligible domain: upstream's `math.MaxInt32`.
const NO_DOMAIN_MIN: i64 = i32::MAX as i64;

/// What does not change once computed: the constraints and what the inclusion policies read of
/// the incoming pod. Shared by the copies the nominated-pod pass makes.
#[derive(Debug)]
struct Shared {
    constraints: Vec<SpreadConstraint>,
    /// The incoming pod reduced to its nodeSelector, node affinity and tolerations, so
    /// [`State::add_pod`] (which gets only the `Pod`) judges nodes exactly as `compute` does.
    node_filter: PodContext,
    any_honors_affinity: bool,
    any_honors_taints: bool,
}

impl Shared {
    fn new(constraints: Vec<SpreadConstraint>, pod: &Pod) -> Self {
        let mut lean = Pod::default();
        lean.spec.node_selector = pod.spec.node_selector.clone();
        lean.spec.affinity = pod
            .spec
            .affinity
            .as_ref()
            .map(|a| Affinity { node_affinity: a.node_affinity.clone(), ..Affinity::default() });
        lean.spec.tolerations = pod.spec.tolerations.clone();
        Shared {
            any_honors_affinity: constraints.iter().any(|c| c.honor_node_affinity),
            any_honors_taints: constraints.iter().any(|c| c.honor_node_taints),
            constraints,
            node_filter: PodContext::new(lean),
        }
    }

    /// Whether the node has the topology keys of every constraint (upstream's
    /// `nodeLabelsMatchSpreadConstraints`): nodes lacking one count for no constraint.
    fn has_all_keys(&self, node: &NodeInfo) -> bool {
        let labels = &node.node().metadata.labels;
        self.constraints.iter().all(|c| labels.contains_key(&c.topology_key))
    }

    /// What the node inclusion policies say of a node.
    fn inclusion(&self, node: &NodeInfo) -> Inclusion {
        Inclusion {
            affinity: self.any_honors_affinity && matches_node_selector(&self.node_filter, node),
            taints: self.any_honors_taints && tolerates_node(&self.node_filter.pod, node, TaintEffects::DoNotSchedule),
        }
    }
}

/// A node against the pod's node affinity and taint tolerations (each only computed when some
/// constraint honors it).
#[derive(Debug, Clone, Copy)]
struct Inclusion {
    affinity: bool,
    taints: bool,
}

impl Inclusion {
    /// Upstream's `matchNodeInclusionPolicies`.
    fn includes(self, c: &SpreadConstraint) -> bool {
        (!c.honor_node_affinity || self.affinity) && (!c.honor_node_taints || self.taints)
    }
}

/// The matching pods per topology value of one constraint, over its eligible nodes.
#[derive(Debug, Clone, PartialEq)]
struct Domains {
    counts: HashMap<String, i64>,
    /// The smallest count; [`NO_DOMAIN_MIN`] without domains.
    min: i64,
}

impl Default for Domains {
    fn default() -> Self {
        Domains { counts: HashMap::default(), min: NO_DOMAIN_MIN }
    }
}

impl Domains {
    fn add(&mut self, value: &str, n: i64) {
        match self.counts.get_mut(value) {
            Some(count) => *count += n,
            None => {
                self.counts.insert(value.to_string(), n);
            }
        }
    }

    fn recompute_min(&mut self) {
        self.min = self.counts.values().copied().min().unwrap_or(NO_DOMAIN_MIN);
    }

    /// One more matching pod in a domain, keeping the minimum exact.
    fn increment(&mut self, value: &str) {
        match self.counts.get_mut(value) {
            Some(count) => {
                let was_min = *count == self.min;
                *count += 1;
                if was_min {
                    self.recompute_min();
                }
            }
            None => {
                self.counts.insert(value.to_string(), 1);
                self.min = self.min.min(1);
            }
        }
    }

    /// One matching pod fewer in a domain (never below zero), keeping the minimum exact.
    fn decrement(&mut self, value: &str) {
        if let Some(count) = self.counts.get_mut(value) {
            *count = (*count - 1).max(0);
            self.min = self.min.min(*count);
        }
    }

    /// The global minimum the skew is measured from: 0 while there are fewer eligible domains
    /// than `minDomains` (upstream's `minMatchNum`).
    fn global_min(&self, min_domains: i64) -> i64 {
        if (self.counts.len() as i64) < min_domains {
            0
        } else {
            self.min
        }
    }

    fn count(&self, value: &str) -> i64 {
        self.counts.get(value).copied().unwrap_or(0)
    }
}

/// What the predicate computes once per request.
#[derive(Debug, Clone, Default)]
pub struct State {
    /// `None` when the pod has no `DoNotSchedule` constraint: it then fits everywhere.
    shared: Option<Arc<Shared>>,
    /// Per constraint, in the order of `shared.constraints`.
    domains: Vec<Domains>,
    /// The verdict per value of the constraints' one topology key, for the domains as `compute`
    /// left them; `None` when the constraints have several keys, or the hostname, or the domains
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
    pub fn compute(pod: &PodContext, view: &ClusterView<'_>) -> Self {
        let pod = &pod.pod;
        let constraints = SpreadConstraint::of(pod, DO_NOT_SCHEDULE);
        if constraints.is_empty() {
            return State::default();
        }
        let shared = Shared::new(constraints, pod);
        let namespace = &pod.metadata.namespace;
        let domains = from_indexes(&shared, namespace, view).unwrap_or_else(|| from_walk(&shared, namespace, view));
        let mut state = State { shared: Some(Arc::new(shared)), domains, domain_verdicts: None };
        state.domain_verdicts = state.tabulate().map(Arc::new);
        state
    }

    /// The verdict per domain, when every constraint has the same topology key.
    fn tabulate(&self) -> Option<DomainVerdicts> {
        let shared = self.shared.as_ref()?;
        let key = &shared.constraints.first()?.topology_key;
        if !shared.constraints.iter().all(|c| c.topology_key == *key) {
            return None;
        }
        let values = self.domains.iter().flat_map(|d| d.counts.keys().map(String::as_str));
        DomainVerdicts::build(key, values, |labels| self.violation_on(labels))
    }

    fn update_with_pod(&mut self, incoming: &Pod, pod: &Pod, node: &NodeInfo, change: fn(&mut Domains, &str)) {
        let State { shared, domains, domain_verdicts } = self;
        let Some(shared) = shared.as_ref() else { return };
        // The table was computed from the domains as they were.
        *domain_verdicts = None;
        if pod.metadata.namespace != incoming.metadata.namespace || !shared.has_all_keys(node) {
            return;
        }
        let inclusion = shared.inclusion(node);
        let labels = &node.node().metadata.labels;
        for (c, d) in shared.constraints.iter().zip(domains.iter_mut()) {
            // A terminating pod was never counted: adding it counts nothing, removing it uncounts
            // nothing.
            if !counts_for(c, &incoming.metadata.namespace, pod) || !inclusion.includes(c) {
                continue;
            }
            if let Some(value) = labels.get(&c.topology_key) {
                change(d, value);
            }
        }
    }

    /// Why the pod may not go to the node, if it may not: the first constraint that fails decides.
    fn violation(&self, node: &NodeInfo) -> Option<Reason> {
        match self.domain_verdicts.as_deref().and_then(|table| table.of_node(node)) {
            Some(tabled) => tabled.cloned(),
            None => self.violation_on(&node.node().metadata.labels),
        }
    }

    /// [`State::violation`] of a node with these labels, computed.
    fn violation_on(&self, labels: &BTreeMap<String, String>) -> Option<Reason> {
        #[cfg(test)]
        VERDICTS_COMPUTED.with(|c| c.set(c.get() + 1));
        let shared = self.shared.as_ref()?;
        for (c, d) in shared.constraints.iter().zip(&self.domains) {
            let Some(value) = labels.get(&c.topology_key) else {
                return Some(ERR_TOPOLOGY_SPREAD_MISSING_LABEL);
            };
            let skew = d.count(value) + c.self_match - d.global_min(c.min_domains);
            if skew > c.max_skew {
                return Some(ERR_TOPOLOGY_SPREAD_CONSTRAINTS_NOT_MATCH);
            }
        }
        None
    }
}

/// Whether a placed pod counts for a constraint (see [`SpreadConstraint::counts`]): the walk, the
/// indexes and the nominated-pod updates all ask this one question.
fn counts_for(c: &SpreadConstraint, namespace: &str, p: &Pod) -> bool {
    c.counts(namespace, p)
}

/// The domains of every constraint, walking every node of the view: each node's eligibility under
/// the inclusion policies, its domain, and the matching pods on it.
fn from_walk(shared: &Shared, namespace: &str, view: &ClusterView<'_>) -> Vec<Domains> {
    let mut domains = vec![Domains::default(); shared.constraints.len()];
    // Matching pods per node name, from the label index when the selector requires a label
    // (only pods carrying it can match): the pods of one app, not every pod of the cluster.
    // `None`: the selector requires no `key=value`, so each node's pods are walked.
    let indexed: Vec<Option<HashMap<&str, i64>>> = shared
        .constraints
        .iter()
        .map(|c| {
            let (key, value) = c.selector.equalities().next()?;
            let mut per_node = HashMap::default();
            for p in view.snapshot.pods_labelled(key, value).filter(|p| counts_for(c, namespace, &p.pod)) {
                *per_node.entry(p.pod.spec.node_name.as_str()).or_insert(0) += 1;
            }
            Some(per_node)
        })
        .collect();
    for node in view.nodes() {
        if !shared.has_all_keys(&node) {
            continue;
        }
        let inclusion = shared.inclusion(&node);
        let labels = &node.node().metadata.labels;
        for ((c, d), indexed) in shared.constraints.iter().zip(domains.iter_mut()).zip(&indexed) {
            let Some(value) = labels.get(&c.topology_key) else { continue };
            if !inclusion.includes(c) {
                continue;
            }
            let matching = match indexed {
                Some(per_node) => per_node.get(node.name()).copied().unwrap_or(0),
                None => node.pods.pods().iter().filter(|p| counts_for(c, namespace, &p.pod)).count() as i64,
            };
            d.add(value, matching);
        }
    }
    for d in &mut domains {
        d.recompute_min();
    }
    domains
}

/// The domains of every constraint from the model's indexes, visiting only the matching pods,
/// when that gives what [`from_walk`] gives: the view is the model's own (no request nodes), no
/// inclusion policy can leave a node out (no honored taints; no nodeSelector or required node
/// affinity when affinity is honored), every node is eligible (the constraints share one key, or
/// every node carries every key), and every selector requires a `key=value`. `None` otherwise.
fn from_indexes(shared: &Shared, namespace: &str, view: &ClusterView<'_>) -> Option<Vec<Domains>> {
    let counts = view.node_counts()?;
    let filter = &shared.node_filter;
    let node_constraints = !filter.pod.spec.node_selector.is_empty() || filter.required_node_affinity.is_some();
    if shared.any_honors_taints || (shared.any_honors_affinity && node_constraints) {
        return None;
    }
    let first_key = &shared.constraints.first()?.topology_key;
    let one_key = shared.constraints.iter().all(|c| c.topology_key == *first_key);
    let mut domains = Vec::with_capacity(shared.constraints.len());
    for c in &shared.constraints {
        let label = counts.label(&c.topology_key);
        if !one_key && label.map_or(0, |l| l.nodes()) != view.node_count() {
            return None;
        }
        let (key, value) = c.selector.equalities().next()?;
        let mut d = Domains::default();
        for v in label.into_iter().flat_map(|l| l.values()) {
            d.add(v, 0);
        }
        for p in view.snapshot.pods_labelled(key, value).filter(|p| counts_for(c, namespace, &p.pod)) {
            let domain = view.node_labels(&p.pod.spec.node_name).and_then(|labels| labels.get(&c.topology_key));
            if let Some(v) = domain {
                d.add(v, 1);
            }
        }
        d.recompute_min();
        domains.push(d);
    }
    Some(domains)
}

impl PredicateState for State {
    /// As if `added` ran on `node` (the nominated-pod pass): upstream's `updateWithPod` with a
    /// delta of 1.
    fn add_pod(&mut self, pod: &PodContext, added: &PodInfo, node: &NodeInfo) {
        self.update_with_pod(&pod.pod, &added.pod, node, Domains::increment);
    }

    /// As if `removed` no longer ran on `node` (a preemption victim): upstream's `updateWithPod`
    /// with a delta of -1. The domain stays, with one pod fewer.
    fn remove_pod(&mut self, pod: &PodContext, removed: &PodInfo, node: &NodeInfo) {
        self.update_with_pod(&pod.pod, &removed.pod, node, Domains::decrement);
    }
}

#[derive(Debug)]
pub struct EvenPodsSpread;

impl Predicate for EvenPodsSpread {
    type State = State;

    fn name(&self) -> &str {
        NAME
    }

    /// A node without a topology key fails unresolvably, a skew too large resolvably.
    fn failures(&self) -> Failures {
        Failures::MaybeResolvable
    }

    fn prepare(&self, pod: &PodContext, view: &ClusterView<'_>) -> State {
        State::compute(pod, view)
    }

    fn check(&self, _pod: &PodContext, state: &State, node: &NodeInfo, reasons: &mut Vec<Reason>) {
        if let Some(reason) = state.violation(node) {
            reasons.push(reason);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::objects::Node;
    use crate::cluster::Snapshot;
    use crate::engine::fits::fits_on_node;
    use crate::engine::{Plan, Prepared};
    use crate::testing::zoned::{reasons_on_zoned_nodes, zoned_nodes};
    use crate::testing::{requirement as req, term, NodeBuilder, PodBuilder};
    use k8s_openapi::api::core::v1::TopologySpreadConstraint;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector as K8sSelector;
    use std::collections::BTreeMap;

    const ZONE: &str = "topology.kubernetes.io/zone";
    const HOST: &str = "kubernetes.io/hostname";
    const SKEW: Reason = ERR_TOPOLOGY_SPREAD_CONSTRAINTS_NOT_MATCH;
    const MISSING: Reason = ERR_TOPOLOGY_SPREAD_MISSING_LABEL;

    /// A DoNotSchedule constraint on `key` selecting `app=<app>`.
    fn hard(max_skew: i32, key: &str, app: &str) -> TopologySpreadConstraint {
        TopologySpreadConstraint {
            max_skew,
            topology_key: key.to_string(),
            when_unsatisfiable: DO_NOT_SCHEDULE.to_string(),
            label_selector: Some(K8sSelector {
                match_labels: Some(BTreeMap::from([("app".to_string(), app.to_string())])),
                match_expressions: None,
            }),
            ..TopologySpreadConstraint::default()
        }
    }

    fn with(
        mut c: TopologySpreadConstraint,
        change: impl FnOnce(&mut TopologySpreadConstraint),
    ) -> TopologySpreadConstraint {
        change(&mut c);
        c
    }

    fn zoned(name: &str, zone: &str) -> NodeBuilder {
        NodeBuilder::new(name).label(ZONE, zone)
    }

    fn running(name: &str, node: &str, app: &str) -> Pod {
        PodBuilder::new(name).node(node).label("app", app).build()
    }

    /// `n` pods `app=<app>` on a node.
    fn many(prefix: &str, n: usize, node: &str, app: &str) -> Vec<Pod> {
        (0..n).map(|i| running(&format!("{prefix}-{i}"), node, app)).collect()
    }

    fn plan() -> Plan {
        Plan::of_predicates(vec![Arc::new(EvenPodsSpread)])
    }

    /// The reasons of every node, by name, as the engine finds them (state computed per request,
    /// nominated pods in pass 1).
    fn verdicts(nodes: Vec<Node>, pods: Vec<Pod>, incoming: Pod) -> Vec<(String, Vec<Reason>)> {
        let snapshot = Snapshot::build(nodes, pods);
        let plan = plan();
        assert_indexes_count_as_the_walk(&snapshot, &incoming);
        let ctx = Prepared::new(&plan, incoming, &ClusterView::of(&snapshot));
        snapshot
            .node_names()
            .into_iter()
            .map(|name| {
                let node = snapshot.node_info(name).unwrap();
                (name.to_string(), fits_on_node(&plan, &ctx, &node, snapshot.nominated_on(name)).unwrap())
            })
            .collect()
    }

    /// Whether the domains come from the model's indexes for this pod (`Some`) and, when they do,
    /// that they are the walk's: every table case below cross-checks the two.
    fn assert_indexes_count_as_the_walk(snapshot: &Snapshot, incoming: &Pod) -> Option<()> {
        let constraints = SpreadConstraint::of(incoming, DO_NOT_SCHEDULE);
        if constraints.is_empty() {
            return None;
        }
        let shared = Shared::new(constraints, incoming);
        let view = ClusterView::of(snapshot);
        let namespace = &incoming.metadata.namespace;
        let indexed = from_indexes(&shared, namespace, &view)?;
        assert_eq!(indexed, from_walk(&shared, namespace, &view), "the indexes count as the walk does");
        Some(())
    }

    #[test]
    fn indexes_stand_in_for_the_walk_only_where_they_count_the_same() {
        let web = |cs| pod_with(&[("app", "web")], cs);
        // Every node has a hostname and a rack label; n3 has no zone.
        let cluster = Snapshot::build(
            vec![
                zoned("n1", "a").label("rack", "r1").build(),
                zoned("n2", "b").label("rack", "r1").build(),
                NodeBuilder::new("n3").label("rack", "r2").build(),
            ],
            vec![running("w1", "n1", "web"), running("w2", "n3", "web"), running("w3", "gone", "web")],
        );
        let honor_taints = |c| with(c, |c| c.node_taints_policy = Some("Honor".into()));
        let ignore_affinity = |c| with(c, |c| c.node_affinity_policy = Some("Ignore".into()));
        let mut selective = web(vec![hard(1, ZONE, "web")]);
        selective.spec.node_selector = BTreeMap::from([(ZONE.to_string(), "a".to_string())]);
        let mut selective_ignored = web(vec![ignore_affinity(hard(1, ZONE, "web"))]);
        selective_ignored.spec.node_selector = selective.spec.node_selector.clone();
        let cases = [
            ("one key", web(vec![hard(1, ZONE, "web")]), true),
            ("one key in two constraints", web(vec![hard(1, ZONE, "web"), hard(2, ZONE, "web")]), true),
            ("a key some node lacks, beside another key", web(vec![hard(1, ZONE, "web"), hard(1, HOST, "web")]), false),
            ("two keys every node has", web(vec![hard(1, HOST, "web"), hard(1, "rack", "web")]), true),
            ("honored taints are judged per node", web(vec![honor_taints(hard(1, ZONE, "web"))]), false),
            ("an honored nodeSelector is judged per node", selective, false),
            ("an ignored nodeSelector leaves every node in", selective_ignored, true),
            (
                "a selector without key=value has no index",
                web(vec![with(hard(1, ZONE, "web"), |c| c.label_selector = Some(K8sSelector::default()))]),
                false,
            ),
        ];
        for (name, pod, indexed) in cases {
            assert_eq!(assert_indexes_count_as_the_walk(&cluster, &pod).is_some(), indexed, "{name}");
        }
        let request_nodes = vec![{
            let (node, nominated) = cluster.candidate_for(zoned("n1", "c").build());
            crate::engine::Candidate::Known(node, nominated)
        }];
        let view = ClusterView::with_request_nodes(&cluster, &request_nodes);
        let shared = Shared::new(SpreadConstraint::of(&web(vec![hard(1, ZONE, "web")]), DO_NOT_SCHEDULE), &web(vec![]));
        assert!(from_indexes(&shared, "default", &view).is_none(), "request nodes may relabel a node");
    }

    fn want(expected: &[(&str, Option<Reason>)]) -> Vec<(String, Vec<Reason>)> {
        expected.iter().map(|(n, r)| (n.to_string(), r.iter().cloned().collect())).collect()
    }

    fn pod_with(labels: &[(&str, &str)], constraints: Vec<TopologySpreadConstraint>) -> Pod {
        let mut b = PodBuilder::new("incoming");
        for (k, v) in labels {
            b = b.label(k, v);
        }
        let mut pod = b.build();
        pod.spec.topology_spread_constraints = constraints;
        pod
    }

    struct Case {
        name: &'static str,
        nodes: Vec<Node>,
        pods: Vec<Pod>,
        incoming: Pod,
        want: Vec<(String, Vec<Reason>)>,
    }

    fn run(cases: Vec<Case>) {
        for c in cases {
            assert_eq!(verdicts(c.nodes, c.pods, c.incoming), c.want, "{}", c.name);
        }
    }

    fn three_zones() -> Vec<Node> {
        vec![zoned("n1", "a").build(), zoned("n2", "a").build(), zoned("n3", "b").build()]
    }

    /// upstream: TestSingleConstraint (podtopologyspread filtering_test.go, 1.18+), case
    /// "terminating Pods should be excluded": node-a Success, node-b Unschedulable. Its selector
    /// (`foo` Exists) has no `key=value`, so the walk counts; the same case with `app=web` goes
    /// through the label indexes, which `verdicts` checks against the walk.
    #[test]
    fn terminating_pods_are_not_counted() {
        let nodes = || vec![NodeBuilder::new("node-a").build(), NodeBuilder::new("node-b").build()];
        let exists_foo = with(hard(1, HOST, "unused"), |c| {
            c.label_selector = Some(K8sSelector {
                match_labels: None,
                match_expressions: Some(vec![
                    k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement {
                        key: "foo".to_string(),
                        operator: "Exists".to_string(),
                        values: None,
                    },
                ]),
            })
        });
        let foo = |name: &str, node: &str| PodBuilder::new(name).node(node).label("foo", "");
        run(vec![
            Case {
                name: "upstream: terminating Pods should be excluded",
                nodes: nodes(),
                pods: vec![foo("p-a", "node-a").terminating().build(), foo("p-b", "node-b").build()],
                incoming: pod_with(&[("foo", "")], vec![exists_foo.clone()]),
                want: want(&[("node-a", None), ("node-b", Some(SKEW))]),
            },
            Case {
                name: "the same through the label indexes",
                nodes: nodes(),
                pods: vec![
                    PodBuilder::new("p-a").node("node-a").label("app", "web").terminating().build(),
                    running("p-b", "node-b", "web"),
                ],
                incoming: pod_with(&[("app", "web")], vec![hard(1, HOST, "web")]),
                want: want(&[("node-a", None), ("node-b", Some(SKEW))]),
            },
            Case {
                name: "a terminating pod does not count for the zone either",
                nodes: three_zones(),
                pods: vec![
                    PodBuilder::new("w1").node("n3").label("app", "web").terminating().build(),
                    running("w2", "n1", "web"),
                ],
                incoming: pod_with(&[("app", "web")], vec![hard(1, ZONE, "web")]),
                // Zone a 1, zone b 0 (its only pod is terminating): a's skew is 1 + 1 - 0 = 2.
                want: want(&[("n1", Some(SKEW)), ("n2", Some(SKEW)), ("n3", None)]),
            },
        ]);
        let indexed = Snapshot::build(
            nodes(),
            vec![
                PodBuilder::new("p-a").node("node-a").label("app", "web").terminating().build(),
                running("p-b", "node-b", "web"),
            ],
        );
        let pod = pod_with(&[("app", "web")], vec![hard(1, HOST, "web")]);
        assert!(assert_indexes_count_as_the_walk(&indexed, &pod).is_some(), "the indexed path was taken");
    }

    /// A selector that `LabelSelectorAsSelector` cannot convert selects nothing: no pod counts,
    /// not even the incoming one. Were `NotIn ["not valid!"]` read as a string, every web would count
    /// and zone a (2 webs) would refuse the pod.
    #[test]
    fn an_unparsable_selector_counts_nothing() {
        let bad_value = with(hard(1, ZONE, "web"), |c| {
            c.label_selector = Some(K8sSelector {
                match_labels: None,
                match_expressions: Some(vec![
                    k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement {
                        key: "app".to_string(),
                        operator: "NotIn".to_string(),
                        values: Some(vec!["not valid!".to_string()]),
                    },
                ]),
            })
        });
        run(vec![Case {
            name: "invalid NotIn value",
            nodes: three_zones(),
            pods: many("w", 2, "n1", "web"),
            incoming: pod_with(&[("app", "web")], vec![bad_value]),
            want: want(&[("n1", None), ("n2", None), ("n3", None)]),
        }]);
    }

    /// A terminating nominated pod adds nothing in pass 1, and removing a terminating victim takes
    /// nothing away: it was never counted.
    #[test]
    fn terminating_pods_neither_add_nor_remove() {
        let snapshot = Snapshot::build(
            vec![NodeBuilder::new("node-a").build(), NodeBuilder::new("node-b").build()],
            vec![running("p-b", "node-b", "web")],
        );
        let pod = pod_with(&[("app", "web")], vec![hard(1, HOST, "web")]);
        let ctx = PodContext::new(pod.clone());
        let state = EvenPodsSpread.prepare(&ctx, &ClusterView::of(&snapshot));
        let gone =
            Arc::new(PodInfo::new(PodBuilder::new("x").node("node-b").label("app", "web").terminating().build()));
        let node_b = snapshot.node_info("node-b").unwrap();
        let mut added = state.clone();
        added.add_pod(&ctx, &gone, &node_b);
        assert_eq!(added.domains, state.domains);
        let mut removed = state.clone();
        removed.remove_pod(&ctx, &gone, &node_b);
        assert_eq!(removed.domains, state.domains);
    }

    #[test]
    fn skew_across_zones_and_hosts() {
        let web = |cs| pod_with(&[("app", "web")], cs);
        run(vec![
            Case {
                name: "zone a has 2, zone b none: only zone b keeps the skew at 1",
                nodes: three_zones(),
                pods: vec![running("w1", "n1", "web"), running("w2", "n2", "web")],
                incoming: web(vec![hard(1, ZONE, "web")]),
                want: want(&[("n1", Some(SKEW)), ("n2", Some(SKEW)), ("n3", None)]),
            },
            Case {
                name: "maxSkew 2 allows zone a",
                nodes: three_zones(),
                pods: vec![running("w1", "n1", "web"), running("w2", "n2", "web"), running("w3", "n3", "web")],
                incoming: web(vec![hard(2, ZONE, "web")]),
                want: want(&[("n1", None), ("n2", None), ("n3", None)]),
            },
            Case {
                name: "pods of other apps do not count",
                nodes: three_zones(),
                pods: many("db", 5, "n1", "db"),
                incoming: web(vec![hard(1, ZONE, "web")]),
                want: want(&[("n1", None), ("n2", None), ("n3", None)]),
            },
            Case {
                name: "pods of other namespaces do not count",
                nodes: three_zones(),
                pods: vec![PodBuilder::new("other").namespace("other").node("n1").label("app", "web").build()],
                incoming: web(vec![hard(1, ZONE, "web")]),
                want: want(&[("n1", None), ("n2", None), ("n3", None)]),
            },
            Case {
                name: "hostname spread: the busy host is refused",
                nodes: three_zones(),
                pods: vec![running("w1", "n1", "web")],
                incoming: web(vec![hard(1, HOST, "web")]),
                want: want(&[("n1", Some(SKEW)), ("n2", None), ("n3", None)]),
            },
            Case {
                name: "a pod that does not match its own selector adds nothing to the skew",
                nodes: three_zones(),
                pods: vec![running("w1", "n1", "web")],
                incoming: pod_with(&[("app", "api")], vec![hard(1, HOST, "web")]),
                want: want(&[("n1", None), ("n2", None), ("n3", None)]),
            },
            Case {
                name: "nil labelSelector matches nothing",
                nodes: three_zones(),
                pods: many("w", 3, "n1", "web"),
                incoming: web(vec![with(hard(1, HOST, "web"), |c| c.label_selector = None)]),
                want: want(&[("n1", None), ("n2", None), ("n3", None)]),
            },
            Case {
                name: "empty labelSelector matches every pod of the namespace",
                nodes: three_zones(),
                pods: many("d", 1, "n1", "db"),
                incoming: web(vec![with(hard(1, HOST, "web"), |c| c.label_selector = Some(K8sSelector::default()))]),
                want: want(&[("n1", Some(SKEW)), ("n2", None), ("n3", None)]),
            },
            Case {
                name: "no pods anywhere: every node fits",
                nodes: three_zones(),
                pods: vec![],
                incoming: web(vec![hard(1, ZONE, "web")]),
                want: want(&[("n1", None), ("n2", None), ("n3", None)]),
            },
        ]);
    }

    #[test]
    fn nodes_lacking_the_key() {
        let web = |cs| pod_with(&[("app", "web")], cs);
        run(vec![Case {
            name: "a node without the key fails unresolvably and its pods count nowhere",
            nodes: vec![zoned("n1", "a").build(), zoned("n2", "b").build(), NodeBuilder::new("n3").build()],
            pods: [vec![running("a1", "n1", "web"), running("b1", "n2", "web")], many("x", 5, "n3", "web")].concat(),
            incoming: web(vec![hard(1, ZONE, "web")]),
            want: want(&[("n1", None), ("n2", None), ("n3", Some(MISSING))]),
        }]);
    }

    #[test]
    fn min_domains() {
        let web = |cs| pod_with(&[("app", "web")], cs);
        let nodes = || vec![zoned("n1", "a").build(), zoned("n2", "b").build()];
        let pods = || vec![running("a1", "n1", "web"), running("b1", "n2", "web")];
        let min = |n| with(hard(1, ZONE, "web"), |c| c.min_domains = Some(n));
        run(vec![
            Case {
                name: "2 domains, minDomains 2: the minimum is 1",
                nodes: nodes(),
                pods: pods(),
                incoming: web(vec![min(2)]),
                want: want(&[("n1", None), ("n2", None)]),
            },
            Case {
                name: "2 domains, minDomains 3: the minimum is taken as 0",
                nodes: nodes(),
                pods: pods(),
                incoming: web(vec![min(3)]),
                want: want(&[("n1", Some(SKEW)), ("n2", Some(SKEW))]),
            },
            Case {
                name: "a domain with no pods still counts as a domain",
                nodes: vec![zoned("n1", "a").build(), zoned("n2", "b").build(), zoned("n3", "c").build()],
                pods: vec![running("a1", "n1", "web")],
                incoming: web(vec![min(3)]),
                want: want(&[("n1", Some(SKEW)), ("n2", None), ("n3", None)]),
            },
        ]);
    }

    #[test]
    fn node_affinity_policy() {
        // Zone a (no disk label) is empty; zones b and c have two pods each. The pod wants ssd.
        let nodes = || {
            vec![
                zoned("n1", "a").build(),
                zoned("n2", "b").label("disk", "ssd").build(),
                zoned("n3", "c").label("disk", "ssd").build(),
            ]
        };
        let pods = || [many("b", 2, "n2", "web"), many("c", 2, "n3", "web")].concat();
        let incoming = |policy: Option<&str>, by_affinity: bool| {
            let c = with(hard(1, ZONE, "web"), |c| c.node_affinity_policy = policy.map(String::from));
            let mut b = PodBuilder::new("incoming").label("app", "web");
            b = if by_affinity {
                b.node_affinity_term(term(vec![req("disk", "In", &["ssd"])]))
            } else {
                b.node_selector("disk", "ssd")
            };
            let mut pod = b.build();
            pod.spec.topology_spread_constraints = vec![c];
            pod
        };
        let honored = want(&[("n1", None), ("n2", None), ("n3", None)]);
        let ignored = want(&[("n1", None), ("n2", Some(SKEW)), ("n3", Some(SKEW))]);
        run(vec![
            Case {
                name: "Honor by default: zone a is not eligible, the minimum is 2",
                nodes: nodes(),
                pods: pods(),
                incoming: incoming(None, false),
                want: honored.clone(),
            },
            Case {
                name: "Honor with required node affinity",
                nodes: nodes(),
                pods: pods(),
                incoming: incoming(Some("Honor"), true),
                want: honored,
            },
            Case {
                name: "Ignore: zone a counts, the minimum is 0",
                nodes: nodes(),
                pods: pods(),
                incoming: incoming(Some("Ignore"), false),
                want: ignored,
            },
        ]);
    }

    #[test]
    fn node_taints_policy() {
        // Zone a's only node is tainted and empty; zone b has one pod.
        let nodes =
            |effect: &str| vec![zoned("n1", "a").taint("dedicated", "gpu", effect).build(), zoned("n2", "b").build()];
        let pods = || vec![running("b1", "n2", "web")];
        let incoming = |policy: Option<&str>, tolerate: bool| {
            let mut b = PodBuilder::new("incoming").label("app", "web");
            if tolerate {
                b = b.toleration("dedicated", "Exists", "", "");
            }
            let mut pod = b.build();
            pod.spec.topology_spread_constraints =
                vec![with(hard(1, ZONE, "web"), |c| c.node_taints_policy = policy.map(String::from))];
            pod
        };
        let tainted_excluded = want(&[("n1", None), ("n2", None)]);
        let tainted_counted = want(&[("n1", None), ("n2", Some(SKEW))]);
        run(vec![
            Case {
                name: "Ignore by default: the tainted empty zone holds the minimum at 0",
                nodes: nodes("NoSchedule"),
                pods: pods(),
                incoming: incoming(None, false),
                want: tainted_counted.clone(),
            },
            Case {
                name: "Honor: the untolerated NoSchedule node is not eligible",
                nodes: nodes("NoSchedule"),
                pods: pods(),
                incoming: incoming(Some("Honor"), false),
                want: tainted_excluded.clone(),
            },
            Case {
                name: "Honor: NoExecute counts as well",
                nodes: nodes("NoExecute"),
                pods: pods(),
                incoming: incoming(Some("Honor"), false),
                want: tainted_excluded,
            },
            Case {
                name: "Honor: PreferNoSchedule does not exclude",
                nodes: nodes("PreferNoSchedule"),
                pods: pods(),
                incoming: incoming(Some("Honor"), false),
                want: tainted_counted.clone(),
            },
            Case {
                name: "Honor: a tolerated taint does not exclude",
                nodes: nodes("NoSchedule"),
                pods: pods(),
                incoming: incoming(Some("Honor"), true),
                want: tainted_counted,
            },
        ]);
    }

    #[test]
    fn match_label_keys() {
        let nodes = || vec![zoned("n1", "a").build(), zoned("n2", "b").build()];
        // Two pods of revision v1 in zone a.
        let pods = || {
            (0..2)
                .map(|i| PodBuilder::new(&format!("v1-{i}")).node("n1").label("app", "web").label("rev", "v1").build())
                .collect::<Vec<_>>()
        };
        let keyed = |keys: &[&str]| {
            with(hard(1, ZONE, "web"), |c| c.match_label_keys = Some(keys.iter().map(|k| k.to_string()).collect()))
        };
        run(vec![
            Case {
                name: "without matchLabelKeys every revision counts",
                nodes: nodes(),
                pods: pods(),
                incoming: pod_with(&[("app", "web"), ("rev", "v2")], vec![hard(1, ZONE, "web")]),
                want: want(&[("n1", Some(SKEW)), ("n2", None)]),
            },
            Case {
                name: "matchLabelKeys [rev]: only revision v2 counts",
                nodes: nodes(),
                pods: pods(),
                incoming: pod_with(&[("app", "web"), ("rev", "v2")], vec![keyed(&["rev"])]),
                want: want(&[("n1", None), ("n2", None)]),
            },
            Case {
                name: "matchLabelKeys [rev] on a pod of revision v1",
                nodes: nodes(),
                pods: pods(),
                incoming: pod_with(&[("app", "web"), ("rev", "v1")], vec![keyed(&["rev"])]),
                want: want(&[("n1", Some(SKEW)), ("n2", None)]),
            },
            Case {
                name: "a key the pod does not have adds nothing",
                nodes: nodes(),
                pods: pods(),
                incoming: pod_with(&[("app", "web")], vec![keyed(&["rev"])]),
                want: want(&[("n1", Some(SKEW)), ("n2", None)]),
            },
        ]);
    }

    #[test]
    fn schedule_anyway_is_ignored() {
        let soft = |key| with(hard(1, key, "web"), |c| c.when_unsatisfiable = "ScheduleAnyway".to_string());
        run(vec![
            Case {
                name: "a skewed ScheduleAnyway constraint filters nothing",
                nodes: three_zones(),
                pods: many("w", 4, "n1", "web"),
                incoming: pod_with(&[("app", "web")], vec![soft(ZONE)]),
                want: want(&[("n1", None), ("n2", None), ("n3", None)]),
            },
            Case {
                name: "nor does its missing key",
                nodes: vec![NodeBuilder::new("n1").build()],
                pods: vec![],
                incoming: pod_with(&[("app", "web")], vec![soft("rack")]),
                want: want(&[("n1", None)]),
            },
            Case {
                name: "beside a DoNotSchedule one, only the latter counts",
                nodes: three_zones(),
                pods: many("w", 4, "n1", "web"),
                incoming: pod_with(&[("app", "web")], vec![soft(ZONE), hard(1, HOST, "web")]),
                want: want(&[("n1", Some(SKEW)), ("n2", None), ("n3", None)]),
            },
        ]);
    }

    #[test]
    fn multiple_constraints() {
        let both = || vec![hard(2, ZONE, "web"), hard(1, HOST, "web")];
        run(vec![
            Case {
                name: "zone and host: each must hold",
                // Zones a=2 (n1:1, n2:1), b=1 (n3:1), c=0 (n4): zone skew fails a (2+1-0 > 2);
                // hosts: min 0 (n4), so n1, n2, n3 fail on the host constraint too.
                nodes: vec![
                    zoned("n1", "a").build(),
                    zoned("n2", "a").build(),
                    zoned("n3", "b").build(),
                    zoned("n4", "c").build(),
                ],
                pods: vec![running("w1", "n1", "web"), running("w2", "n2", "web"), running("w3", "n3", "web")],
                incoming: pod_with(&[("app", "web")], both()),
                want: want(&[("n1", Some(SKEW)), ("n2", Some(SKEW)), ("n3", Some(SKEW)), ("n4", None)]),
            },
            Case {
                name: "a node lacking the zone key counts for the host constraint neither",
                // Every zoned host has one pod: the host minimum stays 1 although n3 (no zone) is
                // empty, so n1 and n2 fit; n3 fails on its missing key.
                nodes: vec![zoned("n1", "a").build(), zoned("n2", "b").build(), NodeBuilder::new("n3").build()],
                pods: vec![running("w1", "n1", "web"), running("w2", "n2", "web")],
                incoming: pod_with(&[("app", "web")], both()),
                want: want(&[("n1", None), ("n2", None), ("n3", Some(MISSING))]),
            },
            Case {
                name: "no node has every key: nothing is counted and each node lacks a key",
                nodes: vec![zoned("n1", "a").build(), zoned("n2", "b").build()],
                pods: many("w", 2, "n1", "web"),
                incoming: pod_with(&[("app", "web")], vec![hard(1, ZONE, "web"), hard(1, "rack", "web")]),
                want: want(&[("n1", Some(MISSING)), ("n2", Some(MISSING))]),
            },
        ]);
    }

    #[test]
    fn constraints_are_checked_in_order() {
        // n2 has no rack, and its zone b holds the 3 pods of n3: it fails both constraints, and
        // the first one in the pod's list gives the reason.
        let nodes = || {
            vec![
                zoned("n1", "a").label("rack", "r1").build(),
                zoned("n2", "b").build(),
                zoned("n3", "b").label("rack", "r3").build(),
            ]
        };
        let zone_then_rack = vec![hard(1, ZONE, "web"), hard(5, "rack", "web")];
        let rack_then_zone = vec![hard(5, "rack", "web"), hard(1, ZONE, "web")];
        run(vec![
            Case {
                name: "zone first: the skew (resolvable)",
                nodes: nodes(),
                pods: many("w", 3, "n3", "web"),
                incoming: pod_with(&[("app", "web")], zone_then_rack),
                want: want(&[("n1", None), ("n2", Some(SKEW)), ("n3", Some(SKEW))]),
            },
            Case {
                name: "rack first: the missing label (unresolvable)",
                nodes: nodes(),
                pods: many("w", 3, "n3", "web"),
                incoming: pod_with(&[("app", "web")], rack_then_zone),
                want: want(&[("n1", None), ("n2", Some(MISSING)), ("n3", Some(SKEW))]),
            },
        ]);
    }

    #[test]
    fn nominated_pods_count_in_pass_one() {
        let nodes = || vec![zoned("n1", "a").build(), zoned("n2", "b").build()];
        let nominee = |app: &str, priority: i32| {
            PodBuilder::new("nominee").nominated("n1").priority(priority).label("app", app).build()
        };
        let incoming = || pod_with(&[("app", "web")], vec![hard(1, ZONE, "web")]);
        run(vec![
            Case {
                name: "a matching nominated pod of higher priority fills zone a",
                nodes: nodes(),
                pods: vec![nominee("web", 10)],
                incoming: incoming(),
                want: want(&[("n1", Some(SKEW)), ("n2", None)]),
            },
            Case {
                name: "a nominated pod of another app does not",
                nodes: nodes(),
                pods: vec![nominee("db", 10)],
                incoming: incoming(),
                want: want(&[("n1", None), ("n2", None)]),
            },
            Case {
                name: "a lower-priority nominated pod is not added",
                nodes: nodes(),
                pods: vec![nominee("web", -1)],
                incoming: incoming(),
                want: want(&[("n1", None), ("n2", None)]),
            },
        ]);
    }

    #[test]
    fn add_pod_updates_counts_and_minimum() {
        let snapshot = Snapshot::build(
            vec![zoned("n1", "a").build(), zoned("n2", "b").build(), NodeBuilder::new("n3").build()],
            vec![],
        );
        let ctx = PodContext::new(pod_with(&[("app", "web")], vec![hard(1, ZONE, "web")]));
        let mut state = State::compute(&ctx, &ClusterView::of(&snapshot));
        assert_eq!((state.domains[0].min, state.domains[0].counts.len()), (0, 2));
        let add = |state: &mut State, name: &str, node: &str, app: &str, ns: &str| {
            let pod = Arc::new(PodInfo::new(PodBuilder::new(name).namespace(ns).label("app", app).build()));
            state.add_pod(&ctx, &pod, &snapshot.node_info(node).unwrap());
        };
        add(&mut state, "w1", "n1", "web", "default");
        assert_eq!((state.domains[0].count("a"), state.domains[0].min), (1, 0));
        add(&mut state, "w2", "n2", "web", "default");
        assert_eq!((state.domains[0].count("b"), state.domains[0].min), (1, 1));
        add(&mut state, "d", "n1", "db", "default");
        add(&mut state, "o", "n1", "web", "other");
        add(&mut state, "x", "n3", "web", "default");
        assert_eq!(state.domains[0].counts, HashMap::from_iter([("a".to_string(), 1), ("b".to_string(), 1)]));
        assert_eq!(state.domains[0].min, 1);
        // Pass 1 state against the original: the original is untouched.
        let original = State::compute(&ctx, &ClusterView::of(&snapshot));
        assert_eq!(original.domains[0].min, 0);
    }

    #[test]
    fn remove_pod_updates_counts_and_minimum() {
        let pods = vec![
            PodBuilder::new("w1").label("app", "web").node("n1").build(),
            PodBuilder::new("w2").label("app", "web").node("n2").build(),
            PodBuilder::new("w3").label("app", "web").node("n2").build(),
            PodBuilder::new("o").namespace("other").label("app", "web").node("n1").build(),
        ];
        let snapshot = Snapshot::build(
            vec![zoned("n1", "a").build(), zoned("n2", "b").build(), NodeBuilder::new("n3").build()],
            pods.clone(),
        );
        let ctx = PodContext::new(pod_with(&[("app", "web")], vec![hard(1, ZONE, "web")]));
        let mut state = State::compute(&ctx, &ClusterView::of(&snapshot));
        assert_eq!((state.domains[0].count("a"), state.domains[0].count("b"), state.domains[0].min), (1, 2, 1));
        let remove = |state: &mut State, i: usize| {
            let pod = Arc::new(PodInfo::new(pods[i].clone()));
            state.remove_pod(&ctx, &pod, &snapshot.node_info(&pods[i].spec.node_name).unwrap());
        };
        remove(&mut state, 3);
        assert_eq!(state.domains[0].count("a"), 1, "another namespace's pod was never counted");
        remove(&mut state, 1);
        assert_eq!((state.domains[0].count("b"), state.domains[0].min), (1, 1));
        remove(&mut state, 0);
        assert_eq!((state.domains[0].count("a"), state.domains[0].min), (0, 0), "the domain stays, empty");
        assert_eq!(state.domains[0].counts.len(), 2);
    }

    #[test]
    fn add_pod_follows_the_inclusion_policies() {
        let snapshot =
            Snapshot::build(vec![zoned("n1", "a").build(), zoned("n2", "b").label("disk", "ssd").build()], vec![]);
        let mut pod = pod_with(&[("app", "web")], vec![hard(1, ZONE, "web")]);
        pod.spec.node_selector.insert("disk".to_string(), "ssd".to_string());
        let ctx = PodContext::new(pod);
        let mut state = State::compute(&ctx, &ClusterView::of(&snapshot));
        assert_eq!(state.domains[0].counts.len(), 1, "only zone b is eligible");
        let web = Arc::new(PodInfo::new(PodBuilder::new("w").label("app", "web").build()));
        state.add_pod(&ctx, &web, &snapshot.node_info("n1").unwrap());
        assert_eq!(state.domains[0].counts.len(), 1, "n1 fails the node affinity: not counted");
        state.add_pod(&ctx, &web, &snapshot.node_info("n2").unwrap());
        assert_eq!(state.domains[0].count("b"), 1);
    }

    #[test]
    fn without_constraints_every_node_fits_and_without_state_none_does() {
        let node = NodeBuilder::new("n").info();
        let pod = PodContext::new(pod_with(&[("app", "web")], vec![hard(1, ZONE, "web")]));
        let mut reasons = Vec::new();
        let missing = crate::framework::AnyPredicate::check(&EvenPodsSpread, &pod, None, &node, &mut reasons);
        assert_eq!(missing, Err(crate::framework::MissingState { predicate: "EvenPodsSpread".into() }));
        assert_eq!(crate::predicates::reasons_of(&EvenPodsSpread, pod.pod.clone(), &node), [MISSING]);
        let snapshot = Snapshot::build(vec![NodeBuilder::new("n").build()], vec![]);
        let ctx = PodContext::new(PodBuilder::new("p").build());
        let state = State::compute(&ctx, &ClusterView::of(&snapshot));
        assert!(state.shared.is_none());
        assert_eq!(state.violation(&node), None);
    }

    #[test]
    fn fitting_nodes_do_not_allocate_reasons() {
        let snapshot = Snapshot::build(three_zones(), many("w", 1, "n3", "web"));
        let ctx = PodContext::new(pod_with(&[("app", "web")], vec![hard(1, ZONE, "web"), hard(1, HOST, "web")]));
        let state = EvenPodsSpread.prepare(&ctx, &ClusterView::of(&snapshot));
        let mut reasons = Vec::new();
        Predicate::check(&EvenPodsSpread, &ctx, &state, &snapshot.node_info("n1").unwrap(), &mut reasons);
        assert!(reasons.is_empty());
        assert_eq!(reasons.capacity(), 0);
    }

    #[test]
    fn is_registered() {
        assert_eq!(
            crate::registry::predicate("EvenPodsSpread").map(|p| p.name().to_string()),
            Some("EvenPodsSpread".into())
        );
    }

    /// Every node's reasons, in `zoned_nodes` order.
    fn all_reasons(snapshot: &Snapshot, pod: &PodContext, state: &State) -> Vec<Vec<Reason>> {
        reasons_on_zoned_nodes(&EvenPodsSpread, snapshot, pod, state)
    }

    /// The same state judging every node on its own: the path a node without the key takes.
    fn per_node(state: &State) -> State {
        State { domain_verdicts: None, ..state.clone() }
    }

    fn prepared(snapshot: &Snapshot, pod: &Pod) -> (PodContext, State) {
        let ctx = PodContext::new(pod.clone());
        let state = EvenPodsSpread.prepare(&ctx, &ClusterView::of(snapshot));
        (ctx, state)
    }

    /// The verdicts looked up per zone are the verdicts computed per node, on nodes with and
    /// without the zone, before and after nominated pods are added and placed pods removed; and a
    /// zone's verdict is computed once, not once per node.
    #[test]
    fn verdicts_per_domain_agree_with_verdicts_per_node() {
        let pods = || [many("wa", 2, "a1", "web"), many("wb", 1, "b2", "web"), many("da", 1, "c3", "db")].concat();
        let web = |constraints| pod_with(&[("app", "web")], constraints);
        // (name, incoming pod, tabled per zone)
        let cases: Vec<(&str, Pod, bool)> = vec![
            ("one zone constraint", web(vec![hard(1, ZONE, "web")]), true),
            ("a wider skew", web(vec![hard(2, ZONE, "web")]), true),
            ("two constraints on the zone", web(vec![hard(1, ZONE, "db"), hard(2, ZONE, "web")]), true),
            ("minDomains above the zones", web(vec![with(hard(3, ZONE, "web"), |c| c.min_domains = Some(4))]), true),
            (
                "taints honored: the domains from the walk",
                web(vec![with(hard(1, ZONE, "web"), |c| c.node_taints_policy = Some("Honor".into()))]),
                true,
            ),
            ("zone and hostname: judged per node", web(vec![hard(1, ZONE, "web"), hard(1, HOST, "web")]), false),
            ("hostname: not tabled", web(vec![hard(1, HOST, "web")]), false),
            ("no constraint", web(vec![]), false),
        ];
        let nominees = [
            (running("w-new", "c1", "web"), "c1"),
            (running("w-a", "a3", "web"), "a3"),
            (running("d-b", "b4", "db"), "b4"),
            (running("w-bare", "bare2", "web"), "bare2"),
        ];
        for (name, pod, tabled) in cases {
            let snapshot = Snapshot::build(zoned_nodes(), pods());
            VERDICTS_COMPUTED.with(|c| c.set(0));
            let (ctx, state) = prepared(&snapshot, &pod);
            let at_prepare = VERDICTS_COMPUTED.with(|c| c.get());
            assert_eq!(state.domain_verdicts.is_some(), tabled, "{name}");
            let got = all_reasons(&snapshot, &ctx, &state);
            let on_nodes = VERDICTS_COMPUTED.with(|c| c.get()) - at_prepare;
            if tabled {
                assert_eq!(at_prepare, 4, "{name}: the 3 zones and the rest");
                assert_eq!(on_nodes, 2, "{name}: only the two nodes without a zone are judged per node");
            } else {
                assert_eq!((at_prepare, on_nodes), (0, 14), "{name}: every node judged on its own");
            }
            assert_eq!(got, all_reasons(&snapshot, &ctx, &per_node(&state)), "{name}");

            for (nominee, on) in &nominees {
                let mut added = state.clone();
                added.add_pod(&ctx, &PodInfo::new(nominee.clone()), &snapshot.node_info(on).unwrap());
                assert!(added.domain_verdicts.is_none(), "{name}: a changed state is judged per node");
                let with_nominee = Snapshot::build(zoned_nodes(), [pods(), vec![nominee.clone()]].concat());
                let (_, fresh) = prepared(&with_nominee, &pod);
                let expected = all_reasons(&with_nominee, &ctx, &fresh);
                assert_eq!(all_reasons(&snapshot, &ctx, &added), expected, "{name}: {} added", nominee.metadata.name);
                assert_eq!(all_reasons(&snapshot, &ctx, &state), got, "{name}: the pass without nominees");
            }
            for (i, victim) in pods().iter().enumerate() {
                let mut removed = state.clone();
                let node = snapshot.node_info(&victim.spec.node_name).unwrap();
                removed.remove_pod(&ctx, &PodInfo::new(victim.clone()), &node);
                let mut rest = pods();
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

    /// The table's verdicts for a hand-checked case: web runs twice in a, once in b, never in c,
    /// so with maxSkew 1 an incoming web pod (counting itself) fits only c; no zone: missing label.
    #[test]
    fn zone_spread_verdicts_by_hand() {
        let pods = [many("wa", 2, "a1", "web"), many("wb", 1, "b2", "web")].concat();
        let snapshot = Snapshot::build(zoned_nodes(), pods);
        let (ctx, state) = prepared(&snapshot, &pod_with(&[("app", "web")], vec![hard(1, ZONE, "web")]));
        assert!(state.domain_verdicts.is_some());
        let expected: Vec<Vec<Reason>> = [vec![vec![SKEW]; 8], vec![vec![]; 4], vec![vec![MISSING]; 2]].concat();
        assert_eq!(all_reasons(&snapshot, &ctx, &state), expected);
    }
}
