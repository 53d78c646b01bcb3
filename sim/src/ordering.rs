//! A queue's bookkeeping: which of its tickets are outstanding, and the fence rule per target.
//!
//! Both are touched by every operation, so both avoid ordered trees: tickets are a sliding
//! window of bits, and the fence state lives in a hash map that forgets targets whose state
//! can no longer matter.

use std::collections::VecDeque;
use std::hash::BuildHasherDefault;

use crate::hashing::IntHasher;

/// The tickets of a queue that have not completed. Tickets are handed out in order and
/// complete in any order, so a window of bits starting at the oldest word with an incomplete
/// ticket holds them all.
#[derive(Debug, Default)]
pub(crate) struct Tickets {
    next: u64,
    /// The ticket of bit 0 of `words[0]`; every ticket before it is complete.
    base: u64,
    words: VecDeque<u64>,
    incomplete: usize,
    /// Tickets whose operation travels as several parts (a put split into words in an
    /// exploration), with how many parts beyond the last are still to complete. Rarely
    /// holds anything, so a list.
    parts: Vec<(u64, u32)>,
}

impl Tickets {
    /// Hands out the next ticket, incomplete.
    pub(crate) fn issue(&mut self) -> u64 {
        let ticket = self.next;
        self.next += 1;
        let bit = ticket - self.base;
        if bit / 64 == self.words.len() as u64 {
            self.words.push_back(0);
        }
        self.words[(bit / 64) as usize] |= 1 << (bit % 64);
        self.incomplete += 1;
        ticket
    }

    /// Hands out the next ticket for an operation of `parts` parts: it completes when
    /// [`Tickets::complete`] has been called once per part.
    pub(crate) fn issue_parts(&mut self, parts: u32) -> u64 {
        let ticket = self.issue();
        if parts > 1 {
            self.parts.push((ticket, parts - 1));
        }
        ticket
    }

    /// Whether `ticket` is not outstanding (complete, or never handed out).
    pub(crate) fn is_done(&self, ticket: u64) -> bool {
        if ticket < self.base || ticket >= self.next {
            return true;
        }
        let bit = ticket - self.base;
        self.words[(bit / 64) as usize] & (1 << (bit % 64)) == 0
    }

    pub(crate) fn complete(&mut self, ticket: u64) {
        if let Some(at) = self.parts.iter().position(|&(t, _)| t == ticket) {
            self.parts[at].1 -= 1;
            if self.parts[at].1 == 0 {
                self.parts.swap_remove(at);
            }
            return;
        }
        debug_assert!(!self.is_done(ticket), "ticket {ticket} completed twice");
        let bit = ticket - self.base;
        self.words[(bit / 64) as usize] &= !(1 << (bit % 64));
        self.incomplete -= 1;
        // Drop leading words whose tickets were all handed out and all completed.
        while self.words.front() == Some(&0) && self.base + 64 <= self.next {
            self.words.pop_front();
            self.base += 64;
        }
    }

    pub(crate) fn incomplete(&self) -> usize {
        self.incomplete
    }

    /// Starts loading the word that holds `ticket` (see [`crate::prefetch::prefetch`]).
    pub(crate) fn prefetch(&self, ticket: u64) {
        if let Some(word) = self
            .words
            .get((ticket.wrapping_sub(self.base) / 64) as usize)
        {
            crate::prefetch::prefetch(word);
        }
    }
}

/// The fence rule of one queue: per target, operations of an epoch (the operations between
/// two fences) are delivered after every operation of earlier epochs to that target.
///
/// Only deliveries at or after the current time can hold a later operation back, since every
/// later operation is issued, and so delivered, at or after it: `arrive.max(floor + 1)` is
/// `arrive` when `floor < now <= arrive`. Both tables therefore forget entries that fell
/// behind the current time whenever they have doubled, which keeps them at about the number
/// of operations in flight instead of one entry per pair of PEs (gigabytes at 4096 PEs).
#[derive(Debug, Default)]
pub(crate) struct FenceOrder {
    /// The epoch of the operations in `recent`. Epochs are numbered modulo 2^32: only a
    /// change is looked for, which 2^32 fences between two operations would hide.
    epoch: u32,
    /// (target, delivery time) of the operations issued since the last fence. A list, not a
    /// map: appending is all a fence-free program pays per operation.
    recent: Recent,
    recent_sweep_at: usize,
    /// Per target, the latest delivery of an operation issued before the last fence.
    floors: Floors,
    floors_sweep_at: usize,
}

/// Why a hash map in the simulator (sim/clippy.toml bans it): its hasher is fixed, so the
/// same inserts give the same order in every run, and it is only swept with `retain`, whose
/// result does not depend on the order.
#[allow(
    clippy::disallowed_types,
    reason = "a fixed hasher (IntHasher), and never iterated in an order that matters"
)]
type Floors = std::collections::HashMap<u32, u64, BuildHasherDefault<IntHasher>>;

/// Tables shorter than this are never swept.
const MIN_SWEEP: usize = 64;

impl FenceOrder {
    /// Ends the current epoch at `now_ns`.
    fn fence(&mut self, now_ns: u64) {
        for (dst, at_ns) in self.recent.iter() {
            if at_ns >= now_ns {
                let floor = self.floors.entry(dst).or_default();
                *floor = (*floor).max(at_ns);
            }
        }
        self.recent.clear();
        if self.floors.len() > self.floors_sweep_at {
            self.floors.retain(|_, &mut at_ns| at_ns >= now_ns);
            self.floors_sweep_at = (2 * self.floors.len()).max(MIN_SWEEP);
        }
    }

    /// The delivery time of an operation of `epoch` (operations come in epoch order) to `dst`
    /// that the network would deliver at `arrive_ns`, issued at or after `now_ns`: after
    /// every earlier epoch's operations to `dst` (and never at time 0, as if a floor of 0
    /// stood before every target).
    pub(crate) fn order(&mut self, dst: u32, arrive_ns: u64, now_ns: u64, epoch: u32) -> u64 {
        if epoch != self.epoch {
            // Fences with no operation between them act as one.
            self.fence(now_ns);
            self.epoch = epoch;
        }
        let floor_ns = if self.floors.is_empty() {
            0
        } else {
            self.floors.get(&dst).copied().unwrap_or(0)
        };
        let arrive_ns = arrive_ns.max(floor_ns + 1);
        self.recent.push(dst, arrive_ns, now_ns);
        if self.recent.len() > self.recent_sweep_at {
            self.recent.forget_before(now_ns);
            self.recent_sweep_at = (2 * self.recent.len()).max(MIN_SWEEP);
        }
        arrive_ns
    }
}

/// The (target, delivery time) list of [`FenceOrder`], in 8 bytes an entry: a delivery time
/// is kept as 32 bits after `base_ns`, and the rare one further ahead (4.3 s of simulated
/// time) in `far`. Why: a fence-free all-to-all keeps an entry per operation in flight, 16.7
/// million at 4096 PEs, 268 MB in entries of 16 bytes.
#[derive(Debug, Default)]
struct Recent {
    base_ns: u64,
    near: Vec<(u32, u32)>,
    far: Vec<(u32, u64)>,
}

impl Recent {
    fn len(&self) -> usize {
        self.near.len() + self.far.len()
    }

    /// Adds a delivery at `at_ns` of an operation issued at `now_ns`; times never go back.
    fn push(&mut self, dst: u32, at_ns: u64, now_ns: u64) {
        if self.len() == 0 {
            self.base_ns = now_ns;
        }
        let after_ns = at_ns.checked_sub(self.base_ns);
        match after_ns.and_then(|after_ns| u32::try_from(after_ns).ok()) {
            Some(after_ns) => self.near.push((dst, after_ns)),
            None => self.far.push((dst, at_ns)),
        }
    }

    /// Every entry, near ones first.
    fn iter(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
        let near = self.near.iter();
        let near = near.map(|&(dst, after_ns)| (dst, self.base_ns + u64::from(after_ns)));
        near.chain(self.far.iter().copied())
    }

    /// Drops the deliveries before `now_ns`, and counts the rest from `now_ns`.
    fn forget_before(&mut self, now_ns: u64) {
        let base_ns = self.base_ns;
        self.near.retain_mut(|(_, after_ns)| {
            let at_ns = base_ns + u64::from(*after_ns);
            *after_ns = at_ns.saturating_sub(now_ns) as u32;
            at_ns >= now_ns
        });
        self.far.retain(|&(_, at_ns)| at_ns >= now_ns);
        self.base_ns = now_ns;
    }

    fn clear(&mut self) {
        self.near.clear();
        self.far.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fence_orders_behind_deliveries_far_ahead_and_after_sweeps() {
        let mut order = FenceOrder::default();
        let far_ns = 10_000_000_000;
        assert_eq!(order.order(7, far_ns, 5, 0), far_ns);
        // Enough deliveries that have passed by the next issue to sweep the list twice.
        for i in 0..3 * MIN_SWEEP as u64 {
            order.order(8, 10 + i, 10 + i, 0);
        }
        assert_eq!(order.order(9, 5_000, 1_000, 0), 5_000);
        // After a fence, target 7 waits for the delivery 10 s ahead, 9 for the one at 5 us,
        // and 8 for none: its deliveries were all before the fence.
        assert_eq!(order.order(7, 2_000, 2_000, 1), far_ns + 1);
        assert_eq!(order.order(9, 2_000, 2_000, 1), 5_001);
        assert_eq!(order.order(8, 2_000, 2_000, 1), 2_000);
    }

    #[test]
    fn a_ticket_of_parts_completes_with_its_last_part() {
        let mut t = Tickets::default();
        let split = t.issue_parts(3);
        let whole = t.issue();
        t.complete(split);
        t.complete(whole);
        assert!(!t.is_done(split) && t.is_done(whole));
        assert_eq!(t.incomplete(), 1);
        t.complete(split);
        assert!(!t.is_done(split));
        t.complete(split);
        assert!(t.is_done(split));
        assert_eq!(t.incomplete(), 0);
    }

    #[test]
    fn tickets_complete_in_any_order() {
        let mut t = Tickets::default();
        let ids: Vec<u64> = (0..200).map(|_| t.issue()).collect();
        assert_eq!(ids, (0..200).collect::<Vec<_>>());
        assert!(
            t.is_done(200),
            "a ticket never handed out is not outstanding"
        );
        for &id in ids.iter().rev().step_by(2) {
            t.complete(id);
        }
        assert_eq!(t.incomplete(), 100);
        assert!(t.is_done(199) && !t.is_done(198) && !t.is_done(0));
        for &id in ids.iter().step_by(2) {
            t.complete(id);
        }
        assert_eq!(t.incomplete(), 0);
        assert!(ids.iter().all(|&id| t.is_done(id)));
        assert_eq!(t.issue(), 200);
        assert!(!t.is_done(200) && t.is_done(199));
    }

    #[test]
    fn fences_order_per_target_only() {
        let mut f = FenceOrder::default();
        assert_eq!(f.order(1, 500, 0, 0), 500);
        assert_eq!(f.order(2, 900, 0, 0), 900);
        assert_eq!(
            f.order(1, 100, 0, 1),
            501,
            "after the fence, after the earlier put to 1"
        );
        assert_eq!(
            f.order(3, 100, 0, 1),
            100,
            "another target is not held back"
        );
        assert_eq!(
            f.order(1, 50, 0, 1),
            501,
            "still after the put before the fence"
        );
        assert_eq!(f.order(2, 50, 0, 3), 901, "two fences in a row act as one");
    }

    /// The rule as first written: per target, the epoch, the latest delivery of the epoch
    /// and the floor from earlier epochs, never forgotten.
    #[derive(Default)]
    struct Reference {
        epoch: u32,
        targets: std::collections::BTreeMap<u32, (u32, u64, u64)>,
    }

    impl Reference {
        fn order(&mut self, dst: u32, arrive_ns: u64) -> u64 {
            let (epoch, last, floor) = self.targets.entry(dst).or_default();
            if *epoch != self.epoch {
                *floor = (*floor).max(*last);
                *last = 0;
                *epoch = self.epoch;
            }
            let arrive_ns = arrive_ns.max(*floor + 1);
            *last = (*last).max(arrive_ns);
            arrive_ns
        }
    }

    #[test]
    fn forgetting_the_past_changes_nothing() {
        let mut reference = Reference::default();
        let mut f = FenceOrder::default();
        let mut x: u64 = 99;
        let mut now = 0;
        for i in 0..20_000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            now += (x >> 60) % 3;
            if (x >> 20).is_multiple_of(7) {
                reference.epoch += 1;
            }
            let dst = ((x >> 30) % 300) as u32;
            let arrive = now + (x >> 40) % 50;
            let got = f.order(dst, arrive, now, reference.epoch);
            assert_eq!(got, reference.order(dst, arrive), "op {i}");
        }
        assert!(f.recent.len() + f.floors.len() < reference.targets.len());
    }
}
