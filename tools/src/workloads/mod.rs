//! Built-in workloads of `rshmem run`. Each one is an ordinary SHMEM program, generic over
//! the backend, that checks its own result. The NVSHMEM guide's examples (`ring`, `reduce`,
//! `alltoall`, `broadcast`, `fcollect`, `matmul`, `moe-dispatch`) are kernels, as are
//! `deepep-ll` and `deepep-normal`, DeepEP-like dispatches and combines
//! (`Shmem::launch_kernel`, docs/kernels.md).

mod alltoall;
mod broadcast;
mod deepep;
mod deepep_normal;
mod fcollect;
mod flag;
mod hello;
mod matmul;
mod moe_dispatch;
mod moe_shape;
mod moe_token;
mod msg_rate;
mod put_bw;
mod reduce;
mod ring;
mod scatter;
#[cfg(all(test, rshmem_shuttle))]
mod under_shuttle;

use hw::Backend;
use rshmem::{Shmem, ShmemError};
use serde::Serialize;

pub use moe_shape::MoeShape;

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
    /// How long each phase of the workload took on this PE, in simulated ns, in order.
    pub phases_ns: Vec<(&'static str, u64)>,
}

impl PeOutcome {
    fn checked(ok: bool, detail: impl Into<String>) -> PeOutcome {
        PeOutcome {
            ok,
            detail: detail.into(),
            curve: None,
            phases_ns: Vec::new(),
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
        about: "kernel: 64 threads p to the next PE, barrier_all_block; checks every slot",
        min_pes: 1,
    },
    Workload {
        name: "reduce",
        about: "kernel: vector sum, per-thread partial sums reduced over PEs by sum_reduce_block",
        min_pes: 1,
    },
    Workload {
        name: "alltoall",
        about: "kernel: alltoall_block of a distinct block for every PE; checks every block",
        min_pes: 1,
    },
    Workload {
        name: "broadcast",
        about: "kernel: broadcast_block from PE 0, then from the last PE; checks every element",
        min_pes: 1,
    },
    Workload {
        name: "fcollect",
        about: "kernel: fcollect_block of 64 elements per PE; checks every element",
        min_pes: 1,
    },
    Workload {
        name: "matmul",
        about: "kernel: C = A x B, rows split over PEs, each thread reads B with g; checks C",
        min_pes: 1,
    },
    Workload {
        name: "moe-dispatch",
        about: "kernel: top-2 MoE token scatter with put_nbi_warp and counting signals; checks experts",
        min_pes: 1,
    },
    Workload {
        name: "deepep-ll",
        about: "kernel: DeepEP-like low-latency MoE dispatch and combine (--moe); checks counts, answers and sums",
        min_pes: 1,
    },
    Workload {
        name: "deepep-normal",
        about: "kernel: DeepEP-like normal MoE layer, notify then two hops each way (--moe); checks counts, tokens and sums",
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

/// A workload name that is not built in.
#[derive(Debug, thiserror::Error)]
#[error("unknown workload {name:?}; the workloads are:\n{list}")]
pub struct UnknownWorkload {
    /// The name asked for.
    pub name: String,
    /// Every workload with what it does, a line each.
    pub list: String,
}

/// Finds a workload by name.
///
/// # Errors
/// [`UnknownWorkload`], listing the workloads.
pub fn lookup(name: &str) -> Result<&'static Workload, UnknownWorkload> {
    WORKLOADS
        .iter()
        .find(|w| w.name == name)
        .ok_or_else(|| UnknownWorkload {
            name: name.to_owned(),
            list: WORKLOADS
                .iter()
                .map(|w| format!("  {:<13} {}", w.name, w.about))
                .collect::<Vec<_>>()
                .join("\n"),
        })
}

/// What a run's workload is given beside its PEs.
#[derive(Clone, Copy, Debug, Default)]
pub struct Params {
    /// The MoE layer of the `deepep-*` workloads.
    pub moe: MoeShape,
}

/// Runs `workload` on this PE.
pub fn run_on_pe<B: Backend>(
    workload: &Workload,
    params: &Params,
    sh: &Shmem<B>,
) -> Result<PeOutcome, ShmemError> {
    match workload.name {
        "hello" => hello::run(sh),
        "ring" => ring::run(sh),
        "reduce" => reduce::run(sh),
        "alltoall" => alltoall::run(sh),
        "broadcast" => broadcast::run(sh),
        "fcollect" => fcollect::run(sh),
        "matmul" => matmul::run(sh),
        "moe-dispatch" => moe_dispatch::run(sh),
        "deepep-ll" => deepep::low_latency(sh, &params.moe),
        "deepep-normal" => deepep_normal::normal(sh, &params.moe),
        "put-bw" => put_bw::run(sh),
        "msg-rate" => msg_rate::run(sh),
        "flag-nofence" => flag::run(sh, false),
        "flag-fence" => flag::run(sh, true),
        other => unreachable!("workload {other} is listed but not dispatched"),
    }
}
