//! Every built-in workload on the simulator with its PEs as shuttle tasks
//! (`SimBuilder::shuttle_tasks`), under shuttle's PCT scheduler: the workloads' own checks
//! must hold under every schedule, and a failure prints the schedule (and, through
//! `shuttle::rand`, the simulator's seed) that replays it.
//!
//! Run: `RUSTFLAGS="--cfg rshmem_shuttle" CARGO_TARGET_DIR=target/shuttle cargo test --release
//! -p tools --bin rshmem under_shuttle`. `RSHMEM_SHUTTLE_ITERS` / 5 PCT schedules per
//! workload and machine (default 200), except `put-bw`.

use shuttle::rand::RngCore;
use shuttle::scheduler::PctScheduler;
use sim::Sim;

use super::{WORKLOADS, Workload, run_on_pe};

/// PCT's bug depth.
const PCT_DEPTH: usize = 3;
/// Simulated PEs and the world's event loop need more stack than shuttle's default 32 KiB.
const TASK_STACK_BYTES: usize = 512 << 10;
/// The machines: NVSwitch, and two InfiniBand hosts with a PE on each side of the network.
const MACHINES: [(&str, u32); 2] = [("hgx8", 4), ("ib-2", 16)];

/// PCT schedules for `workload`. `put-bw` gets one: a schedule costs seconds (it copies
/// 256 MiB payloads), and only PE 0 issues anything, so its schedules hardly differ.
fn iterations(workload: &Workload) -> usize {
    if workload.name == "put-bw" {
        return 1;
    }
    std::env::var("RSHMEM_SHUTTLE_ITERS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .map_or(200, |n| (n / 5).max(1))
}

/// One schedule: `workload` on `pes` PEs of `topology`, with a seed from shuttle's random
/// source; panics with the seed and every failed check.
fn run_once(workload: &Workload, topology: &str, pes: u32) {
    let seed = shuttle::rand::thread_rng().next_u64();
    let machine = sim::topology::load(topology).expect("a preset topology");
    let sim = Sim::builder(machine)
        .pes(pes)
        .seed(seed)
        .shuttle_tasks()
        .build()
        .expect("the machine holds the PEs");
    let output = rshmem::run(sim, rshmem::Config::default(), |sh| {
        run_on_pe(workload, &super::Params::default(), sh)
    })
    .unwrap_or_else(|e| panic!("{} on {topology}, seed {seed}: {e}", workload.name));
    let failures: Vec<String> = output
        .results
        .iter()
        .enumerate()
        .filter_map(|(pe, r)| match r {
            Ok(Ok(o)) if o.ok => None,
            Ok(Ok(o)) => Some(format!("PE {pe}: {}", o.detail)),
            Ok(Err(e)) => Some(format!("PE {pe}: {e}")),
            Err(e) => Some(format!("PE {pe}: {e}")),
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} on {pes} PEs of {topology}, simulator seed {seed}:\n  {}",
        workload.name,
        failures.join("\n  ")
    );
}

#[test]
fn every_workload_passes_on_simulator_tasks_under_pct() {
    for workload in WORKLOADS {
        for (topology, pes) in MACHINES {
            let mut config = shuttle::Config::new();
            config.stack_size = TASK_STACK_BYTES;
            let runner =
                shuttle::Runner::new(PctScheduler::new(PCT_DEPTH, iterations(workload)), config);
            let start = std::time::Instant::now();
            runner.run(move || run_once(workload, topology, pes));
            println!(
                "{:<12} {pes:>2} PEs of {topology:<5} {} schedules in {:.2} s",
                workload.name,
                iterations(workload),
                start.elapsed().as_secs_f64()
            );
        }
    }
}
