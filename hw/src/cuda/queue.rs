//! [`CudaQueue`]: one non-blocking CUDA stream; every operation is a copy or the atomics
//! kernel on it, followed by an event that is its ticket.
//!
//! A stream runs its work in issue order, each operation starting after the previous one
//! completed. That makes this queue stronger than the contract, and simple:
//!
//! - delivery is in issue order, to every target, so `fence` has nothing to do;
//! - tickets complete in issue order, so a queue keeps its operations in flight in a FIFO
//!   and completion is a watermark: every ticket below `done_below` has completed;
//! - `quiet` waits for the last ticket.
//!
//! Completion events are recorded lazily. An operation that holds a staging buffer or
//! fetches gets its own event, so that its buffer returns to the pool as soon as it is done;
//! any other (a copy between segments, a kernel, an atomic without fetch) gets none when it
//! is issued, and the first wait or query that needs it records one then, which completes
//! after every operation before it. A host put of 4 KiB on the stream spent as long in its
//! event record as in the copy; without it the copies go back to back.
//!
//! Operations whose ranges are all host memory (`Host`, `Static`) are not put on the stream:
//! the CPU does them at issue, after the stream's earlier operations (`queue/cpu.rs`).
//!
//! Host bytes travel through pinned staging buffers: a put copies its data into one before
//! it returns (so the caller may reuse its buffer) and a get's bytes land in one. A buffer
//! goes back to the pool only when its operation's completion was observed.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;
use std::sync::Arc;

use cudarc::driver::{CudaEvent, CudaStream, sys};

use super::CudaBackend;
use super::error::{DriverCallError, During};
use super::memory::Pinned;
use super::poll::poll_until;
use super::reach::PeCtx;
use crate::amo::{AmoOp, SignalOp};
use crate::backend::Queue;
use crate::error::QueueError;
use crate::sync::cross_process::{Ordering, fence};
use crate::types::{Copier, Instant, LocalRange, Pe, RemoteRange, Ticket};
use cpu::on_host;

mod cpu;
mod remote;
mod streams;

/// An operation whose completion has not been observed yet.
#[derive(Debug)]
struct InFlight {
    ticket: u64,
    /// Recorded on the stream after the operation: right after it if the operation holds a
    /// buffer, else when a wait first needs it (by then later operations may come first).
    event: Option<CudaEvent>,
    /// The staging buffer the operation reads or writes.
    staging: Option<Pinned>,
    /// For a fetch: how many bytes of `staging` it fetched.
    fetched_len: Option<usize>,
}

/// An ordered submission channel of one CUDA PE: a non-blocking stream of its GPU.
#[derive(Debug)]
pub struct CudaQueue {
    ctx: Rc<PeCtx>,
    stream: Arc<CudaStream>,
    next: Cell<u64>,
    /// Every ticket below this has completed.
    done_below: Cell<u64>,
    in_flight: RefCell<VecDeque<InFlight>>,
    /// Events of completed operations, for reuse (creating one is a driver call).
    idle_events: RefCell<Vec<CudaEvent>>,
    /// Bytes of completed fetching operations, by ticket, until taken.
    fetched: RefCell<BTreeMap<u64, Vec<u8>>>,
}

impl CudaQueue {
    pub(crate) fn new(ctx: Rc<PeCtx>) -> Result<CudaQueue, DriverCallError> {
        let stream = ctx.gpu.ctx.new_stream().during("cuStreamCreate")?;
        Ok(CudaQueue {
            ctx,
            stream,
            next: Cell::new(0),
            done_below: Cell::new(0),
            in_flight: RefCell::new(VecDeque::new()),
            idle_events: RefCell::new(Vec::new()),
            fetched: RefCell::new(BTreeMap::new()),
        })
    }

    /// The PE whose queue this is.
    pub(crate) fn pe(&self) -> Pe {
        self.ctx.pe
    }

    /// Enqueues work on the stream with `enqueue` (a kernel of the device-side API) and
    /// returns the ticket of its completion, in order with the queue's other operations.
    pub(crate) fn enqueue_with<E>(
        &self,
        enqueue: impl FnOnce(&Arc<CudaStream>) -> Result<(), E>,
    ) -> Result<Ticket, E>
    where
        E: From<QueueError>,
    {
        enqueue(&self.stream)?;
        Ok(self.issue_unmarked())
    }

    /// The address of `range` (imported, inside its segment: else a contract violation).
    fn remote(&self, range: RemoteRange, what: &str) -> u64 {
        self.ctx
            .addr(range.pe, range.kind, range.offset, range.len, what)
    }

    /// The address of `range` of this PE's own memory (inside its segment: else a contract
    /// violation).
    fn local(&self, range: LocalRange, what: &str) -> u64 {
        self.ctx
            .addr(self.ctx.pe, range.kind, range.offset, range.len, what)
    }

    /// Enqueues a copy of `len` bytes from address `src` to address `dst`.
    fn copy(&self, dst: u64, src: u64, len: usize) -> Result<(), DriverCallError> {
        if len == 0 {
            return Ok(());
        }
        // SAFETY: both ranges are mapped for this GPU (segments of the run, or a staging
        // buffer that is kept until the copy's completion is observed) and stay mapped while
        // the copy is in flight: segments live until the run ends, after every queue drained.
        unsafe { sys::cuMemcpyAsync(dst, src, len, self.stream.cu_stream()) }
            .during("cuMemcpyAsync")
    }

    /// A staging buffer holding `data`.
    fn stage(&self, data: &[u8]) -> Result<Pinned, DriverCallError> {
        let mut buffer = self.ctx.staging.borrow_mut().take(data.len())?;
        // SAFETY: a buffer in the pool has no copy in flight.
        unsafe { buffer.bytes_mut(data.len()) }.copy_from_slice(data);
        Ok(buffer)
    }

    /// Enqueues `op` on the word at `target` with the atomics kernel.
    fn atomic(&self, target: u64, op: AmoOp, old_out: Option<&Pinned>) -> Result<(), QueueError> {
        assert_eq!(
            target % op.width.bytes(),
            0,
            "atomic on a misaligned word (contract violation)"
        );
        let kernel = self
            .ctx
            .gpu
            .amo_kernel()
            .map_err(|e| QueueError::Lost(e.to_string()))?;
        // SAFETY: `target` is an aligned word of a segment of the run, mapped for this GPU
        // until the run ends; `old_out` is a pinned buffer of at least 8 bytes kept until
        // the operation's completion is observed.
        unsafe { kernel.enqueue(&self.stream, target, op, old_out.map(Pinned::addr)) }?;
        Ok(())
    }

    /// An event recorded on the stream now: it completes after everything enqueued so far.
    fn record_event(&self) -> Result<CudaEvent, DriverCallError> {
        let event = self.idle_event()?;
        event.record(&self.stream).during("cuEventRecord")?;
        Ok(event)
    }

    /// An event to record: a reused one, or a new one.
    fn idle_event(&self) -> Result<CudaEvent, DriverCallError> {
        match self.idle_events.borrow_mut().pop() {
            Some(event) => Ok(event),
            None => self.ctx.gpu.ctx.new_event(None).during("cuEventCreate"),
        }
    }

    /// Records the completion event of the operation just enqueued, which holds `staging`
    /// (and fetched `fetched_len` bytes into it), and returns its ticket.
    fn issue(
        &self,
        staging: Option<Pinned>,
        fetched_len: Option<usize>,
    ) -> Result<Ticket, QueueError> {
        let event = self.record_event()?;
        Ok(self.push(Some(event), staging, fetched_len))
    }

    /// The ticket of the operation just enqueued, which holds no buffer: its event is
    /// recorded when a wait first needs it ([`CudaQueue::mark_last`]).
    fn issue_unmarked(&self) -> Ticket {
        self.push(None, None, None)
    }

    fn push(
        &self,
        event: Option<CudaEvent>,
        staging: Option<Pinned>,
        fetched_len: Option<usize>,
    ) -> Ticket {
        let ticket = self.next.get();
        self.next.set(ticket + 1);
        self.in_flight.borrow_mut().push_back(InFlight {
            ticket,
            event,
            staging,
            fetched_len,
        });
        Ticket(ticket)
    }

    /// Gives the last operation in flight an event if it has none, so that every operation
    /// in flight is followed by one (stream order: it completes after all of them).
    fn mark_last(&self) -> Result<(), DriverCallError> {
        let unmarked = matches!(self.in_flight.borrow().back(), Some(last) if last.event.is_none());
        if unmarked {
            let event = self.record_event()?;
            if let Some(last) = self.in_flight.borrow_mut().back_mut() {
                last.event = Some(event);
            }
        }
        Ok(())
    }

    /// Moves every operation known to have completed out of the FIFO: each one up to the
    /// last whose event has fired. Its fetched bytes are kept, its staging buffer and event
    /// reused.
    fn retire(&self) -> Result<(), DriverCallError> {
        self.mark_last()?;
        let mut in_flight = self.in_flight.borrow_mut();
        while let Some(marked) = in_flight.iter().position(|op| op.event.is_some()) {
            let event = in_flight[marked].event.as_ref().expect("found marked");
            if !event.try_is_complete().during("cuEventQuery")? {
                break;
            }
            for done in in_flight.drain(..=marked) {
                if let (Some(staging), Some(len)) = (&done.staging, done.fetched_len) {
                    // SAFETY: the copy or kernel that wrote the buffer has completed.
                    let bytes = unsafe { staging.bytes(len) }.to_vec();
                    self.fetched.borrow_mut().insert(done.ticket, bytes);
                }
                if let Some(staging) = done.staging {
                    self.ctx.staging.borrow_mut().give_back(staging);
                }
                self.idle_events.borrow_mut().extend(done.event);
                self.done_below.set(done.ticket + 1);
            }
        }
        Ok(())
    }

    /// Waits until every ticket below `end` has completed, or `deadline`.
    /// Waits until the kernel proxy (if this PE has one) completed every request published
    /// before the call.
    fn drain_kernel_proxy(&self, deadline: Instant) -> Result<(), QueueError> {
        let Some(proxy) = self.ctx.kernel_proxy.get() else {
            return Ok(());
        };
        let end = proxy.published_end();
        let lost = |why: String| QueueError::Lost(format!("{}: {why}", self.ctx.pe));
        let done = poll_until(&self.ctx.world.start, deadline, || {
            proxy.completed(end).map(|done| done.then_some(()))
        })
        .map_err(lost)?;
        done.ok_or_else(|| QueueError::Deadline {
            pe: self.ctx.pe,
            waiting_for: format!(
                "quiet: the kernels' requests toward PEs of other nodes, up to {end}, to complete"
            ),
            deadline,
        })
    }

    fn wait_below(
        &self,
        end: u64,
        deadline: Instant,
        what: impl FnOnce() -> String,
    ) -> Result<(), QueueError> {
        let done = poll_until(&self.ctx.world.start, deadline, || {
            self.retire()?;
            Ok::<_, DriverCallError>((self.done_below.get() >= end).then_some(()))
        })?;
        done.ok_or_else(|| QueueError::Deadline {
            pe: self.ctx.pe,
            waiting_for: format!(
                "{} on the CUDA stream of GPU {} ({} operations still in flight)",
                what(),
                self.ctx.gpu.ordinal,
                self.in_flight.borrow().len()
            ),
            deadline,
        })
    }
}

impl Queue for CudaQueue {
    type B = CudaBackend;

    /// Stages `data` in pinned memory, then enqueues a copy to the target; to host memory,
    /// copies it with the CPU at issue.
    ///
    /// # Ordering
    /// The data is staged before this returns. The copy starts after every operation issued
    /// before it on this queue completed (stream order), so delivery is in issue order.
    fn put(&self, dst: RemoteRange, data: &[u8], _copier: Copier) -> Result<Ticket, QueueError> {
        assert_eq!(
            dst.len,
            data.len() as u64,
            "put: range and data lengths differ"
        );
        if let Some(remote) = self.remote_path(dst) {
            return self.put_remote(remote, dst, data);
        }
        let target = self.remote(dst, "put");
        if on_host(dst.kind) {
            // SAFETY: `target` is inside a host segment of the run (checked by `remote`);
            // `data` is the caller's buffer.
            return unsafe { self.copy_on_host(target, data.as_ptr() as u64, dst.len) };
        }
        if data.is_empty() {
            return Ok(self.issue_unmarked());
        }
        let staging = self.stage(data)?;
        self.copy(target, staging.addr(), data.len())?;
        self.issue(Some(staging), None)
    }

    /// Copies this PE's own `src` to `dst` on a peer (or itself) with the GPU's copy engine,
    /// with no staging through host memory; between two host ranges, with the CPU at issue.
    ///
    /// # Ordering
    /// In stream order with every operation of this queue, kernels of the device-side API
    /// launched on it included (stronger than the contract). The copy reads `src` when the
    /// stream reaches it.
    fn put_from_local(&self, dst: RemoteRange, src: LocalRange) -> Result<Ticket, QueueError> {
        assert_eq!(
            dst.len, src.len,
            "put_from_local: source and destination lengths differ"
        );
        if let Some(remote) = self.remote_path(dst) {
            return self.put_from_local_remote(remote, dst, src);
        }
        let (target, source) = (
            self.remote(dst, "put_from_local"),
            self.local(src, "put_from_local"),
        );
        if on_host(dst.kind) && on_host(src.kind) {
            // SAFETY: both ranges are inside host segments of the run (checked above) and do
            // not overlap (the runtime's contract).
            return unsafe { self.copy_on_host(target, source, src.len) };
        }
        self.copy(target, source, src.len as usize)?;
        Ok(self.issue_unmarked())
    }

    /// Enqueues a copy from the source into a pinned staging buffer; from host memory,
    /// copies with the CPU at issue.
    ///
    /// # Ordering
    /// In stream order with every operation of this queue (stronger than the contract).
    fn get(&self, src: RemoteRange) -> Result<Ticket, QueueError> {
        if let Some(remote) = self.remote_path(src) {
            return self.get_remote(remote, src);
        }
        let source = self.remote(src, "get");
        if on_host(src.kind) {
            // SAFETY: `source` is inside a host segment of the run (checked by `remote`).
            return unsafe { self.get_on_host(source, src.len) };
        }
        let len = src.len as usize;
        let staging = self.ctx.staging.borrow_mut().take(len)?;
        self.copy(staging.addr(), source, len)?;
        self.issue(Some(staging), Some(len))
    }

    /// Enqueues a copy from the source into this PE's own segment; between two host ranges,
    /// copies with the CPU at issue.
    ///
    /// # Ordering
    /// In stream order with every operation of this queue (stronger than the contract).
    fn get_into(&self, src: RemoteRange, dst: LocalRange) -> Result<Ticket, QueueError> {
        assert_eq!(
            src.len, dst.len,
            "get_into: source and destination lengths differ"
        );
        if let Some(remote) = self.remote_path(src) {
            return self.get_into_remote(remote, src, dst);
        }
        let (target, source) = (self.local(dst, "get_into"), self.remote(src, "get_into"));
        if on_host(dst.kind) && on_host(src.kind) {
            // SAFETY: both ranges are inside host segments of the run (checked above) and do
            // not overlap (the runtime's contract).
            return unsafe { self.copy_on_host(target, source, src.len) };
        }
        self.copy(target, source, src.len as usize)?;
        Ok(self.issue_unmarked())
    }

    /// Launches the atomics kernel (one thread, system-scope atomic) on the stream; a fetched
    /// value lands in pinned staging memory. On host memory, a CPU atomic at issue.
    ///
    /// # Ordering
    /// In stream order with every operation of this queue; the kernel fences
    /// (`__threadfence_system`) before its atomic. On host memory, AcqRel after the stream's
    /// earlier operations completed (`queue/cpu.rs`).
    fn amo(&self, dst: RemoteRange, op: AmoOp, fetch: bool) -> Result<Ticket, QueueError> {
        assert_eq!(
            dst.len,
            op.width.bytes(),
            "amo: range length is not the op's width"
        );
        if let Some(remote) = self.remote_path(dst) {
            return self.amo_remote(remote, dst, op, fetch);
        }
        let target = self.remote(dst, "amo");
        if on_host(dst.kind) {
            // SAFETY: `target` is a word inside a host segment of the run (checked by
            // `remote`); `apply_at` checks its alignment.
            return unsafe { self.amo_ticket_on_host(target, op, fetch) };
        }
        let old_out = if fetch {
            Some(self.ctx.staging.borrow_mut().take(8)?)
        } else {
            None
        };
        self.atomic(target, op, old_out.as_ref())?;
        if fetch {
            self.issue(old_out, Some(8))
        } else {
            Ok(self.issue_unmarked())
        }
    }

    /// The data's copy, then the atomics kernel on the signal word, on the same stream; when
    /// either is host memory, a put and then an atomic, each on its own path.
    ///
    /// # Ordering
    /// The kernel starts only after the copy completed, and fences before the signal's
    /// atomic: whoever sees the signal sees the data.
    fn put_signal(
        &self,
        dst: RemoteRange,
        data: &[u8],
        signal: RemoteRange,
        op: SignalOp,
        value: u64,
        copier: Copier,
    ) -> Result<Ticket, QueueError> {
        assert_eq!(signal.len, 8, "put_signal: the signal is a 64-bit word");
        assert_eq!(
            dst.len,
            data.len() as u64,
            "put_signal: range and data lengths differ"
        );
        let remote = self.remote_path(dst).is_some() || self.remote_path(signal).is_some();
        if remote || on_host(dst.kind) || on_host(signal.kind) {
            // The data as a put, then the signal as an atomic: the queue delivers in issue
            // order also between host, remote and stream operations (`queue/cpu.rs`,
            // `queue/remote.rs`), so whoever sees the signal sees the data.
            self.put(dst, data, copier)?;
            return self.amo(signal, op.as_amo(value), false);
        }
        let target = self.remote(dst, "put_signal");
        let signal_word = self.remote(signal, "put_signal");
        let staging = if data.is_empty() {
            None
        } else {
            let staging = self.stage(data)?;
            self.copy(target, staging.addr(), data.len())?;
            Some(staging)
        };
        self.atomic(signal_word, op.as_amo(value), None)?;
        self.issue(staging, None)
    }

    /// Nothing to do.
    ///
    /// # Ordering
    /// The stream already delivers every operation in issue order, to every target, and a
    /// host operation waits for the stream's earlier ones, so the operations before a fence
    /// are delivered before those after it.
    fn fence(&self) -> Result<(), QueueError> {
        Ok(())
    }

    /// Nothing to do.
    ///
    /// # Ordering
    /// A stream starts each operation after the previous one completed.
    fn serialize(&self, _deadline: Instant) -> Result<(), QueueError> {
        Ok(())
    }

    /// Waits for the last ticket (polling its event), then for the requests this PE's kernels
    /// posted toward PEs of other nodes, then a SeqCst fence.
    ///
    /// # Ordering
    /// Every operation of the queue has then completed: its copy engine writes or
    /// system-scope atomics reached the target memory over NVLink, visible to every PE. So
    /// has every request a kernel posted to the kernel proxy before the call: a kernel that
    /// ended (the queue's, or one the program synchronised with) has its operations complete,
    /// as over NVLink. The
    /// fence (x86 `mfence`, AArch64 `dmb ish`) drains this thread's stores to host memory,
    /// `Device::write_local`'s included, as the process backend's quiet does.
    fn quiet(&self, deadline: Instant) -> Result<(), QueueError> {
        let end = self.next.get();
        self.wait_below(end, deadline, || format!("quiet ({end} operations issued)"))?;
        self.drain_kernel_proxy(deadline)?;
        fence(Ordering::SeqCst);
        Ok(())
    }

    /// # Ordering
    /// As [`Queue::get`] on host memory, into `out`; declines for GPU memory.
    fn get_now(&self, src: RemoteRange, out: &mut [u8]) -> Result<bool, QueueError> {
        assert_eq!(
            src.len,
            out.len() as u64,
            "get_now: range and buffer lengths differ"
        );
        if self.remote_path(src).is_some() {
            return Ok(false);
        }
        if !on_host(src.kind) {
            return Ok(false);
        }
        let source = self.remote(src, "get_now");
        // SAFETY: `source` is inside a host segment of the run (checked by `remote`).
        unsafe { self.read_on_host(source, out) }?;
        Ok(true)
    }

    /// # Ordering
    /// As [`Queue::amo`] on host memory; declines for GPU memory.
    fn amo_now(&self, dst: RemoteRange, op: AmoOp) -> Result<Option<u64>, QueueError> {
        assert_eq!(
            dst.len,
            op.width.bytes(),
            "amo_now: range length is not the op's width"
        );
        if self.remote_path(dst).is_some() {
            return Ok(None);
        }
        if !on_host(dst.kind) {
            return Ok(None);
        }
        let target = self.remote(dst, "amo_now");
        // SAFETY: `target` is a word inside a host segment of the run (checked by `remote`).
        unsafe { self.amo_on_host(target, op) }.map(Some)
    }

    fn wait_ticket(&self, ticket: Ticket, deadline: Instant) -> Result<(), QueueError> {
        assert!(
            ticket.0 < self.next.get(),
            "wait_ticket: ticket {} was never issued",
            ticket.0
        );
        self.wait_below(ticket.0 + 1, deadline, || format!("ticket {}", ticket.0))
    }

    /// Queries the completion events (a driver error reads as "not complete"; the next wait
    /// reports it).
    fn is_complete(&self, ticket: Ticket) -> bool {
        self.retire().is_ok() && ticket.0 < self.done_below.get()
    }

    fn take_fetched(&self, ticket: Ticket) -> Vec<u8> {
        self.fetched
            .borrow_mut()
            .remove(&ticket.0)
            .unwrap_or_else(|| {
                panic!(
                    "take_fetched: ticket {} did not fetch, has not completed, or was taken \
                     already",
                    ticket.0
                )
            })
    }
}

impl Drop for CudaQueue {
    /// Waits for the stream, so that no copy is in flight when staging buffers and, at the
    /// end of the run, segments are freed.
    fn drop(&mut self) {
        if let Err(e) = self.stream.synchronize().during("cuStreamSynchronize") {
            tracing::warn!(target: "rshmem::hw::cuda", pe = self.ctx.pe.0, "dropping a queue: {e}");
        }
    }
}
