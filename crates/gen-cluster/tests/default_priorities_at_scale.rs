//! The default priorities on `gen-cluster`'s clusters: the same scores on one worker and on
//! sixteen, and the classic weighted sum's ranking on 1,000 generated nodes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

use gen_cluster::generate::{app_pod, generate, node_name, ClusterSpec, Rng};
use predicate_engine::cluster::Snapshot;
use predicate_engine::engine::prioritize::{breakdown, prioritize};
use predicate_engine::engine::{CancelFlag, Candidate, ClusterView, Evaluator};
use predicate_engine::framework::PodContext;
use predicate_engine::policy::Plan;

#[test]
fn parallelism_1_and_16_give_identical_scores_on_5000_nodes() {
    let spec = ClusterSpec { nodes: 5000, pods_per_node: 4, ..ClusterSpec::default() };
    let (nodes, pods) = generate(&spec);
    let snapshot = Snapshot::build(nodes, pods);
    let mut names: Vec<String> = (0..spec.nodes).map(node_name).collect();
    names.reverse(); // request order, not the snapshot's, must be kept
    let candidates: Vec<Candidate> = names
        .iter()
        .map(|n| {
            let (node, nominated) = snapshot.candidate(n).unwrap();
            Candidate::Known(node, nominated)
        })
        .collect();
    let plan = Plan::default_plan();
    assert!(!plan.priorities.is_empty());
    let pod = PodContext::new(app_pod(&mut Rng::new(3), "incoming", "app-7", "", true));
    let view = ClusterView::of(&snapshot);
    let serial = prioritize(&Evaluator::new(1).unwrap(), &plan, &pod, &view, &candidates, &CancelFlag::new()).unwrap();
    let parallel =
        prioritize(&Evaluator::new(16).unwrap(), &plan, &pod, &view, &candidates, &CancelFlag::new()).unwrap();
    assert_eq!(serial, parallel);
    assert!(serial.iter().all(|s| (0..=10).contains(s)));
}

/// Issue 14, item 9: with the default priorities on a generated 1,000-node cluster, the
/// answers rank the nodes as the classic weighted sum does and carry information. The cluster
/// and the pod are `gen-cluster`'s, untouched (`generate::snapshot` builds the model objects
/// `gen-cluster --nodes 1000` writes, Services and ReplicaSets included, and the pending pod
/// is the one `--pending-pod` writes). The classic sum is computed here from each priority's
/// score and the classic weights, not by `combine`.
#[test]
fn default_priorities_on_1000_generated_nodes_rank_as_the_classic_weighted_sum() {
    use gen_cluster::api_objects;
    use predicate_engine::cluster::objects::{Object, Pod};

    let spec = ClusterSpec { nodes: 1000, ..ClusterSpec::default() };
    let snapshot = gen_cluster::generate::snapshot(&spec);
    let pending = serde_json::from_value::<Object<Pod>>(api_objects::pending_pod(&spec)).unwrap().0;
    let pod = PodContext::new(pending);
    let candidates: Vec<Candidate> = (0..spec.nodes).map(|i| Candidate::by_name(&snapshot, node_name(i))).collect();
    let plan = Plan::default_plan();
    let view = ClusterView::of(&snapshot);
    let ev = Evaluator::new(2).unwrap();
    let answers = prioritize(&ev, &plan, &pod, &view, &candidates, &CancelFlag::new()).unwrap();

    // The classic weighted sum, from each priority's scores and the weights of kube-scheduler's
    // classic default provider (1.12-1.17 `algorithmprovider/defaults`), written here.
    let classic_weight = |name: &str| match name {
        "NodePreferAvoidPodsPriority" => 10000,
        "SelectorSpreadPriority"
        | "InterPodAffinityPriority"
        | "LeastRequestedPriority"
        | "BalancedResourceAllocation"
        | "NodeAffinityPriority"
        | "TaintTolerationPriority"
        | "ImageLocalityPriority" => 1,
        other => panic!("{other} is not a default priority"),
    };
    assert_eq!(plan.priorities.len(), 8, "the classic default priorities");
    let per_priority = breakdown(&ev, &plan, &pod, &view, &candidates, &CancelFlag::new()).unwrap();
    let classic: Vec<i64> = (0..candidates.len())
        .map(|c| {
            plan.priorities
                .iter()
                .zip(&per_priority)
                .map(|(p, s)| classic_weight(p.priority.name()) * s[c].unwrap())
                .sum()
        })
        .collect();
    let avoid_slot = plan.priorities.iter().position(|p| p.priority.name() == "NodePreferAvoidPodsPriority").unwrap();
    let avoided: Vec<bool> = per_priority[avoid_slot].iter().map(|s| *s == Some(0)).collect();
    let avoided_count = avoided.iter().filter(|a| **a).count();
    assert!((1..=50).contains(&avoided_count), "about 2% of the nodes avoid the pod: {avoided_count}");
    // One point of the answer's scale in the classic sum: the weights other than the avoid veto's.
    let point = 7;
    let mut apart = 0;
    for i in 0..answers.len() {
        for j in 0..answers.len() {
            // Never ordered against the classic sum (a tie is allowed) ...
            if classic[i] > classic[j] {
                assert!(answers[i] >= answers[j], "{} ({}) vs {} ({})", classic[i], answers[i], classic[j], answers[j]);
            }
            // ... and one point apart there, two nodes not avoided are apart in the answers.
            if classic[i] - classic[j] >= point && !avoided[i] && !avoided[j] {
                assert!(answers[i] > answers[j], "{} ({}) vs {} ({})", classic[i], answers[i], classic[j], answers[j]);
                apart += 1;
            }
        }
    }
    assert!(apart > 100_000, "only {apart} pairs a point apart");
    for (answer, avoided) in answers.iter().zip(&avoided) {
        assert_eq!(*answer == 0, *avoided, "avoided nodes, and only they, answer 0");
    }
    let distinct: std::collections::BTreeSet<i64> = answers.iter().copied().collect();
    assert!(distinct.len() >= 4, "answers {distinct:?}");
}
