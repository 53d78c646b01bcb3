//! Message passing through a flag: PE 0 puts a block of data to PE 1 and then a flag, with
//! or without a fence between them; PE 1 waits for the flag and reads the data.
//!
//! Without the fence the flag may arrive first (rule R1), so PE 1 can read stale data: a data
//! race that `rshmem check flag-nofence` reports. Whether a given seed shows stale data
//! depends on the simulator's jitter, so without the fence the check accepts any data.

use hw::Backend;
use rshmem::{Cmp, Shmem, ShmemError};

use super::PeOutcome;

/// Elements in the data block.
const LEN: usize = 16;

fn value(i: usize) -> u64 {
    0x5eed_0000 + i as u64
}

pub(super) fn run<B: Backend>(sh: &Shmem<B>, fence: bool) -> Result<PeOutcome, ShmemError> {
    let data = sh.calloc::<u64>(LEN)?;
    let flag = sh.calloc::<u64>(1)?;
    let outcome = match sh.my_pe() {
        0 => {
            let values: Vec<u64> = (0..LEN).map(value).collect();
            sh.put(data, &values, 1)?;
            if fence {
                sh.fence()?;
            }
            sh.p(flag, 1, 1)?;
            PeOutcome::checked(true, "")
        }
        1 => {
            sh.wait_until(flag, Cmp::Eq, 1)?;
            let got = sh.local(data)?;
            let stale = (0..LEN).filter(|&i| got[i] != value(i)).count();
            PeOutcome::checked(
                stale == 0 || !fence,
                format!("PE 1 read {stale} of {LEN} elements stale after the flag"),
            )
        }
        _ => PeOutcome::checked(true, ""),
    };
    sh.free(flag)?;
    sh.free(data)?;
    Ok(outcome)
}
