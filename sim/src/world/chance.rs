//! Every chance draw of the world: link jitter, an exploration's rounds, when a pending
//! InfiniBand write drains, how long a signal `ADD` takes from its read to its write, and an
//! explored PE's stalls, and which of a PE's threads runs next. Each call of the world's
//! [`Chooser`](crate::choice::Chooser) goes through a function here, so the draws a run makes,
//! and their order, can be read in one place.

use hw::WaitSpec;

use crate::explore::Rounds;

use super::World;

/// The largest put, in 8-byte words, that an exploration splits into words.
pub(super) const MAX_SPLIT_WORDS: usize = 8;

impl World {
    /// Extra delay of one traversal of `path`: usually up to a quarter of its latency, and one
    /// time in eight a straggler of up to twice its latency, so that the reorderings the rules
    /// allow between unfenced operations are seen within a few seeds, not only in theory.
    fn jitter_ns(&mut self, latency_ns: u64) -> u64 {
        if latency_ns == 0 {
            return 0;
        }
        if self.chooser.below(8) == 0 {
            self.chooser.below(2 * latency_ns + 1)
        } else {
            self.chooser.below(latency_ns / 4 + 1)
        }
    }

    /// A delay of a chosen number of rounds, in an exploration.
    fn rounds_ns(&mut self, rounds: Rounds) -> u64 {
        let c = self.chooser.below(rounds.rounds.into());
        rounds.delay_ns(c)
    }

    /// Extra delay of an operation travelling to its target over a path of `latency_ns`.
    #[inline]
    pub(super) fn forward_delay_ns(&mut self, latency_ns: u64) -> u64 {
        match self.explore {
            None => self.jitter_ns(latency_ns),
            Some(rounds) => self.rounds_ns(rounds),
        }
    }

    /// Extra delay of a response or acknowledgement travelling back: none in an exploration,
    /// where it would only move completions, which later choices cover (see
    /// [`crate::explore`]).
    #[inline]
    pub(super) fn return_delay_ns(&mut self, latency_ns: u64) -> u64 {
        match self.explore {
            None => self.jitter_ns(latency_ns),
            Some(_) => 0,
        }
    }

    /// How long after its delivery a pending InfiniBand write drains on its own (beyond 1 ns);
    /// also how long the data of a put-with-signal trails its signal under
    /// [`Fault::SignalBeforeData`](crate::Fault::SignalBeforeData).
    pub(super) fn drain_delay_ns(&mut self) -> u64 {
        match self.explore {
            None => self.chooser.below(self.params.drain_max_ns),
            Some(rounds) => self.rounds_ns(rounds),
        }
    }

    /// How long after its read a put-with-signal `ADD` writes the signal word (signal updates
    /// are atomic only with the same operator, so a `SET` may land in between): in a seeded
    /// run up to the NIC's processing time, an upper bound rather than a measurement.
    pub(super) fn signal_add_gap_ns(&mut self) -> u64 {
        match self.explore {
            None => self.chooser.below(self.params.timing.nic_ns + 1),
            Some(rounds) => self.rounds_ns(rounds),
        }
    }

    /// In an exploration, `pe` may stall for a chosen number of rounds before a consistency
    /// step that has something to show (it has pending InfiniBand writes at its clock): a
    /// PE may be slow to take the step, and until it does, peers that read its memory over
    /// NVLink see the old values. Without pending writes the step shows nothing, so no
    /// choice is made. Returns whether the PE's clock moved; if it did, the caller yields to
    /// the world (`PeHandle::pace`) before taking the step.
    pub(crate) fn stall_before_consistency(&mut self, pe: u32) -> bool {
        let Some(rounds) = self.explore else {
            return false;
        };
        self.observe(pe);
        if !self.mem.has_pending(pe) {
            return false;
        }
        let stall_ns = self.rounds_ns(rounds);
        self.advance_clock(pe, stall_ns);
        stall_ns > 0
    }

    /// How many parts a put of `len_bytes` travels as: in an exploration, a put of 2 to
    /// [`MAX_SPLIT_WORDS`] whole words travels as one operation per word, each delayed by its
    /// own choice, so that its words may land in any order and interleave with other
    /// operations (the contract: "words of one put may be delivered in any order"; R10).
    /// Larger puts travel whole, which keeps explorations of real programs small; outside an
    /// exploration every put travels whole.
    pub(super) fn put_parts(&self, len_bytes: usize) -> u32 {
        let words = len_bytes / 8;
        if self.explore.is_some()
            && len_bytes.is_multiple_of(8)
            && (2..=MAX_SPLIT_WORDS).contains(&words)
        {
            words as u32
        } else {
            1
        }
    }

    /// In an exploration, `pe` stalls for a chosen number of rounds before a plain load or
    /// store of its own memory, so the access may fall before or after remote writes. The
    /// caller yields to the world after this (`PeHandle::pace`), so the access happens at the
    /// stalled clock, after every event before it.
    pub(crate) fn stall_local_access(&mut self, pe: u32) {
        if let Some(rounds) = self.explore {
            let stall_ns = self.rounds_ns(rounds);
            self.advance_clock(pe, stall_ns);
        }
    }

    /// In an exploration over the network transport (`SimBuilder::network_transport`), `pe`
    /// stalls for a chosen number of rounds before a wait on `specs` first looks again, when
    /// none of its words holds now: a write that arrives through the network wakes no
    /// waiter, which looks at its words between naps (the process backend's `NETWORK_NAP`),
    /// so a value overwritten soon after it lands may never be seen. Only a wait that would
    /// block chooses (a wait that holds at once, as the runner's final reads do, would only
    /// multiply executions), and only its first look; once blocked, the waiter looks at every
    /// write. The caller has brought the world up to the PE's clock (`PeHandle::pace`).
    pub(crate) fn stall_before_wait(&mut self, pe: u32, specs: &[WaitSpec]) {
        let Some(rounds) = self.explore else {
            return;
        };
        if !self.params.network_transport {
            return;
        }
        self.observe(pe);
        if specs.iter().any(|spec| self.evaluate(pe, spec).is_some()) {
            return;
        }
        let stall_ns = self.rounds_ns(rounds);
        self.advance_clock(pe, stall_ns);
    }

    /// Which of a PE's `ready` threads runs next (`crate::threads`): an index below `ready`,
    /// drawn only when there is a choice, so a PE that never starts a thread draws nothing.
    pub(crate) fn next_thread(&mut self, ready: usize) -> usize {
        if ready > 1 {
            self.chooser.below(ready as u64) as usize
        } else {
            0
        }
    }

    /// A value below `n` for a random part of the run's fault plan (a victim, a time, a
    /// factor, a link; `crate::injection`), drawn once per part, in the plan's order, before
    /// the first event.
    pub(super) fn injection_draw(&mut self, n: u64) -> u64 {
        self.chooser.below(n)
    }
}
