//! A placed pod's inter-pod affinity terms, compiled once when the pod enters the model: every
//! request that asks "does this placed pod's term select the incoming pod" (the existing pods'
//! anti-affinity of MatchInterPodAffinity, the scoring terms of InterPodAffinityPriority) reads
//! them, and compiling them per request was most of the predicate's time with thousands of such
//! pods (SchedulingPodAntiAffinity in docs/throughput.md).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::PodAffinityTerm;

use crate::cluster::objects::Pod;
use crate::labels::selectors::LabelSelector;

/// One term of a placed pod, read as the pod that owns it means it.
#[derive(Debug, Clone)]
pub struct OtherPodTerm {
    /// The namespaces listed, or the owner's when the term lists none and has no
    /// `namespaceSelector`.
    namespaces: Box<[String]>,
    /// `namespaceSelector`, matched against the incoming pod's Namespace labels.
    namespace_selector: Option<LabelSelector>,
    /// `labelSelector`; an absent one selects no pod.
    selector: LabelSelector,
    pub topology_key: String,
}

impl OtherPodTerm {
    pub fn compile(owner: &Pod, term: &PodAffinityTerm) -> Self {
        let listed = term.namespaces.as_deref().unwrap_or_default();
        let namespaces = if listed.is_empty() && term.namespace_selector.is_none() {
            Box::new([owner.metadata.namespace.clone()]) as Box<[String]>
        } else {
            listed.into()
        };
        OtherPodTerm {
            namespaces,
            namespace_selector: term.namespace_selector.as_ref().map(LabelSelector::compile),
            selector: term.label_selector.as_ref().map_or_else(LabelSelector::nothing, LabelSelector::compile),
            topology_key: term.topology_key.clone(),
        }
    }

    /// Whether the term selects `incoming`, whose Namespace has `incoming_ns_labels`.
    pub fn selects(&self, incoming: &Pod, incoming_ns_labels: &BTreeMap<String, String>) -> bool {
        let namespace = &incoming.metadata.namespace;
        (self.namespaces.iter().any(|n| n == namespace)
            || self.namespace_selector.as_ref().is_some_and(|s| s.matches(incoming_ns_labels)))
            && self.selector.matches(&incoming.metadata.labels)
    }
}

/// The terms of a placed pod that other pods' scheduling reads.
#[derive(Debug, Clone, Default)]
pub struct PodTerms {
    /// `podAntiAffinity.requiredDuringScheduling...`.
    pub required_anti_affinity: Vec<OtherPodTerm>,
    /// `podAffinity.requiredDuringScheduling...` (scored with the hard pod affinity weight).
    pub required_affinity: Vec<OtherPodTerm>,
    /// `podAffinity.preferred...` with their weights, then `podAntiAffinity.preferred...` with
    /// their weights negated.
    pub preferred: Vec<(OtherPodTerm, i64)>,
}

impl PodTerms {
    /// The pod's terms; `None` when it has none (most pods), so they cost a pointer.
    pub fn of(pod: &Pod) -> Option<Box<PodTerms>> {
        let compile = |terms: &[PodAffinityTerm]| terms.iter().map(|t| OtherPodTerm::compile(pod, t)).collect();
        let preferred: Vec<(OtherPodTerm, i64)> = pod
            .preferred_affinity_terms()
            .iter()
            .map(|t| (t, i64::from(t.weight)))
            .chain(pod.preferred_anti_affinity_terms().iter().map(|t| (t, -i64::from(t.weight))))
            .map(|(t, weight)| (OtherPodTerm::compile(pod, &t.pod_affinity_term), weight))
            .collect();
        let terms = PodTerms {
            required_anti_affinity: compile(pod.required_anti_affinity_terms()),
            required_affinity: compile(pod.required_affinity_terms()),
            preferred,
        };
        let none =
            terms.required_anti_affinity.is_empty() && terms.required_affinity.is_empty() && terms.preferred.is_empty();
        (!none).then(|| Box::new(terms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::PodBuilder;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector as K8sSelector;

    fn term(namespaces: Option<&[&str]>, namespace_selector: Option<(&str, &str)>) -> PodAffinityTerm {
        let selector = |(k, v): (&str, &str)| K8sSelector {
            match_labels: Some([(k.to_string(), v.to_string())].into()),
            match_expressions: None,
        };
        PodAffinityTerm {
            label_selector: Some(selector(("app", "web"))),
            namespaces: namespaces.map(|ns| ns.iter().map(|n| n.to_string()).collect()),
            namespace_selector: namespace_selector.map(selector),
            topology_key: "kubernetes.io/hostname".into(),
            ..Default::default()
        }
    }

    /// The namespaces a term of another pod applies to, as upstream's `getNamespacesFromPodAffinityTerm`
    /// and `mergeAffinityTermNamespacesIfNotEmpty` read them (interpodaffinity/plugin.go,
    /// framework/types.go): the listed ones plus those the selector matches; neither means the
    /// owner's namespace; an absent label selector selects nothing.
    #[test]
    fn namespaces_and_selectors_as_upstream() {
        let owner = PodBuilder::new("owner").namespace("team-a").build();
        let web_in = |ns: &str| PodBuilder::new("p").namespace(ns).label("app", "web").build();
        let prod: BTreeMap<String, String> = [("env".to_string(), "prod".to_string())].into();
        let none = BTreeMap::new();
        let selects =
            |t: PodAffinityTerm, pod: &Pod, ns_labels| OtherPodTerm::compile(&owner, &t).selects(pod, ns_labels);

        assert!(selects(term(None, None), &web_in("team-a"), &none), "the owner's namespace");
        assert!(!selects(term(None, None), &web_in("team-b"), &none));
        assert!(selects(term(Some(&["team-b"]), None), &web_in("team-b"), &none), "listed");
        assert!(!selects(term(Some(&["team-b"]), None), &web_in("team-a"), &none), "listed replaces the owner's");
        assert!(selects(term(None, Some(("env", "prod"))), &web_in("team-c"), &prod), "selector");
        assert!(!selects(term(None, Some(("env", "prod"))), &web_in("team-a"), &none), "selector, not the owner's");
        assert!(
            selects(term(Some(&["team-b"]), Some(("env", "prod"))), &web_in("team-b"), &none),
            "listed or selected"
        );
        let mut no_selector = term(None, None);
        no_selector.label_selector = None;
        assert!(!selects(no_selector, &web_in("team-a"), &none), "no label selector selects nothing");
        let other_labels = PodBuilder::new("p").namespace("team-a").label("app", "db").build();
        assert!(!selects(term(None, None), &other_labels, &none));
    }

    #[test]
    fn pods_without_terms_hold_none() {
        assert!(PodTerms::of(&PodBuilder::new("p").build()).is_none());
    }
}
