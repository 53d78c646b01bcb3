//! Where a team's synchronisation words live: one fixed area of the symmetric heap per team
//! slot, reserved at init on every PE.
//!
//! Why fixed slots: heap offsets agree across PEs only if every PE makes the same
//! allocations, but a team is created by some PEs only. So init reserves one area per slot
//! (`RSHMEM_TEAMS_MAX` of them), and a new team takes a slot that is free on all its members
//! (team/split.rs). An area is touched only by the members of the team that holds the slot,
//! so disjoint teams may hold the same slot.

use crate::memory::allocator::Span;

/// Rounds of a dissemination algorithm: enough for 2^32 PEs.
pub(crate) const MAX_ROUNDS: u32 = 32;
/// Words each member contributes to a gather.
pub(crate) const GATHER_WORDS: usize = 2;
/// Counters left to the collectives, each with an epoch of its own.
pub(crate) const COLLECTIVE_COUNTERS: u32 = 16;

const WORD_BYTES: u64 = 8;

/// The layout of every slot area, for a run of `n_pes` PEs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SlotLayout {
    /// Where slot 0's area starts in the heap.
    pub(crate) base: u64,
    pub(crate) n_pes: u32,
}

impl SlotLayout {
    /// The bytes of one slot's area.
    pub(crate) fn slot_bytes(n_pes: u32) -> u64 {
        let counters = u64::from(2 * MAX_ROUNDS + COLLECTIVE_COUNTERS);
        let gather_cells = 2 * u64::from(n_pes) * GATHER_WORDS as u64;
        (counters + gather_cells) * WORD_BYTES
    }

    /// The area of `slot`.
    pub(crate) fn area(self, slot: u32) -> SlotArea {
        SlotArea {
            offset: self.base + u64::from(slot) * SlotLayout::slot_bytes(self.n_pes),
        }
    }
}

/// One slot's area: barrier counters, gather counters, collective counters, then two
/// buffers (by epoch parity) of gather cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SlotArea {
    offset: u64,
}

impl SlotArea {
    fn word(self, index: u64) -> Span {
        Span {
            offset: self.offset + index * WORD_BYTES,
            len_bytes: WORD_BYTES,
        }
    }

    /// The barrier counter of dissemination round `round`.
    pub(crate) fn sync_counter(self, round: u32) -> Span {
        self.word(u64::from(round))
    }

    /// The gather counter of dissemination round `round`.
    pub(crate) fn gather_counter(self, round: u32) -> Span {
        self.word(u64::from(MAX_ROUNDS + round))
    }

    /// Collective counter `index`, below [`COLLECTIVE_COUNTERS`].
    pub(crate) fn collective_counter(self, index: u32) -> Span {
        debug_assert!(index < COLLECTIVE_COUNTERS);
        self.word(u64::from(2 * MAX_ROUNDS + index))
    }

    /// The gather cells of team indices `first..first + count` in the buffer of `parity`.
    pub(crate) fn gather_cells(self, parity: u64, first: u32, count: u32, n_pes: u32) -> Span {
        let cells_start = u64::from(2 * MAX_ROUNDS + COLLECTIVE_COUNTERS);
        let per_buffer = u64::from(n_pes) * GATHER_WORDS as u64;
        let first_word = cells_start + parity * per_buffer + u64::from(first) * GATHER_WORDS as u64;
        Span {
            offset: self.offset + first_word * WORD_BYTES,
            len_bytes: u64::from(count) * GATHER_WORDS as u64 * WORD_BYTES,
        }
    }
}
