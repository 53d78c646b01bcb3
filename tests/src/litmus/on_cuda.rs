//! One execution of a litmus test on the CUDA backend (`hw::cuda`): a thread per PE, PE `i`
//! on GPU `i` (or GPU `i mod n` on a machine with fewer GPUs, see `crate::cuda`), every
//! operation a copy or an atomic kernel on a CUDA stream.

use hw::Launcher;
use hw::cuda::CudaBackend;
use model::litmus::{Config, Litmus, Outcome};

use super::{outcome_of_pes, run_pe};

/// Runs `test` once under `config`'s rules on CUDA PEs and returns its outcome, or every
/// failing PE's error.
///
/// The GPUs of one host are joined by NVLink, so only configurations whose pairs are all
/// NVLink (`nv-nvl`, `os`) describe it.
///
/// # Errors
/// A description of what failed, naming the PEs.
pub fn run_on_cuda(test: &Litmus, config: &Config) -> Result<Outcome, String> {
    let cuda = crate::cuda::cuda(test.n_pes).map_err(|e| format!("cuda: {e}"))?;
    let (results, _report) = cuda
        .launch(|dev| run_pe::<CudaBackend>(test, config, &dev))
        .map_err(|e| format!("launch: {e}"))?;
    outcome_of_pes(test, results)
}
