//! Nodes decoded while a streamed body arrived ([`crate::wire::item_splitter`]), found again by
//! the placeholder that stands for each in the skeleton when the skeleton is decoded.

use parking_lot::Mutex;
use serde_json::value::RawValue;

use crate::wire::fields::WireError;
use crate::wire::item_splitter::Placeholders;
use predicate_engine::cluster::objects::Node;

/// Item `g`'s decoded node (or why it is not one), by its placeholder in the skeleton.
#[derive(Debug)]
pub struct Predecoded {
    placeholders: Placeholders,
    nodes: Mutex<Vec<Option<Result<Node, WireError>>>>,
    syntax_error: Option<WireError>,
}

impl Predecoded {
    /// `syntax_error`: the first item, in body order, that is not valid JSON (in any list, used
    /// or not: the whole body's parse refuses it before anything is decoded).
    pub fn new(
        placeholders: Placeholders,
        nodes: Vec<Result<Node, WireError>>,
        syntax_error: Option<WireError>,
    ) -> Self {
        Predecoded { placeholders, nodes: Mutex::new(nodes.into_iter().map(Some).collect()), syntax_error }
    }

    /// The first item that is not valid JSON.
    pub fn syntax_error(&self) -> Option<&WireError> {
        self.syntax_error.as_ref()
    }

    /// For each of `raws` (values inside `body`, the skeleton), the node decoded for it when it is
    /// a placeholder; `None` for a value that is in the skeleton itself.
    pub fn take(&self, body: &[u8], raws: &[&RawValue]) -> Vec<Option<Result<Node, WireError>>> {
        let mut nodes = self.nodes.lock();
        raws.iter()
            .map(|raw| {
                let g = self.placeholders.item_of(body, raw.get().as_bytes())?;
                nodes.get_mut(g).and_then(Option::take)
            })
            .collect()
    }
}
