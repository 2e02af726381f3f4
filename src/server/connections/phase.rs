//! What one connection is doing, told by its reads ([`super::io`]) and its requests
//! ([`super::service`]), and read by its watchdog ([`Conn::watch`]) and by the listener when it
//! needs room ([`super::admission`]).

use parking_lot::{Mutex, MutexGuard};
use std::fmt;

use tokio::sync::Notify;
use tokio::time::Instant;

use super::ConnectionLimits;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Accepted on a TLS listener, the handshake not finished.
    Handshake,
    /// Reading a request head: from the accept (or the handshake) for the first request, from its
    /// first byte for a later one.
    Head,
    /// A head is in: its body and the handler, until the handler answers.
    Request,
    /// The handler answered; its answer is being written.
    Responding,
    /// Kept alive between requests, no byte of the next one yet.
    Idle,
    /// Chosen to make room for a new connection: closing.
    Shed,
}

/// How readily a connection gives way to a new one; `None` from [`Conn::sheddable`] when it does
/// not (in the middle of a request, or already shed). Lower gives way first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Give {
    /// Sent part of its first request's head (or of its TLS handshake), and the server has read
    /// it: a slowloris client. A well-behaved client's head comes in one piece.
    Trickling,
    /// Between requests: idle or partway through a later head. It has served before.
    Between,
    /// Nothing read from it yet: just accepted (its first bytes may be waiting unread in the
    /// socket), or silent.
    Silent,
}

#[derive(Debug, Clone, Copy)]
struct State {
    phase: Phase,
    since: Instant,
    /// Requests started on this connection; tags the current one so that a late note about an
    /// earlier request changes nothing.
    requests: u64,
    /// Whether any byte has been read from it.
    heard: bool,
}

/// One connection's phase, shared by its reads, its requests, its watchdog and the listener.
#[derive(Debug)]
pub struct Conn {
    state: Mutex<State>,
    changed: Notify,
}

/// Why the watchdog closed a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Shed,
    TimedOut(Phase),
}

impl fmt::Display for Ended {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Ended::Shed => "shed to make room for a new connection (the listener is at --max-connections)",
            Ended::TimedOut(Phase::Handshake) => "no TLS handshake within --header-read-timeout",
            Ended::TimedOut(Phase::Head) => "no complete request head within --header-read-timeout",
            Ended::TimedOut(Phase::Responding) => "the client did not take the answer within --body-timeout",
            Ended::TimedOut(Phase::Idle) => "idle for --idle-timeout",
            Ended::TimedOut(Phase::Request | Phase::Shed) => "closed",
        })
    }
}

impl Conn {
    /// A connection just accepted; `tls` when a handshake comes first.
    pub fn accepted(tls: bool) -> Conn {
        let phase = if tls { Phase::Handshake } else { Phase::Head };
        let state = State { phase, since: Instant::now(), requests: 0, heard: false };
        Conn { state: Mutex::new(state), changed: Notify::new() }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock()
    }

    /// Applies `change` and wakes the watchdog when it says it changed something.
    fn update(&self, change: impl FnOnce(&mut State) -> bool) {
        let changed = change(&mut self.lock());
        if changed {
            self.changed.notify_one();
        }
    }

    pub fn phase(&self) -> Phase {
        self.lock().phase
    }

    /// The handshake is done: on to the first head, under the same bound from the accept.
    pub fn handshake_done(&self) {
        self.update(|s| {
            let was = s.phase == Phase::Handshake;
            if was {
                s.phase = Phase::Head;
            }
            was
        });
    }

    /// Bytes came in: on an idle connection, the next head starts now.
    pub fn bytes_arrived(&self) {
        self.update(|s| {
            s.heard = true;
            let was = s.phase == Phase::Idle;
            if was {
                *s = State { phase: Phase::Head, since: Instant::now(), ..*s };
            }
            was
        });
    }

    /// A request head is in; returns the tag of the request for [`Conn::answered`] and
    /// [`Conn::finished`]. A shed connection stays shed (it is closing).
    pub fn request_started(&self) -> u64 {
        let mut tag = 0;
        self.update(|s| {
            s.requests += 1;
            tag = s.requests;
            let open = s.phase != Phase::Shed;
            if open {
                *s = State { phase: Phase::Request, since: Instant::now(), ..*s };
            }
            open
        });
        tag
    }

    /// The handler of request `tag` answered: its answer is being written.
    pub fn answered(&self, tag: u64) {
        self.update(|s| {
            let current = s.requests == tag && s.phase == Phase::Request;
            if current {
                *s = State { phase: Phase::Responding, since: Instant::now(), ..*s };
            }
            current
        });
    }

    /// Request `tag` is over (its answer written, or dropped): the connection idles.
    pub fn finished(&self, tag: u64) {
        self.update(|s| {
            let current = s.requests == tag && matches!(s.phase, Phase::Request | Phase::Responding);
            if current {
                *s = State { phase: Phase::Idle, since: Instant::now(), ..*s };
            }
            current
        });
    }

    /// Whether and how readily this connection would give way, and since when it has been so.
    pub fn sheddable(&self) -> Option<(Give, Instant)> {
        let s = *self.lock();
        let give = match s.phase {
            Phase::Handshake | Phase::Head if s.requests == 0 => {
                if s.heard {
                    Give::Trickling
                } else {
                    Give::Silent
                }
            }
            Phase::Handshake | Phase::Head | Phase::Idle => Give::Between,
            Phase::Request | Phase::Responding | Phase::Shed => return None,
        };
        Some((give, s.since))
    }

    /// Marks the connection shed if it is not in the middle of a request (it may have finished a
    /// head since it was chosen); its watchdog then closes it. True when it was shed.
    pub fn shed(&self) -> bool {
        let mut shed = false;
        self.update(|s| {
            shed = matches!(s.phase, Phase::Handshake | Phase::Head | Phase::Idle);
            if shed {
                s.phase = Phase::Shed;
            }
            shed
        });
        shed
    }

    /// Resolves when the connection has overstayed its phase or was shed; the caller then drops
    /// the connection. Never resolves while a request is in the handler.
    pub async fn watch(&self, limits: &ConnectionLimits) -> Ended {
        loop {
            let State { phase, since, requests, .. } = *self.lock();
            let bound = match phase {
                Phase::Shed => return Ended::Shed,
                Phase::Handshake | Phase::Head => Some(limits.header_read_timeout),
                Phase::Responding => Some(limits.body_timeout),
                Phase::Idle => Some(limits.idle_timeout),
                Phase::Request => None,
            };
            // A change made since the state was read above has stored a permit: not missed.
            let Some(bound) = bound else {
                self.changed.notified().await;
                continue;
            };
            tokio::select! {
                () = self.changed.notified() => {}
                () = tokio::time::sleep_until(since + bound) => {
                    let now = *self.lock();
                    if (now.phase, now.since, now.requests) == (phase, since, requests) {
                        return Ended::TimedOut(phase);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn limits() -> ConnectionLimits {
        ConnectionLimits {
            header_read_timeout: Duration::from_secs(5),
            body_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(120),
            max_connections: 4,
        }
    }

    /// The watchdog's verdict after `after` of virtual time, or None if it is still waiting.
    async fn verdict_after(conn: &Conn, after: Duration) -> Option<Ended> {
        tokio::time::timeout(after, conn.watch(&limits())).await.ok()
    }

    #[tokio::test(start_paused = true)]
    async fn each_phase_has_its_bound_and_a_request_in_the_handler_has_none() {
        let conn = Conn::accepted(true);
        assert_eq!(verdict_after(&conn, Duration::from_millis(4_900)).await, None);
        assert_eq!(verdict_after(&conn, Duration::from_millis(200)).await, Some(Ended::TimedOut(Phase::Handshake)));

        // The handshake and the first head share one bound from the accept.
        let conn = Conn::accepted(true);
        tokio::time::advance(Duration::from_secs(3)).await;
        conn.handshake_done();
        assert_eq!(verdict_after(&conn, Duration::from_millis(2_100)).await, Some(Ended::TimedOut(Phase::Head)));

        let conn = Conn::accepted(false);
        let tag = conn.request_started();
        assert_eq!(verdict_after(&conn, Duration::from_secs(3_600)).await, None, "the handler has its own deadline");
        conn.answered(tag);
        assert_eq!(verdict_after(&conn, Duration::from_millis(9_900)).await, None);
        conn.finished(tag);
        assert_eq!(conn.phase(), Phase::Idle, "the write bound restarts as the idle bound");
        assert_eq!(verdict_after(&conn, Duration::from_secs(119)).await, None);
        conn.bytes_arrived();
        assert_eq!(conn.phase(), Phase::Head, "a byte of the next request starts its head bound");
        assert_eq!(verdict_after(&conn, Duration::from_millis(5_100)).await, Some(Ended::TimedOut(Phase::Head)));
    }

    #[tokio::test(start_paused = true)]
    async fn a_late_note_about_an_earlier_request_changes_nothing() {
        let conn = Conn::accepted(false);
        let first = conn.request_started();
        conn.answered(first);
        let second = conn.request_started();
        conn.finished(first);
        conn.answered(first);
        assert_eq!(conn.phase(), Phase::Request);
        conn.finished(second);
        assert_eq!(conn.phase(), Phase::Idle);
    }

    #[tokio::test(start_paused = true)]
    async fn only_a_connection_outside_a_request_is_shed() {
        let fresh = Conn::accepted(false);
        assert_eq!(fresh.sheddable().map(|(g, _)| g), Some(Give::Silent));
        fresh.bytes_arrived();
        assert_eq!(fresh.sheddable().map(|(g, _)| g), Some(Give::Trickling));
        let busy = Conn::accepted(false);
        let tag = busy.request_started();
        assert_eq!(busy.sheddable(), None);
        assert!(!busy.shed());
        busy.answered(tag);
        assert!(!busy.shed(), "an answer being written is protected too");
        busy.finished(tag);
        assert_eq!(busy.sheddable().map(|(g, _)| g), Some(Give::Between));
        busy.bytes_arrived();
        assert_eq!(busy.sheddable().map(|(g, _)| g), Some(Give::Between), "a later head: it has served before");

        assert!(fresh.shed());
        assert_eq!(fresh.sheddable(), None, "shed once");
        assert_eq!(verdict_after(&fresh, Duration::from_millis(1)).await, Some(Ended::Shed));
        fresh.request_started();
        assert_eq!(fresh.phase(), Phase::Shed, "a head finishing after the shed does not reopen it");
    }
}
