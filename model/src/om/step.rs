//! The transitions of SHMEM-OM (the rules of docs/ordering.md): a PE runs
//! its next instruction, a message is delivered, or a pending write drains.

use super::machine::Machine;
use super::state::{Body, CMPS, Msg, N_REGS, Rmw, State, signal_adds};
use crate::litmus::{AmoOp, AmoWidth, Ctx, GetKind, Instr, NONE_SATISFIED, Value, VarId};

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
                let next = self.deliver(s, i);
                // A spin's read is the one that succeeds: its value satisfies the comparison.
                if until_holds(msg, &next) {
                    out.push(next);
                }
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
        // A spin loop runs until its read succeeds; nothing after it runs meanwhile.
        if outstanding.clone().any(|m| m.until.is_some()) {
            return None;
        }
        // R7 fetch-in-flight: using a register still being fetched waits for it.
        if instr.read_regs().into_iter().any(|r| {
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
        let message = |dst: u32, ctx: Ctx, blocking_fetch: bool, body| Msg {
            src: pe as u8,
            dst: dst as u8,
            ctx: ctx.0,
            epoch: s.epochs[pe * self.n_ctxs + usize::from(ctx.0)],
            // Over the network transport only a put and an atomic that fetches nothing are
            // posted: every other operation (gets and fetching atomics, non-blocking ones
            // too) completes before the call returns, so the PE stalls on it as on a
            // blocking fetch under OpenSHMEM rules.
            blocking_fetch: blocking_fetch || (self.network && !posted_over_network(&body)),
            until: None,
            unfenced: self.nbi_unfenced && nbi(instr),
            body,
        };
        let send = |next: &mut State, dst: u32, ctx: Ctx, blocking_fetch: bool, body| {
            next.send(message(dst, ctx, blocking_fetch, body));
        };
        let own = |var: VarId| s.mem[pe * self.n_vars + usize::from(var.0)];
        let set_reg = |next: &mut State, r: crate::litmus::Reg, v: u64| {
            next.regs[pe * N_REGS + usize::from(r.0)] = v;
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
                width,
                ctx,
            } => {
                let narrow = width == AmoWidth::W32;
                let body = Body::Amo {
                    var: dst.var.0,
                    op: resolve(op, |v| narrowed(reg(v), narrow)),
                    reg: fetch.map(|r| r.0),
                    narrow,
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
                if self.network {
                    // The data is a put; the signal, one atomic, goes once every put of this
                    // PE to the target is delivered, and the PE waits for it.
                    let data = Body::Write {
                        var: dst.var.0,
                        value: reg(value),
                    };
                    send(&mut next, dst.pe, ctx, false, data);
                    let signal = Body::Signal {
                        var: signal.var.0,
                        add: signal_adds(op),
                        value: reg(signal_value),
                    };
                    send(&mut next, dst.pe, ctx, true, signal);
                } else {
                    let body = Body::PutSignal {
                        var: dst.var.0,
                        value: reg(value),
                        signal: signal.var.0,
                        add: signal_adds(op),
                        signal_value: reg(signal_value),
                    };
                    send(&mut next, dst.pe, ctx, false, body);
                }
            }
            Instr::Fence { ctx } => {
                // R7: under NVSHMEM a fence also waits for the blocking fetches in flight.
                // Over the network transport it waits for every put of the context (the
                // provider may deliver a put after a later atomic, and offers no fence), but
                // for those `nbi-unfenced` takes out of the fence's reach.
                let waits_for = |m: &Msg| m.blocking_fetch || (self.network && !m.unfenced);
                if outstanding.any(|m| m.ctx == ctx.0 && waits_for(m)) {
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
            Instr::BarrierAll | Instr::SyncAll | Instr::Team { .. } => {
                let team = self.team_of(instr);
                if !self.barrier_open(s, pe, team) {
                    return None;
                }
                next.barriers_passed[pe * self.teams.len() + team] += 1;
                if matches!(instr, Instr::BarrierAll | Instr::Team { barrier: true, .. }) {
                    next.flush(pe, self.n_vars);
                }
            }
            Instr::Wait { var, cmp, value } | Instr::SignalWait { var, cmp, value } => {
                // R3: enabled by the PE's visible word, then the consistency step.
                if !cmp.eval(own(var), reg(value)) {
                    return None;
                }
                next.flush(pe, self.n_vars);
            }
            Instr::WaitAll {
                ref vars,
                cmp,
                value,
            } => {
                // The words are checked together, then the consistency step (R3).
                if !vars.iter().all(|&v| cmp.eval(own(v), reg(value))) {
                    return None;
                }
                next.flush(pe, self.n_vars);
            }
            Instr::WaitAny {
                reg: r,
                ref vars,
                cmp,
                value,
            } => {
                let i = vars.iter().position(|&v| cmp.eval(own(v), reg(value)))?;
                set_reg(&mut next, r, i as u64);
                next.flush(pe, self.n_vars);
            }
            Instr::Test {
                reg: r,
                var,
                cmp,
                value,
            } => {
                let holds = cmp.eval(own(var), reg(value));
                set_reg(&mut next, r, u64::from(holds));
                if holds {
                    next.flush(pe, self.n_vars);
                }
            }
            Instr::TestAny {
                reg: r,
                ref vars,
                cmp,
                value,
            } => {
                let found = vars.iter().position(|&v| cmp.eval(own(v), reg(value)));
                set_reg(&mut next, r, found.map_or(NONE_SATISFIED, |i| i as u64));
                if found.is_some() {
                    next.flush(pe, self.n_vars);
                }
            }
            Instr::SignalFetch { reg: r, var } => {
                // A blocking operation that reads data, so R7 applies: it may be performed
                // after later reads unless a fence separates them (NVSHMEM memory model,
                // "Ordering of Blocking Fetching Operations"). It reads what the PE sees.
                let body = Body::Get {
                    var: var.0,
                    reg: r.0,
                };
                send(&mut next, pe as u32, Ctx::DEFAULT, true, body);
            }
            Instr::PeQuiet { pe: target } => {
                // shmem_pe_quiet: the default context's operations to `target` only; then
                // the consistency step, as quiet.
                if outstanding.any(|m| m.ctx == Ctx::DEFAULT.0 && m.dst as u32 == target) {
                    return None;
                }
                next.flush(pe, self.n_vars);
            }
            Instr::Spin {
                reg: r,
                src,
                atomic,
                cmp,
                value,
                ctx,
            } => {
                let body = if atomic {
                    Body::Amo {
                        var: src.var.0,
                        op: Rmw::Fetch,
                        reg: Some(r.0),
                        narrow: false,
                    }
                } else {
                    Body::Get {
                        var: src.var.0,
                        reg: r.0,
                    }
                };
                let cmp_code = CMPS
                    .iter()
                    .position(|&c| c == cmp)
                    .expect("CMPS lists every Cmp");
                next.send(Msg {
                    until: Some((cmp_code as u8, reg(value))),
                    ..message(src.pe, ctx, true, body)
                });
            }
            Instr::PeerLoad { reg: r, src } if src.pe as usize == pe => {
                set_reg(&mut next, r, own(src.var));
            }
            Instr::PeerLoad { reg: r, src } => {
                // A load of the peer's memory through shmem_ptr is a weak GPU load: like a
                // blocking get (R7), it may be performed after later reads unless a fence
                // separates them (PTX orders no two weak loads of different addresses; a
                // stressed H200 shows it, docs/litmus-on-gpu.md).
                let body = Body::Get {
                    var: src.var.0,
                    reg: r.0,
                };
                send(&mut next, src.pe, Ctx::DEFAULT, true, body);
            }
            Instr::PeerStore { dst, value } if dst.pe as usize == pe => {
                next.mem[pe * self.n_vars + usize::from(dst.var.0)] = reg(value);
            }
            Instr::PeerStore { dst, value } => {
                // A store through shmem_ptr is ordered and completed like `p` on the default
                // context.
                let body = Body::Write {
                    var: dst.var.0,
                    value: reg(value),
                };
                send(&mut next, dst.pe, Ctx::DEFAULT, false, body);
            }
            Instr::PutArray {
                dst,
                words,
                value,
                ctx,
                ..
            } => {
                // One message per word, so the words may land in any order (R10).
                for word in 0..words {
                    let body = Body::Write {
                        var: dst.var.0 + word,
                        value: reg(value),
                    };
                    send(&mut next, dst.pe, ctx, false, body);
                }
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

    /// Whether `pe`, at a rendezvous of `team`, is ready to leave it: every member has
    /// arrived at the same episode (R4), or has already left it.
    fn barrier_open(&self, s: &State, pe: usize, team: usize) -> bool {
        let n_teams = self.teams.len();
        let episode = s.barriers_passed[pe * n_teams + team];
        self.teams[team].iter().all(|&q| {
            let passed = s.barriers_passed[q * n_teams + team];
            passed == episode + 1 || (passed == episode && self.arrived(s, q, team))
        })
    }

    /// Whether `pe` waits at a rendezvous of `team` with its entry condition met. A barrier
    /// (barrier_all, team_barrier) first quiets the default context (R4) and waits for its
    /// blocking fetches (R7); a sync completes nothing. The condition stays true while the
    /// PE waits, since it issues nothing.
    fn arrived(&self, s: &State, pe: usize, team: usize) -> bool {
        let Some((instr, _)) = self.programs[pe].get(usize::from(s.pcs[pe])) else {
            return false;
        };
        let barrier = match instr {
            Instr::SyncAll | Instr::Team { barrier: false, .. } => false,
            Instr::BarrierAll | Instr::Team { barrier: true, .. } => true,
            _ => return false,
        };
        self.team_of(instr) == team
            && (!barrier
                || !s.in_flight.iter().any(|m| {
                    usize::from(m.src) == pe && (m.ctx == Ctx::DEFAULT.0 || m.blocking_fetch)
                }))
    }
}

/// Whether a delivered spin's read got a value that ends the spin (every other message
/// passes).
fn until_holds(msg: &Msg, next: &State) -> bool {
    let Some((cmp, value)) = msg.until else {
        return true;
    };
    let reg = fetch_reg(msg).expect("a spin reads into a register");
    let got = next.regs[usize::from(msg.src) * N_REGS + usize::from(reg.0)];
    CMPS[usize::from(cmp)].eval(got, value)
}

/// An operand of a 32-bit atomic keeps its low half.
fn narrowed(value: u64, narrow: bool) -> u64 {
    if narrow { value & 0xffff_ffff } else { value }
}

/// Whether an instruction is a non-blocking put, atomic or put-with-signal.
fn nbi(instr: &Instr) -> bool {
    match instr {
        Instr::Put { kind, .. } => *kind == crate::litmus::PutKind::PutNbi,
        Instr::Amo { nbi, .. } | Instr::PutSignal { nbi, .. } => *nbi,
        _ => false,
    }
}

/// Whether the network transport posts `body` (a put, or an atomic that writes and fetches
/// nothing, as the process backend's queue does) rather than completing it at issue.
fn posted_over_network(body: &Body) -> bool {
    match body {
        Body::Write { .. } => true,
        Body::Amo { op, reg, .. } => {
            reg.is_none() && !matches!(op, Rmw::Fetch | Rmw::CompareSwap { .. })
        }
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
