//! Where the cluster model comes from: a snapshot file or the embedded demo cluster.

pub mod demo;
pub mod file;
mod json_buffered;
mod json_stream;
pub mod kube;

pub use file::{load_file, load_snapshot, parse_objects, Objects, SourceError};
