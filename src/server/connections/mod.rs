//! Slow and hostile clients: what each connection of a listener may take, and who makes room when a
//! listener is full.
//!
//! Every connection is in one [`Phase`] at a time, and each phase but one has a bound:
//!
//! | phase | bound | past it |
//! | --- | --- | --- |
//! | TLS handshake, then the first request's head | `--header-read-timeout`, from the accept | closed |
//! | a later request's head | `--header-read-timeout`, from its first byte | closed |
//! | the request's body | `--body-timeout`, from the end of the head | 408, the verb's result with `Error` |
//! | the handler | `--request-timeout` (the handler's own deadline) | the verb's timeout answer |
//! | the answer, written to the client | `--body-timeout`, from the handler's return | closed |
//! | kept alive, no byte of a next request | `--idle-timeout` | closed |
//!
//! The body bound is the handler's ([`crate::server::body::read_body`]); the others are enforced
//! by a watchdog beside each connection ([`phase::Conn::watch`]), which drops the connection and
//! with it the socket.
//!
//! **The cap** (`--max-connections`, per listener). A connection accepted while the listener is
//! full makes room by shedding one that is not in the middle of a request, in this order:
//! 1. one that has sent part of its first request's head (or of its TLS handshake) and stalled,
//!    the oldest first: a slowloris client looks exactly like this, while a well-behaved client's
//!    head comes in one piece and is a request as soon as it is read;
//! 2. one between requests (kept alive, or partway through a later head), the one idle the longest
//!    first: it has finished a request before, so it is probably a real client;
//! 3. one the server has read nothing from for [`admission::SILENT_GRACE`] (250 ms), the oldest
//!    first: a silent client. A connection accepted a moment ago is not shed at all: its head may
//!    be waiting unread in its socket until its task runs, and under a flood of new connections it
//!    must not go before it is looked at.
//!
//! A connection in the middle of a request (from the end of its head to the last byte of its
//! answer) is never shed; it is already bounded by the body timeout, the request timeout and the
//! write bound. While the listener is full and nothing may give way, it stops accepting: new
//! connections wait in the kernel's accept queue (first come, first served) until a request ends,
//! a connection goes idle or closes, or a new one shows itself slow. So hundreds of slow clients
//! cannot keep a well-formed request out, even on a new connection: each new connection pushes out
//! the oldest of them, and the request is protected as soon as its head is in. Shedding and pauses
//! are logged (at most one line every ten seconds, with counts); each connection closed is a debug
//! line.

pub mod admission;
pub mod io;
pub mod phase;
pub mod service;

use std::time::Duration;

pub use phase::{Conn, Phase};

/// The per-connection bounds and the cap of one listener.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// From the accept (TLS handshake included) to the end of the first request's head; from the
    /// first byte of a later request to the end of its head.
    pub header_read_timeout: Duration,
    /// From the end of a request's head to the end of its body; and from the handler's answer to
    /// its last byte written.
    pub body_timeout: Duration,
    /// A kept-alive connection waiting for the first byte of its next request.
    pub idle_timeout: Duration,
    /// Open connections on the listener.
    pub max_connections: usize,
}

impl Default for ConnectionLimits {
    /// Sized for kube-scheduler as a sidecar client (see docs/operations.md, "Slow and hostile
    /// clients").
    fn default() -> Self {
        ConnectionLimits {
            header_read_timeout: Duration::from_secs(5),
            body_timeout: Duration::from_secs(10),
            // Longer than the 90 s IdleConnTimeout of kube-scheduler's HTTP transport (Go's
            // default, kept by k8s.io/apimachinery's SetTransportDefaults), so the client closes an
            // idle connection first and never sends a request on one the server is closing.
            idle_timeout: Duration::from_secs(120),
            // kube-scheduler keeps at most 2 idle connections per extender (Go's default
            // MaxIdleConnsPerHost) and opens more only for concurrent calls (binds run in their own
            // goroutines); the rest is headroom for probes, Prometheus and people with curl.
            max_connections: 64,
        }
    }
}
