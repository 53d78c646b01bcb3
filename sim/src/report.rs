//! What a finished simulated run reports.

use hw::Semantics;

use crate::Fault;
use crate::injection::InjectionReport;

use crate::trace::Timeline;

/// What is left of a run for its report: one world's, or a parallel run's merged from its
/// partitions' and the network's.
pub(crate) struct Ended {
    pub(crate) counts: OpCounts,
    pub(crate) trace_hash: u64,
    pub(crate) events: u64,
    pub(crate) choices: u64,
    /// An exploration's choices (never a parallel run's).
    pub(crate) choice_trace: Option<Vec<(u32, u32)>>,
    pub(crate) sim_time_ns: u64,
    pub(crate) memory_bytes_peak: u64,
    pub(crate) failure: Option<String>,
    /// A timeline and injected faults: a run on one world's only.
    pub(crate) timeline: Option<Timeline>,
    pub(crate) injection: Option<InjectionReport>,
}

/// Operation counters of a run; serialised as an object of these fields (`rshmem run --json`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct OpCounts {
    /// Puts (blocking and non-blocking).
    pub puts: u64,
    /// Gets (blocking and non-blocking).
    pub gets: u64,
    /// Atomic memory operations.
    pub amos: u64,
    /// Puts with signal.
    pub put_signals: u64,
    /// Fences.
    pub fences: u64,
    /// Quiets.
    pub quiets: u64,
    /// Waits and tests on local memory.
    pub waits: u64,
    /// Bytes written by puts and puts with signal.
    pub bytes_put: u64,
    /// Bytes read by gets.
    pub bytes_got: u64,
}

impl OpCounts {
    /// Adds `other`'s counts to these.
    pub(crate) fn add(&mut self, other: &OpCounts) {
        self.puts += other.puts;
        self.gets += other.gets;
        self.amos += other.amos;
        self.put_signals += other.put_signals;
        self.fences += other.fences;
        self.quiets += other.quiets;
        self.waits += other.waits;
        self.bytes_put += other.bytes_put;
        self.bytes_got += other.bytes_got;
    }

    /// Communication operations: puts, gets, atomics and puts with signal.
    pub fn total(&self) -> u64 {
        self.puts + self.gets + self.amos + self.put_signals
    }
}

/// The outcome of a simulated run, beside the PEs' own results.
#[derive(Clone, Debug)]
pub struct SimReport {
    /// The seed that reproduces this run.
    pub seed: u64,
    /// The topology's name.
    pub topology: String,
    /// How many PEs ran.
    pub n_pes: u32,
    /// The ordering rules simulated.
    pub semantics: Semantics,
    /// Virtual time when the last PE finished, in nanoseconds.
    pub sim_time_ns: u64,
    /// Operation counters.
    pub ops: OpCounts,
    /// Hash of every event in order: equal seeds give equal hashes.
    pub trace_hash: u64,
    /// Events processed.
    pub events: u64,
    /// Choices made: random draws, or in an exploration the choices of the script.
    pub choices: u64,
    /// In an exploration, every choice made, in order, as `(value, arity)`: its values as a
    /// [`Choices`](crate::Choices) prefix replay this run (see [`crate::explore`]).
    pub choice_trace: Option<Vec<(u32, u32)>>,
    /// The broken rules the run had (test-only; empty in every legal run).
    pub faults: Vec<Fault>,
    /// The most simulated memory resident at once, in bytes.
    pub memory_bytes_peak: u64,
    /// Why the run failed (a deadlock, a missed deadline, the time limit), if it did.
    pub failure: Option<String>,
    /// The timeline, if one was asked for.
    pub timeline: Option<Timeline>,
    /// What the injected faults did ([`crate::SimBuilder::inject`]); `None` without a plan.
    pub injection: Option<InjectionReport>,
}
