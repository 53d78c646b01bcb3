//! The simulated world: all state, and the event loop that drives it.
//!
//! PEs are coroutines that the executor (`exec.rs`) resumes when the world says so; while a
//! PE runs it posts operations through its device and queues, which call into the world.
//! A PE's clock runs ahead of the world's while it posts: an operation enters the network at
//! its issue time as an event, in global time order with everything else, and a PE that ran
//! too far ahead, or is about to observe anything, yields until the world caught up.
//!
//! The world's rules live in its submodules, one stage or rule each: `pes.rs` (PE states,
//! waits, deadlines and deadlock reports), `visibility.rs` (when a write becomes visible:
//! the InfiniBand pending list, drains, consistency steps), `issue.rs` (posting an operation
//! and its entry into the network), `deliver.rs` (delivery, responses, acknowledgements),
//! `chance.rs` (every chance draw), `exchange.rs` (the bootstrap exchange), `injected.rs`
//! (injected faults: slow PEs, crashes, operations lost at a crashed PE).

mod chance;
mod crossing;
mod deadlines;
mod deliver;
mod exchange;
mod injected;
mod issue;
mod pes;
#[cfg(test)]
mod tests;
mod visibility;

use std::rc::Rc;

use hw::{Caps, Semantics, Topology};

use crate::choice::Chooser;
use crate::costs::Timing;
use crate::events::{Event, EventQueue};
use crate::explore::{Explore, Rounds};
use crate::fault::{Fault, Faults};
use crate::memory::{Layout, Memory, Range};
use crate::movers::Movers;
use crate::network::Network;
use crate::prefetch::prefetch;
use crate::report::OpCounts;
use crate::slab::Slab;
use crate::trace::Trace;

pub(crate) use crossing::{Incoming, Outgoing, PREFETCH_AHEAD, Part};
use deadlines::Deadlines;
use exchange::Exchange;
use injected::Injected;
use issue::{InFlight, QueueState, SignalTarget};
pub(crate) use pes::{Blocked, ThreadWait};
use pes::{PeState, Status};

/// Knobs of the world that are not part of the topology.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WorldParams {
    /// What operations cost beyond the links (the machine's [`Timing`]).
    pub(crate) timing: Timing,
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
    /// Whether PEs may load their own and load/store peers' memory through its address
    /// instead of get operations (`SimBuilder::mapped_loads`).
    pub(crate) mapped_loads: bool,
    /// Gets and atomics through a NIC flush their target (`SimBuilder::pcie_read_flush`).
    pub(crate) pcie_read_flush: bool,
    /// NVLink writes queue behind pending writes (`SimBuilder::ib_coherent`).
    pub(crate) ib_coherent: bool,
    /// Only puts and atomics that fetch nothing are posted; the rest completes at issue
    /// (`SimBuilder::network_transport`).
    pub(crate) network_transport: bool,
    /// Puts of at least this many bytes carry only their size
    /// (`SimBuilder::drop_payloads_from`).
    pub(crate) drop_payloads_from: Option<u64>,
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
    /// The signal `ADD`s read and not yet written (`deliver.rs`).
    signal_writes: Vec<deliver::SignalWrite>,
    net: Network,
    movers: Movers,
    pes: Vec<PeState>,
    /// Bit `pe` is set while `pe` is blocked: a compact copy of the status that the hot
    /// paths (a write landing, a ticket completing) check before touching the PE's state.
    blocked_bits: Vec<u64>,
    queues: Vec<QueueState>,
    ops: Vec<Option<InFlight>>,
    free_ops: Vec<u32>,
    /// The signals of the puts-with-signal in flight (`issue.rs`).
    signal_targets: Slab<SignalTarget>,
    exchange: Exchange,
    /// Deadlines of blocked PEs, earliest first. Kept apart from the event queue because
    /// almost every wait ends before its deadline, and a void deadline left in the queue
    /// would cost every later pop.
    deadlines: Deadlines,
    pub(crate) running: Option<u32>,
    pub(crate) counts: OpCounts,
    pub(crate) trace: Trace,
    pub(crate) failure: Option<String>,
    pub(crate) abort: Option<String>,
    /// Injected faults (`SimBuilder::inject`); empty in most runs.
    pub(crate) injected: Injected,
    /// The parallel run this world is a partition of, or the network of (`crossing.rs`);
    /// `None` in a run on one thread.
    part: Option<Box<Part>>,
}

/// Where a partition of a parallel run stands at the end of a window (`crate::parallel`).
#[derive(Clone, Debug)]
pub(crate) struct WindowState {
    pub(crate) next_event_ns: Option<u64>,
    pub(crate) next_deadline_ns: Option<u64>,
    /// The earliest deadline of a sleeping thread.
    pub(crate) timed_due_ns: Option<u64>,
    /// Whether a PE is blocked.
    pub(crate) blocked: bool,
    pub(crate) abort: Option<String>,
}

/// What a partition does when nothing happens anywhere in a parallel run: what a world on
/// one thread does when its events run out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Settle {
    Nothing,
    /// Its earliest sleeping thread wakes.
    TimedThread,
    /// Its blocked PEs are deadlocked.
    Deadlock,
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

impl World {
    pub(crate) fn new(
        topology: Rc<Topology>,
        n_pes: u32,
        caps: Caps,
        params: WorldParams,
        layout: Layout,
        explore: Option<&Explore>,
    ) -> World {
        // Every PE's program starts once the GPUs are set up.
        let startup_ns = params.timing.startup_ns;
        let pes = (0..n_pes).map(|_| PeState::new(startup_ns)).collect();
        let rounds = explore.map(|e| crate::explore::rounds(e, &topology, &params.timing, n_pes));
        let mut events = EventQueue::default();
        for pe in 0..n_pes {
            events.push(startup_ns, Event::Resume { pe });
        }
        World {
            net: {
                let mut net = Network::new(&topology, params.timing.transfer_ns, n_pes);
                if params.timeline {
                    net.record_windows();
                }
                net
            },
            movers: Movers::new(params.timing.copy),
            mem: Memory::new(n_pes, layout),
            shown: Vec::new(),
            signal_writes: Vec::new(),
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
            signal_targets: Slab::default(),
            exchange: Exchange::new(n_pes),
            deadlines: Deadlines::new(n_pes),
            running: None,
            counts: OpCounts::default(),
            trace: Trace::new(params.timeline),
            failure: None,
            abort: None,
            injected: Injected::default(),
            part: None,
            params,
        }
    }

    pub(crate) fn clock_ns(&self, pe: u32) -> u64 {
        self.pes[pe as usize].clock_ns
    }

    /// `pe` spends `ns` of its own time (as long as an injected slowdown makes it).
    pub(crate) fn advance_clock(&mut self, pe: u32, ns: u64) {
        self.pes[pe as usize].clock_ns += self.injected.scale_pe_ns(pe, ns);
    }

    /// When the next thing happens: an event, a deadline or an injected crash.
    fn next_time_ns(&mut self) -> Option<u64> {
        let deadline = self.deadlines.first().map(|(t, _)| t);
        let next = match (self.events.next_time_ns(), deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let next = match self.injected.next_crash_ns() {
            None => next,
            Some(crash_ns) => Some(next.map_or(crash_ns, |t| t.min(crash_ns))),
        };
        // In a parallel run, what arrives next window may come before anything queued here.
        match &self.part {
            None => next,
            Some(part) => Some(next.map_or(part.window_end_ns, |t| t.min(part.window_end_ns))),
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

    pub(crate) fn sim_time_ns(&self) -> u64 {
        self.pes
            .iter()
            .map(|p| p.clock_ns)
            .max()
            .unwrap_or(0)
            .max(self.now_ns)
    }

    /// Processes events until a PE is to be resumed; `None` when the run is over.
    pub(crate) fn next_pe(&mut self) -> Option<u32> {
        loop {
            if let Some(part) = &self.part {
                // A partition of a parallel run stops at its window's end; when nothing
                // happens anywhere, the network says what to do (`settle`).
                let end_ns = part.window_end_ns;
                let event_ns = self.events.next_time_ns().filter(|&t| t < end_ns);
                if let Some((deadline_ns, pe)) = self.deadlines.first()
                    && deadline_ns < end_ns
                    && event_ns.is_none_or(|t| deadline_ns <= t)
                {
                    self.now_ns = self.now_ns.max(deadline_ns);
                    self.miss_deadline(pe);
                    continue;
                }
                event_ns?;
            } else if self.events.is_empty() {
                // A thread that sleeps wakes before anything is called stuck.
                if let Some((deadline_ns, pe)) = self.timed_thread_due() {
                    self.now_ns = self.now_ns.max(deadline_ns);
                    self.miss_deadline(pe);
                    continue;
                }
                if self.resolve_deadlock() {
                    continue;
                }
            }
            let Some(event_ns) = self.events.next_time_ns() else {
                self.drain_all();
                return None;
            };
            if self.injected.next_crash_ns().is_some() && self.crash_due(event_ns) {
                continue;
            }
            if let Some((deadline_ns, pe)) = self.deadlines.first()
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
            if self.params.drop_payloads_from.is_some()
                && let Some(read) = self.mem.take_unkept_read()
            {
                self.stop_at_unkept_read(read);
            }
            match event {
                Event::Resume { pe } => {
                    let state = &mut self.pes[pe as usize];
                    if state.status != Status::Runnable {
                        continue;
                    }
                    state.clock_ns = state.clock_ns.max(self.now_ns);
                    if self.test_at_resume(pe) {
                        continue;
                    }
                    return Some(pe);
                }
                Event::Issue { op } => self.issue(op),
                Event::Deliver { op } => self.deliver(op),
                Event::Complete { op } => self.complete(op),
                Event::Ack { op, queue, ticket } => self.acknowledge(op, queue, ticket),
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
            && self.deadlines.first().is_none_or(|(t, _)| t > self.now_ns)
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
}
