//! Atomics from one kernel thread (NVSHMEM's device atomics are thread-scoped): the update is
//! issued on the thread's context, and a fetching one waits for the old value while the
//! launch's other threads run, as a `g` does.

use hw::{AmoKind, Backend, KernelEvent, KernelMemory, Queue, ThreadAccess};

use crate::error::ShmemError;
use crate::kernel::thread::KernelThread;
use crate::memory::sym::{AtomicElement, Sym};

impl<B: Backend> KernelThread<'_, B> {
    /// Performs `kind` with `operand` on `target` at PE `pe` (`atomic_fetch_add`,
    /// `atomic_set`, ... from a kernel thread); with `fetch`, waits for and returns the old
    /// value, otherwise returns `None` once the update is issued (it completes at the next
    /// quiet).
    ///
    /// # Ordering
    /// As the atomics of [`crate::Ctx`]: ordered by a fence like a put.
    ///
    /// # Errors
    /// As [`crate::Ctx::atomic_fetch_add`].
    pub async fn atomic<T: AtomicElement>(
        &self,
        target: Sym<T>,
        kind: AmoKind,
        operand: T,
        pe: u32,
        fetch: bool,
    ) -> Result<Option<T>, ShmemError> {
        let ctx = self.ctx();
        let (range, op) = ctx.amo_checked(target, kind, operand, pe, fetch)?;
        if pe == self.my_pe() {
            // An atomic on this PE's memory orders the threads that use the word (the race
            // detector's view; docs/check.md).
            self.launch().note(KernelEvent::Access {
                memory: KernelMemory::Symmetric(range.kind),
                at: range.offset,
                len_bytes: range.len,
                access: ThreadAccess::Atomic { fetch },
            });
        }
        if !fetch {
            ctx.queue.amo(range, op, false)?;
            return Ok(None);
        }
        if let Some(old) = ctx.queue.amo_now(range, op)? {
            return Ok(Some(T::from_bits(old)));
        }
        let ticket = ctx.queue.amo(range, op, true)?;
        self.launch()
            .ticket(self.index(), &ctx.queue, ticket)
            .await?;
        Ok(Some(T::from_bits(ctx.take_fetched_word(ticket))))
    }
}
