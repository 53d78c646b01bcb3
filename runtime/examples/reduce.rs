//! A sum allreduce of a vector by recursive doubling: in round `k` each PE swaps its partial
//! sum with the PE whose number differs in bit `k` and adds what it receives, so after
//! `log2 n` rounds every PE holds the sum of all PEs' vectors. Every PE checks its result.
//!
//! Run with `cargo run -p rshmem --example reduce`.

use std::error::Error;

use rshmem::{Cmp, Config, Shmem, ShmemError, SignalOp, run};
use sim::topology::presets::preset;
use sim::{Sim, SimBackend};

/// The length of each PE's vector.
const LEN: usize = 1024;

/// PE `pe`'s contribution.
fn contribution(pe: u32) -> Vec<u64> {
    (0..LEN as u64).map(|j| j * u64::from(pe + 1)).collect()
}

/// One PE's part: returns the reduced vector. `n_pes` must be a power of two.
fn allreduce(shmem: &Shmem<SimBackend>) -> Result<Vec<u64>, ShmemError> {
    let (me, n) = (shmem.my_pe(), shmem.n_pes());
    let rounds = n.trailing_zeros() as usize;
    // One inbox and one signal per round, so a fast partner never overwrites a round that
    // this PE has not consumed yet.
    let inbox = shmem.malloc::<u64>(LEN * rounds)?;
    let signals = shmem.calloc::<u64>(rounds)?;
    let mut partial = contribution(me);
    for round in 0..rounds {
        let partner = me ^ (1 << round);
        let slot = inbox.slice(round * LEN..(round + 1) * LEN)?;
        let signal = signals.at(round)?;
        shmem.put_signal(slot, &partial, signal, 1, SignalOp::Set, partner)?;
        shmem.signal_wait_until(signal, Cmp::Eq, 1)?;
        for (sum, theirs) in partial.iter_mut().zip(shmem.local(slot)?) {
            *sum += theirs;
        }
    }
    Ok(partial)
}

fn main() -> Result<(), Box<dyn Error>> {
    let topology = preset("hgx8").ok_or("the simulator has no hgx8 preset")?;
    let sim = Sim::builder(topology).build()?;
    let output = run(sim, Config::from_env()?, allreduce)?;
    let (results, report) = output.all_ok()?;
    let n = results.len() as u32;
    if !n.is_power_of_two() {
        return Err(format!("recursive doubling needs a power of two PEs, not {n}").into());
    }
    let want: Vec<u64> = (0..n).map(contribution).fold(vec![0; LEN], |mut acc, v| {
        acc.iter_mut().zip(v).for_each(|(a, x)| *a += x);
        acc
    });
    for (pe, result) in results.into_iter().enumerate() {
        let got = result?;
        if got != want {
            return Err(format!("PE {pe} reduced to a wrong vector").into());
        }
        println!(
            "PE {pe}: sum[1] = {}, sum[{}] = {}",
            got[1],
            LEN - 1,
            got[LEN - 1]
        );
    }
    println!("all {n} PEs hold the correct sum of {LEN} elements");
    println!("simulated time: {} ns", report.sim_time_ns);
    Ok(())
}
