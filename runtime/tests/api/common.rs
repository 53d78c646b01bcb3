//! What the API suites share: simulated machines, the usual configuration, and runs that name
//! the failing PE.

use rshmem::{Config, KernelError, PeError, Shmem, ShmemError, run};
use sim::{Sim, SimBackend, SimBuilder, SimReport};

/// The builder of a run of `n_pes` PEs on the preset `topology` with `seed`, for a suite that
/// sets more than [`sim`] does.
pub fn sim_builder(topology: &str, n_pes: u32, seed: u64) -> SimBuilder {
    let topology = sim::topology::presets::preset(topology).expect("the preset exists");
    Sim::builder(topology).pes(n_pes).seed(seed)
}

/// A run of `n_pes` PEs on the preset `topology` with `seed`.
pub fn sim(topology: &str, n_pes: u32, seed: u64) -> Sim {
    sim_builder(topology, n_pes, seed)
        .build()
        .expect("the preset has enough GPUs")
}

/// A small heap and a short deadline, so exhaustion and hangs show quickly.
pub fn config() -> Config {
    Config::default()
        .device_heap_size(1 << 20)
        .wait_timeout_ms(100)
}

/// Every PE's value of `pe_main` on `machine` with `config`, and the run's report; prints the
/// seed so a failure can be replayed, and panics naming the first PE that failed.
pub fn run_values_and_report<R: Send>(
    machine: Sim,
    config: Config,
    pe_main: impl Fn(&Shmem<SimBackend>) -> R + Sync,
) -> (Vec<R>, SimReport) {
    let seed = machine.seed();
    println!("seed {seed:#x}");
    let output = run(machine, config, pe_main).expect("the PEs launch");
    match output.all_ok() {
        Ok(values_and_report) => values_and_report,
        Err(err) => panic!("seed {seed:#x}: {err}"),
    }
}

/// Every PE's value of `pe_main` on `machine` with `config`; as [`run_values_and_report`].
pub fn run_values<R: Send>(
    machine: Sim,
    config: Config,
    pe_main: impl Fn(&Shmem<SimBackend>) -> R + Sync,
) -> Vec<R> {
    run_values_and_report(machine, config, pe_main).0
}

/// Every PE's value of `pe_main` on `n_pes` PEs of `topology` with `seed` and [`config`];
/// panics naming the first PE that failed.
pub fn run_on<R: Send>(
    topology: &str,
    n_pes: u32,
    seed: u64,
    pe_main: impl Fn(&Shmem<SimBackend>) -> R + Sync,
) -> Vec<R> {
    println!("{topology}, {n_pes} PEs");
    run_values(sim(topology, n_pes, seed), config(), pe_main)
}

/// As [`run_on`] with seed 0.
pub fn run_ok<R: Send>(
    topology: &str,
    n_pes: u32,
    pe_main: impl Fn(&Shmem<SimBackend>) -> R + Sync,
) -> Vec<R> {
    run_on(topology, n_pes, 0, pe_main)
}

/// Every PE's result of `pe_main` on `n_pes` PEs of `topology` with seed 0, failures included.
pub fn run_all<R: Send>(
    topology: &str,
    n_pes: u32,
    config: Config,
    pe_main: impl Fn(&Shmem<SimBackend>) -> R + Sync,
) -> Vec<Result<R, PeError>> {
    println!("{topology}, {n_pes} PEs, seed 0");
    run(sim(topology, n_pes, 0), config, pe_main)
        .expect("the PEs launch")
        .results
}

/// What each PE's program returned, errors included, and the run's report, for programs that
/// check their own errors (kernels); panics naming a PE that did not run to its end.
pub fn run_programs<R: Send>(
    machine: Sim,
    config: Config,
    pe_main: impl Fn(&Shmem<SimBackend>) -> Result<R, ShmemError> + Sync,
) -> (Vec<Result<R, ShmemError>>, SimReport) {
    let output = run(machine, config, pe_main).expect("the PEs launch");
    let values = output
        .results
        .into_iter()
        .enumerate()
        .map(|(pe, r)| r.unwrap_or_else(|e| panic!("PE {pe} did not run to its end: {e}")))
        .collect();
    (values, output.report)
}

/// The error under a failed kernel thread's report.
pub fn thread_error(err: &ShmemError) -> &ShmemError {
    match err {
        ShmemError::Kernel(KernelError::Thread { source, .. }) => source,
        other => other,
    }
}
