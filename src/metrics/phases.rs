//! Where a `/filter` or `/prioritize` request's time goes, phase by phase: reading the body,
//! waiting for the evaluator's pool, decoding, resolving the candidates, preparing the
//! per-request state, evaluating the nodes, encoding the answer, and handing it back to the
//! connection's task. Each phase is one clock read; the phases add up to the request's
//! `elapsed_us` (its log line) apart from the last few microseconds of logging.

use std::time::{Duration, Instant};

/// One phase of a request on its way from the body's first byte to its encoded answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// The body, from the first poll to its last byte (a slow client's time is here). A large
    /// `Nodes` body's nodes are decoded while it arrives (`server::streamed_nodes`): that is here too.
    Read,
    /// Waiting for a worker of the evaluator's pool.
    Queue,
    /// `ExtenderArgs` from JSON (of a large `Nodes` body, what is left once its items are out).
    Decode,
    /// The candidates looked up in the cluster model (or the request's `Nodes` matched to it).
    Resolve,
    /// The predicates' per-request state (cluster-wide counts) for `/filter`.
    Prepare,
    /// The node loop: predicates, or the priorities for `/prioritize`.
    Evaluate,
    /// The answer built and encoded.
    Encode,
    /// From the pool's last step to the connection's task running again.
    Resume,
}

impl Phase {
    pub const ALL: [Phase; 8] = [
        Phase::Read,
        Phase::Queue,
        Phase::Decode,
        Phase::Resolve,
        Phase::Prepare,
        Phase::Evaluate,
        Phase::Encode,
        Phase::Resume,
    ];

    /// The metric label and the log field's stem.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Read => "read",
            Phase::Queue => "queue",
            Phase::Decode => "decode",
            Phase::Resolve => "resolve",
            Phase::Prepare => "prepare",
            Phase::Evaluate => "evaluate",
            Phase::Encode => "encode",
            Phase::Resume => "resume",
        }
    }
}

/// The time each phase took so far: [`PhaseClock::lap`] ends the running phase.
#[derive(Debug, Clone)]
pub struct PhaseClock {
    last: Instant,
    took: [Duration; Phase::ALL.len()],
}

impl PhaseClock {
    /// A clock whose first phase began at `at`.
    pub fn starting(at: Instant) -> Self {
        PhaseClock { last: at, took: Default::default() }
    }

    /// Ends `phase` now: the time since the last lap is added to it.
    pub fn lap(&mut self, phase: Phase) {
        let now = Instant::now();
        self.took[phase as usize] += now.saturating_duration_since(self.last);
        self.last = now;
    }

    pub fn took(&self, phase: Phase) -> Duration {
        self.took[phase as usize]
    }

    /// Microseconds of `phase`, for the log line.
    pub fn micros(&self, phase: Phase) -> u64 {
        u64::try_from(self.took(phase).as_micros()).unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn laps_add_up_to_the_time_since_the_start_and_land_in_their_phase() {
        let start = Instant::now();
        let mut clock = PhaseClock::starting(start);
        std::thread::sleep(Duration::from_millis(2));
        clock.lap(Phase::Decode);
        clock.lap(Phase::Evaluate);
        std::thread::sleep(Duration::from_millis(1));
        clock.lap(Phase::Decode);
        let total: Duration = Phase::ALL.iter().map(|p| clock.took(*p)).sum();
        assert_eq!(total, clock.last - start, "every moment is in exactly one phase");
        assert!(clock.took(Phase::Decode) >= Duration::from_millis(3), "both decode laps count");
        assert_eq!(clock.took(Phase::Read), Duration::ZERO);
    }

    #[test]
    fn names_are_distinct() {
        let names: std::collections::BTreeSet<_> = Phase::ALL.iter().map(|p| p.name()).collect();
        assert_eq!(names.len(), Phase::ALL.len());
    }
}
