//! Litmus tests on a backend: the machine a configuration names, one PE's program run through
//! the hardware contract, and the outcome the PEs' runs make together.

mod check;
mod explore;
mod files;
mod machine;
mod on_sim;
mod pe;

pub use check::{Check, check, check_all};
pub use explore::{EXECUTION_LIMIT, Exploration, explore};
pub use files::{LitmusFile, LoadError, load_paths};
pub use machine::topology;
pub use on_sim::{Execution, ExecutionError, run_on, run_once, semantics};
pub use pe::{N_REGS, PeRun, PeRunError, run_pe};

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
