//! Finding an image on a node by name without walking its image list: ImageLocalityPriority asks,
//! for every candidate node, whether it has each of the pod's images, and a node lists 20-40
//! images under one or two long names each.
//!
//! Image names are interned ([`IStr`]): every live copy of a name is one allocation, so a name is
//! known by its address. A node's names are put, on first use, into one sorted table of
//! `(address, size)`; a lookup binary-searches it for the request's copy of the name (found once
//! per request, [`ImageName`]) and touches neither the node's image list nor any text.

use std::ops::Deref;
use std::sync::OnceLock;

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

thread_local! {
    static SKIPPING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `decode` on this thread with every `status.images` read as none, checked against the same
/// shape without keeping anything (a value `Images` refuses is refused with the same error): for a
/// /filter's request nodes, as no predicate reads images (ImageLocality is a priority), and a
/// node's 20-40 images are half its bytes and most of its decoded size.
pub fn without_images<R>(decode: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            SKIPPING.set(self.0);
        }
    }
    let _restore = Restore(SKIPPING.replace(true));
    decode()
}

impl<'de> Deserialize<'de> for Images {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Images, D::Error> {
        if SKIPPING.get() {
            Option::<shape::Images>::deserialize(d)?;
            return Ok(Images::default());
        }
        let images: Option<Vec<Image>> = Option::deserialize(d)?;
        Ok(Images(images.unwrap_or_default().into_boxed_slice()))
    }
}

/// What [`Images`] accepts, as types that keep nothing: the same visitors' expectations and
/// names (`struct Image`, `a sequence`, `a string`), so errors read the same.
mod shape {
    use std::fmt;

    use serde::de::{Deserializer, SeqAccess, Visitor};
    use serde::Deserialize;

    /// `status.images`.
    pub(super) struct Images;

    impl<'de> Deserialize<'de> for Images {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Images, D::Error> {
            d.deserialize_seq(Each::<Image>(std::marker::PhantomData)).map(|_| Images)
        }
    }

    /// One image: [`super::Image`]'s fields, read and dropped.
    #[derive(Default, Deserialize)]
    #[serde(rename_all = "camelCase", default)]
    #[allow(dead_code)] // read only to check their types
    struct Image {
        #[serde(deserialize_with = "crate::cluster::objects::null_as_default")]
        names: Names,
        size_bytes: Option<i64>,
    }

    #[derive(Default)]
    struct Names;

    impl<'de> Deserialize<'de> for Names {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Names, D::Error> {
            d.deserialize_seq(Each::<Name>(std::marker::PhantomData)).map(|_| Names)
        }
    }

    struct Name;

    impl<'de> Deserialize<'de> for Name {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Name, D::Error> {
            struct NameVisitor;
            impl Visitor<'_> for NameVisitor {
                type Value = Name;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("a string")
                }
                fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Name, E> {
                    Ok(Name)
                }
            }
            d.deserialize_str(NameVisitor)
        }
    }

    /// A sequence of `T`, each read and dropped.
    struct Each<T>(std::marker::PhantomData<T>);

    impl<'de, T: Deserialize<'de>> Visitor<'de> for Each<T> {
        type Value = ();
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a sequence")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            while seq.next_element::<T>()?.is_some() {}
            Ok(())
        }
    }
}

/// An image name a pod asks for, as its interned copy: found once per request.
#[derive(Debug, Clone)]
pub struct ImageName(IStr);

impl ImageName {
    /// The name, if any node (or anything else) holds it: a name nobody holds is on no node.
    pub fn find(name: &str) -> Option<Self> {
        IStr::existing(name).map(ImageName)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A node's image names by address with the size of the first image listing each, built on
/// first use: an open-addressing table, its slots' addresses first and their sizes after, in one
/// allocation. A lookup reads one or two cache lines of it (the table of every candidate node is
/// read once per /prioritize, and most of them are cold).
#[derive(Debug, Default)]
pub struct NodeImages(OnceLock<Box<[u64]>>);

/// Where `id` starts its probe in a table of `slots` (a power of two) slots. Addresses are
/// 16-byte aligned at least, so the low bits are dropped before mixing.
fn home(id: u64, slots: usize) -> usize {
    ((id >> 4).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize & (slots - 1)
}

impl NodeImages {
    fn table(&self, node: &Node) -> &[u64] {
        self.0.get_or_init(|| {
            let names = node.status.images.iter().map(|image| image.names.len()).sum::<usize>();
            // At most half full, so probes stay short.
            let slots = (names * 2).next_power_of_two().max(2);
            let mut table = vec![0u64; slots * 2];
            for image in node.status.images.iter() {
                for name in image.names.iter() {
                    let id = name.id() as u64;
                    let mut i = home(id, slots);
                    // The first image listing a name keeps it.
                    while table[i] != 0 && table[i] != id {
                        i = (i + 1) & (slots - 1);
                    }
                    if table[i] == 0 {
                        table[i] = id;
                        table[slots + i] = image.size_bytes.unwrap_or(0) as u64;
                    }
                }
            }
            table.into_boxed_slice()
        })
    }

    /// The size of the first image of `node` (the node these were built for) listed under
    /// `name`, if any: `sizeBytes`, 0 when unset. The node holds its names and the caller holds
    /// `name`, so the addresses compared are all live.
    pub fn size_of(&self, node: &Node, name: &ImageName) -> Option<i64> {
        let table = self.table(node);
        let slots = table.len() / 2;
        let id = name.0.id() as u64;
        let mut i = home(id, slots);
        loop {
            match table[i] {
                0 => return None,
                found if found == id => return Some(table[slots + i] as i64),
                _ => i = (i + 1) & (slots - 1),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::NodeBuilder;

    #[test]
    fn skipped_images_are_refused_as_decoded_ones_are() {
        let cases = [
            "null",
            "[]",
            r#"[{"names":["a","b"],"sizeBytes":5,"other":{}}]"#,
            r#"[{"names":null},{}]"#,
            r#"[[["a"],1]]"#,
            r#""x""#,
            "{}",
            "[1]",
            r#"[{"names":"a"}]"#,
            r#"[{"names":[1]}]"#,
            r#"[{"sizeBytes":"big"}]"#,
            r#"[[["a"],"big"]]"#,
        ];
        for json in cases {
            let decoded = serde_json::from_str::<Images>(json).map(|i| i.len()).map_err(|e| e.to_string());
            let skipped =
                without_images(|| serde_json::from_str::<Images>(json).map(|i| i.len()).map_err(|e| e.to_string()));
            assert_eq!(skipped, decoded.map(|_| 0), "{json}");
            assert!(!SKIPPING.get(), "the flag is restored");
        }
    }

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
        let _held = IStr::new("registry/none:1"); // held elsewhere, on no node of this one
        for name in ["registry/app:1.0", "registry/app@sha256:1", "registry/db:2", "registry/none:1", ""] {
            let found = ImageName::find(name).and_then(|name| images.size_of(&n, &name));
            assert_eq!(found, walk(&n, name), "{name}");
        }
        assert_eq!(ImageName::find("registry/never-seen:1").map(|i| i.as_str().to_string()), None);
        let app = ImageName::find("registry/app:1.0").unwrap();
        assert_eq!(images.size_of(&n, &app), Some(10), "the first listed wins");
    }

    #[test]
    fn a_node_of_many_images_agrees_with_the_walk_for_every_name() {
        // 40 images of two names each, some names listed twice: the table is full to half.
        let names: Vec<Vec<String>> = (0..40)
            .map(|i| vec![format!("registry/app-{i}@sha256:{i:064}"), format!("registry/app-{}:v1", i % 30)])
            .collect();
        let images: Vec<(Vec<&str>, Option<i64>)> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.iter().map(String::as_str).collect(), (i % 7 != 0).then_some(i as i64 * 1000)))
            .collect();
        let listed: Vec<(&[&str], Option<i64>)> = images.iter().map(|(n, s)| (n.as_slice(), *s)).collect();
        let n = node(&listed);
        let table = NodeImages::default();
        for name in names.iter().flatten() {
            let found = ImageName::find(name).and_then(|name| table.size_of(&n, &name));
            assert_eq!(found, walk(&n, name), "{name}");
        }
        let _held = IStr::new("registry/app-99:v1");
        assert_eq!(table.size_of(&n, &ImageName::find("registry/app-99:v1").unwrap()), None);
    }

    #[test]
    fn a_node_without_images_has_none() {
        let n = node(&[]);
        let _held = IStr::new("x:1");
        assert_eq!(NodeImages::default().size_of(&n, &ImageName::find("x:1").unwrap()), None);
    }
}
