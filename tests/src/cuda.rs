//! The harness that runs conformance bodies on the CUDA backend (`hw::cuda`): a thread per
//! PE, PE `i` on GPU `i`. Suites skip, saying why, on a machine without enough GPUs.

use hw::cuda::{Cuda, CudaBackend, CudaReport, probe};
use rshmem::Shmem;

use crate::{BodyError, run_body};

/// Why a run of `n_pes` CUDA PEs cannot happen on this machine, or `None` if it can.
pub fn unavailable(n_pes: u32) -> Option<String> {
    match probe() {
        Err(e) => Some(e.to_string()),
        Ok(inventory) if (inventory.gpus.len() as u32) < n_pes => Some(format!(
            "{n_pes} PEs need {n_pes} GPUs and this machine has {}",
            inventory.gpus.len()
        )),
        Ok(_) => None,
    }
}

/// Runs `body` on `n_pes` CUDA PEs and returns the report, failing with every PE's error if
/// any PE's check failed.
pub fn run_on_cuda(
    n_pes: u32,
    body: impl Fn(&Shmem<CudaBackend>) -> Result<(), BodyError> + Sync,
) -> Result<CudaReport, String> {
    let cuda = Cuda::builder()
        .pes(n_pes)
        .build()
        .map_err(|e| e.to_string())?;
    // The bodies need a few KiB; device segments are whole 2 MiB granules anyway.
    let (report, failures) = run_body(cuda, 4 << 20, body)?;
    if failures.is_empty() {
        Ok(report)
    } else {
        Err(format!(
            "{n_pes} CUDA PEs on {:?}:\n  {}",
            report.gpus,
            failures.join("\n  ")
        ))
    }
}
