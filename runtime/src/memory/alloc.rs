//! Collective memory management: malloc, calloc, align, malloc_with_hints, realloc and free
//! on the symmetric heaps.
//!
//! Every call first trades its arguments with every PE through the bootstrap exchange and
//! checks that they agree; only then does it touch a heap. Because the allocator is
//! deterministic and every PE has made the same calls, every PE then gets the same address,
//! or the same error, without further communication.
//!
//! The exchange is also the synchronisation OpenSHMEM asks of these calls (an implicit
//! barrier): no PE leaves it before every PE has entered it. Each call quiets first, so this
//! PE's earlier operations are complete before any PE reuses freed memory.

use hw::{Backend, Device, MemKind};

use crate::TRACING_TARGET;
use crate::error::ShmemError;
use crate::memory::allocator::{Allocation, Span};
use crate::memory::call_agreement::{AllocOp, MemCall, check_agreement};
use crate::memory::heaps::default_setting;
use crate::memory::hints::MallocHints;
use crate::memory::sym::{Element, Sym, element_bytes};
use crate::pe::local;
use crate::shmem::Shmem;

/// The most bytes realloc moves with one local read and write.
const COPY_CHUNK_BYTES: u64 = 1 << 20;

impl<B: Backend> Shmem<B> {
    /// Allocates a symmetric array of `count` elements of `T` from the default heap
    /// ([`crate::PeState::default_heap_kind`]), uninitialised (it holds whatever earlier
    /// allocations left there).
    ///
    /// Collective: every PE must call it with the same `count` and `T`; it returns on each PE
    /// once every PE has called it.
    ///
    /// # Errors
    /// [`ShmemError::CollectiveMismatch`] on every PE if the PEs' arguments differ;
    /// [`ShmemError::HeapExhausted`] if the heap has no room (it names the variable to
    /// raise); [`ShmemError::Queue`] if a PE does not arrive within `RSHMEM_WAIT_TIMEOUT_MS`.
    pub fn malloc<T: Element>(&self, count: usize) -> Result<Sym<T>, ShmemError> {
        self.alloc_collective(
            AllocOp::Malloc,
            self.default_heap_kind(),
            MallocHints::NONE,
            count,
            natural_align::<T>(),
        )
    }

    /// Like [`Shmem::malloc`], but every element is zero on every PE when it returns.
    ///
    /// # Errors
    /// As [`Shmem::malloc`].
    pub fn calloc<T: Element>(&self, count: usize) -> Result<Sym<T>, ShmemError> {
        let sym = self.alloc_collective(
            AllocOp::Calloc,
            self.default_heap_kind(),
            MallocHints::NONE,
            count,
            natural_align::<T>(),
        )?;
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
        self.alloc_collective(
            AllocOp::Align,
            self.default_heap_kind(),
            MallocHints::NONE,
            count,
            alignment_bytes,
        )
    }

    /// Like [`Shmem::malloc`], with `hints` (`shmem_malloc_with_hints`): [`MallocHints::HOST_HEAP`]
    /// or [`MallocHints::DEVICE_HEAP`] picks the heap (neither: the default heap), the
    /// usage hints ([`MallocHints::ATOMICS_REMOTE`], [`MallocHints::SIGNAL_REMOTE`]) are
    /// advisory. A heap hint for a heap the run does not have is an error, never a silent
    /// fallback to the other heap.
    ///
    /// Collective: every PE must pass the same `count`, `T` and `hints`.
    ///
    /// # Errors
    /// As [`Shmem::malloc`]; [`ShmemError::ConflictingHeapHints`] if both heap hints are set;
    /// [`ShmemError::NoSuchHeap`], naming the variable to set, if the hinted heap does not
    /// exist.
    pub fn malloc_with_hints<T: Element>(
        &self,
        count: usize,
        hints: MallocHints,
    ) -> Result<Sym<T>, ShmemError> {
        // Why not `?` here: conflicting hints fail after the agreement, on every PE alike.
        let heap = hints
            .heap()
            .ok()
            .flatten()
            .unwrap_or_else(|| self.default_heap_kind());
        self.alloc_collective(
            AllocOp::MallocWithHints,
            heap,
            hints,
            count,
            natural_align::<T>(),
        )
    }

    /// Resizes the array `sym` that an allocation returned to `count` elements
    /// (`shmem_realloc`), in the heap it is in, and returns the array: the first
    /// `min(count, sym.len())` elements keep their values on every PE, the rest are
    /// uninitialised. It may move; either way `sym` and its views are invalid afterwards
    /// ([`ShmemError::FreedAllocation`]). A moved array is aligned to `T` only.
    ///
    /// Collective: every PE must resize the same array to the same `count`. Operations of
    /// any PE into `sym` that were complete when it called realloc are kept.
    ///
    /// # Errors
    /// [`ShmemError::CollectiveMismatch`] on every PE if the PEs' arguments differ;
    /// [`ShmemError::HeapExhausted`] if the array must move and its heap has no room (then
    /// `sym` stays valid); the errors of [`Shmem::free`] for `sym`.
    pub fn realloc<T: Element>(&self, sym: Sym<T>, count: usize) -> Result<Sym<T>, ShmemError> {
        let access = sym.access();
        let len_bytes = element_bytes::<T>(count);
        self.agree(MemCall::Realloc {
            offset: access.offset,
            len_bytes,
        })?;
        let (resized, moved_from) = self
            .heaps
            .borrow_mut()
            .holding_mut(access.offset)?
            .realloc(access.offset, access.owner, len_bytes, natural_align::<T>())?;
        self.back_heap(crate::memory::space::locate(resized.offset).0)?;
        if let Some(old) = moved_from {
            // Why a sync first: every PE's earlier operations into the old array completed
            // before the exchange, and this PE's wait in the sync makes them visible here.
            self.sync_all()?;
            self.copy_local(old.offset, resized.offset, old.len_bytes.min(len_bytes));
            self.heaps
                .borrow_mut()
                .holding_mut(old.offset)?
                .free(old.offset, Some(old.id))?;
            // Why a barrier: no peer may put into the new array before this PE's copy is
            // complete, or the copy would overwrite it.
            self.barrier_all()?;
        }
        tracing::debug!(
            target: TRACING_TARGET,
            pe = self.my_pe,
            from = access.offset,
            to = resized.offset,
            bytes = len_bytes,
            "realloc"
        );
        Ok(Sym::new(resized.offset, count, Some(resized.id)))
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
    /// [`ShmemError::BufferRegistration`] for a registered buffer (unregister it instead);
    /// [`ShmemError::Queue`] if a PE does not arrive within `RSHMEM_WAIT_TIMEOUT_MS`.
    pub fn free<T: Element>(&self, sym: Sym<T>) -> Result<(), ShmemError> {
        let access = sym.access();
        self.agree(MemCall::Free {
            offset: access.offset,
        })?;
        if let Some(registered) = self.heaps.borrow().buffer_at(access.offset) {
            return Err(ShmemError::BufferRegistration {
                len_bytes: registered.len_bytes,
                reason: "it is a registered buffer: unregister it instead of freeing it".into(),
            });
        }
        let freed = self
            .heaps
            .borrow_mut()
            .holding_mut(access.offset)?
            .free(access.offset, access.owner)?;
        tracing::debug!(
            target: TRACING_TARGET,
            pe = self.my_pe,
            offset = freed.offset,
            bytes = freed.len_bytes,
            "free"
        );
        Ok(())
    }

    /// Agrees on an allocation from the heap of `heap` with every PE, then makes it.
    fn alloc_collective<T: Element>(
        &self,
        op: AllocOp,
        heap: MemKind,
        hints: MallocHints,
        count: usize,
        align: u64,
    ) -> Result<Sym<T>, ShmemError> {
        let len_bytes = element_bytes::<T>(count);
        self.agree(MemCall::Alloc {
            op,
            heap,
            hints,
            len_bytes,
            align,
        })?;
        // Why check before raising to T's alignment: 0 or 3 must not pass as "8".
        if !align.is_power_of_two() {
            return Err(ShmemError::InvalidAlignment { align });
        }
        hints.heap()?;
        let align = align.max(natural_align::<T>());
        let allocation =
            self.alloc_backed(heap, len_bytes, align, || wanted_by(op, heap, hints))?;
        tracing::debug!(
            target: TRACING_TARGET,
            pe = self.my_pe,
            op = ?op,
            heap = ?heap,
            ?hints,
            offset = allocation.offset,
            bytes = len_bytes,
            "alloc"
        );
        Ok(Sym::new(allocation.offset, count, Some(allocation.id)))
    }

    /// Allocates `len_bytes` aligned to `align` from the heap of `heap` (which `wanted_by`,
    /// for the error, asks for) and backs it on every PE; undone if the device refuses.
    pub(crate) fn alloc_backed(
        &self,
        heap: MemKind,
        len_bytes: u64,
        align: u64,
        wanted_by: impl FnOnce() -> String,
    ) -> Result<Allocation, ShmemError> {
        let allocation = self
            .heaps
            .borrow_mut()
            .get_mut(heap, wanted_by)?
            .alloc(len_bytes, align, false)?;
        if let Err(refused) = self.back_heap(heap) {
            // Every PE was refused (growth fails on all together), so all free alike.
            self.heaps
                .borrow_mut()
                .holding_mut(allocation.offset)?
                .free(allocation.offset, Some(allocation.id))?;
            return Err(refused);
        }
        Ok(allocation)
    }

    /// Copies `len_bytes` of this PE's memory from the address `from` to `to`, in chunks so
    /// a large array needs no buffer of its size.
    fn copy_local(&self, from: u64, to: u64, len_bytes: u64) {
        let mut buffer = vec![0; COPY_CHUNK_BYTES.min(len_bytes) as usize];
        let mut done = 0;
        while done < len_bytes {
            let n = COPY_CHUNK_BYTES.min(len_bytes - done);
            let chunk = &mut buffer[..n as usize];
            let span = |offset: u64| Span {
                offset: offset + done,
                len_bytes: n,
            };
            self.device.read_local(local(span(from)), chunk);
            self.device.write_local(local(span(to)), chunk);
            done += n;
        }
    }

    /// Completes this PE's operations, trades `call` with every PE and checks that all agree.
    pub(crate) fn agree(&self, call: MemCall) -> Result<(), ShmemError> {
        self.quiet()?;
        let all = self.device.exchange(&call.encode(), self.deadline())?;
        check_agreement(call, &all)
    }
}

/// What asked for the heap of `heap`, for [`ShmemError::NoSuchHeap`]: a heap hint, or else the
/// default heap's setting.
fn wanted_by(op: AllocOp, heap: MemKind, hints: MallocHints) -> String {
    if hints.heap().ok().flatten().is_some() {
        format!("{}({hints:?})", op.name())
    } else {
        default_setting(heap)
    }
}

/// `T`'s alignment in bytes.
fn natural_align<T>() -> u64 {
    std::mem::align_of::<T>() as u64
}
