//! The harness that runs conformance bodies on the host backend (`hw::host`): one OS thread
//! per PE, real atomics and real races, so a body can fail only some of the time; the suites
//! run each body several times.

use hw::Topology;
use hw::host::{Host, HostBackend, HostReport};
use rshmem::Shmem;

use crate::{BodyError, RunError, run_body};

/// The PE counts each body runs with on the host backend.
pub const HOST_PES: [u32; 3] = [2, 4, 8];

/// How many times each body runs per PE count (thread schedules differ from run to run).
pub const HOST_REPEATS: u32 = 5;

/// Runs `body` on `n_pes` host PEs and returns the report, failing with every PE's error if
/// any PE's check failed.
///
/// # Errors
/// [`RunError::Failed`] if a check failed; another [`RunError`] if the run could not happen.
pub fn run_on_host(
    n_pes: u32,
    body: impl Fn(&Shmem<HostBackend>) -> Result<(), BodyError> + Sync,
) -> Result<HostReport, RunError> {
    // A small heap keeps the zeroed allocation cheap; the bodies need a few KiB.
    run_on_host_with_heap(n_pes, 4 << 20, body)
}

/// [`run_on_host`] with a symmetric heap of `heap_bytes` per PE. Under shuttle every word
/// of the heap is a modelled atomic, so its suite uses a heap of a few KiB.
///
/// # Errors
/// As [`run_on_host`].
pub fn run_on_host_with_heap(
    n_pes: u32,
    heap_bytes: u64,
    body: impl Fn(&Shmem<HostBackend>) -> Result<(), BodyError> + Sync,
) -> Result<HostReport, RunError> {
    let topology = Topology::single_host(n_pes)?;
    let host = Host::builder(topology).pes(n_pes).build()?;
    let (report, failures) = run_body(host, heap_bytes, body)?;
    if failures.is_empty() {
        Ok(report)
    } else {
        Err(RunError::Failed {
            run: format!("{n_pes} host PEs"),
            failures,
        })
    }
}

/// Runs `body` with every PE count of [`HOST_PES`], [`HOST_REPEATS`] times each.
///
/// # Panics
/// With every failing run and its errors, if any run failed.
pub fn host_conformance(body: impl Fn(&Shmem<HostBackend>) -> Result<(), BodyError> + Sync + Copy) {
    let failures: Vec<String> = HOST_PES
        .iter()
        .flat_map(|&n| (0..HOST_REPEATS).map(move |_| n))
        .filter_map(|n| run_on_host(n, body).err())
        .map(|e| e.to_string())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
