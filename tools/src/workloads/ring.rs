//! The NVSHMEM guide's ring as a kernel: every thread of one block puts a value into the next PE's
//! slot for that thread with `p`, the block completes the puts with `barrier_all_block`, and
//! each thread checks the slot its counterpart on the previous PE filled.

use hw::Backend;
use rshmem::{Dim3, Shmem, ShmemError};

use super::PeOutcome;

/// Threads of the block.
const THREADS: u32 = 64;

/// What thread `rank` of PE `pe` sends: the NVSHMEM guide's `my_pe * 100`, per thread, never zero.
fn value(pe: u32, rank: u32) -> u64 {
    100 * u64::from(pe) + u64::from(rank) + 1
}

pub(super) fn run<B: Backend>(sh: &Shmem<B>) -> Result<PeOutcome, ShmemError> {
    let (me, n) = (sh.my_pe(), sh.n_pes());
    let (next, left) = ((me + 1) % n, (me + n - 1) % n);
    let slots = sh.calloc::<u64>(THREADS as usize)?;
    let wrong = sh.launch_kernel(Dim3::linear(1), Dim3::linear(THREADS), async |t| {
        let rank = t.thread_rank();
        let slot = slots.at(rank as usize)?;
        t.p(slot, value(me, rank), next).await?;
        t.block().barrier_all().await?;
        Ok(t.local(slot)?[0] != value(left, rank))
    })?;
    let wrong = wrong.into_iter().filter(|&w| w).count();
    sh.free(slots)?;
    Ok(PeOutcome::checked(
        wrong == 0,
        format!("PE {me}: {wrong} of {THREADS} slots wrong"),
    ))
}
