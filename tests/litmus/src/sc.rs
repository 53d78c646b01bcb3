//! The outcomes of a litmus test under sequential consistency: every interleaving of the PEs'
//! programs, each instruction acting on one memory at once, in program order.
//!
//! An outcome the model allows that no interleaving produces is *weak*: seeing it on hardware
//! shows reordering, which is what stress is for (docs/litmus-on-gpu.md). The enumerator reads
//! the test's AST alone and shares nothing with the model or the simulator.
//!
//! Each instruction is one atomic step, with three exceptions that follow from what the calls
//! are: a put-with-signal is two steps (the data, then the signal), `fence` and `quiet` are no
//! steps (under SC everything is already ordered and complete), and `barrier_all` and
//! `sync_all` are one step that every PE takes together once all have reached theirs. A `wait`
//! is a step that can be taken only once its condition holds; interleavings in which some PE
//! waits forever give no outcome.

use std::collections::{BTreeSet, HashSet};

use model::litmus::{AmoOp, AmoWidth, Instr, Litmus, Loc, Observable, Outcome, Value};

use crate::N_REGS;

/// The most states the enumerator visits before it gives up.
pub const SC_STATE_LIMIT: usize = 2_000_000;

/// Why the SC outcomes of a test could not be enumerated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScError {
    /// The test holds an instruction the enumerator does not know.
    #[error(
        "{test}: P{pe}'s instruction at line {line} ({instr}) is not known to the SC \
         enumerator (tests/litmus/src/sc.rs); teach it the instruction's steps"
    )]
    Unknown {
        /// The test.
        test: String,
        /// The PE whose program holds it.
        pe: u32,
        /// Its line in the litmus file.
        line: u32,
        /// The instruction, as the parser gave it.
        instr: String,
    },
    /// The interleavings have more states than [`SC_STATE_LIMIT`].
    #[error("{test}: more than {SC_STATE_LIMIT} SC states; the test is too large to enumerate")]
    TooLarge {
        /// The test.
        test: String,
    },
}

/// One indivisible step of a PE under SC.
#[derive(Clone, Debug)]
enum Step {
    Write(Loc, Value),
    Read(u8, Loc),
    Rmw {
        op: AmoOp,
        loc: Loc,
        fetch: Option<u8>,
    },
    /// The signal half of a put-with-signal: set or add.
    Signal {
        loc: Loc,
        add: bool,
        value: Value,
    },
    Barrier,
    Await(Loc, model::litmus::Cmp, Value),
}

/// The steps of PE `pe`'s program.
fn steps(test: &Litmus, pe: u32) -> Result<Vec<Step>, ScError> {
    let own = |var| Loc { var, pe };
    let mut out = Vec::new();
    for (instr, span) in &test.programs[pe as usize] {
        // Instructions of the format's second edition, and 32-bit atomics, land in the
        // wildcard arm: the enumerator knows only the forms the GPU kernels translate.
        match instr {
            Instr::Amo {
                width: AmoWidth::W32,
                ..
            } => return Err(unknown(test, pe, span.line, instr)),
            Instr::Put { dst, value, .. } => out.push(Step::Write(*dst, *value)),
            Instr::Get { reg, src, .. } => out.push(Step::Read(reg.0, *src)),
            Instr::Amo {
                op: AmoOp::Fetch,
                dst,
                fetch,
                ..
            } => out.push(Step::Read(fetch.map_or(u8::MAX, |r| r.0), *dst)),
            Instr::Amo {
                op: AmoOp::Set(v),
                dst,
                fetch: None,
                ..
            } => out.push(Step::Write(*dst, *v)),
            Instr::Amo { op, dst, fetch, .. } => out.push(Step::Rmw {
                op: *op,
                loc: *dst,
                fetch: fetch.map(|r| r.0),
            }),
            Instr::PutSignal {
                dst,
                value,
                signal,
                op,
                signal_value,
                ..
            } => {
                out.push(Step::Write(*dst, *value));
                out.push(Step::Signal {
                    loc: *signal,
                    add: *op == model::litmus::SignalOp::Add,
                    value: *signal_value,
                });
            }
            Instr::Fence { .. } | Instr::Quiet { .. } => {}
            Instr::BarrierAll | Instr::SyncAll => out.push(Step::Barrier),
            Instr::Wait { var, cmp, value } | Instr::SignalWait { var, cmp, value } => {
                out.push(Step::Await(own(*var), *cmp, *value));
            }
            Instr::Load { reg, var } => out.push(Step::Read(reg.0, own(*var))),
            Instr::Store { var, value } => out.push(Step::Write(own(*var), *value)),
            _ => return Err(unknown(test, pe, span.line, instr)),
        }
    }
    Ok(out)
}

/// The error for an instruction the enumerator does not know.
fn unknown(test: &Litmus, pe: u32, line: u32, instr: &Instr) -> ScError {
    ScError::Unknown {
        test: test.name.clone(),
        pe,
        line,
        instr: format!("{instr:?}"),
    }
}

/// Where every PE is, its registers, and memory (`vars.len()` words per PE).
#[derive(Clone, PartialEq, Eq, Hash)]
struct State {
    pcs: Vec<usize>,
    regs: Vec<[u64; N_REGS]>,
    memory: Vec<u64>,
}

struct Enumerator<'a> {
    test: &'a Litmus,
    programs: Vec<Vec<Step>>,
    observables: Vec<Observable>,
    seen: HashSet<State>,
    outcomes: BTreeSet<Outcome>,
}

impl Enumerator<'_> {
    fn index(&self, loc: Loc) -> usize {
        loc.pe as usize * self.test.vars.len() + usize::from(loc.var.0)
    }

    fn value(state: &State, pe: usize, v: Value) -> u64 {
        match v {
            Value::Const(c) => c,
            Value::Reg(r) => state.regs[pe][usize::from(r.0)],
        }
    }

    /// The state after PE `pe` takes its next step, or `None` if it cannot (a wait whose
    /// condition does not hold, a barrier).
    fn step(&self, state: &State, pe: usize) -> Option<State> {
        let step = self.programs[pe].get(state.pcs[pe])?;
        let mut next = state.clone();
        next.pcs[pe] += 1;
        match step {
            Step::Write(loc, v) => next.memory[self.index(*loc)] = Self::value(state, pe, *v),
            Step::Read(reg, loc) => {
                if let Some(r) = next.regs[pe].get_mut(usize::from(*reg)) {
                    *r = state.memory[self.index(*loc)];
                }
            }
            Step::Rmw { op, loc, fetch } => {
                let i = self.index(*loc);
                let old = state.memory[i];
                let v = |x| Self::value(state, pe, x);
                next.memory[i] = match *op {
                    AmoOp::Fetch => old,
                    AmoOp::Set(x) | AmoOp::Swap(x) => v(x),
                    AmoOp::CompareSwap { cond, new } => {
                        if old == v(cond) {
                            v(new)
                        } else {
                            old
                        }
                    }
                    AmoOp::Add(x) => old.wrapping_add(v(x)),
                    AmoOp::Inc => old.wrapping_add(1),
                    AmoOp::And(x) => old & v(x),
                    AmoOp::Or(x) => old | v(x),
                    AmoOp::Xor(x) => old ^ v(x),
                };
                if let Some(r) = fetch {
                    next.regs[pe][usize::from(*r)] = old;
                }
            }
            Step::Signal { loc, add, value } => {
                let i = self.index(*loc);
                let value = Self::value(state, pe, *value);
                next.memory[i] = if *add {
                    state.memory[i].wrapping_add(value)
                } else {
                    value
                };
            }
            Step::Await(loc, cmp, value) => {
                if !cmp.eval(state.memory[self.index(*loc)], Self::value(state, pe, *value)) {
                    return None;
                }
            }
            Step::Barrier => return None,
        }
        Some(next)
    }

    /// Every PE at a barrier passes it together; `None` unless all are at one.
    fn barrier(&self, state: &State) -> Option<State> {
        let all_there = (0..self.programs.len())
            .all(|pe| matches!(self.programs[pe].get(state.pcs[pe]), Some(Step::Barrier)));
        all_there.then(|| {
            let mut next = state.clone();
            next.pcs.iter_mut().for_each(|pc| *pc += 1);
            next
        })
    }

    fn outcome(&self, state: &State) -> Outcome {
        Outcome(
            self.observables
                .iter()
                .map(|o| match *o {
                    Observable::Reg { pe, reg } => state.regs[pe as usize][usize::from(reg.0)],
                    Observable::Mem(loc) => state.memory[self.index(loc)],
                })
                .collect(),
        )
    }

    fn explore(&mut self, initial: State) -> Result<(), ScError> {
        let mut stack = vec![initial];
        while let Some(state) = stack.pop() {
            if !self.seen.insert(state.clone()) {
                continue;
            }
            if self.seen.len() > SC_STATE_LIMIT {
                return Err(ScError::TooLarge {
                    test: self.test.name.clone(),
                });
            }
            let done = (0..self.programs.len()).all(|pe| state.pcs[pe] == self.programs[pe].len());
            if done {
                self.outcomes.insert(self.outcome(&state));
                continue;
            }
            stack.extend((0..self.programs.len()).filter_map(|pe| self.step(&state, pe)));
            stack.extend(self.barrier(&state));
        }
        Ok(())
    }
}

/// Every outcome of `test` (over `test.observables()`) that some sequentially consistent
/// interleaving of its programs produces.
///
/// # Errors
/// [`ScError`]: an instruction the enumerator does not know, or too many states.
pub fn sc_outcomes(test: &Litmus) -> Result<BTreeSet<Outcome>, ScError> {
    let programs = (0..test.n_pes)
        .map(|pe| steps(test, pe))
        .collect::<Result<Vec<_>, _>>()?;
    let n_vars = test.vars.len();
    let mut memory = vec![0; test.n_pes as usize * n_vars];
    for &(loc, value) in &test.init {
        memory[loc.pe as usize * n_vars + usize::from(loc.var.0)] = value;
    }
    let initial = State {
        pcs: vec![0; programs.len()],
        regs: vec![[0; N_REGS]; programs.len()],
        memory,
    };
    let mut enumerator = Enumerator {
        test,
        programs,
        observables: test.observables(),
        seen: HashSet::new(),
        outcomes: BTreeSet::new(),
    };
    enumerator.explore(initial)?;
    Ok(enumerator.outcomes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{catalogue_dir, load_paths};

    fn catalogue_test(file: &str) -> Litmus {
        load_paths(&[catalogue_dir().join(file)])
            .expect("the test loads")
            .remove(0)
            .test
    }

    fn shown(test: &Litmus, outcomes: &BTreeSet<Outcome>) -> Vec<String> {
        let observables = test.observables();
        outcomes
            .iter()
            .map(|o| test.show_outcome(&observables, o))
            .collect()
    }

    /// Message passing: once the reader saw the flag, it reads the data.
    #[test]
    fn message_passing_reads_the_data_under_sc() {
        let test = catalogue_test("a1-mp-put-put.litmus");
        assert_eq!(shown(&test, &sc_outcomes(&test).unwrap()), ["P1:r0=1"]);
    }

    /// Store buffering: some PE's store comes first, so both loads cannot read 0.
    #[test]
    fn store_buffering_never_reads_both_stale_under_sc() {
        let test = catalogue_test("f1-sb-put-put.litmus");
        assert_eq!(
            shown(&test, &sc_outcomes(&test).unwrap()),
            ["P0:r0=0; P1:r1=1", "P0:r0=1; P1:r1=0", "P0:r0=1; P1:r1=1"]
        );
    }

    /// IRIW: the two readers never see the two independent writes in opposite orders.
    #[test]
    fn iriw_readers_agree_under_sc() {
        let test = catalogue_test("f2b-iriw-g-g.litmus");
        let sc = shown(&test, &sc_outcomes(&test).unwrap());
        assert_eq!(sc.len(), 15, "{sc:?}");
        assert!(!sc.contains(&"P2:r0=1; P2:r1=0; P3:r2=1; P3:r3=0".to_string()));
    }

    /// Fetch-adds are atomic: two increments give 0 then 1, in one order only per PE.
    #[test]
    fn atomics_read_modify_write_in_one_step() {
        let test = catalogue_test("b1-fadd-fadd.litmus");
        assert_eq!(
            shown(&test, &sc_outcomes(&test).unwrap()),
            ["P0:r0=0; P0:r1=1"]
        );
    }

    /// Every catalogue test enumerates, and every SC outcome is one the model allows on
    /// NVLink: the model is weaker than SC, never stronger, so "weak" (allowed and not SC)
    /// is well defined.
    #[test]
    fn the_model_allows_every_sc_outcome_of_the_catalogue() {
        let config = model::litmus::Config::NV_NVL;
        for file in load_paths(&[catalogue_dir()]).expect("the catalogue loads") {
            let test = file.test;
            let sc = sc_outcomes(&test).unwrap_or_else(|e| panic!("{e}"));
            assert!(!sc.is_empty(), "{}: no SC outcome", test.name);
            let allowed = model::om::allowed_outcomes(&test, &config)
                .unwrap_or_else(|e| panic!("{}: {e}", test.name))
                .outcomes;
            let missing: Vec<_> = sc.difference(&allowed).cloned().collect();
            assert!(
                missing.is_empty(),
                "{}: SC outcomes the model forbids: {:?}",
                test.name,
                shown(&test, &missing.into_iter().collect())
            );
        }
    }
}
