//! Property test of the model's pod bookkeeping: after any sequence of pod adds, updates and
//! deletes (some published, that is cloned and kept, between changes), every index of a snapshot
//! says what a brute-force walk over the pods it should hold says: the pod map, the label
//! indexes, the anti-affinity and scoring-affinity lists, each node's pods and sums and its
//! nominated pods. Snapshots published earlier still say what they said then.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Affinity, PodAffinity, PodAffinityTerm, PodAntiAffinity, WeightedPodAffinityTerm};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector as K8sSelector, LabelSelectorRequirement};
use proptest::prelude::*;

use crate::cluster::objects::Pod;
use crate::cluster::{Labels, ObjectKind, Snapshot};
use crate::labels::selectors::LabelSelector;
use crate::testing::{NodeBuilder, PodBuilder};

const NODES: [&str; 3] = ["n0", "n1", "n2"];
/// A name no node object has: its pods are kept but belong to no known node.
const UNKNOWN_NODE: &str = "n3";
const LABELS: [(&str, &[&str]); 3] = [("app", &["a", "b"]), ("tier", &["x", "y"]), ("part", &["p"])];

#[derive(Debug, Clone)]
enum Placement {
    Assigned(usize),
    Nominated(usize),
    Pending,
}

#[derive(Debug, Clone)]
enum AntiAffinity {
    None,
    /// A selector with `app=<value>`: filed under it.
    Equality(&'static str),
    /// A selector with only `app Exists`: filed with the unindexed ones.
    Exists,
}

#[derive(Debug, Clone)]
enum Op {
    Upsert {
        pod: usize,
        namespace: usize,
        /// Per label key, none or an index into its values.
        labels: [Option<usize>; 3],
        placement: Placement,
        terminal: bool,
        cpu: u8,
        anti: AntiAffinity,
        scoring: bool,
    },
    Delete {
        pod: usize,
        namespace: usize,
    },
    /// Keep a copy of the snapshot as it is now (a request reading it), to be checked at the end.
    Publish,
}

fn op() -> impl Strategy<Value = Op> {
    let placement = prop_oneof![
        4 => (0..NODES.len() + 1).prop_map(Placement::Assigned),
        1 => (0..NODES.len()).prop_map(Placement::Nominated),
        1 => Just(Placement::Pending),
    ];
    let anti = prop_oneof![
        4 => Just(AntiAffinity::None),
        1 => prop_oneof![Just("a"), Just("b")].prop_map(AntiAffinity::Equality),
        1 => Just(AntiAffinity::Exists),
    ];
    let label = || proptest::option::of(0..2usize);
    let upsert = (0..8usize, 0..2usize, [label(), label(), label()], placement, proptest::bool::weighted(0.1), 0..4u8)
        .prop_flat_map(move |(pod, namespace, labels, placement, terminal, cpu)| {
            (anti.clone(), proptest::bool::weighted(0.2)).prop_map(move |(anti, scoring)| Op::Upsert {
                pod,
                namespace,
                labels,
                placement: placement.clone(),
                terminal,
                cpu,
                anti,
                scoring,
            })
        });
    prop_oneof![
        6 => upsert,
        3 => (0..8usize, 0..2usize).prop_map(|(pod, namespace)| Op::Delete { pod, namespace }),
        1 => Just(Op::Publish),
    ]
}

fn namespace(i: usize) -> &'static str {
    ["default", "team-b"][i]
}

fn build(op: &Op) -> Option<Pod> {
    let Op::Upsert { pod, namespace: ns, labels, placement, terminal, cpu, anti, scoring } = op else { return None };
    let name = format!("p{pod}");
    let mut b = PodBuilder::new(&name).namespace(namespace(*ns)).uid(&format!("{}/{name}", namespace(*ns)));
    for ((key, values), value) in LABELS.iter().zip(labels) {
        if let Some(v) = value {
            b = b.label(key, values[v % values.len()]);
        }
    }
    b = match placement {
        Placement::Assigned(n) => b.node([NODES.as_slice(), &[UNKNOWN_NODE]].concat()[*n]),
        Placement::Nominated(n) => b.nominated(NODES[*n]),
        Placement::Pending => b,
    };
    if *terminal {
        b = b.phase("Succeeded");
    }
    let mut pod = b.req(&[("cpu", &format!("{}00m", cpu))]).build();
    let selector = match anti {
        AntiAffinity::None => None,
        AntiAffinity::Equality(app) => {
            Some(K8sSelector { match_labels: Some([("app".into(), app.to_string())].into()), match_expressions: None })
        }
        AntiAffinity::Exists => Some(K8sSelector {
            match_labels: None,
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: "app".into(),
                operator: "Exists".into(),
                values: None,
            }]),
        }),
    };
    let term = |selector: Option<K8sSelector>| PodAffinityTerm {
        label_selector: selector,
        topology_key: "kubernetes.io/hostname".into(),
        ..Default::default()
    };
    let mut affinity = Affinity::default();
    if selector.is_some() {
        affinity.pod_anti_affinity = Some(PodAntiAffinity {
            required_during_scheduling_ignored_during_execution: Some(vec![term(selector)]),
            ..Default::default()
        });
    }
    if *scoring {
        affinity.pod_affinity = Some(PodAffinity {
            preferred_during_scheduling_ignored_during_execution: Some(vec![WeightedPodAffinityTerm {
                weight: 1,
                pod_affinity_term: term(None),
            }]),
            ..Default::default()
        });
    }
    if affinity != Affinity::default() {
        pod.spec.affinity = Some(affinity);
    }
    Some(pod)
}

/// `namespace/name` of pods, sorted.
fn names<'a>(pods: impl IntoIterator<Item = &'a Pod>) -> Vec<String> {
    let mut names: Vec<String> = pods.into_iter().map(Pod::key).collect();
    names.sort();
    names
}

/// What the snapshot says matches what the pods say.
fn check(snapshot: &Snapshot, reference: &BTreeMap<(String, String), Pod>) -> Result<(), TestCaseError> {
    let pods: Vec<&Pod> = reference.values().collect();
    let assigned: Vec<&Pod> = pods.iter().copied().filter(|p| !p.spec.node_name.is_empty()).collect();

    let mut keys = snapshot.keys(ObjectKind::Pod);
    keys.sort();
    prop_assert_eq!(keys, reference.keys().cloned().collect::<Vec<_>>());
    prop_assert_eq!(snapshot.pod_count(), reference.len());
    for ((ns, name), pod) in reference {
        let kept = snapshot.pod(ns, name).map(|p| p.pod.key());
        prop_assert_eq!(kept, Some(pod.key()));
    }

    for (key, values) in LABELS {
        for value in values.iter().chain(&["absent"]) {
            let indexed = names(snapshot.pods_labelled(key, value).map(|p| &p.pod));
            let walked =
                names(assigned.iter().copied().filter(|p| p.metadata.labels.get(key).is_some_and(|v| v == value)));
            prop_assert_eq!(indexed, walked, "pods labelled {}={}", key, value);
        }
    }

    let scoring = names(snapshot.pods_with_scoring_affinity().map(|p| &p.pod));
    prop_assert_eq!(scoring, names(assigned.iter().copied().filter(|p| p.has_scoring_affinity_terms())));

    for labels in [vec![], vec![("app", "a")], vec![("app", "b"), ("tier", "x")], vec![("tier", "y")]] {
        let labels: Labels = labels.into_iter().collect();
        let candidates = snapshot.anti_affinity_candidates(&labels);
        let indexed = names(candidates.iter().map(|p| &p.pod));
        prop_assert_eq!(indexed.len(), candidates.len(), "each candidate once");
        let walked = names(assigned.iter().copied().filter(|p| {
            p.required_anti_affinity_terms().iter().any(|t| {
                let selector = t.label_selector.as_ref().map(LabelSelector::compile);
                match selector.as_ref().and_then(|s| s.equalities().next()) {
                    Some((k, v)) => labels.get(k).is_some_and(|l| l == v),
                    None => true,
                }
            })
        }));
        prop_assert_eq!(indexed, walked, "anti-affinity candidates of {:?}", labels);
    }

    for node in NODES {
        let info = snapshot.node_info(node);
        prop_assert!(info.is_some(), "node {} is known", node);
        let Some(info) = info else { continue };
        let on_node: Vec<&Pod> = assigned.iter().copied().filter(|p| p.spec.node_name == node).collect();
        prop_assert_eq!(names(info.pods.pods().iter().map(|p| &p.pod)), names(on_node.iter().copied()));
        let cpu: i64 = on_node
            .iter()
            .map(|p| {
                crate::cluster::pod_requests::placed_requests(p, crate::cluster::SchedulerVersion::default())
                    .0
                    .milli_cpu
            })
            .sum();
        prop_assert_eq!(info.pods.requested().milli_cpu, cpu, "cpu requested on {}", node);
        let nominated = names(snapshot.nominated_on(node).iter().map(|p| &p.pod));
        let walked =
            names(pods.iter().copied().filter(|p| p.spec.node_name.is_empty() && p.status.nominated_node_name == node));
        prop_assert_eq!(nominated, walked, "pods nominated to {}", node);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn every_index_matches_a_walk_of_the_pods(ops in proptest::collection::vec(op(), 1..60)) {
        let mut snapshot = Snapshot::build(NODES.iter().map(|n| NodeBuilder::new(n).build()), []);
        let mut reference: BTreeMap<(String, String), Pod> = BTreeMap::new();
        let mut published = Vec::new();
        for op in &ops {
            match op {
                Op::Upsert { .. } => {
                    let Some(pod) = build(op) else { continue };
                    let key = (pod.metadata.namespace.clone(), pod.metadata.name.clone());
                    if pod.is_terminal() {
                        reference.remove(&key);
                    } else {
                        reference.insert(key, pod.clone());
                    }
                    snapshot.upsert_pod(pod);
                }
                Op::Delete { pod, namespace: ns } => {
                    let key = (namespace(*ns).to_string(), format!("p{pod}"));
                    reference.remove(&key);
                    snapshot.remove_pod(&key);
                }
                Op::Publish => published.push((snapshot.clone(), reference.clone())),
            }
            check(&snapshot, &reference)?;
        }
        for (snapshot, reference) in &published {
            check(snapshot, reference)?;
        }
    }
}
