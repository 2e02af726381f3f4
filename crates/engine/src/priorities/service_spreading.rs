//! ServiceSpreadingPriority: SelectorSpreadPriority with only the Services' selectors, as
//! upstream registers it (kube-scheduler 1.14-1.17, `algorithmprovider/defaults/register_priorities.go`:
//! `NewSelectorSpreadPriority(serviceLister, EmptyControllerLister{}, EmptyReplicaSetLister{},
//! EmptyStatefulSetLister{})`): the pods of the Services that select the pod (all of them, ANDed)
//! spread over nodes and zones, normalised as SelectorSpreadPriority (see `selector_spread`).

use std::sync::Arc;

use crate::framework::{ArgumentError, Priority, PriorityArgs};
use crate::priorities::selector_spread::SelectorSpread;

/// The registry name.
pub const NAME: &str = "ServiceSpreadingPriority";

pub fn build(_args: &PriorityArgs<'_>) -> Result<Arc<dyn Priority>, ArgumentError> {
    Ok(Arc::new(SelectorSpread::services_only()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::Snapshot;
    use crate::framework::PodContext;
    use crate::priorities::spreading::test_objects::{replica_set, selector, service};
    use crate::priorities::spreading::BETA_ZONE;
    use crate::testing::{NodeBuilder, PodBuilder};

    fn pod(name: &str, node: &str, labels: &[(&str, &str)]) -> crate::cluster::objects::Pod {
        labels.iter().fold(PodBuilder::new(name).node(node), |b, (k, v)| b.label(k, v)).build()
    }

    fn scores(snapshot: &Snapshot, labels: &[(&str, &str)], candidates: &[&str]) -> Vec<i64> {
        let args =
            PriorityArgs { name: "ServiceSpreadingPriority", argument: None, hard_pod_affinity_symmetric_weight: 1 };
        let priority = build(&args).unwrap();
        assert_eq!(priority.name(), "ServiceSpreadingPriority");
        crate::priorities::testing::scores(
            &*priority,
            &PodContext::new(pod("incoming", "", labels)),
            snapshot,
            candidates,
        )
    }

    #[test]
    fn only_services_count() {
        let fe = [("app", "web"), ("tier", "fe")];
        let mut s = Snapshot::build(
            [
                NodeBuilder::new("a1").label(BETA_ZONE, "a").build(),
                NodeBuilder::new("a2").label(BETA_ZONE, "a").build(),
                NodeBuilder::new("b1").label(BETA_ZONE, "b").build(),
            ],
            [
                pod("w1", "a1", &[("app", "web")]),
                pod("w2", "a1", &[("app", "web")]),
                pod("f1", "b1", &fe),
                pod("x1", "a2", &[("app", "other")]),
            ],
        );
        s.upsert(service("default", "web", Some(&[("app", "web")])));
        // Ignored here: the ReplicaSet would narrow the pods to tier=fe.
        s.upsert(replica_set("default", "fe", selector(&[("tier", "fe")], &[])));
        // Node counts a1 2, a2 0, b1 1 (max 2); zone counts a 2, b 1 (max 2).
        // a1: node 10*(2-2)/2 = 0,  zone 10*(2-2)/2 = 0 -> 0
        // a2: node 10*(2-0)/2 = 10, zone 0              -> 10/3 = 3.33 -> 3
        // b1: node 10*(2-1)/2 = 5,  zone 10*(2-1)/2 = 5 -> 5/3 + 10/3 = 5
        assert_eq!(scores(&s, &fe, &["a1", "a2", "b1"]), [0, 3, 5]);
        // No Service selects the pod: 10 everywhere (the ReplicaSet does not count).
        assert_eq!(scores(&s, &[("tier", "fe")], &["a1", "a2", "b1"]), [10, 10, 10]);
    }
}
