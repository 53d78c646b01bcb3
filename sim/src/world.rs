//! The simulated world: all state, the event loop, and how each operation travels.
//!
//! PEs are coroutines that the executor (`exec.rs`) resumes when the world says so; while a
//! PE runs it posts operations through its device and queues, which call into the world.
//! A PE's clock runs ahead of the world's while it posts: an operation enters the network at
//! its issue time as an event, in global time order with everything else, and a PE that ran
//! too far ahead, or is about to observe anything, yields until the world caught up.

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use hw::{
    AmoOp, Caps, LocalRange, MemKind, PathClass, Pe, QueueError, RemoteRange, Semantics, SignalOp,
    Ticket, Topology, WaitReport, WaitSpec, waiting_for_any,
};

use crate::choice::Chooser;
use crate::events::{Event, EventQueue};
use crate::explore::{Explore, Rounds};
use crate::fault::{Fault, Faults};
use crate::memory::{Memory, Payload, Range};
use crate::movers::{Mover, Movers};
use crate::network::{Network, Route};
use crate::ordering::{FenceOrder, Tickets};
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
    /// Broken rules (test-only; empty in every legal run).
    pub(crate) faults: Faults,
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
    Memory,
    Ticket { queue: u32, ticket: u64 },
    Quiet { queue: u32 },
    Exchange,
}

#[derive(Debug)]
struct PeState {
    clock_ns: u64,
    status: Status,
    blocked: Option<Blocked>,
    /// What a PE blocked on [`Blocked::Memory`] waits for: any of these words to hold. Kept
    /// between waits, so a wait allocates nothing.
    watching: Vec<WaitSpec>,
    /// The deadline of the current wait, if it has one.
    deadline_ns: Option<u64>,
    wake: Option<Result<(), QueueError>>,
    exchange_result: Option<Rc<Vec<Vec<u8>>>>,
    failure: Option<String>,
    /// Which peers' segments this PE imported: bit `2 * peer + kind`.
    imported: Vec<u64>,
}

#[derive(Debug)]
struct QueueState {
    owner: u32,
    /// Fences posted so far (wrapping): the epoch of the next operation posted.
    epoch: u32,
    tickets: Tickets,
    fetched: BTreeMap<u64, Vec<u8>>,
    order: FenceOrder,
    /// Plain puts posted and not yet acknowledged, which [`Fault::QuietSkipsNbiPuts`] lets a
    /// quiet ignore.
    puts_outstanding: usize,
}

/// What an operation does at its target PE (the operation's `dst`), with the target's
/// segment (`kind`) and offset unpacked: the simulator holds every operation in flight, up to
/// a million at once, so the layout is kept tight.
#[derive(Debug)]
enum OpKind {
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
        signal_kind: MemKind,
        signal_offset: u64,
        op: SignalOp,
        value: u64,
    },
    /// The data of a put-with-signal whose signal was applied first
    /// ([`Fault::SignalBeforeData`]).
    SignalledData {
        kind: MemKind,
        offset: u64,
        data: Payload,
    },
}

/// The names of operation kinds by their [`OpKind::code`].
const OP_NAMES: [&str; 5] = ["", "put", "get", "amo", "put_signal"];

impl OpKind {
    fn name(&self) -> &'static str {
        OP_NAMES[usize::from(self.code())]
    }

    /// The code of a plain put.
    const PUT: u8 = 1;

    /// The kind as a number, for the trace and for acknowledgements.
    fn code(&self) -> u8 {
        match self {
            OpKind::Put { .. } => OpKind::PUT,
            OpKind::Get { .. } => 2,
            OpKind::Amo { .. } => 3,
            OpKind::PutSignal { .. } | OpKind::SignalledData { .. } => 4,
        }
    }
}

#[derive(Debug)]
struct InFlight {
    queue: u32,
    ticket: u64,
    src: u32,
    dst: u32,
    route: Route,
    issued_ns: u64,
    /// When its mover has copied its data (`movers.rs`); 0 when no mover paces it.
    copied_ns: u64,
    /// The fences posted on the queue before this operation (wrapping; see `FenceOrder`).
    epoch: u32,
    kind: OpKind,
}

impl InFlight {
    /// The bytes the operation carries to its target, and whether the fence rule applies
    /// (gets are exempt).
    fn outbound(&self) -> (u64, bool) {
        match &self.kind {
            OpKind::Put { data, .. } => (data.len(), true),
            OpKind::Get { .. } => (0, false),
            OpKind::Amo { op, .. } => (op.width.bytes(), true),
            OpKind::PutSignal { data, .. } => (data.len() + 8, true),
            OpKind::SignalledData { data, .. } => (data.len(), true),
        }
    }

    /// Whether a response comes back (read bytes, a fetched value) rather than only an
    /// acknowledgement.
    fn has_response(&self) -> bool {
        match self.kind {
            OpKind::Get { .. } => true,
            OpKind::Amo { fetch, .. } => fetch,
            OpKind::Put { .. } | OpKind::PutSignal { .. } | OpKind::SignalledData { .. } => false,
        }
    }
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
    /// The one source of every nondeterministic choice: seeded, or scripted in an
    /// exploration.
    pub(crate) chooser: Chooser,
    /// The coarse timing of an exploration (see [`crate::explore`]); `None` in normal runs.
    explore: Option<Rounds>,
    /// Whether writes through a NIC wait in the pending list (NVSHMEM semantics, unless
    /// [`Fault::NoIbPending`]); decided once, as every write landing asks.
    ib_pending: bool,
    pub(crate) mem: Memory,
    /// Scratch space for the ranges a flush or drain made visible, kept to avoid allocating.
    shown: Vec<Range>,
    net: Network,
    movers: Movers,
    pes: Vec<PeState>,
    /// Bit `pe` is set while `pe` is blocked: a compact copy of the status that the hot
    /// paths (a write landing, a ticket completing) check before touching the PE's state.
    blocked_bits: Vec<u64>,
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

/// How far past the next event a PE may post operations before it yields.
///
/// Why this cannot change which outcomes are possible: posting reads and changes nothing
/// another PE can see or that another PE's actions can change (the PE's own clock and
/// tickets, a cache of routes); the operation takes its links, draws its jitter and obeys
/// the fence rule when its [`Event::Issue`] comes up, in time order with every other event.
/// Everything a PE observes (memory, completions) and everything it writes that others can
/// read happens only once the world caught up with its clock (`PeHandle::pace`). What the
/// lookahead changes is when events are queued, and so the order among events of one
/// instant, which is arbitrary with or without it (and the random draws that follow). Issuing
/// while the PE ran, as the simulator once did, even took the links up to one issue time
/// early, ahead of other events of that instant.
///
/// Why so far: with many PEs at the same instant, each PE used to issue one operation per
/// switch; now it posts dozens, and the switch, the resume event and the cache misses on the
/// PE's state are shared among them. Posted operations are in flight anyway, so posting
/// ahead costs no memory beyond a microsecond's worth of them.
pub(crate) const ISSUE_LOOKAHEAD_NS: u64 = 1_000;

/// How many events ahead [`World::prefetch_far`] and [`World::prefetch_near`] look.
const PREFETCH_FAR: usize = 4;
const PREFETCH_NEAR: usize = 2;

/// Starts loading the cache lines of `value` (a hint; it changes no result).
pub(crate) fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let start: *const i8 = (value as *const T).cast();
        for line in (0..size_of::<T>()).step_by(64) {
            // SAFETY: a prefetch is a hint: it never faults and has no effect the program can
            // observe, whatever the address; SSE is part of the x86-64 baseline.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(start.wrapping_add(line)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

fn overlaps(a_offset: u64, a_len: u64, b_offset: u64, b_len: u64) -> bool {
    a_offset < b_offset + b_len && b_offset < a_offset + a_len
}

impl World {
    pub(crate) fn new(
        topology: Rc<Topology>,
        n_pes: u32,
        caps: Caps,
        params: WorldParams,
        explore: Option<&Explore>,
    ) -> World {
        let words = (2 * n_pes as usize).div_ceil(64);
        // Every PE's program starts once the GPUs are set up.
        let startup_ns = topology.timing().startup_ns;
        let pes = (0..n_pes)
            .map(|_| PeState {
                clock_ns: startup_ns,
                status: Status::Runnable,
                blocked: None,
                watching: Vec::new(),
                deadline_ns: None,
                wake: None,
                exchange_result: None,
                failure: None,
                imported: vec![0; words],
            })
            .collect();
        let rounds = explore.map(|e| crate::explore::rounds(e, &topology, n_pes));
        let mut events = EventQueue::default();
        for pe in 0..n_pes {
            events.push(startup_ns, Event::Resume { pe });
        }
        World {
            net: Network::new(&topology, n_pes),
            movers: Movers::new(topology.timing().copy),
            mem: Memory::new(n_pes),
            shown: Vec::new(),
            topology,
            caps,
            n_pes,
            now_ns: 0,
            events_processed: 0,
            events,
            chooser: match explore {
                Some(e) => Chooser::scripted(&e.prefix),
                None => Chooser::seeded(params.seed),
            },
            explore: rounds,
            ib_pending: params.semantics == Semantics::Nvshmem
                && !params.faults.has(Fault::NoIbPending),
            pes,
            blocked_bits: vec![0; (n_pes as usize).div_ceil(64)],
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
    fn next_time_ns(&mut self) -> Option<u64> {
        let deadline = self.deadlines.first().map(|&(t, _)| t);
        match (self.events.next_time_ns(), deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether `pe` must yield before observing or changing what other PEs can see: its
    /// clock passed the next event or deadline, which must happen first.
    pub(crate) fn must_yield(&mut self, pe: u32) -> bool {
        self.next_time_ns()
            .is_some_and(|t| self.pes[pe as usize].clock_ns > t)
    }

    /// Whether `pe` must yield before posting an operation: its clock ran more than
    /// [`ISSUE_LOOKAHEAD_NS`] past the next event or deadline.
    pub(crate) fn must_yield_to_post(&mut self, pe: u32) -> bool {
        let clock_ns = self.pes[pe as usize].clock_ns;
        self.next_time_ns()
            .is_some_and(|t| clock_ns > t.saturating_add(ISSUE_LOOKAHEAD_NS))
    }

    /// Queues `pe` to continue at its own clock (it yielded to let the world catch up).
    pub(crate) fn reschedule(&mut self, pe: u32) {
        let at = self.pes[pe as usize].clock_ns;
        self.events.push(at, Event::Resume { pe });
    }

    /// Marks `pe` blocked on `what` until `deadline_ns`.
    pub(crate) fn block(&mut self, pe: u32, what: Blocked, deadline_ns: u64) {
        self.blocked_bits[pe as usize / 64] |= 1 << (pe % 64);
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

    /// Marks `pe` blocked until any of `specs` holds, or until `deadline_ns`.
    pub(crate) fn block_on_words(&mut self, pe: u32, specs: &[WaitSpec], deadline_ns: u64) {
        let watching = &mut self.pes[pe as usize].watching;
        watching.clear();
        watching.extend_from_slice(specs);
        self.block(pe, Blocked::Memory, deadline_ns);
        for spec in specs {
            self.watch(pe, spec);
        }
    }

    /// What a blocked PE was woken with.
    pub(crate) fn take_wake(&mut self, pe: u32) -> Result<(), QueueError> {
        self.pes[pe as usize].wake.take().unwrap_or(Ok(()))
    }

    fn is_blocked(&self, pe: u32) -> bool {
        self.blocked_bits[pe as usize / 64] & (1 << (pe % 64)) != 0
    }

    fn wake(&mut self, pe: u32, at_ns: u64, result: Result<(), QueueError>) {
        self.blocked_bits[pe as usize / 64] &= !(1 << (pe % 64));
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
        let bit = 2 * peer as usize + kind.index();
        self.pes[pe as usize].imported[bit / 64] |= 1 << (bit % 64);
    }

    pub(crate) fn assert_imported(&self, pe: u32, range: &RemoteRange) {
        let bit = 2 * range.pe.idx() + range.kind.index();
        assert!(
            self.pes[pe as usize].imported[bit / 64] & (1 << (bit % 64)) != 0,
            "PE {pe} accessed {}'s {:?} segment without importing it (contract violation)",
            range.pe,
            range.kind
        );
    }

    /// Tells a PE waiting on memory that `[offset, offset+len)` of its `kind` segment changed.
    fn notify_write(&mut self, pe: u32, kind: MemKind, offset: u64, len: u64) {
        if !self.is_blocked(pe) {
            return;
        }
        let state = &self.pes[pe as usize];
        if state.status != Status::Blocked || !matches!(state.blocked, Some(Blocked::Memory)) {
            return;
        }
        let satisfied = state.watching.iter().any(|spec| {
            spec.word.kind == kind
                && overlaps(spec.word.offset, spec.word.len, offset, len)
                && self.evaluate(pe, spec).is_some()
        });
        if satisfied {
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

    /// Applies the drains of `pe`'s pending writes due at or before `until_ns`, in drain
    /// order. Called before anything reads or writes `pe`'s memory, it gives every access
    /// the memory it would see had each drain happened at its own time: between two accesses
    /// nothing else touches that memory, and a PE waiting on a word has its drains scheduled
    /// as events (see [`World::watch`]), so it wakes when it would have.
    fn catch_up(&mut self, pe: u32, until_ns: u64) {
        while let Some((drain_ns, write_id)) = self.mem.next_due(pe, until_ns) {
            self.drain(pe, write_id, drain_ns);
        }
    }

    /// Brings `pe`'s memory up to its own clock before its program looks at it.
    pub(crate) fn observe(&mut self, pe: u32) {
        self.catch_up(pe, self.clock_ns(pe));
    }

    /// One pending write of `pe` (and the older ones it overlaps) becomes visible; `at_ns`
    /// is its drain time.
    fn drain(&mut self, pe: u32, write_id: u64, at_ns: u64) {
        let mut shown = std::mem::take(&mut self.shown);
        self.mem.drain(pe, write_id, &mut shown);
        for &(kind, offset, len) in &shown {
            self.trace.record(&[6, pe as u64, offset, len, at_ns]);
            self.notify_write(pe, kind, offset, len);
        }
        shown.clear();
        self.shown = shown;
    }

    /// Schedules, as events, the drains of `pe`'s pending writes to the word it now waits
    /// on, so that it wakes at the time the write becomes visible.
    fn watch(&mut self, pe: u32, spec: &WaitSpec) {
        let w = spec.word;
        for (drain_ns, write_id) in self.mem.pending_over(pe, w.kind, w.offset, w.len) {
            let at_ns = drain_ns.max(self.now_ns);
            self.events.push(at_ns, Event::Drain { pe, write_id });
        }
    }

    /// Whether `pe` waits on a word of its `kind` segment in `[offset, offset + len)`.
    fn waits_on(&self, pe: u32, kind: MemKind, offset: u64, len: u64) -> bool {
        if !self.is_blocked(pe) {
            return false;
        }
        let state = &self.pes[pe as usize];
        matches!(state.blocked, Some(Blocked::Memory))
            && state.watching.iter().any(|spec| {
                let w = spec.word;
                w.kind == kind && overlaps(w.offset, w.len, offset, len)
            })
    }

    /// The consistency step: every delivered write to `pe` becomes visible to it.
    pub(crate) fn flush(&mut self, pe: u32) {
        self.catch_up(pe, self.now_ns);
        let mut shown = std::mem::take(&mut self.shown);
        self.mem.flush(pe, &mut shown);
        for &(kind, offset, len) in &shown {
            self.trace.record(&[7, pe as u64, offset, len]);
            self.notify_write(pe, kind, offset, len);
        }
        shown.clear();
        self.shown = shown;
    }

    /// A write arriving at its target over `class`: through a NIC it waits in the pending
    /// list (NVSHMEM semantics); otherwise it is visible at once.
    fn land(&mut self, class: PathClass, pe: u32, kind: MemKind, offset: u64, data: Payload) {
        let len = data.len();
        // Also keeps the pending list short: due drains go while it is in cache.
        self.catch_up(pe, self.now_ns);
        if class == PathClass::Rdma && self.ib_pending {
            let drain_ns = self.now_ns + 1 + self.drain_delay_ns();
            let write_id = self.mem.push_pending(pe, kind, offset, data, drain_ns);
            if self.waits_on(pe, kind, offset, len) {
                self.events.push(drain_ns, Event::Drain { pe, write_id });
            }
        } else {
            self.mem.write(pe, kind, offset, data.as_slice());
            self.notify_write(pe, kind, offset, len);
        }
    }

    /// An atomic at its target. Through a NIC the atomic is a PCIe read-modify-write, and a
    /// PCIe read pushes every posted write ahead of it: the target's pending writes become
    /// visible first. The result is visible at once.
    fn atomic(&mut self, class: PathClass, pe: u32, kind: MemKind, offset: u64, op: AmoOp) -> u64 {
        if class == PathClass::Rdma {
            self.flush(pe);
        } else {
            self.catch_up(pe, self.now_ns);
        }
        let len = op.width.bytes();
        let old = self.mem.read_word(pe, kind, offset, len);
        if op.writes() {
            self.mem.write_word(pe, kind, offset, len, op.apply(old));
            self.notify_write(pe, kind, offset, len);
        }
        old
    }

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
        self.trace.record(&[5, owner as u64, self.clock_ns(owner)]);
    }

    /// `pe` spends the time of a memory fence (`Timing::fence_ns`): a GPU fences in fence and
    /// quiet.
    pub(crate) fn pay_fence(&mut self, pe: u32) {
        self.advance_clock(pe, self.topology.timing().fence_ns);
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
        let kind = OpKind::Put {
            kind: dst.kind,
            offset: dst.offset,
            data: Payload::new(data),
        };
        self.queues[queue as usize].puts_outstanding += 1;
        self.post(queue, dst.pe.0, kind, Some(mover))
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
        self.advance_clock(src, self.topology.timing().release_ns);
        self.counts.put_signals += 1;
        self.counts.bytes_put += data.len() as u64;
        let kind = OpKind::PutSignal {
            kind: dst.kind,
            offset: dst.offset,
            data: Payload::new(data),
            signal_kind: signal.kind,
            signal_offset: signal.offset,
            op,
            value,
        };
        self.post(queue, dst.pe.0, kind, Some(mover))
    }

    /// Extra delay of one traversal of `path`: usually up to a quarter of its latency, and one
    /// time in eight a straggler of up to twice its latency, so that the reorderings the rules
    /// allow between unfenced operations are seen within a few seeds, not only in theory.
    fn jitter_ns(&mut self, latency_ns: u64) -> u64 {
        if latency_ns == 0 {
            return 0;
        }
        if self.chooser.below(8) == 0 {
            self.chooser.below(2 * latency_ns + 1)
        } else {
            self.chooser.below(latency_ns / 4 + 1)
        }
    }

    /// A delay of a chosen number of rounds, in an exploration.
    fn rounds_ns(&mut self, rounds: Rounds) -> u64 {
        let c = self.chooser.below(rounds.rounds.into());
        rounds.delay_ns(c)
    }

    /// Extra delay of an operation travelling to its target over a path of `latency_ns`.
    #[inline]
    fn forward_delay_ns(&mut self, latency_ns: u64) -> u64 {
        match self.explore {
            None => self.jitter_ns(latency_ns),
            Some(rounds) => self.rounds_ns(rounds),
        }
    }

    /// Extra delay of a response or acknowledgement travelling back: none in an exploration,
    /// where it would only move completions, which later choices cover (see
    /// [`crate::explore`]).
    #[inline]
    fn return_delay_ns(&mut self, latency_ns: u64) -> u64 {
        match self.explore {
            None => self.jitter_ns(latency_ns),
            Some(_) => 0,
        }
    }

    /// How long after its delivery a pending InfiniBand write drains on its own (beyond 1 ns).
    fn drain_delay_ns(&mut self) -> u64 {
        match self.explore {
            None => self.chooser.below(self.params.drain_max_ns),
            Some(rounds) => self.rounds_ns(rounds),
        }
    }

    /// In an exploration, `pe` may stall for a chosen number of rounds before a consistency
    /// step that has something to show (it has pending InfiniBand writes at its clock): a
    /// PE may be slow to take the step, and until it does, peers that read its memory over
    /// NVLink see the old values. Without pending writes the step shows nothing, so no
    /// choice is made. Returns whether the PE's clock moved; if it did, the caller yields to
    /// the world (`PeHandle::pace`) before taking the step.
    pub(crate) fn stall_before_consistency(&mut self, pe: u32) -> bool {
        let Some(rounds) = self.explore else {
            return false;
        };
        self.observe(pe);
        if !self.mem.has_pending(pe) {
            return false;
        }
        let stall_ns = self.rounds_ns(rounds);
        self.advance_clock(pe, stall_ns);
        stall_ns > 0
    }

    /// In an exploration, `pe` stalls for a chosen number of rounds before a plain load or
    /// store of its own memory, so the access may fall before or after remote writes. The
    /// caller yields to the world after this (`PeHandle::pace`), so the access happens at the
    /// stalled clock, after every event before it.
    pub(crate) fn stall_local_access(&mut self, pe: u32) {
        if let Some(rounds) = self.explore {
            let stall_ns = self.rounds_ns(rounds);
            self.advance_clock(pe, stall_ns);
        }
    }

    /// Posts one operation: the PE pays the issue time and gets its ticket at once, and the
    /// operation enters the network at its issue time, in time order with every other event
    /// ([`Event::Issue`]). That is what lets a PE post ahead of the world without changing
    /// anything; see [`ISSUE_LOOKAHEAD_NS`]. `mover` copies the data of a put (`movers.rs`);
    /// gets and atomics have none. Booking the mover here, in the PE's program order rather
    /// than at the issue event, is the same: a mover belongs to one PE.
    fn post(&mut self, queue: u32, dst: u32, kind: OpKind, mover: Option<Mover>) -> Ticket {
        let q = &mut self.queues[queue as usize];
        let (src, epoch) = (q.owner, q.epoch);
        let ticket = q.tickets.issue();
        self.advance_clock(src, self.topology.timing().issue_ns);
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
            src,
            dst,
            route,
            issued_ns,
            copied_ns,
            epoch,
            kind,
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
        self.events.push(issued_ns, Event::Issue { op: slot });
        Ticket(ticket)
    }

    /// A posted operation enters the network: it takes its route's links and is on its way.
    fn issue(&mut self, slot: u32) {
        let flight = self.ops[slot as usize]
            .as_ref()
            .expect("an issued op is in flight");
        let (queue, src, dst, route) = (flight.queue, flight.src, flight.dst, flight.route);
        let copied_ns = flight.copied_ns;
        let (epoch, code, name) = (flight.epoch, flight.kind.code(), flight.kind.name());
        let (out_bytes, fenced) = flight.outbound();
        let issued_ns = self.now_ns;
        let sent = self.net.send(src, &route, false, issued_ns, out_bytes);
        let transfer = sent.transfer;
        let jitter_ns = self.forward_delay_ns(sent.latency_ns);
        // The last byte leaves once the links carried it and its mover copied it.
        let sent_ns = (transfer.begin_ns + transfer.serialise_ns).max(copied_ns);
        let mut arrive_ns = sent_ns
            + sent.latency_ns
            + u64::from(sent.nics) * self.topology.timing().nic_ns
            + jitter_ns;
        if fenced && !self.params.faults.has(Fault::FenceIgnored) {
            let order = &mut self.queues[queue as usize].order;
            arrive_ns = order.order(dst, arrive_ns, issued_ns, epoch);
        }
        if let Some(timeline) = &mut self.trace.timeline {
            for hop in self.net.hops(src, &route) {
                let track = Track::Link {
                    link: hop.link.0,
                    backward: !hop.forward,
                };
                let end = transfer.begin_ns + transfer.serialise_ns.max(1);
                timeline.span(track, name, transfer.begin_ns, end, dst, out_bytes);
            }
        }
        self.trace.record(&[
            1,
            code.into(),
            src as u64,
            dst as u64,
            issued_ns,
            arrive_ns,
            out_bytes,
        ]);
        self.events.push(arrive_ns, Event::Deliver { op: slot });
    }

    fn deliver(&mut self, slot: u32) {
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
                if class == PathClass::Rdma {
                    // A read through the NIC pushes the target's posted writes ahead of it.
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
                signal_kind,
                signal_offset,
                op,
                value,
            } => {
                let data = std::mem::take(data);
                self.land(class, target, *kind, *offset, data);
                let amo = op.as_amo(*value);
                self.atomic(class, target, *signal_kind, *signal_offset, amo);
            }
            OpKind::SignalledData { kind, offset, data } => {
                let data = std::mem::take(data);
                self.land(class, target, *kind, *offset, data);
            }
        }
        self.trace.record(&[
            2,
            flight.kind.code().into(),
            flight.src as u64,
            flight.dst as u64,
            self.now_ns,
        ]);
        let sent = self
            .net
            .send(flight.src, &flight.route, true, self.now_ns, back_bytes);
        let jitter_ns = self.return_delay_ns(sent.latency_ns);
        let done_ns = sent.transfer.begin_ns
            + sent.transfer.serialise_ns
            + sent.latency_ns
            + u64::from(sent.nics) * self.topology.timing().nic_ns
            + jitter_ns;
        if let Some(timeline) = &mut self.trace.timeline {
            let bytes = match flight.kind {
                OpKind::Get { len, .. } => len,
                _ => 0,
            };
            let name = flight.kind.name();
            timeline.span(
                Track::Pe(flight.src),
                name,
                flight.issued_ns,
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
                code: flight.kind.code(),
                queue: flight.queue,
                ticket: flight.ticket,
            };
            self.events.push(done_ns, ack);
        }
    }

    /// [`Fault::SignalBeforeData`]: the signal of a put-with-signal is applied on delivery,
    /// and its data is delivered as a second step after a chosen gap.
    fn signal_before_data(&mut self, slot: u32, mut flight: InFlight) {
        let class = flight.route.class();
        let OpKind::PutSignal {
            kind,
            offset,
            data,
            signal_kind,
            signal_offset,
            op,
            value,
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
        self.atomic(
            class,
            flight.dst,
            signal_kind,
            signal_offset,
            op.as_amo(value),
        );
        self.trace
            .record(&[11, flight.src as u64, flight.dst as u64, self.now_ns]);
        flight.kind = OpKind::SignalledData { kind, offset, data };
        let gap_ns = match self.explore {
            None => self.chooser.below(self.params.drain_max_ns),
            Some(rounds) => self.rounds_ns(rounds),
        };
        self.ops[slot as usize] = Some(flight);
        self.events
            .push(self.now_ns + 1 + gap_ns, Event::Deliver { op: slot });
    }

    fn complete(&mut self, slot: u32) {
        let flight = self.ops[slot as usize]
            .take()
            .expect("a completed op is in flight");
        self.free_ops.push(slot);
        let (queue, ticket) = (flight.queue, flight.ticket);
        self.record_completion(flight.kind.code(), queue, ticket);
        match flight.kind {
            OpKind::Get {
                into: Some(dst),
                read,
                ..
            } => {
                self.catch_up(flight.src, self.now_ns);
                self.mem.write(flight.src, dst.kind, dst.offset, &read);
                self.notify_write(flight.src, dst.kind, dst.offset, dst.len);
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
            OpKind::Put { .. } | OpKind::PutSignal { .. } | OpKind::SignalledData { .. } => {
                unreachable!("operations without a response are acknowledged, not completed")
            }
        }
        self.ticket_completed(queue, ticket);
    }

    /// An operation without a result is acknowledged.
    fn acknowledge(&mut self, code: u8, queue: u32, ticket: u64) {
        if code == OpKind::PUT {
            self.queues[queue as usize].puts_outstanding -= 1;
        }
        self.record_completion(code, queue, ticket);
        self.ticket_completed(queue, ticket);
    }

    fn record_completion(&mut self, code: u8, queue: u32, ticket: u64) {
        let src = self.queues[queue as usize].owner;
        self.trace
            .record(&[3, code.into(), src.into(), ticket, self.now_ns]);
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
            let Some(event_ns) = self.events.next_time_ns() else {
                self.drain_all();
                return None;
            };
            if let Some(&(deadline_ns, pe)) = self.deadlines.first()
                && deadline_ns <= event_ns
            {
                self.now_ns = self.now_ns.max(deadline_ns);
                self.miss_deadline(pe);
                continue;
            }
            let (at_ns, event) = self.events.pop()?;
            if let Some(later) = self.events.ahead(PREFETCH_FAR) {
                self.prefetch_far(later);
            }
            if let Some(soon) = self.events.ahead(PREFETCH_NEAR) {
                self.prefetch_near(soon);
            }
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
                Event::Issue { op } => self.issue(op),
                Event::Deliver { op } => self.deliver(op),
                Event::Complete { op } => self.complete(op),
                Event::Ack {
                    code,
                    queue,
                    ticket,
                } => self.acknowledge(code, queue, ticket),
                // A write a PE waits on drains (see `watch`); so do all due before it.
                Event::Drain { pe, .. } => self.catch_up(pe, self.now_ns),
            }
        }
    }

    /// The PEs to resume next: [`World::next_pe`]'s, and every other runnable PE whose resume
    /// is due at the same nanosecond right behind it. Empty when the run is over. The shuttle
    /// executor runs them side by side and lets shuttle order their operations; any order of
    /// operations issued at the same virtual time is one the hardware could produce.
    #[cfg(rshmem_shuttle)]
    pub(crate) fn next_round(&mut self) -> Vec<u32> {
        let Some(first) = self.next_pe() else {
            return Vec::new();
        };
        let mut round = vec![first];
        while self.events.next_time_ns() == Some(self.now_ns)
            && self.deadlines.first().is_none_or(|&(t, _)| t > self.now_ns)
            && let Some(Event::Resume { pe }) = self.events.ahead(0)
            && !round.contains(&pe)
        {
            self.events.pop();
            self.events_processed += 1;
            let state = &mut self.pes[pe as usize];
            if state.status == Status::Runnable {
                state.clock_ns = state.clock_ns.max(self.now_ns);
                round.push(pe);
            }
        }
        round
    }

    /// Asks the CPU to start loading what `event` will touch first. A big run holds hundreds
    /// of megabytes of operations in flight, touched in time order, which is no order in
    /// memory: without this, most events begin with a few cache misses in a row. Events of
    /// the same nanosecond are known some events ahead, enough to overlap those misses.
    fn prefetch_far(&self, event: Event) {
        match event {
            Event::Issue { op } | Event::Deliver { op } | Event::Complete { op } => {
                prefetch(&self.ops[op as usize]);
            }
            Event::Ack { queue, .. } => prefetch(&self.queues[queue as usize]),
            Event::Drain { pe, .. } => self.mem.prefetch_list(pe),
            Event::Resume { pe } => prefetch(&self.pes[pe as usize]),
        }
    }

    /// The second step of [`World::prefetch_far`]: what the lines it fetched point to.
    fn prefetch_near(&self, event: Event) {
        match event {
            Event::Deliver { op } => {
                if let Some(flight) = &self.ops[op as usize] {
                    self.mem.prefetch_landing(flight.dst);
                }
            }
            Event::Drain { pe, write_id } => self.mem.prefetch_write(pe, write_id),
            Event::Ack { queue, ticket, .. } => {
                self.queues[queue as usize].tickets.prefetch(ticket);
            }
            Event::Issue { .. } | Event::Complete { .. } | Event::Resume { .. } => {}
        }
    }

    /// At the end of the run, the writes still pending drain, at their times.
    fn drain_all(&mut self) {
        for pe in 0..self.n_pes {
            while let Some((drain_ns, write_id)) = self.mem.next_due(pe, u64::MAX) {
                self.now_ns = self.now_ns.max(drain_ns);
                self.drain(pe, write_id, drain_ns);
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
            Some(Blocked::Memory) => {
                let watching = &self.pes[pe as usize].watching;
                let holds: Vec<u64> = watching
                    .iter()
                    .map(|spec| {
                        let w = spec.word;
                        self.mem.read_word(pe, w.kind, w.offset, spec.width.bytes())
                    })
                    .collect();
                waiting_for_any(watching, &holds)
            }
            Some(Blocked::Ticket { queue, ticket }) => {
                let peer = self
                    .ops
                    .iter()
                    .flatten()
                    .find(|f| f.queue == queue && f.ticket == ticket);
                let acked = self.events.iter().find_map(|e| match e {
                    Event::Ack {
                        code,
                        queue: q,
                        ticket: t,
                    } if q == queue && t == ticket => Some(code),
                    _ => None,
                });
                match (peer, acked) {
                    (Some(f), _) => format!(
                        "the {} to PE {} (ticket {ticket}) to complete",
                        f.kind.name(),
                        f.dst
                    ),
                    (None, Some(code)) => format!(
                        "the acknowledgement of the {} of ticket {ticket} to come back",
                        OP_NAMES[usize::from(code)]
                    ),
                    (None, None) => format!("ticket {ticket} of queue {queue} to complete"),
                }
            }
            Some(Blocked::Quiet { queue }) => format!(
                "quiet: {} operations of queue {queue} to complete",
                self.queues[queue as usize].tickets.incomplete()
            ),
            Some(Blocked::Exchange) => format!(
                "a bootstrap exchange ({} of {} PEs arrived)",
                self.exchange.arrived, self.n_pes
            ),
            None => "nothing".to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use hw::topology::{Link, LinkKind, Timing};
    use hw::{
        AmoWidth, Cmp, Device, Instant, Launcher, LocalRange, MemKind, Queue, RemoteRange,
        SegmentKey,
    };

    use crate::{Sim, SimDevice};

    const FAR: Instant = Instant(u64::MAX);

    /// Two GPUs on two hosts: GPU, PCIe (100 ns), NIC, InfiniBand (600 ns), switch, and back.
    fn ib_pair() -> hw::Topology {
        let link = |kind, latency_ns| Link {
            kind,
            latency_ns,
            bandwidth_bytes_per_s: 50_000_000_000,
        };
        hw::Topology::ib_pair(link(LinkKind::Pcie, 100), link(LinkKind::Ib, 600)).unwrap()
    }

    /// Two GPUs joined by one NVLink of 500 ns.
    fn nvlink_pair() -> hw::Topology {
        hw::Topology::pair(Link {
            kind: LinkKind::NvLink,
            latency_ns: 500,
            bandwidth_bytes_per_s: 100_000_000_000,
        })
        .unwrap()
    }

    fn setup(dev: &SimDevice) {
        let key = dev.create_segment(MemKind::Device, 4096).unwrap();
        for (peer, k) in dev.exchange(&key.0, FAR).unwrap().into_iter().enumerate() {
            dev.import_segment(hw::Pe(peer as u32), MemKind::Device, &SegmentKey(k))
                .unwrap();
        }
    }

    fn flag_set() -> hw::WaitSpec {
        hw::WaitSpec {
            word: LocalRange {
                kind: MemKind::Device,
                offset: 0,
                len: 8,
            },
            width: AmoWidth::W64,
            signed: false,
            cmp: Cmp::Ge,
            value: 1,
            purpose: "test",
        }
    }

    /// PE 0 puts a flag to PE 1 over InfiniBand; PE 1 polls `polls` times, then waits (or
    /// only polls, if `wait` is false). Returns when PE 0 posted and when PE 1 saw the flag.
    fn flag_over_ib(seed: u64, polls: u64, wait: bool) -> (u64, u64) {
        let sim = Sim::builder(ib_pair()).seed(seed).build().unwrap();
        let (results, report) = sim
            .launch(|dev| {
                setup(&dev);
                let q = dev.create_queue().unwrap();
                if dev.pe().0 == 0 {
                    let posted = dev.now().0;
                    let flag = RemoteRange {
                        pe: hw::Pe(1),
                        kind: MemKind::Device,
                        offset: 0,
                        len: 8,
                    };
                    q.put(flag, &1u64.to_le_bytes()).unwrap();
                    q.quiet(FAR).unwrap();
                    posted
                } else {
                    let mut seen = false;
                    for _ in 0..polls {
                        seen = dev.test(flag_set()).is_some();
                        if seen {
                            break;
                        }
                    }
                    while !seen {
                        if wait {
                            dev.wait_until(flag_set(), FAR).unwrap();
                            break;
                        }
                        seen = dev.test(flag_set()).is_some();
                    }
                    dev.now().0
                }
            })
            .unwrap();
        assert!(
            report.failure.is_none(),
            "seed {seed}: {:?}",
            report.failure
        );
        let times: Vec<u64> = results.into_iter().map(|r| r.unwrap()).collect();
        (times[0], times[1])
    }

    /// Drains are applied when the PE's memory is next looked at, not as events, so these
    /// check that a waiting PE still wakes, and a polling one still sees the write, at the
    /// write's drain time: never before the write can have arrived and drained, and never
    /// after it surely has (the slowest route with a straggler's jitter, the longest drain).
    #[test]
    fn an_infiniband_write_shows_at_its_drain_time_to_waiters_and_pollers() {
        let timing = Timing::default();
        // Two NICs and 1400 ns of links; a straggler adds up to twice the latency.
        let earliest = timing.issue_ns + 1400 + 2 * timing.nic_ns + 1;
        let latest = earliest + 2 * 1400 + 2000 + 2 * timing.poll_ns;
        let mut gaps = Vec::new();
        for seed in 0..40 {
            for wait in [true, false] {
                let (posted, seen) = flag_over_ib(seed, seed % 50, wait);
                let gap = seen - posted;
                assert!(
                    (earliest..=latest).contains(&gap),
                    "seed {seed}, wait {wait}: seen {gap} ns after posting"
                );
                gaps.push(gap);
            }
        }
        gaps.sort_unstable();
        gaps.dedup();
        assert!(gaps.len() > 20, "drain times vary with the seed: {gaps:?}");
    }

    /// A fence and a quiet each cost the PE one `fence_ns`, a put-with-signal its
    /// `release_ns`, and the put-with-signal leaves after its release.
    #[test]
    fn fence_quiet_and_put_signal_pay_the_fence_and_the_release() {
        let mut topology = hw::topology::TopologyBuilder::new("fenced");
        topology.timing(Timing {
            fence_ns: 1000,
            release_ns: 700,
            ..Timing::default()
        });
        let g0 = topology.node("gpu0", hw::topology::NodeKind::Gpu { host: 0 });
        let g1 = topology.node("gpu1", hw::topology::NodeKind::Gpu { host: 0 });
        topology.link(g0, g1, nvlink_pair().link(hw::topology::LinkId(0)));
        let sim = Sim::builder(topology.build().unwrap()).build().unwrap();
        let (results, report) = sim
            .launch(|dev| {
                setup(&dev);
                let q = dev.create_queue().unwrap();
                if dev.pe().0 == 1 {
                    dev.wait_until(flag_set(), FAR).unwrap();
                    return dev.now().0;
                }
                let start = dev.now().0;
                q.fence().unwrap();
                q.quiet(FAR).unwrap();
                let fenced = dev.now().0 - start;
                let word = |offset| RemoteRange {
                    pe: hw::Pe(1),
                    kind: MemKind::Device,
                    offset,
                    len: 8,
                };
                q.put_signal(word(64), &[7; 8], word(0), hw::SignalOp::Set, 1)
                    .unwrap();
                let posted = dev.now().0;
                assert_eq!(posted - start, fenced + 700 + Timing::default().issue_ns);
                q.quiet(FAR).unwrap();
                fenced
            })
            .unwrap();
        assert!(report.failure.is_none(), "{:?}", report.failure);
        assert_eq!(*results[0].as_ref().unwrap(), 2000, "a fence and a quiet");
        // PE 1 woke at the signal: 500 ns of link, at most 125 of jitter (or a straggler's
        // 1000) and a poll after PE 0's two fences, its put_signal's release and issue.
        let woken = *results[1].as_ref().unwrap();
        assert!(woken >= 2700 + 20 + 500 + 100, "{woken}");
    }

    /// A PE may post far ahead of the world, but what it reads is what it would read had it
    /// waited for the world. PE 1 puts a flag to PE 0 shortly before PE 0, having posted
    /// 10 µs of operations, reads it: PE 0 must see it, unless it lands after the read (then
    /// waiting for it ends when it lands, not at once).
    #[test]
    fn posting_ahead_does_not_hide_what_landed_before_the_posters_clock() {
        for seed in 0..40 {
            let sim = Sim::builder(nvlink_pair()).seed(seed).build().unwrap();
            let (results, report) = sim
                .launch(|dev| {
                    setup(&dev);
                    let q = dev.create_queue().unwrap();
                    let peer = 1 - dev.pe().0;
                    let to_peer = |offset| RemoteRange {
                        pe: hw::Pe(peer),
                        kind: MemKind::Device,
                        offset,
                        len: 8,
                    };
                    if dev.pe().0 == 1 {
                        // Polls an unset word for 9 µs, so the flag lands about when PE 0
                        // reads, within its lookahead.
                        let mut idle = flag_set();
                        idle.word.offset = 8;
                        for _ in 0..90 {
                            assert!(dev.test(idle).is_none());
                        }
                        q.put(to_peer(0), &1u64.to_le_bytes()).unwrap();
                        q.quiet(FAR).unwrap();
                        return None;
                    }
                    for i in 0..500 {
                        q.put(to_peer(8 + 8 * (i % 100)), &[0; 8]).unwrap();
                    }
                    let read_ns = dev.now().0;
                    let mut out = [0; 8];
                    dev.read_local(flag_set().word, &mut out);
                    let seen = u64::from_le_bytes(out) == 1;
                    dev.wait_until(flag_set(), FAR).unwrap();
                    let woken_ns = dev.now().0;
                    q.quiet(FAR).unwrap();
                    Some((seen, read_ns, woken_ns))
                })
                .unwrap();
            assert!(report.failure.is_none(), "{:?}", report.failure);
            let (seen, read_ns, woken_ns) = results[0].as_ref().unwrap().unwrap();
            let landed_ns = woken_ns - Timing::default().poll_ns;
            assert!(
                seen || landed_ns >= read_ns,
                "seed {seed}: read at {read_ns} did not see a flag woken for at {woken_ns}"
            );
        }
    }
}
