//! The harness that runs conformance bodies on the CUDA backend (`hw::cuda`): a thread per
//! PE, PE `i` on GPU `i`. On a machine with fewer GPUs than the test has PEs, the PEs share
//! them (`CudaBuilder::share_gpus`, PE `i` on GPU `i % n_gpus`) and the harness says so; suites
//! skip, saying why, on a machine without CUDA.

use hw::LaunchError;
use hw::cuda::{Cuda, CudaBackend, CudaReport, probe};
use rshmem::Shmem;

use crate::{BodyError, RunError, run_body};

/// Why a run of `n_pes` CUDA PEs cannot happen on this machine, or `None` if it can.
pub fn unavailable(n_pes: u32) -> Option<String> {
    match probe() {
        Err(e) => Some(e.to_string()),
        Ok(inventory) if inventory.gpus.is_empty() => Some("the machine has no GPU".into()),
        Ok(inventory) => {
            let n_gpus = inventory.gpus.len() as u32;
            if n_gpus < n_pes {
                // Said on stdout, beside the suite's own lines: a test's output, not a log.
                println!("{n_pes} PEs share {n_gpus} GPU(s): PE i runs on GPU i mod {n_gpus}");
            }
            None
        }
    }
}

/// A CUDA run of `n_pes` PEs, sharing GPUs if the machine has fewer.
///
/// # Errors
/// The launcher's, if CUDA cannot run `n_pes` PEs here.
pub fn cuda(n_pes: u32) -> Result<Cuda, LaunchError> {
    Cuda::builder().pes(n_pes).share_gpus(true).build()
}

/// Runs `body` on `n_pes` CUDA PEs and returns the report, failing with every PE's error if
/// any PE's check failed.
///
/// # Errors
/// [`RunError::Failed`] if a check failed; another [`RunError`] if the run could not happen.
pub fn run_on_cuda(
    n_pes: u32,
    body: impl Fn(&Shmem<CudaBackend>) -> Result<(), BodyError> + Sync,
) -> Result<CudaReport, RunError> {
    let cuda = cuda(n_pes)?;
    // The bodies need a few KiB, but `heap_growth` wants a heap past the first 64 MiB step
    // of backing, so that it grows; the heap's room beyond what is backed costs nothing.
    let (report, failures) = run_body(cuda, 256 << 20, body)?;
    if failures.is_empty() {
        Ok(report)
    } else {
        Err(RunError::Failed {
            run: format!("{n_pes} CUDA PEs on {:?}", report.gpus),
            failures,
        })
    }
}
