//! Every PE writes its number into PE 0's table; PE 0 checks the table.

use hw::Backend;
use rshmem::{Shmem, ShmemError};

use super::PeOutcome;

pub(super) fn run<B: Backend>(sh: &Shmem<B>) -> Result<PeOutcome, ShmemError> {
    let (me, n) = (sh.my_pe(), sh.n_pes());
    let table = sh.calloc::<u32>(n as usize)?;
    sh.p(table.at(me as usize)?, me + 1, 0)?;
    sh.barrier_all()?;
    let outcome = if me == 0 {
        let got = sh.local(table)?;
        let want: Vec<u32> = (1..=n).collect();
        PeOutcome::checked(
            got == want,
            format!(
                "PE 0 heard from {} of {n} PEs",
                got.iter().filter(|&&v| v != 0).count()
            ),
        )
    } else {
        PeOutcome::checked(true, "")
    };
    sh.free(table)?;
    Ok(outcome)
}
