//! A data-race detector for symmetric memory.
//!
//! [`Checked`] wraps any [`hw::Launcher`]: the PEs run unchanged on the backend underneath,
//! while every queue operation, plain load and store, wait, fence, quiet and exchange is
//! recorded. Two accesses by different PEs to overlapping bytes race when at least one
//! writes, they are not both atomics, and no rule of `docs/ordering.md` orders the first
//! before the second. The rules are tracked as vector clocks (`docs/check.md` has them with
//! their sources); the races come back in the run's report, each operation pair once.
//!
//! ```
//! use rshmem::{Cmp, Config, check};
//! use sim::{Sim, topology::presets::preset};
//!
//! let sim = Sim::builder(preset("hgx8").unwrap()).pes(2).seed(3).build()?;
//! let (output, races) = check::run_checked(sim, Config::default(), |sh| {
//!     let data = sh.calloc::<u64>(4)?;
//!     let flag = sh.calloc::<u64>(1)?;
//!     if sh.my_pe() == 0 {
//!         sh.put(data, &[1, 2, 3, 4], 1)?;
//!         // Without this fence the flag may arrive before the data: a race.
//!         sh.fence()?;
//!         sh.p(flag, 1, 1)?;
//!     } else {
//!         sh.wait_until(flag, Cmp::Eq, 1)?;
//!         sh.local(data)?;
//!     }
//!     Ok::<_, rshmem::ShmemError>(())
//! })?;
//! assert!(races.is_empty(), "{races:?}");
//! assert!(output.results.iter().all(|r| matches!(r, Ok(Ok(())))));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! With InfiniBand in the machine (NVSHMEM semantics), a write that crossed a NIC is visible
//! to others than its target only after a consistency step of the target (rule R8); a load,
//! or an NVLink get or put, of it without one is a race ([`RaceCause::InfinibandVisibility`]).
//! The threads of a kernel launch (`Shmem::launch_kernel`, and CUDA programs on the
//! simulator) are checked against each other too ([`RaceCause::KernelThreads`]).
//!
//! What it cannot see: races between a PE's host code or SHMEM operations and its own
//! accesses (a put to itself and a plain load), and which of several writes a read returned
//! (it assumes every earlier one).

mod backend;
mod clock;
mod detector;
mod pe;
mod report;
mod shadow;
mod threads;

pub use backend::{Checked, CheckedBackend, CheckedDevice, CheckedQueue, CheckedReport};
pub use report::{AccessKind, Race, RaceAccess, RaceCause, ThreadAt};

use hw::Launcher;

use crate::config::Config;
use crate::run::{RunError, RunOutput, run};
use crate::shmem::Shmem;

/// What [`run_checked`] returns: the run's output, with the wrapped launcher's report, and
/// the races found.
pub type CheckedRun<R, Report> = (RunOutput<R, Report>, Vec<Race>);

/// Runs `pe_main` like [`crate::run()`] on `launcher` wrapped in [`Checked`], and returns the
/// output with the backend's own report and the races found.
///
/// # Errors
/// As [`crate::run()`].
pub fn run_checked<L, R, F>(
    launcher: L,
    config: Config,
    pe_main: F,
) -> Result<CheckedRun<R, L::Report>, RunError>
where
    L: Launcher,
    R: Send,
    F: Fn(&Shmem<CheckedBackend<L::B>>) -> R + Sync,
{
    let output = run(Checked::new(launcher), config, pe_main)?;
    let CheckedReport { backend, races } = output.report;
    let output = RunOutput {
        results: output.results,
        report: backend,
    };
    Ok((output, races))
}
