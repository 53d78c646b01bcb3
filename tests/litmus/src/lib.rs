//! Litmus tests on a backend: loading litmus files, one PE's program run through the hardware
//! contract, one execution on the simulator, host or CUDA backend, many executions on PEs that
//! are processes of a job (over the network path), every execution of the
//! simulator explored and checked against the model, replay of one execution, the translation
//! of a test into a GPU kernel of the device-side API (plain or stressed), and the outcomes of
//! a test under sequential consistency (which make an allowed outcome weak).
//!
//! Design:
//!
//! - **The oracle stays apart.** The outcomes a test may have come from `model`, which
//!   borrows nothing from the simulator; this crate only compares them with what a backend
//!   produced.
//! - **Every outcome replays.** An exploration records, for each outcome, the choice string of
//!   its first execution; [`replay`] runs that execution again.
//! - **The catalogue is data.** The tests live in `catalogue/*.litmus` beside this crate
//!   ([`catalogue_dir`]), in the format of `docs/litmus-format.md`.

mod check;
mod error;
mod explore;
mod files;
mod gpu_instr;
mod gpu_placement;
mod gpu_run;
mod gpu_stress_kernel;
mod gpu_stress_plan;
mod gpu_stress_run;
mod gpu_table;
mod machine;
mod net_table;
mod on_cuda;
mod on_gpu_kernel;
mod on_host;
mod on_process;
mod on_sim;
mod pe;
mod replay;
mod sc;
mod unfenced;

pub use check::{Check, check, check_all};
pub use error::{ExecutionError, PesFailed};
pub use explore::{EXECUTION_LIMIT, Exploration, explore};
pub use files::{LitmusFile, LoadError, catalogue_dir, load_paths};
pub use gpu_instr::NotOnGpu;
pub use gpu_placement::{GpuPlacement, placed_gpus, run_seed, show_placements, split_executions};
pub use gpu_run::GpuRunError;
pub use gpu_stress_kernel::{instance_words, stress_kernel_source};
pub use gpu_stress_plan::{
    LaunchPlan, NO_ROLE, PlanError, SCRATCH_WORDS, StressOptions, StressPattern, TargetLayout,
    ThreadLayout, VARS_WORDS, WordLayout,
};
pub use gpu_stress_run::{StressedRun, run_stressed_on_gpu};
pub use gpu_table::{TableLine, Tally, UNDEFINED, short_of, table};
pub use machine::topology;
pub use net_table::{NetLine, allowed_unseen, forbidden_lines, net_summary, net_table};
pub use on_cuda::run_on_cuda;
pub use on_gpu_kernel::{MAX_DELAY_CYCLES, kernel_source, run_on_gpu_kernel};
pub use on_host::run_on_host;
pub use on_process::{
    Arena, ArenaSize, MAX_TESTS, NetOptions, NetRunError, StartGate, execution_words,
};
pub use on_sim::{Execution, run_on, run_once, semantics};
pub use pe::{Frame, Meeting, N_REGS, PeRun, PeRunError, read_memory, run_pe, run_program};
pub use replay::{Replay, ReplayError, ReplayedOutcome, replay};
pub use sc::{SC_STATE_LIMIT, ScError, sc_outcomes};

use hw::PeFailure;
use model::litmus::{Hang, Litmus, Observable, Outcome};

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
) -> Result<Outcome, PesFailed> {
    let runs = PesFailed::collect(results, |f| f.message)?;
    Ok(outcome(test, &runs))
}

/// The hang a failed execution on the simulator is, if it is one: every PE that did not
/// finish failed with the simulator's deadlock report, at a line of its program (a PE that
/// ran its program and waits at the end is not blocked). `None` for any other failure.
///
/// The runner words each PE's error `P<k>: line <n>: <instruction>: <error>`
/// (`PesFailed::collect`, `pe.rs`); the end's steps carry no line.
pub fn hang_of(failed: &PesFailed) -> Option<Hang> {
    let mut blocked = Vec::new();
    for message in &failed.0 {
        // The simulator's deadlock report, or the runner's spin loop that never ends.
        if !message.contains("deadlock") && !message.contains(": hang: ") {
            return None;
        }
        let (pe, rest) = message.strip_prefix('P')?.split_once(": ")?;
        let pe: u32 = pe.parse().ok()?;
        if let Some(rest) = rest.strip_prefix("line ") {
            let (line, _) = rest.split_once(':')?;
            blocked.push((pe, line.parse().ok()?));
        }
    }
    (!blocked.is_empty()).then_some(Hang { blocked })
}
