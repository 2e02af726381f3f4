//! Admission of large request bodies: one at a time.
//!
//! A /filter or /prioritize with every node as `Nodes` (`nodeCacheCapable: false`) is tens of MB
//! at 5,000 nodes; the server holds its decoded nodes and (for /filter) its items, compressed, until
//! the answer has been written (`server::streamed_nodes`): 55-70 MiB at 5,000 nodes, and decoding
//! one uses both cores. A large body waits for the one before it to be answered, answer sent,
//! before it is read, so the peak is that of one (docs/operations.md, "Memory"); small bodies (`NodeNames`, every other verb) are never held. kube-scheduler calls the
//! extender from one scheduling cycle at a time, so the wait is rare: a second client, or a
//! /prioritize beside a /filter.

use std::sync::Arc;
use std::time::Duration;

use axum::http::HeaderMap;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::server::body::declared_length;

/// A body declared at least this long, or not declared (chunked), is large. A `NodeNames` body of
/// 15,000 names is 0.2 MB; `Nodes` of 400 nodes are 4 MB.
pub const LARGE_BODY_BYTES: usize = 4 << 20;

/// The large bodies read or answered at one time.
#[derive(Debug)]
pub struct LargeBodies {
    permits: Arc<Semaphore>,
}

/// Held from before a large body is read until its answer has been written (the answer's body
/// drops it).
pub type Admitted = Option<OwnedSemaphorePermit>;

/// The wait for a large body's turn ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TurnNotReached;

impl LargeBodies {
    pub fn new(at_once: usize) -> Self {
        LargeBodies { permits: Arc::new(Semaphore::new(at_once.max(1))) }
    }

    /// Admits a request: at once for a small body (no permit), else when a permit is free, for at
    /// most `wait`. A body over `limit` is refused unread by the body reader, so it does not
    /// wait.
    pub async fn admit(&self, headers: &HeaderMap, limit: usize, wait: Duration) -> Result<Admitted, TurnNotReached> {
        match declared_length(headers) {
            Some(n) if n < LARGE_BODY_BYTES || n > limit => return Ok(None),
            _ => {}
        }
        match tokio::time::timeout(wait, Arc::clone(&self.permits).acquire_owned()).await {
            Ok(Ok(permit)) => Ok(Some(permit)),
            // The semaphore is never closed; were it, nothing would be held back.
            Ok(Err(_closed)) => Ok(None),
            Err(_elapsed) => Err(TurnNotReached),
        }
    }
}

impl Default for LargeBodies {
    fn default() -> Self {
        LargeBodies::new(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::header;

    fn declaring(bytes: usize) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::CONTENT_LENGTH, bytes.to_string().parse().unwrap());
        headers
    }

    const LIMIT: usize = 128 << 20;
    const WAIT: Duration = Duration::from_millis(200);

    #[tokio::test]
    async fn small_bodies_pass_while_a_large_one_is_held() {
        let bodies = LargeBodies::default();
        let first = bodies.admit(&declaring(50 << 20), LIMIT, WAIT).await.unwrap();
        assert!(first.is_some(), "a large body holds a permit");
        for small in [0, 70_000, LARGE_BODY_BYTES - 1] {
            assert_eq!(bodies.admit(&declaring(small), LIMIT, WAIT).await.map(|p| p.is_some()), Ok(false));
        }
        // Over the limit: refused by the reader at once, not made to wait.
        assert_eq!(bodies.admit(&declaring(LIMIT + 1), LIMIT, WAIT).await.map(|p| p.is_some()), Ok(false));
    }

    #[tokio::test]
    async fn a_second_large_body_waits_for_the_first_and_gives_up_after_the_wait() {
        let bodies = Arc::new(LargeBodies::default());
        let first = bodies.admit(&declaring(LARGE_BODY_BYTES), LIMIT, WAIT).await.unwrap();
        // Undeclared (chunked) counts as large.
        assert_eq!(bodies.admit(&HeaderMap::new(), LIMIT, WAIT).await.map(|p| p.is_some()), Err(TurnNotReached));
        let waiting = {
            let bodies = Arc::clone(&bodies);
            tokio::spawn(async move { bodies.admit(&declaring(60 << 20), LIMIT, Duration::from_secs(30)).await })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiting.is_finished(), "the second waits while the first is held");
        drop(first);
        let second = waiting.await.unwrap().unwrap();
        assert!(second.is_some(), "and gets the permit once the first is answered");
    }
}
