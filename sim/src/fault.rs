//! Broken ordering rules, switched on one at a time to test the tests.
//!
//! **Test-only.** A simulator with a fault is not a legal implementation of the contract: it
//! exists so that the litmus cross-check (simulator outcomes against the oracle in `model`)
//! can show that it notices when a rule is broken. A fault either weakens the simulator
//! (outcomes the rules forbid become possible) or strengthens it (outcomes the rules allow
//! become impossible); the cross-check must catch both.

use std::str::FromStr;

/// A deliberately broken rule (test-only; see the module docs of `fault.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Fault {
    /// A fence does not order deliveries: operations after it may overtake those before
    /// (under `SimBuilder::network_transport` it does not wait for the queue's posted
    /// operations either).
    FenceIgnored,
    /// Quiet does not wait for puts (it still waits for other operations, and still runs
    /// the consistency step). The contract cannot tell blocking puts from non-blocking ones,
    /// so this skips all of them: the effect on a non-blocking put is the intended one.
    QuietSkipsNbiPuts,
    /// InfiniBand writes are visible on delivery even under NVSHMEM semantics, as if every
    /// write went through NVLink: a strengthening (outcomes with a stale read disappear).
    NoIbPending,
    /// A satisfied wait or test does not run the consistency step, so pending InfiniBand
    /// writes stay invisible after it.
    WaitSkipsConsistency,
    /// A put-with-signal applies its signal first and its data in a second step, later, so
    /// a PE that saw the signal may read stale data.
    SignalBeforeData,
}

impl Fault {
    /// Every fault.
    pub const ALL: [Fault; 5] = [
        Fault::FenceIgnored,
        Fault::QuietSkipsNbiPuts,
        Fault::NoIbPending,
        Fault::WaitSkipsConsistency,
        Fault::SignalBeforeData,
    ];

    /// The fault's name on the command line (`rshmem litmus --break`).
    pub fn name(self) -> &'static str {
        match self {
            Fault::FenceIgnored => "fence-ignored",
            Fault::QuietSkipsNbiPuts => "quiet-skips-nbi-puts",
            Fault::NoIbPending => "no-ib-pending",
            Fault::WaitSkipsConsistency => "wait-skips-consistency",
            Fault::SignalBeforeData => "signal-before-data",
        }
    }

    fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// A name that is none of [`Fault::ALL`]'s.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown fault `{name}`; expected one of: {}",
    Fault::ALL.map(Fault::name).join(", ")
)]
pub struct UnknownFault {
    /// The name given.
    pub name: String,
}

impl FromStr for Fault {
    type Err = UnknownFault;

    /// The fault [`Fault::name`] names.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Fault::ALL
            .into_iter()
            .find(|f| f.name() == name)
            .ok_or_else(|| UnknownFault { name: name.into() })
    }
}

/// A set of faults (empty in every legal run).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Faults(u8);

impl Faults {
    pub(crate) fn with(self, fault: Fault) -> Faults {
        Faults(self.0 | fault.bit())
    }

    #[inline]
    pub(crate) fn has(self, fault: Fault) -> bool {
        self.0 & fault.bit() != 0
    }

    /// The faults in the set.
    pub(crate) fn list(self) -> Vec<Fault> {
        Fault::ALL.into_iter().filter(|&f| self.has(f)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_holds_what_was_added() {
        let set = Faults::default()
            .with(Fault::NoIbPending)
            .with(Fault::FenceIgnored);
        assert_eq!(set.list(), [Fault::FenceIgnored, Fault::NoIbPending]);
        assert!(!set.has(Fault::SignalBeforeData));
        assert!(Faults::default().list().is_empty());
    }

    #[test]
    fn every_fault_parses_from_its_name_and_an_unknown_name_lists_them() {
        for fault in Fault::ALL {
            assert_eq!(fault.name().parse::<Fault>(), Ok(fault));
        }
        let err = "fence-forgotten".parse::<Fault>().unwrap_err().to_string();
        assert!(err.contains("fence-forgotten"), "{err}");
        assert!(err.contains("fence-ignored, quiet-skips-nbi-puts"), "{err}");
    }
}
