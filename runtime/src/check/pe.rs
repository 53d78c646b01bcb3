//! One PE's side of happens-before: its epoch counter, what it knows, and which of its queue
//! operations are still in flight, from which the clock it releases with a write follows.

use hw::Ticket;

use super::clock::{Channel, Component, VectorClock};
use super::shadow::Place;

/// A byte range a fetching operation read, to acquire from once it completes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fetched {
    pub(crate) place: Place,
    pub(crate) offset: u64,
    pub(crate) len_bytes: u64,
}

/// An operation issued on a queue and not yet known to be complete.
#[derive(Debug)]
struct InFlight {
    ticket: Ticket,
    epoch: u64,
    /// The PE whose channel the operation is on (the target of the queue operation).
    target: u32,
    /// Whether a fence orders it before later writes to the same target (rule R1: puts,
    /// atomic updates and puts-with-signal; not gets or fetched values).
    fenceable: bool,
    fetched: Option<Fetched>,
}

/// One queue's operations in flight and its last fence.
#[derive(Debug, Default)]
struct QueueLog {
    in_flight: Vec<InFlight>,
    /// The PE's epoch at this queue's last fence: fenceable operations up to it are ordered
    /// before every later write to the same target on this queue.
    fence_epoch: u64,
}

/// One PE's clock state.
#[derive(Debug)]
pub(crate) struct PeClock {
    pe: u32,
    n_pes: u32,
    /// The epoch of the PE's last access.
    epoch: u64,
    /// What is ordered before the PE's current point.
    known: VectorClock,
    /// What completed fetches will order once the PE fences or quiets (NVSHMEM rule R7).
    pending: VectorClock,
    queues: Vec<QueueLog>,
    /// How many exchanges the PE has entered.
    exchanges: u64,
    /// How many consistency steps the PE has run (rule R8).
    steps: u64,
}

impl PeClock {
    pub(crate) fn new(pe: u32, n_pes: u32) -> PeClock {
        PeClock {
            pe,
            n_pes,
            epoch: 0,
            known: VectorClock::default(),
            pending: VectorClock::default(),
            queues: Vec::new(),
            exchanges: 0,
            steps: 0,
        }
    }

    /// A consistency step (a satisfied wait or test, a quiet): the writes that crossed
    /// InfiniBand into the PE's memory and that it knows of are visible from here on (R8).
    /// Returns the step's number.
    pub(crate) fn consistency_step(&mut self) -> u64 {
        self.steps += 1;
        self.known
            .raise(self.component(Channel::Consistency), self.steps);
        self.steps
    }

    /// The epoch of a new access.
    pub(crate) fn next_epoch(&mut self) -> u64 {
        self.epoch += 1;
        self.epoch
    }

    pub(crate) fn known(&self) -> &VectorClock {
        &self.known
    }

    /// Registers a new queue and returns its index.
    pub(crate) fn add_queue(&mut self) -> usize {
        self.queues.push(QueueLog::default());
        self.queues.len() - 1
    }

    /// The number of the exchange the PE enters now.
    pub(crate) fn enter_exchange(&mut self) -> u64 {
        self.exchanges += 1;
        self.exchanges
    }

    /// Records an operation issued on `queue` at `epoch`.
    pub(crate) fn issued(
        &mut self,
        queue: usize,
        ticket: Ticket,
        epoch: u64,
        target: u32,
        fenceable: bool,
        fetched: Option<Fetched>,
    ) {
        self.queues[queue].in_flight.push(InFlight {
            ticket,
            epoch,
            target,
            fenceable,
            fetched,
        });
    }

    /// The ticket completed: the operation is done. Returns what it fetched, if anything.
    pub(crate) fn completed(&mut self, queue: usize, ticket: Ticket) -> Option<Fetched> {
        let in_flight = &mut self.queues[queue].in_flight;
        let index = in_flight.iter().position(|op| op.ticket == ticket)?;
        in_flight.remove(index).fetched
    }

    /// Quiet returned: every operation of `queue` is done (rule R2). Returns what they
    /// fetched.
    pub(crate) fn quieted(&mut self, queue: usize) -> Vec<Fetched> {
        std::mem::take(&mut self.queues[queue].in_flight)
            .into_iter()
            .filter_map(|op| op.fetched)
            .collect()
    }

    /// A fence on `queue` (rule R1).
    pub(crate) fn fenced(&mut self, queue: usize) {
        self.queues[queue].fence_epoch = self.epoch;
    }

    /// Orders what `clock` orders before the PE's current point, or, if `deferred`, before
    /// its next fence or quiet.
    pub(crate) fn acquire(&mut self, clock: &VectorClock, deferred: bool) {
        if deferred {
            self.pending.join(clock);
        } else {
            self.known.join(clock);
        }
    }

    /// A fence or quiet: the fetches completed before it are ordered now (rule R7).
    pub(crate) fn settle(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        self.known.join(&pending);
    }

    /// What a peer learns by observing a write this PE issues now, before the write's own
    /// epoch is taken.
    ///
    /// `toward` is the write's queue and target, if it is a queue operation: the fenced
    /// operations of that queue to that target are delivered before it (R1). With `None`
    /// (the rendezvous of an exchange) only completed operations count.
    pub(crate) fn released(&self, toward: Option<(usize, u32)>) -> VectorClock {
        let mut clock = self.known.clone();
        // Why start at the epoch: an operation that is not in flight is complete.
        let mut thresholds = vec![self.epoch; self.n_pes as usize];
        for (queue, log) in self.queues.iter().enumerate() {
            for op in &log.in_flight {
                let fenced = op.fenceable
                    && op.epoch <= log.fence_epoch
                    && toward == Some((queue, op.target));
                if !fenced {
                    let t = &mut thresholds[op.target as usize];
                    *t = (*t).min(op.epoch - 1);
                }
            }
        }
        for (target, threshold) in (0..).zip(thresholds) {
            clock.raise(self.component(Channel::Remote(target)), threshold);
        }
        // Plain loads and stores are complete when they return.
        clock.raise(self.component(Channel::Local), self.epoch);
        clock.raise(self.component(Channel::Consistency), self.steps);
        clock
    }

    pub(crate) fn component(&self, channel: Channel) -> Component {
        Component {
            issuer: self.pe,
            channel,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::clock::remote;

    /// Issues a put from PE 0 to `target` on queue 0 and returns its epoch.
    fn put(clock: &mut PeClock, ticket: u64, target: u32) -> u64 {
        let epoch = clock.next_epoch();
        clock.issued(0, Ticket(ticket), epoch, target, true, None);
        epoch
    }

    #[test]
    fn an_unfenced_put_in_flight_is_not_released() {
        let mut clock = PeClock::new(0, 2);
        clock.add_queue();
        let data = put(&mut clock, 1, 1);
        let released = clock.released(Some((0, 1)));
        assert!(!released.covers(remote(0, 1), data));
    }

    #[test]
    fn a_fence_releases_earlier_puts_to_the_same_target_only() {
        let mut clock = PeClock::new(0, 3);
        clock.add_queue();
        let to_1 = put(&mut clock, 1, 1);
        let to_2 = put(&mut clock, 2, 2);
        clock.fenced(0);
        let released = clock.released(Some((0, 1)));
        assert!(released.covers(remote(0, 1), to_1));
        assert!(!released.covers(remote(0, 2), to_2));
        // The rendezvous of an exchange is not a write behind the fence.
        assert!(!clock.released(None).covers(remote(0, 1), to_1));
    }

    #[test]
    fn a_fence_does_not_order_gets() {
        let mut clock = PeClock::new(0, 2);
        clock.add_queue();
        let get = clock.next_epoch();
        clock.issued(0, Ticket(1), get, 1, false, None);
        clock.fenced(0);
        assert!(!clock.released(Some((0, 1))).covers(remote(0, 1), get));
    }

    #[test]
    fn quiet_and_completion_release_everything_before() {
        let mut clock = PeClock::new(0, 2);
        clock.add_queue();
        let first = put(&mut clock, 1, 1);
        let second = put(&mut clock, 2, 1);
        clock.completed(0, Ticket(1));
        let released = clock.released(None);
        assert!(released.covers(remote(0, 1), first));
        assert!(!released.covers(remote(0, 1), second));
        clock.quieted(0);
        assert!(clock.released(None).covers(remote(0, 1), second));
    }

    #[test]
    fn deferred_acquisitions_wait_for_a_fence_or_quiet() {
        let mut clock = PeClock::new(1, 2);
        let mut learned = VectorClock::default();
        learned.raise(remote(0, 1), 3);
        clock.acquire(&learned, true);
        assert!(!clock.known().covers(remote(0, 1), 3));
        clock.settle();
        assert!(clock.known().covers(remote(0, 1), 3));
    }
}
