//! Vector clocks over (issuer, channel) components, with a set of single operations known to
//! be ordered beyond the components.
//!
//! A component `(q, Remote(t))` at epoch `e` says: every access PE `q` issued through its
//! queues to PE `t`'s memory with an epoch up to `e` is ordered before the clock's owner.
//! `(q, Local)` says the same of `q`'s plain loads and stores of its own memory. Components
//! per target are needed because fence orders puts per target only (rule R1), so a write
//! can release "everything before the fence to this target" and nothing about other targets.
//!
//! `(q, Consistency)` at `s` says that `q`'s first `s` consistency steps are ordered before:
//! with InfiniBand in the machine, a write that crossed a NIC is visible to others than its
//! target only after a consistency step of the target (rule R8).
//!
//! The extra operations exist because observing one write (a wait that saw a flag, a signal
//! whose put's data came with it, rule R5) orders that write alone, not the unfenced writes
//! of the same issuer issued before it: no component threshold can say that.

use std::collections::{BTreeMap, BTreeSet};

/// Which of an issuer's accesses a component covers.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub(crate) enum Channel {
    /// Plain loads and stores of the issuer's own memory.
    Local,
    /// Operations the issuer's queues carry to this PE's memory.
    Remote(u32),
    /// The issuer's consistency steps (a satisfied wait or test, a quiet), counted: what makes
    /// the writes that crossed InfiniBand into its memory visible (rule R8).
    Consistency,
}

/// One component of a clock.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub(crate) struct Component {
    pub(crate) issuer: u32,
    pub(crate) channel: Channel,
}

/// What one PE knows to be ordered before its current point.
#[derive(Clone, Default, PartialEq, Eq, Debug)]
pub(crate) struct VectorClock {
    thresholds: BTreeMap<Component, u64>,
    /// Operations `(issuer, channel, epoch)` ordered before, though not yet covered by their
    /// component's threshold.
    operations: BTreeSet<(Component, u64)>,
}

impl VectorClock {
    /// The epoch up to which `component`'s accesses are ordered before (0: none).
    pub(crate) fn threshold(&self, component: Component) -> u64 {
        self.thresholds.get(&component).copied().unwrap_or(0)
    }

    /// Whether the access of `component` at `epoch` is ordered before.
    pub(crate) fn covers(&self, component: Component, epoch: u64) -> bool {
        self.threshold(component) >= epoch || self.operations.contains(&(component, epoch))
    }

    /// Orders every access of `component` up to `epoch` before.
    pub(crate) fn raise(&mut self, component: Component, epoch: u64) {
        if epoch > self.threshold(component) {
            self.thresholds.insert(component, epoch);
            self.prune(component);
        }
    }

    /// Orders the single access of `component` at `epoch` before.
    pub(crate) fn add_operation(&mut self, component: Component, epoch: u64) {
        if !self.covers(component, epoch) {
            self.operations.insert((component, epoch));
        }
    }

    /// Orders before everything `other` orders before.
    pub(crate) fn join(&mut self, other: &VectorClock) {
        for (&component, &epoch) in &other.thresholds {
            self.raise(component, epoch);
        }
        for &(component, epoch) in &other.operations {
            self.add_operation(component, epoch);
        }
    }

    /// Drops the single operations of `component` that its threshold now covers, so the set
    /// stays as small as the unsynchronised part of the program.
    fn prune(&mut self, component: Component) {
        let threshold = self.threshold(component);
        let covered: Vec<(Component, u64)> = self
            .operations
            .range((component, 0)..=(component, threshold))
            .copied()
            .collect();
        for operation in covered {
            self.operations.remove(&operation);
        }
    }
}

/// The component of `issuer`'s operations to `target`, as the tests of this module and its
/// neighbours write it.
#[cfg(test)]
pub(crate) fn remote(issuer: u32, target: u32) -> Component {
    Component {
        issuer,
        channel: Channel::Remote(target),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_takes_the_larger_threshold_per_component() {
        let mut a = VectorClock::default();
        a.raise(remote(0, 1), 5);
        a.raise(remote(0, 2), 1);
        let mut b = VectorClock::default();
        b.raise(remote(0, 1), 3);
        b.raise(remote(0, 2), 7);
        a.join(&b);
        assert_eq!(a.threshold(remote(0, 1)), 5);
        assert_eq!(a.threshold(remote(0, 2)), 7);
        assert_eq!(a.threshold(remote(1, 0)), 0);
    }

    #[test]
    fn components_are_per_target_and_per_channel() {
        let mut clock = VectorClock::default();
        clock.raise(remote(0, 1), 9);
        assert!(clock.covers(remote(0, 1), 9));
        assert!(!clock.covers(remote(0, 1), 10));
        assert!(!clock.covers(remote(0, 2), 1));
        let local = Component {
            issuer: 0,
            channel: Channel::Local,
        };
        assert!(!clock.covers(local, 1));
    }

    #[test]
    fn a_single_operation_is_ordered_without_its_predecessors() {
        let mut clock = VectorClock::default();
        clock.add_operation(remote(0, 1), 4);
        assert!(clock.covers(remote(0, 1), 4));
        assert!(!clock.covers(remote(0, 1), 3));
        let mut other = VectorClock::default();
        other.join(&clock);
        assert!(other.covers(remote(0, 1), 4));
    }

    #[test]
    fn raising_a_threshold_prunes_the_operations_it_covers() {
        let mut clock = VectorClock::default();
        clock.add_operation(remote(0, 1), 4);
        clock.add_operation(remote(0, 1), 8);
        clock.raise(remote(0, 1), 5);
        assert_eq!(clock.operations.len(), 1);
        assert!(clock.covers(remote(0, 1), 8));
        assert!(!clock.covers(remote(0, 1), 6));
    }
}
