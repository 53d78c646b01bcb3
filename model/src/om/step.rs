//! The transitions of SHMEM-OM (the rules of docs/ordering.md): a PE runs
//! its next instruction, a message is delivered, or a pending write drains.

use super::machine::Machine;
use super::state::{Body, Msg, N_REGS, Rmw, State, signal_adds};
use crate::litmus::{AmoOp, Ctx, GetKind, Instr, Value};

impl Machine<'_> {
    /// Every state one transition away from `s`.
    pub fn successors(&self, s: &State, out: &mut Vec<State>) {
        for pe in 0..self.n_pes {
            if let Some(next) = self.run(s, pe) {
                out.push(next);
            }
        }
        for (i, msg) in s.in_flight.iter().enumerate() {
            // Identical messages (two equal puts in one epoch) lead to the same state.
            if i > 0 && s.in_flight[i - 1] == *msg {
                continue;
            }
            if self.deliverable(s, msg) {
                out.push(self.deliver(s, i));
            }
        }
        for pe in 0..self.n_pes {
            for (i, (var, value)) in s.pending[pe].iter().enumerate() {
                // R8 drain; the oldest pending write to a word goes first so that the word
                // never goes back in time.
                if i > 0 && s.pending[pe][i - 1].0 == *var {
                    continue;
                }
                let mut next = s.clone();
                next.pending[pe].remove(i);
                next.mem[pe * self.n_vars + *var as usize] = *value;
                out.push(next);
            }
        }
    }

    /// PE `pe` runs its next instruction, if it is not done and not stalled.
    fn run(&self, s: &State, pe: usize) -> Option<State> {
        let instr = &self.programs[pe].get(usize::from(s.pcs[pe]))?.0;
        let mut outstanding = s.in_flight.iter().filter(|m| usize::from(m.src) == pe);
        // OpenSHMEM: a blocking fetch completes before the call returns.
        if !self.nvshmem && outstanding.clone().any(|m| m.blocking_fetch) {
            return None;
        }
        // R7 fetch-in-flight: using a register still being fetched waits for it.
        if reads(instr).into_iter().flatten().any(|r| {
            outstanding
                .clone()
                .any(|m| m.blocking_fetch && fetch_reg(m) == Some(r))
        }) {
            return None;
        }
        let mut next = s.clone();
        let reg = |v: Value| match v {
            Value::Const(c) => c,
            Value::Reg(r) => s.regs[pe * N_REGS + usize::from(r.0)],
        };
        let send = |next: &mut State, dst: u32, ctx: Ctx, blocking_fetch: bool, body| {
            let epoch = s.epochs[pe * self.n_ctxs + usize::from(ctx.0)];
            next.send(Msg {
                src: pe as u8,
                dst: dst as u8,
                ctx: ctx.0,
                epoch,
                blocking_fetch,
                unfenced: self.nbi_unfenced && nbi(instr),
                body,
            });
        };
        match *instr {
            Instr::Put {
                dst, value, ctx, ..
            } => {
                let body = Body::Write {
                    var: dst.var.0,
                    value: reg(value),
                };
                send(&mut next, dst.pe, ctx, false, body);
            }
            Instr::Get {
                kind,
                reg: r,
                src,
                ctx,
            } => {
                let body = Body::Get {
                    var: src.var.0,
                    reg: r.0,
                };
                send(&mut next, src.pe, ctx, kind != GetKind::GetNbi, body);
            }
            Instr::Amo {
                op,
                dst,
                fetch,
                nbi,
                ctx,
            } => {
                let body = Body::Amo {
                    var: dst.var.0,
                    op: resolve(op, reg),
                    reg: fetch.map(|r| r.0),
                };
                send(&mut next, dst.pe, ctx, fetch.is_some() && !nbi, body);
            }
            Instr::PutSignal {
                dst,
                value,
                signal,
                op,
                signal_value,
                ctx,
                ..
            } => {
                let body = Body::PutSignal {
                    var: dst.var.0,
                    value: reg(value),
                    signal: signal.var.0,
                    add: signal_adds(op),
                    signal_value,
                };
                send(&mut next, dst.pe, ctx, false, body);
            }
            Instr::Fence { ctx } => {
                // R7: under NVSHMEM a fence also waits for the blocking fetches in flight.
                if outstanding.any(|m| m.ctx == ctx.0 && m.blocking_fetch) {
                    return None;
                }
                next.epochs[pe * self.n_ctxs + usize::from(ctx.0)] += 1;
            }
            Instr::Quiet { ctx } => {
                // R2, then the consistency step (quiet_flushes_self = Always, R8).
                if outstanding.any(|m| m.ctx == ctx.0) {
                    return None;
                }
                next.flush(pe, self.n_vars);
            }
            Instr::BarrierAll | Instr::SyncAll => {
                if !self.barrier_open(s, pe) {
                    return None;
                }
                next.barriers_passed[pe] += 1;
                if matches!(instr, Instr::BarrierAll) {
                    next.flush(pe, self.n_vars);
                }
            }
            Instr::Wait { var, cmp, value } | Instr::SignalWait { var, cmp, value } => {
                // R3: enabled by the PE's visible word, then the consistency step.
                if !cmp.eval(s.mem[pe * self.n_vars + usize::from(var.0)], value) {
                    return None;
                }
                next.flush(pe, self.n_vars);
            }
            Instr::Load { reg: r, var } => {
                next.regs[pe * N_REGS + usize::from(r.0)] =
                    s.mem[pe * self.n_vars + usize::from(var.0)];
            }
            Instr::Store { var, value } => {
                next.mem[pe * self.n_vars + usize::from(var.0)] = reg(value);
            }
        }
        next.pcs[pe] += 1;
        Some(next)
    }

    /// Whether `pe`, at a barrier_all or sync_all, is ready to leave it: every PE has
    /// arrived at the same episode (R4), or has already left it.
    fn barrier_open(&self, s: &State, pe: usize) -> bool {
        let episode = s.barriers_passed[pe];
        (0..self.n_pes).all(|q| {
            s.barriers_passed[q] == episode + 1
                || (s.barriers_passed[q] == episode && self.arrived(s, q))
        })
    }

    /// Whether `pe` waits at a barrier with its entry condition met. A barrier_all first
    /// quiets the default context (R4) and waits for its blocking fetches (R7); a sync_all
    /// completes nothing. The condition stays true while the PE waits, since it issues nothing.
    fn arrived(&self, s: &State, pe: usize) -> bool {
        match self.programs[pe].get(usize::from(s.pcs[pe])) {
            Some((Instr::SyncAll, _)) => true,
            Some((Instr::BarrierAll, _)) => !s
                .in_flight
                .iter()
                .any(|m| usize::from(m.src) == pe && (m.ctx == Ctx::DEFAULT.0 || m.blocking_fetch)),
            _ => false,
        }
    }
}

/// The registers an instruction reads as value operands.
fn reads(instr: &Instr) -> [Option<crate::litmus::Reg>; 2] {
    let r = |v: &Value| match v {
        Value::Reg(r) => Some(*r),
        Value::Const(_) => None,
    };
    match instr {
        Instr::Put { value, .. } | Instr::PutSignal { value, .. } | Instr::Store { value, .. } => {
            [r(value), None]
        }
        Instr::Amo { op, .. } => match op {
            AmoOp::Set(v)
            | AmoOp::Swap(v)
            | AmoOp::Add(v)
            | AmoOp::And(v)
            | AmoOp::Or(v)
            | AmoOp::Xor(v) => [r(v), None],
            AmoOp::CompareSwap { cond, new } => [r(cond), r(new)],
            AmoOp::Fetch | AmoOp::Inc => [None, None],
        },
        _ => [None, None],
    }
}

/// Whether an instruction is a non-blocking put, atomic or put-with-signal.
fn nbi(instr: &Instr) -> bool {
    match instr {
        Instr::Put { kind, .. } => *kind == crate::litmus::PutKind::PutNbi,
        Instr::Amo { nbi, .. } | Instr::PutSignal { nbi, .. } => *nbi,
        _ => false,
    }
}

/// The register a fetch message fills.
fn fetch_reg(msg: &Msg) -> Option<crate::litmus::Reg> {
    match msg.body {
        Body::Get { reg, .. } | Body::Amo { reg: Some(reg), .. } => Some(crate::litmus::Reg(reg)),
        _ => None,
    }
}

/// An atomic with its operands read from the registers at issue.
fn resolve(op: AmoOp, reg: impl Fn(Value) -> u64) -> Rmw {
    match op {
        AmoOp::Fetch => Rmw::Fetch,
        AmoOp::Set(v) => Rmw::Set(reg(v)),
        AmoOp::Swap(v) => Rmw::Swap(reg(v)),
        AmoOp::CompareSwap { cond, new } => Rmw::CompareSwap {
            cond: reg(cond),
            new: reg(new),
        },
        AmoOp::Add(v) => Rmw::Add(reg(v)),
        AmoOp::Inc => Rmw::Add(1),
        AmoOp::And(v) => Rmw::And(reg(v)),
        AmoOp::Or(v) => Rmw::Or(reg(v)),
        AmoOp::Xor(v) => Rmw::Xor(reg(v)),
    }
}
