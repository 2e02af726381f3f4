//! CheckServiceAffinity: pods of one Service agree on the policy's labels, with the semantics of
//! the Policy-era predicate (kube-scheduler 1.14-1.17, `pkg/scheduler/algorithm/predicates`:
//! `checkServiceAffinity` in `predicates.go`, `serviceAffinityMetadataProducer` and
//! `serviceAffinityMetadata.addPod` in `metadata.go`, the helpers in `utils.go`).
//!
//! For each of the policy's labels the pod's value is taken from its nodeSelector when that fixes
//! it; otherwise, when a Service of the pod's namespace selects the pod and a pod "of the service"
//! already runs, from the labels of that pod's node (a label that node lacks stays free). The node
//! fits when it has every value so fixed.
//!
//! As upstream, the pods "of the service" are the assigned pods of the pod's namespace whose labels
//! include all the incoming pod's labels (`CreateSelectorFromLabels(pod.Labels)`; a pod without
//! labels matches every pod), not the pods the Service's own selector picks. Upstream takes the
//! first such pod in its lister's order; here the one on the node with the smallest name, so the
//! answer does not depend on hash order.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::cluster::objects::Pod;
use crate::cluster::{NodeInfo, PodInfo};
use crate::framework::ClusterView;
use crate::framework::PodContext;
use crate::framework::{Cause, ReasonKind};
use serde::Deserialize;

use crate::framework::{ArgumentError, Failures, Predicate, PredicateArgs, PredicateState, Reason};
use crate::labels::selectors::LabelSelector;
use crate::plugin_helpers::services::pod_services;

/// Upstream's `ErrServiceAffinityViolated`; not in its unresolvable list.
pub const ERR_SERVICE_AFFINITY_VIOLATED: Reason =
    Reason::of(Cause::ServiceAffinity, ReasonKind::Resolvable, "node(s) didn't match service affinity");

/// What the predicate computes once per request.
#[derive(Debug, Clone, Default)]
pub struct State {
    /// Whether a Service of the pod's namespace selects the pod. Without one only the pod's
    /// nodeSelector fixes the labels.
    selected_by_service: bool,
    /// The nodes running pods of the service, by name, with how many each runs: the first with a
    /// pod left is the node of "the first pod". Kept per node so that preemption can take victims
    /// away (upstream's `removePod`) without walking the cluster again.
    fellow_nodes: Arc<BTreeMap<String, FellowNode>>,
    /// The node of the first nominated pod of the service the double pass added: it decides only
    /// when no placed pod of the service runs (upstream appends it after them).
    added_node: Option<Arc<BTreeMap<String, String>>>,
}

/// A node that runs pods of the service.
#[derive(Debug, Clone)]
struct FellowNode {
    pods: usize,
    labels: Arc<BTreeMap<String, String>>,
}

/// The pods that count as the incoming pod's fellows: upstream's
/// `CreateSelectorFromLabels(pod.Labels)`, every label of the pod with the same value (none: all).
fn fellows_of(pod: &Pod) -> LabelSelector {
    LabelSelector::from_map(&pod.metadata.labels)
}

impl State {
    /// Computes the state for the incoming pod over the whole cluster.
    pub fn compute(pod: &PodContext, view: &ClusterView<'_>) -> Self {
        let pod = &pod.pod;
        let namespace = &pod.metadata.namespace;
        let selected_by_service = pod_services(pod, view).next().is_some();
        if !selected_by_service {
            return State::default();
        }
        let fellows = fellows_of(pod);
        let mut fellow_nodes = BTreeMap::new();
        for node in view.nodes() {
            let pods = node
                .pods
                .pods()
                .iter()
                .filter(|p| {
                    p.pod.metadata.namespace == *namespace
                        && !p.pod.is_same_pod(pod)
                        && fellows.matches(&p.pod.metadata.labels)
                })
                .count();
            if pods > 0 {
                let labels = Arc::new(node.node().metadata.labels.clone());
                fellow_nodes.insert(node.name().to_string(), FellowNode { pods, labels });
            }
        }
        State { selected_by_service, fellow_nodes: Arc::new(fellow_nodes), added_node: None }
    }

    /// The labels of the node running the first pod of the service, when one runs.
    fn first_pod_node(&self) -> Option<&BTreeMap<String, String>> {
        let placed = self.fellow_nodes.values().find(|n| n.pods > 0).map(|n| n.labels.as_ref());
        placed.or(self.added_node.as_deref())
    }

    /// Whether `other` counts as a pod of the incoming pod's service.
    fn is_fellow(&self, incoming: &Pod, other: &Pod) -> bool {
        self.selected_by_service
            && other.metadata.namespace == incoming.metadata.namespace
            && !other.is_same_pod(incoming)
            && fellows_of(incoming).matches(&other.metadata.labels)
    }
}

impl PredicateState for State {
    /// As if `added` ran on `node` (the nominated-pod pass). Upstream appends the pod to the
    /// matching pods, so it only decides when no other pod of the service runs; its node is `node`
    /// (upstream would look the nominated pod's empty `spec.nodeName` up and fail).
    fn add_pod(&mut self, pod: &PodContext, added: &PodInfo, node: &NodeInfo) {
        if self.first_pod_node().is_some() || !self.is_fellow(&pod.pod, &added.pod) {
            return;
        }
        self.added_node = Some(Arc::new(node.node().metadata.labels.clone()));
    }

    /// As if `removed` no longer ran on `node` (a preemption victim): upstream's `removePod`,
    /// which drops it from the matching pods, so the next pod of the service may become the first.
    fn remove_pod(&mut self, pod: &PodContext, removed: &PodInfo, node: &NodeInfo) {
        if !self.is_fellow(&pod.pod, &removed.pod) {
            return;
        }
        if let Some(entry) = Arc::make_mut(&mut self.fellow_nodes).get_mut(node.name()) {
            entry.pods = entry.pods.saturating_sub(1);
        }
    }
}

#[derive(Debug)]
pub struct CheckServiceAffinity {
    /// The Policy entry's name: upstream lets a Policy register it under any name.
    name: String,
    /// The node labels the pods of one service must agree on (`serviceAffinity.labels`).
    pub labels: Vec<String>,
}

impl CheckServiceAffinity {
    pub fn new(name: &str, labels: Vec<String>) -> Self {
        CheckServiceAffinity { name: name.to_string(), labels }
    }
}

/// The registry name.
pub const NAME: &str = "CheckServiceAffinity";

/// The Policy argument, under `serviceAffinity`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Argument {
    labels: Vec<String>,
}

/// Builds it from its Policy entry (the registry makes sure it has its argument).
pub fn build(args: &PredicateArgs<'_>) -> Result<Arc<dyn crate::framework::AnyPredicate>, ArgumentError> {
    let argument: Argument = args.required("serviceAffinity", NAME)?;
    if argument.labels.is_empty() {
        return Err(ArgumentError::new("argument.serviceAffinity.labels", "must list at least one label"));
    }
    Ok(Arc::new(CheckServiceAffinity::new(args.name, argument.labels)))
}

impl Predicate for CheckServiceAffinity {
    type State = State;

    fn name(&self) -> &str {
        &self.name
    }

    fn plugin(&self) -> &str {
        NAME
    }

    /// Not in upstream's unresolvable list.
    fn failures(&self) -> Failures {
        Failures::MaybeResolvable
    }

    fn prepare(&self, pod: &PodContext, view: &ClusterView<'_>) -> State {
        State::compute(pod, view)
    }

    fn check(&self, pod: &PodContext, state: &State, node: &NodeInfo, reasons: &mut Vec<Reason>) {
        let from_service = state.first_pod_node();
        let node_selector = &pod.pod.spec.node_selector;
        let node_labels = &node.node().metadata.labels;
        let violated = self.labels.iter().any(|label| {
            let wanted = node_selector.get(label).or_else(|| from_service.and_then(|l| l.get(label)));
            wanted.is_some_and(|value| node_labels.get(label) != Some(value))
        });
        if violated {
            reasons.push(ERR_SERVICE_AFFINITY_VIOLATED);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::objects::Node;
    use crate::cluster::{ClusterObject, Snapshot};
    use crate::engine::fits::fits_on_node;
    use crate::engine::{Plan, Prepared};
    use crate::testing::{NodeBuilder, PodBuilder};
    use k8s_openapi::api::core::v1::{Service, ServiceSpec};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    const ZONE: &str = "zone";
    const REGION: &str = "region";
    const FAIL: Reason = ERR_SERVICE_AFFINITY_VIOLATED;

    fn service(namespace: &str, name: &str, selector: Option<&[(&str, &str)]>) -> Service {
        Service {
            metadata: ObjectMeta {
                name: Some(name.to_string()),
                namespace: Some(namespace.to_string()),
                ..ObjectMeta::default()
            },
            spec: Some(ServiceSpec {
                selector: selector.map(|s| s.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()),
                ..ServiceSpec::default()
            }),
            ..Service::default()
        }
    }

    fn web_service() -> Service {
        service("default", "web", Some(&[("app", "web")]))
    }

    /// Nodes n1 (region r1, zone a), n2 (r1, b), n3 (r2, a), n4 (r2, no zone).
    fn nodes() -> Vec<Node> {
        vec![
            NodeBuilder::new("n1").label(REGION, "r1").label(ZONE, "a").build(),
            NodeBuilder::new("n2").label(REGION, "r1").label(ZONE, "b").build(),
            NodeBuilder::new("n3").label(REGION, "r2").label(ZONE, "a").build(),
            NodeBuilder::new("n4").label(REGION, "r2").build(),
        ]
    }

    fn web(name: &str) -> PodBuilder {
        PodBuilder::new(name).label("app", "web")
    }

    fn zone_predicate() -> CheckServiceAffinity {
        CheckServiceAffinity::new("CheckServiceAffinity", vec![ZONE.to_string()])
    }

    /// The nodes the pod fits, as the engine finds them with this one predicate.
    fn fitting(predicate: CheckServiceAffinity, services: Vec<Service>, pods: Vec<Pod>, incoming: Pod) -> Vec<String> {
        let mut snapshot = Snapshot::build(nodes(), pods);
        for s in services {
            snapshot.upsert(ClusterObject::Service(Box::new(s)));
        }
        let plan = Plan::of_predicates(vec![Arc::new(predicate)]);
        let ctx = Prepared::new(&plan, incoming, &ClusterView::of(&snapshot));
        snapshot
            .node_names()
            .into_iter()
            .filter(|name| {
                let node = snapshot.node_info(name).unwrap();
                let reasons = fits_on_node(&plan, &ctx, &node, snapshot.nominated_on(name)).unwrap();
                assert!(reasons.is_empty() || reasons == [FAIL], "{name}: {reasons:?}");
                reasons.is_empty()
            })
            .map(String::from)
            .collect()
    }

    struct Case {
        name: &'static str,
        labels: &'static [&'static str],
        services: Vec<Service>,
        pods: Vec<Pod>,
        incoming: Pod,
        want: &'static [&'static str],
    }

    const ALL: &[&str] = &["n1", "n2", "n3", "n4"];

    #[test]
    fn service_affinity() {
        let cases = vec![
            Case {
                name: "no service: fits everywhere",
                labels: &[ZONE],
                services: vec![],
                pods: vec![web("old").node("n2").build()],
                incoming: web("p").build(),
                want: ALL,
            },
            Case {
                name: "no service: the nodeSelector still fixes its labels",
                labels: &[ZONE],
                services: vec![],
                pods: vec![],
                incoming: web("p").node_selector(ZONE, "b").build(),
                want: &["n2"],
            },
            Case {
                name: "service without running pods: fits everywhere",
                labels: &[ZONE],
                services: vec![web_service()],
                pods: vec![],
                incoming: web("p").build(),
                want: ALL,
            },
            Case {
                name: "service without running pods: only the nodeSelector constrains",
                labels: &[ZONE, REGION],
                services: vec![web_service()],
                pods: vec![],
                incoming: web("p").node_selector(REGION, "r2").build(),
                want: &["n3", "n4"],
            },
            Case {
                name: "an existing pod fixes the zone",
                labels: &[ZONE],
                services: vec![web_service()],
                pods: vec![web("old").node("n1").build()],
                incoming: web("p").build(),
                want: &["n1", "n3"],
            },
            Case {
                name: "an existing pod fixes zone and region",
                labels: &[ZONE, REGION],
                services: vec![web_service()],
                pods: vec![web("old").node("n1").build()],
                incoming: web("p").build(),
                want: &["n1"],
            },
            Case {
                name: "the nodeSelector overrides the existing pod's node for its labels",
                labels: &[ZONE, REGION],
                services: vec![web_service()],
                pods: vec![web("old").node("n1").build()],
                incoming: web("p").node_selector(ZONE, "b").build(),
                want: &["n2"],
            },
            Case {
                name: "a label the existing pod's node lacks is not constrained",
                labels: &[ZONE, REGION],
                services: vec![web_service()],
                pods: vec![web("old").node("n4").build()],
                incoming: web("p").build(),
                want: &["n3", "n4"],
            },
            Case {
                name: "a node lacking a constrained label fails",
                labels: &[ZONE],
                services: vec![web_service()],
                pods: vec![web("old").node("n3").build()],
                incoming: web("p").build(),
                want: &["n1", "n3"],
            },
            Case {
                name: "the first pod is the one on the smallest node name",
                labels: &[ZONE],
                services: vec![web_service()],
                pods: vec![web("later").node("n2").build(), web("first").node("n1").build()],
                incoming: web("p").build(),
                want: &["n1", "n3"],
            },
            Case {
                name: "a service of another namespace does not select the pod",
                labels: &[ZONE],
                services: vec![service("other", "web", Some(&[("app", "web")]))],
                pods: vec![web("old").node("n2").build()],
                incoming: web("p").build(),
                want: ALL,
            },
            Case {
                name: "a service selecting other pods does not count",
                labels: &[ZONE],
                services: vec![service("default", "db", Some(&[("app", "db")]))],
                pods: vec![web("old").node("n2").build()],
                incoming: web("p").build(),
                want: ALL,
            },
            Case {
                name: "a service with a nil selector selects nothing",
                labels: &[ZONE],
                services: vec![service("default", "headless", None)],
                pods: vec![web("old").node("n2").build()],
                incoming: web("p").build(),
                want: ALL,
            },
            Case {
                name: "a service with an empty selector selects every pod",
                labels: &[ZONE],
                services: vec![service("default", "all", Some(&[]))],
                pods: vec![web("old").node("n2").build()],
                incoming: web("p").build(),
                want: &["n2"],
            },
            Case {
                name: "pods of other namespaces do not fix anything",
                labels: &[ZONE],
                services: vec![web_service()],
                pods: vec![web("old").namespace("other").node("n2").build()],
                incoming: web("p").build(),
                want: ALL,
            },
            Case {
                name: "fellows carry every label of the incoming pod (upstream's selector)",
                labels: &[ZONE],
                services: vec![web_service()],
                pods: vec![
                    web("old-rev").label("rev", "1").node("n2").build(),
                    web("same-rev").label("rev", "2").node("n3").build(),
                ],
                incoming: web("p").label("rev", "2").build(),
                want: &["n1", "n3"],
            },
            Case {
                name: "a pod with fewer labels is not a fellow",
                labels: &[ZONE],
                services: vec![web_service()],
                pods: vec![web("old-rev").label("rev", "1").node("n2").build()],
                incoming: web("p").label("rev", "2").build(),
                want: ALL,
            },
        ];
        for c in cases {
            let predicate =
                CheckServiceAffinity::new("CheckServiceAffinity", c.labels.iter().map(|l| l.to_string()).collect());
            assert_eq!(fitting(predicate, c.services, c.pods, c.incoming), c.want, "{}", c.name);
        }
    }

    #[test]
    fn custom_name() {
        let p = CheckServiceAffinity::new("ZoneAffinity", vec![ZONE.to_string()]);
        assert_eq!(p.name(), "ZoneAffinity");
        assert_eq!(p.plugin(), "CheckServiceAffinity");
        // The plan computes the state for it under its custom name.
        let got = fitting(p, vec![web_service()], vec![web("old").node("n2").build()], web("p").build());
        assert_eq!(got, ["n2"]);
    }

    #[test]
    fn nominated_pods_join_the_service_pods() {
        let mut snapshot = Snapshot::build(nodes(), []);
        snapshot.upsert(ClusterObject::Service(Box::new(web_service())));
        let ctx = PodContext::new(web("p").build());
        let mut state = State::compute(&ctx, &ClusterView::of(&snapshot));
        assert!(state.selected_by_service && state.first_pod_node().is_none());
        let nominee = |name: &str, app: &str| Arc::new(PodInfo::new(PodBuilder::new(name).label("app", app).build()));
        state.add_pod(&ctx, &nominee("db", "db"), &snapshot.node_info("n1").unwrap());
        assert!(state.first_pod_node().is_none(), "not a fellow");
        state.add_pod(&ctx, &nominee("w", "web"), &snapshot.node_info("n2").unwrap());
        assert_eq!(state.first_pod_node().and_then(|l| l.get(ZONE)).map(String::as_str), Some("b"));
        state.add_pod(&ctx, &nominee("w2", "web"), &snapshot.node_info("n1").unwrap());
        assert_eq!(
            state.first_pod_node().and_then(|l| l.get(ZONE)).map(String::as_str),
            Some("b"),
            "appended after the first"
        );

        // Without a service, nominated pods change nothing.
        let lone = Snapshot::build(nodes(), []);
        let mut state = State::compute(&ctx, &ClusterView::of(&lone));
        state.add_pod(&ctx, &nominee("w", "web"), &lone.node_info("n2").unwrap());
        assert!(state.first_pod_node().is_none());
    }

    #[test]
    fn removed_pods_leave_the_service_pods() {
        // web runs on n1 (zone a) twice and on n2 (zone b) once; n1 comes first by name.
        let pods = vec![web("w1").node("n1").build(), web("w2").node("n1").build(), web("w3").node("n2").build()];
        let mut snapshot = Snapshot::build(nodes(), pods.clone());
        snapshot.upsert(ClusterObject::Service(Box::new(web_service())));
        let ctx = PodContext::new(web("p").build());
        let mut state = State::compute(&ctx, &ClusterView::of(&snapshot));
        let zone = |s: &State| s.first_pod_node().and_then(|l| l.get(ZONE)).cloned();
        assert_eq!(zone(&state).as_deref(), Some("a"));
        let n1 = snapshot.node_info("n1").unwrap();
        let other = Arc::new(PodInfo::new(PodBuilder::new("db").label("app", "db").node("n1").build()));
        state.remove_pod(&ctx, &other, &n1);
        state.remove_pod(&ctx, &Arc::new(PodInfo::new(pods[0].clone())), &n1);
        assert_eq!(zone(&state).as_deref(), Some("a"), "one web pod still runs on n1");
        state.remove_pod(&ctx, &Arc::new(PodInfo::new(pods[1].clone())), &n1);
        assert_eq!(zone(&state).as_deref(), Some("b"), "the next pod of the service is on n2");
        let n2 = snapshot.node_info("n2").unwrap();
        state.remove_pod(&ctx, &Arc::new(PodInfo::new(pods[2].clone())), &n2);
        assert_eq!(zone(&state), None, "no pod of the service runs: the pod is free");
        // The state computed for the request is not changed by the copy.
        assert_eq!(zone(&State::compute(&ctx, &ClusterView::of(&snapshot))).as_deref(), Some("a"));
    }

    #[test]
    fn the_incoming_pod_is_not_its_own_fellow() {
        // The pod as the model has it (e.g. re-sent while still known) must not fix its own zone.
        let mut snapshot = Snapshot::build(nodes(), [web("p").node("n2").build()]);
        snapshot.upsert(ClusterObject::Service(Box::new(web_service())));
        let ctx = PodContext::new(web("p").build());
        let state = State::compute(&ctx, &ClusterView::of(&snapshot));
        assert!(state.first_pod_node().is_none());
    }

    #[test]
    fn without_a_service_only_the_node_selector_counts() {
        let node = NodeBuilder::new("n").label(ZONE, "a").info();
        let reasons_of = crate::predicates::reasons_of;
        assert!(reasons_of(&zone_predicate(), web("p").build(), &node).is_empty());
        assert!(reasons_of(&zone_predicate(), web("p").node_selector(ZONE, "a").build(), &node).is_empty());
        assert_eq!(reasons_of(&zone_predicate(), web("p").node_selector(ZONE, "b").build(), &node), vec![FAIL]);
    }

    #[test]
    fn fitting_nodes_do_not_allocate_reasons() {
        let mut snapshot = Snapshot::build(nodes(), [web("old").node("n1").build()]);
        snapshot.upsert(ClusterObject::Service(Box::new(web_service())));
        let ctx = PodContext::new(web("p").build());
        let state = zone_predicate().prepare(&ctx, &ClusterView::of(&snapshot));
        let mut reasons = Vec::new();
        Predicate::check(&zone_predicate(), &ctx, &state, &snapshot.node_info("n3").unwrap(), &mut reasons);
        assert_eq!(reasons.capacity(), 0);
        Predicate::check(&zone_predicate(), &ctx, &state, &snapshot.node_info("n2").unwrap(), &mut reasons);
        assert_eq!(reasons, vec![FAIL]);
        assert!(reasons[0].is_resolvable(), "not in upstream's unresolvable list");
    }
}
