//! Finding an image on a node by name without walking its image list: ImageLocalityPriority asks,
//! for every candidate node, whether it has each of the pod's images, and a node lists 20-40
//! images under one or two long names each.
//!
//! The node's names are hashed once, on first use, into a sorted table of `(hash, image index)`;
//! a lookup hashes nothing (the request hashed its names once, [`ImageName`]), binary-searches the
//! table and confirms the name, so a hash collision costs a comparison, never a wrong answer.

use std::hash::BuildHasher;
use std::ops::Deref;
use std::sync::{LazyLock, OnceLock};

use k8s_openapi::api::core::v1::ContainerImage;
use serde::{Deserialize, Deserializer};

use crate::cluster::intern::IStr;
use crate::cluster::objects::Node;

/// One image a node reports (`status.images[]`): its names, interned (the same tags appear on
/// thousands of nodes, and the model's image counts share them), and its size.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Image {
    #[serde(deserialize_with = "crate::cluster::objects::null_as_default")]
    pub names: Box<[IStr]>,
    /// `sizeBytes`; unset reads as `None`.
    pub size_bytes: Option<i64>,
}

impl From<ContainerImage> for Image {
    fn from(image: ContainerImage) -> Image {
        Image {
            names: image.names.unwrap_or_default().into_iter().map(IStr::from).collect(),
            size_bytes: image.size_bytes,
        }
    }
}

/// A node's `status.images` (`null` reads as none).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Images(Box<[Image]>);

impl Deref for Images {
    type Target = [Image];
    fn deref(&self) -> &[Image] {
        &self.0
    }
}

impl Images {
    /// Adds an image (builders and tests).
    pub fn push(&mut self, image: impl Into<Image>) {
        let mut images = std::mem::take(&mut self.0).into_vec();
        images.push(image.into());
        self.0 = images.into_boxed_slice();
    }
}

impl<I: Into<Image>> FromIterator<I> for Images {
    fn from_iter<T: IntoIterator<Item = I>>(iter: T) -> Images {
        Images(iter.into_iter().map(Into::into).collect())
    }
}

impl<'a> IntoIterator for &'a Images {
    type Item = &'a Image;
    type IntoIter = std::slice::Iter<'a, Image>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<'de> Deserialize<'de> for Images {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Images, D::Error> {
        let images: Option<Vec<Image>> = Option::deserialize(d)?;
        Ok(Images(images.unwrap_or_default().into_boxed_slice()))
    }
}

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
                .flat_map(|(i, image)| image.names.iter().map(move |n| (hash(n), i as u32)))
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
            .find(|image| image.names.iter().any(|n| *n == name.name))
            .map(|image| image.size_bytes.unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::NodeBuilder;

    fn node(images: &[(&[&str], Option<i64>)]) -> Node {
        use k8s_openapi::api::core::v1::ContainerImage;
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
        node.status.images.iter().find(|i| i.names.iter().any(|n| n == name)).map(|i| i.size_bytes.unwrap_or(0))
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
