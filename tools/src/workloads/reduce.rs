//! The NVSHMEM guide's vector sum as a kernel: each thread of one block sums a strided part of this
//! PE's 1024-element vector, the block reduces the per-thread partial sums over every PE with
//! `sum_reduce_block`, and each thread checks its total; thread 0 also checks the grand total
//! of every element of every PE.

use hw::Backend;
use rshmem::{Dim3, Shmem, ShmemError};

use super::PeOutcome;

/// Elements per vector.
const LEN: usize = 1024;
/// Threads of the block; thread `t` sums elements `t, t + THREADS, ...`.
const THREADS: u32 = 256;

/// The value PE `pe` contributes at index `i`: distinct per PE and index, so a lost or
/// doubled contribution changes the sum.
fn contribution(pe: u32, i: usize) -> i64 {
    (i64::from(pe) + 1) * 1_000_003 + i as i64
}

/// Thread `rank`'s partial sum of PE `pe`'s vector.
fn partial(pe: u32, rank: u32) -> i64 {
    (rank as usize..LEN)
        .step_by(THREADS as usize)
        .map(|i| contribution(pe, i))
        .sum()
}

pub(super) fn run<B: Backend>(sh: &Shmem<B>) -> Result<PeOutcome, ShmemError> {
    let (me, n) = (sh.my_pe(), sh.n_pes());
    let partials = sh.calloc::<i64>(THREADS as usize)?;
    let totals = sh.calloc::<i64>(THREADS as usize)?;
    let wrong = sh.launch_kernel(Dim3::linear(1), Dim3::linear(THREADS), async |t| {
        let rank = t.thread_rank();
        t.set_local(partials.at(rank as usize)?, &[partial(me, rank)])?;
        t.block().sum_reduce(totals, partials).await?;
        let want: i64 = (0..n).map(|pe| partial(pe, rank)).sum();
        let mut wrong = usize::from(t.local(totals.at(rank as usize)?)?[0] != want);
        if rank == 0 {
            let grand: i64 = t.local(totals)?.iter().sum();
            let want: i64 = (0..n)
                .flat_map(|pe| (0..LEN).map(move |i| contribution(pe, i)))
                .sum();
            wrong += usize::from(grand != want);
        }
        Ok(wrong)
    })?;
    let wrong: usize = wrong.into_iter().sum();
    sh.free(totals)?;
    sh.free(partials)?;
    Ok(PeOutcome::checked(
        wrong == 0,
        format!("PE {me}: {wrong} of {} sums wrong", THREADS + 1),
    ))
}
