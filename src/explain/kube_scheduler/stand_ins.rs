//! Each of kube-scheduler's Filter plugins, played by the classic predicate that does its work
//! (the oracle comparison holds them to the same verdicts: docs/semantics.md), its reasons worded
//! as the plugin words them, and the rejections its PreFilter makes for the whole pod.

use std::borrow::Cow;
use std::sync::Arc;

use predicate_engine::cluster::NodeInfo;
use predicate_engine::framework::{
    AnyPredicate, AnyState, Cause, ClusterView, Failures, MissingState, PodContext, Predicate, Reason, ResourceName,
};
use predicate_engine::predicates::check_volume_binding;
use predicate_engine::predicates::match_inter_pod_affinity::State as InterPodAffinityState;
use predicate_engine::predicates::no_volume_zone_conflict;

use super::profile::Plugin;

/// `nodename.ErrReason`.
const NODE_NAME: &str = "node(s) didn't match the requested node name";
/// TaintToleration's Filter status (`tainttoleration/taint_toleration.go`).
const UNTOLERATED_TAINT: &str = "node(s) had untolerated taint(s)";
/// `nodeaffinity.ErrReasonPod`.
const NODE_AFFINITY: &str = "node(s) didn't match Pod's node affinity/selector";
/// NodeResourcesFit's reason for a node at its pod count (`noderesources/fit.go`).
const TOO_MANY_PODS: &str = "Too many pods";
/// `volumebinding.ErrReasonNodeConflict`.
const PV_NODE_AFFINITY: &str = "node(s) didn't match PersistentVolume's node affinity";

/// The classic predicate that does the plugin's work.
fn classic(plugin: Plugin) -> Option<Arc<dyn AnyPredicate>> {
    let name = match plugin {
        Plugin::NodeUnschedulable => "CheckNodeUnschedulable",
        Plugin::NodeName => "HostName",
        Plugin::TaintToleration => "PodToleratesNodeTaints",
        Plugin::NodeAffinity => "MatchNodeSelector",
        Plugin::NodePorts => "PodFitsHostPorts",
        Plugin::NodeResourcesFit => "PodFitsResources",
        Plugin::VolumeRestrictions => "NoDiskConflict",
        Plugin::NodeVolumeLimits => "MaxCSIVolumeCount",
        Plugin::VolumeBinding => "CheckVolumeBinding",
        Plugin::VolumeZone => "NoVolumeZoneConflict",
        Plugin::PodTopologySpread => "EvenPodsSpread",
        Plugin::InterPodAffinity => return Some(Arc::new(TodaysInterPodAffinity)),
    };
    predicate_engine::registry::predicate(name)
}

/// A classic reason in the plugin's own words, chosen by what the reason is (its cause, which the
/// reworded reason keeps).
fn reworded(plugin: Plugin, reason: Reason) -> Reason {
    let message = match (plugin, &reason.cause) {
        (Plugin::NodeName, Cause::HostNameMismatch) => NODE_NAME,
        (Plugin::TaintToleration, Cause::UntoleratedTaint { .. }) => UNTOLERATED_TAINT,
        (Plugin::NodeAffinity, Cause::NodeSelectorMismatch) => NODE_AFFINITY,
        (Plugin::NodeResourcesFit, Cause::Insufficient { resource: ResourceName::Pods }) => TOO_MANY_PODS,
        (Plugin::VolumeBinding, Cause::VolumeNodeConflict) => PV_NODE_AFFINITY,
        _ => return reason,
    };
    Reason { message: Cow::Borrowed(message), ..reason }
}

/// The plugin, as a predicate: its classic stand-in's verdict in its own words. Its name is the
/// plugin's.
#[derive(Debug)]
pub struct StandIn {
    plugin: Plugin,
    classic: Arc<dyn AnyPredicate>,
}

impl StandIn {
    pub fn new(plugin: Plugin) -> Option<StandIn> {
        Some(StandIn { plugin, classic: classic(plugin)? })
    }
}

impl AnyPredicate for StandIn {
    fn name(&self) -> &str {
        self.plugin.name()
    }

    fn plugin(&self) -> &str {
        self.plugin.name()
    }

    fn failures(&self) -> Failures {
        self.classic.failures()
    }

    fn prepare(&self, pod: &PodContext, view: &ClusterView<'_>) -> Option<Arc<dyn AnyState>> {
        self.classic.prepare(pod, view)
    }

    fn check(
        &self,
        pod: &PodContext,
        state: Option<&dyn AnyState>,
        node: &NodeInfo,
        reasons: &mut Vec<Reason>,
    ) -> Result<(), MissingState> {
        let mut own = Vec::new();
        self.classic.check(pod, state, node, &mut own)?;
        reasons.extend(own.into_iter().map(|r| reworded(self.plugin, r)));
        Ok(())
    }
}

/// Today's InterPodAffinity: the classic predicate's counts, checked in today's order, one reason.
#[derive(Debug)]
struct TodaysInterPodAffinity;

impl Predicate for TodaysInterPodAffinity {
    type State = InterPodAffinityState;

    fn name(&self) -> &str {
        Plugin::InterPodAffinity.name()
    }

    fn failures(&self) -> Failures {
        Failures::MaybeResolvable
    }

    fn prepare(&self, pod: &PodContext, view: &ClusterView<'_>) -> InterPodAffinityState {
        InterPodAffinityState::compute(pod, view)
    }

    fn check(&self, _pod: &PodContext, state: &InterPodAffinityState, node: &NodeInfo, reasons: &mut Vec<Reason>) {
        reasons.extend(state.todays_reason(&node.node().metadata.labels));
    }
}

/// Why the plugin's PreFilter rejects the pod whatever the node, if it does: what kube-scheduler
/// then reports alone (`0/N nodes are available: <message>.`).
pub fn prefilter_failure(plugin: Plugin, pod: &PodContext, view: &ClusterView<'_>) -> Option<String> {
    let pod = &pod.pod;
    let volumes = view.volumes();
    match plugin {
        // readWriteOncePodPVCsForPod: every claim of a persistentVolumeClaim volume is looked up.
        Plugin::VolumeRestrictions => pod
            .spec
            .volumes
            .iter()
            .filter_map(|v| v.persistent_volume_claim.as_ref())
            .find(|claim| volumes.pvc(&pod.metadata.namespace, &claim.claim_name).is_none())
            .map(|claim| format!("persistentvolumeclaim \"{}\" not found", claim.claim_name)),
        Plugin::VolumeBinding => check_volume_binding::prefilter_failure(pod, volumes).map(|r| r.message.into_owned()),
        Plugin::VolumeZone => no_volume_zone_conflict::prefilter_failure(pod, volumes).map(|r| r.message.into_owned()),
        _ => None,
    }
}

/// The nodes the plugin's PreFilter narrows the pod to (`PreFilterResult`), if it does:
/// NodeName's `spec.nodeName` (1.37 on) and NodeAffinity's required `metadata.name` fields
/// (`In`, intersected within a term, united across terms; none left: NodeAffinity rejects the pod,
/// "pod affinity terms conflict").
pub fn prefilter_nodes(
    plugin: Plugin,
    pod: &PodContext,
    version: predicate_engine::cluster::SchedulerVersion,
) -> Option<Vec<String>> {
    let pod = &pod.pod;
    match plugin {
        Plugin::NodeName
            if version >= predicate_engine::cluster::SchedulerVersion::V1_37 && !pod.spec.node_name.is_empty() =>
        {
            Some(vec![pod.spec.node_name.clone()])
        }
        Plugin::NodeAffinity => {
            let terms = &pod
                .spec
                .affinity
                .as_ref()?
                .node_affinity
                .as_ref()?
                .required_during_scheduling_ignored_during_execution
                .as_ref()?
                .node_selector_terms;
            let mut union: Option<Vec<String>> = None;
            for term in terms {
                let mut term_names: Option<Vec<String>> = None;
                for r in term.match_fields.iter().flatten() {
                    if r.key == "metadata.name" && r.operator == "In" {
                        let values = r.values.clone().unwrap_or_default();
                        term_names = Some(match term_names {
                            None => values,
                            Some(have) => have.into_iter().filter(|n| values.contains(n)).collect(),
                        });
                    }
                }
                // A term without a name requirement admits every node: no narrowing at all.
                let names = term_names?;
                let all = union.get_or_insert_with(Vec::new);
                for name in names {
                    if !all.contains(&name) {
                        all.push(name);
                    }
                }
            }
            union.map(|mut names| {
                names.sort();
                names
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use predicate_engine::framework::{ReasonKind, TaintEffects};
    use predicate_engine::predicates::pod_fits_resources::{ERR_INSUFFICIENT_CPU, ERR_INSUFFICIENT_PODS};
    use predicate_engine::predicates::pod_tolerates_node_taints::untolerated;

    /// A classic reason is put in the plugin's words by what it is: its cause, kept, never its
    /// words.
    #[test]
    fn reasons_are_reworded_by_their_cause() {
        let taint = untolerated(TaintEffects::DoNotSchedule, 3);
        let got = reworded(Plugin::TaintToleration, taint.clone());
        assert_eq!((got.message.as_ref(), got.kind, &got.cause), (UNTOLERATED_TAINT, taint.kind, &taint.cause));
        let pods = reworded(Plugin::NodeResourcesFit, ERR_INSUFFICIENT_PODS);
        assert_eq!(pods.message, TOO_MANY_PODS);
        assert_eq!(pods.cause, ERR_INSUFFICIENT_PODS.cause);
        // Another resource keeps its words; so does a reason of the right words but no cause, and
        // one of the right cause given by another plugin.
        assert_eq!(reworded(Plugin::NodeResourcesFit, ERR_INSUFFICIENT_CPU).message, "Insufficient cpu");
        let words_only = Reason::new(taint.message.clone(), taint.kind);
        assert_eq!(reworded(Plugin::TaintToleration, words_only.clone()).message, words_only.message);
        let other_plugin = reworded(Plugin::NodeAffinity, taint.clone());
        assert_eq!(other_plugin.message, taint.message);
        let selector = Reason::of(Cause::NodeSelectorMismatch, ReasonKind::Unresolvable, "any words");
        assert_eq!(reworded(Plugin::NodeAffinity, selector).message, NODE_AFFINITY);
    }
}
