//! The simulated world: all state, the event loop, and how each operation travels.
//!
//! PEs are coroutines that the executor (`exec.rs`) resumes when the world says so; while a
//! PE runs it issues operations through its device and queues, which call into the world.
//! A PE's clock runs ahead of the world's while it issues; before each operation it yields if
//! its clock passed the next event, so every operation is issued in global time order.

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use hw::{
    AmoOp, Caps, LocalRange, MemKind, Path, PathClass, Pe, QueueError, RemoteRange, Semantics,
    SignalOp, Ticket, Topology, WaitReport, WaitSpec,
};

use crate::entropy::Entropy;
use crate::events::{Event, EventQueue};
use crate::memory::Memory;
use crate::network::Network;
use crate::report::OpCounts;
use crate::trace::{Trace, Track};

/// Knobs of the world that are not part of the topology.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WorldParams {
    pub(crate) seed: u64,
    pub(crate) semantics: Semantics,
    pub(crate) timeline: bool,
    /// Longest delay before a pending InfiniBand write becomes visible on its own.
    pub(crate) drain_max_ns: u64,
    /// Cost of a bootstrap exchange once every PE arrived (an out-of-band TCP/PMI round).
    pub(crate) exchange_ns: u64,
    /// Virtual time after which the run is stopped.
    pub(crate) time_limit_ns: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    /// A resume event is queued, or the PE is running.
    Runnable,
    Blocked,
    Finished,
    Failed,
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Blocked {
    Memory(WaitSpec),
    Ticket { queue: u32, ticket: u64 },
    Quiet { queue: u32 },
    Exchange,
}

#[derive(Debug)]
struct PeState {
    clock_ns: u64,
    status: Status,
    blocked: Option<Blocked>,
    /// The deadline of the current wait, if it has one.
    deadline_ns: Option<u64>,
    wake: Option<Result<(), QueueError>>,
    exchange_result: Option<Rc<Vec<Vec<u8>>>>,
    failure: Option<String>,
    /// Which peers' segments this PE imported: bit `2 * peer + kind`.
    imported: Vec<u64>,
}

/// Delivery order towards one target PE of one queue (the fence rule).
#[derive(Clone, Copy, Debug, Default)]
struct DstOrder {
    epoch: u64,
    /// Latest delivery of an operation issued in `epoch`.
    epoch_last_ns: u64,
    /// Operations of later epochs are delivered after this.
    floor_ns: u64,
}

#[derive(Debug)]
struct QueueState {
    owner: u32,
    next_ticket: u64,
    incomplete: BTreeSet<u64>,
    fetched: BTreeMap<u64, Vec<u8>>,
    epoch: u64,
    order: BTreeMap<u32, DstOrder>,
}

#[derive(Debug)]
enum OpKind {
    Put {
        dst: RemoteRange,
        data: Vec<u8>,
    },
    Get {
        src: RemoteRange,
        into: Option<LocalRange>,
    },
    Amo {
        dst: RemoteRange,
        op: AmoOp,
        fetch: bool,
    },
    PutSignal {
        dst: RemoteRange,
        data: Vec<u8>,
        signal: RemoteRange,
        op: SignalOp,
        value: u64,
    },
}

impl OpKind {
    fn name(&self) -> &'static str {
        match self {
            OpKind::Put { .. } => "put",
            OpKind::Get { .. } => "get",
            OpKind::Amo { .. } => "amo",
            OpKind::PutSignal { .. } => "put_signal",
        }
    }

    fn code(&self) -> u64 {
        match self {
            OpKind::Put { .. } => 1,
            OpKind::Get { .. } => 2,
            OpKind::Amo { .. } => 3,
            OpKind::PutSignal { .. } => 4,
        }
    }
}

#[derive(Debug)]
struct InFlight {
    queue: u32,
    ticket: u64,
    src: u32,
    dst: u32,
    issued_ns: u64,
    path: Path,
    kind: OpKind,
    result: Option<Vec<u8>>,
}

#[derive(Debug, Default)]
struct Exchange {
    arrivals: Vec<Option<Vec<u8>>>,
    arrived: u32,
}

/// Everything that exists in a simulated run.
#[derive(Debug)]
pub(crate) struct World {
    pub(crate) topology: Rc<Topology>,
    pub(crate) caps: Caps,
    pub(crate) params: WorldParams,
    pub(crate) n_pes: u32,
    pub(crate) now_ns: u64,
    pub(crate) events_processed: u64,
    events: EventQueue,
    pub(crate) entropy: Entropy,
    pub(crate) mem: Memory,
    net: Network,
    pes: Vec<PeState>,
    queues: Vec<QueueState>,
    ops: Vec<Option<InFlight>>,
    free_ops: Vec<u32>,
    exchange: Exchange,
    /// Deadlines of blocked PEs, earliest first: (deadline, PE). Kept apart from the event
    /// queue because almost every wait ends before its deadline, and a void deadline left in
    /// the queue would cost every later pop.
    deadlines: BTreeSet<(u64, u32)>,
    pub(crate) running: Option<u32>,
    pub(crate) counts: OpCounts,
    pub(crate) trace: Trace,
    pub(crate) failure: Option<String>,
    pub(crate) abort: Option<String>,
}

fn overlaps(a_offset: u64, a_len: u64, b_offset: u64, b_len: u64) -> bool {
    a_offset < b_offset + b_len && b_offset < a_offset + a_len
}

fn kind_code(kind: MemKind) -> u64 {
    match kind {
        MemKind::Host => 0,
        MemKind::Device => 1,
    }
}

impl World {
    pub(crate) fn new(
        topology: Rc<Topology>,
        n_pes: u32,
        caps: Caps,
        params: WorldParams,
    ) -> World {
        let words = (2 * n_pes as usize).div_ceil(64);
        let pes = (0..n_pes)
            .map(|_| PeState {
                clock_ns: 0,
                status: Status::Runnable,
                blocked: None,
                deadline_ns: None,
                wake: None,
                exchange_result: None,
                failure: None,
                imported: vec![0; words],
            })
            .collect();
        let mut events = EventQueue::default();
        for pe in 0..n_pes {
            events.push(0, Event::Resume { pe });
        }
        World {
            net: Network::new(&topology, n_pes),
            mem: Memory::new(n_pes),
            topology,
            caps,
            n_pes,
            now_ns: 0,
            events_processed: 0,
            events,
            entropy: Entropy::from_seed(params.seed),
            pes,
            queues: Vec::new(),
            ops: Vec::new(),
            free_ops: Vec::new(),
            exchange: Exchange {
                arrivals: vec![None; n_pes as usize],
                arrived: 0,
            },
            deadlines: BTreeSet::new(),
            running: None,
            counts: OpCounts::default(),
            trace: Trace::new(params.timeline),
            failure: None,
            abort: None,
            params,
        }
    }

    // ---- PEs ----------------------------------------------------------------------------

    pub(crate) fn clock_ns(&self, pe: u32) -> u64 {
        self.pes[pe as usize].clock_ns
    }

    pub(crate) fn advance_clock(&mut self, pe: u32, ns: u64) {
        self.pes[pe as usize].clock_ns += ns;
    }

    /// When the next thing happens: an event or a deadline.
    fn next_time_ns(&self) -> Option<u64> {
        let deadline = self.deadlines.first().map(|&(t, _)| t);
        match (self.events.next_time_ns(), deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether `pe` must yield before issuing: its clock passed the next event or deadline.
    pub(crate) fn must_yield(&self, pe: u32) -> bool {
        self.next_time_ns()
            .is_some_and(|t| self.pes[pe as usize].clock_ns > t)
    }

    /// Queues `pe` to continue at its own clock (it yielded to let the world catch up).
    pub(crate) fn reschedule(&mut self, pe: u32) {
        let at = self.pes[pe as usize].clock_ns;
        self.events.push(at, Event::Resume { pe });
    }

    /// Marks `pe` blocked on `what` until `deadline_ns`.
    pub(crate) fn block(&mut self, pe: u32, what: Blocked, deadline_ns: u64) {
        let state = &mut self.pes[pe as usize];
        state.status = Status::Blocked;
        state.blocked = Some(what);
        state.wake = None;
        if deadline_ns < u64::MAX {
            let at = deadline_ns.max(self.now_ns);
            state.deadline_ns = Some(at);
            self.deadlines.insert((at, pe));
        }
    }

    /// What a blocked PE was woken with.
    pub(crate) fn take_wake(&mut self, pe: u32) -> Result<(), QueueError> {
        self.pes[pe as usize].wake.take().unwrap_or(Ok(()))
    }

    fn wake(&mut self, pe: u32, at_ns: u64, result: Result<(), QueueError>) {
        let state = &mut self.pes[pe as usize];
        debug_assert_eq!(state.status, Status::Blocked);
        state.status = Status::Runnable;
        state.blocked = None;
        state.wake = Some(result);
        if let Some(at) = state.deadline_ns.take() {
            self.deadlines.remove(&(at, pe));
        }
        self.events.push(at_ns, Event::Resume { pe });
    }

    pub(crate) fn finish(&mut self, pe: u32, failure: Option<String>) {
        let state = &mut self.pes[pe as usize];
        state.status = if failure.is_some() {
            Status::Failed
        } else {
            Status::Finished
        };
        state.failure = failure;
        self.trace.record(&[9, pe as u64, state.clock_ns]);
    }

    pub(crate) fn sim_time_ns(&self) -> u64 {
        self.pes
            .iter()
            .map(|p| p.clock_ns)
            .max()
            .unwrap_or(0)
            .max(self.now_ns)
    }

    // ---- memory and imports -------------------------------------------------------------

    pub(crate) fn mark_imported(&mut self, pe: u32, peer: u32, kind: MemKind) {
        let bit = 2 * peer as usize + kind_code(kind) as usize;
        self.pes[pe as usize].imported[bit / 64] |= 1 << (bit % 64);
    }

    fn assert_imported(&self, pe: u32, range: &RemoteRange) {
        let bit = 2 * range.pe.idx() + kind_code(range.kind) as usize;
        assert!(
            self.pes[pe as usize].imported[bit / 64] & (1 << (bit % 64)) != 0,
            "PE {pe} accessed {}'s {:?} segment without importing it (contract violation)",
            range.pe,
            range.kind
        );
    }

    /// Tells a PE waiting on memory that `[offset, offset+len)` of its `kind` segment changed.
    fn notify_write(&mut self, pe: u32, kind: MemKind, offset: u64, len: u64) {
        let state = &self.pes[pe as usize];
        let Some(Blocked::Memory(spec)) = state.blocked else {
            return;
        };
        if state.status != Status::Blocked
            || spec.word.kind != kind
            || !overlaps(spec.word.offset, spec.word.len, offset, len)
        {
            return;
        }
        if self.evaluate(pe, &spec).is_some() {
            let at = self.now_ns + self.topology.timing().poll_ns;
            self.wake(pe, at, Ok(()));
        }
    }

    /// Reads the waited-on word; `Some(value)` if the comparison holds.
    pub(crate) fn evaluate(&self, pe: u32, spec: &WaitSpec) -> Option<u64> {
        let w = spec.word;
        let value = self.mem.read_word(pe, w.kind, w.offset, spec.width.bytes());
        spec.cmp
            .eval(spec.width, spec.signed, value, spec.value)
            .then_some(value)
    }

    /// The consistency step: every delivered write to `pe` becomes visible to it.
    pub(crate) fn flush(&mut self, pe: u32) {
        for (kind, offset, len) in self.mem.flush(pe) {
            self.trace.record(&[7, pe as u64, offset, len]);
            self.notify_write(pe, kind, offset, len);
        }
    }

    /// A write arriving at its target over `class`: through a NIC it waits in the pending
    /// list (NVSHMEM semantics); otherwise it is visible at once.
    fn land(&mut self, class: PathClass, pe: u32, kind: MemKind, offset: u64, data: Vec<u8>) {
        let len = data.len() as u64;
        if class == PathClass::Rdma && self.params.semantics == Semantics::Nvshmem {
            let write_id = self.mem.push_pending(pe, kind, offset, data);
            let delay = 1 + self.entropy.below(self.params.drain_max_ns);
            self.events
                .push(self.now_ns + delay, Event::Drain { pe, write_id });
        } else {
            self.mem.write(pe, kind, offset, &data);
            self.notify_write(pe, kind, offset, len);
        }
    }

    /// An atomic at its target. Through a NIC the atomic is a PCIe read-modify-write, and a
    /// PCIe read pushes every posted write ahead of it: the target's pending writes become
    /// visible first. The result is visible at once.
    fn atomic(&mut self, class: PathClass, target: RemoteRange, op: AmoOp) -> u64 {
        if class == PathClass::Rdma {
            self.flush(target.pe.0);
        }
        let (pe, len) = (target.pe.0, op.width.bytes());
        let old = self.mem.read_word(pe, target.kind, target.offset, len);
        if op.writes() {
            self.mem
                .write_word(pe, target.kind, target.offset, len, op.apply(old));
            self.notify_write(pe, target.kind, target.offset, len);
        }
        old
    }

    // ---- queues and operations ----------------------------------------------------------

    pub(crate) fn create_queue(&mut self, owner: u32) -> u32 {
        self.queues.push(QueueState {
            owner,
            next_ticket: 0,
            incomplete: BTreeSet::new(),
            fetched: BTreeMap::new(),
            epoch: 0,
            order: BTreeMap::new(),
        });
        (self.queues.len() - 1) as u32
    }

    pub(crate) fn fence(&mut self, queue: u32) {
        self.queues[queue as usize].epoch += 1;
        self.counts.fences += 1;
        let owner = self.queues[queue as usize].owner;
        self.trace.record(&[5, owner as u64, self.clock_ns(owner)]);
    }

    pub(crate) fn queue_idle(&self, queue: u32) -> bool {
        self.queues[queue as usize].incomplete.is_empty()
    }

    pub(crate) fn ticket_done(&self, queue: u32, ticket: Ticket) -> bool {
        !self.queues[queue as usize].incomplete.contains(&ticket.0)
    }

    pub(crate) fn take_fetched(&mut self, queue: u32, ticket: Ticket) -> Option<Vec<u8>> {
        self.queues[queue as usize].fetched.remove(&ticket.0)
    }

    pub(crate) fn put(&mut self, queue: u32, dst: RemoteRange, data: &[u8]) -> Ticket {
        self.counts.puts += 1;
        self.counts.bytes_put += data.len() as u64;
        let out_bytes = data.len() as u64;
        self.issue(
            queue,
            dst.pe.0,
            OpKind::Put {
                dst,
                data: data.to_vec(),
            },
            out_bytes,
            true,
        )
    }

    pub(crate) fn get(&mut self, queue: u32, src: RemoteRange, into: Option<LocalRange>) -> Ticket {
        self.counts.gets += 1;
        self.counts.bytes_got += src.len;
        self.issue(queue, src.pe.0, OpKind::Get { src, into }, 0, false)
    }

    pub(crate) fn amo(&mut self, queue: u32, dst: RemoteRange, op: AmoOp, fetch: bool) -> Ticket {
        self.counts.amos += 1;
        self.issue(
            queue,
            dst.pe.0,
            OpKind::Amo { dst, op, fetch },
            op.width.bytes(),
            true,
        )
    }

    pub(crate) fn put_signal(
        &mut self,
        queue: u32,
        dst: RemoteRange,
        data: &[u8],
        signal: RemoteRange,
        op: SignalOp,
        value: u64,
    ) -> Ticket {
        self.counts.put_signals += 1;
        self.counts.bytes_put += data.len() as u64;
        let out_bytes = data.len() as u64 + 8;
        let kind = OpKind::PutSignal {
            dst,
            data: data.to_vec(),
            signal,
            op,
            value,
        };
        self.issue(queue, dst.pe.0, kind, out_bytes, true)
    }

    /// Extra delay of one traversal of `path`: usually up to a quarter of its latency, and one
    /// time in eight a straggler of up to twice its latency, so that the reorderings the rules
    /// allow between unfenced operations are seen within a few seeds, not only in theory.
    fn jitter_ns(&mut self, path: &Path) -> u64 {
        if path.latency_ns == 0 {
            return 0;
        }
        if self.entropy.below(8) == 0 {
            self.entropy.below(2 * path.latency_ns + 1)
        } else {
            self.entropy.below(path.latency_ns / 4 + 1)
        }
    }

    /// Sends one operation on its way. `fenced` operations obey the fence rule; gets do not.
    fn issue(
        &mut self,
        queue: u32,
        dst: u32,
        kind: OpKind,
        out_bytes: u64,
        fenced: bool,
    ) -> Ticket {
        let src = self.queues[queue as usize].owner;
        match &kind {
            OpKind::Put { dst, .. } | OpKind::Amo { dst, .. } => self.assert_imported(src, dst),
            OpKind::Get { src: range, .. } => self.assert_imported(src, range),
            OpKind::PutSignal { dst, signal, .. } => {
                self.assert_imported(src, dst);
                self.assert_imported(src, signal);
            }
        }
        let timing = self.topology.timing();
        self.advance_clock(src, timing.issue_ns);
        let issued_ns = self.clock_ns(src);
        let path = self.net.path(&self.topology, src, dst);
        let transfer = self.net.reserve(
            &path.hops,
            false,
            issued_ns,
            out_bytes,
            path.bandwidth_bytes_per_s,
        );
        let jitter_ns = self.jitter_ns(&path);
        let mut arrive_ns = transfer.begin_ns
            + transfer.serialise_ns
            + path.latency_ns
            + u64::from(path.nics) * timing.nic_ns
            + jitter_ns;
        let q = &mut self.queues[queue as usize];
        if fenced {
            let epoch = q.epoch;
            let order = q.order.entry(dst).or_default();
            if order.epoch != epoch {
                order.floor_ns = order.floor_ns.max(order.epoch_last_ns);
                order.epoch_last_ns = 0;
                order.epoch = epoch;
            }
            arrive_ns = arrive_ns.max(order.floor_ns + 1);
            order.epoch_last_ns = order.epoch_last_ns.max(arrive_ns);
        }
        let ticket = q.next_ticket;
        q.next_ticket += 1;
        q.incomplete.insert(ticket);
        if let Some(timeline) = &mut self.trace.timeline {
            for hop in &path.hops {
                let track = Track::Link {
                    link: hop.link.0,
                    backward: !hop.forward,
                };
                let end = transfer.begin_ns + transfer.serialise_ns.max(1);
                timeline.span(track, kind.name(), transfer.begin_ns, end, dst, out_bytes);
            }
        }
        self.trace.record(&[
            1,
            kind.code(),
            src as u64,
            dst as u64,
            issued_ns,
            arrive_ns,
            out_bytes,
        ]);
        let flight = InFlight {
            queue,
            ticket,
            src,
            dst,
            issued_ns,
            path,
            kind,
            result: None,
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
        self.events.push(arrive_ns, Event::Deliver { op: slot });
        Ticket(ticket)
    }

    fn deliver(&mut self, slot: u32) {
        let mut flight = self.ops[slot as usize]
            .take()
            .expect("a delivered op is in flight");
        let class = flight.path.class;
        let mut back_bytes = 0;
        match &mut flight.kind {
            OpKind::Put { dst, data } => {
                let data = std::mem::take(data);
                self.land(class, dst.pe.0, dst.kind, dst.offset, data);
            }
            OpKind::Get { src, .. } => {
                if class == PathClass::Rdma {
                    // A read through the NIC pushes the target's posted writes ahead of it.
                    self.flush(src.pe.0);
                }
                let mut buf = vec![0; src.len as usize];
                self.mem.read(src.pe.0, src.kind, src.offset, &mut buf);
                back_bytes = src.len;
                flight.result = Some(buf);
            }
            OpKind::Amo { dst, op, fetch } => {
                let old = self.atomic(class, *dst, *op);
                if *fetch {
                    back_bytes = 8;
                    flight.result = Some(old.to_le_bytes().to_vec());
                }
            }
            OpKind::PutSignal {
                dst,
                data,
                signal,
                op,
                value,
            } => {
                let data = std::mem::take(data);
                self.land(class, dst.pe.0, dst.kind, dst.offset, data);
                self.atomic(class, *signal, op.as_amo(*value));
            }
        }
        self.trace.record(&[
            2,
            flight.kind.code(),
            flight.src as u64,
            flight.dst as u64,
            self.now_ns,
        ]);
        let path = &flight.path;
        let transfer = self.net.reserve(
            &path.hops,
            true,
            self.now_ns,
            back_bytes,
            path.bandwidth_bytes_per_s,
        );
        let jitter_ns = self.jitter_ns(path);
        let done_ns = transfer.begin_ns
            + transfer.serialise_ns
            + path.latency_ns
            + u64::from(path.nics) * self.topology.timing().nic_ns
            + jitter_ns;
        self.ops[slot as usize] = Some(flight);
        self.events.push(done_ns, Event::Complete { op: slot });
    }

    fn complete(&mut self, slot: u32) {
        let flight = self.ops[slot as usize]
            .take()
            .expect("a completed op is in flight");
        self.free_ops.push(slot);
        let (queue, ticket) = (flight.queue, flight.ticket);
        self.trace.record(&[
            3,
            flight.kind.code(),
            flight.src as u64,
            ticket,
            self.now_ns,
        ]);
        if let Some(timeline) = &mut self.trace.timeline {
            let bytes = match &flight.kind {
                OpKind::Get { src, .. } => src.len,
                _ => 0,
            };
            let name = flight.kind.name();
            timeline.span(
                Track::Pe(flight.src),
                name,
                flight.issued_ns,
                self.now_ns,
                flight.dst,
                bytes,
            );
        }
        if let (
            OpKind::Get {
                into: Some(dst), ..
            },
            Some(data),
        ) = (&flight.kind, &flight.result)
        {
            self.mem.write(flight.src, dst.kind, dst.offset, data);
            self.notify_write(flight.src, dst.kind, dst.offset, dst.len);
        } else if let Some(data) = flight.result {
            self.queues[queue as usize].fetched.insert(ticket, data);
        }
        let q = &mut self.queues[queue as usize];
        q.incomplete.remove(&ticket);
        let owner = q.owner;
        let idle = q.incomplete.is_empty();
        let state = &self.pes[owner as usize];
        if state.status != Status::Blocked {
            return;
        }
        let satisfied = match state.blocked {
            Some(Blocked::Ticket {
                queue: q,
                ticket: t,
            }) => q == queue && t == ticket,
            Some(Blocked::Quiet { queue: q }) => q == queue && idle,
            _ => false,
        };
        if satisfied {
            self.wake(owner, self.now_ns, Ok(()));
        }
    }

    // ---- bootstrap exchange -------------------------------------------------------------

    /// Records `pe`'s contribution; when it is the last, every PE gets the result.
    /// Returns whether the exchange completed.
    pub(crate) fn arrive(&mut self, pe: u32, mine: Vec<u8>) {
        let slot = &mut self.exchange.arrivals[pe as usize];
        assert!(slot.is_none(), "PE {pe} entered an exchange twice");
        *slot = Some(mine);
        self.exchange.arrived += 1;
        self.block(pe, Blocked::Exchange, u64::MAX);
        if self.exchange.arrived < self.n_pes {
            return;
        }
        let all: Vec<Vec<u8>> = self
            .exchange
            .arrivals
            .iter_mut()
            .map(|a| a.take().unwrap_or_default())
            .collect();
        self.exchange.arrived = 0;
        let all = Rc::new(all);
        let at = self.sim_time_ns() + self.params.exchange_ns;
        self.trace.record(&[8, at]);
        for p in 0..self.n_pes {
            if let Some(Blocked::Exchange) = self.pes[p as usize].blocked {
                self.pes[p as usize].exchange_result = Some(Rc::clone(&all));
                self.wake(p, at, Ok(()));
            }
        }
    }

    pub(crate) fn take_exchange(&mut self, pe: u32) -> Option<Rc<Vec<Vec<u8>>>> {
        self.pes[pe as usize].exchange_result.take()
    }

    // ---- the event loop -----------------------------------------------------------------

    /// Processes events until a PE is to be resumed; `None` when the run is over.
    pub(crate) fn next_pe(&mut self) -> Option<u32> {
        loop {
            if self.events.is_empty() && self.resolve_deadlock() {
                continue;
            }
            let event_ns = self.events.next_time_ns()?;
            if let Some(&(deadline_ns, pe)) = self.deadlines.first()
                && deadline_ns <= event_ns
            {
                self.now_ns = self.now_ns.max(deadline_ns);
                self.miss_deadline(pe);
                continue;
            }
            let (at_ns, event) = self.events.pop()?;
            self.events_processed += 1;
            self.now_ns = self.now_ns.max(at_ns);
            if self.now_ns > self.params.time_limit_ns && self.abort.is_none() {
                self.stop_at_time_limit();
            }
            match event {
                Event::Resume { pe } => {
                    let state = &mut self.pes[pe as usize];
                    if state.status != Status::Runnable {
                        continue;
                    }
                    state.clock_ns = state.clock_ns.max(self.now_ns);
                    return Some(pe);
                }
                Event::Deliver { op } => self.deliver(op),
                Event::Complete { op } => self.complete(op),
                Event::Drain { pe, write_id } => {
                    for (kind, offset, len) in self.mem.drain(pe, write_id) {
                        self.trace.record(&[6, pe as u64, offset, len, self.now_ns]);
                        self.notify_write(pe, kind, offset, len);
                    }
                }
            }
        }
    }

    /// Ends `pe`'s wait with [`QueueError::Deadline`].
    fn miss_deadline(&mut self, pe: u32) {
        let waiting_for = self.describe_wait(pe);
        let err = QueueError::Deadline {
            pe: Pe(pe),
            waiting_for,
            deadline: hw::Instant(self.now_ns),
        };
        self.trace.record(&[10, pe as u64, self.now_ns]);
        self.record_failure(format!("{err}"));
        self.wake(pe, self.now_ns, Err(err));
    }

    fn record_failure(&mut self, message: String) {
        tracing::warn!(target: crate::TRACING_TARGET, seed = self.params.seed, "{message}");
        self.failure.get_or_insert(message);
    }

    /// If every live PE is blocked and nothing is in flight, wakes them all with a
    /// [`QueueError::Deadlock`] naming who waits for what. Returns whether it did.
    fn resolve_deadlock(&mut self) -> bool {
        let blocked: Vec<u32> = (0..self.n_pes)
            .filter(|&p| self.pes[p as usize].status == Status::Blocked)
            .collect();
        if blocked.is_empty() {
            return false;
        }
        let report = WaitReport {
            waits: blocked
                .iter()
                .map(|&p| (Pe(p), self.describe_wait(p)))
                .collect(),
            failed: (0..self.n_pes)
                .filter_map(|p| {
                    let s = &self.pes[p as usize];
                    s.failure
                        .clone()
                        .map(|message| hw::PeFailure { pe: Pe(p), message })
                })
                .collect(),
            finished: (0..self.n_pes)
                .filter(|&p| self.pes[p as usize].status == Status::Finished)
                .map(Pe)
                .collect(),
        };
        let err = QueueError::Deadlock { report };
        self.record_failure(format!("{err}"));
        for p in blocked {
            self.wake(p, self.now_ns, Err(err.clone()));
        }
        true
    }

    fn stop_at_time_limit(&mut self) {
        let message = format!(
            "stopped at the simulated time limit of {} ns; a PE may be spinning (raise the limit \
             with --time-limit-ms if the program is just long)",
            self.params.time_limit_ns
        );
        self.record_failure(message.clone());
        self.abort = Some(message.clone());
        for p in 0..self.n_pes {
            if self.pes[p as usize].status == Status::Blocked {
                self.wake(p, self.now_ns, Err(QueueError::Lost(message.clone())));
            }
        }
    }

    pub(crate) fn describe_wait(&self, pe: u32) -> String {
        match self.pes[pe as usize].blocked {
            Some(Blocked::Memory(spec)) => {
                let w = spec.word;
                let now = self.mem.read_word(pe, w.kind, w.offset, spec.width.bytes());
                format!(
                    "{}: the {:?} word at offset {:#x} to become {} {} (it is {now})",
                    spec.purpose,
                    w.kind,
                    w.offset,
                    spec.cmp.symbol(),
                    spec.value
                )
            }
            Some(Blocked::Ticket { queue, ticket }) => {
                let peer = self
                    .ops
                    .iter()
                    .flatten()
                    .find(|f| f.queue == queue && f.ticket == ticket);
                match peer {
                    Some(f) => format!(
                        "the {} to PE {} (ticket {ticket}) to complete",
                        f.kind.name(),
                        f.dst
                    ),
                    None => format!("ticket {ticket} of queue {queue} to complete"),
                }
            }
            Some(Blocked::Quiet { queue }) => format!(
                "quiet: {} operations of queue {queue} to complete",
                self.queues[queue as usize].incomplete.len()
            ),
            Some(Blocked::Exchange) => format!(
                "a bootstrap exchange ({} of {} PEs arrived)",
                self.exchange.arrived, self.n_pes
            ),
            None => "nothing".to_string(),
        }
    }
}
