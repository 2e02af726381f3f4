//! An answer's bytes as a list of pieces, so a /filter answer that echoes the request's `Nodes`
//! items shares them with the request body instead of copying them. At 5,000 `Nodes` the answer is
//! mostly those items (tens of MB): serialised into a `Vec` of its own, it was a second copy of them
//! held next to the request body, grown by doubling.
//!
//! serde_json still writes every byte of the answer, in order, so it is the same answer byte for
//! byte: [`Pieces`] only decides, for each write, whether to copy it or, when it lies inside the
//! request body (a `RawValue` is written with one `write_all` of its text), to keep a slice of it.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use hyper::body::{Frame, SizeHint};

use crate::server::large_bodies::Admitted;

/// A write at least this long that lies inside the request body is shared rather than copied:
/// below it the slice's bookkeeping costs more than the copy.
const SHARE_AT_LEAST: usize = 256;

/// An answer's bytes: its pieces, in order.
#[derive(Debug, Default)]
pub(crate) struct AnswerBytes {
    pieces: Vec<Bytes>,
    len: usize,
    /// A large request's admission, released once the answer has been written (its pieces may be
    /// the request body's bytes).
    admitted: Admitted,
}

impl From<Vec<u8>> for AnswerBytes {
    fn from(bytes: Vec<u8>) -> Self {
        let len = bytes.len();
        AnswerBytes { pieces: vec![Bytes::from(bytes)], len, admitted: None }
    }
}

impl AnswerBytes {
    /// The answer in one buffer (the fuzz targets and tests compare it whole).
    pub(crate) fn into_vec(self) -> Vec<u8> {
        let mut whole = Vec::with_capacity(self.len);
        for piece in &self.pieces {
            whole.extend_from_slice(piece);
        }
        whole
    }

    /// The answer as a response body of known length (hyper writes `Content-Length`, as for a
    /// single buffer).
    pub(crate) fn into_body(self) -> Body {
        Body::new(PiecesBody { pieces: self.pieces.into_iter(), left: self.len as u64, _admitted: self.admitted })
    }

    /// These bytes, holding `admitted` until they have been written.
    pub(crate) fn holding(self, admitted: Admitted) -> Self {
        AnswerBytes { admitted, ..self }
    }
}

/// A [`std::io::Write`] that serde_json writes an answer into; [`Pieces::finish`] gives its bytes.
pub(crate) struct Pieces {
    /// The request body: writes from inside it are kept as slices of it.
    source: Bytes,
    done: Vec<Bytes>,
    /// Copied bytes since the last shared slice.
    copied: Vec<u8>,
    len: usize,
}

impl Pieces {
    pub(crate) fn sharing(source: Bytes) -> Self {
        Pieces { source, done: Vec::new(), copied: Vec::new(), len: 0 }
    }

    pub(crate) fn finish(mut self) -> AnswerBytes {
        self.end_copied();
        AnswerBytes { pieces: self.done, len: self.len, admitted: None }
    }

    fn end_copied(&mut self) {
        if !self.copied.is_empty() {
            self.done.push(Bytes::from(std::mem::take(&mut self.copied)));
        }
    }

    /// `buf` as a slice of the request body, when it lies inside it (compared by address: serde_json
    /// hands a `RawValue`'s text, borrowed from the body, straight to the writer).
    fn shared(&self, buf: &[u8]) -> Option<Bytes> {
        if buf.len() < SHARE_AT_LEAST {
            return None;
        }
        let start = (buf.as_ptr() as usize).checked_sub(self.source.as_ptr() as usize)?;
        let end = start.checked_add(buf.len())?;
        (end <= self.source.len()).then(|| self.source.slice(start..end))
    }
}

impl io::Write for Pieces {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.shared(buf) {
            Some(slice) => {
                self.end_copied();
                self.done.push(slice);
            }
            None => self.copied.extend_from_slice(buf),
        }
        self.len += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// [`AnswerBytes`] as an HTTP body: one frame per piece, its length known up front.
struct PiecesBody {
    pieces: std::vec::IntoIter<Bytes>,
    left: u64,
    _admitted: Admitted,
}

impl hyper::body::Body for PiecesBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let next = self.pieces.next();
        if let Some(piece) = &next {
            self.left = self.left.saturating_sub(piece.len() as u64);
        }
        Poll::Ready(next.map(|piece| Ok(Frame::data(piece))))
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
        let mut pieces = Pieces::sharing(source.clone());
        pieces.write_all(b"[").unwrap();
        pieces.write_all(inside).unwrap();
        pieces.write_all(&source[0..4]).unwrap(); // inside, but short: copied
        pieces.write_all(&"8".repeat(300).into_bytes()).unwrap(); // long, but not inside: copied
        let answer = pieces.finish();
        assert_eq!(answer.pieces.len(), 3);
        assert_eq!(answer.pieces[1].as_ptr(), inside.as_ptr(), "shared, not copied");
        let want = [&b"["[..], inside, &source[0..4], "8".repeat(300).as_bytes()].concat();
        assert_eq!(answer.len, want.len());
        assert_eq!(answer.into_vec(), want);
    }

    #[tokio::test]
    async fn the_body_has_its_exact_length_and_every_piece() {
        let mut pieces = Pieces::sharing(Bytes::new());
        pieces.write_all(b"{\"a\":").unwrap();
        let mut answer = pieces.finish();
        answer.pieces.push(Bytes::from_static(b"1}"));
        answer.len += 2;
        let body = answer.into_body();
        assert_eq!(hyper::body::Body::size_hint(&body).exact(), Some(7));
        assert_eq!(body.collect().await.unwrap().to_bytes(), Bytes::from_static(b"{\"a\":1}"));
    }
}
