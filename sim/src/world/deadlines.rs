//! The deadlines of blocked PEs, earliest first.
//!
//! Almost every wait has a deadline and almost every wait ends long before it, so the
//! structure is built for cheap insertion and removal, not for the deadlines that are missed:
//! a removal only marks the PE as having no deadline, and the heap drops such stale entries
//! when they reach its top, or all at once when they outnumber the live ones. A `BTreeSet`
//! paid a search and a rebalance for each of the two, with a cache miss per level, on every
//! wait of every PE.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// No deadline.
const NONE: u64 = u64::MAX;

/// Stale entries tolerated beyond the live ones before the heap is rebuilt.
const SLACK: usize = 64;

#[derive(Debug)]
pub(super) struct Deadlines {
    /// `(deadline, PE)`, earliest first (ties by PE), stale entries included.
    heap: BinaryHeap<Reverse<(u64, u32)>>,
    /// Each PE's deadline now, or [`NONE`]: an entry of the heap is live when it matches.
    current: Vec<u64>,
    live: usize,
}

impl Deadlines {
    pub(super) fn new(n_pes: u32) -> Deadlines {
        Deadlines {
            heap: BinaryHeap::new(),
            current: vec![NONE; n_pes as usize],
            live: 0,
        }
    }

    /// `pe` waits until `at_ns` at the latest (it had no deadline).
    pub(super) fn insert(&mut self, at_ns: u64, pe: u32) {
        debug_assert_eq!(self.current[pe as usize], NONE, "PE {pe} has a deadline");
        self.current[pe as usize] = at_ns;
        self.live += 1;
        if self.heap.len() >= 2 * self.live + SLACK {
            self.rebuild();
        }
        self.heap.push(Reverse((at_ns, pe)));
    }

    /// `pe`'s wait ended: its deadline, if it had one, is gone; returns it.
    pub(super) fn remove(&mut self, pe: u32) -> Option<u64> {
        let at_ns = std::mem::replace(&mut self.current[pe as usize], NONE);
        (at_ns != NONE).then(|| {
            self.live -= 1;
            at_ns
        })
    }

    /// The earliest deadline and its PE.
    pub(super) fn first(&mut self) -> Option<(u64, u32)> {
        while let Some(&Reverse((at_ns, pe))) = self.heap.peek() {
            if self.current[pe as usize] == at_ns {
                return Some((at_ns, pe));
            }
            self.heap.pop();
        }
        None
    }

    /// The deadlines now, earliest first.
    pub(super) fn live(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        let mut all: Vec<(u64, u32)> = self
            .current
            .iter()
            .enumerate()
            .filter(|&(_, &at_ns)| at_ns != NONE)
            .map(|(pe, &at_ns)| (at_ns, pe as u32))
            .collect();
        all.sort_unstable();
        all.into_iter()
    }

    /// Keeps only live entries, once each (a PE that blocked again with the same deadline
    /// left a copy of it behind).
    fn rebuild(&mut self) {
        let mut entries = std::mem::take(&mut self.heap).into_vec();
        entries.retain(|&Reverse((at_ns, pe))| self.current[pe as usize] == at_ns);
        entries.sort_unstable();
        entries.dedup();
        self.heap = BinaryHeap::from(entries);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_live_deadline_first_and_removed_ones_never() {
        let mut d = Deadlines::new(4);
        d.insert(30, 0);
        d.insert(10, 1);
        d.insert(10, 2);
        d.insert(20, 3);
        assert_eq!(d.first(), Some((10, 1)), "ties go by PE");
        assert_eq!(d.remove(1), Some(10));
        assert_eq!(d.remove(1), None);
        assert_eq!(d.first(), Some((10, 2)));
        d.remove(2);
        d.remove(3);
        // PE 3 blocks again with a later deadline: its old entry must not come back.
        d.insert(40, 3);
        assert_eq!(d.first(), Some((30, 0)));
        assert_eq!(d.live().collect::<Vec<_>>(), [(30, 0), (40, 3)]);
        d.remove(0);
        assert_eq!(d.first(), Some((40, 3)));
        d.remove(3);
        assert_eq!(d.first(), None);
    }

    /// A PE that waits again and again keeps the heap small, and its deadline right.
    #[test]
    fn stale_entries_do_not_pile_up() {
        let mut d = Deadlines::new(2);
        d.insert(1_000_000, 1);
        for round in 0..10_000u64 {
            d.insert(round % 7 + 100, 0);
            d.remove(0);
        }
        // One live deadline (PE 1's), so at most twice that plus the slack, and the new one.
        let bound = 2 + SLACK + 1;
        assert!(d.heap.len() <= bound, "{} entries", d.heap.len());
        d.insert(105, 0);
        assert_eq!(d.first(), Some((105, 0)));
        d.remove(0);
        assert_eq!(d.first(), Some((1_000_000, 1)));
    }
}
