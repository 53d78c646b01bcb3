//! Sum all-reduce of a vector by recursive doubling, written with one-sided gets.
//!
//! With `p2` the largest power of two not above `n`, PEs `p2..n` first fold their vectors
//! into PEs `0..n-p2`; the first `p2` PEs then run log2(p2) rounds, each getting the partner's
//! partial sum (`me ^ 2^k`) between barriers; finally the folded PEs get the result back.

use hw::Backend;
use rshmem::{Shmem, ShmemError, Sym};

use super::PeOutcome;

/// Elements per vector.
const LEN: usize = 1024;

/// The value PE `pe` contributes at index `i`: distinct per PE and index, so a lost or
/// doubled contribution changes the sum.
fn contribution(pe: u32, i: usize) -> i64 {
    (i64::from(pe) + 1) * 1_000_003 + i as i64
}

fn add_from<B: Backend>(
    sh: &Shmem<B>,
    acc: &mut [i64],
    partial: Sym<i64>,
    pe: u32,
) -> Result<(), ShmemError> {
    for (a, v) in acc.iter_mut().zip(sh.get(partial, pe)?) {
        *a = a.wrapping_add(v);
    }
    Ok(())
}

pub(super) fn run<B: Backend>(sh: &Shmem<B>) -> Result<PeOutcome, ShmemError> {
    let (me, n) = (sh.my_pe(), sh.n_pes());
    let p2 = 1u32 << (31 - n.leading_zeros());
    let partial = sh.malloc::<i64>(LEN)?;
    let mut acc: Vec<i64> = (0..LEN).map(|i| contribution(me, i)).collect();
    sh.set_local(partial, &acc)?;
    sh.barrier_all()?;
    // Fold the PEs beyond the largest power of two into the first ones.
    if me < n - p2 {
        add_from(sh, &mut acc, partial, me + p2)?;
    }
    let mut distance = 1;
    while distance < p2 {
        // Publish this round's partial sum only after everyone read the previous one.
        sh.barrier_all()?;
        if me < p2 {
            sh.set_local(partial, &acc)?;
        }
        sh.barrier_all()?;
        if me < p2 {
            add_from(sh, &mut acc, partial, me ^ distance)?;
        }
        distance *= 2;
    }
    sh.barrier_all()?;
    if me < p2 {
        sh.set_local(partial, &acc)?;
    }
    sh.barrier_all()?;
    if me >= p2 {
        acc = sh.get(partial, me - p2)?;
    }
    sh.barrier_all()?;
    sh.free(partial)?;
    let wrong = (0..LEN)
        .filter(|&i| {
            acc[i]
                != (0..n)
                    .map(|pe| contribution(pe, i))
                    .fold(0i64, i64::wrapping_add)
        })
        .count();
    Ok(PeOutcome::checked(
        wrong == 0,
        format!("PE {me}: {wrong} of {LEN} elements wrong"),
    ))
}
