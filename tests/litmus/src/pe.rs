//! One PE's program of a litmus test, executed on any backend through the hardware contract.
//!
//! The runner works below the runtime on purpose: a blocking fetch of the Rust API returns its
//! value, so it cannot be in flight while the PE goes on, but under NVSHMEM rules (R7) a
//! blocking fetch is only waited for when its register is read, at a fence or quiet on its
//! context, or at a barrier. Queue tickets let the runner do exactly that. `barrier_all` is
//! the rule's own definition (quiet on the default context, rendezvous, consistency step), so
//! litmus tests check the ordering rules, not the runtime's barrier algorithm.

use hw::{
    AmoKind, AmoOp, AmoWidth, Backend, Copier, Device, Instant, LocalRange, MemKind, Pe, Queue,
    QueueError, RemoteRange, Ticket, WaitSpec,
};
use model::litmus::{self as lt, Config, Ctx, Instr, Litmus, Reg, Value};

mod idioms;

/// Virtual or real time a PE waits for anything before giving up.
const WAIT_NS: u64 = 1_000_000_000;
/// Registers per PE (`r0` to `r15`).
pub const N_REGS: usize = 16;

/// What one PE's run produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeRun {
    /// The final value of each register, `None` if no instruction wrote it.
    pub regs: [Option<u64>; N_REGS],
    /// The final value of this PE's copy of each variable, after every PE finished and every
    /// write to it became visible.
    pub memory: Vec<u64>,
}

/// Why a PE's program could not run to its end.
#[derive(Debug, thiserror::Error)]
pub enum PeRunError {
    /// A wait, quiet or rendezvous failed (deadline, deadlock, lost queue).
    #[error("{what}: {source}")]
    Queue {
        /// The instruction or step.
        what: String,
        /// The backend's error.
        source: QueueError,
    },
    /// The backend could not set up memory or queues.
    #[error("setup: {0}")]
    Device(#[from] hw::DeviceError),
    /// An instruction read a register no earlier instruction wrote.
    #[error("line {line}: r{reg} is read before any instruction writes it")]
    UnsetRegister {
        /// The register.
        reg: u8,
        /// The line of the instruction.
        line: u32,
    },
    /// A spin loop whose reads never satisfied its comparison (a hang).
    #[error("line {line}: hang: the spin never read a value that ends it (last read {last})")]
    SpinHang {
        /// The line of the spin.
        line: u32,
        /// The last value read.
        last: u64,
    },
    /// The test cannot be written under the configuration (`docs/litmus-format.md`).
    #[error("{0}")]
    DoesNotApply(String),
}

/// A fetch whose value has not been read yet.
struct Fetch {
    reg: Reg,
    ctx: Ctx,
    ticket: Ticket,
    /// An nbi fetch: only quiet (or the end) waits for it, never a fence.
    nbi: bool,
}

struct Interpreter<'d, B: Backend> {
    dev: &'d B::Device,
    queues: Vec<B::Queue>,
    nvshmem: bool,
    regs: [Option<u64>; N_REGS],
    fetches: Vec<Fetch>,
    /// The operations issued on the default context and not yet quieted, by target PE, for
    /// `pe_quiet`.
    issued: Vec<(u32, Ticket)>,
    /// The team rendezvous: their words, queue and episodes (`idioms.rs`).
    teams: idioms::Teams<B>,
    /// The words of the test's variables; the team words follow them.
    n_vars: usize,
    /// How long a spin reads before it is a hang, in exploration rounds.
    spin_rounds: u64,
}

fn word(var: lt::VarId) -> u64 {
    8 * u64::from(var.0)
}

fn local(var: lt::VarId) -> LocalRange {
    LocalRange {
        kind: MemKind::Device,
        offset: word(var),
        len: 8,
    }
}

fn remote(loc: lt::Loc) -> RemoteRange {
    RemoteRange {
        pe: Pe(loc.pe),
        kind: MemKind::Device,
        offset: word(loc.var),
        len: 8,
    }
}

fn cmp(c: lt::Cmp) -> hw::Cmp {
    match c {
        lt::Cmp::Eq => hw::Cmp::Eq,
        lt::Cmp::Ne => hw::Cmp::Ne,
        lt::Cmp::Gt => hw::Cmp::Gt,
        lt::Cmp::Ge => hw::Cmp::Ge,
        lt::Cmp::Lt => hw::Cmp::Lt,
        lt::Cmp::Le => hw::Cmp::Le,
    }
}

/// A wait that always holds: it reads the word and runs the consistency step.
fn settled(var: lt::VarId) -> WaitSpec {
    WaitSpec {
        word: local(var),
        width: AmoWidth::W64,
        signed: false,
        cmp: hw::Cmp::Ge,
        value: 0,
        purpose: "litmus consistency step",
    }
}

fn queue_err(what: impl Into<String>) -> impl FnOnce(QueueError) -> PeRunError {
    let what = what.into();
    move |source| PeRunError::Queue { what, source }
}

/// The number of contexts PE `pe` uses (the default one included).
fn n_contexts(program: &[(Instr, lt::Span)]) -> usize {
    program
        .iter()
        .map(|(i, _)| usize::from(i.ctx().map_or(0, |c| c.0)) + 1)
        .max()
        .unwrap_or(1)
}

/// Runs PE `dev.pe()`'s program of `test` under `config` and returns its registers and final
/// memory. Every PE of the run must call this (it has collective setup and teardown).
///
/// # Errors
/// [`PeRunError`] if a wait or rendezvous fails or the program reads an unset register.
pub fn run_pe<B: Backend>(
    test: &Litmus,
    config: &Config,
    dev: &B::Device,
) -> Result<PeRun, PeRunError> {
    if let Some(reason) = lt::does_not_apply(test, config) {
        return Err(PeRunError::DoesNotApply(format!(
            "line {}: {}",
            reason.line, reason.what
        )));
    }
    let me = dev.pe().0;
    let program = test
        .programs
        .get(me as usize)
        .map_or(&[][..], Vec::as_slice);
    let n_vars = test.vars.len().max(1);
    let deadline = || Instant(dev.now().0.saturating_add(WAIT_NS));

    // Setup: one segment of a word per variable and per team, imported on every PE.
    let team_sets = test.team_sets();
    let key = dev.create_segment(MemKind::Device, 8 * (n_vars + team_sets.len()) as u64)?;
    let keys = dev
        .exchange(&key.0, deadline())
        .map_err(queue_err("setup exchange"))?;
    for (peer, bytes) in keys.iter().cloned().enumerate() {
        dev.import_segment(Pe(peer as u32), MemKind::Device, &hw::SegmentKey(bytes))?;
    }
    for (loc, value) in &test.init {
        if loc.pe == me {
            dev.write_local(local(loc.var), &value.to_le_bytes());
        }
    }
    let queues = (0..n_contexts(program))
        .map(|_| dev.create_queue())
        .collect::<Result<Vec<_>, _>>()?;
    // Everyone's initial values are in place before anyone starts.
    dev.exchange(&[], deadline())
        .map_err(queue_err("start rendezvous"))?;

    let mut pe = Interpreter::<B> {
        dev,
        queues,
        nvshmem: config.nvshmem(),
        regs: [None; N_REGS],
        fetches: Vec::new(),
        issued: Vec::new(),
        teams: idioms::Teams::new(dev, team_sets)?,
        n_vars,
        spin_rounds: idioms::spin_rounds(test),
    };
    for (instr, span) in program {
        pe.step(instr, span.line, deadline())?;
    }

    // The end: complete everything, meet, then read this PE's memory once all is visible.
    for ctx in 0..pe.queues.len() {
        pe.quiet(Ctx(ctx as u8), deadline(), "final quiet")?;
    }
    pe.teams.quiet(deadline())?;
    dev.exchange(&[], deadline())
        .map_err(queue_err("end rendezvous"))?;
    // A wait returns the value it read before its consistency step, so the first wait on a
    // word may still show an old value; the second reads after the step.
    let memory = (0..test.vars.len())
        .map(|v| {
            let word = settled(lt::VarId(v as u16));
            dev.wait_until(word, deadline())
                .and_then(|_| dev.wait_until(word, deadline()))
                .map_err(queue_err("final read"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(PeRun {
        regs: pe.regs,
        memory,
    })
}

impl<B: Backend> Interpreter<'_, B> {
    fn queue(&self, ctx: Ctx) -> &B::Queue {
        &self.queues[usize::from(ctx.0)]
    }

    /// Waits for the fetches `which` selects and stores their values in their registers.
    fn settle(
        &mut self,
        deadline: Instant,
        what: &str,
        which: impl Fn(&Fetch) -> bool,
    ) -> Result<(), PeRunError> {
        let mut i = 0;
        while i < self.fetches.len() {
            if which(&self.fetches[i]) {
                let f = self.fetches.swap_remove(i);
                let q = self.queue(f.ctx);
                q.wait_ticket(f.ticket, deadline).map_err(queue_err(what))?;
                let bytes = q.take_fetched(f.ticket);
                let mut le = [0u8; 8];
                le.copy_from_slice(&bytes[..8]);
                self.regs[usize::from(f.reg.0)] = Some(u64::from_le_bytes(le));
            } else {
                i += 1;
            }
        }
        Ok(())
    }

    fn value(&mut self, v: Value, line: u32, deadline: Instant) -> Result<u64, PeRunError> {
        match v {
            Value::Const(c) => Ok(c),
            Value::Reg(reg) => {
                // A dependency: the PE stalls until the fetch that fills the register is done.
                self.settle(deadline, "register dependency", |f| f.reg == reg)?;
                self.regs[usize::from(reg.0)].ok_or(PeRunError::UnsetRegister { reg: reg.0, line })
            }
        }
    }

    /// Records a fetch in flight; under OpenSHMEM 1.5 a blocking fetch completes at once.
    fn fetched(
        &mut self,
        reg: Reg,
        ctx: Ctx,
        ticket: Ticket,
        nbi: bool,
        deadline: Instant,
    ) -> Result<(), PeRunError> {
        // Two writes to one register land in program order: the earlier fetch is waited for.
        self.settle(deadline, "register reuse", |f| f.reg == reg)?;
        self.regs[usize::from(reg.0)] = None;
        self.fetches.push(Fetch {
            reg,
            ctx,
            ticket,
            nbi,
        });
        if !nbi && !self.nvshmem {
            self.settle(deadline, "blocking fetch", |f| {
                f.ticket == ticket && f.ctx == ctx
            })?;
        }
        Ok(())
    }

    fn quiet(&mut self, ctx: Ctx, deadline: Instant, what: &str) -> Result<(), PeRunError> {
        self.queue(ctx).quiet(deadline).map_err(queue_err(what))?;
        if ctx == Ctx::DEFAULT {
            self.issued.clear();
        }
        self.settle(deadline, what, |f| f.ctx == ctx)
    }

    fn step(&mut self, instr: &Instr, line: u32, deadline: Instant) -> Result<(), PeRunError> {
        let what = |name: &str| format!("line {line}: {name}");
        match *instr {
            Instr::Put {
                dst, value, ctx, ..
            } => {
                let v = self.value(value, line, deadline)?;
                let ticket = self
                    .queue(ctx)
                    .put(remote(dst), &v.to_le_bytes(), Copier::Device)
                    .map_err(queue_err(what("put")))?;
                self.note_issued(ctx, dst.pe, ticket);
            }
            Instr::Get {
                kind,
                reg,
                src,
                ctx,
            } => {
                let ticket = self
                    .queue(ctx)
                    .get(remote(src))
                    .map_err(queue_err(what("get")))?;
                self.note_issued(ctx, src.pe, ticket);
                self.fetched(reg, ctx, ticket, kind == lt::GetKind::GetNbi, deadline)?;
            }
            Instr::Amo {
                op,
                dst,
                fetch,
                nbi,
                width,
                ctx,
            } => {
                let op = self.amo(op, width, line, deadline)?;
                let mut target = remote(dst);
                target.len = op.width.bytes();
                let ticket = self
                    .queue(ctx)
                    .amo(target, op, fetch.is_some())
                    .map_err(queue_err(what("atomic")))?;
                self.note_issued(ctx, dst.pe, ticket);
                if let Some(reg) = fetch {
                    self.fetched(reg, ctx, ticket, nbi, deadline)?;
                }
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
                let v = self.value(value, line, deadline)?;
                let signal_value = self.value(signal_value, line, deadline)?;
                let op = match op {
                    lt::SignalOp::Set => hw::SignalOp::Set,
                    lt::SignalOp::Add => hw::SignalOp::Add,
                };
                let ticket = self
                    .queue(ctx)
                    .put_signal(
                        remote(dst),
                        &v.to_le_bytes(),
                        remote(signal),
                        op,
                        signal_value,
                        Copier::Device,
                    )
                    .map_err(queue_err(what("put_signal")))?;
                self.note_issued(ctx, dst.pe, ticket);
            }
            Instr::Fence { ctx } => {
                // R7: a fence orders blocking fetches, which the PE does by waiting for them;
                // nbi fetches are not ordered by fence (R1).
                self.settle(deadline, &what("fence"), |f| f.ctx == ctx && !f.nbi)?;
                self.queue(ctx).fence().map_err(queue_err(what("fence")))?;
            }
            Instr::Quiet { ctx } => self.quiet(ctx, deadline, &what("quiet"))?,
            Instr::BarrierAll => {
                self.quiet(Ctx::DEFAULT, deadline, &what("barrier_all"))?;
                self.settle(deadline, &what("barrier_all"), |f| !f.nbi)?;
                self.dev
                    .exchange(&[], deadline)
                    .map_err(queue_err(what("barrier_all")))?;
                self.dev
                    .wait_until(settled(lt::VarId(0)), deadline)
                    .map_err(queue_err(what("barrier_all")))?;
            }
            Instr::SyncAll => {
                self.dev
                    .exchange(&[], deadline)
                    .map_err(queue_err(what("sync_all")))?;
            }
            Instr::Wait { var, cmp: c, value } | Instr::SignalWait { var, cmp: c, value } => {
                let spec = WaitSpec {
                    word: local(var),
                    width: AmoWidth::W64,
                    signed: false,
                    cmp: cmp(c),
                    value: self.value(value, line, deadline)?,
                    purpose: "litmus wait",
                };
                self.dev
                    .wait_until(spec, deadline)
                    .map_err(queue_err(what("wait")))?;
            }
            Instr::Load { reg, var } => {
                let mut le = [0u8; 8];
                self.dev.read_local(local(var), &mut le);
                // Two writes to one register land in program order.
                self.settle(deadline, &what("load"), |f| f.reg == reg)?;
                self.regs[usize::from(reg.0)] = Some(u64::from_le_bytes(le));
            }
            Instr::Store { var, value } => {
                let v = self.value(value, line, deadline)?;
                self.dev.write_local(local(var), &v.to_le_bytes());
            }
            _ => self.step_idiom(instr, line, deadline)?,
        }
        Ok(())
    }

    /// Remembers an operation of the default context for `pe_quiet`.
    fn note_issued(&mut self, ctx: Ctx, target: u32, ticket: Ticket) {
        if ctx == Ctx::DEFAULT {
            self.issued.push((target, ticket));
        }
    }

    fn amo(
        &mut self,
        op: lt::AmoOp,
        width: lt::AmoWidth,
        line: u32,
        deadline: Instant,
    ) -> Result<AmoOp, PeRunError> {
        let (kind, operand) = match op {
            lt::AmoOp::Fetch => (AmoKind::Fetch, 0),
            lt::AmoOp::Set(v) => (AmoKind::Set, self.value(v, line, deadline)?),
            lt::AmoOp::Swap(v) => (AmoKind::Swap, self.value(v, line, deadline)?),
            lt::AmoOp::CompareSwap { cond, new } => {
                let compare = self.value(cond, line, deadline)?;
                (
                    AmoKind::CompareSwap { compare },
                    self.value(new, line, deadline)?,
                )
            }
            lt::AmoOp::Add(v) => (AmoKind::Add, self.value(v, line, deadline)?),
            lt::AmoOp::Inc => (AmoKind::Add, 1),
            lt::AmoOp::And(v) => (AmoKind::And, self.value(v, line, deadline)?),
            lt::AmoOp::Or(v) => (AmoKind::Or, self.value(v, line, deadline)?),
            lt::AmoOp::Xor(v) => (AmoKind::Xor, self.value(v, line, deadline)?),
        };
        let width = match width {
            lt::AmoWidth::W64 => AmoWidth::W64,
            lt::AmoWidth::W32 => AmoWidth::W32,
        };
        Ok(AmoOp {
            kind,
            operand,
            width,
        })
    }
}
