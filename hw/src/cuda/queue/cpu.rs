//! The host side of [`CudaQueue`]: operations whose ranges are all host memory (`Host` and
//! `Static` segments) are done by the calling thread, with the CPU, on this process's mapping
//! of that memory, and complete at issue, as in the process backend.
//!
//! Why the CPU: a GPU's atomics on host memory over PCIe are not atomic with the CPU's, and
//! host code (a C program's loads, stores and waits) uses the CPU's; a put of a few bytes is
//! also far cheaper as a store than as a copy on a stream.
//!
//! Ordering with the stream: before a host operation, every operation the queue put on its
//! stream before completes ([`CudaQueue::drain`]), so the queue still delivers in issue order
//! to every target and `fence` still has nothing to do. An operation the stream runs after a
//! host one starts after the host one's stores, which end with a SeqCst fence: they are
//! visible to every CPU, and to the GPUs, before the driver call that enqueues the later
//! operation. Tickets stay a watermark: with the stream drained, a host operation's ticket
//! is the next one and complete.
//!
//! Each operation's ordering on the CPU is the process backend's (its `queue.rs` argues it
//! for x86-64 and AArch64): plain copies for data, AcqRel read-modify-writes for atomics, a
//! Release fence between a put's data and its signal.

use std::ptr;

use super::CudaQueue;
use crate::amo::AmoOp;
use crate::common::cpu_atomics;
use crate::error::QueueError;
use crate::sync::cross_process::{Ordering, fence};
use crate::types::{Instant, MemKind, Ticket};

/// Whether host-initiated operations on memory of `kind` are done by the CPU: all but GPU
/// memory.
pub(super) fn on_host(kind: MemKind) -> bool {
    kind != MemKind::Device
}

impl CudaQueue {
    /// Waits until every operation issued so far on the stream has completed (at once when
    /// none is in flight). No deadline: the stream's copies and kernels finish by themselves.
    pub(super) fn drain(&self) -> Result<(), QueueError> {
        let end = self.next.get();
        if self.done_below.get() >= end {
            return Ok(());
        }
        self.wait_below(end, Instant(u64::MAX), || {
            format!("the {end} operations before one on host memory")
        })
    }

    /// The ticket of a host operation just done, keeping what it `fetched`. The stream was
    /// drained before it, so every earlier ticket is complete and so is this one.
    pub(super) fn done(&self, fetched: Option<Vec<u8>>) -> Ticket {
        let ticket = self.next.get();
        self.next.set(ticket + 1);
        self.done_below.set(ticket + 1);
        if let Some(bytes) = fetched {
            self.fetched.borrow_mut().insert(ticket, bytes);
        }
        Ticket(ticket)
    }

    /// Copies `len` bytes from address `from` to address `to`, both host memory of the run
    /// mapped in this process, after the stream's operations; then a SeqCst fence, so the
    /// stores are visible before anything this thread does next.
    ///
    /// # Safety
    /// Both ranges are inside segments of the run (the caller checked them with the reachable
    /// table) and do not overlap (the runtime's contract), or `from` is the caller's buffer.
    pub(super) unsafe fn copy_on_host(
        &self,
        to: u64,
        from: u64,
        len: u64,
    ) -> Result<Ticket, QueueError> {
        self.drain()?;
        // SAFETY: the caller's promise; other PEs may access the bytes meanwhile, which the
        // contract orders with fences and waits, not with this copy.
        unsafe { ptr::copy_nonoverlapping(from as *const u8, to as *mut u8, len as usize) };
        // Why SeqCst: drains the store buffer (x86 `mfence`, AArch64 `dmb ish`), so the put is
        // delivered to every CPU and GPU when the ticket says complete.
        fence(Ordering::SeqCst);
        Ok(self.done(None))
    }

    /// Copies `out.len()` bytes at host address `from` into `out`, after the stream's
    /// operations, then an Acquire fence (loads not reordered after later accesses).
    ///
    /// # Safety
    /// `from` is checked as for [`CudaQueue::copy_on_host`].
    pub(super) unsafe fn read_on_host(&self, from: u64, out: &mut [u8]) -> Result<(), QueueError> {
        self.drain()?;
        // SAFETY: the caller's promise; `out` is a Rust slice, not memory of the run.
        unsafe { ptr::copy_nonoverlapping(from as *const u8, out.as_mut_ptr(), out.len()) };
        // Why Acquire: a get that follows a wait sees what the writer stored before its
        // signal (AArch64 `dmb ishld`; nothing on x86).
        fence(Ordering::Acquire);
        Ok(())
    }

    /// A get of `len` host bytes at `from`: complete at issue, the bytes kept for
    /// `take_fetched`.
    ///
    /// # Safety
    /// As [`CudaQueue::read_on_host`].
    pub(super) unsafe fn get_on_host(&self, from: u64, len: u64) -> Result<Ticket, QueueError> {
        let mut bytes = vec![0u8; len as usize];
        // SAFETY: the caller's promise.
        unsafe { self.read_on_host(from, &mut bytes) }?;
        Ok(self.done(Some(bytes)))
    }

    /// Applies `op` to the host word at `target` with a CPU atomic, after the stream's
    /// operations, and returns the old value.
    ///
    /// AcqRel, as in the process backend: Release so chains of signals carry what came
    /// before onwards, Acquire so a won compare-and-swap takes a lock.
    ///
    /// # Safety
    /// `target` is an aligned word of `op.width` inside a host segment of the run, checked as
    /// for [`CudaQueue::copy_on_host`].
    pub(super) unsafe fn amo_on_host(&self, target: u64, op: AmoOp) -> Result<u64, QueueError> {
        self.drain()?;
        // SAFETY: the caller's promise; every party updates the word with CPU atomics.
        let old = unsafe { cpu_atomics::apply_at(target as *mut u8, op, Ordering::AcqRel) };
        // Why SeqCst: as for a copy, the update is visible to every CPU once this returns.
        fence(Ordering::SeqCst);
        Ok(old)
    }

    /// [`CudaQueue::amo_on_host`] as an operation with a ticket, keeping the old value when
    /// `fetch`.
    ///
    /// # Safety
    /// As [`CudaQueue::amo_on_host`].
    pub(super) unsafe fn amo_ticket_on_host(
        &self,
        target: u64,
        op: AmoOp,
        fetch: bool,
    ) -> Result<Ticket, QueueError> {
        // SAFETY: the caller's promise.
        let old = unsafe { self.amo_on_host(target, op) }?;
        Ok(self.done(fetch.then(|| old.to_le_bytes().to_vec())))
    }
}
