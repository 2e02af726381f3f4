//! Reading a request body with a size limit and a deadline, so an oversized body gets a clear 413
//! instead of exhausting memory or a dropped connection, and one that trickles in gets a 408
//! instead of holding its connection for ever.

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap, StatusCode};
use http_body_util::BodyExt;

/// How much of a refused body is read and thrown away before the 413 goes out. A server that
/// answers and closes while the client is still sending makes the kernel reset the connection, and
/// the client then loses the answer ("connection closed before message completed") instead of
/// reading the 413. Bodies declared larger than this are refused without reading (a client
/// streaming gigabytes should not hold a worker); so is whatever is still coming after `DRAIN_TIME`.
const DRAIN_BYTES: usize = 8 << 20;

/// The most of a declared `Content-Length` reserved before the bytes arrive; once a body has sent
/// that much, the rest of what it declares is reserved at once (see [`read_until_over`]).
const INITIAL_RESERVE: usize = 1 << 20;
const DRAIN_TIME: Duration = Duration::from_secs(2);

/// Why a body could not be read: the status to answer and the message for `Error`.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct BodyError {
    pub status: StatusCode,
    pub message: String,
}

/// The body length the client declares (`Content-Length`), if it declares a readable one.
pub fn declared_length(headers: &HeaderMap) -> Option<usize> {
    headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<usize>().ok())
}

/// Where a body's bytes go as they arrive.
pub(crate) trait BodySink {
    /// The next piece of the body.
    async fn take(&mut self, data: Bytes);
    /// Bytes taken so far.
    fn received(&self) -> usize;
}

/// Reads the whole body, refusing more than `limit` bytes (checked against `Content-Length` first,
/// then while reading, for chunked bodies), and a body still arriving `deadline` after the handler
/// started (its head was in) with 408: a client must not hold a connection and a buffer by
/// trickling its body.
pub async fn read_body(
    headers: &HeaderMap,
    body: Body,
    limit: usize,
    deadline: Duration,
) -> Result<Vec<u8>, BodyError> {
    let declared = declared_length(headers);
    // Reserve what the client declares only up to a modest size: a client that declares a large
    // body and then trickles it must not make the server hold the whole reservation meanwhile.
    let mut sink = WholeBody { buf: Vec::with_capacity(declared.unwrap_or(0).min(INITIAL_RESERVE)), declared };
    read_into(headers, body, limit, deadline, &mut sink).await?;
    Ok(sink.buf)
}

/// [`read_body`]'s limits and deadline, the bytes handed to `sink` as they arrive.
pub(crate) async fn read_into(
    headers: &HeaderMap,
    body: Body,
    limit: usize,
    deadline: Duration,
    sink: &mut impl BodySink,
) -> Result<(), BodyError> {
    let too_large = |n: String| BodyError {
        status: StatusCode::PAYLOAD_TOO_LARGE,
        message: format!("request body of {n} bytes is over the limit of {limit} bytes (--max-body-bytes)"),
    };
    let mut body = body;
    if let Some(n) = declared_length(headers) {
        if n > limit {
            if n <= DRAIN_BYTES {
                drain(&mut body, DRAIN_BYTES).await;
            }
            return Err(too_large(n.to_string()));
        }
    }
    match tokio::time::timeout(deadline, read_until_over(&mut body, sink, limit)).await {
        Ok(Ok(Read::Whole)) => Ok(()),
        Ok(Ok(Read::Over(got))) => {
            drain(&mut body, DRAIN_BYTES.saturating_sub(got)).await;
            Err(too_large(format!("more than {limit}")))
        }
        Ok(Err(e)) => Err(e),
        Err(_elapsed) => Err(BodyError {
            status: StatusCode::REQUEST_TIMEOUT,
            message: format!(
                "the request body was still arriving when the body timeout of {} (--body-timeout) passed, \
                 {} bytes in",
                humantime::format_duration(deadline),
                sink.received()
            ),
        }),
    }
}

/// How [`read_until_over`] ended.
enum Read {
    /// The whole body went to the sink.
    Whole,
    /// The body went over the limit after this many bytes (the last frame not taken).
    Over(usize),
}

/// Hands the body's frames to `sink` until it ends or would go over `limit`.
async fn read_until_over(body: &mut Body, sink: &mut impl BodySink, limit: usize) -> Result<Read, BodyError> {
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| BodyError {
            status: StatusCode::BAD_REQUEST,
            message: format!("could not read the request body: {}", with_causes(&e)),
        })?;
        if let Ok(data) = frame.into_data() {
            let needed = sink.received() + data.len();
            if needed > limit {
                return Ok(Read::Over(needed));
            }
            sink.take(data).await;
        }
    }
    Ok(Read::Whole)
}

/// The body in one buffer. When a frame does not fit and the body declared its length, the buffer
/// grows to that length once: growing by doubling copied a 70 MB body six times and ended with up
/// to twice its size reserved, both copies touched while the last one was made.
struct WholeBody {
    buf: Vec<u8>,
    declared: Option<usize>,
}

impl BodySink for WholeBody {
    async fn take(&mut self, data: Bytes) {
        let needed = self.buf.len() + data.len();
        match self.declared {
            Some(n) if needed > self.buf.capacity() && n >= needed => self.buf.reserve_exact(n - self.buf.len()),
            // No length declared (chunked): amortised growth.
            _ => self.buf.reserve(data.len()),
        }
        self.buf.extend_from_slice(&data);
    }

    fn received(&self) -> usize {
        self.buf.len()
    }
}

/// Reads and discards the rest of `body`: up to `budget` bytes, for at most `DRAIN_TIME`. Errors
/// end the drain; the answer that follows is the 413 either way.
async fn drain(body: &mut Body, budget: usize) {
    let discard = async {
        let mut left = budget;
        while let Some(Ok(frame)) = body.frame().await {
            let len = frame.data_ref().map_or(0, |d| d.len());
            if len > left {
                return;
            }
            left -= len;
        }
    };
    // Running out of time is one of the drain's ends, not an error.
    let _ = tokio::time::timeout(DRAIN_TIME, discard).await;
}

/// An error and its causes, outermost first: hyper's outer message alone ("error reading a body
/// from connection") hides what was wrong (an invalid chunk size, a body cut short).
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let part = c.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        cause = c.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body_of(frames: usize, frame: usize) -> Body {
        let chunks = (0..frames).map(move |i| Ok::<_, std::convert::Infallible>(vec![i as u8; frame]));
        Body::from_stream(futures::stream::iter(chunks))
    }

    #[tokio::test]
    async fn a_declared_body_is_read_into_a_buffer_of_its_length() {
        let (frames, frame) = (48, 64 << 10); // 3 MiB: past the initial reservation
        let mut headers = HeaderMap::new();
        headers.insert(header::CONTENT_LENGTH, (frames * frame).to_string().parse().unwrap());
        let read = read_body(&headers, body_of(frames, frame), 8 << 20, Duration::from_secs(5)).await.unwrap();
        assert_eq!((read.len(), read.capacity()), (frames * frame, frames * frame));
        assert!(read.chunks(frame).enumerate().all(|(i, c)| c.iter().all(|&b| b == i as u8)));
        // Without a declared length (chunked), the same bytes by amortised growth.
        let chunked = read_body(&HeaderMap::new(), body_of(frames, frame), 8 << 20, Duration::from_secs(5)).await;
        assert_eq!(chunked.unwrap(), read);
    }
}
