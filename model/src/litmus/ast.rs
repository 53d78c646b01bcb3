//! A litmus test as data: the parsed form of the text format of `docs/litmus-format.md`.
//!
//! Both the model (the oracle) and the runner that executes tests on a backend read this
//! form; neither shares anything else. Every symmetric variable is one 64-bit word that exists
//! on every PE, initially 0 unless the test says otherwise.

use super::Config;

use super::Instr;

/// A PE number.
pub type PeId = u32;

/// A symmetric variable: an index into [`Litmus::vars`].
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct VarId(pub u16);

/// A register of one PE (`r0` to `r15`).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Reg(pub u8);

/// A communication context of one PE. Context 0 is the default context; the others are the
/// named contexts (`ctx A`, `ctx B`, ...) numbered in order of first use on that PE.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct Ctx(pub u8);

impl Ctx {
    /// The default context.
    pub const DEFAULT: Ctx = Ctx(0);
}

/// One PE's copy of a symmetric variable (`x@1`).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Loc {
    /// The variable.
    pub var: VarId,
    /// The PE whose copy it is.
    pub pe: PeId,
}

/// An operand: a constant or a register of the issuing PE.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Value {
    /// A literal.
    Const(u64),
    /// The register's value; the instruction waits for a fetch that fills it (a dependency).
    Reg(Reg),
}

/// The six comparisons of `wait_until`, `signal_wait_until` and conditions, on unsigned words.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Cmp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `<`
    Lt,
    /// `<=`
    Le,
}

impl Cmp {
    /// Evaluates `lhs <cmp> rhs`.
    pub fn eval(self, lhs: u64, rhs: u64) -> bool {
        match self {
            Cmp::Eq => lhs == rhs,
            Cmp::Ne => lhs != rhs,
            Cmp::Gt => lhs > rhs,
            Cmp::Ge => lhs >= rhs,
            Cmp::Lt => lhs < rhs,
            Cmp::Le => lhs <= rhs,
        }
    }

    /// The operator as written in the format.
    pub fn symbol(self) -> &'static str {
        match self {
            Cmp::Eq => "==",
            Cmp::Ne => "!=",
            Cmp::Gt => ">",
            Cmp::Ge => ">=",
            Cmp::Lt => "<",
            Cmp::Le => "<=",
        }
    }
}

/// How a one-word put is spelled; the three have the same ordering rules except that `PutNbi`
/// is completed only by quiet.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum PutKind {
    /// `put`: blocking (returns when the source may be reused, not when delivered).
    Put,
    /// `p`: the single-element blocking put.
    P,
    /// `put_nbi`.
    PutNbi,
}

/// How a one-word get is spelled.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum GetKind {
    /// `get`: blocking.
    Get,
    /// `g`: the single-element blocking get.
    G,
    /// `get_nbi`: the register is valid after the next quiet on its context.
    GetNbi,
}

/// The width of an atomic (`add32`, `fetch_add32`): a 32-bit atomic acts on the low half
/// (the first four bytes, little-endian) of the word.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum AmoWidth {
    /// The whole 64-bit word (no suffix).
    #[default]
    W64,
    /// The low 32 bits (suffix `32`).
    W32,
}

/// An atomic memory operation on one 64-bit word.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum AmoOp {
    /// `fetch`: atomic read (always fetching).
    Fetch,
    /// `set`: atomic write.
    Set(Value),
    /// `swap`: write, returning the old value.
    Swap(Value),
    /// `compare_swap`: write `new` if the word equals `cond`, returning the old value.
    CompareSwap {
        /// The expected old value.
        cond: Value,
        /// The value written on a match.
        new: Value,
    },
    /// `add`/`fetch_add`.
    Add(Value),
    /// `inc`/`fetch_inc`.
    Inc,
    /// `and`/`fetch_and`.
    And(Value),
    /// `or`/`fetch_or`.
    Or(Value),
    /// `xor`/`fetch_xor`.
    Xor(Value),
}

/// How put-with-signal updates the signal word.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum SignalOp {
    /// Overwrite the signal.
    Set,
    /// Add to the signal.
    Add,
}

/// What an atom of a condition reads.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Observable {
    /// A PE's register at the end (`P1:r0`).
    Reg {
        /// The PE.
        pe: PeId,
        /// Its register.
        reg: Reg,
    },
    /// A word of symmetric memory at the end, after everything is delivered and visible (`x@1`).
    Mem(Loc),
}

/// A proposition over final values.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Prop {
    /// `P1:r0 == 0`, `x@2 != 1`, ...
    Atom {
        /// What is read.
        lhs: Observable,
        /// Comparison.
        cmp: Cmp,
        /// Constant compared with.
        rhs: u64,
    },
    /// `a /\ b`
    And(Box<Prop>, Box<Prop>),
    /// `a \/ b`
    Or(Box<Prop>, Box<Prop>),
    /// `~a`
    Not(Box<Prop>),
}

/// How the final condition is quantified over the outcomes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Quantifier {
    /// `exists`: some outcome satisfies the proposition.
    Exists,
    /// `forall`: every outcome does.
    Forall,
    /// `~exists`: none does.
    NotExists,
}

/// The final condition.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Condition {
    /// The quantifier.
    pub quantifier: Quantifier,
    /// The proposition.
    pub prop: Prop,
}

/// How often the proposition holds over the set of allowed outcomes (herd's observation).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Observation {
    /// In every outcome.
    Always,
    /// In some outcomes but not all.
    Sometimes,
    /// In no outcome.
    Never,
    /// The test has undefined behaviour (`expect CONFIG undefined`): it is not explored.
    Undefined,
}

impl Observation {
    /// Whether the quantified condition holds given this observation.
    pub fn satisfies(self, quantifier: Quantifier) -> bool {
        match quantifier {
            _ if self == Observation::Undefined => false,
            Quantifier::Exists => self != Observation::Never,
            Quantifier::Forall => self == Observation::Always,
            Quantifier::NotExists => self == Observation::Never,
        }
    }
}

/// One `expect` line: the observation the rules give under a configuration.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Expectation {
    /// The configuration.
    pub config: Config,
    /// The expected observation of the proposition.
    pub observation: Observation,
    /// `(model)`: derived from the implementation reading, not stated by a vendor document.
    pub model_derived: bool,
    /// `hangs`: some executions block forever (each is a [`Hang`](super::Hang) outcome); without it, a
    /// test must finish in every execution.
    pub hangs: bool,
}

/// Where something is in a litmus file (1-based).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Span {
    /// Line.
    pub line: u32,
    /// Column.
    pub column: u32,
}

/// A parsed litmus test.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Litmus {
    /// The test's name (`litmus NAME`).
    pub name: String,
    /// Where its verdicts come from (`source "..."`).
    pub source: String,
    /// Number of PEs (`pes N`); programs exist for PEs `0..n_pes`, empty if not written.
    pub n_pes: u32,
    /// Symmetric variable names, in order of first appearance; `VarId(i)` names `vars[i]`.
    pub vars: Vec<String>,
    /// Initial values that are not 0.
    pub init: Vec<(Loc, u64)>,
    /// Each PE's program, with the span of each instruction.
    pub programs: Vec<Vec<(Instr, Span)>>,
    /// The final condition.
    pub condition: Condition,
    /// The expected observation per configuration.
    pub expect: Vec<Expectation>,
}

/// One final state: the value of each of [`Litmus::observables`], in that order.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Outcome(pub Vec<u64>);

impl Litmus {
    /// The distinct member sets of the test's `team_sync` and `team_barrier`, in order of first
    /// appearance: team `t` of a test is its `t`-th set here, whoever counts its arrivals.
    pub fn team_sets(&self) -> Vec<Vec<PeId>> {
        let mut sets: Vec<Vec<PeId>> = Vec::new();
        for (instr, _) in self.programs.iter().flatten() {
            if let Instr::Team { pes, .. } = instr
                && !sets.contains(pes)
            {
                sets.push(pes.clone());
            }
        }
        sets
    }

    /// What an outcome records: every register some instruction writes (by PE, then register),
    /// then every memory word the condition reads (by variable, then PE).
    pub fn observables(&self) -> Vec<Observable> {
        let mut regs = Vec::new();
        for (pe, program) in self.programs.iter().enumerate() {
            for (instr, _) in program {
                if let Some(reg) = instr.written_reg() {
                    regs.push(Observable::Reg {
                        pe: pe as PeId,
                        reg,
                    });
                }
            }
        }
        let mut mems = Vec::new();
        collect_mems(&self.condition.prop, &mut mems);
        regs.sort();
        regs.dedup();
        mems.sort();
        mems.dedup();
        regs.extend(mems);
        regs
    }

    /// Evaluates the condition's proposition on `outcome` (whose order is `observables`).
    pub fn holds(&self, observables: &[Observable], outcome: &Outcome) -> bool {
        eval(&self.condition.prop, observables, outcome)
    }

    /// The observation of the proposition over a set of outcomes, or `None` if it is empty.
    pub fn observe<'a>(
        &self,
        outcomes: impl IntoIterator<Item = &'a Outcome>,
    ) -> Option<Observation> {
        let observables = self.observables();
        let (mut some, mut all, mut any) = (false, true, false);
        for outcome in outcomes {
            any = true;
            let h = self.holds(&observables, outcome);
            some |= h;
            all &= h;
        }
        any.then_some(match (some, all) {
            (_, true) => Observation::Always,
            (true, false) => Observation::Sometimes,
            (false, false) => Observation::Never,
        })
    }

    /// Writes `outcome` as `P1:r0=0; x@1=2`.
    pub fn show_outcome(&self, observables: &[Observable], outcome: &Outcome) -> String {
        let parts: Vec<String> = observables
            .iter()
            .zip(&outcome.0)
            .map(|(o, v)| match o {
                Observable::Reg { pe, reg } => format!("P{pe}:r{}={v}", reg.0),
                Observable::Mem(loc) => {
                    format!("{}@{}={v}", self.vars[loc.var.0 as usize], loc.pe)
                }
            })
            .collect();
        parts.join("; ")
    }
}

fn collect_mems(prop: &Prop, out: &mut Vec<Observable>) {
    match prop {
        Prop::Atom { lhs, .. } => {
            if matches!(lhs, Observable::Mem(_)) {
                out.push(*lhs);
            }
        }
        Prop::And(a, b) | Prop::Or(a, b) => {
            collect_mems(a, out);
            collect_mems(b, out);
        }
        Prop::Not(a) => collect_mems(a, out),
    }
}

fn eval(prop: &Prop, observables: &[Observable], outcome: &Outcome) -> bool {
    match prop {
        Prop::Atom { lhs, cmp, rhs } => {
            let at = observables
                .iter()
                .position(|o| o == lhs)
                .expect("observables() lists every atom of the condition");
            cmp.eval(outcome.0[at], *rhs)
        }
        Prop::And(a, b) => eval(a, observables, outcome) && eval(b, observables, outcome),
        Prop::Or(a, b) => eval(a, observables, outcome) || eval(b, observables, outcome),
        Prop::Not(a) => !eval(a, observables, outcome),
    }
}
