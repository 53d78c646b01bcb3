//! On-stream operations (NVSHMEM's `*_on_stream`): each runs after everything issued before it
//! on the context's queue has completed, and the calling thread does not wait for it.
//!
//! A context's queue is the stream: on CUDA it is a CUDA stream, and the kernels launched on
//! [`Ctx::queue`] run in order with these operations. The sources are symmetric objects,
//! read when the operation runs, never staged through the caller's memory, so a large put
//! is one copy-engine transfer. On the simulator and the host backend a queue does not run
//! its operations one after another, so there each on-stream call first waits for what came
//! before it (`hw::Queue::serialize`): the same order, paid for by the calling thread.
//!
//! docs/p2p.md has the table; `tests/conformance/src/bodies.rs` (`on_stream`) runs them on every backend.

use hw::{Backend, Queue, QueueError, SignalOp, Ticket};

use crate::TRACING_TARGET;
use crate::ctx::Ctx;
use crate::error::ShmemError;
use crate::memory::sym::{Element, Sym};
use crate::pe::{same_len, word_access};
use crate::shmem::Shmem;

impl<B: Backend> Ctx<B> {
    /// Copies this PE's `src` into `dst` on PE `pe`, on the stream (`putmem_on_stream`).
    ///
    /// # Ordering
    /// Runs after every operation issued before it on this context has completed; `src`
    /// must not change until the stream has run it (after [`Ctx::quiet`], or once a later
    /// on-stream operation or kernel on [`Ctx::queue`] ran). Visible to `pe` as a put is.
    ///
    /// # Errors
    /// [`ShmemError::LengthMismatch`] if `src` and `dst` differ in length;
    /// [`ShmemError::PeOutOfRange`]; an address error for either object
    /// ([`ShmemError::NotInHeap`], `OutsideAllocation`, `Misaligned`, `FreedAllocation`);
    /// [`ShmemError::StoreOnNostoreContext`]; [`ShmemError::Queue`] if the queue was lost.
    pub fn put_on_stream<T: Element>(
        &self,
        dst: Sym<T>,
        src: Sym<T>,
        pe: u32,
    ) -> Result<(), ShmemError> {
        same_len(dst.len(), src.len())?;
        let target = self.store_range(dst.access(), pe, "put_on_stream")?;
        let source = self.local_range(src.access())?;
        self.on_stream("put_on_stream", pe, target.len, |queue| {
            queue.put_from_local(target, source)
        })
    }

    /// Copies `src` on PE `pe` into this PE's `dst`, on the stream (`getmem_on_stream`).
    ///
    /// # Ordering
    /// Runs after every operation issued before it on this context has completed; `dst`
    /// holds the data once the stream has run it (after [`Ctx::quiet`]).
    ///
    /// # Errors
    /// As [`Ctx::put_on_stream`], NOSTORE aside (a get stores only locally).
    pub fn get_on_stream<T: Element>(
        &self,
        dst: Sym<T>,
        src: Sym<T>,
        pe: u32,
    ) -> Result<(), ShmemError> {
        same_len(dst.len(), src.len())?;
        let source = self.read_range(src.access(), pe)?;
        let target = self.local_range(dst.access())?;
        self.on_stream("get_on_stream", pe, source.len, |queue| {
            queue.get_into(source, target)
        })
    }

    /// Copies this PE's `src` into `dst` on PE `pe`, then updates the signal word `sig` there
    /// with `op` and `value`, on the stream (`putmem_signal_on_stream`).
    ///
    /// # Ordering
    /// As [`Ctx::put_on_stream`]; whoever sees the signal sees the data (the signal runs
    /// after the copy completed).
    ///
    /// # Errors
    /// As [`Ctx::put_on_stream`]; [`ShmemError::LengthMismatch`] unless `sig` is one word.
    pub fn put_signal_on_stream<T: Element>(
        &self,
        dst: Sym<T>,
        src: Sym<T>,
        sig: Sym<u64>,
        value: u64,
        op: SignalOp,
        pe: u32,
    ) -> Result<(), ShmemError> {
        let signal = self.store_range(word_access(sig)?, pe, "put_signal_on_stream")?;
        self.put_on_stream(dst, src, pe)?;
        self.on_stream("put_signal_on_stream", pe, 8, |queue| {
            queue.amo(signal, op.as_amo(value), false)
        })
    }

    /// Updates the signal word `sig` on PE `pe` with `op` and `value`, on the stream
    /// (`signal_op_on_stream`).
    ///
    /// # Ordering
    /// Runs after every operation issued before it on this context has completed, so whoever
    /// sees the signal sees their effects.
    ///
    /// # Errors
    /// As [`Ctx::signal_op`].
    pub fn signal_op_on_stream(
        &self,
        sig: Sym<u64>,
        value: u64,
        op: SignalOp,
        pe: u32,
    ) -> Result<(), ShmemError> {
        let signal = self.store_range(word_access(sig)?, pe, "signal_op_on_stream")?;
        self.on_stream("signal_op_on_stream", pe, 8, |queue| {
            queue.amo(signal, op.as_amo(value), false)
        })
    }

    /// Issues `op` (named `name`, `bytes` long, to or from `peer`) once everything before it on
    /// this context has completed, as every on-stream call does.
    fn on_stream(
        &self,
        name: &'static str,
        peer: u32,
        bytes: u64,
        op: impl FnOnce(&B::Queue) -> Result<Ticket, QueueError>,
    ) -> Result<(), ShmemError> {
        self.queue.serialize(self.deadline())?;
        tracing::trace!(target: TRACING_TARGET, pe = self.my_pe, peer, op = name, bytes);
        op(&self.queue)?;
        Ok(())
    }

    /// Makes what follows on the stream run after every operation issued before it on this
    /// context has completed (`quiet_on_stream`). The calling thread does not wait on CUDA;
    /// [`Ctx::quiet`] is the call that waits.
    ///
    /// # Errors
    /// [`ShmemError::Queue`] if the queue was lost or, where the backend waits, a deadline
    /// passed.
    pub fn quiet_on_stream(&self) -> Result<(), ShmemError> {
        self.queue.serialize(self.deadline())?;
        Ok(())
    }
}

impl<B: Backend> Shmem<B> {
    /// Completes `ctx`'s stream, then waits until every PE has called `barrier_all`
    /// (`barrier_all_on_stream`).
    ///
    /// # Ordering
    /// As [`Shmem::barrier_all`] for `ctx`'s operations and the default context's. Unlike
    /// NVSHMEM's, the calling thread waits: the barrier is the runtime's, on the host.
    ///
    /// # Errors
    /// As [`Ctx::quiet`] and [`Shmem::barrier_all`].
    pub fn barrier_all_on_stream(&self, ctx: &Ctx<B>) -> Result<(), ShmemError> {
        ctx.quiet()?;
        self.barrier_all()
    }
}
