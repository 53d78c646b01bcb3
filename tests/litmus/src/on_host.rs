//! One execution of a litmus test on the host backend (`hw::host`): a thread per PE over
//! shared memory. Run under shuttle, the thread schedule is the checker's; run plainly, the
//! operating system's.

use hw::Launcher;
use hw::Topology;
use hw::host::{Host, HostBackend};
use model::litmus::{Config, Litmus, Outcome};

use crate::{ExecutionError, outcome_of_pes, run_pe};

/// Runs `test` once under `config`'s rules on host PEs and returns its outcome, or every
/// failing PE's error (a wait that failed, a launch that could not start).
///
/// The host backend is load/store everywhere and completes each operation as it is issued,
/// so only configurations whose pairs are all NVLink (`nv-nvl`, `os`) describe it.
///
/// # Errors
/// [`ExecutionError`]: what failed, naming the PEs.
pub fn run_on_host(test: &Litmus, config: &Config) -> Result<Outcome, ExecutionError> {
    let topology = Topology::single_host(test.n_pes)?;
    let host = Host::builder(topology)
        .pes(test.n_pes)
        .build()
        .map_err(|source| ExecutionError::Backend {
            backend: "host",
            source,
        })?;
    let (results, _report) = host.launch(|dev| run_pe::<HostBackend>(test, config, &dev))?;
    Ok(outcome_of_pes(test, results)?)
}
