//! Every PE of a simulated 8-GPU node says hello.
//!
//! Run with `cargo run -p rshmem --example hello`.

use std::error::Error;

use rshmem::{Config, run};
use sim::Sim;
use sim::topology::presets::preset;

fn main() -> Result<(), Box<dyn Error>> {
    let topology = preset("hgx8").ok_or("the simulator has no hgx8 preset")?;
    let sim = Sim::builder(topology).build()?;
    let output = run(sim, Config::from_env()?, |shmem| {
        format!(
            "hello from PE {} of {} at t={}ns",
            shmem.my_pe(),
            shmem.n_pes(),
            shmem.now_ns()
        )
    })?;
    let (lines, report) = output.all_ok()?;
    for line in lines {
        println!("{line}");
    }
    println!("simulated time: {} ns", report.sim_time_ns);
    Ok(())
}
