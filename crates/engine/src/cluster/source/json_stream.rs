//! A JSON cluster document read as a stream: the top-level object is walked by a visitor, each
//! item of its `items` list is cut out as text (a few kilobytes) and sent, a few hundred at a time,
//! to be decoded on the rayon pool while the reader goes on; the decoded objects are applied in
//! file order, each batch while the next one decodes. Nothing holds the whole file, its tree or a
//! list of every decoded object.
//!
//! A document without `items` (or with `items: null`) is one object: its fields are kept as text
//! and handed back whole.

use std::fmt;
use std::io::Read;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use rayon::prelude::*;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::cluster::source::file::{Decoded, Sink, SourceError};

/// Items per batch: enough to keep the pool busy, few enough to hold little text.
pub(super) const BATCH: usize = 256;

/// What the document turned out to be.
pub(crate) enum Document {
    /// A list: its items went to the sink.
    List,
    /// One object, as JSON text.
    Object(String),
}

pub(super) struct Batch {
    pub(super) first: usize,
    pub(super) items: Vec<Box<RawValue>>,
    /// The kind the list's name gives its items, when the name came before them.
    pub(super) default_kind: Option<String>,
}

pub(super) enum Message {
    Items(Batch),
    /// The list has ended; its kind gives items without one theirs.
    End(Option<String>),
}

/// Decodes one item: `(index, text, default kind, whether the default is final)`; `Ok(None)`
/// when the item has no kind and the default is not known yet.
pub(crate) trait DecodeItem:
    Fn(usize, &RawValue, Option<&str>, bool) -> Result<Option<Decoded>, SourceError> + Sync
{
}
impl<F: Fn(usize, &RawValue, Option<&str>, bool) -> Result<Option<Decoded>, SourceError> + Sync> DecodeItem for F {}

/// Reads the document, sending list items to `sink`. The outer error is the document's syntax
/// (which wins, as a whole-document parse would find it first); the inner one an item's.
pub(crate) fn read<R: Read>(
    reader: R,
    sink: &mut (impl Sink + Send),
    decode: impl DecodeItem,
) -> Result<Result<Document, SourceError>, serde_json::Error> {
    std::thread::scope(|scope| {
        let (tx, rx) = sync_channel::<Message>(2);
        let decode = &decode;
        let consumer = scope.spawn(move || consume(rx, sink, decode));
        let read = read_document(reader, tx);
        let consumed = consumer.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        let document = read?;
        Ok(consumed.map(|()| document))
    })
}

fn read_document<R: Read>(reader: R, tx: SyncSender<Message>) -> Result<Document, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_reader(reader);
    let mut state = State { tx, kind: None, fields: Vec::new(), batch: Vec::new(), next: 0, list: false };
    DocumentSeed(&mut state).deserialize(&mut de)?;
    de.end()?;
    if state.list {
        state.flush();
        let default_kind = state.default_kind();
        let _ = state.tx.send(Message::End(default_kind));
        return Ok(Document::List);
    }
    let mut text = String::from("{");
    for (i, (key, value)) in state.fields.iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&serde_json::to_string(key)?);
        text.push(':');
        text.push_str(value.get());
    }
    text.push('}');
    Ok(Document::Object(text))
}

struct State {
    tx: SyncSender<Message>,
    /// The document's `kind`, once read.
    kind: Option<String>,
    /// Every field but a list's items, for a document that is one object.
    fields: Vec<(String, Box<RawValue>)>,
    batch: Vec<Box<RawValue>>,
    /// The index of the first item of `batch`.
    next: usize,
    list: bool,
}

impl State {
    fn default_kind(&self) -> Option<String> {
        item_kind_of_list(self.kind.as_deref()).map(str::to_string)
    }

    fn flush(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        let items = std::mem::take(&mut self.batch);
        let first = self.next;
        self.next += items.len();
        // A consumer that stopped (an item failed) takes no more; the document is still read to
        // its end for its syntax.
        let _ = self.tx.send(Message::Items(Batch { first, items, default_kind: self.default_kind() }));
    }
}

/// The kind of the items of a list of this kind: `NodeList` holds `Node`s; a plain `List` names
/// each item's kind.
pub(super) fn item_kind_of_list(list_kind: Option<&str>) -> Option<&str> {
    list_kind.and_then(|k| k.strip_suffix("List")).filter(|k| !k.is_empty())
}

struct DocumentSeed<'a>(&'a mut State);

impl<'de> DeserializeSeed<'de> for DocumentSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for DocumentSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Kubernetes object or list")
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<(), M::Error> {
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "items" => {
                    if !map.next_value_seed(ItemsSeed(self.0))? {
                        let null = RawValue::from_string("null".to_string()).map_err(serde::de::Error::custom)?;
                        self.0.fields.push((key, null));
                    }
                }
                "kind" => {
                    let value: Box<RawValue> = map.next_value()?;
                    self.0.kind =
                        serde_json::from_str::<Option<String>>(value.get()).map_err(serde::de::Error::custom)?;
                    self.0.fields.push((key, value));
                }
                _ => {
                    let value: Box<RawValue> = map.next_value()?;
                    self.0.fields.push((key, value));
                }
            }
        }
        Ok(())
    }
}

/// A list's `items`: `true` when it was a list, `false` for `null`.
struct ItemsSeed<'a>(&'a mut State);

impl<'de> DeserializeSeed<'de> for ItemsSeed<'_> {
    type Value = bool;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ItemsSeed<'_> {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence")
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        // A second `items` replaces the first, as in a whole-document parse: what the first sent
        // is already applied, so say so rather than guess.
        if self.0.list {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            return Err(serde::de::Error::custom("duplicate field `items`"));
        }
        self.0.list = true;
        while let Some(item) = seq.next_element::<Box<RawValue>>()? {
            self.0.batch.push(item);
            if self.0.batch.len() >= BATCH {
                self.0.flush();
            }
        }
        self.0.flush();
        Ok(true)
    }
}

/// Decodes batches as they come and applies them in order: each batch while the next one
/// decodes. After an item without a kind while the list's kind is unknown, the rest is held
/// (as text) until the list's end names the kind, so the order is kept.
pub(super) fn consume(
    rx: Receiver<Message>,
    sink: &mut (impl Sink + Send),
    decode: &impl DecodeItem,
) -> Result<(), SourceError> {
    type Decodes = Vec<Result<Option<Decoded>, SourceError>>;
    let decode_batch = |batch: &Batch| -> Decodes {
        let kind = batch.default_kind.as_deref();
        batch.items.par_iter().enumerate().map(|(i, raw)| decode(batch.first + i, raw, kind, false)).collect()
    };
    // Applies a decoded batch; `Err` at the first failure, `Ok(Some(i))` when item `i` of the
    // batch waits for the list's kind.
    let apply = |sink: &mut dyn FnMut(Decoded), decoded: Decodes| -> Result<Option<usize>, SourceError> {
        for (i, result) in decoded.into_iter().enumerate() {
            match result? {
                Some(object) => sink(object),
                None => return Ok(Some(i)),
            }
        }
        Ok(None)
    };
    let mut add = |object: Decoded| sink.add(object);
    let mut pending: Option<(Batch, Decodes)> = None;
    let mut held: Vec<(usize, Box<RawValue>)> = Vec::new();
    let mut failed: Option<SourceError> = None;
    let mut holding = false;
    // Applies `pending`, noting a failure or the start of holding.
    let settle = |pending: Option<(Batch, Decodes)>,
                  add: &mut dyn FnMut(Decoded),
                  held: &mut Vec<(usize, Box<RawValue>)>,
                  holding: &mut bool,
                  failed: &mut Option<SourceError>| {
        let Some((batch, decoded)) = pending else { return };
        if failed.is_some() {
            return;
        }
        if *holding {
            held.extend(batch.items.into_iter().enumerate().map(|(i, raw)| (batch.first + i, raw)));
            return;
        }
        match apply(add, decoded) {
            Ok(None) => {}
            Ok(Some(from)) => {
                *holding = true;
                held.extend(batch.items.into_iter().enumerate().skip(from).map(|(i, raw)| (batch.first + i, raw)));
            }
            Err(e) => *failed = Some(e),
        }
    };
    for message in rx {
        match message {
            Message::Items(batch) => {
                if failed.is_some() {
                    continue;
                }
                if holding {
                    // The batch decoded while holding began is held first.
                    settle(pending.take(), &mut add, &mut held, &mut holding, &mut failed);
                    held.extend(batch.items.into_iter().enumerate().map(|(i, raw)| (batch.first + i, raw)));
                    continue;
                }
                let previous = pending.take();
                let ((), decoded) = rayon::join(
                    || settle(previous, &mut add, &mut held, &mut holding, &mut failed),
                    || decode_batch(&batch),
                );
                pending = Some((batch, decoded));
            }
            Message::End(kind) => {
                settle(pending.take(), &mut add, &mut held, &mut holding, &mut failed);
                if let Some(e) = failed.take() {
                    return Err(e);
                }
                let decoded: Decodes = held.par_iter().map(|(i, raw)| decode(*i, raw, kind.as_deref(), true)).collect();
                for result in decoded {
                    if let Some(object) = result? {
                        add(object);
                    }
                }
                return Ok(());
            }
        }
    }
    // The document ended without a list's end (a syntax error, or one object).
    settle(pending.take(), &mut add, &mut held, &mut holding, &mut failed);
    failed.map_or(Ok(()), Err)
}
