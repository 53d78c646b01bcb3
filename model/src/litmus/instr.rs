//! The instructions of a PE's program, and what each reads and writes.

use super::{AmoOp, AmoWidth, Cmp, Ctx, GetKind, Loc, PeId, PutKind, Reg, SignalOp, Value, VarId};

/// One statement of a PE's program.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Instr {
    /// `put x@P = V` (also `p`, `put_nbi`).
    Put {
        /// Spelling.
        kind: PutKind,
        /// Target word.
        dst: Loc,
        /// Value written.
        value: Value,
        /// Context.
        ctx: Ctx,
    },
    /// `rK = get x@P` (also `g`, `get_nbi`).
    Get {
        /// Spelling.
        kind: GetKind,
        /// Register filled.
        reg: Reg,
        /// Word read.
        src: Loc,
        /// Context.
        ctx: Ctx,
    },
    /// An atomic: `set x@P = V`, `add x@P V`, `rK = fetch_add x@P V`, `rK = fetch_add_nbi ...`.
    Amo {
        /// The operation.
        op: AmoOp,
        /// Target word.
        dst: Loc,
        /// Register receiving the old value, for fetching forms.
        fetch: Option<Reg>,
        /// The `_nbi` form (fetching atomics only): the register is valid after quiet.
        nbi: bool,
        /// The width (`add32`, `fetch_add32`, ...); mixing widths on one word is undefined.
        width: AmoWidth,
        /// Context.
        ctx: Ctx,
    },
    /// `put_signal x@P = V, s SET|ADD W` (also `put_signal_nbi`). `signal` is on the same PE.
    PutSignal {
        /// Target data word.
        dst: Loc,
        /// Data value.
        value: Value,
        /// Signal word on the target.
        signal: Loc,
        /// Signal update.
        op: SignalOp,
        /// Signal operand.
        signal_value: Value,
        /// The `_nbi` form.
        nbi: bool,
        /// Context.
        ctx: Ctx,
    },
    /// `fence` (`fence ctx A`).
    Fence {
        /// Context.
        ctx: Ctx,
    },
    /// `quiet` (`quiet ctx A`).
    Quiet {
        /// Context.
        ctx: Ctx,
    },
    /// `barrier_all`: quiet on the default context, all PEs arrive, then this PE's consistency
    /// step.
    BarrierAll,
    /// `sync_all`: all PEs arrive; completes nothing.
    SyncAll,
    /// `wait x CMP V`: `wait_until` on the PE's own copy of `x`.
    Wait {
        /// The variable (own copy).
        var: VarId,
        /// Comparison.
        cmp: Cmp,
        /// Right-hand side.
        value: Value,
    },
    /// `signal_wait s CMP V`: `signal_wait_until` on the PE's own copy of `s`.
    SignalWait {
        /// The signal variable (own copy).
        var: VarId,
        /// Comparison.
        cmp: Cmp,
        /// Right-hand side.
        value: Value,
    },
    /// `rK = ld x`: a plain load of the PE's own copy.
    Load {
        /// Register filled.
        reg: Reg,
        /// The variable (own copy).
        var: VarId,
    },
    /// `st x = V`: a plain store to the PE's own copy.
    Store {
        /// The variable (own copy).
        var: VarId,
        /// Value stored.
        value: Value,
    },
    /// `rK = signal_fetch s`: an atomic read of the PE's own signal word.
    SignalFetch {
        /// Register filled.
        reg: Reg,
        /// The signal variable (own copy).
        var: VarId,
    },
    /// `rK = test x CMP V`: 1 if the PE's own word satisfies the comparison (then the
    /// consistency step runs, as after a wait), else 0.
    Test {
        /// Register filled.
        reg: Reg,
        /// The variable (own copy).
        var: VarId,
        /// Comparison.
        cmp: Cmp,
        /// Right-hand side.
        value: Value,
    },
    /// `rK = test_any x y CMP V`: the index in `vars` of the lowest word that satisfies the
    /// comparison, or [`NONE_SATISFIED`] (`-1`) if none does.
    TestAny {
        /// Register filled.
        reg: Reg,
        /// The variables (own copies), in the order written.
        vars: Vec<VarId>,
        /// Comparison.
        cmp: Cmp,
        /// Right-hand side.
        value: Value,
    },
    /// `wait_all x y CMP V`: blocks until every listed own word satisfies the comparison.
    WaitAll {
        /// The variables (own copies).
        vars: Vec<VarId>,
        /// Comparison.
        cmp: Cmp,
        /// Right-hand side.
        value: Value,
    },
    /// `rK = wait_any x y CMP V`: blocks until some listed own word satisfies the comparison;
    /// the register gets the index in `vars` of the lowest one that does.
    WaitAny {
        /// Register filled.
        reg: Reg,
        /// The variables (own copies).
        vars: Vec<VarId>,
        /// Comparison.
        cmp: Cmp,
        /// Right-hand side.
        value: Value,
    },
    /// `pe_quiet P`: completes the operations this PE issued to PE `pe` on the default
    /// context (OpenSHMEM 1.6 `shmem_pe_quiet`), then runs the consistency step like `quiet`.
    PeQuiet {
        /// The target PE.
        pe: PeId,
    },
    /// `team_sync {0,2}` / `team_barrier {0,2}`: the listed PEs rendezvous; a barrier first
    /// quiets the default context and ends with the consistency step, like `barrier_all`.
    Team {
        /// The members, ascending; the issuing PE is one of them.
        pes: Vec<PeId>,
        /// `team_barrier` (else `team_sync`).
        barrier: bool,
    },
    /// `rK = fetch x@P until CMP V` / `rK = g x@P until CMP V`: the fetch (or get) repeated
    /// until its value satisfies the comparison. The PE runs nothing else meanwhile.
    Spin {
        /// Register filled with the value that satisfied the comparison.
        reg: Reg,
        /// The word read.
        src: Loc,
        /// An atomic fetch (`fetch`), else a get (`g`, `get`).
        atomic: bool,
        /// Comparison.
        cmp: Cmp,
        /// Right-hand side.
        value: Value,
        /// Context.
        ctx: Ctx,
    },
    /// `rK = ld x@P`: a plain load of PE `P`'s copy through `shmem_ptr` (P reached by
    /// load/store: the same PE or NVLink).
    PeerLoad {
        /// Register filled.
        reg: Reg,
        /// The word loaded.
        src: Loc,
    },
    /// `st x@P = V`: a plain store to PE `P`'s copy through `shmem_ptr`; ordered by `fence`
    /// and completed by `quiet` of the default context, like `p`.
    PeerStore {
        /// The word stored to.
        dst: Loc,
        /// Value stored.
        value: Value,
    },
    /// `put buf@P = V` where `buf` is an array: one put of every word of the array, each
    /// word `V`. The words may be delivered in any order (R10).
    PutArray {
        /// Spelling.
        kind: PutKind,
        /// The array's first word on the target.
        dst: Loc,
        /// The array's length in words; its words are `dst.var` and the ones after it.
        words: u16,
        /// Value of every word.
        value: Value,
        /// Context.
        ctx: Ctx,
    },
}

/// What `test_any` writes when no word satisfies: `-1` as a 64-bit word.
pub const NONE_SATISFIED: u64 = u64::MAX;

impl Instr {
    /// The register the instruction writes, if any.
    pub fn written_reg(&self) -> Option<Reg> {
        match self {
            Instr::Get { reg, .. }
            | Instr::Load { reg, .. }
            | Instr::SignalFetch { reg, .. }
            | Instr::Test { reg, .. }
            | Instr::TestAny { reg, .. }
            | Instr::WaitAny { reg, .. }
            | Instr::Spin { reg, .. }
            | Instr::PeerLoad { reg, .. } => Some(*reg),
            Instr::Amo { fetch, .. } => *fetch,
            _ => None,
        }
    }

    /// The value operands of the instruction (registers or literals), in the order written.
    pub fn operands(&self) -> Vec<Value> {
        match self {
            Instr::Put { value, .. }
            | Instr::Store { value, .. }
            | Instr::Wait { value, .. }
            | Instr::SignalWait { value, .. }
            | Instr::Test { value, .. }
            | Instr::TestAny { value, .. }
            | Instr::WaitAll { value, .. }
            | Instr::WaitAny { value, .. }
            | Instr::Spin { value, .. }
            | Instr::PeerStore { value, .. }
            | Instr::PutArray { value, .. } => vec![*value],
            Instr::PutSignal {
                value,
                signal_value,
                ..
            } => vec![*value, *signal_value],
            Instr::Amo { op, .. } => match *op {
                AmoOp::Set(v)
                | AmoOp::Swap(v)
                | AmoOp::Add(v)
                | AmoOp::And(v)
                | AmoOp::Or(v)
                | AmoOp::Xor(v) => vec![v],
                AmoOp::CompareSwap { cond, new } => vec![cond, new],
                AmoOp::Fetch | AmoOp::Inc => vec![],
            },
            _ => vec![],
        }
    }

    /// The registers the instruction reads as value operands.
    pub fn read_regs(&self) -> Vec<Reg> {
        self.operands()
            .into_iter()
            .filter_map(|v| match v {
                Value::Reg(r) => Some(r),
                Value::Const(_) => None,
            })
            .collect()
    }

    /// The context of an operation issued on one, if the instruction names one.
    pub fn ctx(&self) -> Option<Ctx> {
        match self {
            Instr::Put { ctx, .. }
            | Instr::Get { ctx, .. }
            | Instr::Amo { ctx, .. }
            | Instr::PutSignal { ctx, .. }
            | Instr::Fence { ctx }
            | Instr::Quiet { ctx }
            | Instr::Spin { ctx, .. }
            | Instr::PutArray { ctx, .. } => Some(*ctx),
            _ => None,
        }
    }
}
