//! Conformance bodies: SHMEM programs generic over the backend that check one promise of the
//! API each, and a harness that runs them on the simulator over topologies and seeds.
//!
//! A body returns `Ok(())` when its check held on that PE. The same bodies are meant to run on
//! every backend (the CUDA backend runs them on GPUs), so they only use the public API.
//! The harnesses: this file for the simulator, [`host`], [`cuda`] and [`process`] for the
//! real backends.

pub mod bodies;
pub mod cuda;
pub mod host;
pub mod process;

use hw::Launcher;
use rshmem::{Config, Shmem, ShmemError};
use sim::{Sim, SimBackend, SimBuilder, SimReport};

/// Why a body failed on a PE.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    /// An API call failed.
    #[error(transparent)]
    Shmem(#[from] ShmemError),
    /// The API worked but a promise did not hold.
    #[error("violated: {0}")]
    Violated(String),
}

/// Why a run of a body failed.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The simulator's topology could not be loaded.
    #[error(transparent)]
    Topology(#[from] sim::topology::LoadError),
    /// The machine of a real backend could not be described.
    #[error(transparent)]
    Machine(#[from] hw::topology::TopologyError),
    /// The backend could not be set up for the PEs.
    #[error(transparent)]
    Backend(#[from] hw::LaunchError),
    /// The runtime could not start the PEs.
    #[error(transparent)]
    Start(#[from] rshmem::RunError),
    /// The run happened and some PE's check failed: `run` says which run, `failures` each
    /// PE's error ("PE 1: ...") and anything the backend reported.
    #[error("{run}:\n  {}", failures.join("\n  "))]
    Failed {
        /// The run, to repeat it ("2 PEs on h200x2, seed 5 (rerun with this seed)").
        run: String,
        /// What failed.
        failures: Vec<String>,
    },
}

/// The topologies a conformance body runs on: NVLink pair, NVSwitch, and two InfiniBand
/// hosts (so some pairs cross a NIC and follow the InfiniBand visibility rule).
pub const TOPOLOGIES: [&str; 3] = ["h200x2", "hgx8", "ib-2"];

/// Seeds each body runs with.
pub const SEEDS: std::ops::Range<u64> = 0..4;

/// Runs `body` on every PE `launcher` starts, each with a symmetric heap of `heap_bytes`, and
/// returns the backend's report and the error of each PE whose check failed ("PE 1: ...").
///
/// # Errors
/// [`RunError::Start`] if the run could not happen at all (the PEs could not be launched).
pub fn run_body<L: Launcher>(
    launcher: L,
    heap_bytes: u64,
    body: impl Fn(&Shmem<L::B>) -> Result<(), BodyError> + Sync,
) -> Result<(L::Report, Vec<String>), RunError> {
    let config = Config::default().device_heap_size(heap_bytes);
    let output = rshmem::run(launcher, config, body)?;
    let failures = output
        .results
        .iter()
        .enumerate()
        .filter_map(|(pe, r)| match r {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(format!("PE {pe}: {e}")),
            Err(e) => Some(format!("PE {pe}: {e}")),
        })
        .collect();
    Ok((output.report, failures))
}

/// Runs `body` on every PE of `topology` with `seed` and returns the report, failing with
/// the seed and every PE's error if any PE's check failed.
///
/// # Errors
/// [`RunError::Failed`] with the seed if a check failed; another [`RunError`] if the run
/// could not happen.
pub fn run_on_sim(
    topology: &str,
    seed: u64,
    body: impl Fn(&Shmem<SimBackend>) -> Result<(), BodyError> + Sync,
) -> Result<SimReport, RunError> {
    run_on_sim_with(topology, seed, |b| b, body)
}

/// [`run_on_sim`] on a simulator that `customise` finishes configuring (the shuttle suite
/// runs the PEs as shuttle tasks, for instance).
///
/// # Errors
/// As [`run_on_sim`].
pub fn run_on_sim_with(
    topology: &str,
    seed: u64,
    customise: impl FnOnce(SimBuilder) -> SimBuilder,
    body: impl Fn(&Shmem<SimBackend>) -> Result<(), BodyError> + Sync,
) -> Result<SimReport, RunError> {
    let topo = sim::topology::load(topology)?;
    let sim = customise(Sim::builder(topo).seed(seed)).build()?;
    let n = sim.n_pes();
    let (report, mut failures) = run_body(sim, 64 << 20, body)?;
    if failures.is_empty() && report.failure.is_none() {
        Ok(report)
    } else {
        failures.push(format!("report: {:?}", report.failure));
        Err(RunError::Failed {
            run: format!("{n} PEs on {topology}, seed {seed} (rerun with this seed)"),
            failures,
        })
    }
}

/// Runs `body` on every topology of [`TOPOLOGIES`] with every seed of [`SEEDS`].
///
/// # Panics
/// With every failing (topology, seed) and its errors, if any run failed.
pub fn conformance(body: impl Fn(&Shmem<SimBackend>) -> Result<(), BodyError> + Sync + Copy) {
    let failures: Vec<String> = TOPOLOGIES
        .iter()
        .flat_map(|t| SEEDS.map(move |s| (t, s)))
        .filter_map(|(t, s)| run_on_sim(t, s, body).err())
        .map(|e| e.to_string())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// One `#[test]` per conformance body of [`bodies`], each handing the body to `$run` (a
/// function that runs a body on some backend and panics on failure). Every backend's suite
/// uses it, so a new body runs on every backend.
#[macro_export]
macro_rules! conformance_tests {
    ($run:path) => {
        #[test]
        fn ring() {
            $run($crate::bodies::ring);
        }

        #[test]
        fn fenced_message_passing() {
            $run($crate::bodies::fenced_message_passing);
        }

        #[test]
        fn signal_message_passing() {
            $run($crate::bodies::signal_message_passing);
        }

        #[test]
        fn fetch_add_counter() {
            $run($crate::bodies::fetch_add_counter);
        }

        #[test]
        fn get_after_barrier() {
            $run($crate::bodies::get_after_barrier);
        }

        #[test]
        fn wait_on_many_words() {
            $run($crate::bodies::wait_on_many_words);
        }

        #[test]
        fn team_collectives() {
            $run($crate::bodies::team_collectives);
        }

        #[test]
        fn on_stream() {
            $run($crate::bodies::on_stream);
        }

        #[test]
        fn heap_growth() {
            $run($crate::bodies::heap_growth);
        }
    };
}
