//! What operations cost on a simulated machine beyond its links: issuing, NICs, polling,
//! fences, transfers' start-ups, the movers' copy curves, launches, local accesses, start-up
//! and mapping memory.
//!
//! Why here and not in `hw`: only the simulator prices operations; a real backend's costs
//! are what its hardware does. A [`Timing`] travels with its topology as a
//! [`crate::topology::Machine`], read from the same preset or file, so calibrating the
//! simulator (`rshmem calibrate`, docs/calibration.md) never changes the hardware contract.

mod copy;

pub use copy::{CopyCurve, CopyTimes, CurveError, MAX_CURVE_POINTS};

/// Costs that belong to an operation rather than to a link.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Timing {
    /// Time a PE spends issuing one operation (building the request), in nanoseconds.
    pub issue_ns: u64,
    /// Extra time an operation spends in each NIC it crosses (doorbell, WQE fetch), in ns.
    pub nic_ns: u64,
    /// Time for a PE to find a satisfied wait after the update landed (polling), in ns.
    pub poll_ns: u64,
    /// Time a PE spends in a system-scope memory fence, in ns: in fence and quiet.
    pub fence_ns: u64,
    /// What a put-with-signal costs the PE before it leaves, in ns: the release that orders
    /// its data before its signal. On NVLink the GPU's release waits for the data's
    /// acknowledgement, a round trip, which a barrier's fence does not; so the two are
    /// costs of their own.
    pub release_ns: u64,
    /// Time each transfer of data holds the links of its route before its bytes, in ns: the
    /// start-up of a copy (Hockney's t0). With the bandwidth it makes the bandwidth curve: a
    /// stream of `n`-byte transfers reaches `n / (transfer_ns + n / bandwidth)`.
    pub transfer_ns: u64,
    /// How long each mover of a GPU takes per put of a size (a thread, a warp, a block, the
    /// whole GPU, the copy engine): a put is paced by its mover as well as by the links.
    /// Free by default.
    pub copy: CopyTimes,
    /// What launching a kernel costs the PE (the driver and the GPU's front end), in ns.
    pub launch_ns: u64,
    /// What a plain load or store of the PE's own memory costs beyond its bytes (a GPU's
    /// round trip to its memory), in ns.
    pub local_access_ns: u64,
    /// Time from a run's start until a PE's program starts (creating the GPU's context, the
    /// bootstrap), in ns: every PE's clock starts there.
    pub startup_ns: u64,
    /// How fast a PE backs a segment with memory and maps it for its peers, in bytes per
    /// second; 0 when mapping costs nothing.
    pub map_bytes_per_s: u64,
}

impl Timing {
    /// Priors for a Hopper-class GPU, before any calibration: issuing, NICs and polling cost
    /// what no measurement has contradicted yet, and fences, releases, transfer start-ups,
    /// movers, launches, local accesses, start-up and mapping cost nothing until a calibration
    /// (`rshmem calibrate`) says what they cost.
    pub const PRIORS: Timing = Timing {
        issue_ns: 20,
        nic_ns: 300,
        poll_ns: 100,
        fence_ns: 0,
        release_ns: 0,
        transfer_ns: 0,
        copy: CopyTimes::FREE,
        launch_ns: 0,
        local_access_ns: 0,
        startup_ns: 0,
        map_bytes_per_s: 0,
    };
}

impl Default for Timing {
    /// [`Timing::PRIORS`].
    fn default() -> Self {
        Timing::PRIORS
    }
}
