//! [`ProcessQueue`]: every operation is done by the issuing thread, on the target's mapping in
//! this process, before it returns.
//!
//! Completing at issue is a legal, strong implementation of the contract (as the host
//! backend's): a ticket is complete when handed out, delivery order is program order, and
//! `quiet` has nothing to wait for but visibility. Each operation below says why its ordering
//! satisfies the contract on x86-64 (TSO: stores become visible in program order, loads are
//! not reordered with older loads, only a store followed by a load may be, and locked
//! read-modify-writes are full barriers) and on AArch64 (weak: any two accesses to different
//! addresses may be reordered unless a barrier, an acquire load (`ldar`) or a release store
//! (`stlr`) orders them).
//!
//! Every write to a PE (put, atomic update, signal) ends with that PE's wake-up check
//! (`wake.rs`), whose `fence(SeqCst)` also makes the write "delivered" for the consistency step
//! of the target's later waits and tests (`device.rs`).
//!
//! On the network path (PEs on other nodes, every atomic once that path is open, and every
//! operation under `RSHMEM_TRANSPORT=ofi`; `ofi/network.rs`) the copies and atomics below go
//! through libfabric instead of the mapping. Puts of up to [`POSTED_PUT_MAX_BYTES`] and
//! updates that fetch nothing are posted: their tickets complete when libfabric's write
//! counter says they were delivered, and a fence, a quiet or a serialize waits for every one
//! this queue posted (the provider may reorder them: `tcp;ofi_rxm` keeps no order between
//! puts and atomics). Every other operation returns once libfabric reports it delivered at its
//! target (or, for a get or a fetching atomic, once its data is here), so it is complete at
//! issue; a put-with-signal's put waits for every earlier write, then the signal goes. The
//! fences keep their meaning for the PE's own plain stores.
//!
//! The hot paths take no lock and allocate nothing: the segment lookup is one Acquire load of
//! a `OnceLock`, tickets are a counter, a blocking get copies straight into the caller's buffer
//! and a blocking fetching atomic returns its value ([`Queue::get_now`], [`Queue::amo_now`]).
//! Only the ticketed path keeps what it fetched, in a small ring, until taken: a get's bytes in
//! a new buffer, as [`Queue::take_fetched`] returns them.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{Ordering, fence};

use crate::amo::{AmoOp, SignalOp};
use crate::backend::Queue;
use crate::common::cpu_atomics;
use crate::error::QueueError;
use crate::types::{Copier, Instant, LocalRange, RemoteRange, Ticket};

use super::ProcessBackend;
use super::device::PeState;

/// What a fetching operation read, until taken.
#[derive(Debug)]
enum Fetched {
    /// An atomic's old value (8 bytes, little-endian, zero-extended).
    Word(u64),
    /// A get's bytes.
    Bytes(Vec<u8>),
}

/// The largest put posted through the network without waiting for it: its bytes are copied
/// to be kept until it completes, which above this costs more than the wait saves.
const POSTED_PUT_MAX_BYTES: usize = 64 << 10;

/// How many posted operations a queue remembers before it forgets those completed.
const PENDING_KEPT: usize = 256;

/// An ordered submission channel of this process's PE.
#[derive(Debug)]
pub struct ProcessQueue {
    state: Arc<PeState>,
    next: Cell<u64>,
    /// Fetched values by ticket, oldest first; callers take them soon, mostly in order.
    fetched: RefCell<VecDeque<(u64, Fetched)>>,
    /// Operations posted through the network and maybe not complete: (ticket, the count of
    /// the endpoint's writes that completes it), oldest first.
    pending: RefCell<VecDeque<(u64, u64)>>,
}

impl ProcessQueue {
    pub(crate) fn new(state: Arc<PeState>) -> ProcessQueue {
        ProcessQueue {
            state,
            next: Cell::new(0),
            fetched: RefCell::new(VecDeque::with_capacity(16)),
            pending: RefCell::new(VecDeque::new()),
        }
    }

    /// The next ticket; complete at once, like the operation it names.
    #[inline]
    fn ticket(&self) -> Ticket {
        let t = self.next.get();
        self.next.set(t + 1);
        Ticket(t)
    }

    /// Copies `data` into `dst`'s mapping, or puts it there through the network.
    #[inline]
    fn copy_in(&self, dst: RemoteRange, data: &[u8]) -> Result<(), QueueError> {
        assert_eq!(
            dst.len,
            data.len() as u64,
            "put: range and data lengths differ"
        );
        if let Some(network) = self.state.network_to(dst.pe) {
            return network.put(dst, data);
        }
        self.state
            .segment(dst.pe, dst.kind)
            .write(dst.offset, data, "put");
        Ok(())
    }

    /// Copies `src` out of its mapping into a new buffer.
    fn copy_out(&self, src: RemoteRange) -> Result<Vec<u8>, QueueError> {
        let mut out = vec![0u8; src.len as usize];
        // SAFETY: `out` has `src.len` bytes and is new.
        unsafe { self.copy_out_to(src, out.as_mut_ptr()) }?;
        Ok(out)
    }

    /// Copies `src` out of its mapping to `to`, or gets it there through the network.
    ///
    /// # Safety
    /// `to` is valid for `src.len` bytes of writes and does not overlap `src`'s bytes.
    #[inline]
    unsafe fn copy_out_to(&self, src: RemoteRange, to: *mut u8) -> Result<(), QueueError> {
        if let Some(network) = self.state.network_to(src.pe) {
            // SAFETY: the caller promises `to` has `src.len` bytes, which nothing else uses
            // until this returns.
            let out = unsafe { std::slice::from_raw_parts_mut(to, src.len as usize) };
            return network.get(src, out);
        }
        let from = self.state.segment(src.pe, src.kind);
        // SAFETY: the caller promises `to` has `src.len` bytes that do not overlap `src`.
        unsafe { from.read_to(src.offset, src.len, to, "get") };
        Ok(())
    }

    /// Applies the atomic `op` to the word `dst` and wakes the target if it writes; returns
    /// the old value ([`Queue::amo`] says why the orderings are what they are).
    /// Once the network path is open, it is one fetching atomic through it, whichever node
    /// the target is on (`PeState::atomics_network` says why).
    #[inline]
    fn apply(&self, dst: RemoteRange, op: AmoOp) -> Result<u64, QueueError> {
        assert_eq!(
            dst.len,
            op.width.bytes(),
            "amo: range length is not the op's width"
        );
        if let Some(network) = self.state.atomics_network() {
            return network.amo(dst, op);
        }
        let target = self.state.segment(dst.pe, dst.kind);
        let old = cpu_atomics::apply(target, dst.offset, op, Ordering::AcqRel);
        if op.writes() {
            self.state.notify(dst);
        }
        Ok(old)
    }

    /// A ticket for an operation posted through the network, complete once `target` of the
    /// endpoint's writes are.
    fn posted(&self, target: u64) -> Ticket {
        let ticket = self.ticket();
        let mut pending = self.pending.borrow_mut();
        if pending.len() >= PENDING_KEPT
            && let Some(network) = &self.state.network
        {
            let settled = network.settle_now();
            pending.retain(|&(_, wanted)| wanted > settled);
        }
        pending.push_back((ticket.0, target));
        ticket
    }

    /// Waits until every operation this queue posted through the network has completed.
    fn settle(&self) -> Result<(), QueueError> {
        let last = self.pending.borrow().back().map(|&(_, target)| target);
        if let (Some(target), Some(network)) = (last, &self.state.network) {
            network.wait_writes(target)?;
            self.pending.borrow_mut().clear();
        }
        Ok(())
    }

    /// The count of writes that completes `ticket`, if it was posted and not yet seen
    /// complete.
    fn target_of(&self, ticket: Ticket) -> Option<u64> {
        self.pending
            .borrow()
            .iter()
            .find(|&&(t, _)| t == ticket.0)
            .map(|&(_, target)| target)
    }

    fn keep(&self, ticket: Ticket, fetched: Fetched) {
        self.fetched.borrow_mut().push_back((ticket.0, fetched));
    }
}

impl Queue for ProcessQueue {
    type B = ProcessBackend;

    /// # Ordering
    /// A plain copy into the target's mapping, then the target's wake-up check. Delivery
    /// order between puts is only promised across a fence ([`Queue::fence`]); within one put
    /// any order is allowed, so the copy may use any instructions (`memcpy`'s wide stores).
    /// Complete at return: the stores are issued, and visible to every CPU once they leave
    /// the store buffer, which the wake-up check's SeqCst fence (x86 `mfence`, AArch64
    /// `dmb ish`) waits for.
    ///
    /// Through the network, a put of at most 64 KiB (`POSTED_PUT_MAX_BYTES`) is posted (its bytes
    /// copied) and its ticket completes when libfabric's write counter says it was
    /// delivered; a fence or quiet waits for it.
    #[inline]
    fn put(&self, dst: RemoteRange, data: &[u8], _copier: Copier) -> Result<Ticket, QueueError> {
        if data.len() <= POSTED_PUT_MAX_BYTES
            && let Some(network) = self.state.network_to(dst.pe)
        {
            let target = network.put_nbi(dst, data)?;
            return Ok(self.posted(target));
        }
        self.copy_in(dst, data)?;
        self.state.notify(dst);
        Ok(self.ticket())
    }

    /// # Ordering
    /// As [`Queue::put`], reading the source from this PE's own mapping at issue.
    fn put_from_local(&self, dst: RemoteRange, src: LocalRange) -> Result<Ticket, QueueError> {
        assert_eq!(
            dst.len, src.len,
            "put_from_local: source and destination lengths differ"
        );
        let own = self.state.segment(self.state.pe, src.kind);
        let from = own.span(src.offset, src.len, "put_from_local");
        // SAFETY: `from` has `src.len` bytes inside this PE's own mapping, which lives as
        // long as the state; the caller does not change it until the ticket completes (now).
        let data = unsafe { std::slice::from_raw_parts(from, src.len as usize) };
        self.put(dst, data, Copier::Device)
    }

    /// # Ordering
    /// A plain copy out of the source's mapping, then an Acquire fence: on AArch64 the
    /// copy's loads complete before any later load or store (`dmb ishld`), so two gets
    /// separated by a fence-and-wait of the writer see its stores in order; on x86 loads are
    /// already ordered. Not ordered with puts, as the contract allows.
    fn get(&self, src: RemoteRange) -> Result<Ticket, QueueError> {
        let bytes = self.copy_out(src)?;
        let t = self.ticket();
        self.keep(t, Fetched::Bytes(bytes));
        Ok(t)
    }

    /// # Ordering
    /// As [`Queue::get`], into `out`: complete at return, like every get here.
    #[inline]
    fn get_now(&self, src: RemoteRange, out: &mut [u8]) -> Result<bool, QueueError> {
        assert_eq!(
            src.len,
            out.len() as u64,
            "get_now: range and buffer lengths differ"
        );
        // SAFETY: `out` is the caller's buffer of `src.len` bytes, a Rust slice and so not
        // inside a mapping that peers write.
        unsafe { self.copy_out_to(src, out.as_mut_ptr()) }?;
        Ok(true)
    }

    /// # Ordering
    /// As [`Queue::get`], copied straight into this PE's own mapping, complete at return.
    fn get_into(&self, src: RemoteRange, dst: LocalRange) -> Result<Ticket, QueueError> {
        assert_eq!(
            src.len, dst.len,
            "get_into: source and destination lengths differ"
        );
        let own = self.state.segment(self.state.pe, dst.kind);
        let to = own.span(dst.offset, dst.len, "get_into");
        // SAFETY: `to` has `dst.len` bytes inside this PE's own mapping; a get's source and
        // destination do not overlap (the runtime's contract).
        unsafe { self.copy_out_to(src, to) }?;
        Ok(self.ticket())
    }

    /// # Ordering
    /// One atomic read-modify-write of the op's width, AcqRel (a `Fetch` is an Acquire
    /// load). Release, so that chains of signals carry happens-before onwards (the
    /// dissemination barrier: PE b waits for a, then signals c, and c must see a's puts):
    /// on x86 every locked instruction is a full barrier anyway; on AArch64 it is an
    /// `ldaxr`/`stlxr` loop or an LSE `ldaddal`, whose release half orders earlier stores
    /// before it. Acquire, so that a won compare-and-swap is a lock acquisition. Then the
    /// target's wake-up check, as for a put, when the op writes.
    ///
    /// Through the network, an update that fetches nothing (not a compare-and-swap) is
    /// posted, as a small put is: its ticket completes when libfabric's write counter says it
    /// was delivered, and a fence or quiet waits for it. A barrier's last arrival is such an
    /// update that its PE does not wait for; `shmem_finalize` ends with a quiet, so a process
    /// that exits right after does not take it along.
    #[inline]
    fn amo(&self, dst: RemoteRange, op: AmoOp, fetch: bool) -> Result<Ticket, QueueError> {
        if !fetch
            && op.is_update()
            && let Some(network) = self.state.atomics_network()
        {
            assert_eq!(
                dst.len,
                op.width.bytes(),
                "amo: range length is not the op's width"
            );
            let target = network.amo_nbi(dst, op)?;
            return Ok(self.posted(target));
        }
        let old = self.apply(dst, op)?;
        let t = self.ticket();
        if fetch {
            self.keep(t, Fetched::Word(old));
        }
        Ok(t)
    }

    /// # Ordering
    /// As [`Queue::amo`]: complete at return, like every atomic here.
    #[inline]
    fn amo_now(&self, dst: RemoteRange, op: AmoOp) -> Result<Option<u64>, QueueError> {
        self.apply(dst, op).map(Some)
    }

    /// # Ordering
    /// The data's copy, a Release fence, then the signal's 64-bit AcqRel read-modify-write:
    /// whoever sees the signal sees the data. On x86 stores are not reordered with later
    /// stores and the locked RMW is a full barrier; on AArch64 the fence is a `dmb ish` that
    /// orders the copy's stores before the signal's (the RMW's own release half would too;
    /// the fence also covers a signal that an LSE `stadd` performs without one). Then the
    /// wake-up checks of the signal's PE and, if another, the data's.
    fn put_signal(
        &self,
        dst: RemoteRange,
        data: &[u8],
        signal: RemoteRange,
        op: SignalOp,
        value: u64,
        _copier: Copier,
    ) -> Result<Ticket, QueueError> {
        assert_eq!(signal.len, 8, "put_signal: the signal is a 64-bit word");
        self.copy_in(dst, data)?;
        fence(Ordering::Release);
        // The signal's AcqRel RMW, then its PE's wake-up check.
        self.apply(signal, op.as_amo(value))?;
        self.state.notify(dst);
        Ok(self.ticket())
    }

    /// # Ordering
    /// `fence(Release)`: every store before it is ordered before every store after it. Every
    /// write of this queue already ends with a SeqCst fence (the wake-up check), which is
    /// stronger; this fence keeps the promise on its own and also orders the plain stores the
    /// program made in between. On x86 it compiles to nothing (TSO keeps stores in order); on
    /// AArch64 it is a `dmb ish`.
    ///
    /// Operations posted through the network are waited for first: `tcp;ofi_rxm` orders
    /// neither puts before atomics nor either before the other kind without one.
    fn fence(&self) -> Result<(), QueueError> {
        self.settle()?;
        fence(Ordering::Release);
        Ok(())
    }

    /// # Ordering
    /// `fence(SeqCst)`: every operation is complete already, and the fence (x86 `mfence`,
    /// AArch64 `dmb ish`) drains the store buffer and puts this PE's writes in the single
    /// order of SeqCst fences, so that "put; quiet; read" on two PEs cannot both miss.
    ///
    /// Operations posted through the network are waited for first (libfabric's write
    /// counter), for at most the endpoint's patience.
    fn quiet(&self, _deadline: Instant) -> Result<(), QueueError> {
        self.settle()?;
        fence(Ordering::SeqCst);
        Ok(())
    }

    /// # Ordering
    /// As [`Queue::quiet`]; `false` while an operation posted through the network is not
    /// complete.
    fn quiet_now(&self) -> Result<bool, QueueError> {
        let last = self.pending.borrow().back().map(|&(_, target)| target);
        if let (Some(target), Some(network)) = (last, &self.state.network) {
            network.progress();
            if !network.writes_done(target) {
                return Ok(false);
            }
        }
        self.quiet(Instant(0))?;
        Ok(true)
    }

    /// Waits for the operations posted through the network; the others ran at issue.
    fn serialize(&self, _deadline: Instant) -> Result<(), QueueError> {
        self.settle()
    }

    fn wait_ticket(&self, ticket: Ticket, _deadline: Instant) -> Result<(), QueueError> {
        assert!(
            ticket.0 < self.next.get(),
            "wait_ticket: ticket {} was never issued",
            ticket.0
        );
        match (self.target_of(ticket), &self.state.network) {
            (Some(target), Some(network)) => network.wait_writes(target),
            _ => Ok(()),
        }
    }

    fn is_complete(&self, ticket: Ticket) -> bool {
        let posted_and_unfinished = match (self.target_of(ticket), &self.state.network) {
            (Some(target), Some(network)) => {
                network.progress();
                !network.writes_done(target)
            }
            _ => false,
        };
        ticket.0 < self.next.get() && !posted_and_unfinished
    }

    fn take_fetched(&self, ticket: Ticket) -> Vec<u8> {
        let mut fetched = self.fetched.borrow_mut();
        let found = fetched
            .iter()
            .position(|(t, _)| *t == ticket.0)
            .and_then(|at| fetched.remove(at));
        match found {
            Some((_, Fetched::Word(old))) => old.to_le_bytes().to_vec(),
            Some((_, Fetched::Bytes(bytes))) => bytes,
            None => panic!(
                "take_fetched: ticket {} did not fetch, was not issued, or was taken already",
                ticket.0
            ),
        }
    }
}
