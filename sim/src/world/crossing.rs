//! A world as one partition of a parallel run, or as the run's network (`crate::parallel`):
//! what leaves a partition, what the network makes of it, and what arrives.
//!
//! A partition owns some hosts' PEs and everything of theirs; an operation through a NIC
//! (path class `Rdma`) leaves it at its issue event, takes its links in the network world,
//! and arrives as a delivery in its target's partition at least one lookahead later; its
//! response or acknowledgement goes back the same way. Operations over NVLink never leave
//! their host, and so never their partition.

use std::sync::Arc;

use hw::{Exchanged, PathClass};

use crate::events::{Event, EventQueue};
use crate::network::Route;
use crate::parallel::Split;
use crate::prefetch::prefetch;
use crate::trace::{OpCode, Record};

use super::issue::{Entry, InFlight, OpKind, SignalTarget};
use super::{Blocked, Settle, Status, WindowState, World};

/// No proxy queue.
const NO_QUEUE: u32 = u32::MAX;

/// How many messages ahead a loop over messages starts loading the operation they carry: a
/// box written by another thread a window ago is in no cache of this one.
pub(crate) const PREFETCH_AHEAD: usize = 4;

/// Boxes a world keeps for reuse at most: a partition that only receives would otherwise
/// keep one for every operation it ever received.
const KEPT_BOXES: usize = 1 << 16;

/// What a world knows of the parallel run it is part of.
#[derive(Debug)]
pub(crate) struct Part {
    /// This partition's index; the network's is the number of partitions.
    pub(crate) index: u32,
    pub(crate) split: Arc<Split>,
    /// Events at or after this time wait for the next window.
    pub(crate) window_end_ns: u64,
    /// What left during this window, in the order it left.
    pub(crate) outbox: Vec<Outgoing>,
    /// Boxes of operations that arrived here, for operations that leave to travel in: a
    /// window moves thousands in a burst each way, and the allocator's small caches hold a
    /// few, so new boxes cost a tenth of a partition's time.
    #[allow(
        clippy::vec_box,
        reason = "the boxes are what is kept: each travels to another world and back"
    )]
    boxes: Vec<Box<Moving>>,
    /// The queue that stands here for each queue of another partition that sent operations
    /// here, by partition and queue ([`NO_QUEUE`] where none does yet): its owner is the
    /// queue's owner, and in the network it keeps the queue's fence rule.
    proxies: Vec<Vec<u32>>,
    /// The other way: (partition, queue) of each proxy, by our queue number; `None` for our
    /// own queues.
    proxied: Vec<Option<(u32, u32)>>,
}

impl Part {
    /// The (partition, queue) that our queue `queue` stands for: itself, unless a proxy.
    fn origin_of(&self, queue: u32) -> (u32, u32) {
        match self.proxied.get(queue as usize) {
            Some(&Some(theirs)) => theirs,
            _ => (self.index, queue),
        }
    }

    pub(crate) fn new(index: u32, split: Arc<Split>) -> Part {
        Part {
            index,
            split,
            window_end_ns: 0,
            outbox: Vec::new(),
            boxes: Vec::new(),
            proxies: Vec::new(),
            proxied: Vec::new(),
        }
    }
}

/// An operation on its way between worlds, with what it keeps outside itself.
#[derive(Debug)]
pub(crate) struct Moving {
    flight: InFlight,
    /// Its source PE, and the partition whose queue `flight.queue` is.
    src: u32,
    src_part: u32,
    /// The signal of a put-with-signal.
    signal: Option<SignalTarget>,
    /// Whether its signal `ADD` is delivered in two events ([`World::splits_signal_add`]).
    splits: bool,
}

/// What a partition hands the network at the end of a window.
#[derive(Debug)]
pub(crate) enum Outgoing {
    /// An operation enters the network at `at_ns`.
    Enter { at_ns: u64, moving: Box<Moving> },
    /// A response or acknowledgement of `bytes` starts back from `dst` to `src` at `at_ns`.
    Return {
        at_ns: u64,
        src: u32,
        dst: u32,
        route: Route,
        bytes: u64,
        back: Back,
    },
    /// `pe` arrives at the bootstrap exchange at `at_ns` with `mine`.
    Arrive { at_ns: u64, pe: u32, mine: Vec<u8> },
}

impl Outgoing {
    /// What is left where a message was taken out.
    pub(crate) const EMPTY: Outgoing = Outgoing::Arrive {
        at_ns: 0,
        pe: 0,
        mine: Vec::new(),
    };

    /// Starts loading the operation this message carries, if any (see
    /// [`crate::prefetch::prefetch`]).
    pub(crate) fn prefetch(&self) {
        match self {
            Outgoing::Enter { moving, .. }
            | Outgoing::Return {
                back: Back::Response(moving),
                ..
            } => prefetch(&**moving),
            _ => {}
        }
    }

    pub(crate) fn at_ns(&self) -> u64 {
        match self {
            Outgoing::Enter { at_ns, .. }
            | Outgoing::Return { at_ns, .. }
            | Outgoing::Arrive { at_ns, .. } => *at_ns,
        }
    }
}

/// What comes back to an operation's source.
#[derive(Debug)]
pub(crate) enum Back {
    /// The acknowledgement of `ticket` of the source's queue `queue`.
    Ack { op: OpCode, queue: u32, ticket: u64 },
    /// The operation itself, with what it read.
    Response(Box<Moving>),
}

/// What the network hands a partition for its next window.
#[derive(Debug)]
pub(crate) enum Incoming {
    /// An operation reaches its target at `at_ns` (and its signal `ADD` writes at
    /// `write_ns`).
    Deliver {
        at_ns: u64,
        write_ns: Option<u64>,
        moving: Box<Moving>,
    },
    /// An acknowledgement reaches its source.
    Ack {
        at_ns: u64,
        op: OpCode,
        queue: u32,
        ticket: u64,
    },
    /// A response reaches its source.
    Response { at_ns: u64, moving: Box<Moving> },
    /// The exchange completed: every PE resumes with `all` at `at_ns`.
    Exchanged { at_ns: u64, all: Exchanged },
}

impl Incoming {
    /// What is left where a message was taken out.
    const EMPTY: Incoming = Incoming::Ack {
        at_ns: 0,
        op: OpCode::Put,
        queue: 0,
        ticket: 0,
    };

    /// Starts loading the operation this message carries, if any (see
    /// [`crate::prefetch::prefetch`]).
    fn prefetch(&self) {
        if let Incoming::Deliver { moving, .. } | Incoming::Response { moving, .. } = self {
            prefetch(&**moving);
        }
    }

    pub(crate) fn at_ns(&self) -> u64 {
        match self {
            Incoming::Deliver { at_ns, .. }
            | Incoming::Ack { at_ns, .. }
            | Incoming::Response { at_ns, .. }
            | Incoming::Exchanged { at_ns, .. } => *at_ns,
        }
    }
}

impl World {
    /// Makes this world a partition of a parallel run, or its network: only the PEs it owns
    /// start here.
    pub(crate) fn join(&mut self, part: Part) {
        self.events = EventQueue::default();
        let startup_ns = self.params.timing.startup_ns;
        for pe in part.split.pes_of_part_or_none(part.index) {
            self.events.push(startup_ns, Event::Resume { pe });
        }
        self.part = Some(Box::new(part));
    }

    /// Where this partition stands at the end of a window.
    pub(crate) fn window_state(&mut self) -> WindowState {
        WindowState {
            next_event_ns: self.events.next_time_ns(),
            next_deadline_ns: self.deadlines.first().map(|(t, _)| t),
            timed_due_ns: self.timed_thread_due().map(|(t, _)| t),
            blocked: self.pes.iter().any(|p| p.status == Status::Blocked),
            abort: self.abort.clone(),
        }
    }

    /// What left this partition since the last call, in time order (what was sent at one
    /// time in the order sent); `spare`, empty, takes its place.
    pub(crate) fn take_outbox(&mut self, spare: Vec<Outgoing>) -> Vec<Outgoing> {
        let mut outbox =
            std::mem::replace(&mut self.part.as_mut().expect("a partition").outbox, spare);
        // Operations posted straight to the network (`post_across`) leave at their PE's
        // clock, ahead of the events around them. Sorted here, in the partition's thread,
        // rather than by the network, whose thread is the one that all partitions wait for.
        if !outbox.is_sorted_by_key(Outgoing::at_ns) {
            outbox.sort_by_key(Outgoing::at_ns);
        }
        outbox
    }

    /// Runs events before `end_ns` from now on.
    pub(crate) fn start_window(&mut self, end_ns: u64) {
        self.part.as_mut().expect("a partition").window_end_ns = end_ns;
    }

    /// Does what a world on one thread does when its events run out, as the network says.
    pub(crate) fn settle(&mut self, settle: Settle) {
        match settle {
            Settle::Nothing => {}
            Settle::TimedThread => {
                if let Some((deadline_ns, pe)) = self.timed_thread_due() {
                    self.now_ns = self.now_ns.max(deadline_ns);
                    self.miss_deadline(pe);
                }
            }
            Settle::Deadlock => {
                self.resolve_deadlock();
            }
        }
    }

    /// Another partition stopped the run with `message`.
    pub(crate) fn stop_from_elsewhere(&mut self, message: String) {
        if self.abort.is_none() {
            self.stop(message);
        }
    }

    /// The run is over: every pending write becomes visible.
    pub(crate) fn finish_run(&mut self) {
        self.drain_all();
    }

    /// Whether `pe` is this world's: always, but in a partition of a parallel run.
    pub(crate) fn owns(&self, pe: u32) -> bool {
        self.part
            .as_ref()
            .is_none_or(|p| p.split.part_of(pe) == p.index)
    }

    /// Whether `flight` leaves this partition: it goes through a NIC in a parallel run.
    pub(super) fn crosses_partitions(&self, flight: &InFlight) -> bool {
        self.part.is_some() && flight.route.class() == PathClass::Rdma
    }

    /// Takes the operation in `slot` out of this world, with what it keeps elsewhere. Boxed:
    /// it is handed on five times before it lands, and the messages that carry it are most of
    /// what partitions send, acknowledgements included, which would otherwise be as large.
    fn move_out(&mut self, slot: u32) -> Box<Moving> {
        let flight = self.ops[slot as usize]
            .take()
            .expect("an op that leaves is in flight");
        self.free_ops.push(slot);
        self.moving(flight)
    }

    /// `flight`, which leaves this world, with what it keeps elsewhere.
    fn moving(&mut self, mut flight: InFlight) -> Box<Moving> {
        let splits = self.splits_signal_add(&flight.kind);
        let signal = match &mut flight.kind {
            OpKind::PutSignal { signal, .. } => Some(self.signal_targets.remove(*signal)),
            _ => None,
        };
        let part = self.part.as_ref().expect("a partition");
        let (src_part, queue) = part.origin_of(flight.queue);
        let src = self.source_of(&flight);
        flight.queue = queue;
        let moving = Moving {
            flight,
            src,
            src_part,
            signal,
            splits,
        };
        match self.part.as_mut().expect("a partition").boxes.pop() {
            Some(mut reused) => {
                // What the box holds owns nothing (`move_in` left it so), and an assignment
                // would read it to drop it: a cache miss, as the box comes from another
                // thread. Forgetting it lets the compiler only write.
                std::mem::forget(std::mem::replace(&mut *reused, moving));
                reused
            }
            None => Box::new(moving),
        }
    }

    /// Puts `moving` in a slot of this world; the queue it names becomes ours (a proxy, if
    /// another partition's).
    fn move_in(&mut self, mut boxed: Box<Moving>) -> u32 {
        // Only the kind owns memory (the bytes); the rest is copied out, and the box kept.
        let kind = std::mem::replace(&mut boxed.flight.kind, OpKind::SignalWrite);
        let mut moving = Moving {
            flight: InFlight {
                kind,
                ..boxed.flight
            },
            ..*boxed
        };
        let boxes = &mut self.part.as_mut().expect("a partition").boxes;
        if boxes.len() < KEPT_BOXES {
            boxes.push(boxed);
        }
        let own = self.part.as_ref().map(|p| p.index) == Some(moving.src_part);
        if !own {
            moving.flight.queue =
                self.proxy_queue(moving.src_part, moving.flight.queue, moving.src);
        }
        if !moving.flight.route.is_portable() {
            moving.flight.route = self
                .net
                .route(&self.topology, moving.src, moving.flight.dst);
        }
        if let (OpKind::PutSignal { signal, .. }, Some(target)) =
            (&mut moving.flight.kind, moving.signal)
        {
            *signal = self.signal_targets.insert(target);
        }
        match self.free_ops.pop() {
            Some(slot) => {
                self.ops[slot as usize] = Some(moving.flight);
                slot
            }
            None => {
                self.ops.push(Some(moving.flight));
                (self.ops.len() - 1) as u32
            }
        }
    }

    /// The queue that stands here for queue `queue` of partition `part`, owned by `owner`.
    fn proxy_queue(&mut self, part: u32, queue: u32, owner: u32) -> u32 {
        let here = self.part.as_ref().expect("a partition");
        let known = here
            .proxies
            .get(part as usize)
            .and_then(|q| q.get(queue as usize));
        if let Some(&q) = known
            && q != NO_QUEUE
        {
            return q;
        }
        let q = self.create_queue(owner);
        let here = self.part.as_mut().expect("a partition");
        if here.proxies.len() <= part as usize {
            here.proxies.resize(part as usize + 1, Vec::new());
        }
        let of_part = &mut here.proxies[part as usize];
        if of_part.len() <= queue as usize {
            of_part.resize(queue as usize + 1, NO_QUEUE);
        }
        of_part[queue as usize] = q;
        if here.proxied.len() <= q as usize {
            here.proxied.resize(q as usize + 1, None);
        }
        here.proxied[q as usize] = Some((part, queue));
        q
    }

    fn send_out(&mut self, outgoing: Outgoing) {
        self.part
            .as_mut()
            .expect("a partition")
            .outbox
            .push(outgoing);
    }

    /// Posts `flight`, issued at `issued_ns`, straight to the network if it leaves this
    /// partition before the window ends: the network takes what partitions send in time
    /// order, so it enters the network where its issue event would have, and this
    /// partition saves the event. Gives it back otherwise.
    pub(super) fn post_across(&mut self, flight: InFlight, issued_ns: u64) -> Option<InFlight> {
        let leaves = self
            .part
            .as_ref()
            .is_some_and(|p| issued_ns < p.window_end_ns);
        if !leaves || !self.crosses_partitions(&flight) {
            return Some(flight);
        }
        let moving = self.moving(flight);
        self.send_out(Outgoing::Enter {
            at_ns: issued_ns,
            moving,
        });
        None
    }

    /// The issue event of an operation that leaves this partition: the network takes it.
    pub(super) fn send_across(&mut self, slot: u32) {
        let moving = self.move_out(slot);
        let at_ns = self.now_ns;
        self.send_out(Outgoing::Enter { at_ns, moving });
    }

    /// The delivery event of an operation that came from the network: its response or
    /// acknowledgement goes back through it.
    pub(super) fn return_across(&mut self, slot: u32, flight: InFlight, bytes: u64) {
        let (src, dst, route) = (self.source_of(&flight), flight.dst, flight.route);
        let at_ns = self.now_ns;
        let back = if flight.has_response() {
            self.ops[slot as usize] = Some(flight);
            Back::Response(self.move_out(slot))
        } else {
            self.free_ops.push(slot);
            let part = self.part.as_ref().expect("a partition");
            let (_, queue) = part.origin_of(flight.queue);
            Back::Ack {
                op: flight.kind.code(),
                queue,
                ticket: flight.ticket,
            }
        };
        self.send_out(Outgoing::Return {
            at_ns,
            src,
            dst,
            route,
            bytes,
            back,
        });
    }

    /// A PE of a partition arrives at the exchange: the network gathers every PE's.
    pub(super) fn arrive_across(&mut self, pe: u32, mine: Vec<u8>) {
        self.block(pe, Blocked::Exchange, u64::MAX);
        let at_ns = self.clock_ns(pe).max(self.now_ns);
        self.send_out(Outgoing::Arrive { at_ns, pe, mine });
    }

    /// Takes what arrived from the network into this partition's queue of events, emptying
    /// `incoming`.
    pub(crate) fn receive(&mut self, incoming: &mut Vec<Incoming>) {
        for at in 0..incoming.len() {
            if let Some(later) = incoming.get(at + PREFETCH_AHEAD) {
                later.prefetch();
            }
            let message = std::mem::replace(&mut incoming[at], Incoming::EMPTY);
            match message {
                Incoming::Deliver {
                    at_ns,
                    write_ns,
                    moving,
                } => {
                    let slot = self.move_in(moving);
                    self.events.push(at_ns, Event::Deliver { op: slot });
                    if let Some(at_ns) = write_ns {
                        self.events.push(at_ns, Event::Deliver { op: slot });
                    }
                }
                Incoming::Ack {
                    at_ns,
                    op,
                    queue,
                    ticket,
                } => self.events.push(at_ns, Event::Ack { op, queue, ticket }),
                Incoming::Response { at_ns, moving } => {
                    let slot = self.move_in(moving);
                    self.events.push(at_ns, Event::Complete { op: slot });
                }
                Incoming::Exchanged { at_ns, all } => {
                    let part = self.part.as_ref().expect("a partition");
                    for p in part.split.pes_of_part_or_none(part.index) {
                        if let Some(Blocked::Exchange) = self.pes[p as usize].blocked {
                            self.pes[p as usize].exchange_result = Some(Exchanged::clone(&all));
                            self.wake(p, at_ns, Ok(()));
                        }
                    }
                }
            }
        }
        incoming.clear();
    }

    // ---- the network's side -------------------------------------------------------------

    /// In the network world: takes what partition `from` sent at its time, and says where
    /// it goes next. `arrivals` gathers the exchange.
    pub(crate) fn carry(
        &mut self,
        outgoing: Outgoing,
        inboxes: &mut [Vec<Incoming>],
        arrivals: &mut Vec<(u64, u32, Vec<u8>)>,
    ) {
        self.now_ns = self.now_ns.max(outgoing.at_ns());
        self.events_processed += 1;
        // Not a clone of the shared `Arc`: its count is one cache line for every thread.
        let part_of = |world: &World, pe: u32| {
            let split = &world.part.as_ref().expect("the network").split;
            split.part_of(pe) as usize
        };
        match outgoing {
            Outgoing::Enter { moving, .. } => {
                let flight = &moving.flight;
                let (src, dst) = (moving.src, flight.dst);
                let route = match flight.route {
                    route if route.is_portable() => route,
                    _ => self.net.route(&self.topology, src, dst),
                };
                let entry = Entry {
                    queue: self.proxy_queue(moving.src_part, flight.queue, src),
                    src,
                    dst,
                    route,
                    copied_ns: flight.copied_ns,
                    epoch: flight.epoch,
                    op: flight.kind.code(),
                    outbound: flight.outbound(),
                    splits: moving.splits,
                };
                let (at_ns, write_ns) = self.enter_network(&entry);
                inboxes[part_of(self, dst)].push(Incoming::Deliver {
                    at_ns,
                    write_ns,
                    moving,
                });
            }
            Outgoing::Return {
                src,
                dst,
                route,
                bytes,
                back,
                ..
            } => {
                let route = match route {
                    route if route.is_portable() => route,
                    _ => self.net.route(&self.topology, src, dst),
                };
                let at_ns = self.return_trip(src, &route, bytes);
                let message = match back {
                    Back::Ack { op, queue, ticket } => Incoming::Ack {
                        at_ns,
                        op,
                        queue,
                        ticket,
                    },
                    Back::Response(moving) => Incoming::Response { at_ns, moving },
                };
                inboxes[part_of(self, src)].push(message);
            }
            Outgoing::Arrive { at_ns, pe, mine } => {
                arrivals.push((at_ns, pe, mine));
                if arrivals.len() < self.n_pes as usize {
                    return;
                }
                arrivals.sort_unstable_by_key(|&(_, pe, _)| pe);
                let last_ns = arrivals.iter().map(|a| a.0).max().unwrap_or(0);
                let all: Exchanged = arrivals.drain(..).map(|(_, _, mine)| mine).collect();
                let at_ns = last_ns + self.params.exchange_ns;
                self.trace.record(Record::Exchange { at_ns });
                for inbox in inboxes.iter_mut() {
                    inbox.push(Incoming::Exchanged {
                        at_ns,
                        all: Exchanged::clone(&all),
                    });
                }
            }
        }
    }
}
