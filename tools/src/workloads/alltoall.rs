//! Every PE puts block `j` of its source to PE `j`'s destination at block `me`, completes
//! with a barrier, and checks every block it received.

use hw::Backend;
use rshmem::{Shmem, ShmemError};

use super::PeOutcome;

/// Elements per block.
const BLOCK: usize = 8;

/// The element `i` of the block PE `from` sends to PE `to`.
fn element(from: u32, to: u32, i: usize) -> u64 {
    (u64::from(from) << 40) | (u64::from(to) << 16) | i as u64
}

pub(super) fn run<B: Backend>(sh: &Shmem<B>) -> Result<PeOutcome, ShmemError> {
    let (me, n) = (sh.my_pe(), sh.n_pes());
    let dest = sh.calloc::<u64>(BLOCK * n as usize)?;
    let mut block = [0u64; BLOCK];
    // Start with the right neighbour so that PEs do not all hit PE 0 first.
    for step in 0..n {
        let to = (me + step) % n;
        for (i, e) in block.iter_mut().enumerate() {
            *e = element(me, to, i);
        }
        let at = dest.slice(BLOCK * me as usize..BLOCK * (me as usize + 1))?;
        sh.put_nbi(at, &block, to)?;
    }
    sh.barrier_all()?;
    let got = sh.local(dest)?;
    let wrong = got
        .chunks(BLOCK)
        .enumerate()
        .filter(|(from, b)| {
            b.iter()
                .enumerate()
                .any(|(i, &v)| v != element(*from as u32, me, i))
        })
        .count();
    sh.free(dest)?;
    Ok(PeOutcome::checked(
        wrong == 0,
        format!("PE {me}: {wrong} of {n} blocks wrong"),
    ))
}
