//! Labels as selectors read them, below both the cluster model and the plugins (apimachinery's
//! `pkg/labels` is the model): [`LabelMap`], what a selector asks of a set of labels; the syntax
//! of label keys and values ([`syntax`]); label selectors and node selector terms, compiled
//! ([`selectors`]). It imports nothing else of the crate, so `cluster`, `framework`, the plugins
//! and their helpers all reach it without an arrow back up.

use std::collections::BTreeMap;

pub mod selectors;
pub mod syntax;

/// What a label selector reads: the value of a key. The cluster model's pod labels (`Labels`) and
/// the maps of the objects kept whole (nodes, namespaces, volumes) both answer it.
pub trait LabelMap {
    fn label(&self, key: &str) -> Option<&str>;
}

impl LabelMap for BTreeMap<String, String> {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key).map(String::as_str)
    }
}
