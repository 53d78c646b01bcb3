//! Capabilities: what a backend guarantees, as plain data the runtime branches on.

use std::str::FromStr;

/// Which ordering and visibility rules a run follows (docs/ordering.md).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum Semantics {
    /// NVSHMEM: blocking fetching operations are unordered with each other unless a fence
    /// separates them; with InfiniBand in the system, quiet, barrier, wait_until and test make
    /// only updates to the calling PE's own objects visible to it.
    #[default]
    Nvshmem,
    /// OpenSHMEM 1.5: blocking fetches complete in program order and quiet makes updates
    /// visible to all PEs.
    OpenShmem15,
}

impl Semantics {
    /// Every semantics, in the order the command line lists them.
    pub const ALL: [Semantics; 2] = [Semantics::Nvshmem, Semantics::OpenShmem15];

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Semantics::Nvshmem => "nvshmem",
            Semantics::OpenShmem15 => "openshmem-1.5",
        }
    }
}

/// A name that is none of [`Semantics::ALL`]'s.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown semantics `{name}`; expected one of: {}",
    Semantics::ALL.map(Semantics::name).join(", ")
)]
pub struct UnknownSemantics {
    /// The name given.
    pub name: String,
}

impl FromStr for Semantics {
    type Err = UnknownSemantics;

    /// The semantics [`Semantics::name`] names.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Semantics::ALL
            .into_iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| UnknownSemantics { name: name.into() })
    }
}

/// What a backend offers.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Caps {
    /// A short name of the backend, for reports (never for branching).
    pub backend_name: &'static str,
    /// The ordering rules this run follows.
    pub semantics: Semantics,
    /// The largest segment a PE may create, per memory kind, in bytes.
    pub max_segment_bytes: u64,
    /// Whether [`crate::Device::now`] is simulated time, which only the backend's own
    /// accounting moves (the simulator); otherwise it is wall-clock time, which also moves
    /// while the thread is preempted.
    pub simulated_time: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_semantics_parses_from_its_name_and_an_unknown_name_lists_them() {
        for semantics in Semantics::ALL {
            assert_eq!(semantics.name().parse::<Semantics>(), Ok(semantics));
        }
        let err = "shmem".parse::<Semantics>().unwrap_err().to_string();
        assert!(
            err.contains("`shmem`") && err.contains("nvshmem, openshmem-1.5"),
            "{err}"
        );
    }
}
