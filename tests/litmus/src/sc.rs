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
//! `sync_all` are one step that every PE takes together once all have reached theirs (a
//! `team_sync` or `team_barrier` likewise, for the team's members). A `wait` is a step that
//! can be taken only once its condition holds; interleavings in which some PE waits forever
//! give no outcome.
//!
//! The second edition's forms follow the same reading: `pe_quiet` is no step; a spin
//! (`rK = fetch x@P until == V`) is a wait that reads the value it awaited; `test` reads the
//! word into 0 or 1, `test_any` into the index of the first word that holds (or -1), and
//! `wait_all` and `wait_any` wait, in one step, for every or for some word; a put of an array
//! is one write per word; a peer's `ld` and `st` read and write the peer's word; a 32-bit
//! atomic acts on the word's low half. A test with undefined behaviour has no outcomes to
//! enumerate.

use std::collections::{BTreeSet, HashSet};

use model::litmus::{
    AmoOp, AmoWidth, Cmp, Instr, Litmus, Loc, NONE_SATISFIED, Observable, Observation, Outcome,
    PeId, Value, VarId,
};

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
    /// The test has undefined behaviour (an `expect ... undefined` line): it has no outcomes.
    #[error(
        "{test}: undefined behaviour (an `expect ... undefined` line): no SC outcomes to enumerate"
    )]
    Undefined {
        /// The test.
        test: String,
    },
    /// The interleavings have more states than [`SC_STATE_LIMIT`].
    #[error("{test}: more than {SC_STATE_LIMIT} SC states; the test is too large to enumerate")]
    TooLarge {
        /// The test.
        test: String,
    },
}

/// The low half of a word, where a 32-bit atomic acts.
const LOW_HALF: u64 = 0xffff_ffff;

/// One indivisible step of a PE under SC.
#[derive(Clone, Debug)]
enum Step {
    Write(Loc, Value),
    Read(u8, Loc),
    Rmw {
        op: AmoOp,
        loc: Loc,
        fetch: Option<u8>,
        /// A 32-bit atomic: on the low half.
        narrow: bool,
    },
    /// The signal half of a put-with-signal: set or add.
    Signal {
        loc: Loc,
        add: bool,
        value: Value,
    },
    /// `barrier_all` or `sync_all` (`None`), or a team's rendezvous (its members): the
    /// step every member takes together.
    Rendezvous(Option<Vec<PeId>>),
    Await(Loc, Cmp, Value),
    /// Waits for every word (`all`) or some word to hold; the register, if any, gets the
    /// index of the first that holds.
    AwaitList {
        reg: Option<u8>,
        locs: Vec<Loc>,
        cmp: Cmp,
        value: Value,
        all: bool,
    },
    /// A spin: waits for the word to hold, reading the value that does.
    AwaitRead(u8, Loc, Cmp, Value),
    /// `test` (one word, 0 or 1) or `test_any` (the index of the first that holds, or -1).
    Test {
        reg: u8,
        locs: Vec<Loc>,
        cmp: Cmp,
        value: Value,
        any: bool,
    },
}

/// The steps of PE `pe`'s program.
fn steps(test: &Litmus, pe: u32) -> Result<Vec<Step>, ScError> {
    let own = |var| Loc { var, pe };
    let owns = |vars: &[VarId]| vars.iter().map(|&v| own(v)).collect::<Vec<_>>();
    let mut out = Vec::new();
    for (instr, span) in &test.programs[pe as usize] {
        // Instructions the format gains land in the wildcard arm.
        #[allow(unreachable_patterns)]
        match instr {
            Instr::Amo {
                op,
                dst,
                fetch,
                width: AmoWidth::W32,
                ..
            } => out.push(Step::Rmw {
                op: *op,
                loc: *dst,
                fetch: fetch.map(|r| r.0),
                narrow: true,
            }),
            Instr::Put { dst, value, .. } | Instr::PeerStore { dst, value } => {
                out.push(Step::Write(*dst, *value));
            }
            Instr::PutArray {
                dst, words, value, ..
            } => out.extend((0..*words).map(|i| {
                let loc = Loc {
                    var: VarId(dst.var.0 + i),
                    pe: dst.pe,
                };
                Step::Write(loc, *value)
            })),
            Instr::Get { reg, src, .. } | Instr::PeerLoad { reg, src } => {
                out.push(Step::Read(reg.0, *src));
            }
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
                narrow: false,
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
            Instr::Fence { .. } | Instr::Quiet { .. } | Instr::PeQuiet { .. } => {}
            Instr::BarrierAll | Instr::SyncAll => out.push(Step::Rendezvous(None)),
            Instr::Team { pes, .. } => out.push(Step::Rendezvous(Some(pes.clone()))),
            Instr::Wait { var, cmp, value } | Instr::SignalWait { var, cmp, value } => {
                out.push(Step::Await(own(*var), *cmp, *value));
            }
            Instr::Load { reg, var } | Instr::SignalFetch { reg, var } => {
                out.push(Step::Read(reg.0, own(*var)));
            }
            Instr::Test {
                reg,
                var,
                cmp,
                value,
            } => out.push(Step::Test {
                reg: reg.0,
                locs: vec![own(*var)],
                cmp: *cmp,
                value: *value,
                any: false,
            }),
            Instr::TestAny {
                reg,
                vars,
                cmp,
                value,
            } => out.push(Step::Test {
                reg: reg.0,
                locs: owns(vars),
                cmp: *cmp,
                value: *value,
                any: true,
            }),
            Instr::WaitAll { vars, cmp, value } => out.push(Step::AwaitList {
                reg: None,
                locs: owns(vars),
                cmp: *cmp,
                value: *value,
                all: true,
            }),
            Instr::WaitAny {
                reg,
                vars,
                cmp,
                value,
            } => out.push(Step::AwaitList {
                reg: Some(reg.0),
                locs: owns(vars),
                cmp: *cmp,
                value: *value,
                all: false,
            }),
            Instr::Spin {
                reg,
                src,
                cmp,
                value,
                ..
            } => out.push(Step::AwaitRead(reg.0, *src, *cmp, *value)),
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
            Step::Rmw {
                op,
                loc,
                fetch,
                narrow,
            } => {
                let i = self.index(*loc);
                // A 32-bit atomic reads and writes the low half, its operands cut to 32 bits.
                let mask = if *narrow { LOW_HALF } else { u64::MAX };
                let old = state.memory[i] & mask;
                let v = |x| Self::value(state, pe, x) & mask;
                let new = match *op {
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
                next.memory[i] = (state.memory[i] & !mask) | (new & mask);
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
                if !cmp.eval(
                    state.memory[self.index(*loc)],
                    Self::value(state, pe, *value),
                ) {
                    return None;
                }
            }
            Step::AwaitRead(reg, loc, cmp, value) => {
                let seen = state.memory[self.index(*loc)];
                if !cmp.eval(seen, Self::value(state, pe, *value)) {
                    return None;
                }
                next.regs[pe][usize::from(*reg)] = seen;
            }
            Step::AwaitList {
                reg,
                locs,
                cmp,
                value,
                all,
            } => {
                let first = self.first_holding(state, pe, locs, *cmp, *value);
                let holds = if *all {
                    locs.iter().all(|&l| {
                        cmp.eval(state.memory[self.index(l)], Self::value(state, pe, *value))
                    })
                } else {
                    first.is_some()
                };
                if !holds {
                    return None;
                }
                if let (Some(r), Some(i)) = (reg, first) {
                    next.regs[pe][usize::from(*r)] = i;
                }
            }
            Step::Test {
                reg,
                locs,
                cmp,
                value,
                any,
            } => {
                let first = self.first_holding(state, pe, locs, *cmp, *value);
                next.regs[pe][usize::from(*reg)] = match (any, first) {
                    (true, found) => found.unwrap_or(NONE_SATISFIED),
                    (false, found) => u64::from(found.is_some()),
                };
            }
            Step::Rendezvous(_) => return None,
        }
        Some(next)
    }

    /// The index in `locs` of the first word that satisfies the comparison, if any.
    fn first_holding(
        &self,
        state: &State,
        pe: usize,
        locs: &[Loc],
        cmp: Cmp,
        value: Value,
    ) -> Option<u64> {
        let v = Self::value(state, pe, value);
        locs.iter()
            .position(|&l| cmp.eval(state.memory[self.index(l)], v))
            .map(|i| i as u64)
    }

    /// The states after each rendezvous whose members are all at it: they pass it together.
    fn rendezvous(&self, state: &State) -> Vec<State> {
        let at = |pe: usize| match self.programs[pe].get(state.pcs[pe]) {
            Some(Step::Rendezvous(members)) => Some(members),
            _ => None,
        };
        let mut passed = Vec::new();
        for pe in 0..self.programs.len() {
            let Some(members) = at(pe) else { continue };
            let group: Vec<usize> = match members {
                None => (0..self.programs.len()).collect(),
                Some(pes) => pes.iter().map(|&p| p as usize).collect(),
            };
            // Each group once: from its first member.
            if group.first() != Some(&pe) || !group.iter().all(|&m| at(m) == Some(members)) {
                continue;
            }
            let mut next = state.clone();
            group.iter().for_each(|&m| next.pcs[m] += 1);
            passed.push(next);
        }
        passed
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
            stack.extend(self.rendezvous(&state));
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
    if test
        .expect
        .iter()
        .any(|e| e.observation == Observation::Undefined)
    {
        return Err(ScError::Undefined {
            test: test.name.clone(),
        });
    }
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

    /// Every catalogue test enumerates (but those with undefined behaviour), and every SC
    /// outcome is one the model allows on
    /// NVLink: the model is weaker than SC, never stronger, so "weak" (allowed and not SC)
    /// is well defined.
    #[test]
    fn the_model_allows_every_sc_outcome_of_the_catalogue() {
        let config = model::litmus::Config::NV_NVL;
        for file in load_paths(&[catalogue_dir()]).expect("the catalogue loads") {
            let test = file.test;
            // A test with undefined behaviour has no outcomes to compare.
            let sc = match sc_outcomes(&test) {
                Err(ScError::Undefined { .. }) => continue,
                sc => sc.unwrap_or_else(|e| panic!("{e}")),
            };
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

#[cfg(test)]
mod tests_second_edition;
