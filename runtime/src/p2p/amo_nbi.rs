//! Non-blocking fetching atomics (`atomic_fetch_add_nbi`, ...): the old value lands in a word
//! of this PE's symmetric memory once the context's quiet has completed the atomic.
//!
//! Why in the runtime and not in the hardware contract: `Queue::amo` with `fetch` already
//! keeps the old value for its ticket until `take_fetched`, and OpenSHMEM lets the value
//! appear only at quiet. So each context records its pending fetches (ticket and target word)
//! and [`Ctx::quiet`] writes them with `write_local` after the queue's quiet returned: no
//! backend changes, and the value is visible to this PE exactly when quiet returns. The cost
//! is that the word is written by this PE rather than by the network, which only matters to a
//! peer reading it before this PE's quiet, and OpenSHMEM leaves that undefined.

use hw::{AmoKind, Backend, Device, LocalRange, Queue, Ticket};

use crate::ctx::Ctx;
use crate::error::ShmemError;
use crate::memory::sym::{AtomicElement, Sym};
use crate::pe::word_access;

/// A fetching atomic issued without waiting: where its old value goes.
#[derive(Debug)]
pub(crate) struct PendingFetch {
    ticket: Ticket,
    word: LocalRange,
}

impl<B: Backend> Ctx<B> {
    /// Performs `kind` with `operand` on `target` at `pe`, and records that its old value
    /// goes to this PE's `fetch` at quiet.
    pub(crate) fn amo_fetch_nbi<T: AtomicElement>(
        &self,
        fetch: Sym<T>,
        target: Sym<T>,
        kind: AmoKind,
        operand: T,
        pe: u32,
    ) -> Result<(), ShmemError> {
        let word = self.local_range(word_access(fetch)?)?;
        let (range, op) = self.amo_checked(target, kind, operand, pe, true)?;
        let ticket = self.queue.amo(range, op, true)?;
        self.pending_fetches
            .borrow_mut()
            .push(PendingFetch { ticket, word });
        Ok(())
    }

    /// Writes the old value of every pending fetch into its word. Call only once the queue's
    /// quiet returned, so that every ticket has completed.
    pub(crate) fn land_fetches(&self) {
        for PendingFetch { ticket, word } in self.pending_fetches.take() {
            let bytes = self.take_fetched_word(ticket).to_le_bytes();
            // Why the prefix: the word is little-endian and as wide as the target type.
            self.device.write_local(word, &bytes[..word.len as usize]);
        }
    }
}
