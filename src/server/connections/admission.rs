//! One listener's open connections and its cap: who gives way to a new connection when the
//! listener is full (see the module above for the order), and when to stop accepting for a moment.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::task::Id;
use tokio::time::Instant;

use super::phase::Give;
use super::{Conn, Phase};

/// At most one log line per this long about connections shed or held back.
const NOTE_EVERY: Duration = Duration::from_secs(10);

/// How long a connection the server has read nothing from is safe from shedding. A connection
/// just accepted has its head, if it sent one, unread in its socket until its task runs; under a
/// flood of new connections the accept loop would otherwise shed it before it is looked at.
pub const SILENT_GRACE: Duration = Duration::from_millis(250);

/// While the listener is full and no connection can give way, how often to look again (a request
/// ending, or a connection going idle or turning out to trickle, makes room).
const RECHECK: Duration = Duration::from_millis(20);

pub struct Admission {
    listener: &'static str,
    cap: usize,
    open: HashMap<Id, Arc<Conn>>,
    /// Since the last log line: connections shed, pauses in accepting, connections refused.
    shed: u64,
    paused: u64,
    refused: u64,
    last_note: Option<Instant>,
    /// Whether accepting is paused now.
    waiting: bool,
}

/// What the listener can do about one more connection.
enum Choice<'a> {
    /// Below the cap.
    Room,
    /// Full: these may give way, the first first.
    Shed(Vec<&'a Arc<Conn>>),
    /// Full, and nothing may give way before this (or before a connection ends).
    Wait(Instant),
}

impl Admission {
    pub fn new(listener: &'static str, cap: usize) -> Self {
        // A listener that may hold no connection would never accept one.
        let cap = cap.max(1);
        Admission {
            listener,
            cap,
            open: HashMap::new(),
            shed: 0,
            paused: 0,
            refused: 0,
            last_note: None,
            waiting: false,
        }
    }

    fn choose(&self) -> Choice<'_> {
        let now = Instant::now();
        if self.open.len() < self.cap {
            return Choice::Room;
        }
        let mut closing = 0;
        let mut candidates = Vec::new();
        let mut next_look = now + RECHECK;
        for conn in self.open.values() {
            match conn.sheddable() {
                None => closing += usize::from(conn.phase() == Phase::Shed),
                Some((Give::Silent, since)) if now < since + SILENT_GRACE => {
                    next_look = next_look.min(since + SILENT_GRACE);
                }
                Some(rank) => candidates.push((rank, conn)),
            }
        }
        // Shed connections free their places in a moment (their tasks ending wake the accept
        // loop). A few may be closing at once, so that a flood of new connections moves through
        // the accept queue quickly; more would only let more than the cap be open.
        if closing >= self.cap.div_ceil(8) || candidates.is_empty() {
            return Choice::Wait(next_look);
        }
        candidates.sort_unstable_by_key(|(rank, _)| *rank);
        Choice::Shed(candidates.into_iter().map(|(_, conn)| conn).collect())
    }

    /// `None` when the listener may accept a connection now; otherwise when to ask again. While
    /// the listener is full and every connection is in the middle of a request or was accepted a
    /// moment ago, new connections wait in the kernel's accept queue.
    pub fn wait_before_accepting(&mut self) -> Option<Instant> {
        let until = match self.choose() {
            Choice::Room | Choice::Shed(_) => None,
            Choice::Wait(until) => Some(until),
        };
        let was_waiting = std::mem::replace(&mut self.waiting, until.is_some());
        if until.is_some() && !was_waiting {
            self.paused += 1;
            self.note();
        }
        until
    }

    /// Makes room for a connection just accepted, by shedding one if the listener is full; false
    /// when none can give way any more (one went into a request since the last look): refuse it.
    pub fn make_room(&mut self) -> bool {
        let room = match self.choose() {
            Choice::Room => return true,
            // A candidate may have finished a head since it was looked at; then the next one goes.
            Choice::Shed(candidates) => candidates.iter().any(|conn| conn.shed()),
            Choice::Wait(_) => false,
        };
        if room {
            self.shed += 1;
        } else {
            self.refused += 1;
        }
        self.note();
        room
    }

    pub fn insert(&mut self, id: Id, conn: Arc<Conn>) {
        self.open.insert(id, conn);
    }

    pub fn remove(&mut self, id: Id) {
        self.open.remove(&id);
    }

    /// Logs what the cap did, at most once per [`NOTE_EVERY`] (a flood of connections must not
    /// become a flood of log lines); each line counts what happened since the previous one.
    fn note(&mut self) {
        let now = Instant::now();
        if self.last_note.is_some_and(|last| now.duration_since(last) < NOTE_EVERY) {
            return;
        }
        tracing::warn!(
            listener = self.listener,
            max_connections = self.cap,
            shed = self.shed,
            paused = self.paused,
            refused = self.refused,
            "the listener is at --max-connections: shed connections that had sent no complete request head or \
             were idle, and paused accepting while none could give way"
        );
        (self.shed, self.paused, self.refused, self.last_note) = (0, 0, 0, Some(now));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` connections registered under the ids of `n` finished tasks.
    async fn registered(admission: &mut Admission, conns: &[Arc<Conn>]) {
        let mut tasks = tokio::task::JoinSet::new();
        for conn in conns {
            let id = tasks.spawn(async {}).id();
            admission.insert(id, Arc::clone(conn));
        }
        while tasks.join_next().await.is_some() {}
    }

    /// What the listener does when the tasks of shed connections end.
    fn closed_the_shed(admission: &mut Admission) {
        admission.open.retain(|_, conn| conn.phase() != Phase::Shed);
    }

    #[tokio::test(start_paused = true)]
    async fn trickling_first_oldest_first_then_idle_then_silent_then_refuse() {
        let mut admission = Admission::new("test", 5);
        let silent = Arc::new(Conn::accepted(false));
        tokio::time::advance(SILENT_GRACE).await;
        let idle = Arc::new(Conn::accepted(false));
        let tag = idle.request_started();
        idle.finished(tag);
        tokio::time::advance(Duration::from_secs(1)).await;
        let trickling_old = Arc::new(Conn::accepted(false));
        trickling_old.bytes_arrived();
        tokio::time::advance(Duration::from_secs(1)).await;
        let trickling_tls = Arc::new(Conn::accepted(true));
        trickling_tls.bytes_arrived();
        let busy = Arc::new(Conn::accepted(false));
        busy.request_started();
        let all = [silent.clone(), idle.clone(), trickling_old.clone(), trickling_tls.clone(), busy.clone()];
        registered(&mut admission, &all).await;

        // Each admitted connection goes straight into a request, as a well-behaved client's does.
        let expected_shed = [
            ([false, false, true, false], "the oldest trickling one first, however long the others wait"),
            ([false, false, true, true], "then the next trickling one, in its TLS handshake or not"),
            ([false, true, true, true], "then the idle one"),
            ([true, true, true, true], "the silent one last: its head may be waiting unread"),
        ];
        for (expected, why) in expected_shed {
            assert!(admission.make_room(), "{why}");
            assert!(admission.wait_before_accepting().is_some(), "no second shed before the first has closed");
            closed_the_shed(&mut admission);
            let conn = Arc::new(Conn::accepted(false));
            conn.request_started();
            registered(&mut admission, &[conn]).await;
            let shed = [&silent, &idle, &trickling_old, &trickling_tls].map(|c| c.phase() == Phase::Shed);
            assert_eq!(shed, expected, "{why}");
        }
        assert!(admission.wait_before_accepting().is_some(), "only connections in the middle of a request are left");
        assert!(!admission.make_room(), "one accepted all the same is refused");
        assert_eq!(busy.phase(), Phase::Request);
    }

    #[tokio::test(start_paused = true)]
    async fn a_connection_just_accepted_is_not_shed_before_it_is_read() {
        let mut admission = Admission::new("test", 2);
        let busy = Arc::new(Conn::accepted(false));
        busy.request_started();
        let new = Arc::new(Conn::accepted(false));
        registered(&mut admission, &[busy, new.clone()]).await;
        tokio::time::advance(SILENT_GRACE / 2).await;
        let until = admission.wait_before_accepting().expect("full, and the new one is within its grace");
        assert_eq!(until, Instant::now() + RECHECK, "looks again soon: a connection may go idle before then");
        tokio::time::advance(SILENT_GRACE / 2).await;
        assert_eq!(admission.wait_before_accepting(), None, "silent past its grace: it may give way");
        assert!(admission.make_room());
        assert_eq!(new.phase(), Phase::Shed);
        assert!(admission.wait_before_accepting().is_some(), "the shed one still holds its place");
        closed_the_shed(&mut admission);
        assert_eq!(admission.wait_before_accepting(), None);
    }

    #[tokio::test]
    async fn below_the_cap_nothing_is_shed() {
        let mut admission = Admission::new("test", 3);
        let conns: Vec<_> = (0..2).map(|_| Arc::new(Conn::accepted(false))).collect();
        registered(&mut admission, &conns).await;
        assert!(admission.make_room());
        assert!(conns.iter().all(|c| c.phase() == Phase::Head));
    }
}
