//! A token travels around a ring of PEs: each PE waits for it, adds its own number, and
//! passes it on with a put-with-signal. PE 0 checks the total when it comes back.
//!
//! Run with `cargo run -p rshmem --example ring`.

use std::error::Error;

use rshmem::{Cmp, Config, Shmem, ShmemError, SignalOp, run};
use sim::topology::presets::preset;
use sim::{Sim, SimBackend};

/// One PE's part: returns the token as this PE saw it.
fn pass_token(shmem: &Shmem<SimBackend>) -> Result<u64, ShmemError> {
    let (me, n) = (shmem.my_pe(), shmem.n_pes());
    let token = shmem.calloc::<u64>(1)?;
    let arrived = shmem.calloc::<u64>(1)?;
    let next = (me + 1) % n;
    let value = if me == 0 {
        shmem.put_signal(token, &[0], arrived, 1, SignalOp::Set, next)?;
        shmem.signal_wait_until(arrived, Cmp::Eq, 1)?;
        shmem.g(token, me)?
    } else {
        shmem.signal_wait_until(arrived, Cmp::Eq, 1)?;
        let value = shmem.g(token, me)? + u64::from(me);
        shmem.put_signal(token, &[value], arrived, 1, SignalOp::Set, next)?;
        value
    };
    Ok(value)
}

fn main() -> Result<(), Box<dyn Error>> {
    let topology = preset("hgx8").ok_or("the simulator has no hgx8 preset")?;
    let sim = Sim::builder(topology).build()?;
    let output = run(sim, Config::from_env()?, pass_token)?;
    let (values, report) = output.all_ok()?;
    let values = values
        .into_iter()
        .collect::<Result<Vec<u64>, ShmemError>>()?;
    for (pe, value) in values.iter().enumerate() {
        println!("PE {pe} saw the token at {value}");
    }
    let n = values.len() as u64;
    let want = n * (n - 1) / 2;
    if values[0] != want {
        return Err(format!("the token came back as {}, expected {want}", values[0]).into());
    }
    println!("the token came back to PE 0 as {want}, as expected");
    println!("simulated time: {} ns", report.sim_time_ns);
    Ok(())
}
