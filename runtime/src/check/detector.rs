//! The state every PE of a checked run shares, and the rules that turn the operations the
//! PEs issue into happens-before and races.
//!
//! Accesses are checked in the order the PEs issue them. On the simulator PEs run one at a
//! time in virtual-time order, so that order is a linearisation of the run; a pair of
//! unordered accesses is found whichever of the two comes first.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Weak};

use hw::{LocalRange, PathClass, Pe, RemoteRange, Semantics, Ticket, Topology};

use super::clock::{Channel, Component, VectorClock};
use super::pe::{Fetched, PeClock};
use super::report::{AccessKind, Race, RaceAccess, RaceCause};
use super::shadow::{Access, Place, Shadow};
use super::threads::Kernels;
use crate::TRACING_TARGET;

/// One access of a queue operation: what it does to which range.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Part {
    pub(crate) kind: AccessKind,
    pub(crate) place: Place,
    pub(crate) offset: u64,
    pub(crate) len_bytes: u64,
}

impl Part {
    /// `kind` on the remote range `range`.
    pub(crate) fn remote(kind: AccessKind, range: RemoteRange) -> Part {
        Part {
            kind,
            place: (range.pe.0, range.kind),
            offset: range.offset,
            len_bytes: range.len,
        }
    }

    /// `kind` on `pe`'s own range `range`.
    pub(crate) fn local(kind: AccessKind, pe: u32, range: LocalRange) -> Part {
        Part {
            kind,
            place: (pe, range.kind),
            offset: range.offset,
            len_bytes: range.len,
        }
    }
}

/// An operation issued on a queue.
#[derive(Debug)]
pub(crate) struct QueueOp<'a> {
    pub(crate) queue: usize,
    pub(crate) ticket: Ticket,
    /// The PE the queue operation addresses: its clock channel.
    pub(crate) target: u32,
    /// Ordered by fence (R1).
    pub(crate) fenceable: bool,
    pub(crate) parts: &'a [Part],
    /// The range whose writes the operation observes once it completes.
    pub(crate) fetches: Option<Part>,
}

/// The clocks the PEs published at one exchange, joined.
#[derive(Debug, Default)]
struct Rendezvous {
    clock: VectorClock,
    left: u32,
}

/// The shared state of a checked run.
#[derive(Debug)]
pub(crate) struct Detector {
    n_pes: u32,
    semantics: Semantics,
    pes: Vec<PeClock>,
    shadow: Shadow,
    exchanges: BTreeMap<u64, Rendezvous>,
    races: Vec<Race>,
    sites: HashSet<(RaceAccess, RaceAccess)>,
    /// `via_nic[issuer][target]`: whether the route between the two crosses InfiniBand.
    via_nic: Vec<Vec<bool>>,
    /// Per PE, the writes that crossed InfiniBand into its memory and that no consistency
    /// step of it has made visible yet (rule R8).
    invisible: Vec<Vec<Weak<Access>>>,
    /// The kernel launches running on each PE, for races between their threads.
    pub(crate) kernels: Kernels,
}

/// `via_nic[issuer][target]` for the PEs of `topology`: the pairs whose route is `Rdma`. A PE
/// beyond the topology's GPUs has none.
fn routes_via_nic(n_pes: u32, topology: &Topology) -> Vec<Vec<bool>> {
    let mut via_nic = vec![vec![false; n_pes as usize]; n_pes as usize];
    for issuer in 0..n_pes.min(topology.n_gpus()) {
        topology
            .routes_from(Pe(issuer))
            .for_each_path(topology, |target, path| {
                if let Some(row) = via_nic[issuer as usize].get_mut(target.idx()) {
                    *row = path.class == PathClass::Rdma;
                }
            });
    }
    via_nic
}

impl Detector {
    /// The detector of a run of `n_pes` PEs on `topology`.
    pub(crate) fn new(n_pes: u32, topology: &Topology) -> Detector {
        Detector {
            n_pes,
            semantics: Semantics::default(),
            pes: (0..n_pes).map(|pe| PeClock::new(pe, n_pes)).collect(),
            shadow: Shadow::default(),
            exchanges: BTreeMap::new(),
            races: Vec::new(),
            sites: HashSet::new(),
            via_nic: routes_via_nic(n_pes, topology),
            invisible: (0..n_pes).map(|_| Vec::new()).collect(),
            kernels: Kernels::new(n_pes),
        }
    }

    /// The rules the run follows, as its devices report them.
    pub(crate) fn set_semantics(&mut self, semantics: Semantics) {
        self.semantics = semantics;
    }

    /// The races found so far, each once, in the order they were found: those between PEs,
    /// then those between the threads of kernels.
    pub(crate) fn take_races(&mut self) -> Vec<Race> {
        let mut races = std::mem::take(&mut self.races);
        races.extend(self.kernels.take_races());
        races
    }

    pub(crate) fn add_queue(&mut self, pe: u32) -> usize {
        self.pes[pe as usize].add_queue()
    }

    /// A plain load or store of `pe`'s own memory.
    pub(crate) fn local(&mut self, pe: u32, kind: AccessKind, range: LocalRange) {
        let clock = &mut self.pes[pe as usize];
        let released = kind.writes().then(|| clock.released(None));
        let epoch = clock.next_epoch();
        self.record(
            pe,
            epoch,
            Channel::Local,
            Part::local(kind, pe, range),
            released,
        );
    }

    /// An operation `pe` issued on a queue.
    pub(crate) fn issue(&mut self, pe: u32, op: QueueOp<'_>) {
        let clock = &mut self.pes[pe as usize];
        let released = clock.released(Some((op.queue, op.target)));
        let epoch = clock.next_epoch();
        let fetched = op.fetches.map(|part| Fetched {
            place: part.place,
            offset: part.offset,
            len_bytes: part.len_bytes,
        });
        clock.issued(op.queue, op.ticket, epoch, op.target, op.fenceable, fetched);
        for &part in op.parts {
            let released = part.kind.writes().then(|| released.clone());
            self.record(pe, epoch, Channel::Remote(op.target), part, released);
        }
    }

    /// `ticket` of `pe`'s `queue` completed (its value was waited for). A fetch orders what
    /// it observed at once under OpenSHMEM 1.5, and at the next fence or quiet under NVSHMEM,
    /// whose blocking fetches are unordered unless fenced (R7).
    pub(crate) fn complete(&mut self, pe: u32, queue: usize, ticket: Ticket) {
        if let Some(fetched) = self.pes[pe as usize].completed(queue, ticket) {
            let deferred = self.semantics == Semantics::Nvshmem;
            self.acquire(pe, fetched, deferred);
        }
    }

    /// A fence on `pe`'s `queue` (R1); it also settles completed fetches (R7).
    pub(crate) fn fence(&mut self, pe: u32, queue: usize) {
        let clock = &mut self.pes[pe as usize];
        clock.fenced(queue);
        clock.settle();
    }

    /// A quiet on `pe`'s `queue` returned: everything it carried is complete (R2), fetched
    /// values included. With `consistency` it is also the PE's consistency step (R8): a quiet
    /// is, the wait of a serialising call is not.
    pub(crate) fn quiet(&mut self, pe: u32, queue: usize, consistency: bool) {
        for fetched in self.pes[pe as usize].quieted(queue) {
            self.acquire(pe, fetched, false);
        }
        self.pes[pe as usize].settle();
        if consistency {
            self.consistency_step(pe);
        }
    }

    /// A wait or test of `pe` on its own word `word` was satisfied: the update that
    /// satisfied it is complete (R3, and R5 for the data of a put-with-signal), and the PE
    /// ran its consistency step (R8).
    pub(crate) fn poll_satisfied(&mut self, pe: u32, word: LocalRange) {
        let fetched = Fetched {
            place: (pe, word.kind),
            offset: word.offset,
            len_bytes: word.len,
        };
        self.acquire(pe, fetched, false);
        self.consistency_step(pe);
        self.kernels.poll_satisfied(pe, word);
    }

    /// `pe` ran a consistency step: the writes that crossed InfiniBand into its memory and
    /// that it knows to be complete become visible to everyone ordered after the step (R8).
    /// Those it does not know of stay invisible: nothing says they had landed.
    fn consistency_step(&mut self, pe: u32) {
        let clock = &mut self.pes[pe as usize];
        let step = clock.consistency_step();
        self.invisible[pe as usize].retain(|write| {
            let Some(write) = write.upgrade() else {
                return false;
            };
            let known = clock.known().covers(write.component(), write.epoch);
            if known {
                write.make_visible(step);
            }
            !known
        });
    }

    /// `pe` enters an exchange: it publishes what it has completed and knows.
    pub(crate) fn enter_exchange(&mut self, pe: u32) -> u64 {
        let clock = &mut self.pes[pe as usize];
        let round = clock.enter_exchange();
        let released = clock.released(None);
        self.exchanges
            .entry(round)
            .or_default()
            .clock
            .join(&released);
        round
    }

    /// `pe` left exchange `round`: every PE entered it, so it learns what all published.
    pub(crate) fn leave_exchange(&mut self, pe: u32, round: u64) {
        let Some(rendezvous) = self.exchanges.get_mut(&round) else {
            unreachable!("PE {pe} left exchange {round}, which no PE entered");
        };
        self.pes[pe as usize].acquire(&rendezvous.clock, false);
        rendezvous.left += 1;
        if rendezvous.left == self.n_pes {
            self.exchanges.remove(&round);
        }
    }

    /// `pe` observed the writes to `fetched`: it learns what each released, and that the
    /// write itself is ordered before it.
    ///
    /// Every write recorded there counts, not only the one whose value was read: an
    /// over-approximation that can hide a race depending on which of several writes a read
    /// saw, but never reports a false one.
    fn acquire(&mut self, pe: u32, fetched: Fetched, deferred: bool) {
        let mut learned = VectorClock::default();
        self.shadow.visit(
            fetched.place,
            fetched.offset,
            fetched.len_bytes,
            |history| {
                for write in history.writes().iter().filter(|w| w.site.pe != pe) {
                    if let Some(released) = &write.released {
                        learned.join(released);
                    }
                    learned.add_operation(write.component(), write.epoch);
                }
            },
        );
        self.pes[pe as usize].acquire(&learned, deferred);
    }

    /// Checks one access against the history of the bytes it touches, then records it.
    fn record(
        &mut self,
        pe: u32,
        epoch: u64,
        channel: Channel,
        part: Part,
        released: Option<VectorClock>,
    ) {
        let target = part.place.0;
        let crosses_nic = self
            .via_nic
            .get(pe as usize)
            .and_then(|row| row.get(target as usize))
            .copied()
            .unwrap_or(false);
        // Why these kinds: a put's data lands pending behind the target's NIC; an atomic
        // through a NIC is performed at once (docs/ordering.md, "Visibility").
        let lands_pending = matches!(
            part.kind,
            AccessKind::Put | AccessKind::PutSignalData | AccessKind::SignalUpdate
        );
        let access = Arc::new(Access {
            site: RaceAccess {
                pe,
                kind: part.kind,
                target,
                memory: part.place.1,
                offset: part.offset,
                len_bytes: part.len_bytes,
                thread: None,
            },
            epoch,
            channel,
            released,
            via_nic: self.semantics == Semantics::Nvshmem && crosses_nic && lands_pending,
            visible_at: AtomicU64::new(0),
        });
        let known = self.pes[pe as usize].known();
        let target_steps = Component {
            issuer: target,
            channel: Channel::Consistency,
        };
        let mut found = Vec::new();
        self.shadow
            .update(part.place, part.offset, part.len_bytes, |start, history| {
                for earlier in history.conflicts(&access) {
                    let cause = if !known.covers(earlier.component(), earlier.epoch) {
                        RaceCause::Unordered
                    } else if earlier.via_nic
                        && !crosses_nic
                        && !earlier
                            .visible_at()
                            .is_some_and(|step| known.covers(target_steps, step))
                    {
                        // A read through the target's NIC pushes the pending writes ahead of
                        // it; a load, or a get or put over NVLink, does not (R8).
                        RaceCause::InfinibandVisibility { target }
                    } else {
                        continue;
                    };
                    found.push(Race {
                        first: earlier.site,
                        second: access.site,
                        conflict_offset: start,
                        first_epoch: earlier.epoch,
                        second_epoch: access.epoch,
                        cause,
                    });
                }
                history.record(&access);
            });
        if access.via_nic {
            self.invisible[target as usize].push(Arc::downgrade(&access));
        }
        for race in found {
            if self.sites.insert(race.site()) {
                tracing::debug!(target: TRACING_TARGET, %race, "race");
                self.races.push(race);
            }
        }
    }
}

#[cfg(test)]
mod tests;
