//! Ordering and synchronisation: fence, quiet, and the barriers.
//!
//! `sync_all` is a dissemination barrier (Hensgen, Finkel, Manber 1988): in round `k` each PE
//! signals the PE `2^k` places ahead and waits for the signal from the PE `2^k` places behind,
//! so after `ceil(log2 n)` rounds every PE has transitively heard from every other.
//! Each round has its own 64-bit counter in the heap; a PE adds 1 to its successor's counter
//! and waits until its own counter reaches the barrier's epoch (how many barriers it has
//! entered). Counters only grow, so they never need a reset, and a fast PE that is already in
//! the next barrier only pushes a counter beyond the epoch a slow PE waits for.

use std::cell::Cell;

use hw::{AmoKind, AmoOp, AmoWidth, Backend, Cmp, Device, Pe, Queue};

use crate::TRACING_TARGET;
use crate::error::ShmemError;
use crate::heap::{Heap, MIN_ALIGN_BYTES, Span};
use crate::shmem::{Shmem, local, remote};
use crate::wait::word_spec;

/// The size of one barrier counter, in bytes.
const COUNTER_BYTES: u64 = 8;

/// The state of this PE's barrier.
#[derive(Debug)]
pub(crate) struct Barrier {
    /// Where the counters start: one per round, identical on every PE.
    counters_offset: u64,
    rounds: u32,
    /// How many barriers this PE has entered.
    epoch: Cell<u64>,
}

impl Barrier {
    /// Reserves the counters of a barrier over `n_pes` PEs; must be the heap's first
    /// allocation on every PE so that the offsets agree.
    ///
    /// # Errors
    /// [`ShmemError::HeapExhausted`] if the heap cannot hold them.
    pub(crate) fn new(heap: &mut Heap, n_pes: u32) -> Result<Barrier, ShmemError> {
        // ceil(log2 n): the rounds after which 2^rounds >= n PEs have been reached.
        let rounds = u32::BITS - n_pes.saturating_sub(1).leading_zeros();
        let counters = heap.alloc(u64::from(rounds) * COUNTER_BYTES, MIN_ALIGN_BYTES, true)?;
        Ok(Barrier {
            counters_offset: counters.offset,
            rounds,
            epoch: Cell::new(0),
        })
    }

    /// The counter of `round`.
    fn counter(&self, round: u32) -> Span {
        Span {
            offset: self.counters_offset + u64::from(round) * COUNTER_BYTES,
            len_bytes: COUNTER_BYTES,
        }
    }
}

impl<B: Backend> Shmem<B> {
    /// Orders delivery: for each target PE, the puts, atomic updates and puts-with-signal this
    /// PE issued before the fence are delivered before those issued after it.
    ///
    /// # Ordering
    /// Orders delivery, not completion; does not order gets or fetched values (SPEC section 3).
    ///
    /// # Errors
    /// [`ShmemError::Queue`] if the queue was lost.
    pub fn fence(&self) -> Result<(), ShmemError> {
        tracing::trace!(target: TRACING_TARGET, pe = self.my_pe, op = "fence");
        Ok(self.queue.fence()?)
    }

    /// Waits until every operation this PE issued has completed, non-blocking ones included.
    ///
    /// # Ordering
    /// With NVLink only, the updates are then visible to every PE; with InfiniBand in the path,
    /// to a target PE once it runs its own wait, test, quiet or barrier (SPEC section 3).
    ///
    /// # Errors
    /// [`ShmemError::Queue`] if they do not complete within `RSHMEM_WAIT_TIMEOUT_MS` or no PE
    /// can make progress.
    pub fn quiet(&self) -> Result<(), ShmemError> {
        tracing::trace!(target: TRACING_TARGET, pe = self.my_pe, op = "quiet");
        Ok(self.queue.quiet(self.deadline())?)
    }

    /// Completes this PE's operations ([`Shmem::quiet`]) and waits until every PE has called
    /// `barrier_all` ([`Shmem::sync_all`]).
    ///
    /// # Errors
    /// As [`Shmem::quiet`] and [`Shmem::sync_all`].
    pub fn barrier_all(&self) -> Result<(), ShmemError> {
        self.quiet()?;
        self.sync_all()
    }

    /// Waits until every PE has called `sync_all` (or `barrier_all`).
    ///
    /// # Ordering
    /// Completes no memory operations: use [`Shmem::barrier_all`] for that (SPEC section 3).
    ///
    /// # Errors
    /// [`ShmemError::Queue`] if a PE does not arrive within `RSHMEM_WAIT_TIMEOUT_MS`, or no PE
    /// can make progress (a PE skipped the barrier).
    pub fn sync_all(&self) -> Result<(), ShmemError> {
        let barrier = &self.barrier;
        let epoch = barrier.epoch.get() + 1;
        barrier.epoch.set(epoch);
        tracing::debug!(target: TRACING_TARGET, pe = self.my_pe, epoch, "sync_all");
        let add_one = AmoOp {
            kind: AmoKind::Add,
            operand: 1,
            width: AmoWidth::W64,
        };
        for round in 0..barrier.rounds {
            let distance = 1u64 << round;
            // Why u64 and then `as`: the sum may pass u32::MAX, the remainder is below n_pes.
            let successor = (u64::from(self.my_pe) + distance) % u64::from(self.n_pes);
            let successor = Pe(successor as u32);
            let counter = barrier.counter(round);
            self.queue.amo(remote(counter, successor), add_one, false)?;
            let spec = word_spec::<u64>(local(counter), Cmp::Ge, epoch, "barrier");
            self.device.wait_until(spec, self.deadline())?;
        }
        Ok(())
    }
}
