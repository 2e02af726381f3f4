//! SelectorSpreadPriority: spreads the pods of the Services, ReplicationControllers, ReplicaSets
//! and StatefulSets that select the pod over nodes and zones, as upstream's `SelectorSpread`
//! (kube-scheduler 1.17, `pkg/scheduler/algorithm/priorities/selector_spreading.go` with
//! `getSelector` in `metadata.go`; the counting rule is the one of 1.14-1.17).
//!
//! - The selector: every Service (`spec.selector`), ReplicationController (`spec.selector`),
//!   ReplicaSet and StatefulSet (`spec.selector`, a LabelSelector) of the pod's namespace that
//!   selects the pod, ANDed: an existing pod counts when it matches all of them. Controllers with
//!   an empty selector select nothing, a Service with an empty one selects everything, and a pod
//!   without labels is selected by no controller (the listers' `GetPod...` rules). When the
//!   combined selector has no requirement at all (no Service or controller selects the pod, or
//!   only Services with an empty selector), no pod counts and every node scores 10.
//! - The count of a node is the number of assigned pods of the pod's namespace on it that the
//!   selector matches, pods being deleted left out (`countMatchingPods`).
//! - Scores are normalised over the candidate nodes, as upstream's reduce over the map results
//!   (`prepare` sums over the known candidates, `score` gives the final 0..=10 from them):
//!   `node = 10 * (maxCount - count) / maxCount` (10 when maxCount is 0); when some candidate has a
//!   zone (`GetZoneKey`: region and zone, each from the beta `failure-domain.beta.kubernetes.io/*`
//!   label, else the GA `topology.kubernetes.io/*` one), a node with a zone scores
//!   `node * (1 - 2/3) + 2/3 * zone` with `zone = 10 * (maxZoneCount - zoneCount) / maxZoneCount`
//!   (10 when maxZoneCount is 0), zone counts summed over the candidates of each zone; nodes
//!   without a zone keep the node score. Computed in f64 in upstream's order and truncated.
//!
//! ServiceSpreadingPriority is the same with only the Services (upstream registers it as
//! `NewSelectorSpreadPriority(serviceLister, EmptyControllerLister{}, ...)`).

use std::collections::BTreeMap;

use crate::hashing::HashMap;
use std::sync::Arc;

use crate::cluster::objects::Pod;
use crate::cluster::NodeInfo;
use crate::framework::candidate::known_nodes;
use crate::framework::ClusterView;
use crate::framework::{ArgumentError, Candidate, PodContext};
use crate::framework::{Priority, PriorityArgs, Scorer, MAX_PRIORITY};
use crate::labels::selectors::LabelSelector;
use crate::plugin_helpers::services::{pod_services, service_selector};
use crate::priorities::spreading::{PodMatcher, ZoneSums};

/// Upstream's `zoneWeighting`: 2/3 of the score from zone spreading, 1/3 from node spreading.
const ZONE_WEIGHTING: f64 = 2.0 / 3.0;

#[derive(Debug, Clone)]
pub struct SelectorSpread {
    /// Only Services' selectors count (ServiceSpreadingPriority).
    services_only: bool,
}

/// The registry name.
pub const NAME: &str = "SelectorSpreadPriority";

pub fn build(_args: &PriorityArgs<'_>) -> Result<Arc<dyn Priority>, ArgumentError> {
    Ok(Arc::new(SelectorSpread::all_controllers()))
}

impl SelectorSpread {
    /// SelectorSpreadPriority: Services, ReplicationControllers, ReplicaSets and StatefulSets.
    pub fn all_controllers() -> Self {
        SelectorSpread { services_only: false }
    }

    /// ServiceSpreadingPriority: Services only.
    pub fn services_only() -> Self {
        SelectorSpread { services_only: true }
    }

    /// The combined selector of what selects the pod (upstream's `getSelector`), `None` when it
    /// has no requirement.
    fn matcher(&self, pod: &Pod, view: &ClusterView<'_>) -> Option<PodMatcher> {
        let namespace = pod.metadata.namespace.as_str();
        let labels = &pod.metadata.labels;
        // Services and ReplicationControllers select by equality: merged into one label set.
        let mut merged: BTreeMap<String, String> = BTreeMap::new();
        for svc in pod_services(pod, view) {
            if let Some(selector) = service_selector(svc) {
                merged.extend(selector.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        }
        let mut others: Vec<LabelSelector> = Vec::new();
        // The controller listers find nothing for a pod without labels.
        if !self.services_only && !labels.is_empty() {
            for rc in view.snapshot.replication_controllers_in(namespace) {
                let Some(selector) = rc.spec.as_ref().and_then(|s| s.selector.as_ref()) else { continue };
                if !selector.is_empty() && LabelSelector::from_map(selector).matches(labels) {
                    merged.extend(selector.iter().map(|(k, v)| (k.clone(), v.clone())));
                }
            }
            let set_selectors = view
                .snapshot
                .replica_sets_in(namespace)
                .map(|rs| &rs.spec.selector)
                .chain(view.snapshot.stateful_sets_in(namespace).map(|ss| &ss.spec.selector));
            for selector in set_selectors {
                // An empty selector selects nothing here; an invalid one matches nothing.
                let compiled = LabelSelector::compile(selector);
                if !compiled.is_everything() && compiled.matches(labels) {
                    others.push(compiled);
                }
            }
        }
        let equality =
            merged.iter().next().map(|(k, v)| (k.clone(), v.clone())).or_else(|| {
                others.iter().flat_map(|s| s.equalities()).next().map(|(k, v)| (k.to_string(), v.to_string()))
            });
        let mut selectors = others;
        if !merged.is_empty() {
            selectors.insert(0, LabelSelector::from_map(&merged));
        }
        (!selectors.is_empty()).then(|| PodMatcher { namespace: namespace.to_string(), selectors, equality })
    }
}

impl Priority for SelectorSpread {
    fn name(&self) -> &str {
        if self.services_only {
            crate::priorities::service_spreading::NAME
        } else {
            NAME
        }
    }

    fn prepare(&self, pod: &PodContext, view: &ClusterView<'_>, candidates: &[Candidate]) -> Box<dyn Scorer> {
        let Some(matcher) = self.matcher(&pod.pod, view) else { return Box::new(NothingSelects) };
        let counts = matcher.count_by_node(view);
        // Upstream's reduce over the map results: the highest count and the per-zone sums of the
        // candidates.
        let mut max_by_node = 0;
        let mut by_zone = ZoneSums::default();
        for node in known_nodes(candidates) {
            let count = counts.get(node.name()).copied().unwrap_or(0);
            max_by_node = max_by_node.max(count);
            by_zone.add(node.state.zone_key(), count);
        }
        let max_by_zone = by_zone.max();
        Box::new(SpreadScorer { counts, max_by_node, by_zone, max_by_zone })
    }
}

/// No selector: no pod counts, every node scores `MaxPriority` (upstream's reduce with all
/// counts 0 gives 10 with or without zones).
struct NothingSelects;

impl Scorer for NothingSelects {
    fn score(&self, _pod: &PodContext, _node: &NodeInfo) -> i64 {
        MAX_PRIORITY
    }
}

struct SpreadScorer {
    /// Matching pods per node name.
    counts: HashMap<String, i64>,
    /// The highest count of a candidate.
    max_by_node: i64,
    /// The candidates' counts summed per zone; empty when no candidate has a zone.
    by_zone: ZoneSums,
    /// The highest of those sums.
    max_by_zone: i64,
}

impl Scorer for SpreadScorer {
    /// Upstream's `CalculateSpreadPriorityReduce` for one node, from what `prepare` summed over
    /// the candidates: already 0..=10.
    fn score(&self, _pod: &PodContext, node: &NodeInfo) -> i64 {
        let count = self.counts.get(node.name()).copied().unwrap_or(0);
        let max = MAX_PRIORITY as f64;
        let mut f = max;
        if self.max_by_node > 0 {
            f = max * ((self.max_by_node - count) as f64 / self.max_by_node as f64);
        }
        if !self.by_zone.is_empty() {
            if let Some(in_zone) = self.by_zone.of(node.state.zone_key()) {
                let mut zone = max;
                if self.max_by_zone > 0 {
                    zone = max * ((self.max_by_zone - in_zone) as f64 / self.max_by_zone as f64);
                }
                f = f * (1.0 - ZONE_WEIGHTING) + ZONE_WEIGHTING * zone;
            }
        }
        // Go's int(fScore): truncation; f is in 0..=10.
        f as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::{ClusterObject, Snapshot};
    use crate::priorities::spreading::test_objects::{
        replica_set, replication_controller, selector, service, stateful_set,
    };
    use crate::priorities::spreading::{BETA_REGION, BETA_ZONE, GA_ZONE};
    use crate::testing::{NodeBuilder, PodBuilder};

    /// `count` pods on `node` with these labels, in namespace `ns`.
    fn pods(prefix: &str, node: &str, ns: &str, labels: &[(&str, &str)], count: usize) -> Vec<Pod> {
        (0..count)
            .map(|i| {
                let mut b = PodBuilder::new(&format!("{prefix}-{node}-{i}")).namespace(ns).node(node);
                for (k, v) in labels {
                    b = b.label(k, v);
                }
                b.build()
            })
            .collect()
    }

    fn node(name: &str, labels: &[(&str, &str)]) -> crate::cluster::objects::Node {
        NodeBuilder::new(name).labels(labels).build()
    }

    /// The normalised scores of the candidates, in order.
    fn scores(
        priority: &SelectorSpread,
        snapshot: &Snapshot,
        pod_labels: &[(&str, &str)],
        candidates: &[&str],
    ) -> Vec<i64> {
        let pod = pod_labels.iter().fold(PodBuilder::new("incoming"), |b, (k, v)| b.label(k, v)).build();
        crate::priorities::testing::scores(priority, &PodContext::new(pod), snapshot, candidates)
    }

    fn snapshot(
        nodes: Vec<crate::cluster::objects::Node>,
        pods: Vec<Vec<Pod>>,
        objects: Vec<ClusterObject>,
    ) -> Snapshot {
        let mut s = Snapshot::build(nodes, pods.into_iter().flatten());
        for o in objects {
            s.upsert(o);
        }
        s
    }

    const WEB: &[(&str, &str)] = &[("app", "web")];

    #[test]
    fn spreads_over_nodes_without_zones() {
        let s = snapshot(
            vec![node("n1", &[]), node("n2", &[]), node("n3", &[])],
            vec![
                pods("web", "n1", "default", WEB, 2),
                pods("web", "n2", "default", WEB, 1),
                pods("db", "n2", "default", &[("app", "db")], 4),
                pods("other-ns", "n3", "other", WEB, 5),
            ],
            vec![service("default", "web", Some(WEB)), service("other", "web", Some(WEB))],
        );
        // counts 2, 1, 0 (app=db and the other namespace's pods do not count); max 2:
        // n1 10*(2-2)/2 = 0, n2 10*(2-1)/2 = 5, n3 10*(2-0)/2 = 10.
        assert_eq!(scores(&SelectorSpread::all_controllers(), &s, WEB, &["n1", "n2", "n3"]), [0, 5, 10]);
    }

    #[test]
    fn a_pod_counts_only_when_every_selector_matches_it() {
        let fe = &[("app", "web"), ("tier", "fe")];
        let s = snapshot(
            vec![node("n1", &[]), node("n2", &[]), node("n3", &[])],
            vec![pods("web", "n1", "default", WEB, 2), pods("fe", "n2", "default", fe, 1)],
            vec![
                service("default", "web", Some(WEB)),
                replica_set("default", "fe", selector(&[("tier", "fe")], &[("app", "In", &["web", "api"])])),
                // Selects nothing: a nil Service selector, an empty ReplicaSet selector, a
                // ReplicaSet of another namespace.
                service("default", "headless", None),
                replica_set("default", "empty", selector(&[], &[])),
                replica_set("other", "narrow", selector(&[("tier", "fe"), ("track", "canary")], &[])),
            ],
        );
        // The pod is selected by the Service (app=web) and the ReplicaSet (tier=fe, app in
        // (web, api)). n1's pods match only the Service: 0; n2's pod both: 1; max 1:
        // n1 10*(1-0)/1 = 10, n2 10*(1-1)/1 = 0, n3 10.
        assert_eq!(scores(&SelectorSpread::all_controllers(), &s, fe, &["n1", "n2", "n3"]), [10, 0, 10]);
        // The Service alone (ServiceSpreadingPriority): counts 2, 1, 0: 0, 5, 10.
        assert_eq!(scores(&SelectorSpread::services_only(), &s, fe, &["n1", "n2", "n3"]), [0, 5, 10]);
    }

    #[test]
    fn replication_controllers_and_stateful_sets_select_too() {
        let primary = &[("app", "db"), ("role", "primary")];
        let s = snapshot(
            vec![node("n1", &[]), node("n2", &[]), node("n3", &[])],
            vec![
                pods("p", "n1", "default", primary, 1),
                pods("r", "n2", "default", &[("app", "db"), ("role", "replica")], 3),
                pods("p", "n3", "default", primary, 3),
            ],
            vec![
                replication_controller("default", "primary", &[("role", "primary")]),
                stateful_set("default", "db", selector(&[], &[("app", "In", &["db"])])),
                // An empty RC selector selects nothing (it would otherwise match every pod).
                replication_controller("default", "empty", &[]),
            ],
        );
        // Selector: role=primary AND app in (db). Counts 1, 0 (replicas lack role=primary), 3;
        // max 3: n1 10*(3-1)/3 = 6.67 -> 6, n2 10*(3-0)/3 = 10, n3 10*(3-3)/3 = 0.
        assert_eq!(scores(&SelectorSpread::all_controllers(), &s, primary, &["n1", "n2", "n3"]), [6, 10, 0]);
        // The StatefulSet alone (no role label on the pod: the RC does not select it): app=db pods
        // count: 1, 3, 3; max 3: 10*2/3 = 6.67 -> 6, 0, 0.
        assert_eq!(scores(&SelectorSpread::all_controllers(), &s, &[("app", "db")], &["n1", "n2", "n3"]), [6, 0, 0]);
        // No Service: ServiceSpreadingPriority gives every node 10.
        assert_eq!(scores(&SelectorSpread::services_only(), &s, primary, &["n1", "n2", "n3"]), [10, 10, 10]);
    }

    fn zoned() -> Snapshot {
        snapshot(
            vec![
                node("a1", &[(BETA_ZONE, "a")]),
                // Only the GA label: the same zone key as a1 (no region on either).
                node("a2", &[(GA_ZONE, "a")]),
                node("b1", &[(BETA_ZONE, "b")]),
                // Both labels: the beta one wins, so zone b.
                node("bz", &[(BETA_ZONE, "b"), (GA_ZONE, "c")]),
                node("c1", &[(GA_ZONE, "c")]),
                // Region r, zone a: another zone key than a1's.
                node("ra", &[(BETA_REGION, "r"), (BETA_ZONE, "a")]),
                node("nz", &[]),
            ],
            vec![
                pods("web", "a1", "default", WEB, 2),
                pods("web", "a2", "default", WEB, 1),
                pods("web", "b1", "default", WEB, 1),
                pods("web", "nz", "default", WEB, 3),
            ],
            vec![service("default", "web", Some(WEB))],
        )
    }

    #[test]
    fn zones_weigh_two_thirds() {
        let s = zoned();
        // Node counts a1 2, a2 1, b1 1, bz 0, c1 0, ra 0, nz 3: max 3.
        // Zone counts: ":a" 3 (a1 + a2), ":b" 1 (b1 + bz), ":c" 0, "r:a" 0: max 3.
        // score = node * (1 - 2/3) + 2/3 * zone, truncated:
        // a1: node 10*(3-2)/3 = 3.33, zone 10*(3-3)/3 = 0    -> 1.11 -> 1
        // a2: node 10*(3-1)/3 = 6.67, zone 0                  -> 2.22 -> 2
        // b1: node 6.67,              zone 10*(3-1)/3 = 6.67  -> 2.22 + 4.44 = 6.67 -> 6
        // bz: node 10,                zone 6.67               -> 3.33 + 4.44 = 7.78 -> 7
        // c1: node 10,                zone 10                 -> 10
        // ra: node 10,                zone 10                 -> 10
        // nz: node 10*(3-3)/3 = 0, no zone: node score only   -> 0
        let all = ["a1", "a2", "b1", "bz", "c1", "ra", "nz"];
        assert_eq!(scores(&SelectorSpread::all_controllers(), &s, WEB, &all), [1, 2, 6, 7, 10, 10, 0]);
    }

    #[test]
    fn score_is_final_without_normalize_and_unknown_candidates_take_no_part() {
        use crate::framework::Candidate;
        let s = zoned();
        let mut candidates = crate::priorities::testing::candidates(&s, &["a2", "b1", "c1"]);
        candidates.insert(1, Candidate::Unknown("a1".to_string()));
        let ctx = PodContext::new(PodBuilder::new("incoming").label("app", "web").build());
        let scorer = SelectorSpread::all_controllers().prepare(&ctx, &ClusterView::of(&s), &candidates);
        let got: Vec<i64> = ["a2", "b1", "c1"].iter().map(|n| scorer.score(&ctx, &s.node_info(n).unwrap())).collect();
        // As counts_are_normalised_over_the_candidates_only: a1, though in the cluster, is unknown here.
        assert_eq!(got, [0, 0, 10]);
    }

    #[test]
    fn counts_are_normalised_over_the_candidates_only() {
        let s = zoned();
        // Candidates a2, b1, c1 (a1 and nz filtered out): node counts 1, 1, 0, max 1; zone counts
        // ":a" 1, ":b" 1, ":c" 0, max 1.
        // a2: node 10*(1-1)/1 = 0, zone 10*(1-1)/1 = 0 -> 0; b1 the same -> 0;
        // c1: node 10, zone 10 -> 10.
        assert_eq!(scores(&SelectorSpread::all_controllers(), &s, WEB, &["a2", "b1", "c1"]), [0, 0, 10]);
    }

    #[test]
    fn nothing_selecting_the_pod_gives_every_node_ten() {
        let s = zoned();
        let all = ["a1", "a2", "b1", "nz"];
        // No Service selects app=api.
        assert_eq!(scores(&SelectorSpread::all_controllers(), &s, &[("app", "api")], &all), [10, 10, 10, 10]);
        // A pod without labels: only Services with an empty selector could select it.
        let mut s = zoned();
        s.upsert(service("default", "everything", Some(&[])));
        assert_eq!(scores(&SelectorSpread::all_controllers(), &s, &[], &all), [10, 10, 10, 10]);
        // An empty Service selector adds no requirement to the others: app=web still counts.
        assert_eq!(
            scores(&SelectorSpread::all_controllers(), &s, WEB, &["a1", "a2", "b1", "bz", "c1", "ra", "nz"]),
            [1, 2, 6, 7, 10, 10, 0]
        );
    }

    #[test]
    fn selectors_without_an_equality_fall_back_to_scanning_nodes() {
        let s = snapshot(
            vec![node("n1", &[]), node("n2", &[])],
            vec![pods("db", "n1", "default", &[("app", "db")], 2), pods("kv", "n2", "default", &[("app", "kv")], 1)],
            vec![replica_set("default", "stores", selector(&[], &[("app", "In", &["db", "kv"])]))],
        );
        // app in (db, kv): counts 2, 1; max 2: 0, 10*(2-1)/2 = 5.
        assert_eq!(scores(&SelectorSpread::all_controllers(), &s, &[("app", "kv")], &["n1", "n2"]), [0, 5]);
    }

    #[test]
    fn through_prioritize_with_the_requests_own_nodes() {
        use crate::engine::evaluator::{CancelFlag, Evaluator};
        use crate::engine::prioritize::prioritize;
        use crate::framework::Candidate;
        use crate::policy::{Plan, WeightedPriority};

        let s = snapshot(
            vec![node("a1", &[(BETA_ZONE, "a")]), node("b1", &[(BETA_ZONE, "b")]), node("nz", &[])],
            vec![pods("web", "a1", "default", WEB, 1)],
            vec![service("default", "web", Some(WEB))],
        );
        // The request sends nz with zone a: the scorer sees the request's labels.
        let candidates: Vec<Candidate> = vec![
            Candidate::Known(s.node_info("a1").unwrap(), Default::default()),
            Candidate::Unknown("gone".to_string()),
            Candidate::Known(s.node_info("b1").unwrap(), Default::default()),
            {
                let (n, nominated) = s.candidate_for(node("nz", &[(BETA_ZONE, "a")]));
                Candidate::Known(n, nominated)
            },
        ];
        let view = ClusterView::with_request_nodes(&s, &candidates);
        let plan = Plan {
            priorities: vec![WeightedPriority { priority: Arc::new(SelectorSpread::all_controllers()), weight: 2 }],
            ..Plan::default()
        };
        let ctx = PodContext::new(PodBuilder::new("incoming").label("app", "web").build());
        let got = prioritize(&Evaluator::new(2).unwrap(), &plan, &ctx, &view, &candidates, &CancelFlag::new());
        // Node counts a1 1, b1 0, nz 0 (max 1); zone counts a 1 (a1 + nz), b 0 (max 1).
        // a1: node 0, zone 0 -> 0; b1: node 10, zone 10 -> 10; nz: node 10, zone 0 -> 3.33 -> 3;
        // the unknown node 0. Weighted: floor(2 * s / 2) = s.
        assert_eq!(got.unwrap(), [0, 0, 10, 3]);
    }
}
