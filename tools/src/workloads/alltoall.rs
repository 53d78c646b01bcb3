//! Alltoall as a kernel: the threads of one block fill this PE's source (block `j` for PE
//! `j`), the block exchanges with `alltoall_block` (one put per PE), and each thread checks
//! its share of the blocks received.

use hw::Backend;
use rshmem::{Dim3, Shmem, ShmemError};

use super::PeOutcome;

/// Elements per block.
const BLOCK: usize = 8;
/// Threads of the block; each fills and checks a contiguous share of the blocks.
const THREADS: u32 = 32;

/// The element `i` of the block PE `from` sends to PE `to`.
fn element(from: u32, to: u32, i: usize) -> u64 {
    (u64::from(from) << 40) | (u64::from(to) << 16) | i as u64
}

/// The blocks thread `rank` of a block of `THREADS` fills and checks, of `n` in all.
fn share(rank: u32, n: u32) -> std::ops::Range<usize> {
    let per = (n as usize).div_ceil(THREADS as usize);
    let start = (rank as usize * per).min(n as usize);
    start..(start + per).min(n as usize)
}

pub(super) fn run<B: Backend>(sh: &Shmem<B>) -> Result<PeOutcome, ShmemError> {
    let (me, n) = (sh.my_pe(), sh.n_pes());
    let source = sh.calloc::<u64>(BLOCK * n as usize)?;
    let dest = sh.calloc::<u64>(BLOCK * n as usize)?;
    let wrong = sh.launch_kernel(Dim3::linear(1), Dim3::linear(THREADS), async |t| {
        let blocks = share(t.thread_rank(), n);
        let elements = blocks.start * BLOCK..blocks.end * BLOCK;
        // Why a block: a local of an async body lives across its awaits, and at 4096 PEs
        // every thread's copy of its share held 1 GiB while the exchange ran.
        {
            let mine: Vec<u64> = blocks
                .clone()
                .flat_map(|to| (0..BLOCK).map(move |i| element(me, to as u32, i)))
                .collect();
            t.set_local(source.slice(elements.clone())?, &mine)?;
        }
        t.block().alltoall(dest, source).await?;
        let got = t.local(dest.slice(elements)?)?;
        Ok(blocks
            .zip(got.chunks(BLOCK))
            .filter(|(from, b)| (0..BLOCK).any(|i| b[i] != element(*from as u32, me, i)))
            .count())
    })?;
    let wrong: usize = wrong.into_iter().sum();
    sh.free(dest)?;
    sh.free(source)?;
    Ok(PeOutcome::checked(
        wrong == 0,
        format!("PE {me}: {wrong} of {n} blocks wrong"),
    ))
}
