//! Collective memory management: malloc, calloc, align and free on the symmetric heap.
//!
//! Every call first trades its arguments with every PE through the bootstrap exchange and
//! checks that they agree; only then does it touch the heap. Because the allocator is
//! deterministic and every PE has made the same calls, every PE then gets the same offset, or
//! the same error, without further communication.
//!
//! The exchange is also the synchronisation OpenSHMEM asks of these calls (an implicit
//! barrier): no PE leaves it before every PE has entered it. Each call quiets first, so this
//! PE's earlier operations are complete before any PE reuses freed memory.

use hw::Backend;
use hw::Device;

use crate::TRACING_TARGET;
use crate::collective::{AllocOp, MemCall, check_agreement};
use crate::error::ShmemError;
use crate::shmem::Shmem;
use crate::sym::{Element, Sym};

impl<B: Backend> Shmem<B> {
    /// Allocates a symmetric array of `count` elements of `T`, uninitialised (it holds
    /// whatever earlier allocations left there).
    ///
    /// Collective: every PE must call it with the same `count` and `T`; it returns on each PE
    /// once every PE has called it.
    ///
    /// # Errors
    /// [`ShmemError::CollectiveMismatch`] on every PE if the PEs' arguments differ;
    /// [`ShmemError::HeapExhausted`] if the heap has no room (raise `SHMEM_SYMMETRIC_SIZE`);
    /// [`ShmemError::Queue`] if a PE does not arrive within `RSHMEM_WAIT_TIMEOUT_MS`.
    pub fn malloc<T: Element>(&self, count: usize) -> Result<Sym<T>, ShmemError> {
        self.alloc_collective(AllocOp::Malloc, count, natural_align::<T>())
    }

    /// Like [`Shmem::malloc`], but every element is zero on every PE when it returns.
    ///
    /// # Errors
    /// As [`Shmem::malloc`].
    pub fn calloc<T: Element>(&self, count: usize) -> Result<Sym<T>, ShmemError> {
        let sym = self.alloc_collective(AllocOp::Calloc, count, natural_align::<T>())?;
        self.set_local(sym, &vec![T::zeroed(); count])?;
        // Why a barrier: a peer must not put into this PE's part before it is zeroed, and
        // the zeroes must be complete before a peer reads them.
        self.barrier_all()?;
        Ok(sym)
    }

    /// Like [`Shmem::malloc`], but the array starts at a multiple of `alignment_bytes` (or
    /// of `T`'s own alignment if that is larger).
    ///
    /// # Errors
    /// As [`Shmem::malloc`]; [`ShmemError::InvalidAlignment`] on every PE if
    /// `alignment_bytes` is not a power of two.
    pub fn align<T: Element>(
        &self,
        alignment_bytes: u64,
        count: usize,
    ) -> Result<Sym<T>, ShmemError> {
        self.alloc_collective(AllocOp::Align, count, alignment_bytes)
    }

    /// Frees the array `sym` that an allocation returned.
    ///
    /// Collective: every PE must free the same array; it returns on each PE once every PE
    /// has called it.
    ///
    /// # Errors
    /// [`ShmemError::CollectiveMismatch`] on every PE if the PEs free different addresses;
    /// [`ShmemError::FreedAllocation`] if `sym` was already freed;
    /// [`ShmemError::NotAllocationStart`] if `sym` is a view that does not start where its
    /// allocation starts; [`ShmemError::NotInHeap`] for a raw address in no allocation;
    /// [`ShmemError::Queue`] if a PE does not arrive within `RSHMEM_WAIT_TIMEOUT_MS`.
    pub fn free<T: Element>(&self, sym: Sym<T>) -> Result<(), ShmemError> {
        let access = sym.access();
        self.agree(MemCall::Free {
            offset: access.offset,
        })?;
        let freed = self.heap.borrow_mut().free(access.offset, access.owner)?;
        tracing::debug!(
            target: TRACING_TARGET,
            pe = self.my_pe,
            offset = freed.offset,
            bytes = freed.len_bytes,
            "free"
        );
        Ok(())
    }

    /// Agrees on an allocation with every PE, then makes it.
    fn alloc_collective<T: Element>(
        &self,
        op: AllocOp,
        count: usize,
        align: u64,
    ) -> Result<Sym<T>, ShmemError> {
        // Why saturate: a size that overflows cannot fit, and the heap says so.
        let len_bytes = (count as u64).saturating_mul(std::mem::size_of::<T>() as u64);
        self.agree(MemCall::Alloc {
            op,
            len_bytes,
            align,
        })?;
        // Why check before raising to T's alignment: 0 or 3 must not pass as "8".
        if !align.is_power_of_two() {
            return Err(ShmemError::InvalidAlignment { align });
        }
        let allocation =
            self.heap
                .borrow_mut()
                .alloc(len_bytes, align.max(natural_align::<T>()), false)?;
        tracing::debug!(
            target: TRACING_TARGET,
            pe = self.my_pe,
            op = ?op,
            offset = allocation.offset,
            bytes = len_bytes,
            "alloc"
        );
        Ok(Sym::new(allocation.offset, count, Some(allocation.id)))
    }

    /// Completes this PE's operations, trades `call` with every PE and checks that all agree.
    fn agree(&self, call: MemCall) -> Result<(), ShmemError> {
        self.quiet()?;
        let all = self.device.exchange(&call.encode(), self.deadline())?;
        check_agreement(call, &all)
    }
}

/// `T`'s alignment in bytes.
fn natural_align<T>() -> u64 {
    std::mem::align_of::<T>() as u64
}
