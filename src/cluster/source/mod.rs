//! Where the cluster model comes from: a snapshot file or the embedded demo cluster.

pub mod demo;
pub mod file;
pub mod kube;

pub use file::{load_file, parse_objects, Objects, SourceError};
