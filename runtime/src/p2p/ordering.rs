//! Ordering and synchronisation: fence and quiet on a context, and the world barriers.

use hw::{Backend, Queue};

use crate::TRACING_TARGET;
use crate::ctx::Ctx;
use crate::error::ShmemError;
use crate::shmem::Shmem;

impl<B: Backend> Ctx<B> {
    /// Orders delivery: for each target PE, the puts, atomic updates and puts-with-signal
    /// this context issued before the fence are delivered before those it issued after.
    ///
    /// # Ordering
    /// Orders delivery, not completion; does not order gets or fetched values, nor other
    /// contexts' operations (docs/ordering.md, docs/teams-and-contexts.md).
    ///
    /// # Errors
    /// [`ShmemError::Queue`] if the queue was lost.
    pub fn fence(&self) -> Result<(), ShmemError> {
        tracing::trace!(target: TRACING_TARGET, pe = self.my_pe, op = "fence");
        Ok(self.queue.fence()?)
    }

    /// Waits until every operation this context issued has completed, non-blocking ones
    /// included. Other contexts' operations are not waited for.
    ///
    /// # Ordering
    /// With NVLink only, the updates are then visible to every PE; with InfiniBand in the path,
    /// to a target PE once it runs its own wait, test, quiet or barrier (docs/ordering.md). The
    /// values of non-blocking fetching atomics are in their `fetch` words.
    ///
    /// # Errors
    /// [`ShmemError::Queue`] if they do not complete within `RSHMEM_WAIT_TIMEOUT_MS` or no PE
    /// can make progress.
    pub fn quiet(&self) -> Result<(), ShmemError> {
        tracing::trace!(target: TRACING_TARGET, pe = self.my_pe, op = "quiet");
        // A backend that completes at issue quiets at once: no clock read for a deadline. A
        // global exit still stops the PE here, as `deadline` would.
        if self.queue.quiet_now()? {
            self.exit.stop_if_exited();
        } else {
            self.queue.quiet(self.deadline())?;
        }
        self.land_fetches();
        Ok(())
    }

    /// Completes the operations this context issued to the PEs `pes` (`shmem_pe_quiet` of
    /// OpenSHMEM 1.6), numbered in the context's team.
    ///
    /// It is [`Ctx::quiet`]: the contract's queues complete everything at once, so operations
    /// to other PEs complete too. That is stronger than asked, never weaker, and costs no more
    /// than the quiet a per-PE completion would have to wait for anyway.
    ///
    /// # Ordering
    /// As [`Ctx::quiet`].
    ///
    /// # Errors
    /// [`ShmemError::PeOutOfRange`] (on the world team) or [`ShmemError::PeNotInTeam`] for
    /// a PE outside the context's team; [`ShmemError::TeamDestroyed`]; as [`Ctx::quiet`]
    /// otherwise.
    pub fn pe_quiet(&self, pes: &[u32]) -> Result<(), ShmemError> {
        for &pe in pes {
            self.team.to_world(pe)?;
        }
        self.quiet()
    }
}

impl<B: Backend> Shmem<B> {
    /// Completes the default context's operations ([`Ctx::quiet`]) and waits until every PE
    /// has called `barrier_all` ([`Shmem::sync_all`]). Other contexts need their own quiet
    /// first (docs/ordering.md).
    ///
    /// # Errors
    /// As [`Ctx::quiet`] and [`Shmem::sync_all`].
    pub fn barrier_all(&self) -> Result<(), ShmemError> {
        self.quiet()?;
        self.sync_all()
    }

    /// Waits until every PE has called `sync_all` (or `barrier_all`): [`Shmem::team_sync`]
    /// on the world team.
    ///
    /// # Ordering
    /// Completes no memory operations: use [`Shmem::barrier_all`] for that (docs/ordering.md).
    ///
    /// # Errors
    /// [`ShmemError::Queue`] if a PE does not arrive within `RSHMEM_WAIT_TIMEOUT_MS`, or no PE
    /// can make progress (a PE skipped the barrier).
    pub fn sync_all(&self) -> Result<(), ShmemError> {
        self.team_sync(self.team_world())
    }

    /// Completes the default context's operations and waits for every member of `team`
    /// (`shmem_team_barrier` of NVSHMEM; OpenSHMEM 1.5 spells it quiet + `team_sync`).
    ///
    /// # Errors
    /// As [`Shmem::team_sync`].
    pub fn team_barrier(&self, team: &crate::Team) -> Result<(), ShmemError> {
        self.quiet()?;
        self.team_sync(team)
    }
}
