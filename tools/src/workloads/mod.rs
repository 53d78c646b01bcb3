//! Built-in workloads of `rshmem run`. Each one is an ordinary SHMEM program, generic over
//! the backend, that checks its own result.

mod alltoall;
mod flag;
mod hello;
mod msg_rate;
mod put_bw;
mod reduce;
mod ring;
#[cfg(all(test, rshmem_shuttle))]
mod under_shuttle;

use hw::Backend;
use rshmem::{Shmem, ShmemError};
use serde::Serialize;

/// One point of a bandwidth curve.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct BandwidthPoint {
    /// Bytes per put.
    pub bytes: u64,
    /// Achieved bandwidth in GB/s (10^9 bytes per second of simulated time).
    pub gbps: f64,
}

/// What one PE's run of a workload found.
#[derive(Clone, Debug, Default)]
pub struct PeOutcome {
    /// Whether this PE's check passed.
    pub ok: bool,
    /// What the check found, for humans.
    pub detail: String,
    /// A bandwidth curve, for `put-bw` (on PE 0).
    pub curve: Option<Vec<BandwidthPoint>>,
}

impl PeOutcome {
    fn checked(ok: bool, detail: impl Into<String>) -> PeOutcome {
        PeOutcome {
            ok,
            detail: detail.into(),
            curve: None,
        }
    }
}

/// A built-in workload.
#[derive(Clone, Copy, Debug)]
pub struct Workload {
    /// Its name on the command line.
    pub name: &'static str,
    /// One line on what it does and checks.
    pub about: &'static str,
    /// The fewest PEs it needs.
    pub min_pes: u32,
}

/// Every built-in workload.
pub const WORKLOADS: &[Workload] = &[
    Workload {
        name: "hello",
        about: "every PE says hello; checks my_pe/n_pes agree",
        min_pes: 1,
    },
    Workload {
        name: "ring",
        about: "each PE puts its id to the next PE, quiet, barrier; checks each got its neighbour's",
        min_pes: 1,
    },
    Workload {
        name: "reduce",
        about: "all-reduce (sum) of a 1024-element vector by recursive doubling; checks every element",
        min_pes: 1,
    },
    Workload {
        name: "alltoall",
        about: "every PE puts a distinct block to every PE; checks every block",
        min_pes: 1,
    },
    Workload {
        name: "put-bw",
        about: "PE 0 puts to PE 1, 8 B to 256 MiB; reports the bandwidth curve",
        min_pes: 2,
    },
    Workload {
        name: "msg-rate",
        about: "every PE puts 1024 8-byte values to rotating partners, quiet every 64; checks every slot",
        min_pes: 1,
    },
    Workload {
        name: "flag-nofence",
        about: "PE 0 puts data then a flag to PE 1 with no fence: a data race for `rshmem check`",
        min_pes: 2,
    },
    Workload {
        name: "flag-fence",
        about: "PE 0 puts data, fences, then puts a flag to PE 1; checks PE 1 read the data",
        min_pes: 2,
    },
];

/// Finds a workload by name.
///
/// # Errors
/// An unknown name, with the list of workloads.
pub fn lookup(name: &str) -> anyhow::Result<&'static Workload> {
    if let Some(workload) = WORKLOADS.iter().find(|w| w.name == name) {
        return Ok(workload);
    }
    let list: Vec<String> = WORKLOADS
        .iter()
        .map(|w| format!("  {:<12} {}", w.name, w.about))
        .collect();
    anyhow::bail!(
        "unknown workload {name:?}; the workloads are:\n{}",
        list.join("\n")
    )
}

/// Runs `workload` on this PE.
pub fn run_on_pe<B: Backend>(workload: &Workload, sh: &Shmem<B>) -> Result<PeOutcome, ShmemError> {
    match workload.name {
        "hello" => hello::run(sh),
        "ring" => ring::run(sh),
        "reduce" => reduce::run(sh),
        "alltoall" => alltoall::run(sh),
        "put-bw" => put_bw::run(sh),
        "msg-rate" => msg_rate::run(sh),
        "flag-nofence" => flag::run(sh, false),
        "flag-fence" => flag::run(sh, true),
        other => unreachable!("workload {other} is listed but not dispatched"),
    }
}
