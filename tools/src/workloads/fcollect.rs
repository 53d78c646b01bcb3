//! Fcollect as a kernel: each thread of one block writes one element of this PE's
//! contribution, the block concatenates every PE's with `fcollect_block`, and each thread
//! checks its share of the result.

use hw::Backend;
use rshmem::{Dim3, Shmem, ShmemError};

use super::PeOutcome;

/// Threads of the block, and elements each PE contributes (one per thread).
const THREADS: u32 = 64;

/// Element `i` of PE `pe`'s contribution: the NVSHMEM guide's `my_pe * 10`, per element.
fn value(pe: u32, i: usize) -> u64 {
    10 * u64::from(pe) + (i as u64) * 100_000 + 1
}

pub(super) fn run<B: Backend>(sh: &Shmem<B>) -> Result<PeOutcome, ShmemError> {
    let (me, n) = (sh.my_pe(), sh.n_pes() as usize);
    let len = THREADS as usize;
    let source = sh.calloc::<u64>(len)?;
    let dest = sh.calloc::<u64>(len * n)?;
    let wrong = sh.launch_kernel(Dim3::linear(1), Dim3::linear(THREADS), async |t| {
        let rank = t.thread_rank() as usize;
        t.set_local(source.at(rank)?, &[value(me, rank)])?;
        t.block().fcollect(dest, source).await?;
        // Thread `rank` checks elements rank * n .. (rank + 1) * n of the n * len collected.
        let share = rank * n..(rank + 1) * n;
        let got = t.local(dest.slice(share.clone())?)?;
        Ok(share
            .zip(got)
            .filter(|&(at, v)| v != value((at / len) as u32, at % len))
            .count())
    })?;
    let wrong: usize = wrong.into_iter().sum();
    sh.free(dest)?;
    sh.free(source)?;
    Ok(PeOutcome::checked(
        wrong == 0,
        format!("PE {me}: {wrong} of {} elements wrong", len * n),
    ))
}
