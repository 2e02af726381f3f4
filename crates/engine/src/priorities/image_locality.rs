//! ImageLocalityPriority: favours nodes that already have the pod's container images, by their
//! total size (upstream's `ImageLocalityPriorityMap`, 1.14-1.18, and the 1.18 `ImageLocality`
//! plugin).
//!
//! Each container (init containers are not counted) whose image is on the node adds the image's
//! size scaled by its spread, `size * nodes having it / all nodes` (so images on few nodes do not
//! pull every pod onto them); the sum is then clamped to 23MB..1000MB and mapped linearly onto
//! 0..10. The thresholds are fixed, as in the Policy-era releases (later releases scale the upper
//! one with the number of containers). A container's image is looked up under its CRI name: one
//! without a tag or digest gets `:latest`. The nodes having each of the pod's images are counted
//! once per request.

use std::sync::Arc;

use crate::cluster::node_images::ImageName;
use crate::cluster::NodeInfo;
use crate::framework::ClusterView;
use crate::framework::{ArgumentError, Candidate, PodContext};
use crate::framework::{Priority, PriorityArgs, Scorer, MAX_PRIORITY};

const MB: i64 = 1024 * 1024;
const MIN_THRESHOLD: i64 = 23 * MB;
const MAX_THRESHOLD: i64 = 1000 * MB;

#[derive(Debug, Clone)]
pub struct ImageLocalityPriority;

/// The registry name.
pub const NAME: &str = "ImageLocalityPriority";

pub fn build(_args: &PriorityArgs<'_>) -> Result<Arc<dyn Priority>, ArgumentError> {
    Ok(Arc::new(ImageLocalityPriority))
}

/// The pod's images, once each: the CRI name and its spread (the share of all nodes having it);
/// `None` for a name no node lists.
struct ImageLocalityScorer {
    images: Vec<Option<(ImageName, f64)>>,
    /// For each container, its index in `images`.
    containers: Vec<usize>,
}

/// The CRI name of an image (upstream's `normalizedImageName`): `:latest` added when the part after
/// the last `/` has no `:` (no tag and no digest).
fn normalized_image_name(name: &str) -> String {
    let last_colon = name.rfind(':');
    let last_slash = name.rfind('/');
    // Go compares LastIndex results, -1 when absent: `None < Some(_)` orders the same way.
    if last_colon <= last_slash {
        format!("{name}:latest")
    } else {
        name.to_string()
    }
}

/// The score for the summed scaled sizes (upstream's `calculatePriority`).
fn calculate_priority(sum: i64) -> i64 {
    let sum = sum.clamp(MIN_THRESHOLD, MAX_THRESHOLD);
    MAX_PRIORITY * (sum - MIN_THRESHOLD) / (MAX_THRESHOLD - MIN_THRESHOLD)
}

impl Priority for ImageLocalityPriority {
    fn name(&self) -> &str {
        NAME
    }

    fn prepare(&self, pod: &PodContext, view: &ClusterView<'_>, _candidates: &[Candidate]) -> Box<dyn Scorer> {
        let mut names: Vec<String> = Vec::new();
        let containers = pod
            .pod
            .spec
            .containers
            .iter()
            .map(|c| {
                let name = normalized_image_name(&c.image);
                match names.iter().position(|n| *n == name) {
                    Some(i) => i,
                    None => {
                        names.push(name);
                        names.len() - 1
                    }
                }
            })
            .collect();
        // The spread counts come from the snapshot's image index, not a walk of every node.
        let total = view.node_count() as u64;
        let images = names
            .into_iter()
            .map(|name| {
                let found = ImageName::find(&name)?;
                let count = view.nodes_with_image(&name) as u64;
                let spread = if total == 0 { 0.0 } else { count as f64 / total as f64 };
                Some((found, spread))
            })
            .collect();
        Box::new(ImageLocalityScorer { images, containers })
    }
}

impl Scorer for ImageLocalityScorer {
    fn score(&self, _pod: &PodContext, node: &NodeInfo) -> i64 {
        let sum = self
            .containers
            .iter()
            .filter_map(|&i| self.images.get(i).and_then(Option::as_ref))
            .filter_map(|(name, spread)| node.state.image_size(name).map(|size| (size as f64 * spread) as i64))
            .fold(0i64, i64::saturating_add);
        calculate_priority(sum)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::objects::{Container, Node, Pod};
    use crate::cluster::Snapshot;
    use crate::priorities::testing::candidates;
    use crate::testing::{NodeBuilder, PodBuilder};
    use k8s_openapi::api::core::v1::ContainerImage;

    fn with_images(name: &str, images: &[(&[&str], i64)]) -> Node {
        let mut node = NodeBuilder::new(name).build();
        node.status.images = images
            .iter()
            .map(|(names, mb)| ContainerImage {
                names: Some(names.iter().map(|n| n.to_string()).collect()),
                size_bytes: Some(mb * MB),
            })
            .collect();
        node
    }

    fn pod(images: &[&str]) -> Pod {
        let mut pod = PodBuilder::new("p").build();
        pod.spec.containers =
            images.iter().map(|i| Container { image: i.to_string(), ..Container::default() }).collect();
        pod
    }

    /// Four nodes, so spreads (k/4) are exact in floating point.
    fn cluster() -> Snapshot {
        Snapshot::build(
            [
                with_images("n1", &[(&["gcr.io/250:latest"], 250), (&["gcr.io/600:latest", "gcr.io/600:v1"], 600)]),
                with_images("n2", &[(&["gcr.io/250:latest"], 250), (&["gcr.io/2000:latest"], 2000)]),
                with_images("n3", &[(&["gcr.io/250:latest"], 250), (&["gcr.io/10:v1"], 10)]),
                with_images("n4", &[]),
            ],
            [],
        )
    }

    fn scores(pod: Pod) -> Vec<i64> {
        let snapshot = cluster();
        let ctx = PodContext::new(pod);
        let names = ["n1", "n2", "n3", "n4"];
        let scorer = ImageLocalityPriority.prepare(&ctx, &ClusterView::of(&snapshot), &candidates(&snapshot, &names));
        let mut s: Vec<i64> = names.iter().map(|n| scorer.score(&ctx, &snapshot.node_info(n).unwrap())).collect();
        scorer.normalize(&mut s);
        s
    }

    #[test]
    fn scores_by_spread_scaled_image_sizes() {
        // Sizes in MB; score = 10 * (sum - 23) / (1000 - 23) = 10 * (sum - 23) / 977, floored, with
        // sum clamped to 23..1000.
        let cases = [
            // gcr.io/250 -> gcr.io/250:latest on n1, n2, n3: spread 3/4, 250 * 3/4 = 187.5.
            // gcr.io/600:v1 on n1 only: spread 1/4, 600 / 4 = 150.
            // n1: 337.5 -> 3145 / 977 = 3. n2, n3: 187.5 -> 1645 / 977 = 1. n4: nothing -> 0.
            ("two images", pod(&["gcr.io/250", "gcr.io/600:v1"]), [3, 1, 1, 0]),
            // gcr.io/2000:latest on n2 only: 2000 / 4 = 500 -> 4770 / 977 = 4.
            // gcr.io/10:v1 on n3 only: 10 / 4 = 2.5 < 23 -> 0.
            ("large and small", pod(&["gcr.io/2000:latest", "gcr.io/10:v1"]), [0, 4, 0, 0]),
            // Untagged names get :latest: gcr.io/600 -> gcr.io/600:latest (n1, 150 -> 1270 / 977
            // = 1); gcr.io/10 -> gcr.io/10:latest, which no node lists (n3 has only :v1).
            ("untagged means latest", pod(&["gcr.io/600", "gcr.io/10"]), [1, 0, 0, 0]),
            // Every container counts, the same image again too: 6 * 187.5 = 1125 > 1000 -> 10 (the
            // upper threshold does not grow with the number of containers in this version).
            ("above the maximum", pod(&["gcr.io/250"; 6]), [10, 10, 10, 0]),
            ("no containers", pod(&[]), [0, 0, 0, 0]),
        ];
        for (name, pod, want) in cases {
            assert_eq!(scores(pod), want, "{name}");
        }
    }

    #[test]
    fn init_containers_do_not_count() {
        let mut p = pod(&[]);
        p.spec.init_containers.push(Container { image: "gcr.io/2000:latest".to_string(), ..Container::default() });
        assert_eq!(scores(p), [0, 0, 0, 0]);
    }

    #[test]
    fn spread_counts_every_node_of_the_cluster() {
        // Only n1 of four nodes has it (600 / 4 = 150 -> 1); with a cluster of n1 alone the spread
        // is 1: 600 -> 10 * 577 / 977 = 5.
        let snapshot = Snapshot::build([with_images("n1", &[(&["gcr.io/600:latest"], 600)])], []);
        let ctx = PodContext::new(pod(&["gcr.io/600"]));
        let scorer = ImageLocalityPriority.prepare(&ctx, &ClusterView::of(&snapshot), &candidates(&snapshot, &["n1"]));
        assert_eq!(scorer.score(&ctx, &snapshot.node_info("n1").unwrap()), 5);
        assert_eq!(scores(pod(&["gcr.io/600:latest"])), [1, 0, 0, 0]);
    }

    #[test]
    fn thresholds() {
        assert_eq!(calculate_priority(0), 0);
        assert_eq!(calculate_priority(23 * MB), 0);
        // 23 + 977 / 2 MB: 10 * 488.5 / 977 = 5.
        assert_eq!(calculate_priority(23 * MB + 977 * MB / 2), 5);
        assert_eq!(calculate_priority(1000 * MB - 1), 9);
        assert_eq!(calculate_priority(1000 * MB), 10);
        assert_eq!(calculate_priority(i64::MAX), 10);
    }

    #[test]
    fn image_names_are_normalized_like_cri() {
        let cases = [
            ("nginx", "nginx:latest"),
            ("nginx:1.25", "nginx:1.25"),
            ("gcr.io/project/nginx", "gcr.io/project/nginx:latest"),
            ("localhost:5000/nginx", "localhost:5000/nginx:latest"),
            ("localhost:5000/nginx:v1", "localhost:5000/nginx:v1"),
            ("nginx@sha256:0123abcd", "nginx@sha256:0123abcd"),
            ("", ":latest"),
        ];
        for (name, want) in cases {
            assert_eq!(normalized_image_name(name), want, "{name}");
        }
    }
}
