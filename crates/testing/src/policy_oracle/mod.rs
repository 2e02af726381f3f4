//! kube-scheduler v1.22.17, the last release that read Policy files, as the oracle of Policies
//! (issue 37): random Policies ([`policies`]) beside the random clusters of [`super::oracle`]
//! (kept to what v1.22 knows, with what the priorities read added: [`cluster`]), the extender's
//! answers on them (its Policy loader, filter and per-priority scores), v1.22's
//! (`e2e/kube-v1.22/oracle`: its own Policy decoding, validation and Policy → plugins translation,
//! its framework's Filter and Score), and the comparison ([`compare`]).
//!
//! Driven by `examples/policy-oracle-compare.rs` (N cases) and `tests/policy_oracle_smoke.rs`
//! (CI). What differs on purpose, and why, is docs/semantics.md ("Against v1.22 with a Policy").

pub mod case_facts;
pub mod cluster;
pub mod compare;
pub mod policies;

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::oracle::{self, Case, Domain, NodeVerdict, Oracle, OracleNode};
use gen_cluster::generate::Rng;
use predicate_engine::engine::{
    filter, prioritize::breakdown, CancelFlag, Candidate, ClusterView, Evaluator, Prepared, Verdict,
};
use predicate_engine::policy::{self, Overrides};

/// One case: a Policy (the extender's file, `order` included) and a cluster with a pod.
#[derive(Debug, Clone)]
pub struct PolicyCase {
    pub policy: Value,
    pub case: Case,
}

impl PolicyCase {
    /// The Policy as the extender reads it.
    pub fn policy_text(&self) -> String {
        self.policy.to_string()
    }

    /// The Policy as v1.22 reads it: without the extender's own fields (`order`,
    /// `predicateOrdering`), which v1.22's strict decoder refuses.
    pub fn v1_22_policy_text(&self) -> String {
        let mut p = self.policy.clone();
        if let Some(map) = p.as_object_mut() {
            map.remove("predicateOrdering");
        }
        if let Some(list) = p["predicates"].as_array_mut() {
            for entry in list.iter_mut().filter_map(Value::as_object_mut) {
                entry.remove("order");
            }
        }
        p.to_string()
    }

    /// The oracle's input line.
    pub fn to_line(&self) -> String {
        json!({"policy": self.v1_22_policy_text(), "objects": self.case.objects, "pod": self.case.pod}).to_string()
    }
}

/// The case of `seed`: the same seed gives the same case on every machine.
pub fn generate(seed: u64) -> PolicyCase {
    let mut case = oracle::generate(&Domain::shared(), seed);
    cluster::to_v1_22(&mut case);
    cluster::without_ephemeral_volumes(&mut case);
    cluster::add_scoring_objects(seed, &mut case);
    cluster::add_field_shapes(seed, &mut case);
    let mut rng = Rng::derive(seed, 37, 0);
    PolicyCase { policy: policies::policy(&mut rng), case }
}

/// v1.22's answer for one case, as its oracle prints it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    /// Why v1.22 refused the Policy (then nothing else is set).
    #[serde(default)]
    pub policy_error: String,
    #[serde(default)]
    pub nodes: BTreeMap<String, OracleNode>,
    /// Per score plugin, per feasible node: the normalised score (0..=100) before the weight.
    #[serde(default)]
    pub scores: BTreeMap<String, BTreeMap<String, i64>>,
    #[serde(default)]
    pub weights: BTreeMap<String, i64>,
    #[serde(default)]
    pub totals: BTreeMap<String, i64>,
    #[serde(default)]
    pub filter_plugins: Vec<String>,
    #[serde(default)]
    pub score_plugins: Vec<String>,
    /// A PreFilter or Filter plugin failed with an error, which ends v1.22's scheduling cycle:
    /// no node verdicts.
    #[serde(default)]
    pub cycle_error: String,
    /// A score plugin failed (v1.22 would not place the pod at all).
    #[serde(default)]
    pub score_error: String,
    #[serde(default)]
    pub error: String,
}

impl Answer {
    /// The plugin v1.22 scores SelectorSpreadPriority with: SelectorSpread, or PodTopologySpread's
    /// system-default spreading when the DefaultPodTopologySpread gate is on (its default in 1.22).
    pub fn selector_spread(&self) -> &'static str {
        if self.score_plugins.iter().any(|p| p == "SelectorSpread") {
            "SelectorSpread"
        } else {
            "PodTopologySpread"
        }
    }
}

/// Runs a batch of cases through the v1.22 oracle.
pub fn run_oracle(oracle: &mut Oracle, cases: &[PolicyCase]) -> Result<Vec<Answer>, String> {
    let lines: Vec<String> = cases.iter().map(PolicyCase::to_line).collect();
    let answers = oracle.exchange(&lines)?;
    let mut out = Vec::with_capacity(cases.len());
    for (case, line) in cases.iter().zip(answers) {
        let answer: Answer =
            serde_json::from_str(&line).map_err(|e| format!("oracle answer for seed {}: {e}", case.case.seed))?;
        if !answer.error.is_empty() {
            return Err(format!("oracle error for seed {}: {}", case.case.seed, answer.error));
        }
        out.push(answer);
    }
    Ok(out)
}

/// One of the extender's priorities: the registry row it is, its weight and its 0..=10 scores of
/// the feasible nodes.
#[derive(Debug, Clone)]
pub struct Scored {
    pub row: &'static str,
    pub weight: i64,
    pub scores: BTreeMap<String, i64>,
}

/// The extender's answer for one case.
#[derive(Debug, Clone, Default)]
pub struct Ours {
    /// Why the extender's loader refused the Policy.
    pub policy_error: Option<String>,
    pub verdicts: BTreeMap<String, NodeVerdict>,
    pub priorities: Vec<Scored>,
}

/// The registry rows of a Policy's priorities, in the order the plan holds them: the file's
/// entries, or the default set when the file has none.
fn priority_rows(policy: &Value) -> Vec<&'static str> {
    match policy["priorities"].as_array() {
        Some(entries) => entries
            .iter()
            .map(|e| {
                predicate_engine::registry::validate::priority_plugin(
                    e["name"].as_str().unwrap_or_default(),
                    e.get("argument"),
                )
                .unwrap_or("?")
            })
            .collect(),
        None => predicate_engine::registry::PRIORITIES
            .iter()
            .filter(|r| r.default_weight.is_some())
            .map(|r| r.name)
            .collect(),
    }
}

/// The extender on a case: its Policy loader, its filter on every node, and each priority's
/// scores of the nodes that fit (the ones kube-scheduler would send to `/prioritize`).
pub fn extender(evaluator: &Evaluator, case: &PolicyCase) -> Result<Ours, String> {
    let plan = match policy::parse("policy", case.policy_text().as_bytes(), Overrides::default()) {
        Ok(plan) => plan,
        Err(e) => return Ok(Ours { policy_error: Some(e.to_string()), ..Ours::default() }),
    };
    let (snapshot, pod) = oracle::model(&case.case, predicate_engine::cluster::SchedulerVersion::default())?;
    let names = case.case.node_names();
    let view = ClusterView::of(&snapshot);
    let candidates: Vec<Candidate> = names.iter().map(|n| Candidate::by_name(&snapshot, n.clone())).collect();
    let prepared = Prepared::new(&plan, pod, &view);
    let filtered =
        filter(evaluator, &plan, &prepared, &candidates, &CancelFlag::new(), false).map_err(|e| e.to_string())?;
    let mut out = Ours::default();
    let mut feasible = Vec::new();
    for ((name, verdict), candidate) in names.into_iter().zip(filtered.verdicts).zip(candidates) {
        let v = match verdict {
            Verdict::Fits => {
                feasible.push(candidate);
                NodeVerdict { fits: true, unresolvable: false, reasons: Vec::new() }
            }
            Verdict::Fails(reasons) => NodeVerdict {
                fits: false,
                unresolvable: reasons.iter().any(|r| !r.is_resolvable()),
                reasons: reasons.iter().map(|r| r.message.to_string()).collect(),
            },
            Verdict::Unknown => return Err(format!("node {name} unknown to the model")),
        };
        out.verdicts.insert(name, v);
    }
    if feasible.is_empty() {
        return Ok(out);
    }
    let per_priority =
        breakdown(evaluator, &plan, &prepared.pod, &view, &feasible, &CancelFlag::new()).map_err(|e| e.to_string())?;
    let rows = priority_rows(&case.policy);
    if rows.len() != plan.priorities.len() {
        return Err(format!("{} priority rows for {} planned priorities", rows.len(), plan.priorities.len()));
    }
    for ((weighted, scores), row) in plan.priorities.iter().zip(per_priority).zip(rows) {
        let scores = feasible.iter().zip(scores).map(|(c, s)| (c.name().to_string(), s.unwrap_or(0))).collect();
        out.priorities.push(Scored { row, weight: weighted.weight, scores });
    }
    Ok(out)
}

/// A smaller case that still fails `fails`: the Policy's entries and settings dropped one at a
/// time, then the cluster shrunk as [`oracle::shrink`] does, with the Policy kept.
pub fn shrink(case: &PolicyCase, fails: &mut dyn FnMut(&PolicyCase) -> bool) -> PolicyCase {
    let mut best = case.clone();
    loop {
        let mut progressed = false;
        for list in ["predicates", "priorities"] {
            let mut i = 0;
            while i < best.policy[list].as_array().map_or(0, Vec::len) {
                let mut c = best.clone();
                if let Some(entries) = c.policy[list].as_array_mut() {
                    entries.remove(i);
                }
                if fails(&c) {
                    best = c;
                    progressed = true;
                } else {
                    i += 1;
                }
            }
        }
        for key in ["alwaysCheckAllPredicates", "hardPodAffinitySymmetricWeight", "predicates", "priorities"] {
            let mut c = best.clone();
            if c.policy.as_object_mut().and_then(|m| m.remove(key)).is_some() && fails(&c) {
                best = c;
                progressed = true;
            }
        }
        if !progressed {
            break;
        }
    }
    let policy = best.policy.clone();
    let cluster =
        oracle::shrink(&best.case, &mut |c: &Case| fails(&PolicyCase { policy: policy.clone(), case: c.clone() }));
    PolicyCase { policy, case: cluster }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_22_reads_the_policy_without_the_extenders_own_fields() {
        let mut case = generate(1);
        case.policy = json!({"kind": "Policy", "apiVersion": "v1", "predicateOrdering": "dynamic",
            "predicates": [{"name": "HostName", "order": 2}, {"name": "PodFitsResources"}]});
        let text: Value = serde_json::from_str(&case.v1_22_policy_text()).unwrap();
        assert_eq!(
            text,
            json!({"kind": "Policy", "apiVersion": "v1",
            "predicates": [{"name": "HostName"}, {"name": "PodFitsResources"}]})
        );
        let line: Value = serde_json::from_str(&case.to_line()).unwrap();
        assert_eq!(line["policy"].as_str(), Some(case.v1_22_policy_text().as_str()));
    }

    /// The generated Policies reach what the comparison is for: most load, some are refused, most
    /// set priorities, and the extender scores the feasible nodes of many cases.
    #[test]
    fn the_generated_policies_mostly_load_and_score() {
        let evaluator = Evaluator::new(1).unwrap();
        let (mut refused, mut scored, mut always_all, mut ordered) = (0, 0, 0, 0);
        let cases = 2000;
        for seed in 0..cases {
            let case = generate(seed);
            always_all += usize::from(case.policy["alwaysCheckAllPredicates"] == true);
            ordered += usize::from(case.policy_text().contains("\"order\""));
            let ours = extender(&evaluator, &case).unwrap();
            refused += usize::from(ours.policy_error.is_some());
            scored += usize::from(ours.priorities.iter().any(|p| p.scores.len() > 1));
        }
        assert!((cases / 50..cases / 4).contains(&(refused as u64)), "{refused} refused");
        assert!(scored as u64 > cases / 5, "{scored} scored");
        eprintln!("{refused} refused, {scored} scored, {always_all} check all, {ordered} ordered");
        assert!(always_all as u64 > cases / 3 && (ordered as u64) > cases / 20, "{always_all} {ordered}");
    }
}
