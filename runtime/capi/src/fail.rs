//! What a C call that cannot be done does: it prints one line naming the call, the PE, the
//! problem and the fix on standard error, and ends the process with status 1 (the launcher
//! then ends the other PEs and reports this one). C has no way to receive a typed error from
//! most OpenSHMEM calls, and going on after a failed put or barrier would be silent
//! corruption.

use std::io::Write;

use rshmem::ShmemError;

/// Why a C call failed, beyond the runtime's own errors.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CallError {
    /// The runtime refused the operation.
    #[error(transparent)]
    Shmem(#[from] ShmemError),
    /// The backend could not start this PE.
    #[error("could not start this PE: {0}")]
    Launch(#[from] hw::LaunchError),
    /// A call before `shmem_init`.
    #[error(
        "the library is not initialised; call shmem_init (or shmem_init_thread) before any \
         other OpenSHMEM call"
    )]
    NotInitialized,
    /// A call after `shmem_finalize`.
    #[error(
        "the library was finalised; make OpenSHMEM calls only between shmem_init and \
         shmem_finalize"
    )]
    Finalized,
    /// `shmem_init` after `shmem_finalize`.
    #[error("shmem_init after shmem_finalize; a program initialises the library once")]
    InitAfterFinalize,
    /// A context handle no live context has.
    #[error(
        "invalid context handle {0:#x}: pass SHMEM_CTX_DEFAULT or a context from \
         shmem_ctx_create that was not destroyed"
    )]
    InvalidContext(usize),
    /// A team handle no live team has.
    #[error(
        "invalid team handle {0:#x}: pass SHMEM_TEAM_WORLD, SHMEM_TEAM_SHARED or a team from \
         a split that was not destroyed (a split returns SHMEM_TEAM_INVALID to PEs outside \
         the new team)"
    )]
    InvalidTeam(usize),
    /// An argument outside what the call accepts.
    #[error("{0}")]
    Argument(String),
    /// Kernels built by nvcc could not be given the device-side API's state.
    #[error("binding the state of kernels built with rshmem/device_gpu.cuh: {0}")]
    DeviceState(String),
    /// The runtime panicked: a bug of rshmem, not of the program.
    #[error("internal error (please report it): {0}")]
    Internal(String),
}

/// Prints why `call` failed on `pe` (if the PE is known) and ends the process with status 1.
pub(crate) fn fail(call: &str, pe: Option<u32>, err: &CallError) -> ! {
    // A kernel's wait that timed out fails the CUDA calls after it: its report first.
    hw::cuda::report_pending_hangs();
    let who = pe.map_or_else(String::new, |pe| format!("PE {pe}: "));
    let message = format!("{who}{call}: {err}");
    // Why ignore a failed write: the process ends either way, and stderr is all there is.
    let _ = writeln!(std::io::stderr(), "rshmem: {message}");
    crate::sim_host::note_why(message);
    // Why exit and not abort: exit flushes the program's stdio buffers, so what it printed
    // before the failure is not lost. libc's exit, not the `exit` libshmem defines for
    // simulated PEs: a refused call ends the whole run, not only its PE.
    crate::sim_host::end_process(1)
}
