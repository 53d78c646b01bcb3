//! `global_exit`: one PE ends the whole run (`shmem_global_exit`).
//!
//! How the exit travels, with no change to the hardware contract: [`crate::run()`] gives every
//! PE of the process one [`ExitFlag`]. `global_exit` records the caller and its status there
//! and unwinds the caller's program with a payload of its own (through `resume_unwind`, so no
//! panic message is printed). Every other PE unwinds the same way at its next SHMEM call:
//! each one checks an address, blocks or reaches a peer, and those three checks look at the
//! flag (`PeState::local_range`, `remote_range`, `deadline`).
//!
//! A PE already blocked inside the backend when the exit happens leaves its wait when the wait
//! ends: on the simulator as soon as no PE can make progress (its deadlock detection wakes
//! every blocked PE), on the host and CUDA backends at the wait's deadline
//! (`RSHMEM_WAIT_TIMEOUT_MS`). It then stops at its next call, or returns the error to its
//! program. Either way [`crate::run()`] reports [`crate::PeError::GlobalExit`] for every PE
//! whose program or teardown did not complete, the caller included: once a PE exited, the run
//! is over, and what failed after that is its consequence.
//!
//! In a multi-process run (`rshmem run -n`) the flag is per process. The caller's `run`
//! returns the exit; its program then ends its process with the status
//! ([`crate::RunOutput::global_exit`]), and the launcher ends the other ranks, as it does when
//! any rank fails.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::OnceLock;

use hw::Backend;

use crate::TRACING_TARGET;
use crate::run::PeError;
use crate::shmem::Shmem;

/// Whether, and how, a PE of this process called global_exit. Shared by every PE of a run.
#[derive(Debug, Default)]
pub(crate) struct ExitFlag {
    /// The first caller and its status; later calls do not change them.
    exit: OnceLock<(u32, i32)>,
}

/// The payload that unwinds a PE's program after a global exit.
#[derive(Debug)]
struct ExitUnwind;

impl ExitFlag {
    /// Unwinds this PE's program if a PE called global_exit.
    pub(crate) fn stop_if_exited(&self) {
        if self.exit.get().is_some() {
            resume_unwind(Box::new(ExitUnwind));
        }
    }

    /// Runs one PE's life (`life`: init, program, finalize) and reports
    /// [`PeError::GlobalExit`] if a global exit cut it short. A panic that has nothing to do
    /// with an exit goes on to the launcher, which reports it.
    pub(crate) fn run<R>(&self, life: impl FnOnce() -> Result<R, PeError>) -> Result<R, PeError> {
        let outcome = catch_unwind(AssertUnwindSafe(life));
        match (outcome, self.exit.get()) {
            (Ok(Ok(value)), _) => Ok(value),
            (_, Some(&(pe, status))) => Err(PeError::GlobalExit { pe, status }),
            (Ok(Err(err)), None) => Err(err),
            (Err(payload), None) => resume_unwind(payload),
        }
    }
}

impl<B: Backend> Shmem<B> {
    /// Ends the run with `status` (`shmem_global_exit`): this PE's program stops here, every
    /// other PE's at its next SHMEM call, and [`crate::run()`] reports
    /// [`PeError::GlobalExit`] with this PE and `status` for each of them
    /// ([`crate::RunOutput::global_exit`]). The first call wins if several PEs call it.
    ///
    /// A PE blocked in a wait when the exit happens stops when its wait ends: at once on the
    /// simulator, at its deadline (`RSHMEM_WAIT_TIMEOUT_MS`) on the host and CUDA backends.
    /// Under `rshmem run -n` the other processes are ended by the launcher once this one
    /// exits with the status.
    ///
    /// # Ordering
    /// None: operations still in flight are neither completed nor waited for, as when a
    /// process exits.
    ///
    /// # Errors
    /// None: it does not return. It unwinds this PE's program, so values the program owns are
    /// dropped.
    pub fn global_exit(&self, status: i32) -> ! {
        tracing::debug!(target: TRACING_TARGET, pe = self.my_pe, status, "global_exit");
        // Why ignore the result: a second exit keeps the first one's caller and status.
        let _ = self.exit.exit.set((self.my_pe, status));
        resume_unwind(Box::new(ExitUnwind))
    }
}
