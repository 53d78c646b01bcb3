//! Why an execution of a litmus test gave no outcome: its machine could not be had, or some
//! PE did not finish.

use std::fmt::Display;

use hw::PeFailure;
use hw::topology::TopologyError;

/// Why an execution could not be run, or (on the host and CUDA backends, which have no report
/// to carry it) why it gave no outcome.
#[derive(Debug, thiserror::Error)]
pub enum ExecutionError {
    /// The configuration's machine could not be built.
    #[error("topology: {0}")]
    Topology(#[from] TopologyError),
    /// A real backend could not be set up for the test's PEs (no CUDA, too many PEs).
    #[error("{backend}: {source}")]
    Backend {
        /// The backend (`host`, `cuda`).
        backend: &'static str,
        /// What it said.
        source: hw::LaunchError,
    },
    /// The backend could not start the PEs.
    #[error("launch: {0}")]
    Launch(#[from] hw::LaunchError),
    /// Some PE did not finish.
    #[error(transparent)]
    Pes(#[from] PesFailed),
}

/// The PEs of one execution that did not finish, each with its error, shown as
/// `P0: ...; P1: ...` (a wait never satisfied, a deadlock, a panic).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.join("; "))]
pub struct PesFailed(pub Vec<String>);

impl PesFailed {
    /// Every PE's value, or every failing PE's error; `panic` words the failure of a PE that
    /// panicked.
    pub(crate) fn collect<T, E: Display>(
        results: Vec<Result<Result<T, E>, PeFailure>>,
        panic: impl Fn(PeFailure) -> String,
    ) -> Result<Vec<T>, PesFailed> {
        let mut values = Vec::with_capacity(results.len());
        let mut failures = Vec::new();
        for (pe, result) in results.into_iter().enumerate() {
            match result {
                Ok(Ok(value)) => values.push(value),
                Ok(Err(e)) => failures.push(format!("P{pe}: {e}")),
                Err(f) => failures.push(format!("P{pe}: {}", panic(f))),
            }
        }
        if failures.is_empty() {
            Ok(values)
        } else {
            Err(PesFailed(failures))
        }
    }
}
