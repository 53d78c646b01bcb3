//! What the API suites share: simulated machines and a run that names the failing PE.

// Why: each suite compiles this module on its own and uses only part of it.
#![allow(dead_code)]

use rshmem::{Config, PeError, Shmem, run};
use sim::{Sim, SimBackend};

/// A run of `n_pes` PEs on the preset `topology` with `seed`.
pub fn sim(topology: &str, n_pes: u32, seed: u64) -> Sim {
    let topology = sim::topology::presets::preset(topology).expect("the preset exists");
    Sim::builder(topology)
        .pes(n_pes)
        .seed(seed)
        .build()
        .expect("the preset has enough GPUs")
}

/// A small heap and a short deadline, so exhaustion and hangs show quickly.
pub fn config() -> Config {
    Config::default()
        .device_heap_size(1 << 20)
        .wait_timeout_ms(100)
}

/// Every PE's result of `pe_main` on `n_pes` PEs of `topology`, failures included.
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

/// Every PE's value of `pe_main`; panics naming the first PE that failed.
pub fn run_ok<R: Send>(
    topology: &str,
    n_pes: u32,
    pe_main: impl Fn(&Shmem<SimBackend>) -> R + Sync,
) -> Vec<R> {
    run_all(topology, n_pes, config(), pe_main)
        .into_iter()
        .collect::<Result<Vec<R>, PeError>>()
        .unwrap_or_else(|err| panic!("{err}"))
}
