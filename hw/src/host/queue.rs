//! [`HostQueue`]: every operation is performed by the issuing thread before it returns.
//!
//! Completing at issue is a legal, strong implementation of the contract: a ticket is
//! complete when it is handed out, delivery order is program order, and `quiet` has nothing
//! to wait for. What remains is making the stores *visible* in the order the contract
//! promises, which the orderings below do:
//!
//! - put, `get_into`'s local copy: Relaxed stores; the fences order them.
//! - get: Acquire loads, so a get that reads a fenced flag also sees what came before it.
//! - AMO: one AcqRel read-modify-write. Release so that chains of signals carry
//!   happens-before onwards (the dissemination barrier: PE b waits for a, then signals c,
//!   and c must see a's puts); Acquire so that a won compare-and-swap is a lock acquisition.
//! - put-with-signal: the data's stores, then the signal's AcqRel RMW, whose release half
//!   makes the data visible to whoever sees the signal (R5).
//! - every write to a peer then runs the waker's `fence(SeqCst)` ([`super::waker`]), which
//!   also makes the write "delivered" for the consistency step of later waits.
//! - fence: `fence(Release)`. A write to a peer is already followed by a SeqCst fence, but a
//!   write to the PE's own memory is not; this orders those too (R1).
//! - quiet: `fence(SeqCst)`: everything is complete, and the fence makes it visible to all
//!   PEs in one order, so that "put; quiet; read" on two PEs cannot both miss (R2, R8 with
//!   load/store paths only).

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

use crate::amo::{AmoOp, SignalOp};
use crate::backend::Queue;
use crate::error::QueueError;
use crate::sync::{Ordering, fence};
use crate::types::{Copier, Instant, LocalRange, RemoteRange, Ticket};

use super::HostBackend;
use super::device::PeCtx;

/// An ordered submission channel of one host PE.
#[derive(Debug)]
pub struct HostQueue {
    ctx: Rc<PeCtx>,
    next: Cell<u64>,
    /// Bytes of fetching operations, by ticket, until taken.
    fetched: RefCell<BTreeMap<u64, Vec<u8>>>,
}

impl HostQueue {
    pub(crate) fn new(ctx: Rc<PeCtx>) -> HostQueue {
        HostQueue {
            ctx,
            next: Cell::new(0),
            fetched: RefCell::new(BTreeMap::new()),
        }
    }

    /// The next ticket; complete at once, like the operation it names.
    fn ticket(&self) -> Ticket {
        let t = self.next.get();
        self.next.set(t + 1);
        Ticket(t)
    }

    fn read_remote(&self, src: RemoteRange) -> Vec<u8> {
        let mut out = vec![0u8; src.len as usize];
        self.ctx.with_segment(src.pe, src.kind, |s| {
            s.read(src.offset, &mut out, Ordering::Acquire)
        });
        out
    }

    fn write_remote(&self, dst: RemoteRange, data: &[u8]) {
        assert_eq!(
            dst.len,
            data.len() as u64,
            "put: range and data lengths differ"
        );
        self.ctx
            .with_segment(dst.pe, dst.kind, |s| s.write(dst.offset, data));
    }
}

impl Queue for HostQueue {
    type B = HostBackend;

    fn put(&self, dst: RemoteRange, data: &[u8], _copier: Copier) -> Result<Ticket, QueueError> {
        self.write_remote(dst, data);
        self.ctx.delivered(dst.pe);
        Ok(self.ticket())
    }

    /// Reads the source from this PE's own segment, then writes it to the target.
    ///
    /// # Ordering
    /// As [`Queue::put`]: complete when this returns.
    fn put_from_local(&self, dst: RemoteRange, src: LocalRange) -> Result<Ticket, QueueError> {
        assert_eq!(
            dst.len, src.len,
            "put_from_local: source and destination lengths differ"
        );
        let bytes = self.read_remote(RemoteRange {
            pe: self.ctx.pe,
            kind: src.kind,
            offset: src.offset,
            len: src.len,
        });
        self.put(dst, &bytes, Copier::Device)
    }

    fn get(&self, src: RemoteRange) -> Result<Ticket, QueueError> {
        let bytes = self.read_remote(src);
        let t = self.ticket();
        self.fetched.borrow_mut().insert(t.0, bytes);
        Ok(t)
    }

    fn get_into(&self, src: RemoteRange, dst: LocalRange) -> Result<Ticket, QueueError> {
        assert_eq!(
            src.len, dst.len,
            "get_into: source and destination lengths differ"
        );
        let bytes = self.read_remote(src);
        self.ctx
            .with_segment(self.ctx.pe, dst.kind, |s| s.write(dst.offset, &bytes));
        Ok(self.ticket())
    }

    fn amo(&self, dst: RemoteRange, op: AmoOp, fetch: bool) -> Result<Ticket, QueueError> {
        let old = self.amo_now(dst, op)?.unwrap_or_default();
        let t = self.ticket();
        if fetch {
            self.fetched
                .borrow_mut()
                .insert(t.0, old.to_le_bytes().to_vec());
        }
        Ok(t)
    }

    /// # Ordering
    /// As [`Queue::amo`]: every operation here completes at issue.
    fn amo_now(&self, dst: RemoteRange, op: AmoOp) -> Result<Option<u64>, QueueError> {
        assert_eq!(
            dst.len,
            op.width.bytes(),
            "amo: range length is not the op's width"
        );
        let old = self.ctx.with_segment(dst.pe, dst.kind, |s| {
            s.amo(dst.offset, op, Ordering::AcqRel)
        });
        if op.writes() {
            self.ctx.delivered(dst.pe);
        }
        Ok(Some(old))
    }

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
        self.write_remote(dst, data);
        let order = self.ctx.world.strength.signal_order;
        self.ctx.with_segment(signal.pe, signal.kind, |s| {
            s.amo(signal.offset, op.as_amo(value), order)
        });
        self.ctx.delivered(signal.pe);
        if dst.pe != signal.pe {
            self.ctx.delivered(dst.pe);
        }
        Ok(self.ticket())
    }

    fn fence(&self) -> Result<(), QueueError> {
        fence(Ordering::Release);
        Ok(())
    }

    fn quiet(&self, _deadline: Instant) -> Result<(), QueueError> {
        fence(Ordering::SeqCst);
        Ok(())
    }

    /// # Ordering
    /// As [`Queue::quiet`], which never waits here.
    fn quiet_now(&self) -> Result<bool, QueueError> {
        self.quiet(Instant(0))?;
        Ok(true)
    }

    fn wait_ticket(&self, ticket: Ticket, _deadline: Instant) -> Result<(), QueueError> {
        assert!(
            ticket.0 < self.next.get(),
            "wait_ticket: ticket {} was never issued",
            ticket.0
        );
        Ok(())
    }

    fn is_complete(&self, ticket: Ticket) -> bool {
        ticket.0 < self.next.get()
    }

    fn take_fetched(&self, ticket: Ticket) -> Vec<u8> {
        self.fetched
            .borrow_mut()
            .remove(&ticket.0)
            .unwrap_or_else(|| {
                panic!(
                    "take_fetched: ticket {} did not fetch, was not issued, or was taken already",
                    ticket.0
                )
            })
    }
}
