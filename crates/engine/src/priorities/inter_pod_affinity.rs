//! InterPodAffinityPriority: the pod's preferred pod affinity and anti-affinity terms, and the
//! terms of the pods already placed that select the incoming pod, counted per topology domain.
//!
//! As upstream's `CalculateInterPodAffinityPriority` (`pkg/scheduler/algorithm/priorities/
//! interpod_affinity.go`, 1.14-1.17) and the framework's `interpodaffinity/scoring.go` (1.18-1.20):
//!
//! - For each preferred affinity term (`weight`, `podAffinityTerm`) of the incoming pod, every
//!   placed pod it selects adds `weight` to the domain (topology key, value of the placed pod's
//!   node) of the term's key; each preferred anti-affinity term subtracts its weight likewise.
//! - For each placed pod with pod (anti-)affinity: its required affinity terms that select the
//!   incoming pod add `hardPodAffinitySymmetricWeight` (none when it is 0), its preferred affinity
//!   terms that select it add their weight, its preferred anti-affinity terms subtract theirs, in
//!   the domain of the term's key of the placed pod's node.
//! - A node's raw score is the sum of its own domains' counts (a node without a key is in no
//!   domain of that key).
//! - Normalisation: `10 * (raw - min) / (max - min)` (float, truncated), with `min` and `max` taken
//!   over the candidates *and 0* (upstream starts both at 0 before 1.21), all 0 when they are
//!   equal. So all-negative scores keep the best node below 10 only if it is below 0.
//!
//! Namespaces as in MatchInterPodAffinity (1.22 semantics): the incoming pod's terms apply to the
//! listed namespaces plus those whose Namespace object matches `namespaceSelector` (`{}`: all),
//! and to the pod's own namespace with neither; a placed pod's term selects the incoming pod when
//! the pod's namespace is listed, or (with neither) is the owner's, or its Namespace labels match
//! the term's `namespaceSelector`. A term without a `labelSelector` selects nothing.

use std::collections::BTreeMap;

use crate::hashing::HashMap;
use std::sync::Arc;

use crate::cluster::NodeInfo;
use crate::framework::ClusterView;
use crate::framework::{ArgumentError, Candidate, PodContext};
use crate::framework::{Priority, PriorityArgs, Scorer, MAX_PRIORITY};
use crate::labels::{LabelKey, LabelMap};
use crate::plugin_helpers::affinity_terms::{for_each_candidate, namespace_labels, Term};

#[derive(Debug, Clone)]
pub struct InterPodAffinityPriority {
    /// `hardPodAffinitySymmetricWeight`: what a placed pod's required affinity term selecting the
    /// incoming pod adds; 0 disables it.
    hard_weight: i64,
}

/// The registry name.
pub const NAME: &str = "InterPodAffinityPriority";

pub fn build(args: &PriorityArgs<'_>) -> Result<Arc<dyn Priority>, ArgumentError> {
    Ok(Arc::new(InterPodAffinityPriority { hard_weight: args.hard_pod_affinity_symmetric_weight }))
}

/// The summed weights per topology domain: key → value → sum. Looked up by `&str` without
/// allocating.
#[derive(Debug, Clone, Default)]
struct TopologyScores(HashMap<String, HashMap<String, i64>>);

impl TopologyScores {
    /// Adds `weight` to the domain of `key` of a node with these labels, if the node has the key.
    fn add_on(&mut self, key: &str, node_labels: &BTreeMap<String, String>, weight: i64) {
        let Some(value) = node_labels.get(key) else { return };
        match self.0.get_mut(key) {
            Some(values) => {
                let sum = values.entry(value.clone()).or_default();
                *sum = sum.saturating_add(weight);
            }
            None => {
                self.0.insert(key.to_string(), HashMap::from_iter([(value.clone(), weight)]));
            }
        }
    }

    /// The sums with each key ready for looking up on many nodes.
    fn by_label_key(self) -> Vec<(LabelKey, HashMap<String, i64>)> {
        self.0.into_iter().map(|(key, values)| (LabelKey::new(&key), values)).collect()
    }
}

impl Priority for InterPodAffinityPriority {
    fn name(&self) -> &str {
        NAME
    }

    fn prepare(&self, ctx: &PodContext, view: &ClusterView<'_>, _candidates: &[Candidate]) -> Box<dyn Scorer> {
        let pod = &ctx.pod;
        let mut scores = TopologyScores::default();

        // The incoming pod's preferred terms, against the placed pods they select.
        let own = pod
            .preferred_affinity_terms()
            .iter()
            .map(|t| (t, i64::from(t.weight)))
            .chain(pod.preferred_anti_affinity_terms().iter().map(|t| (t, -i64::from(t.weight))))
            .map(|(t, weight)| (Term::compile(pod, &t.pod_affinity_term, view), weight));
        for (term, weight) in own {
            for_each_candidate(view, &term, &[term.topology_key.as_str()], |existing, node_labels| {
                if term.matches(existing) {
                    scores.add_on(&term.topology_key, node_labels, weight);
                }
            });
        }

        // The placed pods' terms that select the incoming pod: the model files the pods that have
        // any scoring term, so the others are never visited.
        let ns_labels = namespace_labels(view, &pod.metadata.namespace);
        for existing in view.snapshot.pods_with_scoring_affinity() {
            let Some(terms) = existing.terms.as_deref() else { continue };
            let Some(node_labels) = view.node_labels(&existing.pod.spec.node_name) else { continue };
            if self.hard_weight > 0 {
                for term in terms.required_affinity.iter().filter(|t| t.selects(pod, ns_labels)) {
                    scores.add_on(&term.topology_key, node_labels, self.hard_weight);
                }
            }
            for (term, weight) in terms.preferred.iter().filter(|(t, _)| t.selects(pod, ns_labels)) {
                scores.add_on(&term.topology_key, node_labels, *weight);
            }
        }
        Box::new(InterPodAffinityScorer { scores: scores.by_label_key() })
    }
}

struct InterPodAffinityScorer {
    /// key → value → sum.
    scores: Vec<(LabelKey, HashMap<String, i64>)>,
}

impl Scorer for InterPodAffinityScorer {
    fn score(&self, _pod: &PodContext, node: &NodeInfo) -> i64 {
        // The sum of the node's own domains.
        self.scores
            .iter()
            .filter_map(|(key, values)| node.state.label_by(key).and_then(|value| values.get(value)))
            .fold(0i64, |acc, v| acc.saturating_add(*v))
    }

    /// `MaxPriority * (raw - min) / (max - min)` with `min <= 0 <= max`, as a truncated float.
    fn normalize(&self, scores: &mut [i64]) {
        let max = scores.iter().copied().fold(0, i64::max);
        let min = scores.iter().copied().fold(0, i64::min);
        // Saturating: sums of term weights over many pods cannot overflow into a panic.
        let diff = max.saturating_sub(min);
        for s in scores.iter_mut() {
            *s = if diff > 0 { (MAX_PRIORITY as f64 * (s.saturating_sub(min) as f64 / diff as f64)) as i64 } else { 0 };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::objects::Pod;
    use crate::cluster::{ClusterObject, Snapshot};
    use crate::priorities::testing::candidates;
    use crate::testing::{NodeBuilder, PodBuilder};
    use k8s_openapi::api::core::v1::{Affinity, Namespace, PodAffinity, PodAntiAffinity};
    use k8s_openapi::api::core::v1::{PodAffinityTerm, WeightedPodAffinityTerm};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector as K8sSelector, ObjectMeta as K8sMeta};

    const ZONE: &str = "topology.kubernetes.io/zone";
    const HOST: &str = "kubernetes.io/hostname";

    /// a1 and a2 in zone a, b1 and b2 in zone b, and a node without a zone; each has its hostname.
    const NODES: [&str; 5] = ["a1", "a2", "b1", "b2", "nozone"];

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn term(pairs: &[(&str, &str)], key: &str) -> PodAffinityTerm {
        PodAffinityTerm {
            label_selector: Some(K8sSelector { match_labels: Some(labels(pairs)), match_expressions: None }),
            topology_key: key.to_string(),
            ..Default::default()
        }
    }

    /// A term selecting pods whose `key` is not `value` (or missing).
    fn not_in_term(key: &str, value: &str, topology_key: &str) -> PodAffinityTerm {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;
        let requirement = LabelSelectorRequirement {
            key: key.to_string(),
            operator: "NotIn".to_string(),
            values: Some(vec![value.to_string()]),
        };
        PodAffinityTerm {
            label_selector: Some(K8sSelector { match_labels: None, match_expressions: Some(vec![requirement]) }),
            topology_key: topology_key.to_string(),
            ..Default::default()
        }
    }

    fn weighted(weight: i32, t: PodAffinityTerm) -> WeightedPodAffinityTerm {
        WeightedPodAffinityTerm { weight, pod_affinity_term: t }
    }

    fn in_namespaces(mut t: PodAffinityTerm, namespaces: &[&str]) -> PodAffinityTerm {
        t.namespaces = Some(namespaces.iter().map(|n| n.to_string()).collect());
        t
    }

    fn with_namespace_selector(mut t: PodAffinityTerm, pairs: &[(&str, &str)]) -> PodAffinityTerm {
        t.namespace_selector = Some(K8sSelector { match_labels: Some(labels(pairs)), match_expressions: None });
        t
    }

    /// Terms of a pod: preferred affinity, preferred anti-affinity, required affinity.
    #[derive(Default)]
    struct Terms {
        prefer: Vec<WeightedPodAffinityTerm>,
        avoid: Vec<WeightedPodAffinityTerm>,
        require: Vec<PodAffinityTerm>,
    }

    fn with(pod: PodBuilder, terms: Terms) -> Pod {
        let mut pod = pod.build();
        let some = |v: bool| v.then_some(());
        pod.spec.affinity = Some(Affinity {
            pod_affinity: some(!terms.prefer.is_empty() || !terms.require.is_empty()).map(|_| PodAffinity {
                preferred_during_scheduling_ignored_during_execution: Some(terms.prefer),
                required_during_scheduling_ignored_during_execution: Some(terms.require),
            }),
            pod_anti_affinity: some(!terms.avoid.is_empty()).map(|_| PodAntiAffinity {
                preferred_during_scheduling_ignored_during_execution: Some(terms.avoid),
                ..Default::default()
            }),
            ..Default::default()
        });
        pod
    }

    fn placed(name: &str, node: &str, pairs: &[(&str, &str)]) -> PodBuilder {
        pairs.iter().fold(PodBuilder::new(name).node(node), |b, (k, v)| b.label(k, v))
    }

    fn namespace(name: &str, pairs: &[(&str, &str)]) -> ClusterObject {
        ClusterObject::Namespace(Box::new(Namespace {
            metadata: K8sMeta { name: Some(name.to_string()), labels: Some(labels(pairs)), ..Default::default() },
            ..Default::default()
        }))
    }

    fn cluster(pods: Vec<Pod>) -> Snapshot {
        let nodes = NODES.iter().map(|name| match name.as_bytes()[0] {
            b'a' => NodeBuilder::new(name).label(ZONE, "a").build(),
            b'b' => NodeBuilder::new(name).label(ZONE, "b").build(),
            _ => NodeBuilder::new(name).build(),
        });
        let mut snapshot = Snapshot::build(nodes, pods);
        snapshot.upsert(namespace("team-a", &[("team", "a")]));
        snapshot.upsert(namespace("team-b", &[("team", "b")]));
        snapshot
    }

    /// Raw and normalised scores of [`NODES`], in order.
    fn scores(hard_weight: i64, pods: Vec<Pod>, pod: Pod) -> (Vec<i64>, Vec<i64>) {
        let snapshot = cluster(pods);
        let args = PriorityArgs {
            name: "InterPodAffinityPriority",
            argument: None,
            hard_pod_affinity_symmetric_weight: hard_weight,
        };
        let priority = build(&args).unwrap();
        let ctx = PodContext::new(pod);
        let scorer = priority.prepare(&ctx, &ClusterView::of(&snapshot), &candidates(&snapshot, &NODES));
        let raw: Vec<i64> = NODES.iter().map(|n| scorer.score(&ctx, &snapshot.node_info(n).unwrap())).collect();
        let mut normalized = raw.clone();
        scorer.normalize(&mut normalized);
        (raw, normalized)
    }

    #[test]
    fn scores_by_hand() {
        let db = |name: &str, node: &str| placed(name, node, &[("app", "db")]);
        let incoming = || PodBuilder::new("p");
        let web = || PodBuilder::new("p").label("app", "web");
        type Case = (&'static str, i64, Vec<Pod>, Pod, [i64; 5], [i64; 5]);
        let cases: Vec<Case> = vec![
            (
                "no terms anywhere: all 0",
                1,
                vec![db("d", "a1").build()],
                incoming().build(),
                [0, 0, 0, 0, 0],
                [0, 0, 0, 0, 0],
            ),
            (
                "zone affinity weight 5, one db in zone a: a gets 5; 10*(5-0)/5 = 10",
                1,
                vec![db("d", "a1").build()],
                with(incoming(), Terms { prefer: vec![weighted(5, term(&[("app", "db")], ZONE))], ..Terms::default() }),
                [5, 5, 0, 0, 0],
                [10, 10, 0, 0, 0],
            ),
            (
                "a term whose selector does not convert selects nothing: the bad one would add 7 in zone a",
                1,
                vec![db("d", "a1").build()],
                with(
                    incoming(),
                    Terms {
                        prefer: vec![
                            weighted(5, term(&[("app", "db")], ZONE)),
                            weighted(7, not_in_term("tier", "not valid!", ZONE)),
                        ],
                        ..Terms::default()
                    },
                ),
                [5, 5, 0, 0, 0],
                [10, 10, 0, 0, 0],
            ),
            (
                "counted per matching pod: 2 dbs in a (4 each = 8), 1 in b (4); 10*4/8 = 5",
                1,
                vec![db("d1", "a1").build(), db("d2", "a2").build(), db("d3", "b1").build()],
                with(incoming(), Terms { prefer: vec![weighted(4, term(&[("app", "db")], ZONE))], ..Terms::default() }),
                [8, 8, 4, 4, 0],
                [10, 10, 5, 5, 0],
            ),
            (
                "zone affinity 3 and host affinity 2 add up on the db's node: a1 = 3+2, a2 = 3; 10*3/5 = 6",
                1,
                vec![db("d", "a1").build()],
                with(
                    incoming(),
                    Terms {
                        prefer: vec![
                            weighted(3, term(&[("app", "db")], ZONE)),
                            weighted(2, term(&[("app", "db")], HOST)),
                        ],
                        ..Terms::default()
                    },
                ),
                [5, 3, 0, 0, 0],
                [10, 6, 0, 0, 0],
            ),
            (
                "anti-affinity only: zone a -4, max is 0 and min -4: a = 0, others 10*(0+4)/4 = 10",
                1,
                vec![db("d", "a2").build()],
                with(incoming(), Terms { avoid: vec![weighted(4, term(&[("app", "db")], ZONE))], ..Terms::default() }),
                [-4, -4, 0, 0, 0],
                [0, 0, 10, 10, 10],
            ),
            (
                "positive and negative: zone a +6 (db), zone b -3 (web); min -3, max 6: \
                 a 10*9/9 = 10, b 0, nozone 10*3/9 = 3.33 -> 3",
                1,
                vec![db("d", "a1").build(), placed("w", "b2", &[("app", "web")]).build()],
                with(
                    incoming(),
                    Terms {
                        prefer: vec![weighted(6, term(&[("app", "db")], ZONE))],
                        avoid: vec![weighted(3, term(&[("app", "web")], ZONE))],
                        ..Terms::default()
                    },
                ),
                [6, 6, -3, -3, 0],
                [10, 10, 0, 0, 3],
            ),
            (
                "affinity and anti-affinity to the same pod cancel out in its zone: 7 - 7 = 0",
                1,
                vec![db("d", "b1").build()],
                with(
                    incoming(),
                    Terms {
                        prefer: vec![weighted(7, term(&[("app", "db")], ZONE))],
                        avoid: vec![weighted(7, term(&[("app", "db")], ZONE))],
                        ..Terms::default()
                    },
                ),
                [0, 0, 0, 0, 0],
                [0, 0, 0, 0, 0],
            ),
            (
                "a pod on a node without the zone counts in no zone; by hostname only on its node",
                1,
                vec![db("d", "nozone").build()],
                with(
                    incoming(),
                    Terms {
                        prefer: vec![
                            weighted(2, term(&[("app", "db")], ZONE)),
                            weighted(1, term(&[("app", "db")], HOST)),
                        ],
                        ..Terms::default()
                    },
                ),
                [0, 0, 0, 0, 1],
                [0, 0, 0, 0, 10],
            ),
            (
                "symmetric required affinity, weight 1: the db on b1 requires web in its zone: b = 1",
                1,
                vec![with(db("d", "b1"), Terms { require: vec![term(&[("app", "web")], ZONE)], ..Terms::default() })],
                web().build(),
                [0, 0, 1, 1, 0],
                [0, 0, 10, 10, 0],
            ),
            (
                "symmetric required affinity with hardPodAffinitySymmetricWeight 0: nothing",
                0,
                vec![with(db("d", "b1"), Terms { require: vec![term(&[("app", "web")], ZONE)], ..Terms::default() })],
                web().build(),
                [0, 0, 0, 0, 0],
                [0, 0, 0, 0, 0],
            ),
            (
                "hard weight 3 on b1's zone plus a preferred host term 2 of the pod on a1: \
                 a1 2, b 3: 10*2/3 = 6.67 -> 6",
                3,
                vec![
                    with(db("d", "b1"), Terms { require: vec![term(&[("app", "web")], ZONE)], ..Terms::default() }),
                    with(
                        db("e", "a1"),
                        Terms { prefer: vec![weighted(2, term(&[("app", "web")], HOST))], ..Terms::default() },
                    ),
                ],
                web().build(),
                [2, 0, 3, 3, 0],
                [6, 0, 10, 10, 0],
            ),
            (
                "a placed pod's preferred anti-affinity to web: its zone -5",
                1,
                vec![with(
                    db("d", "a1"),
                    Terms { avoid: vec![weighted(5, term(&[("app", "web")], ZONE))], ..Terms::default() },
                )],
                web().build(),
                [-5, -5, 0, 0, 0],
                [0, 0, 10, 10, 10],
            ),
            (
                "a placed pod's terms that do not select the pod count nothing",
                1,
                vec![with(
                    db("d", "a1"),
                    Terms {
                        prefer: vec![weighted(5, term(&[("app", "cache")], ZONE))],
                        require: vec![term(&[("app", "cache")], ZONE)],
                        ..Terms::default()
                    },
                )],
                web().build(),
                [0, 0, 0, 0, 0],
                [0, 0, 0, 0, 0],
            ),
            (
                "both directions add up: the pod prefers db (4, zone a), the db on a1 prefers web on \
                 its host (3), the guard on b2 avoids web in zone b (2): a1 7, a2 4, b -2; \
                 min -2, max 7: a1 10, a2 10*6/9 = 6.67 -> 6, b 0, nozone 10*2/9 = 2.2 -> 2",
                1,
                vec![
                    with(
                        db("d", "a1"),
                        Terms { prefer: vec![weighted(3, term(&[("app", "web")], HOST))], ..Terms::default() },
                    ),
                    with(
                        placed("g", "b2", &[]),
                        Terms { avoid: vec![weighted(2, term(&[("app", "web")], ZONE))], ..Terms::default() },
                    ),
                ],
                with(web(), Terms { prefer: vec![weighted(4, term(&[("app", "db")], ZONE))], ..Terms::default() }),
                [7, 4, -2, -2, 0],
                [10, 6, 0, 0, 2],
            ),
            (
                "the pod's terms apply in its own namespace by default: a db in team-a is not seen",
                1,
                vec![db("d", "a1").namespace("team-a").build()],
                with(incoming(), Terms { prefer: vec![weighted(5, term(&[("app", "db")], ZONE))], ..Terms::default() }),
                [0, 0, 0, 0, 0],
                [0, 0, 0, 0, 0],
            ),
            (
                "listed namespaces: team-a's db counts (a 5), default's on b1 not",
                1,
                vec![db("d", "a1").namespace("team-a").build(), db("e", "b1").build()],
                with(
                    incoming(),
                    Terms {
                        prefer: vec![weighted(5, in_namespaces(term(&[("app", "db")], ZONE), &["team-a"]))],
                        ..Terms::default()
                    },
                ),
                [5, 5, 0, 0, 0],
                [10, 10, 0, 0, 0],
            ),
            (
                "the pod's namespaceSelector team=b: only team-b's db (b1) counts",
                1,
                vec![db("d", "a1").namespace("team-a").build(), db("e", "b1").namespace("team-b").build()],
                with(
                    incoming(),
                    Terms {
                        prefer: vec![weighted(
                            5,
                            with_namespace_selector(term(&[("app", "db")], ZONE), &[("team", "b")]),
                        )],
                        ..Terms::default()
                    },
                ),
                [0, 0, 5, 5, 0],
                [0, 0, 10, 10, 0],
            ),
            (
                "an empty namespaceSelector selects every namespace: a 2, b 2 -> all tie at the top",
                1,
                vec![db("d", "a1").namespace("team-a").build(), db("e", "b1").namespace("elsewhere").build()],
                with(
                    incoming(),
                    Terms {
                        prefer: vec![weighted(2, with_namespace_selector(term(&[("app", "db")], ZONE), &[]))],
                        ..Terms::default()
                    },
                ),
                [2, 2, 2, 2, 0],
                [10, 10, 10, 10, 0],
            ),
            (
                "a placed pod's required term applies in its own namespace: web in default is not selected \
                 by team-a's db",
                1,
                vec![with(
                    db("d", "b1").namespace("team-a"),
                    Terms { require: vec![term(&[("app", "web")], ZONE)], ..Terms::default() },
                )],
                web().build(),
                [0, 0, 0, 0, 0],
                [0, 0, 0, 0, 0],
            ),
            (
                "a placed pod's namespaceSelector matches the incoming pod's Namespace labels (team-a)",
                1,
                vec![with(
                    db("d", "b1"),
                    Terms {
                        prefer: vec![weighted(
                            3,
                            with_namespace_selector(term(&[("app", "web")], ZONE), &[("team", "a")]),
                        )],
                        ..Terms::default()
                    },
                )],
                web().namespace("team-a").build(),
                [0, 0, 3, 3, 0],
                [0, 0, 10, 10, 0],
            ),
        ];
        for (name, hard_weight, pods, pod, raw, normalized) in cases {
            let got = scores(hard_weight, pods, pod);
            assert_eq!(got, (raw.to_vec(), normalized.to_vec()), "{name}");
        }
    }

    #[test]
    fn normalizes_as_upstream() {
        let scorer = InterPodAffinityScorer { scores: Vec::new() };
        // Positive only: min is 0, not 2: 10*2/8 = 2.5 -> 2.
        let mut s = [2, 8, 5];
        scorer.normalize(&mut s);
        assert_eq!(s, [2, 10, 6]);
        // Negative only: max is 0, not -1: 10*(-1+6)/6 = 8.3 -> 8.
        let mut s = [-1, -6];
        scorer.normalize(&mut s);
        assert_eq!(s, [8, 0]);
        // Equal and zero: 0.
        let mut s = [0, 0];
        scorer.normalize(&mut s);
        assert_eq!(s, [0, 0]);
    }

    #[test]
    fn through_the_engine_with_policy_weight() {
        use crate::engine::evaluator::{CancelFlag, Evaluator};
        use crate::engine::prioritize::prioritize;
        use crate::framework::Candidate;
        use crate::policy::{Plan, WeightedPriority};
        let snapshot = cluster(vec![placed("d", "a1", &[("app", "db")]).build()]);
        let pod = with(
            PodBuilder::new("p"),
            Terms { prefer: vec![weighted(1, term(&[("app", "db")], HOST))], ..Terms::default() },
        );
        let args =
            PriorityArgs { name: "InterPodAffinityPriority", argument: None, hard_pod_affinity_symmetric_weight: 1 };
        let plan = Plan {
            priorities: vec![WeightedPriority { priority: build(&args).unwrap(), weight: 2 }],
            ..Plan::default()
        };
        let candidates: Vec<Candidate> = ["a1", "a2"]
            .iter()
            .map(|n| {
                let (node, nominated) = snapshot.candidate(n).unwrap();
                Candidate::Known(node, nominated)
            })
            .collect();
        let ev = Evaluator::new(2).unwrap();
        let got =
            prioritize(&ev, &plan, &PodContext::new(pod), &ClusterView::of(&snapshot), &candidates, &CancelFlag::new())
                .unwrap();
        assert_eq!(got, [10, 0]);
    }
}
