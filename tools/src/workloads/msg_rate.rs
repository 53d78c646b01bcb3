//! A small-message stream: every PE puts 8-byte values to a rotating partner, completing with
//! quiet every `WINDOW` puts, then checks every slot it received. It exists to measure how
//! many small operations per wall second the backend sustains (BENCHMARKS.md).

use hw::Backend;
use rshmem::{Shmem, ShmemError};

use super::PeOutcome;

/// Puts each PE issues.
const PUTS_PER_PE: usize = 1024;
/// Puts between two quiets: enough in flight to exercise reordering and link sharing.
const WINDOW: usize = 64;

/// The partner PE `from` writes at step `step`. Every partner but `from` itself in turn, so
/// for a given receiver and step exactly one PE writes its slot.
fn partner(from: u32, step: usize, n: u32) -> u32 {
    if n == 1 {
        return from;
    }
    let hop = 1 + (step % (n as usize - 1)) as u32;
    (from + hop) % n
}

/// The PE that writes slot `step` of `to`: the inverse of `partner`.
fn writer(to: u32, step: usize, n: u32) -> u32 {
    if n == 1 {
        return to;
    }
    let hop = 1 + (step % (n as usize - 1)) as u32;
    (to + n - hop) % n
}

fn value(from: u32, step: usize) -> u64 {
    (u64::from(from) << 32) | (step as u64 + 1)
}

pub(super) fn run<B: Backend>(sh: &Shmem<B>) -> Result<PeOutcome, ShmemError> {
    let (me, n) = (sh.my_pe(), sh.n_pes());
    let slots = sh.calloc::<u64>(PUTS_PER_PE)?;
    for step in 0..PUTS_PER_PE {
        sh.p(slots.at(step)?, value(me, step), partner(me, step, n))?;
        if (step + 1) % WINDOW == 0 {
            sh.quiet()?;
        }
    }
    sh.barrier_all()?;
    let got = sh.local(slots)?;
    let wrong = got
        .iter()
        .enumerate()
        .filter(|&(step, &v)| v != value(writer(me, step, n), step))
        .count();
    sh.free(slots)?;
    Ok(PeOutcome::checked(
        wrong == 0,
        format!("PE {me}: {wrong} of {PUTS_PER_PE} slots wrong"),
    ))
}

#[cfg(test)]
mod tests {
    use super::{partner, writer};

    #[test]
    fn writer_inverts_partner() {
        for n in [1, 2, 3, 8, 13] {
            for from in 0..n {
                for step in 0..40 {
                    assert_eq!(writer(partner(from, step, n), step, n), from, "n={n}");
                }
            }
        }
    }
}
