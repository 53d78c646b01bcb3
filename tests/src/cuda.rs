//! The harness that runs conformance bodies on the CUDA backend (`hw::cuda`): a thread per
//! PE, PE `i` on GPU `i`. On a machine with fewer GPUs than the test has PEs, the PEs share
//! them (`CudaBuilder::share_gpus`, PE `i` on GPU `i % n_gpus`) and the harness says so; suites
//! skip, saying why, on a machine without CUDA.

use hw::cuda::{Cuda, CudaBackend, CudaDevice, CudaReport, probe};
use hw::{Device, Instant, MemKind, Pe, SegmentKey};
use rshmem::Shmem;

use crate::{BodyError, run_body};

/// Why a run of `n_pes` CUDA PEs cannot happen on this machine, or `None` if it can.
pub fn unavailable(n_pes: u32) -> Option<String> {
    match probe() {
        Err(e) => Some(e.to_string()),
        Ok(inventory) if inventory.gpus.is_empty() => Some("the machine has no GPU".into()),
        Ok(inventory) => {
            let n_gpus = inventory.gpus.len() as u32;
            if n_gpus < n_pes {
                println!("{n_pes} PEs share {n_gpus} GPU(s): PE i runs on GPU i mod {n_gpus}");
            }
            None
        }
    }
}

/// A CUDA run of `n_pes` PEs, sharing GPUs if the machine has fewer.
///
/// # Errors
/// The launcher's, as text.
pub fn cuda(n_pes: u32) -> Result<Cuda, String> {
    Cuda::builder()
        .pes(n_pes)
        .share_gpus(true)
        .build()
        .map_err(|e| e.to_string())
}

/// Runs `body` on `n_pes` CUDA PEs and returns the report, failing with every PE's error if
/// any PE's check failed.
pub fn run_on_cuda(
    n_pes: u32,
    body: impl Fn(&Shmem<CudaBackend>) -> Result<(), BodyError> + Sync,
) -> Result<CudaReport, String> {
    let cuda = cuda(n_pes)?;
    // The bodies need a few KiB, but `heap_growth` wants a heap past the first 64 MiB step
    // of backing, so that it grows; the heap's room beyond what is backed costs nothing.
    let (report, failures) = run_body(cuda, 256 << 20, body)?;
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

/// Creates this PE's `Device` segment of `heap_bytes` and imports every PE's (collective): the
/// symmetric heap that a test or benchmark of the device-side API works in, as `Shmem` makes
/// its own at init.
///
/// # Errors
/// The device's or the exchange's error, as text.
pub fn share_device_heap(
    dev: &CudaDevice,
    heap_bytes: u64,
    deadline: Instant,
) -> Result<(), String> {
    let key = dev
        .create_segment(MemKind::Device, heap_bytes)
        .map_err(|e| e.to_string())?;
    let keys = dev.exchange(&key.0, deadline).map_err(|e| e.to_string())?;
    for (peer, bytes) in (0..).zip(keys) {
        dev.import_segment(Pe(peer), MemKind::Device, &SegmentKey(bytes))
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}
