//! The quick way through a JSON cluster file: the file is read in chunks of a few megabytes, and
//! each list item is cut out of the chunk by serde_json's slice reader, which skips a string a
//! word at a time, where the stream reader of [`json_stream`] takes a byte at a time (its cutting
//! was the serial half of a snapshot load). The items then go the same way as there: decoded in
//! parallel batches and applied in file order, by the same code.
//!
//! Only the common shape is taken: one object whose `items` is a list, with nothing after it but
//! whitespace. Anything else (no `items`, `items: null`, a second `items`, a syntax error, an item
//! that does not decode) makes [`read`] give up, and the caller reads the file again with
//! [`json_stream`], whose answer or error is then the one given. So a file that loads here loads
//! the same there, and any error is worded as before.
//!
//! [`json_stream`]: super::json_stream

use std::io::Read;
use std::sync::mpsc::{sync_channel, SyncSender};

use serde::de::{Deserialize, IgnoredAny};
use serde_json::value::RawValue;

use crate::cluster::source::file::Sink;
use crate::cluster::source::json_stream::{consume, item_kind_of_list, Batch, DecodeItem, Message, BATCH};

/// Bytes read at a time; also the least the buffer grows by.
const CHUNK: usize = 8 << 20;

/// Why this reader stopped short: the file is to be read the exact way.
#[derive(Debug)]
pub(crate) struct GiveUp;

/// Reads a list document, sending its items to `sink`. `Err(GiveUp)` when the document is not a
/// list of the common shape, is not valid, or an item failed: what `sink` got is then to be
/// dropped.
pub(crate) fn read<R: Read>(reader: R, sink: &mut (impl Sink + Send), decode: impl DecodeItem) -> Result<(), GiveUp> {
    read_in_chunks(reader, CHUNK, sink, decode)
}

fn read_in_chunks<R: Read>(
    reader: R,
    chunk: usize,
    sink: &mut (impl Sink + Send),
    decode: impl DecodeItem,
) -> Result<(), GiveUp> {
    std::thread::scope(|scope| {
        let (tx, rx) = sync_channel::<Message>(2);
        let decode = &decode;
        let consumer = scope.spawn(move || consume(rx, sink, decode));
        let mut scanner = Scanner { reader, chunk, buf: Vec::new(), pos: 0, eof: false };
        // The channel closes when `tx` goes, with the document read or given up.
        let read = scanner.document(tx);
        let consumed = consumer.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        read?;
        consumed.map_err(|_| GiveUp)
    })
}

struct Scanner<R> {
    reader: R,
    chunk: usize,
    /// Read and not yet dropped; `buf[pos..]` is still to be scanned.
    buf: Vec<u8>,
    pos: usize,
    /// The reader has nothing more.
    eof: bool,
}

impl<R: Read> Scanner<R> {
    /// Drops what was scanned and appends the next chunk (at least as much as is held, so an item
    /// longer than a chunk is read in a few steps, not many).
    fn more(&mut self) -> Result<(), GiveUp> {
        if self.eof {
            return Err(GiveUp);
        }
        self.buf.drain(..self.pos);
        self.pos = 0;
        let want = self.chunk.max(self.buf.len());
        let read = (&mut self.reader).take(want as u64).read_to_end(&mut self.buf).map_err(|_| GiveUp)?;
        if read == 0 {
            self.eof = true;
        }
        Ok(())
    }

    /// The next byte that is not JSON whitespace, without taking it; `None` at the end.
    fn peek(&mut self) -> Result<Option<u8>, GiveUp> {
        loop {
            match self.buf[self.pos..].iter().position(|b| !matches!(b, b' ' | b'\n' | b'\t' | b'\r')) {
                Some(skip) => {
                    self.pos += skip;
                    return Ok(Some(self.buf[self.pos]));
                }
                None if self.eof => {
                    self.pos = self.buf.len();
                    return Ok(None);
                }
                None => {
                    self.pos = self.buf.len();
                    self.more()?;
                }
            }
        }
    }

    /// Takes this byte, after whitespace.
    /// After a member of an object or array: consumes `,` (more follow, `false`) or `close` (the
    /// end, `true`); anything else gives up.
    fn closed_after_member(&mut self, close: u8) -> Result<bool, GiveUp> {
        match self.peek()? {
            Some(b',') => {
                self.pos += 1;
                Ok(false)
            }
            Some(b) if b == close => {
                self.pos += 1;
                Ok(true)
            }
            _ => Err(GiveUp),
        }
    }

    fn expect(&mut self, byte: u8) -> Result<(), GiveUp> {
        if self.peek()? != Some(byte) {
            return Err(GiveUp);
        }
        self.pos += 1;
        Ok(())
    }

    /// The next JSON value. One that reaches the end of what is read may go on in the next chunk
    /// (a number, or anything cut short, which can fail as "EOF" or as, say, "invalid number"):
    /// it is read again with more, until it is whole or fails at the same place again.
    fn value<T: for<'de> Deserialize<'de>>(&mut self) -> Result<T, GiveUp> {
        let mut failed_at = None;
        loop {
            let mut values = serde_json::Deserializer::from_slice(&self.buf[self.pos..]).into_iter::<T>();
            match values.next() {
                Some(Ok(value)) => {
                    let end = self.pos + values.byte_offset();
                    if end < self.buf.len() || self.eof {
                        self.pos = end;
                        return Ok(value);
                    }
                }
                Some(Err(_)) | None if self.eof => return Err(GiveUp),
                Some(Err(e)) => {
                    let at = Some((e.line(), e.column()));
                    if at == failed_at {
                        return Err(GiveUp); // not where the chunk ended: an error of the file
                    }
                    failed_at = at;
                }
                None => {}
            }
            self.more()?;
        }
    }

    /// The whole document: `{`, its fields, `}`, then nothing but whitespace.
    fn document(&mut self, tx: SyncSender<Message>) -> Result<(), GiveUp> {
        let mut kind: Option<String> = None;
        let mut listed = false;
        self.expect(b'{')?;
        if self.peek()? == Some(b'}') {
            return Err(GiveUp); // an empty object: no list
        }
        loop {
            let key: String = self.value()?;
            self.expect(b':')?;
            match key.as_str() {
                "items" if !listed => {
                    listed = true;
                    self.items(&tx, item_kind_of_list(kind.as_deref()))?;
                }
                "items" => return Err(GiveUp), // a second one: the exact reader says how
                "kind" => {
                    let value: Box<RawValue> = self.value()?;
                    kind = serde_json::from_str::<Option<String>>(value.get()).map_err(|_| GiveUp)?;
                }
                _ => {
                    let IgnoredAny = self.value()?;
                }
            }
            if self.closed_after_member(b'}')? {
                break;
            }
        }
        if !listed || self.peek()?.is_some() {
            return Err(GiveUp);
        }
        let _ = tx.send(Message::End(item_kind_of_list(kind.as_deref()).map(str::to_string)));
        Ok(())
    }

    /// A list's items, in batches; `default_kind` is the one the list's name gave so far.
    fn items(&mut self, tx: &SyncSender<Message>, default_kind: Option<&str>) -> Result<(), GiveUp> {
        self.expect(b'[')?;
        let mut next = 0;
        let mut batch = Vec::with_capacity(BATCH);
        let send = |items: Vec<Box<RawValue>>, first: usize| {
            // A consumer that stopped (an item failed) takes no more; reading goes on, for the
            // syntax, as the exact reader's does.
            let _ = tx.send(Message::Items(Batch { first, items, default_kind: default_kind.map(str::to_string) }));
        };
        if self.peek()? == Some(b']') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            batch.push(self.value::<Box<RawValue>>()?);
            if batch.len() >= BATCH {
                let items = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                send(items, next);
                next += BATCH;
            }
            if self.closed_after_member(b']')? {
                break;
            }
        }
        if !batch.is_empty() {
            send(batch, next);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::source::file::{Decoded, SourceError};
    use crate::cluster::source::json_stream;

    /// Records what each item was decoded from, in the order applied.
    #[derive(Default)]
    struct Record(Vec<String>);

    impl Sink for Record {
        fn add(&mut self, object: Decoded) {
            if let Decoded::Skipped(seen) = object {
                self.0.push(seen);
            }
        }
    }

    /// An item without a kind waits for the list's; an item `"bad"` fails.
    fn decode(index: usize, raw: &RawValue, kind: Option<&str>, last: bool) -> Result<Option<Decoded>, SourceError> {
        if raw.get() == "\"bad\"" {
            return Err(SourceError::Syntax { file: "f".into(), message: format!("items[{index}]") });
        }
        let own = raw.get().contains("\"kind\"");
        if !own && kind.is_none() && !last {
            return Ok(None);
        }
        Ok(Some(Decoded::Skipped(format!("{index} {kind:?} {}", raw.get()))))
    }

    fn exact(text: &str) -> Option<Vec<String>> {
        let mut sink = Record::default();
        match json_stream::read(text.as_bytes(), &mut sink, decode) {
            Ok(Ok(json_stream::Document::List)) => Some(sink.0),
            _ => None,
        }
    }

    fn quick(text: &str, chunk: usize) -> Option<Vec<String>> {
        let mut sink = Record::default();
        read_in_chunks(text.as_bytes(), chunk, &mut sink, decode).ok().map(|()| sink.0)
    }

    fn items(n: usize) -> String {
        (0..n)
            .map(|i| match i % 3 {
                0 => format!(r#"{{"kind":"Pod","n":{i},"s":"a\"b\\c\u00e9"}}"#),
                1 => format!(" \n\t{{\"n\" : [{i}, 1.5e3, true, null, {{}}]}}\r\n"),
                _ => format!(r#"{{"kind":"Node","n":{i}}}"#),
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    #[test]
    fn reads_what_the_exact_reader_reads_at_any_chunk_size() {
        let n = 2 * BATCH + 7;
        let documents = [
            format!(
                r#"{{"kind":"PodList","apiVersion":"v1","metadata":{{"resourceVersion":"12"}},"items":[{}]}}"#,
                items(n)
            ),
            format!(
                " {{ \"apiVersion\" : \"v1\" , \"items\" : [ {} ] , \"kind\" : \"NodeList\" , \"n\" : 123 }} \n",
                items(n)
            ),
            format!(r#"{{"items":[{}],"kind":"List"}}"#, items(5)),
            r#"{"kind":"List","items":[]}"#.to_string(),
            r#"{"kind":"List","items":[],"kind":"PodList"}"#.to_string(),
            r#"{"kind":null,"items":[{"kind":"Pod"}],"metadata":{"a":[1,2,{"b":"]}"}]}}"#.to_string(),
        ];
        for document in &documents {
            let expected = exact(document).expect("the exact reader reads it");
            assert!(!expected.is_empty() || document.contains("[]"));
            for chunk in [1, 2, 3, 7, 64, 1000, CHUNK] {
                assert_eq!(quick(document, chunk).as_ref(), Some(&expected), "chunk {chunk}: {document:.80}");
            }
        }
    }

    #[test]
    fn gives_up_on_anything_else() {
        let documents = [
            r#"{"kind":"Pod","metadata":{"name":"a"}}"#,
            r#"{"kind":"List","items":null}"#,
            r#"{}"#,
            r#"{"items":[{"kind":"Pod"}],"items":[]}"#,
            r#"{"items":[{"kind":"Pod"}]} x"#,
            r#"{"items":[{"kind":"Pod"}]}{}"#,
            r#"{"items":[{"kind":"Pod"},]}"#,
            r#"{"items":[{"kind":"Pod"} {"kind":"Pod"}]}"#,
            r#"{"items":[{"kind":"Pod"}],"n":12x}"#,
            r#"{"items":[{"kind":"Pod"}],"n":1"#,
            r#"{"items":[{"kind":"Pod"}"#,
            r#"{"items":[{"kind":"Pod"}],"kind":7}"#,
            r#"{"items":[{"kind":"Pod"},"bad",{"kind":"Pod"}]}"#,
            r#"{"items":[{"kind":"Pod","s":"unterminated}]}"#,
        ];
        for document in documents {
            for chunk in [1, 5, CHUNK] {
                assert_eq!(quick(document, chunk), None, "chunk {chunk}: {document}");
            }
        }
    }

    #[test]
    fn a_number_cut_by_the_chunk_is_read_whole() {
        // "12345" split after any digit must not be read as a shorter number and then fail.
        let document = r#"{"items":[{"kind":"Pod"}],"n":12345}"#;
        for chunk in 1..document.len() + 2 {
            assert_eq!(quick(document, chunk).map(|v| v.len()), Some(1), "chunk {chunk}");
        }
    }
}
