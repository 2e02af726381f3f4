//! Finding an image on a node by name without walking its image list: ImageLocalityPriority asks,
//! for every candidate node, whether it has each of the pod's images, and a node lists 20-40
//! images under one or two long names each.
//!
//! The node's names are hashed once, on first use, into a sorted table of `(hash, image index)`;
//! a lookup hashes nothing (the request hashed its names once, [`ImageName`]), binary-searches the
//! table and confirms the name, so a hash collision costs a comparison, never a wrong answer.

use std::hash::BuildHasher;
use std::sync::{LazyLock, OnceLock};

use crate::cluster::objects::Node;

/// Seeded per process, like the model's maps.
static HASHER: LazyLock<foldhash::fast::RandomState> = LazyLock::new(Default::default);

fn hash(name: &str) -> u64 {
    HASHER.hash_one(name)
}

/// An image name with its hash, computed once per request.
#[derive(Debug, Clone)]
pub struct ImageName {
    name: String,
    hash: u64,
}

impl ImageName {
    pub fn new(name: String) -> Self {
        ImageName { hash: hash(&name), name }
    }

    pub fn as_str(&self) -> &str {
        &self.name
    }
}

/// A node's image names by hash, built on first use.
#[derive(Debug, Default)]
pub struct NodeImages(OnceLock<Box<[(u64, u32)]>>);

impl NodeImages {
    fn table(&self, node: &Node) -> &[(u64, u32)] {
        self.0.get_or_init(|| {
            let mut table: Vec<(u64, u32)> = node
                .status
                .images
                .iter()
                .enumerate()
                .flat_map(|(i, image)| image.names.iter().flatten().map(move |n| (hash(n), i as u32)))
                .collect();
            // By hash, then by position: among equal hashes the first listed image comes first.
            table.sort_unstable();
            table.into_boxed_slice()
        })
    }

    /// The size of the first image of `node` (the node these were built for) listed under
    /// `name`, if any: `sizeBytes`, 0 when unset.
    pub fn size_of(&self, node: &Node, name: &ImageName) -> Option<i64> {
        let table = self.table(node);
        let start = table.partition_point(|&(h, _)| h < name.hash);
        table[start..]
            .iter()
            .take_while(|&&(h, _)| h == name.hash)
            .filter_map(|&(_, i)| node.status.images.get(i as usize))
            .find(|image| image.names.iter().flatten().any(|n| *n == name.name))
            .map(|image| image.size_bytes.unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::NodeBuilder;
    use k8s_openapi::api::core::v1::ContainerImage;

    fn node(images: &[(&[&str], Option<i64>)]) -> Node {
        let mut node = NodeBuilder::new("n").build();
        node.status.images = images
            .iter()
            .map(|(names, size)| ContainerImage {
                names: Some(names.iter().map(|n| n.to_string()).collect()),
                size_bytes: *size,
            })
            .collect();
        node
    }

    /// What a walk of the list finds: the reference the table must agree with.
    fn walk(node: &Node, name: &str) -> Option<i64> {
        node.status
            .images
            .iter()
            .find(|i| i.names.iter().flatten().any(|n| n == name))
            .map(|i| i.size_bytes.unwrap_or(0))
    }

    #[test]
    fn finds_what_a_walk_of_the_list_finds() {
        let n = node(&[
            (&["registry/app@sha256:1", "registry/app:1.0"], Some(10)),
            (&["registry/db:2"], None),
            (&["registry/app:1.0"], Some(99)),
            (&[], Some(5)),
        ]);
        let images = NodeImages::default();
        for name in ["registry/app:1.0", "registry/app@sha256:1", "registry/db:2", "registry/none:1", ""] {
            assert_eq!(images.size_of(&n, &ImageName::new(name.to_string())), walk(&n, name), "{name}");
        }
        assert_eq!(images.size_of(&n, &ImageName::new("registry/app:1.0".into())), Some(10), "the first listed wins");
    }

    #[test]
    fn a_node_without_images_has_none() {
        let n = node(&[]);
        assert_eq!(NodeImages::default().size_of(&n, &ImageName::new("x:1".into())), None);
    }
}
