//! What every example of the NVSHMEM guide shares: run one built-in workload on the simulator and report.
//!
//! The programs themselves are in `tools/src/workloads/` (one file each, written as kernels
//! with `Shmem::launch_kernel`); an example runs one of them so it can be started, read and
//! changed on its own.

use std::process::ExitCode;

use anyhow::Context;
use rshmem::{Config, run};
use sim::Sim;
use tools::workloads;

/// Runs the workload `name` on the PEs and topology of the command line (default: 8 PEs of
/// `hgx8`), prints each PE's check and the simulated time, and exits 0 only if every PE's
/// check passed.
///
/// Usage: `cargo run -p tools --example NAME [PES] [TOPOLOGY]`.
pub fn run_guide_example(name: &str) -> anyhow::Result<ExitCode> {
    let mut args = std::env::args().skip(1);
    let n_pes: u32 = match args.next() {
        Some(pes) => pes
            .parse()
            .with_context(|| format!("PES must be a number, not {pes:?}"))?,
        None => 8,
    };
    let topology = args.next().unwrap_or_else(|| "hgx8".to_owned());
    let workload = workloads::lookup(name)?;
    let machine = sim::topology::presets::preset(&topology)
        .with_context(|| format!("unknown topology preset {topology:?}; try hgx8 or ib-8"))?;
    let sim = Sim::builder(machine).pes(n_pes).seed(0).build()?;
    let output = run(sim, Config::from_env()?, |sh| {
        workloads::run_on_pe(workload, &workloads::Params::default(), sh)
    })?;
    let mut all_ok = true;
    for (pe, result) in output.results.iter().enumerate() {
        let line = match result {
            Ok(Ok(outcome)) => {
                all_ok &= outcome.ok;
                let verdict = if outcome.ok { "ok" } else { "FAILED" };
                format!("{verdict}: {}", outcome.detail)
            }
            Ok(Err(err)) => {
                all_ok = false;
                format!("FAILED: {err}")
            }
            Err(err) => {
                all_ok = false;
                format!("FAILED: {err}")
            }
        };
        println!("PE {pe} {line}");
    }
    println!(
        "{name} on {n_pes} PEs of {topology}: {} ({} ns simulated)",
        if all_ok { "ok" } else { "FAILED" },
        output.report.sim_time_ns
    );
    Ok(if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
