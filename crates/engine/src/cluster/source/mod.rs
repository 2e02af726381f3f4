//! Models read from files: a snapshot file of Kubernetes objects (JSON or YAML, streamed) and the
//! embedded demo cluster. The live source (a cluster's list and watch) is the extender's
//! (`predicate_extender::source`); both store objects as [`kinds::ModelKind`] keeps them.

pub mod demo;
pub mod file;
mod json_buffered;
mod json_stream;
pub mod kinds;

pub use file::{decode_json_object, load_file, load_snapshot, parse_objects, Objects, SourceError};
