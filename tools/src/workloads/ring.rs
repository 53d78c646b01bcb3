//! Each PE puts its number to the next PE, completes with quiet, meets at a barrier, and
//! checks it received its left neighbour's number.

use hw::Backend;
use rshmem::{Shmem, ShmemError};

use super::PeOutcome;

pub(super) fn run<B: Backend>(sh: &Shmem<B>) -> Result<PeOutcome, ShmemError> {
    let (me, n) = (sh.my_pe(), sh.n_pes());
    let slot = sh.calloc::<u64>(1)?;
    let next = (me + 1) % n;
    sh.put(slot, &[u64::from(me) + 1], next)?;
    sh.quiet()?;
    sh.barrier_all()?;
    let got = sh.local(slot)?[0];
    let left = (me + n - 1) % n;
    let want = u64::from(left) + 1;
    sh.free(slot)?;
    Ok(PeOutcome::checked(
        got == want,
        format!("PE {me} got {got}, expected {want}"),
    ))
}
