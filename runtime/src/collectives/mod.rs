//! Collectives on teams (OpenSHMEM 1.5 §9.9, NVSHMEM's reduce-scatter, OpenSHMEM 1.6's
//! scans): broadcast, collect, fcollect, alltoall, alltoalls, reductions, reduce_scatter,
//! sum_inscan and sum_exscan. docs/collectives.md describes the algorithms and their costs.
//!
//! Every call has the same three steps:
//!
//! 1. Each member checks its own arguments (buffers inside the heap, long enough, not
//!    overlapping where the operation forbids it, root inside the team); all but broadcast
//!    read their source into local memory here, which lets every one of them run in place.
//! 2. The members agree (`agree.rs`): one team gather of a digest of the arguments, each
//!    member's element count, whether its checks passed and whether it reaches every member
//!    with loads and stores. Every member then reaches the same verdict, so bad arguments on
//!    any member fail the call on every member, before any data moves, and the team stays
//!    usable. Every member also picks the same algorithm (`plan.rs`) from the same inputs.
//! 3. The algorithm moves data straight into the destination arrays.
//!
//! Why no buffer is reused too early: the gather of step 2 returns on a member only once every
//! member has entered the call, so every member has left the previous call on the team, and
//! had by then received every arrival it waited for there. So nothing of an earlier call is
//! still in flight to a destination array, and no earlier call still reads one. Within a call
//! each algorithm writes a landing area only when its owner no longer needs what was there
//! (each file says why). Algorithms that read peers' sources end with a count of "done
//! reading" notes, so a member's source may be reused as soon as the call returns there.
//!
//! Signals: the counters of the team's slot area (`SlotArea::collective_counter`). Data goes
//! with a put-with-signal that adds 1 to the target's counter (when it comes in pieces: puts,
//! a fence, then the last piece with the signal), so a counter reaching a value means that
//! many arrivals are in, data included. A member reserves the arrivals it will wait for at the
//! start of each phase (`Team::reserve_arrivals`); counters only grow and never need a reset.
//! Waiting on its own counter is also what makes InfiniBand writes visible to the waiting
//! member (docs/ordering.md).

mod agree;
mod allgather;
mod alltoall;
mod blocks;
mod broadcast;
mod call;
pub(crate) mod checks;
mod collect;
pub mod ops;
pub(crate) mod plan;
mod reduce;
mod reduce_scatter;
mod scan;

#[cfg(test)]
mod tests;

use crate::team::COLLECTIVE_COUNTERS;
pub(crate) use crate::team::rounds;

/// Counter of data pushed into the destination array.
const PUSH: u32 = 0;
/// Counter of notes from peers: "done reading your source" or "your landing area is free".
const DONE: u32 = 1;
/// Counter of a first phase whose senders differ from the second's (a broadcast's scatter,
/// a ring reduction's reduce-scatter, recursive doubling's step before the rounds).
const FIRST: u32 = 2;
/// Counter of dissemination or recursive doubling round 0; round `k` has `ROUND0 + k`.
/// Why one per round: each round's sender differs, and arrivals from different senders come
/// in any order.
const ROUND0: u32 = 3;
/// The rounds that have a counter: enough for 2^13 = 8192 PEs, the largest simulator preset.
pub(crate) const MAX_ROUNDS: u32 = COLLECTIVE_COUNTERS - ROUND0;

/// Which collective a call is, for agreement and messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Broadcast,
    Collect,
    Fcollect,
    Alltoall,
    Alltoalls,
    Reduce,
    ReduceScatter,
    Inscan,
    Exscan,
}

/// `Kind::names`: each kind's name, and the texts of its two mismatch errors.
macro_rules! kind_names {
    ($kind:expr, $($variant:ident => $name:literal),* $(,)?) => {
        match $kind {
            $(Kind::$variant => (
                $name,
                concat!($name, " arguments"),
                concat!($name, " element counts"),
            ),)*
        }
    };
}

impl Kind {
    /// The call's name, and what differs when members disagree on its arguments or counts.
    fn names(self) -> (&'static str, &'static str, &'static str) {
        kind_names!(self,
            Broadcast => "broadcast",
            Collect => "collect",
            Fcollect => "fcollect",
            Alltoall => "alltoall",
            Alltoalls => "alltoalls",
            Reduce => "reduce",
            ReduceScatter => "reduce_scatter",
            Inscan => "sum_inscan",
            Exscan => "sum_exscan",
        )
    }

    /// The call's name in messages.
    pub(crate) fn name(self) -> &'static str {
        self.names().0
    }
}
