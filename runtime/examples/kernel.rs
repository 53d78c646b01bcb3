//! The NVSHMEM guide's vector sum as a kernel on 8 simulated GPUs: each thread of one block sums a
//! strided part of its PE's vector, the threads store their partial sums, and the block sums
//! them over every PE with one block-scoped collective. Thread 0 of every PE then adds the
//! per-thread totals into the global sum. See docs/kernels.md.
//!
//! Run with `cargo run -p rshmem --example kernel`.

use std::error::Error;

use rshmem::{Config, Dim3, Shmem, ShmemError, run};
use sim::topology::presets::preset;
use sim::{Sim, SimBackend};

/// Elements of each PE's vector.
const N: usize = 1024;
/// Threads of the block.
const THREADS: u32 = 256;

/// One PE's part: launches the kernel and returns the global sum thread 0 computed.
fn vector_sum(shmem: &Shmem<SimBackend>) -> Result<f64, ShmemError> {
    let me = shmem.my_pe();
    // The NVSHMEM guide's vector: PE `me` holds `me + 1` at index 0 and zeros elsewhere.
    let local_vec: Vec<f64> = (0..N)
        .map(|i| if i == 0 { f64::from(me + 1) } else { 0.0 })
        .collect();
    let partials = shmem.calloc::<f64>(THREADS as usize)?;
    let totals = shmem.calloc::<f64>(THREADS as usize)?;
    let sums = shmem.launch_kernel(Dim3::linear(1), Dim3::linear(THREADS), async |t| {
        let tid = t.global_rank() as usize;
        let stride = t.grid_threads() as usize;
        let thread_sum: f64 = local_vec.iter().skip(tid).step_by(stride).sum();
        t.set_local(partials.at(tid)?, &[thread_sum])?;
        // Every thread of the block calls it; it is done once, over every PE.
        t.block().sum_reduce(totals, partials).await?;
        Ok(if tid == 0 {
            t.local(totals)?.iter().sum()
        } else {
            0.0
        })
    })?;
    shmem.free(totals)?;
    shmem.free(partials)?;
    Ok(sums[0])
}

fn main() -> Result<(), Box<dyn Error>> {
    let topology = preset("hgx8").ok_or("the simulator has no hgx8 preset")?;
    let sim = Sim::builder(topology).build()?;
    let output = run(sim, Config::from_env()?, vector_sum)?;
    let (sums, report) = output.all_ok()?;
    let n = sums.len() as u32;
    let want = f64::from(n * (n + 1) / 2);
    for (pe, sum) in sums.into_iter().enumerate() {
        let sum = sum?;
        println!("PE {pe}: global sum {sum}");
        if sum != want {
            return Err(format!("PE {pe} summed {sum}, expected {want}").into());
        }
    }
    println!("every PE has the global sum {want}");
    println!("simulated time: {} ns", report.sim_time_ns);
    Ok(())
}
