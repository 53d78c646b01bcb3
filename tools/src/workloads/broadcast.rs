//! Broadcast as a kernel: the threads of one block fill this PE's source, the block
//! broadcasts PE 0's with `broadcast_block`, then the last PE's into the same destination,
//! and each thread checks its share after each.

use hw::Backend;
use rshmem::{Dim3, Shmem, ShmemError};

use super::PeOutcome;

/// Elements broadcast.
const LEN: usize = 512;
/// Threads of the block; each fills and checks `LEN / THREADS` contiguous elements.
const THREADS: u32 = 64;

/// Element `i` of PE `pe`'s source in round `round`.
fn value(pe: u32, round: u32, i: usize) -> u64 {
    (u64::from(pe) << 40) | (u64::from(round) << 32) | (i as u64 + 1)
}

pub(super) fn run<B: Backend>(sh: &Shmem<B>) -> Result<PeOutcome, ShmemError> {
    let (me, n) = (sh.my_pe(), sh.n_pes());
    let source = sh.calloc::<u64>(LEN)?;
    let dest = sh.calloc::<u64>(LEN)?;
    let roots = [0, n - 1];
    let wrong = sh.launch_kernel(Dim3::linear(1), Dim3::linear(THREADS), async |t| {
        let per = LEN / THREADS as usize;
        let share = t.thread_rank() as usize * per..(t.thread_rank() as usize + 1) * per;
        let mut wrong = 0;
        for (round, root) in (0u32..).zip(roots) {
            let mine: Vec<u64> = share.clone().map(|i| value(me, round, i)).collect();
            t.set_local(source.slice(share.clone())?, &mine)?;
            t.block().broadcast(dest, source, root).await?;
            let got = t.local(dest.slice(share.clone())?)?;
            wrong += share
                .clone()
                .zip(got)
                .filter(|&(i, v)| v != value(root, round, i))
                .count();
        }
        Ok(wrong)
    })?;
    let wrong: usize = wrong.into_iter().sum();
    sh.free(dest)?;
    sh.free(source)?;
    Ok(PeOutcome::checked(
        wrong == 0,
        format!("PE {me}: {wrong} of {} elements wrong", 2 * LEN),
    ))
}
