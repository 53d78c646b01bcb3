//! Delivery and acknowledgement: an operation acts at its target, its response or
//! acknowledgement travels back, and its ticket completes, waking an owner that waited for it.

use hw::{MemKind, PathClass, Semantics, SignalOp};

use crate::events::Event;
use crate::fault::Fault;
use crate::memory::Payload;
use crate::network::Route;
use crate::trace::{OpCode, Record, Track};

use super::issue::{InFlight, OpKind, SignalTarget};
use super::{Blocked, Status, World};

/// The write half of a put-with-signal `ADD`, read and not yet written: under OpenSHMEM rules
/// signal updates are atomic only against the same operator (`shmem_put_signal`), so the
/// `ADD` reads on arrival and writes at its second delivery event, and a `SET` may land in
/// between.
#[derive(Debug)]
pub(super) struct SignalWrite {
    slot: u32,
    pe: u32,
    kind: MemKind,
    offset: u64,
    value: u64,
    nic: bool,
}

impl World {
    /// Whether an operation of `kind` is delivered in two events, a read and a write: a
    /// put-with-signal `ADD` under OpenSHMEM rules (NVSHMEM makes signal operations atomic
    /// with every signal operation of the datatype, and over the network transport a signal
    /// is one native atomic of the target's CPU), and not under [`Fault::SignalBeforeData`],
    /// which splits it its own way.
    pub(super) fn splits_signal_add(&self, kind: &OpKind) -> bool {
        // The run's rules first: the signal's target is a cache miss, and most runs never
        // split.
        self.params.semantics == Semantics::OpenShmem15
            && !self.params.network_transport
            && !self.params.faults.has(Fault::SignalBeforeData)
            && matches!(kind, OpKind::PutSignal { signal, .. }
                if self.signal_targets.get(*signal).op == SignalOp::Add)
    }

    /// Writes the signal `ADD`s in progress on `pe`'s word at `offset` (all of them when
    /// `only_slot` is `None`, else that operation's): a second `ADD` to the word writes the
    /// first one's sum before it reads, so `ADD`s stay atomic with each other.
    fn write_signal_adds(&mut self, pe: u32, kind: MemKind, offset: u64, only_slot: Option<u32>) {
        let mut i = 0;
        while i < self.signal_writes.len() {
            let w = &self.signal_writes[i];
            let hit = match only_slot {
                Some(slot) => w.slot == slot,
                None => w.pe == pe && w.kind == kind && w.offset == offset,
            };
            if hit {
                let w = self.signal_writes.swap_remove(i);
                self.update(w.nic, w.pe, w.kind, w.offset, &w.value.to_le_bytes());
            } else {
                i += 1;
            }
        }
    }

    /// An operation reaches its target and acts there; its response or acknowledgement
    /// starts back.
    pub(super) fn deliver(&mut self, slot: u32) {
        if self.lost_at_crashed_target(slot) {
            return;
        }
        let mut flight = self.ops[slot as usize]
            .take()
            .expect("a delivered op is in flight");
        if matches!(flight.kind, OpKind::PutSignal { .. })
            && self.params.faults.has(Fault::SignalBeforeData)
        {
            self.signal_before_data(slot, flight);
            return;
        }
        let class = flight.route.class();
        let target = flight.dst;
        let splits = self.splits_signal_add(&flight.kind);
        let mut back_bytes = 0;
        match &mut flight.kind {
            OpKind::Put { kind, offset, data } => {
                let data = std::mem::take(data);
                self.land(class, target, *kind, *offset, data);
            }
            OpKind::Get {
                kind,
                offset,
                len,
                read,
                ..
            } => {
                if class == PathClass::Rdma && self.params.pcie_read_flush {
                    // `pcie-read-flush`: a PCIe read pushes the posted writes ahead of it.
                    self.flush(target);
                } else {
                    self.catch_up(target, self.now_ns);
                }
                *read = vec![0; *len as usize];
                self.mem.read(target, *kind, *offset, read);
                back_bytes = *len;
            }
            OpKind::Amo {
                kind,
                offset,
                op,
                fetch,
                old,
            } => {
                *old = self.atomic(class, target, *kind, *offset, *op);
                if *fetch {
                    back_bytes = 8;
                }
            }
            OpKind::PutSignal {
                kind,
                offset,
                data,
                signal,
            } => {
                let data = std::mem::take(data);
                self.land(class, target, *kind, *offset, data);
                let SignalTarget {
                    kind: signal_kind,
                    offset: signal_offset,
                    op,
                    value,
                } = self.signal_targets.remove(*signal);
                if splits {
                    // The read half; the write half is this operation's next delivery event.
                    let (pe, kind, offset) = (target, signal_kind, signal_offset);
                    self.write_signal_adds(pe, kind, offset, None);
                    let old = self.atomic(
                        class,
                        pe,
                        kind,
                        offset,
                        hw::AmoOp {
                            kind: hw::AmoKind::Fetch,
                            ..op.as_amo(0)
                        },
                    );
                    self.signal_writes.push(SignalWrite {
                        slot,
                        pe,
                        kind,
                        offset,
                        value: old.wrapping_add(value),
                        nic: class == PathClass::Rdma,
                    });
                    flight.kind = OpKind::SignalWrite;
                    self.ops[slot as usize] = Some(flight);
                    return;
                }
                let amo = op.as_amo(value);
                self.atomic(class, target, signal_kind, signal_offset, amo);
            }
            OpKind::SignalWrite => {
                self.catch_up(target, self.now_ns);
                self.write_signal_adds(target, MemKind::Device, 0, Some(slot));
            }
            OpKind::SignalledData { kind, offset, data } => {
                let data = std::mem::take(data);
                self.land(class, target, *kind, *offset, data);
            }
        }
        let src = self.source_of(&flight);
        self.trace.record(Record::Deliver {
            op: flight.kind.code(),
            src,
            dst: flight.dst,
            at_ns: self.now_ns,
        });
        if self.crosses_partitions(&flight) {
            self.return_across(slot, flight, back_bytes);
            return;
        }
        let done_ns = self.return_trip(src, &flight.route, back_bytes);
        if let Some(timeline) = &mut self.trace.timeline {
            let bytes = match flight.kind {
                OpKind::Get { len, .. } => len,
                _ => 0,
            };
            timeline.span(
                Track::Pe(src),
                flight.kind.code().name(),
                timeline.posted_ns(slot),
                done_ns,
                flight.dst,
                bytes,
            );
        }
        if flight.has_response() {
            self.ops[slot as usize] = Some(flight);
            self.events.push(done_ns, Event::Complete { op: slot });
        } else {
            // Nothing comes back but the acknowledgement: the event carries all that is left
            // to do, and the slot is free for the next operation while it travels.
            self.free_ops.push(slot);
            let ack = Event::Ack {
                op: flight.kind.code(),
                queue: flight.queue,
                ticket: flight.ticket,
            };
            self.events.push(done_ns, ack);
        }
    }

    /// When a response of `bytes` (none for an acknowledgement) that starts back now over
    /// `route` of `src` reaches `src`: it takes the route's links backwards and draws its
    /// jitter.
    pub(super) fn return_trip(&mut self, src: u32, route: &Route, bytes: u64) -> u64 {
        let sent = self.net.send(src, route, true, self.now_ns, bytes);
        let jitter_ns = self.return_delay_ns(sent.latency_ns);
        sent.transfer.begin_ns
            + sent.transfer.serialise_ns
            + sent.latency_ns
            + u64::from(sent.nics) * self.params.timing.nic_ns
            + jitter_ns
    }

    /// [`Fault::SignalBeforeData`]: the signal of a put-with-signal is applied on delivery,
    /// and its data is delivered as a second step after a chosen gap.
    fn signal_before_data(&mut self, slot: u32, mut flight: InFlight) {
        let class = flight.route.class();
        let OpKind::PutSignal {
            kind,
            offset,
            data,
            signal,
        } = std::mem::replace(
            &mut flight.kind,
            OpKind::Put {
                kind: MemKind::Device,
                offset: 0,
                data: Payload::default(),
            },
        )
        else {
            unreachable!("only a put-with-signal is split");
        };
        let signal = self.signal_targets.remove(signal);
        self.atomic(
            class,
            flight.dst,
            signal.kind,
            signal.offset,
            signal.op.as_amo(signal.value),
        );
        self.trace.record(Record::SignalBeforeData {
            src: self.source_of(&flight),
            dst: flight.dst,
            at_ns: self.now_ns,
        });
        flight.kind = OpKind::SignalledData { kind, offset, data };
        // The data trails its signal by as long as a pending write may take to drain.
        let gap_ns = self.drain_delay_ns();
        self.ops[slot as usize] = Some(flight);
        self.events
            .push(self.now_ns + 1 + gap_ns, Event::Deliver { op: slot });
    }

    /// The response of an operation reaches its source: the bytes read or the value fetched
    /// are put where the PE asked.
    pub(super) fn complete(&mut self, slot: u32) {
        let flight = self.ops[slot as usize]
            .take()
            .expect("a completed op is in flight");
        self.free_ops.push(slot);
        let (queue, ticket, src) = (flight.queue, flight.ticket, self.source_of(&flight));
        self.record_completion(flight.kind.code(), queue, ticket);
        match flight.kind {
            OpKind::Get {
                into: Some(dst),
                read,
                ..
            } => {
                self.catch_up(src, self.now_ns);
                self.mem.write(src, dst.kind, dst.offset, &read);
                self.notify_write(src, dst.kind, dst.offset, dst.len);
            }
            OpKind::Get {
                into: None, read, ..
            } => {
                self.queues[queue as usize].fetched.insert(ticket, read);
            }
            OpKind::Amo { old, .. } => {
                let bytes = old.to_le_bytes().to_vec();
                self.queues[queue as usize].fetched.insert(ticket, bytes);
            }
            OpKind::Put { .. }
            | OpKind::PutSignal { .. }
            | OpKind::SignalWrite
            | OpKind::SignalledData { .. } => {
                unreachable!("operations without a response are acknowledged, not completed")
            }
        }
        self.ticket_completed(queue, ticket);
    }

    /// An operation without a result is acknowledged.
    pub(super) fn acknowledge(&mut self, op: OpCode, queue: u32, ticket: u64) {
        if op == OpCode::Put {
            self.queues[queue as usize].puts_outstanding -= 1;
        }
        self.record_completion(op, queue, ticket);
        self.ticket_completed(queue, ticket);
    }

    fn record_completion(&mut self, op: OpCode, queue: u32, ticket: u64) {
        let pe = self.queues[queue as usize].owner;
        self.trace.record(Record::Complete {
            op,
            pe,
            ticket,
            at_ns: self.now_ns,
        });
    }

    /// Marks `ticket` complete and wakes its owner if it waited for that.
    fn ticket_completed(&mut self, queue: u32, ticket: u64) {
        let q = &mut self.queues[queue as usize];
        q.tickets.complete(ticket);
        let owner = q.owner;
        let idle = q.tickets.incomplete() == 0;
        if !self.is_blocked(owner) {
            return;
        }
        if self.pes[owner as usize].status != Status::Blocked {
            return;
        }
        let satisfied = self.waits_of(owner).any(|what| match what {
            Blocked::Ticket {
                queue: q,
                ticket: t,
            } => q == queue && t == ticket,
            Blocked::Quiet { queue: q } => q == queue && idle,
            _ => false,
        });
        if satisfied {
            self.wake(owner, self.now_ns, Ok(()));
        }
    }
}
