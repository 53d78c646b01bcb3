//! One execution of a litmus test on the CUDA backend (`hw::cuda`): a thread per PE, PE `i`
//! on GPU `i` (or GPU `i mod n` on a machine with fewer GPUs, or on the GPUs a caller chose:
//! [`shared_gpus`]), every operation a copy or an atomic kernel on a CUDA stream.

use hw::Launcher;
use hw::cuda::{Cuda, CudaBackend};
use model::litmus::{Config, Litmus, Outcome};

use crate::{ExecutionError, outcome_of_pes, run_pe};

/// A CUDA run of `n_pes` PEs, sharing the GPUs if the machine has fewer
/// (`CudaBuilder::share_gpus`): litmus tests need as many PEs as they name, not as many GPUs.
/// With `gpus`, PE `i` runs on `gpus[i % len]` (`CudaBuilder::gpus`, checked against the
/// machine); without, on GPU `i % n`.
pub(crate) fn shared_gpus(n_pes: u32, gpus: Option<&[u32]>) -> Result<Cuda, ExecutionError> {
    let builder = Cuda::builder().pes(n_pes).share_gpus(true);
    let builder = match gpus {
        Some(gpus) => builder.gpus(gpus.to_vec()),
        None => builder,
    };
    builder.build().map_err(|source| ExecutionError::Backend {
        backend: "cuda",
        source,
    })
}

/// Runs `test` once under `config`'s rules on CUDA PEs and returns its outcome, or every
/// failing PE's error.
///
/// The GPUs of one host are joined by NVLink, so only configurations whose pairs are all
/// NVLink (`nv-nvl`, `os`) describe it.
///
/// # Errors
/// [`ExecutionError`]: what failed, naming the PEs.
pub fn run_on_cuda(test: &Litmus, config: &Config) -> Result<Outcome, ExecutionError> {
    let cuda = shared_gpus(test.n_pes, None)?;
    let (results, _report) = cuda.launch(|dev| run_pe::<CudaBackend>(test, config, &dev))?;
    Ok(outcome_of_pes(test, results)?)
}
