//! The event queue: events ordered by virtual time, ties broken by insertion order.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Something that happens at a point in virtual time.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Event {
    /// A PE continues running.
    Resume { pe: u32 },
    /// An in-flight operation reaches its target.
    Deliver { op: u32 },
    /// The acknowledgement or response of an operation reaches its source.
    Complete { op: u32 },
    /// One pending InfiniBand write becomes visible at its target.
    Drain { pe: u32, write_id: u64 },
}

#[derive(Debug, Default)]
pub(crate) struct EventQueue {
    heap: BinaryHeap<Reverse<(u64, u64, Slot)>>,
    seq: u64,
}

/// Events are stored beside the key so the heap holds plain ordered tuples.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Slot(Event);

impl PartialOrd for Slot {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Slot {
    /// Never decides an order: (time, seq) is unique.
    fn cmp(&self, _: &Self) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

impl EventQueue {
    pub(crate) fn push(&mut self, at_ns: u64, event: Event) {
        self.seq += 1;
        self.heap.push(Reverse((at_ns, self.seq, Slot(event))));
    }

    pub(crate) fn pop(&mut self) -> Option<(u64, Event)> {
        let Reverse((at_ns, _, Slot(event))) = self.heap.pop()?;
        Some((at_ns, event))
    }

    pub(crate) fn next_time_ns(&self) -> Option<u64> {
        self.heap.peek().map(|Reverse((t, _, _))| *t)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_order_then_insertion_order() {
        let mut q = EventQueue::default();
        q.push(5, Event::Resume { pe: 1 });
        q.push(3, Event::Resume { pe: 2 });
        q.push(5, Event::Resume { pe: 0 });
        q.push(4, Event::Drain { pe: 9, write_id: 1 });
        assert_eq!(q.next_time_ns(), Some(3));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (3, Event::Resume { pe: 2 }),
                (4, Event::Drain { pe: 9, write_id: 1 }),
                (5, Event::Resume { pe: 1 }),
                (5, Event::Resume { pe: 0 }),
            ]
        );
    }
}
