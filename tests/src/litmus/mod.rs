//! Litmus tests on a backend: the machine a configuration names, one PE's program run through
//! the hardware contract, and the outcome the PEs' runs make together.

mod check;
mod explore;
mod files;
mod machine;
mod on_cuda;
mod on_gpu_kernel;
mod on_host;
mod on_sim;
mod pe;

pub use check::{Check, check, check_all};
pub use explore::{EXECUTION_LIMIT, Exploration, explore, replay};
pub use files::{LitmusFile, LoadError, catalogue_dir, load_paths};
pub use machine::topology;
pub use on_cuda::run_on_cuda;
pub use on_gpu_kernel::{MAX_DELAY_CYCLES, kernel_source, run_on_gpu_kernel};
pub use on_host::run_on_host;
pub use on_sim::{Execution, ExecutionError, run_on, run_once, semantics};
pub use pe::{N_REGS, PeRun, PeRunError, run_pe};

use hw::PeFailure;
use model::litmus::{Litmus, Observable, Outcome};

/// The outcome of one run: the value of each of `test.observables()` from the PEs' runs.
///
/// # Panics
/// If a register the test's outcome records was never written: the runner fills every
/// register an instruction writes before a PE finishes, so that is a runner bug.
pub fn outcome(test: &Litmus, runs: &[PeRun]) -> Outcome {
    Outcome(
        test.observables()
            .iter()
            .map(|o| match *o {
                Observable::Reg { pe, reg } => runs[pe as usize].regs[usize::from(reg.0)]
                    .expect("every register an instruction writes is filled by the end"),
                Observable::Mem(loc) => runs[loc.pe as usize].memory[usize::from(loc.var.0)],
            })
            .collect(),
    )
}

/// The outcome of a run from every PE's result, or every failing PE's error.
fn outcome_of_pes(
    test: &Litmus,
    results: Vec<Result<Result<PeRun, PeRunError>, PeFailure>>,
) -> Result<Outcome, String> {
    let mut runs = Vec::with_capacity(results.len());
    let mut failures = Vec::new();
    for (pe, result) in results.into_iter().enumerate() {
        match result {
            Ok(Ok(run)) => runs.push(run),
            Ok(Err(e)) => failures.push(format!("P{pe}: {e}")),
            Err(e) => failures.push(format!("P{pe}: {}", e.message)),
        }
    }
    if failures.is_empty() {
        Ok(outcome(test, &runs))
    } else {
        Err(failures.join("; "))
    }
}
