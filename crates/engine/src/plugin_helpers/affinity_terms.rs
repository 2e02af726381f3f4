//! Pod (anti-)affinity terms as inter-pod affinity reads them, shared by the MatchInterPodAffinity
//! predicate and InterPodAffinityPriority: namespaces resolved once, selectors compiled once, and the
//! placed pods a term can select found through the snapshot's label index.

use std::collections::BTreeMap;

use crate::hashing::HashSet;

use k8s_openapi::api::core::v1::PodAffinityTerm;

use crate::cluster::objects::Pod;
use crate::framework::ClusterView;
use crate::labels::selectors::LabelSelector;

pub(crate) static NO_LABELS: BTreeMap<String, String> = BTreeMap::new();

/// The labels of a namespace's Namespace object; none when the model does not have it.
pub(crate) fn namespace_labels<'a>(view: &'a ClusterView<'_>, namespace: &str) -> &'a BTreeMap<String, String> {
    view.snapshot.namespace(namespace).and_then(|ns| ns.metadata.labels.as_ref()).unwrap_or(&NO_LABELS)
}

/// The namespaces a term of the incoming pod applies to. Its `namespaceSelector` is resolved once,
/// over the Namespace objects, so matching a pod is a set lookup.
#[derive(Debug, Clone)]
pub(crate) enum Namespaces {
    /// An empty `namespaceSelector` (`{}`).
    All,
    Listed(HashSet<String>),
}

impl Namespaces {
    pub(crate) fn contains(&self, namespace: &str) -> bool {
        match self {
            Namespaces::All => true,
            Namespaces::Listed(names) => names.contains(namespace),
        }
    }
}

/// A term of the incoming pod (required or preferred), compiled.
#[derive(Debug, Clone)]
pub(crate) struct Term {
    pub(crate) selector: LabelSelector,
    pub(crate) namespaces: Namespaces,
    pub(crate) topology_key: String,
}

impl Term {
    pub(crate) fn compile(owner: &Pod, term: &PodAffinityTerm, view: &ClusterView<'_>) -> Term {
        let selector = term.label_selector.as_ref().map_or_else(LabelSelector::nothing, LabelSelector::compile);
        let listed = term.namespaces.as_deref().unwrap_or_default();
        let namespaces = match &term.namespace_selector {
            None if listed.is_empty() => Namespaces::Listed(HashSet::from_iter([owner.metadata.namespace.clone()])),
            None => Namespaces::Listed(listed.iter().cloned().collect()),
            Some(ns_selector) => {
                let ns_selector = LabelSelector::compile(ns_selector);
                if ns_selector.is_everything() {
                    Namespaces::All
                } else {
                    // Only namespaces that exist can match a non-empty selector, as upstream lists
                    // them through its Namespace lister.
                    let mut names: HashSet<String> = listed.iter().cloned().collect();
                    for ns in view.snapshot.namespaces() {
                        let labels = ns.metadata.labels.as_ref().unwrap_or(&NO_LABELS);
                        if let Some(name) = ns.metadata.name.as_ref().filter(|_| ns_selector.matches(labels)) {
                            names.insert(name.clone());
                        }
                    }
                    Namespaces::Listed(names)
                }
            }
        };
        Term { selector, namespaces, topology_key: term.topology_key.clone() }
    }

    pub(crate) fn matches(&self, pod: &Pod) -> bool {
        self.namespaces.contains(&pod.metadata.namespace) && self.selector.matches(&pod.metadata.labels)
    }
}

/// Calls `visit` with every placed pod that `term` could select, and the labels of its node: the
/// pods filed under one of the `key=value` pairs its selector requires, or every placed pod when it
/// requires none. Pods on nodes the view does not know are skipped, as they are in no domain, and
/// so are (when every placed pod is visited) the pods of nodes that have none of `keys`, the
/// topology keys the caller counts them under.
pub(crate) fn for_each_candidate(
    view: &ClusterView<'_>,
    term: &Term,
    keys: &[&str],
    mut visit: impl FnMut(&Pod, &BTreeMap<String, String>),
) {
    match term.selector.equalities().next() {
        Some((key, value)) => {
            for existing in view.snapshot.pods_labelled(key, value) {
                if let Some(node_labels) = view.node_labels(&existing.pod.spec.node_name) {
                    visit(&existing.pod, node_labels);
                }
            }
        }
        None => {
            for node in view.nodes() {
                let node_labels = &node.node().metadata.labels;
                if !keys.iter().any(|k| node_labels.contains_key(*k)) {
                    continue; // no pod here can count in the caller's domains
                }
                for existing in node.pods.pods() {
                    visit(&existing.pod, node_labels);
                }
            }
        }
    }
}
