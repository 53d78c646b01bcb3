//! The simulated queue: issues operations into the world and waits for their completion.
//!
//! Posting operations may run ahead of the world (`PeHandle::pace_post`); everything that
//! observes completions first lets the world catch up with the PE's clock (`PeHandle::pace`).

use hw::{AmoOp, Copier, Instant, LocalRange, Queue, QueueError, RemoteRange, SignalOp, Ticket};

use crate::SimBackend;
use crate::fault::Fault;
use crate::handle::PeHandle;
use crate::movers::Mover;
use crate::world::Blocked;

/// One simulated queue of one PE.
#[derive(Debug)]
pub struct SimQueue {
    handle: PeHandle,
    id: u32,
}

impl SimQueue {
    pub(crate) fn new(handle: PeHandle, id: u32) -> SimQueue {
        SimQueue { handle, id }
    }

    /// Whether only puts and atomics that fetch nothing are posted
    /// (`SimBuilder::network_transport`).
    fn network_transport(&self) -> bool {
        self.handle.world().params.network_transport
    }

    /// Returns `ticket` once it is complete if the operation it names completes at issue
    /// (every operation but a put and an atomic that fetches nothing, over the network
    /// transport), else at once.
    fn at_issue(&self, ticket: Ticket) -> Result<Ticket, QueueError> {
        if self.network_transport() {
            // No deadline: the operation is in flight, so the world moves until it completes
            // (or fails the wait, if its target crashed).
            self.wait_ticket(ticket, Instant(u64::MAX))?;
        }
        Ok(ticket)
    }
}

impl Queue for SimQueue {
    type B = SimBackend;

    /// Paced by `copier`'s copy curve (`movers.rs`).
    fn put(&self, dst: RemoteRange, data: &[u8], copier: Copier) -> Result<Ticket, QueueError> {
        self.handle.pace_post();
        Ok(self
            .handle
            .world()
            .put(self.id, dst, data, Mover::Sm(copier)))
    }

    /// Reads the source when the put is posted, then puts those bytes, paced by the copy
    /// engine of this queue.
    ///
    /// # Ordering
    /// As [`Queue::put`]: reading at posting is one of the times the contract allows.
    fn put_from_local(&self, dst: RemoteRange, src: LocalRange) -> Result<Ticket, QueueError> {
        assert_eq!(
            dst.len, src.len,
            "put_from_local: source and destination lengths differ"
        );
        self.handle.pace_post();
        let mut world = self.handle.world();
        let mut data = vec![0; src.len as usize];
        // A put that carries only its size reads nothing, and its zeros stay untouched.
        if !world.drops_payload(src.len) {
            world
                .mem
                .read(self.handle.pe, src.kind, src.offset, &mut data);
        }
        Ok(world.put(self.id, dst, &data, Mover::Engine { queue: self.id }))
    }

    fn get(&self, src: RemoteRange) -> Result<Ticket, QueueError> {
        self.handle.pace_post();
        let ticket = self.handle.world().get(self.id, src, None);
        self.at_issue(ticket)
    }

    fn get_into(&self, src: RemoteRange, dst: LocalRange) -> Result<Ticket, QueueError> {
        assert_eq!(
            src.len, dst.len,
            "get_into: source and destination lengths differ"
        );
        self.handle.pace_post();
        let ticket = self.handle.world().get(self.id, src, Some(dst));
        self.at_issue(ticket)
    }

    fn amo(&self, dst: RemoteRange, op: AmoOp, fetch: bool) -> Result<Ticket, QueueError> {
        assert_eq!(
            dst.len,
            op.width.bytes(),
            "amo: the word's length differs from the op's width"
        );
        self.handle.pace_post();
        let ticket = self.handle.world().amo(self.id, dst, op, fetch);
        // Over the network transport an update that fetches nothing is posted, as a put is.
        match !fetch && op.is_update() {
            true => Ok(ticket),
            false => self.at_issue(ticket),
        }
    }

    /// Its data paced by `copier`'s copy curve (`movers.rs`).
    fn put_signal(
        &self,
        dst: RemoteRange,
        data: &[u8],
        signal: RemoteRange,
        op: SignalOp,
        value: u64,
        copier: Copier,
    ) -> Result<Ticket, QueueError> {
        assert_eq!(signal.len, 8, "put_signal: the signal word is 8 bytes");
        assert_eq!(
            dst.pe, signal.pe,
            "put_signal: data and signal go to one PE"
        );
        if self.network_transport() {
            // Every put of this PE to the target is delivered before the signal goes.
            self.handle.pace();
            loop {
                let in_flight = self.handle.world().put_in_flight(self.handle.pe, dst.pe.0);
                let Some((queue, ticket)) = in_flight else {
                    break;
                };
                self.handle.block(
                    Blocked::Ticket {
                        queue,
                        ticket: ticket.0,
                    },
                    u64::MAX,
                )?;
            }
        }
        self.handle.pace_post();
        let ticket = self.handle.world().put_signal(
            self.id,
            dst,
            data,
            signal,
            op,
            value,
            Mover::Sm(copier),
        );
        self.at_issue(ticket)
    }

    /// Over the network transport, first waits for the queue's posted operations: the
    /// provider may deliver a put after a later atomic, and the process backend's fence waits
    /// instead.
    fn fence(&self) -> Result<(), QueueError> {
        let ignored = self.handle.world().params.faults.has(Fault::FenceIgnored);
        if self.network_transport() && !ignored {
            self.serialize(Instant(u64::MAX))?;
        }
        self.handle.world().fence(self.id);
        Ok(())
    }

    /// Waits until the queue's earlier operations have completed, as a stream runs its
    /// operations one after another: without the GPU's memory fence and the consistency step
    /// that a quiet adds, which a stream does not make.
    fn serialize(&self, deadline: Instant) -> Result<(), QueueError> {
        self.handle.pace();
        while !self.handle.world().queue_idle(self.id) {
            self.handle
                .block(Blocked::Quiet { queue: self.id }, deadline.0)?;
        }
        Ok(())
    }

    fn quiet(&self, deadline: Instant) -> Result<(), QueueError> {
        // The fence of a GPU's quiet overlaps the wait for the operations still in flight.
        self.handle.world().pay_fence(self.handle.pe);
        self.handle.world().counts.quiets += 1;
        self.serialize(deadline)?;
        // Quiet makes the calling PE's own delivered updates visible to it (docs/ordering.md).
        if self.handle.world().stall_before_consistency(self.handle.pe) {
            self.handle.pace();
        }
        self.handle.world().flush(self.handle.pe);
        Ok(())
    }

    fn wait_ticket(&self, ticket: Ticket, deadline: Instant) -> Result<(), QueueError> {
        self.handle.pace();
        while !self.handle.world().ticket_done(self.id, ticket) {
            self.handle.block(
                Blocked::Ticket {
                    queue: self.id,
                    ticket: ticket.0,
                },
                deadline.0,
            )?;
        }
        Ok(())
    }

    fn is_complete(&self, ticket: Ticket) -> bool {
        self.handle.pace();
        self.handle.world().ticket_done(self.id, ticket)
    }

    fn take_fetched(&self, ticket: Ticket) -> Vec<u8> {
        self.handle.pace();
        self.handle.world().take_fetched(self.id, ticket).unwrap_or_else(|| {
            panic!("take_fetched: ticket {} has no fetched bytes (not complete, not a fetch, or taken)", ticket.0)
        })
    }
}
