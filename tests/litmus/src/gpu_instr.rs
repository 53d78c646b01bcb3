//! The device code of a litmus program, one call of the device API (`rshmem_device.cuh`) per
//! instruction, shared by the plain kernel ([`crate::kernel_source`]) and the stressed one
//! ([`crate::stress_kernel_source`]): they differ only in where a test's words live and in
//! how the PEs meet at a barrier, which [`Spelling`] says.
//!
//! An instruction the generator does not know (the format grows) is refused with
//! [`NotOnGpu`], never guessed at.

use std::fmt::Write as _;

use model::litmus::{AmoOp, AmoWidth, Cmp, GetKind, Instr, Litmus, PutKind, SignalOp, Value, VarId};

/// How a kernel spells what differs between the plain and the stressed kernels.
pub(crate) struct Spelling<'a> {
    /// The C expression (an `unsigned long long *`) of the issuing PE's copy of a variable;
    /// the device API translates it to a peer's copy.
    pub var: &'a dyn Fn(VarId) -> String,
    /// The device code of a PE's `k`-th `barrier_all` or `sync_all` (1-based).
    pub barrier: &'a dyn Fn(usize) -> String,
}

/// A test holds an instruction that the kernel generator does not translate.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{test}: P{pe}'s instruction at line {line} ({instr}) is not on GPU: the kernel generator \
     does not translate it; check this test on the model and the simulator (`rshmem litmus`) \
     instead, or teach tests/litmus/src/gpu_instr.rs the instruction"
)]
pub struct NotOnGpu {
    /// The test.
    pub test: String,
    /// The PE whose program holds it.
    pub pe: u32,
    /// Its line in the litmus file.
    pub line: u32,
    /// The instruction, as the parser gave it.
    pub instr: String,
}

fn value(v: &Value) -> String {
    match v {
        Value::Const(c) => format!("{c}ull"),
        Value::Reg(r) => format!("r[{}]", r.0),
    }
}

fn cmp(c: Cmp) -> &'static str {
    match c {
        Cmp::Eq => "RSHMEM_CMP_EQ",
        Cmp::Ne => "RSHMEM_CMP_NE",
        Cmp::Gt => "RSHMEM_CMP_GT",
        Cmp::Ge => "RSHMEM_CMP_GE",
        Cmp::Lt => "RSHMEM_CMP_LT",
        Cmp::Le => "RSHMEM_CMP_LE",
    }
}

/// The device code of an atomic on `pe`'s copy of `d`, its old value into `fetch` if any.
fn amo(op: &AmoOp, d: &str, pe: u32, fetch: Option<model::litmus::Reg>) -> String {
    let call = match op {
        AmoOp::Fetch => format!("rshmem_atomic_fetch({d}, {pe})"),
        AmoOp::Set(v) => return format!("rshmem_atomic_set({d}, {}, {pe});", value(v)),
        AmoOp::Swap(v) => format!("rshmem_atomic_swap({d}, {}, {pe})", value(v)),
        AmoOp::CompareSwap { cond, new } => format!(
            "rshmem_atomic_compare_swap({d}, {}, {}, {pe})",
            value(cond),
            value(new)
        ),
        AmoOp::Add(v) => format!("rshmem_atomic_fetch_add({d}, {}, {pe})", value(v)),
        AmoOp::Inc => format!("rshmem_atomic_fetch_add({d}, 1ull, {pe})"),
        AmoOp::And(v) => format!("rshmem_atomic_fetch_and({d}, {}, {pe})", value(v)),
        AmoOp::Or(v) => format!("rshmem_atomic_fetch_or({d}, {}, {pe})", value(v)),
        AmoOp::Xor(v) => format!("rshmem_atomic_fetch_xor({d}, {}, {pe})", value(v)),
    };
    match fetch {
        Some(r) => format!("r[{}] = {call};", r.0),
        None => format!("(void){call};"),
    }
}

/// The device code of one instruction; `k` numbers it (for its source temporary `src[k]`),
/// `barriers` counts the PE's barriers up to and including this one. `None` for an
/// instruction the generator does not know.
fn instruction(instr: &Instr, k: usize, barriers: usize, s: &Spelling) -> Option<String> {
    let var = s.var;
    // New instructions of the format land in the wildcard arm, which is unreachable only until
    // the format grows.
    #[allow(unreachable_patterns)]
    let code = match instr {
        Instr::Put {
            kind,
            dst,
            value: v,
            ..
        } => {
            let (d, pe, v) = (var(dst.var), dst.pe, value(v));
            match kind {
                PutKind::P => format!("rshmem_p({d}, {v}, {pe});"),
                PutKind::Put => format!("src[{k}] = {v}; rshmem_put({d}, &src[{k}], 1, {pe});"),
                PutKind::PutNbi => {
                    format!("src[{k}] = {v}; rshmem_putmem_nbi({d}, &src[{k}], 8, {pe});")
                }
            }
        }
        Instr::Get { kind, reg, src, .. } => {
            let (s, pe, r) = (var(src.var), src.pe, reg.0);
            match kind {
                GetKind::G => format!("r[{r}] = rshmem_g({s}, {pe});"),
                GetKind::Get => format!("rshmem_get(&r[{r}], {s}, 1, {pe});"),
                GetKind::GetNbi => format!("rshmem_getmem_nbi(&r[{r}], {s}, 8, {pe});"),
            }
        }
        Instr::Amo {
            width: AmoWidth::W32,
            ..
        } => return None,
        Instr::Amo { op, dst, fetch, .. } => amo(op, &var(dst.var), dst.pe, *fetch),
        Instr::PutSignal {
            dst,
            value: v,
            signal,
            op,
            signal_value,
            ..
        } => {
            let sig_op = match op {
                SignalOp::Set => "RSHMEM_SIGNAL_SET",
                SignalOp::Add => "RSHMEM_SIGNAL_ADD",
            };
            format!(
                "src[{k}] = {}; rshmem_put_signal({}, &src[{k}], 8, {}, {}, {sig_op}, {});",
                value(v),
                var(dst.var),
                var(signal.var),
                value(signal_value),
                dst.pe
            )
        }
        Instr::Fence { .. } => "rshmem_fence();".into(),
        Instr::Quiet { .. } => "rshmem_quiet();".into(),
        Instr::BarrierAll | Instr::SyncAll => (s.barrier)(barriers),
        Instr::Wait {
            var: v,
            cmp: c,
            value: x,
        } => format!("rshmem_wait_until({}, {}, {});", var(*v), cmp(*c), value(x)),
        Instr::SignalWait {
            var: v,
            cmp: c,
            value: x,
        } => format!(
            "rshmem_signal_wait_until({}, {}, {});",
            var(*v),
            cmp(*c),
            value(x)
        ),
        Instr::Load { reg, var: v } => format!(
            "r[{}] = *(volatile unsigned long long *){};",
            reg.0,
            var(*v)
        ),
        Instr::Store { var: v, value: x } => format!(
            "*(volatile unsigned long long *){} = {};",
            var(*v),
            value(x)
        ),
        _ => return None,
    };
    Some(code)
}

/// `switch (me) { case P: ...program... break; }` for every PE of `test`, each line indented
/// by `indent`.
///
/// # Errors
/// [`NotOnGpu`] for the first instruction the generator does not translate.
pub(crate) fn program_cases(
    test: &Litmus,
    spelling: &Spelling,
    indent: &str,
) -> Result<String, NotOnGpu> {
    let mut s = format!("{indent}switch (me) {{\n");
    for (pe, program) in test.programs.iter().enumerate() {
        let _ = writeln!(s, "{indent}case {pe}:");
        let mut barriers = 0;
        for (k, (instr, span)) in program.iter().enumerate() {
            if matches!(instr, Instr::BarrierAll | Instr::SyncAll) {
                barriers += 1;
            }
            let code = instruction(instr, k, barriers, spelling).ok_or_else(|| NotOnGpu {
                test: test.name.clone(),
                pe: pe as u32,
                line: span.line,
                instr: format!("{instr:?}"),
            })?;
            let _ = writeln!(s, "{indent}  {code}");
        }
        let _ = writeln!(s, "{indent}  break;");
    }
    let _ = writeln!(s, "{indent}}}");
    Ok(s)
}

/// The most instructions of any PE's program: the size of the kernel's `src` array.
pub(crate) fn longest_program(test: &Litmus) -> usize {
    test.programs.iter().map(Vec::len).max().unwrap_or(0).max(1)
}
