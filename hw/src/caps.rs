//! Capabilities: what a backend guarantees, as plain data the runtime branches on.

/// Which ordering and visibility rules a run follows (SPEC section 3).
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
    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Semantics::Nvshmem => "nvshmem",
            Semantics::OpenShmem15 => "openshmem-1.5",
        }
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
}
