//! Issuing: the queues, the operations a PE posts on them, and the moment a posted operation
//! enters the network (its links, its jitter and the fence rule decide when it arrives).

use std::collections::BTreeMap;

use hw::{AmoOp, LocalRange, MemKind, RemoteRange, SignalOp, Ticket};

use crate::events::Event;
use crate::fault::Fault;
use crate::memory::Payload;
use crate::movers::Mover;
use crate::network::Route;
use crate::ordering::{FenceOrder, Tickets};
use crate::trace::{OpCode, Record, Track};

use super::World;

/// One queue: its owner, its tickets and the fence rule of what it posted.
#[derive(Debug)]
pub(super) struct QueueState {
    pub(super) owner: u32,
    /// Fences posted so far (wrapping): the epoch of the next operation posted.
    epoch: u32,
    pub(super) tickets: Tickets,
    pub(super) fetched: BTreeMap<u64, Vec<u8>>,
    order: FenceOrder,
    /// Plain puts posted and not yet acknowledged, which [`Fault::QuietSkipsNbiPuts`] lets a
    /// quiet ignore.
    pub(super) puts_outstanding: usize,
}

/// Where a put-with-signal's signal goes, and what it does there.
#[derive(Clone, Copy, Debug)]
pub(super) struct SignalTarget {
    pub(super) kind: MemKind,
    pub(super) offset: u64,
    pub(super) op: SignalOp,
    pub(super) value: u64,
}

/// What an operation does at its target PE (the operation's `dst`), with the target's
/// segment (`kind`) and offset unpacked: the simulator holds every operation in flight, up to
/// a million at once, so the layout is kept tight.
#[derive(Debug)]
pub(super) enum OpKind {
    Put {
        kind: MemKind,
        offset: u64,
        data: Payload,
    },
    Get {
        kind: MemKind,
        offset: u64,
        len: u64,
        into: Option<LocalRange>,
        /// The bytes read, once delivered.
        read: Vec<u8>,
    },
    Amo {
        kind: MemKind,
        offset: u64,
        op: AmoOp,
        fetch: bool,
        /// The word's value before the operation, once delivered.
        old: u64,
    },
    PutSignal {
        kind: MemKind,
        offset: u64,
        data: Payload,
        /// Its signal's index in [`World::signal_targets`](super::World): held inline
        /// it made every operation in flight, puts too, 16 bytes larger (7.3 million are in
        /// flight at once in an all-to-all of 4096 PEs).
        signal: u32,
    },
    /// A put-with-signal `ADD` between its read and its write at the target: the write is
    /// in [`World::signal_writes`](super::World) until its second delivery event.
    SignalWrite,
    /// The data of a put-with-signal whose signal was applied first
    /// ([`Fault::SignalBeforeData`]).
    SignalledData {
        kind: MemKind,
        offset: u64,
        data: Payload,
    },
}

impl OpKind {
    /// The kind as the trace and acknowledgements name it.
    pub(super) fn code(&self) -> OpCode {
        match self {
            OpKind::Put { .. } => OpCode::Put,
            OpKind::Get { .. } => OpCode::Get,
            OpKind::Amo { .. } => OpCode::Amo,
            OpKind::PutSignal { .. } | OpKind::SignalWrite | OpKind::SignalledData { .. } => {
                OpCode::PutSignal
            }
        }
    }
}

/// An operation posted and not yet completed.
#[derive(Debug)]
///
/// Millions are in flight at once in a big all-to-all, so what can be found elsewhere is not
/// kept here: the source is the queue's owner ([`World::source_of`]), and the time it was
/// posted is kept by the timeline when one is drawn.
pub(super) struct InFlight {
    pub(super) queue: u32,
    pub(super) ticket: u64,
    pub(super) dst: u32,
    pub(super) route: Route,
    /// When its mover has copied its data (`movers.rs`); 0 when no mover paces it.
    pub(super) copied_ns: u64,
    /// The fences posted on the queue before this operation (wrapping; see `FenceOrder`).
    pub(super) epoch: u32,
    pub(super) kind: OpKind,
}

impl InFlight {
    /// The bytes the operation carries to its target, and whether the fence rule applies
    /// (gets are exempt).
    pub(super) fn outbound(&self) -> (u64, bool) {
        match &self.kind {
            OpKind::Put { data, .. } => (data.len(), true),
            OpKind::Get { .. } => (0, false),
            OpKind::Amo { op, .. } => (op.width.bytes(), true),
            OpKind::PutSignal { data, .. } => (data.len() + 8, true),
            OpKind::SignalledData { data, .. } => (data.len(), true),
            OpKind::SignalWrite => (0, true),
        }
    }

    /// Whether a response comes back (read bytes, a fetched value) rather than only an
    /// acknowledgement.
    pub(super) fn has_response(&self) -> bool {
        match self.kind {
            OpKind::Get { .. } => true,
            OpKind::Amo { fetch, .. } => fetch,
            OpKind::Put { .. }
            | OpKind::PutSignal { .. }
            | OpKind::SignalWrite
            | OpKind::SignalledData { .. } => false,
        }
    }
}

impl World {
    // ---- queues and operations ----------------------------------------------------------

    pub(crate) fn create_queue(&mut self, owner: u32) -> u32 {
        self.queues.push(QueueState {
            owner,
            epoch: 0,
            tickets: Tickets::default(),
            fetched: BTreeMap::new(),
            order: FenceOrder::default(),
            puts_outstanding: 0,
        });
        (self.queues.len() - 1) as u32
    }

    pub(crate) fn fence(&mut self, queue: u32) {
        // The fence takes effect with the first operation after it to enter the network.
        let q = &mut self.queues[queue as usize];
        q.epoch = q.epoch.wrapping_add(1);
        self.counts.fences += 1;
        let owner = self.queues[queue as usize].owner;
        self.pay_fence(owner);
        self.trace.record(Record::Fence {
            pe: owner,
            clock_ns: self.clock_ns(owner),
        });
    }

    /// `pe` spends the time of a memory fence (`Timing::fence_ns`): a GPU fences in fence and
    /// quiet.
    pub(crate) fn pay_fence(&mut self, pe: u32) {
        self.advance_clock(pe, self.params.timing.fence_ns);
    }

    /// Whether a quiet on `queue` may return: every ticket completed (but the puts, under
    /// [`Fault::QuietSkipsNbiPuts`]).
    pub(crate) fn queue_idle(&self, queue: u32) -> bool {
        let q = &self.queues[queue as usize];
        let ignored = if self.params.faults.has(Fault::QuietSkipsNbiPuts) {
            q.puts_outstanding
        } else {
            0
        };
        q.tickets.incomplete() == ignored
    }

    /// A put that `src` posted to `dst`, on any queue, and that has not yet been delivered:
    /// its queue and ticket (`SimBuilder::network_transport`'s put-with-signal waits for it).
    pub(crate) fn put_in_flight(&self, src: u32, dst: u32) -> Option<(u32, Ticket)> {
        self.ops.iter().flatten().find_map(|op| {
            let put = matches!(op.kind, OpKind::Put { .. });
            let from_src = self.source_of(op) == src;
            (put && from_src && op.dst == dst).then_some((op.queue, Ticket(op.ticket)))
        })
    }

    pub(crate) fn ticket_done(&self, queue: u32, ticket: Ticket) -> bool {
        self.queues[queue as usize].tickets.is_done(ticket.0)
    }

    pub(crate) fn take_fetched(&mut self, queue: u32, ticket: Ticket) -> Option<Vec<u8>> {
        self.queues[queue as usize].fetched.remove(&ticket.0)
    }

    pub(crate) fn put(
        &mut self,
        queue: u32,
        dst: RemoteRange,
        data: &[u8],
        mover: Mover,
    ) -> Ticket {
        self.assert_imported(self.queues[queue as usize].owner, &dst);
        self.counts.puts += 1;
        self.counts.bytes_put += data.len() as u64;
        let parts = self.put_parts(data.len());
        self.queues[queue as usize].puts_outstanding += parts as usize;
        if parts == 1 {
            let kind = OpKind::Put {
                kind: dst.kind,
                offset: dst.offset,
                data: self.payload(data, data.len()),
            };
            return self.post(queue, dst.pe.0, kind, Some(mover));
        }
        // One operation per word, under one ticket that completes with the last of them.
        let ticket = self.queues[queue as usize].tickets.issue_parts(parts);
        for (word, bytes) in data.chunks_exact(8).enumerate() {
            let kind = OpKind::Put {
                kind: dst.kind,
                offset: dst.offset + 8 * word as u64,
                data: self.payload(bytes, data.len()),
            };
            self.post_ticket(queue, ticket, dst.pe.0, kind, Some(mover));
        }
        Ticket(ticket)
    }

    /// Whether a put of `put_len` bytes carries only its size
    /// ([`crate::SimBuilder::drop_payloads_from`]).
    pub(crate) fn drops_payload(&self, put_len: u64) -> bool {
        self.params
            .drop_payloads_from
            .is_some_and(|from| put_len >= from)
    }

    /// What a put carries of `data`, a piece of a put of `put_len` bytes: the bytes, or only
    /// their count when puts that large drop theirs.
    fn payload(&self, data: &[u8], put_len: usize) -> Payload {
        if self.drops_payload(put_len as u64) {
            Payload::Dropped {
                len: data.len() as u64,
            }
        } else {
            Payload::new(data)
        }
    }

    pub(crate) fn get(&mut self, queue: u32, src: RemoteRange, into: Option<LocalRange>) -> Ticket {
        self.assert_imported(self.queues[queue as usize].owner, &src);
        self.counts.gets += 1;
        self.counts.bytes_got += src.len;
        let kind = OpKind::Get {
            kind: src.kind,
            offset: src.offset,
            len: src.len,
            into,
            read: Vec::new(),
        };
        self.post(queue, src.pe.0, kind, None)
    }

    pub(crate) fn amo(&mut self, queue: u32, dst: RemoteRange, op: AmoOp, fetch: bool) -> Ticket {
        self.assert_imported(self.queues[queue as usize].owner, &dst);
        self.counts.amos += 1;
        let kind = OpKind::Amo {
            kind: dst.kind,
            offset: dst.offset,
            op,
            fetch,
            old: 0,
        };
        self.post(queue, dst.pe.0, kind, None)
    }

    #[allow(clippy::too_many_arguments)] // the contract's put_signal, and who copies it
    pub(crate) fn put_signal(
        &mut self,
        queue: u32,
        dst: RemoteRange,
        data: &[u8],
        signal: RemoteRange,
        op: SignalOp,
        value: u64,
        mover: Mover,
    ) -> Ticket {
        let src = self.queues[queue as usize].owner;
        self.assert_imported(src, &dst);
        self.assert_imported(src, &signal);
        // The release that orders the data before the signal (`Timing::release_ns`); one
        // operation carries both, so the release delays its departure.
        self.advance_clock(src, self.params.timing.release_ns);
        self.counts.put_signals += 1;
        self.counts.bytes_put += data.len() as u64;
        let kind = OpKind::PutSignal {
            kind: dst.kind,
            offset: dst.offset,
            data: self.payload(data, data.len()),
            signal: self.signal_targets.insert(SignalTarget {
                kind: signal.kind,
                offset: signal.offset,
                op,
                value,
            }),
        };
        self.post(queue, dst.pe.0, kind, Some(mover))
    }

    /// Posts one operation: the PE pays the issue time and gets its ticket at once, and the
    /// operation enters the network at its issue time, in time order with every other event
    /// ([`Event::Issue`]). That is what lets a PE post ahead of the world without changing
    /// anything; see [`ISSUE_LOOKAHEAD_NS`](super::ISSUE_LOOKAHEAD_NS). `mover` copies the data
    /// of a put (`movers.rs`); gets and atomics have none. Booking the mover here, in the PE's
    /// program order rather than at the issue event, is the same: a mover belongs to one PE.
    fn post(&mut self, queue: u32, dst: u32, kind: OpKind, mover: Option<Mover>) -> Ticket {
        let ticket = self.queues[queue as usize].tickets.issue();
        self.post_ticket(queue, ticket, dst, kind, mover);
        Ticket(ticket)
    }

    /// [`World::post`] of an operation whose ticket is already handed out (one part of a
    /// split put, or a whole operation).
    fn post_ticket(
        &mut self,
        queue: u32,
        ticket: u64,
        dst: u32,
        kind: OpKind,
        mover: Option<Mover>,
    ) {
        let q = &self.queues[queue as usize];
        let (src, epoch) = (q.owner, q.epoch);
        self.advance_clock(src, self.params.timing.issue_ns);
        let issued_ns = self.clock_ns(src);
        let copied_ns = match (mover, &kind) {
            (Some(mover), OpKind::Put { data, .. } | OpKind::PutSignal { data, .. }) => {
                self.movers.copy(src, mover, issued_ns, data.len())
            }
            _ => 0,
        };
        let route = self.net.route(&self.topology, src, dst);
        let flight = InFlight {
            queue,
            ticket,
            dst,
            route,
            copied_ns,
            epoch,
            kind,
        };
        let Some(flight) = self.post_across(flight, issued_ns) else {
            return;
        };
        let slot = match self.free_ops.pop() {
            Some(slot) => {
                self.ops[slot as usize] = Some(flight);
                slot
            }
            None => {
                self.ops.push(Some(flight));
                (self.ops.len() - 1) as u32
            }
        };
        if let Some(timeline) = &mut self.trace.timeline {
            timeline.note_posted(slot, issued_ns);
        }
        self.events.push(issued_ns, Event::Issue { op: slot });
    }

    /// Frees the slot of an operation that goes no further, and what it kept elsewhere.
    pub(super) fn forget_op(&mut self, slot: u32) {
        let flight = self.ops[slot as usize]
            .take()
            .expect("a forgotten op is in flight");
        if let OpKind::PutSignal { signal, .. } = flight.kind {
            self.signal_targets.remove(signal);
        }
        self.free_ops.push(slot);
    }

    /// The PE that posted `flight`: its queue's owner.
    pub(super) fn source_of(&self, flight: &InFlight) -> u32 {
        self.queues[flight.queue as usize].owner
    }

    /// A posted operation enters the network: it takes its route's links and is on its way.
    pub(super) fn issue(&mut self, slot: u32) {
        if self.dropped_at_crashed_source(slot) {
            return;
        }
        let flight = self.ops[slot as usize]
            .as_ref()
            .expect("an issued op is in flight");
        if self.crosses_partitions(flight) {
            self.send_across(slot);
            return;
        }
        let entry = Entry {
            queue: flight.queue,
            src: self.source_of(flight),
            dst: flight.dst,
            route: flight.route,
            copied_ns: flight.copied_ns,
            epoch: flight.epoch,
            op: flight.kind.code(),
            outbound: flight.outbound(),
            splits: self.splits_signal_add(&flight.kind),
        };
        let (arrive_ns, write_ns) = self.enter_network(&entry);
        self.events.push(arrive_ns, Event::Deliver { op: slot });
        if let Some(at_ns) = write_ns {
            self.events.push(at_ns, Event::Deliver { op: slot });
        }
    }

    /// Takes `entry`'s links, draws its jitter and applies the fence rule of its queue, at the
    /// current time: when it arrives, and when a signal `ADD` it carries writes.
    pub(super) fn enter_network(&mut self, entry: &Entry) -> (u64, Option<u64>) {
        let Entry {
            queue,
            src,
            dst,
            route,
            copied_ns,
            epoch,
            op,
            outbound: (out_bytes, fenced),
            splits,
        } = *entry;
        let issued_ns = self.now_ns;
        let sent = self.net.send(src, &route, false, issued_ns, out_bytes);
        let transfer = sent.transfer;
        let jitter_ns = self.forward_delay_ns(sent.latency_ns);
        // The last byte leaves once the links carried it and its mover copied it.
        let sent_ns = (transfer.begin_ns + transfer.serialise_ns).max(copied_ns);
        let mut arrive_ns = sent_ns
            + sent.latency_ns
            + u64::from(sent.nics) * self.params.timing.nic_ns
            + jitter_ns;
        // A signal ADD is delivered twice (`deliver.rs`): its read on arrival, its write a
        // chosen gap later, which the fence rule orders like a delivery.
        let write_ns = splits.then(|| self.signal_add_gap_ns());
        let ordered = fenced && !self.params.faults.has(Fault::FenceIgnored);
        if ordered {
            let order = &mut self.queues[queue as usize].order;
            arrive_ns = order.order(dst, arrive_ns, issued_ns, epoch);
        }
        let write_ns = write_ns.map(|gap_ns| {
            let at_ns = arrive_ns + gap_ns;
            if ordered {
                let order = &mut self.queues[queue as usize].order;
                order.order(dst, at_ns, issued_ns, epoch)
            } else {
                at_ns
            }
        });
        if let Some(timeline) = &mut self.trace.timeline {
            let windows = self.net.windows();
            for (hop, &(from_ns, to_ns)) in self.net.hops(src, &route).zip(windows) {
                let track = Track::Link {
                    link: hop.link.0,
                    backward: !hop.forward,
                };
                timeline.span(
                    track,
                    op.name(),
                    from_ns,
                    to_ns.max(from_ns + 1),
                    dst,
                    out_bytes,
                );
            }
        }
        self.trace.record(Record::Issue {
            op,
            src,
            dst,
            issued_ns,
            arrive_ns,
            bytes: out_bytes,
        });
        (arrive_ns, write_ns)
    }
}

/// What [`World::enter_network`] needs of an operation entering the network.
#[derive(Clone, Copy, Debug)]
pub(super) struct Entry {
    pub(super) queue: u32,
    pub(super) src: u32,
    pub(super) dst: u32,
    pub(super) route: Route,
    pub(super) copied_ns: u64,
    pub(super) epoch: u32,
    pub(super) op: OpCode,
    /// [`InFlight::outbound`].
    pub(super) outbound: (u64, bool),
    /// [`World::splits_signal_add`].
    pub(super) splits: bool,
}
