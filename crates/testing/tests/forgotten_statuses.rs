//! The model forgets container statuses that change no request: checked over the Filter oracle
//! generator's pods (resizes of every shape), on every tested minor.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

use predicate_engine::cluster::objects::Pod;
use predicate_engine::cluster::pod_requests::{placed_requests, requests_to_score};
use predicate_engine::cluster::SchedulerVersion;
use predicate_extender_testing::oracle;

/// The container statuses the model forgets (`Pod::forget_statuses_that_change_nothing`)
/// change no pod's requests, on any minor, over the oracle generator's resize shapes.
#[test]
fn forgetting_the_statuses_that_change_nothing_changes_no_requests() {
    let (mut pods, mut forgot) = (0, 0);
    for version in SchedulerVersion::ALL {
        for seed in 0..1500 {
            let case = oracle::generate(&oracle::Domain::for_version(version), seed);
            for object in case.objects.iter().filter(|o| o["kind"] == "Pod") {
                let pod: Pod = serde_json::from_value(object.clone()).unwrap();
                let mut lean = pod.clone();
                lean.forget_statuses_that_change_nothing();
                let statuses = |p: &Pod| p.status.container_statuses.len() + p.status.init_container_statuses.len();
                forgot += statuses(&pod) - statuses(&lean);
                pods += usize::from(statuses(&pod) > 0);
                assert_eq!(placed_requests(&lean, version), placed_requests(&pod, version), "{object}");
                assert_eq!(requests_to_score(&lean, version), requests_to_score(&pod, version), "{object}");
            }
        }
    }
    assert!(pods > 1000 && forgot > 500, "{pods} pods with statuses, {forgot} statuses forgotten");
}
