//! EvenPodsSpreadPriority: the pod's `topologySpreadConstraints` with `whenUnsatisfiable:
//! ScheduleAnyway`; the fewer matching pods in a node's domains, the higher it scores.
//!
//! As today's PodTopologySpread score (`pkg/scheduler/framework/plugins/podtopologyspread/
//! scoring.go`), without the system default constraints (the Policy-era priority had none):
//!
//! - A candidate lacking the topology key of any constraint is ignored: it scores 0.
//! - Each constraint counts the pods of the incoming pod's namespace that match its selector
//!   (`labelSelector` narrowed by `matchLabelKeys`), terminating pods (`deletionTimestamp` set)
//!   left out, per topology value, over the nodes that have
//!   every constraint's key and pass its node inclusion policies (`nodeAffinityPolicy`, default
//!   `Honor`; `nodeTaintsPolicy`, default `Ignore`), as the EvenPodsSpread predicate does. For
//!   `kubernetes.io/hostname` the count is the candidate's own matching pods.
//! - Each constraint is weighted by `ln(domains + 2)`, where `domains` is the number of distinct
//!   values among the non-ignored *candidates* (for hostname: the number of non-ignored
//!   candidates), and a node's raw score is `round(sum(count * weight + maxSkew - 1))`.
//! - Normalisation: with `min` the lowest raw score (of the non-ignored candidates) and `max` the
//!   highest (at least 0), each scores `10 * (max + min - raw) / max` (integer division), or 10
//!   everywhere when `max` is 0.
//!
//! The topology weights and the bounds depend on the candidates: `prepare` gets them, counts the
//! domains, computes every node's raw score and the candidates' `min` and `max`, so `score` only
//! looks the node's raw score up and normalises it.
//! A pod without `ScheduleAnyway` constraints scores 0 everywhere (upstream skips the plugin).

use crate::hashing::HashMap;
use std::sync::Arc;

use crate::cluster::NodeInfo;
use crate::framework::candidate::known_nodes;
use crate::framework::ClusterView;
use crate::framework::{ArgumentError, Candidate, PodContext};
use crate::framework::{Priority, PriorityArgs, Scorer, MAX_PRIORITY};
use crate::plugin_helpers::node_affinity::matches_node_selector;
use crate::plugin_helpers::tolerations::{tolerates_node, TaintEffects};
use crate::plugin_helpers::topology_spread::SpreadConstraint;

const SCHEDULE_ANYWAY: &str = "ScheduleAnyway";
const HOSTNAME: &str = "kubernetes.io/hostname";

#[derive(Debug, Clone)]
pub struct EvenPodsSpreadPriority;

/// The registry name.
pub const NAME: &str = "EvenPodsSpreadPriority";

pub fn build(_args: &PriorityArgs<'_>) -> Result<Arc<dyn Priority>, ArgumentError> {
    Ok(Arc::new(EvenPodsSpreadPriority))
}

impl Priority for EvenPodsSpreadPriority {
    fn name(&self) -> &str {
        NAME
    }

    fn prepare(&self, ctx: &PodContext, view: &ClusterView<'_>, candidates: &[Candidate]) -> Box<dyn Scorer> {
        let pod = &ctx.pod;
        let constraints = SpreadConstraint::of(pod, SCHEDULE_ANYWAY);
        if constraints.is_empty() {
            return Box::new(NoConstraints);
        }
        let k = constraints.len();
        let any_honors_affinity = constraints.iter().any(|c| c.honor_node_affinity);
        let any_honors_taints = constraints.iter().any(|c| c.honor_node_taints);
        // One row per node of the view: its slots, or `None` when it lacks a constraint's key.
        let mut rows: HashMap<String, usize> = HashMap::default();
        // Per row, one slot per constraint: the domain id of the node's value, or for a per-node
        // constraint the node's own matching pods.
        let mut slots: Vec<Option<Vec<i64>>> = Vec::new();
        // Per constraint: topology value → domain id, and matching pods per domain id.
        let mut domains: Vec<HashMap<String, usize>> = (0..k).map(|_| HashMap::default()).collect();
        let mut counts: Vec<Vec<i64>> = vec![Vec::new(); k];
        let namespace = &pod.metadata.namespace;
        for node in view.nodes() {
            rows.insert(node.name().to_string(), slots.len());
            let labels = &node.node().metadata.labels;
            if !constraints.iter().all(|c| labels.contains_key(&c.topology_key)) {
                slots.push(None);
                continue;
            }
            let affinity_ok = any_honors_affinity && matches_node_selector(ctx, &node);
            let taints_ok = any_honors_taints && tolerates_node(pod, &node, TaintEffects::DoNotSchedule);
            let mut row = Vec::with_capacity(k);
            for (i, c) in constraints.iter().enumerate() {
                // Terminating pods are not counted (`SpreadConstraint::counts`).
                let matching = || node.pods.pods().iter().filter(|p| c.counts(namespace, &p.pod)).count() as i64;
                if c.topology_key == HOSTNAME {
                    // Upstream counts the node's own pods in Score, whatever the policies say.
                    row.push(matching());
                    continue;
                }
                let value = labels.get(&c.topology_key).map(String::as_str).unwrap_or_default();
                let next = counts[i].len();
                let id = *domains[i].entry(value.to_string()).or_insert(next);
                if id == next {
                    counts[i].push(0);
                }
                row.push(id as i64);
                let included = (!c.honor_node_affinity || affinity_ok) && (!c.honor_node_taints || taints_ok);
                if included {
                    counts[i][id] += matching();
                }
            }
            slots.push(Some(row));
        }

        // The non-ignored candidates' rows (in candidate order, as upstream's map results).
        let candidate_rows: Vec<usize> = known_nodes(candidates)
            .filter_map(|node| rows.get(node.name()).copied())
            .filter(|r| slots.get(*r).is_some_and(Option::is_some))
            .collect();
        // topologyNormalizingWeight: ln(number of the candidates' domains + 2).
        let weights: Vec<f64> = constraints
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let size = if c.topology_key == HOSTNAME {
                    candidate_rows.len()
                } else {
                    let mut seen = vec![false; counts[i].len()];
                    for row in candidate_rows.iter().filter_map(|r| slots[*r].as_ref()) {
                        if let Some(seen) = usize::try_from(row[i]).ok().and_then(|d| seen.get_mut(d)) {
                            *seen = true;
                        }
                    }
                    seen.iter().filter(|s| **s).count()
                };
                ((size + 2) as f64).ln()
            })
            .collect();
        let raw: Vec<Option<i64>> = slots
            .iter()
            .map(|row| {
                row.as_ref().map(|row| {
                    let mut score = 0.0;
                    for (i, c) in constraints.iter().enumerate() {
                        let count = if c.topology_key == HOSTNAME {
                            row[i]
                        } else {
                            usize::try_from(row[i]).ok().and_then(|d| counts[i].get(d)).copied().unwrap_or(0)
                        };
                        score += count as f64 * weights[i] + (c.max_skew - 1) as f64;
                    }
                    score.round() as i64
                })
            })
            .collect();
        let candidate_raw = || candidate_rows.iter().filter_map(|r| raw[*r]);
        let min = candidate_raw().min().unwrap_or(0);
        let max = candidate_raw().fold(0, i64::max);
        Box::new(Spread { rows, raw, min, max })
    }
}

/// The pod has no `ScheduleAnyway` constraint: every node scores 0.
struct NoConstraints;

impl Scorer for NoConstraints {
    fn score(&self, _pod: &PodContext, _node: &NodeInfo) -> i64 {
        0
    }
}

/// What `prepare` computes: every node's raw score, and the bounds over the candidates.
struct Spread {
    /// The row of each node of the view, by name.
    rows: HashMap<String, usize>,
    /// Per row: the node's raw score (with the candidates' weights), `None` when it is ignored.
    raw: Vec<Option<i64>>,
    /// The lowest raw score of the non-ignored candidates.
    min: i64,
    /// The highest raw score of the non-ignored candidates, at least 0.
    max: i64,
}

impl Scorer for Spread {
    /// The node's normalised score: already 0..=10.
    fn score(&self, _pod: &PodContext, node: &NodeInfo) -> i64 {
        match self.rows.get(node.name()).and_then(|r| self.raw.get(*r)).copied().flatten() {
            None => 0,
            Some(_) if self.max == 0 => MAX_PRIORITY,
            Some(raw) => MAX_PRIORITY * (self.max + self.min - raw) / self.max,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::objects::Node;
    use crate::cluster::objects::Pod;
    use crate::cluster::Snapshot;
    use crate::testing::{NodeBuilder, PodBuilder};
    use k8s_openapi::api::core::v1::TopologySpreadConstraint;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector as K8sSelector;
    use std::collections::BTreeMap;

    const ZONE: &str = "topology.kubernetes.io/zone";

    /// A ScheduleAnyway constraint on `key` selecting `app=web`.
    fn soft(max_skew: i32, key: &str) -> TopologySpreadConstraint {
        TopologySpreadConstraint {
            max_skew,
            topology_key: key.to_string(),
            when_unsatisfiable: SCHEDULE_ANYWAY.to_string(),
            label_selector: Some(K8sSelector {
                match_labels: Some(BTreeMap::from([("app".to_string(), "web".to_string())])),
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

    /// `n` pods `app=web` on a node.
    fn webs(prefix: &str, n: usize, node: &str) -> Vec<Pod> {
        (0..n).map(|i| PodBuilder::new(&format!("{prefix}-{i}")).node(node).label("app", "web").build()).collect()
    }

    fn incoming(constraints: Vec<TopologySpreadConstraint>) -> Pod {
        let mut pod = PodBuilder::new("incoming").label("app", "web").build();
        pod.spec.topology_spread_constraints = constraints;
        pod
    }

    /// The normalised scores of the candidates, in order.
    fn scores(nodes: Vec<Node>, pods: Vec<Pod>, pod: Pod, candidates: &[&str]) -> Vec<i64> {
        let snapshot = Snapshot::build(nodes, pods);
        crate::priorities::testing::scores(&EvenPodsSpreadPriority, &PodContext::new(pod), &snapshot, candidates)
    }

    fn four_nodes() -> Vec<Node> {
        vec![zoned("n1", "a").build(), zoned("n2", "a").build(), zoned("n3", "b").build(), zoned("n4", "c").build()]
    }

    /// Two webs on n1 (zone a), one on n3 (zone b).
    fn three_webs() -> Vec<Pod> {
        [webs("x", 2, "n1"), webs("y", 1, "n3")].concat()
    }

    #[test]
    fn zone_constraint() {
        // Domains a, b, c: weight ln(3+2) = 1.6094. Raw: a 2*1.6094 = 3.22 -> 3, b 1.61 -> 2,
        // c 0. min 0, max 3: a 10*(3+0-3)/3 = 0, b 10*(3-2)/3 = 3, c 10*3/3 = 10.
        let got = scores(four_nodes(), three_webs(), incoming(vec![soft(1, ZONE)]), &["n1", "n2", "n3", "n4"]);
        assert_eq!(got, [0, 0, 3, 10]);
    }

    #[test]
    fn the_weight_counts_the_candidates_domains() {
        // Candidates n1 (a) and n3 (b) only: weight ln(2+2) = 1.3863. Raw: a 2.77 -> 3, b 1.39 -> 1.
        // min 1, max 3: n1 10*(3+1-3)/3 = 3, n3 10*(3+1-1)/3 = 10. (With the cluster's 3 domains
        // it would be a 3, b 2: 6 and 10.)
        let got = scores(four_nodes(), three_webs(), incoming(vec![soft(1, ZONE)]), &["n1", "n3"]);
        assert_eq!(got, [3, 10]);
    }

    #[test]
    fn hostname_constraint_with_max_skew() {
        // Per node, 4 candidates: weight ln(4+2) = 1.7918, maxSkew-1 = 1. Raw: n1 2*1.7918+1 =
        // 4.58 -> 5, n2 1, n3 2.79 -> 3, n4 1. min 1, max 5: n1 10*(5+1-5)/5 = 2, n2 10*5/5 = 10,
        // n3 10*3/5 = 6, n4 10.
        let got = scores(
            four_nodes(),
            three_webs(),
            incoming(vec![soft(2, "kubernetes.io/hostname")]),
            &["n1", "n2", "n3", "n4"],
        );
        assert_eq!(got, [2, 10, 6, 10]);
    }

    #[test]
    fn a_node_without_the_key_scores_zero_and_counts_for_nothing() {
        // n5 has no zone: ignored, its 5 webs not counted. Domains a, b: ln 4 = 1.3863. Raw: n1
        // 2.77 -> 3, n3 1.39 -> 1. min 1, max 3: n1 3, n3 10, n5 0.
        let nodes = vec![zoned("n1", "a").build(), zoned("n3", "b").build(), NodeBuilder::new("n5").build()];
        let pods = [three_webs(), webs("z", 5, "n5")].concat();
        let got = scores(nodes, pods, incoming(vec![soft(1, ZONE)]), &["n1", "n3", "n5"]);
        assert_eq!(got, [3, 10, 0]);
    }

    /// upstream: TestPodTopologySpreadScore (podtopologyspread scoring_test.go, 1.18+), case
    /// "terminating Pods should be excluded": node-a 100, node-b 0 (10 and 0 on this scale).
    /// Hostname, 2 candidates: weight ln 4 = 1.3863. node-a counts 0 (its pod is terminating),
    /// node-b 1 -> raw 1. min 0, max 1: node-a 10*(1+0-0)/1 = 10, node-b 0.
    #[test]
    fn terminating_pods_are_not_counted() {
        let nodes = vec![NodeBuilder::new("node-a").build(), NodeBuilder::new("node-b").build()];
        let pods = vec![
            PodBuilder::new("p-a").node("node-a").label("app", "web").terminating().build(),
            PodBuilder::new("p-b").node("node-b").label("app", "web").build(),
        ];
        let pod = incoming(vec![soft(1, "kubernetes.io/hostname")]);
        assert_eq!(scores(nodes, pods, pod, &["node-a", "node-b"]), [10, 0]);
    }

    #[test]
    fn zone_and_hostname_add_up() {
        // One web on n1 (a), two on n3 (b); n2 (a) empty. Zone: domains a, b, ln 4 = 1.3863,
        // a 1, b 2. Host: 3 candidates, ln 5 = 1.6094.
        // n1: 1*1.3863 + 1*1.6094 = 3.00 -> 3; n2: 1.3863 -> 1; n3: 2.7726 + 3.2189 = 5.99 -> 6.
        // min 1, max 6: n1 10*(6+1-3)/6 = 6, n2 10*6/6 = 10, n3 10*1/6 = 1.
        let nodes = vec![zoned("n1", "a").build(), zoned("n2", "a").build(), zoned("n3", "b").build()];
        let pods = [webs("x", 1, "n1"), webs("y", 2, "n3")].concat();
        let pod = incoming(vec![soft(1, ZONE), soft(1, "kubernetes.io/hostname")]);
        assert_eq!(scores(nodes, pods, pod, &["n1", "n2", "n3"]), [6, 10, 1]);
    }

    #[test]
    fn only_the_pods_namespace_and_selector_count() {
        // n1 (a) has a web in another namespace and a db; n2 (b) one web. ln 4: a 0, b 1.39 -> 1.
        // min 0, max 1: n1 10*(1+0-0)/1 = 10, n2 0.
        let nodes = vec![zoned("n1", "a").build(), zoned("n2", "b").build()];
        let pods = vec![
            PodBuilder::new("other").namespace("other").node("n1").label("app", "web").build(),
            PodBuilder::new("db").node("n1").label("app", "db").build(),
            PodBuilder::new("web").node("n2").label("app", "web").build(),
        ];
        assert_eq!(scores(nodes, pods, incoming(vec![soft(1, ZONE)]), &["n1", "n2"]), [10, 0]);
    }

    #[test]
    fn no_matching_pods_anywhere_all_score_ten() {
        // Raw 0 everywhere: max 0 gives 10.
        assert_eq!(scores(four_nodes(), vec![], incoming(vec![soft(1, ZONE)]), &["n1", "n3"]), [10, 10]);
    }

    #[test]
    fn without_schedule_anyway_constraints_all_zero() {
        let hard = with(soft(1, ZONE), |c| c.when_unsatisfiable = "DoNotSchedule".to_string());
        assert_eq!(scores(four_nodes(), three_webs(), incoming(vec![hard]), &["n1", "n3", "n4"]), [0, 0, 0]);
        assert_eq!(scores(four_nodes(), three_webs(), incoming(vec![]), &["n1", "n3"]), [0, 0]);
    }

    /// n1 (a, disk=hdd, tainted) holds 3 webs, n2 (a, ssd) is empty, n3 (b, ssd) has 1 web.
    fn policy_nodes() -> Vec<Node> {
        vec![
            zoned("n1", "a").label("disk", "hdd").taint("dedicated", "gpu", "NoSchedule").build(),
            zoned("n2", "a").label("disk", "ssd").build(),
            zoned("n3", "b").label("disk", "ssd").build(),
        ]
    }

    fn policy_pods() -> Vec<Pod> {
        [webs("x", 3, "n1"), webs("y", 1, "n3")].concat()
    }

    // Candidates n2, n3: domains a, b, ln 4 = 1.3863.
    // n1 excluded: a 0, b 1.39 -> 1; min 0, max 1: n2 10, n3 0.
    // n1 counted: a 3*1.3863 = 4.16 -> 4, b 1; min 1, max 4: n2 10*(4+1-4)/4 = 2, n3 10*4/4 = 10.
    const N1_EXCLUDED: [i64; 2] = [10, 0];
    const N1_COUNTED: [i64; 2] = [2, 10];

    #[test]
    fn node_affinity_policy() {
        let pod = |policy: Option<&str>| {
            let mut pod = incoming(vec![with(soft(1, ZONE), |c| c.node_affinity_policy = policy.map(String::from))]);
            pod.spec.node_selector.insert("disk".to_string(), "ssd".to_string());
            pod
        };
        let run = |p| scores(policy_nodes(), policy_pods(), p, &["n2", "n3"]);
        assert_eq!(run(pod(None)), N1_EXCLUDED, "Honor by default");
        assert_eq!(run(pod(Some("Ignore"))), N1_COUNTED);
    }

    #[test]
    fn node_taints_policy() {
        let pod = |policy: Option<&str>| {
            incoming(vec![with(soft(1, ZONE), |c| c.node_taints_policy = policy.map(String::from))])
        };
        let run = |p| scores(policy_nodes(), policy_pods(), p, &["n2", "n3"]);
        assert_eq!(run(pod(None)), N1_COUNTED, "Ignore by default");
        assert_eq!(run(pod(Some("Honor"))), N1_EXCLUDED);
        let mut tolerant = pod(Some("Honor"));
        tolerant.spec.tolerations =
            PodBuilder::new("t").toleration("dedicated", "Exists", "", "").build().spec.tolerations;
        assert_eq!(run(tolerant), N1_COUNTED);
    }

    #[test]
    fn match_label_keys() {
        // Two webs rev=v1 on n1 (a), one rev=v2 on n2 (b). ln 4 = 1.3863.
        // keyed on rev (pod v2): a 0, b 1.39 -> 1: n1 10, n2 0.
        // unkeyed: a 2.77 -> 3, b 1: min 1, max 3: n1 10*(3+1-3)/3 = 3, n2 10.
        let nodes = || vec![zoned("n1", "a").build(), zoned("n2", "b").build()];
        let rev = |name: &str, node: &str, r: &str| {
            PodBuilder::new(name).node(node).label("app", "web").label("rev", r).build()
        };
        let pods = || vec![rev("a", "n1", "v1"), rev("b", "n1", "v1"), rev("c", "n2", "v2")];
        let pod = |keys: Option<Vec<String>>| {
            let mut pod = incoming(vec![with(soft(1, ZONE), |c| c.match_label_keys = keys)]);
            pod.metadata.labels.insert("rev".to_string(), "v2".to_string());
            pod
        };
        assert_eq!(scores(nodes(), pods(), pod(Some(vec!["rev".to_string()])), &["n1", "n2"]), [10, 0]);
        assert_eq!(scores(nodes(), pods(), pod(None), &["n1", "n2"]), [3, 10]);
    }
}
