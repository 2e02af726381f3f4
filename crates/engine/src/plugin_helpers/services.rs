//! The Services that select a pod (upstream's `GetPodServices`, `plugins/helper/spread.go`), as
//! CheckServiceAffinity and the spreading priorities read them.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Service;

use crate::cluster::objects::Pod;
use crate::framework::ClusterView;
use crate::labels::selectors::LabelSelector;

/// The Services of the pod's namespace that select it (upstream's `GetPodServices`): a Service
/// without a selector selects nothing, one with an empty selector everything.
pub fn pod_services<'a>(pod: &'a Pod, view: &'a ClusterView<'_>) -> impl Iterator<Item = &'a Arc<Service>> + 'a {
    view.snapshot.services_in(&pod.metadata.namespace).filter(move |svc| {
        service_selector(svc).is_some_and(|selector| LabelSelector::from_map(selector).matches(&pod.metadata.labels))
    })
}

/// A Service's `spec.selector`, when it has one.
pub fn service_selector(svc: &Service) -> Option<&BTreeMap<String, String>> {
    svc.spec.as_ref().and_then(|spec| spec.selector.as_ref())
}
