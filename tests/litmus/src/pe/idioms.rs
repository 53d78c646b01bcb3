//! The instructions of the format's second edition on a backend: tests and waits on lists
//! of words, `signal_fetch`, `pe_quiet`, team rendezvous, spin loops, loads and stores of a
//! peer's copy, and puts of whole arrays.

use hw::{AmoKind, AmoOp, AmoWidth, Backend, Copier, Device, Instant, Pe, Queue, Ticket, WaitSpec};
use model::litmus::{self as lt, Ctx, Instr, Litmus, NONE_SATISFIED};

use super::{Interpreter, PeRunError, cmp, local, queue_err, remote, settled};

/// Rounds of virtual time a spin re-reads for before it is a hang: two per instruction of
/// the test, and two more. An exploration delays each operation by at most two rounds, so
/// every write the other PEs can make lands within that; a spin re-reads once a round, and
/// only a spin that never succeeds reads until the bound, so the bound costs executions of
/// hanging spins only (each read is an operation with its own choice).
pub(super) fn spin_rounds(test: &Litmus) -> u64 {
    2 + 2 * test.programs.iter().map(Vec::len).sum::<usize>() as u64
}

/// The team rendezvous of one PE: each member adds 1 to a counter word on every other
/// member, then waits until its own counter shows every other member's arrival at this
/// episode. The atomics go on a queue of their own, so no context's fence or quiet sees them.
pub(super) struct Teams<B: Backend> {
    sets: Vec<Vec<u32>>,
    episodes: Vec<u64>,
    queue: Option<B::Queue>,
}

impl<B: Backend> Teams<B> {
    pub(super) fn new(dev: &B::Device, sets: Vec<Vec<u32>>) -> Result<Self, hw::DeviceError> {
        let queue = if sets.is_empty() {
            None
        } else {
            Some(dev.create_queue()?)
        };
        Ok(Self {
            episodes: vec![0; sets.len()],
            sets,
            queue,
        })
    }

    /// Completes the arrivals this PE announced.
    pub(super) fn quiet(&self, deadline: Instant) -> Result<(), PeRunError> {
        match &self.queue {
            Some(q) => q
                .quiet(deadline)
                .map_err(queue_err("final quiet of the teams")),
            None => Ok(()),
        }
    }
}

/// The value of a word read by a completed fetch.
fn word_of(bytes: &[u8]) -> u64 {
    let mut le = [0u8; 8];
    le.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(le)
}

impl<B: Backend> Interpreter<'_, B> {
    /// The instructions `step` leaves to this file.
    pub(super) fn step_idiom(
        &mut self,
        instr: &Instr,
        line: u32,
        deadline: Instant,
    ) -> Result<(), PeRunError> {
        let what = |name: &str| format!("line {line}: {name}");
        let base = self.base;
        let spec = |var: lt::VarId, c: lt::Cmp, value: u64| WaitSpec {
            word: local(base, var),
            width: AmoWidth::W64,
            signed: false,
            cmp: cmp(c),
            value,
            purpose: "litmus wait",
        };
        match *instr {
            Instr::SignalFetch { reg, var } => {
                // A blocking fetch in flight (R7): a get of the PE's own word, performed when
                // the exploration chooses, before the register is read or a fence.
                let me = self.dev.pe().0;
                self.fetch_in_flight(reg, lt::Loc { var, pe: me }, what("signal_fetch"), deadline)?;
            }
            Instr::Test {
                reg,
                var,
                cmp: c,
                value,
            } => {
                let v = self.value(value, line, deadline)?;
                // The load gives the exploration its choice of when the test looks.
                self.load_own(var);
                let holds = self.dev.test(spec(var, c, v)).is_some();
                self.set_reg(reg, u64::from(holds), deadline)?;
            }
            Instr::TestAny {
                reg,
                ref vars,
                cmp: c,
                value,
            } => {
                let v = self.value(value, line, deadline)?;
                self.load_own(vars[0]);
                let found = vars
                    .iter()
                    .position(|&var| self.dev.test(spec(var, c, v)).is_some());
                self.set_reg(reg, found.map_or(NONE_SATISFIED, |i| i as u64), deadline)?;
            }
            Instr::WaitAll {
                ref vars,
                cmp: c,
                value,
            } => {
                let v = self.value(value, line, deadline)?;
                for &var in vars {
                    self.dev
                        .wait_until(spec(var, c, v), deadline)
                        .map_err(queue_err(what("wait_all")))?;
                }
            }
            Instr::WaitAny {
                reg,
                ref vars,
                cmp: c,
                value,
            } => {
                let v = self.value(value, line, deadline)?;
                let specs: Vec<WaitSpec> = vars.iter().map(|&var| spec(var, c, v)).collect();
                let (index, _) = self
                    .dev
                    .wait_until_any(&specs, deadline)
                    .map_err(queue_err(what("wait_any")))?;
                self.set_reg(reg, index as u64, deadline)?;
            }
            Instr::PeQuiet { pe: target } => self.pe_quiet(target, deadline, &what("pe_quiet"))?,
            Instr::Team { ref pes, barrier } => {
                if barrier {
                    self.quiet(Ctx::DEFAULT, deadline, &what("team_barrier"))?;
                    self.settle(deadline, &what("team_barrier"), |f| !f.nbi)?;
                }
                self.rendezvous(pes, deadline, &what("team rendezvous"))?;
            }
            Instr::Spin {
                reg,
                src,
                atomic,
                cmp: c,
                value,
                ctx,
            } => {
                let want = self.value(value, line, deadline)?;
                self.settle(deadline, "register reuse", |f| f.reg == reg)?;
                let got = self.spin(src, atomic, c, want, ctx, line, deadline)?;
                self.regs[usize::from(reg.0)] = Some(got);
            }
            Instr::PeerLoad { reg, src } if src.pe == self.dev.pe().0 => {
                let value = self.load_own(src.var);
                self.set_reg(reg, value, deadline)?;
            }
            Instr::PeerLoad { reg, src } => {
                // A weak load of the peer's memory over NVLink: a blocking fetch in flight
                // (R7), what the peer's memory shows when it arrives there.
                self.fetch_in_flight(reg, src, what("ld"), deadline)?;
            }
            Instr::PeerStore { dst, value } if dst.pe == self.dev.pe().0 => {
                let v = self.value(value, line, deadline)?;
                self.dev
                    .write_local(local(self.base, dst.var), &v.to_le_bytes());
            }
            Instr::PeerStore { dst, value } => {
                // A store through shmem_ptr: ordered and completed like `p` on the default
                // context.
                let v = self.value(value, line, deadline)?;
                let ticket = self
                    .queue(Ctx::DEFAULT)
                    .put(remote(self.base, dst), &v.to_le_bytes(), Copier::Device)
                    .map_err(queue_err(what("st")))?;
                self.note_issued(Ctx::DEFAULT, dst.pe, ticket);
            }
            Instr::PutArray {
                dst,
                words,
                value,
                ctx,
                ..
            } => {
                let v = self.value(value, line, deadline)?;
                let data: Vec<u8> = (0..words).flat_map(|_| v.to_le_bytes()).collect();
                let mut range = remote(self.base, dst);
                range.len = data.len() as u64;
                let ticket = self
                    .queue(ctx)
                    .put(range, &data, Copier::Device)
                    .map_err(queue_err(what("put")))?;
                self.note_issued(ctx, dst.pe, ticket);
            }
            _ => unreachable!("`step` runs the first edition's instructions"),
        }
        Ok(())
    }

    /// A plain load of the PE's own word.
    fn load_own(&self, var: lt::VarId) -> u64 {
        let mut le = [0u8; 8];
        self.dev.read_local(local(self.base, var), &mut le);
        u64::from_le_bytes(le)
    }

    /// Writes a register, after the fetch in flight into it (two writes land in program
    /// order).
    fn set_reg(&mut self, reg: lt::Reg, value: u64, deadline: Instant) -> Result<(), PeRunError> {
        self.settle(deadline, "register reuse", |f| f.reg == reg)?;
        self.regs[usize::from(reg.0)] = Some(value);
        Ok(())
    }

    /// `pe_quiet`: waits for the default context's operations to `target`, then runs the
    /// consistency step as quiet does.
    fn pe_quiet(&mut self, target: u32, deadline: Instant, what: &str) -> Result<(), PeRunError> {
        let tickets: Vec<Ticket> = self
            .issued
            .iter()
            .filter(|&&(pe, _)| pe == target)
            .map(|&(_, t)| t)
            .collect();
        self.issued.retain(|&(pe, _)| pe != target);
        for &ticket in &tickets {
            self.queue(Ctx::DEFAULT)
                .wait_ticket(ticket, deadline)
                .map_err(queue_err(what))?;
        }
        self.settle(deadline, what, |f| {
            f.ctx == Ctx::DEFAULT && tickets.contains(&f.ticket)
        })?;
        self.dev
            .wait_until(settled(self.base, lt::VarId(0)), deadline)
            .map_err(queue_err(what))?;
        Ok(())
    }

    /// A get of `src` on the default context that stays in flight as a blocking fetch (R7):
    /// `reg` is filled when the exploration delivers it, before a use of the register, a
    /// fence or a quiet.
    fn fetch_in_flight(
        &mut self,
        reg: lt::Reg,
        src: lt::Loc,
        what: String,
        deadline: Instant,
    ) -> Result<(), PeRunError> {
        let ticket = self
            .queue(Ctx::DEFAULT)
            .get(remote(self.base, src))
            .map_err(queue_err(what))?;
        self.note_issued(Ctx::DEFAULT, src.pe, ticket);
        self.fetched(reg, Ctx::DEFAULT, ticket, false, deadline)
    }

    /// The rendezvous of the team `pes` (this PE among them).
    pub(super) fn rendezvous(
        &mut self,
        pes: &[u32],
        deadline: Instant,
        what: &str,
    ) -> Result<(), PeRunError> {
        let me = self.dev.pe().0;
        let team = self
            .teams
            .sets
            .iter()
            .position(|s| s == pes)
            .expect("team_sets lists every team of the test");
        let word = lt::VarId((self.n_vars + team) as u16);
        let queue = self
            .teams
            .queue
            .as_ref()
            .expect("a test with teams has their queue");
        let add = AmoOp {
            kind: AmoKind::Add,
            operand: 1,
            width: AmoWidth::W64,
        };
        for &peer in pes.iter().filter(|&&p| p != me) {
            queue
                .amo(
                    remote(
                        self.base,
                        lt::Loc {
                            var: word,
                            pe: peer,
                        },
                    ),
                    add,
                    false,
                )
                .map_err(queue_err(what))?;
        }
        self.teams.episodes[team] += 1;
        let arrivals = self.teams.episodes[team] * (pes.len() as u64 - 1);
        let spec = WaitSpec {
            word: local(self.base, word),
            width: AmoWidth::W64,
            signed: false,
            cmp: hw::Cmp::Ge,
            value: arrivals,
            purpose: "litmus team rendezvous",
        };
        self.dev
            .wait_until(spec, deadline)
            .map_err(queue_err(what))?;
        Ok(())
    }

    /// A spin loop: reads `src` until the value satisfies the comparison, once a round of
    /// virtual time, for at most [`spin_rounds`] rounds after the first read.
    #[allow(clippy::too_many_arguments)] // the fields of `Instr::Spin`, resolved
    fn spin(
        &mut self,
        src: lt::Loc,
        atomic: bool,
        c: lt::Cmp,
        want: u64,
        ctx: Ctx,
        line: u32,
        deadline: Instant,
    ) -> Result<u64, PeRunError> {
        let what = format!("line {line}: spin");
        let round_ns = sim::Explore::default_round_ns(
            self.dev.topology(),
            &sim::costs::Timing::default(),
            self.dev.n_pes(),
        );
        let mut give_up_ns = self.dev.now().0 + self.spin_rounds * round_ns;
        loop {
            let q = self.queue(ctx);
            let ticket = if atomic {
                let fetch = AmoOp {
                    kind: AmoKind::Fetch,
                    operand: 0,
                    width: AmoWidth::W64,
                };
                q.amo(remote(self.base, src), fetch, true)
            } else {
                q.get(remote(self.base, src))
            }
            .map_err(queue_err(&what))?;
            q.wait_ticket(ticket, deadline).map_err(queue_err(&what))?;
            let got = word_of(&q.take_fetched(ticket));
            if c.eval(got, want) {
                return Ok(got);
            }
            if self.dev.now().0 >= give_up_ns {
                // On a backend whose time is real (pace declines) the first read alone may
                // outlast the rounds: there only the wait's deadline makes the spin a hang.
                if give_up_ns == deadline.0 || self.pace(src.pe, round_ns) {
                    return Err(PeRunError::SpinHang { line, last: got });
                }
                give_up_ns = deadline.0;
                continue;
            }
            if !self.pace(src.pe, round_ns) {
                // Real time: the writer may not even have run yet, so only the wait's
                // deadline makes the spin a hang.
                give_up_ns = deadline.0;
            }
        }
    }

    /// Lets `ns` of the PE's time pass without an operation, where the backend models time:
    /// it is charged as loads from `peer` (`Device::note_mapped_loads`), and `true` is
    /// returned. A backend whose time is real charges nothing (`false`), and the spin simply
    /// reads again.
    fn pace(&self, peer: u32, ns: u64) -> bool {
        // Why ask the backend: a wall clock also jumps while the thread is preempted, which
        // on a busy machine looked like a charge taking effect and ended spins as hangs long
        // before their deadline.
        if !self.dev.caps().simulated_time {
            return false;
        }
        let me = self.dev.pe().0;
        let n_pes = self.dev.n_pes();
        let peer = if peer != me || n_pes == 1 {
            peer
        } else {
            (me + 1) % n_pes
        };
        let until_ns = self.dev.now().0.saturating_add(ns);
        let mut bytes: u64 = 1 << 20;
        while self.dev.now().0 < until_ns {
            let before_ns = self.dev.now().0;
            self.dev.note_mapped_loads(Pe(peer), bytes);
            // A simulated clock that the charge did not move charges nothing here.
            if self.dev.now().0 < before_ns + bytes / 1024 {
                return false;
            }
            bytes = bytes.saturating_mul(2);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use model::litmus::{Config, parse};

    use crate::files::catalogue_dir;

    /// Every catalogue test of the second edition's forms runs on host threads, whose time is
    /// real: a spin waits for its writer however late the thread runs, and each outcome is
    /// one the model allows.
    #[test]
    fn the_second_edition_runs_on_the_host_backend() {
        let mut ran = 0;
        for entry in std::fs::read_dir(catalogue_dir()).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if !name.starts_with('g') {
                continue;
            }
            let test = parse(&name, &std::fs::read_to_string(&path).unwrap()).unwrap();
            if model::litmus::undefined_behaviour(&test).is_some() {
                continue;
            }
            let allowed = model::om::allowed_outcomes(&test, &Config::NV_NVL).unwrap();
            for _ in 0..20 {
                let outcome = crate::run_on_host(&test, &Config::NV_NVL)
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                assert!(allowed.outcomes.contains(&outcome), "{name}: {outcome:?}");
            }
            ran += 1;
        }
        assert!(ran >= 10, "only {ran} tests of family G");
    }
}
