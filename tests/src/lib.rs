//! Conformance bodies: SHMEM programs generic over the backend that check one promise of the
//! API each, and a harness that runs them on the simulator over topologies and seeds.
//!
//! A body returns `Ok(())` when its check held on that PE. The same bodies are meant to run on
//! every backend (the CUDA backend runs them on GPUs), so they only use the public API.

pub mod bodies;
pub mod cuda;
pub mod host;
pub mod litmus;

use std::fmt;

use hw::Launcher;
use rshmem::{Config, Shmem, ShmemError};
use sim::{Sim, SimBackend, SimBuilder, SimReport};

/// Why a body failed on a PE.
#[derive(Debug)]
pub enum BodyError {
    /// An API call failed.
    Shmem(ShmemError),
    /// The API worked but a promise did not hold.
    Violated(String),
}

impl From<ShmemError> for BodyError {
    fn from(e: ShmemError) -> Self {
        BodyError::Shmem(e)
    }
}

impl fmt::Display for BodyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BodyError::Shmem(e) => write!(f, "{e}"),
            BodyError::Violated(what) => write!(f, "violated: {what}"),
        }
    }
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
/// If the run could not happen at all (the PEs could not be launched).
pub fn run_body<L: Launcher>(
    launcher: L,
    heap_bytes: u64,
    body: impl Fn(&Shmem<L::B>) -> Result<(), BodyError> + Sync,
) -> Result<(L::Report, Vec<String>), String> {
    let config = Config::default().device_heap_size(heap_bytes);
    let output = rshmem::run(launcher, config, body).map_err(|e| e.to_string())?;
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
pub fn run_on_sim(
    topology: &str,
    seed: u64,
    body: impl Fn(&Shmem<SimBackend>) -> Result<(), BodyError> + Sync,
) -> Result<SimReport, String> {
    run_on_sim_with(topology, seed, |b| b, body)
}

/// [`run_on_sim`] on a simulator that `customise` finishes configuring (the shuttle suite
/// runs the PEs as shuttle tasks, for instance).
pub fn run_on_sim_with(
    topology: &str,
    seed: u64,
    customise: impl FnOnce(SimBuilder) -> SimBuilder,
    body: impl Fn(&Shmem<SimBackend>) -> Result<(), BodyError> + Sync,
) -> Result<SimReport, String> {
    let topo = sim::topology::load(topology).map_err(|e| e.to_string())?;
    let sim = customise(Sim::builder(topo).seed(seed))
        .build()
        .map_err(|e| e.to_string())?;
    let n = sim.n_pes();
    let (report, failures) = run_body(sim, 64 << 20, body)?;
    if failures.is_empty() && report.failure.is_none() {
        Ok(report)
    } else {
        Err(format!(
            "{n} PEs on {topology}, seed {seed} (rerun with this seed):\n  {}\n  report: {:?}",
            failures.join("\n  "),
            report.failure
        ))
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
