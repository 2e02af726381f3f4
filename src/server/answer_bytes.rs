//! An answer's bytes as a list of pieces, so a /filter answer that echoes the request's `Nodes`
//! items shares them with the request body instead of copying them. At 5,000 `Nodes` the answer is
//! mostly those items (tens of MB): serialised into a `Vec` of its own, it was a second copy of them
//! held next to the request body, grown by doubling.
//!
//! serde_json still writes every byte of the answer, in order, so it is the same answer byte for
//! byte: [`Pieces`] only decides, for each write, whether to copy it or, when it lies inside the
//! request body (a `RawValue` is written with one `write_all` of its text), to keep a slice of it.
//! For a streamed body ([`crate::server::streamed_nodes`]) the request body is the skeleton, and a
//! write of one of its placeholders stands for that item's bytes, kept compressed
//! ([`ItemArchive`]): they are decompressed, a block at a time, as the answer is written.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use hyper::body::{Frame, SizeHint};

use crate::server::item_archive::{ArchiveReader, ItemArchive};
use crate::server::large_bodies::Admitted;

/// A write at least this long that lies inside the request body is shared rather than copied:
/// below it the slice's bookkeeping costs more than the copy.
const SHARE_AT_LEAST: usize = 256;

/// A piece of an answer.
#[derive(Debug)]
enum Piece {
    Bytes(Bytes),
    /// A kept item of the request, by number.
    Item(u32),
}

/// An answer's bytes: its pieces, in order.
#[derive(Debug, Default)]
pub(crate) struct AnswerBytes {
    pieces: Vec<Piece>,
    len: usize,
    /// Where `Piece::Item`s are.
    archive: Option<Arc<ItemArchive>>,
    /// A large request's admission, released once the answer has been written (its pieces may be
    /// the request body's bytes).
    admitted: Admitted,
}

impl From<Vec<u8>> for AnswerBytes {
    fn from(bytes: Vec<u8>) -> Self {
        let len = bytes.len();
        AnswerBytes { pieces: vec![Piece::Bytes(Bytes::from(bytes))], len, archive: None, admitted: None }
    }
}

impl AnswerBytes {
    /// The answer in one buffer (the fuzz targets and tests compare it whole). Fails only if a
    /// kept item cannot be read back.
    #[cfg(any(test, feature = "test-util"))]
    pub(crate) fn into_vec(self) -> io::Result<Vec<u8>> {
        let mut whole = Vec::with_capacity(self.len);
        let mut reader = self.archive.map(ArchiveReader::new);
        for piece in self.pieces {
            whole.extend_from_slice(&piece_bytes(piece, &mut reader)?);
        }
        Ok(whole)
    }

    /// The answer as a response body of known length (hyper writes `Content-Length`, as for a
    /// single buffer).
    pub(crate) fn into_body(self) -> Body {
        Body::new(PiecesBody {
            pieces: self.pieces.into_iter(),
            reader: self.archive.map(ArchiveReader::new),
            left: self.len as u64,
            _admitted: self.admitted,
        })
    }

    /// These bytes, holding `admitted` until they have been written.
    pub(crate) fn holding(self, admitted: Admitted) -> Self {
        AnswerBytes { admitted, ..self }
    }
}

/// A piece's bytes (an item's read back through `reader`).
fn piece_bytes(piece: Piece, reader: &mut Option<ArchiveReader>) -> io::Result<Bytes> {
    match (piece, reader) {
        (Piece::Bytes(bytes), _) => Ok(bytes),
        (Piece::Item(g), Some(reader)) => reader.item(g),
        (Piece::Item(g), None) => Err(io::Error::other(format!("kept item {g} without its archive"))),
    }
}

/// A [`std::io::Write`] that serde_json writes an answer into; [`Pieces::finish`] gives its bytes.
pub(crate) struct Pieces {
    /// The request body: writes from inside it are kept as slices of it.
    source: Bytes,
    /// A streamed body's kept items: a write of a placeholder in `source` stands for its item.
    archive: Option<Arc<ItemArchive>>,
    done: Vec<Piece>,
    /// Copied bytes since the last shared slice.
    copied: Vec<u8>,
    len: usize,
}

impl Pieces {
    pub(crate) fn sharing(source: Bytes, archive: Option<Arc<ItemArchive>>) -> Self {
        Pieces { source, archive, done: Vec::new(), copied: Vec::new(), len: 0 }
    }

    pub(crate) fn finish(mut self) -> AnswerBytes {
        self.end_copied();
        AnswerBytes { pieces: self.done, len: self.len, archive: self.archive, admitted: None }
    }

    fn end_copied(&mut self) {
        if !self.copied.is_empty() {
            self.done.push(Piece::Bytes(Bytes::from(std::mem::take(&mut self.copied))));
        }
    }

    /// Where `buf` starts in the request body, when it lies inside it (compared by address:
    /// serde_json hands a `RawValue`'s text, borrowed from the body, straight to the writer).
    fn offset_in_source(&self, buf: &[u8]) -> Option<usize> {
        let start = (buf.as_ptr() as usize).checked_sub(self.source.as_ptr() as usize)?;
        (start.checked_add(buf.len())? <= self.source.len()).then_some(start)
    }

    /// The piece `buf` is when it is not copied: a kept item, or a slice of the request body.
    fn shared(&self, buf: &[u8]) -> Option<(Piece, usize)> {
        if let Some(archive) = &self.archive {
            if let Some(g) = archive.item_of(&self.source, buf) {
                return Some((Piece::Item(g), archive.len_of(g)));
            }
        }
        if buf.len() < SHARE_AT_LEAST {
            return None;
        }
        let start = self.offset_in_source(buf)?;
        Some((Piece::Bytes(self.source.slice(start..start + buf.len())), buf.len()))
    }
}

impl io::Write for Pieces {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.shared(buf) {
            Some((piece, len)) => {
                self.end_copied();
                self.done.push(piece);
                self.len += len;
            }
            None => {
                self.copied.extend_from_slice(buf);
                self.len += buf.len();
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// [`AnswerBytes`] as an HTTP body: one frame per piece, its length known up front.
struct PiecesBody {
    pieces: std::vec::IntoIter<Piece>,
    reader: Option<ArchiveReader>,
    left: u64,
    _admitted: Admitted,
}

impl hyper::body::Body for PiecesBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        let Some(piece) = this.pieces.next() else { return Poll::Ready(None) };
        // A kept item that cannot be read back ends the answer short of its declared length: the
        // client sees a broken answer, never a wrong one.
        let frame = piece_bytes(piece, &mut this.reader).inspect_err(|e| {
            tracing::error!(error = %e, "an answer could not be written whole");
        });
        if let Ok(bytes) = &frame {
            this.left = this.left.saturating_sub(bytes.len() as u64);
        }
        Poll::Ready(Some(frame.map(Frame::data)))
    }

    fn is_end_stream(&self) -> bool {
        self.left == 0
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.left)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use http_body_util::BodyExt;

    use super::*;

    #[test]
    fn shares_long_writes_from_inside_the_source_and_copies_the_rest() {
        let source = Bytes::from(format!("{{\"x\":{}}}", "7".repeat(300)));
        let inside = &source[5..305];
        let mut pieces = Pieces::sharing(source.clone(), None);
        pieces.write_all(b"[").unwrap();
        pieces.write_all(inside).unwrap();
        pieces.write_all(&source[0..4]).unwrap(); // inside, but short: copied
        pieces.write_all(&"8".repeat(300).into_bytes()).unwrap(); // long, but not inside: copied
        let answer = pieces.finish();
        assert_eq!(answer.pieces.len(), 3);
        assert!(matches!(&answer.pieces[1], Piece::Bytes(b) if b.as_ptr() == inside.as_ptr()), "shared, not copied");
        let want = [&b"["[..], inside, &source[0..4], "8".repeat(300).as_bytes()].concat();
        assert_eq!(answer.len, want.len());
        assert_eq!(answer.into_vec().unwrap(), want);
    }

    #[tokio::test]
    async fn the_body_has_its_exact_length_and_every_piece() {
        let mut pieces = Pieces::sharing(Bytes::new(), None);
        pieces.write_all(b"{\"a\":").unwrap();
        let mut answer = pieces.finish();
        answer.pieces.push(Piece::Bytes(Bytes::from_static(b"1}")));
        answer.len += 2;
        let body = answer.into_body();
        assert_eq!(hyper::body::Body::size_hint(&body).exact(), Some(7));
        assert_eq!(body.collect().await.unwrap().to_bytes(), Bytes::from_static(b"{\"a\":1}"));
    }
}
