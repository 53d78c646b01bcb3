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
    /// The byte offset of the execution's words.
    base: u64,
    /// How `barrier_all` and `sync_all` meet.
    meeting: Meeting,
}

/// How `barrier_all` and `sync_all` meet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Meeting {
    /// Through the backend's rendezvous (`Device::exchange`), which may be the launcher's.
    Exchange,
    /// Through a word of the execution on each PE, as a team of every PE meets (`idioms.rs`):
    /// network atomics and a wait, which cost a round trip where an exchange through a
    /// launcher can cost milliseconds.
    Words,
}

/// Where one execution's words lie and how its PEs meet: what [`run_program`] needs besides
/// the test.
#[derive(Clone, Copy, Debug)]
pub struct Frame {
    /// The byte offset of the execution's first word in every PE's `Device` segment: a word
    /// per variable, then a word per team ([`Frame::words`]).
    pub base: u64,
    /// How `barrier_all` and `sync_all` meet.
    pub meeting: Meeting,
    /// How long any one wait, quiet or rendezvous may take, in the device's nanoseconds.
    pub wait_ns: u64,
}

impl Frame {
    /// How many words an execution of `test` takes: one per variable, one per team, and
    /// under [`Meeting::Words`] one for the team of every PE unless the test names it.
    pub fn words(test: &Litmus, meeting: Meeting) -> usize {
        test.vars.len().max(1) + team_sets(test, meeting).len()
    }

    fn deadline<D: Device>(&self, dev: &D) -> Instant {
        Instant(dev.now().0.saturating_add(self.wait_ns))
    }
}

/// Every PE of `test`, as a team.
fn every_pe(test: &Litmus) -> Vec<u32> {
    (0..test.n_pes).collect()
}

/// The teams whose rendezvous an execution of `test` needs words for.
fn team_sets(test: &Litmus, meeting: Meeting) -> Vec<Vec<u32>> {
    let mut sets = test.team_sets();
    let meets = test
        .programs
        .iter()
        .flatten()
        .any(|(i, _)| matches!(i, Instr::BarrierAll | Instr::SyncAll));
    if meeting == Meeting::Words && meets && !sets.contains(&every_pe(test)) {
        sets.push(every_pe(test));
    }
    sets
}

/// The byte offset of `var` in an execution whose words begin at byte `base`.
fn word(base: u64, var: lt::VarId) -> u64 {
    base + 8 * u64::from(var.0)
}

fn local(base: u64, var: lt::VarId) -> LocalRange {
    LocalRange {
        kind: MemKind::Device,
        offset: word(base, var),
        len: 8,
    }
}

fn remote(base: u64, loc: lt::Loc) -> RemoteRange {
    RemoteRange {
        pe: Pe(loc.pe),
        kind: MemKind::Device,
        offset: word(base, loc.var),
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
fn settled(base: u64, var: lt::VarId) -> WaitSpec {
    WaitSpec {
        word: local(base, var),
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
    let frame = Frame {
        base: 0,
        meeting: Meeting::Exchange,
        wait_ns: WAIT_NS,
    };
    let deadline = || frame.deadline(dev);

    // Setup: one segment of a word per variable and per team, imported on every PE.
    let words = Frame::words(test, frame.meeting);
    let key = dev.create_segment(MemKind::Device, 8 * words as u64)?;
    let keys = dev
        .exchange(&key.0, deadline())
        .map_err(queue_err("setup exchange"))?;
    for (peer, bytes) in keys.iter().cloned().enumerate() {
        dev.import_segment(Pe(peer as u32), MemKind::Device, &hw::SegmentKey(bytes))?;
    }
    for (loc, value) in &test.init {
        if loc.pe == me {
            dev.write_local(local(0, loc.var), &value.to_le_bytes());
        }
    }
    // Everyone's initial values are in place before anyone starts.
    dev.exchange(&[], deadline())
        .map_err(queue_err("start rendezvous"))?;
    let regs = run_program::<B>(test, config, dev, &frame)?;
    dev.exchange(&[], deadline())
        .map_err(queue_err("end rendezvous"))?;
    let memory = read_memory(test, dev, &frame)?;
    Ok(PeRun { regs, memory })
}

/// Runs PE `dev.pe()`'s program of `test` under `config` on the words `frame` places, from
/// its first instruction to the completion of everything it issued, and returns its
/// registers. The caller has set every PE's initial values and met the other PEs before, and
/// meets them again after, before it reads the memory ([`read_memory`]).
///
/// # Errors
/// [`PeRunError`] if a wait or rendezvous fails or the program reads an unset register.
pub fn run_program<B: Backend>(
    test: &Litmus,
    config: &Config,
    dev: &B::Device,
    frame: &Frame,
) -> Result<[Option<u64>; N_REGS], PeRunError> {
    let me = dev.pe().0;
    let program = test
        .programs
        .get(me as usize)
        .map_or(&[][..], Vec::as_slice);
    let queues = (0..n_contexts(program))
        .map(|_| dev.create_queue())
        .collect::<Result<Vec<_>, _>>()?;
    let mut pe = Interpreter::<B> {
        dev,
        queues,
        nvshmem: config.nvshmem(),
        regs: [None; N_REGS],
        fetches: Vec::new(),
        issued: Vec::new(),
        teams: idioms::Teams::new(dev, team_sets(test, frame.meeting))?,
        n_vars: test.vars.len().max(1),
        spin_rounds: idioms::spin_rounds(test),
        base: frame.base,
        meeting: frame.meeting,
    };
    for (instr, span) in program {
        pe.step(instr, span.line, frame.deadline(dev))?;
    }
    // The end: complete everything this PE issued.
    for ctx in 0..pe.queues.len() {
        pe.quiet(Ctx(ctx as u8), frame.deadline(dev), "final quiet")?;
    }
    pe.teams.quiet(frame.deadline(dev))?;
    Ok(pe.regs)
}

/// This PE's copy of each of `test`'s variables in the words `frame` places, read once every
/// PE's writes are complete (after the rendezvous that follows [`run_program`]).
///
/// # Errors
/// [`PeRunError::Queue`] if a read's wait fails.
pub fn read_memory<D: Device>(
    test: &Litmus,
    dev: &D,
    frame: &Frame,
) -> Result<Vec<u64>, PeRunError> {
    // A wait returns the value it read before its consistency step, so the first wait on a
    // word may still show an old value; the second reads after the step.
    (0..test.vars.len())
        .map(|v| {
            let word = settled(frame.base, lt::VarId(v as u16));
            dev.wait_until(word, frame.deadline(dev))
                .and_then(|_| dev.wait_until(word, frame.deadline(dev)))
                .map_err(queue_err("final read"))
        })
        .collect()
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
                    .put(remote(self.base, dst), &v.to_le_bytes(), Copier::Device)
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
                    .get(remote(self.base, src))
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
                let mut target = remote(self.base, dst);
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
                        remote(self.base, dst),
                        &v.to_le_bytes(),
                        remote(self.base, signal),
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
                self.meet(deadline, &what("barrier_all"))?;
                self.dev
                    .wait_until(settled(self.base, lt::VarId(0)), deadline)
                    .map_err(queue_err(what("barrier_all")))?;
            }
            Instr::SyncAll => self.meet(deadline, &what("sync_all"))?,
            Instr::Wait { var, cmp: c, value } | Instr::SignalWait { var, cmp: c, value } => {
                let spec = WaitSpec {
                    word: local(self.base, var),
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
                self.dev.read_local(local(self.base, var), &mut le);
                // Two writes to one register land in program order.
                self.settle(deadline, &what("load"), |f| f.reg == reg)?;
                self.regs[usize::from(reg.0)] = Some(u64::from_le_bytes(le));
            }
            Instr::Store { var, value } => {
                let v = self.value(value, line, deadline)?;
                self.dev
                    .write_local(local(self.base, var), &v.to_le_bytes());
            }
            _ => self.step_idiom(instr, line, deadline)?,
        }
        Ok(())
    }

    /// The rendezvous of every PE, as the frame's meeting says.
    fn meet(&mut self, deadline: Instant, what: &str) -> Result<(), PeRunError> {
        match self.meeting {
            Meeting::Exchange => self
                .dev
                .exchange(&[], deadline)
                .map(drop)
                .map_err(queue_err(what)),
            Meeting::Words => {
                let every: Vec<u32> = (0..self.dev.n_pes()).collect();
                self.rendezvous(&every, deadline, what)
            }
        }
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
