//! The enumerator: a depth-first search over SHMEM-OM states with a
//! set of visited states.
//!
//! Every transition issues an instruction, delivers a message or drains a pending write, so
//! no state repeats along a path and the search ends. Two shortcuts keep it small: a state in
//! which every PE has finished and nothing is in flight is final at once (the remaining
//! drains cannot change the final memory, which applies every pending write in delivery
//! order), and identical messages are delivered once.

use std::collections::{BTreeSet, HashSet};

use super::machine::Machine;
use super::state::{N_REGS, State};
use super::{ModelError, ModelResult};
use crate::litmus::{Hang, Litmus, Observable, Outcome};

/// States explored before the search gives up; far above any catalogue test.
pub(super) const MAX_STATES: u64 = 20_000_000;

pub(super) fn explore(machine: &Machine<'_>, test: &Litmus) -> Result<ModelResult, ModelError> {
    let observables = test.observables();
    let initial = machine.initial(test);
    let mut visited: HashSet<State> = HashSet::new();
    let mut stack = vec![initial.clone()];
    visited.insert(initial);
    let mut outcomes = BTreeSet::new();
    let mut hangs = BTreeSet::new();
    let mut successors = Vec::new();
    while let Some(state) = stack.pop() {
        let finished = (0..machine.n_pes).all(|pe| machine.done(&state, pe));
        if finished && state.in_flight.is_empty() {
            outcomes.insert(outcome(machine, state, &observables));
            continue;
        }
        successors.clear();
        machine.successors(&state, &mut successors);
        if successors.is_empty() {
            // Some PE waits forever: a wait never satisfied, or a barrier a PE never reaches.
            hangs.insert(hang(machine, &state));
            continue;
        }
        for next in successors.drain(..) {
            if !visited.contains(&next) {
                if visited.len() as u64 >= MAX_STATES {
                    return Err(ModelError::TooManyStates { limit: MAX_STATES });
                }
                visited.insert(next.clone());
                stack.push(next);
            }
        }
    }
    Ok(ModelResult {
        outcomes,
        hangs,
        states: visited.len() as u64,
    })
}

/// The PEs of a state with no transition that have not finished, at their instructions'
/// lines. A PE that finished its program is not blocked: it waits at the end, as in every
/// execution. A PE whose spin loop can never end is blocked at the spin, the instruction
/// before its program counter (the spin's read is in flight).
fn hang(machine: &Machine<'_>, state: &State) -> Hang {
    Hang {
        blocked: (0..machine.n_pes)
            .filter_map(|pe| {
                let spinning = state
                    .in_flight
                    .iter()
                    .any(|m| usize::from(m.src) == pe && m.until.is_some());
                let at = usize::from(state.pcs[pe]) - usize::from(spinning);
                let (_, span) = machine.programs[pe].get(at)?;
                Some((pe as u32, span.line))
            })
            .collect(),
    }
}

/// The observables of a final state, after every pending write has become visible.
fn outcome(machine: &Machine<'_>, mut state: State, observables: &[Observable]) -> Outcome {
    for pe in 0..machine.n_pes {
        state.flush(pe, machine.n_vars);
    }
    Outcome(
        observables
            .iter()
            .map(|o| match o {
                Observable::Reg { pe, reg } => {
                    state.regs[*pe as usize * N_REGS + usize::from(reg.0)]
                }
                Observable::Mem(loc) => {
                    state.mem[loc.pe as usize * machine.n_vars + usize::from(loc.var.0)]
                }
            })
            .collect(),
    )
}
