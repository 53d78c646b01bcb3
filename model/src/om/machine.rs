//! What does not change during an exploration: the programs, the sizes, the topology.

use super::ModelError;
use super::state::{N_REGS, State};
use crate::litmus::{Config, Instr, Litmus, Modifier, Platform};

/// A test under a configuration, ready to be explored.
pub(super) struct Machine<'a> {
    pub programs: Vec<&'a [(Instr, crate::litmus::Span)]>,
    pub n_pes: usize,
    pub n_vars: usize,
    pub n_ctxs: usize,
    /// NVSHMEM rules (R7 fetch-in-flight, R8 pending writes); false under `os`.
    pub nvshmem: bool,
    /// `ib[src * n_pes + dst]`: writes from `src` land in `pending[dst]` (R8).
    pub ib: Vec<bool>,
    /// The members of each team that has a rendezvous: team 0 is every PE (barrier_all,
    /// sync_all), then each set a `team_sync` or `team_barrier` lists.
    pub teams: Vec<Vec<usize>>,
    /// `pcie-read-flush`: gets and atomics over InfiniBand flush their target's pending
    /// writes, and an atomic's update over InfiniBand is visible at once.
    pub pcie_read_flush: bool,
    /// `nbi-unfenced`: fence does not order non-blocking operations.
    pub nbi_unfenced: bool,
    /// `ib-coherent`: every write to a word with pending writes queues behind them.
    pub ib_coherent: bool,
    /// `os-net`: only puts and atomics that fetch nothing are posted; every other operation
    /// completes at issue, a fence waits for the context's posted operations, and a
    /// put-with-signal's signal, one atomic, waits for every put of its PE to its target.
    pub network: bool,
}

impl<'a> Machine<'a> {
    pub fn new(test: &'a Litmus, config: &Config) -> Result<Self, ModelError> {
        let n_pes = test.n_pes as usize;
        if let Platform::NvMix { hosts } = &config.platform
            && hosts.len() != n_pes
        {
            return Err(ModelError::ConfigDoesNotFit {
                config: config.to_string(),
                n_pes: test.n_pes,
            });
        }
        if test.programs.len() != n_pes {
            return Err(ModelError::ProgramsDoNotFit {
                programs: test.programs.len(),
                n_pes: test.n_pes,
            });
        }
        for (pe, program) in test.programs.iter().enumerate() {
            // The program counter and the fence epoch are bytes.
            if program.len() >= usize::from(u8::MAX) {
                return Err(ModelError::ProgramTooLong {
                    pe: pe as u32,
                    len: program.len(),
                });
            }
        }
        let n_ctxs = test
            .programs
            .iter()
            .flatten()
            .filter_map(|(instr, _)| instr.ctx().map(|ctx| usize::from(ctx.0) + 1))
            .max()
            .unwrap_or(1);
        let nvshmem = config.nvshmem();
        let ib = (0..n_pes * n_pes)
            .map(|i| nvshmem && config.over_ib((i / n_pes) as u32, (i % n_pes) as u32))
            .collect();
        let mut teams = vec![(0..n_pes).collect::<Vec<usize>>()];
        teams.extend(
            test.team_sets()
                .into_iter()
                .map(|pes| pes.into_iter().map(|p| p as usize).collect()),
        );
        Ok(Self {
            teams,
            programs: test.programs.iter().map(Vec::as_slice).collect(),
            n_pes,
            n_vars: test.vars.len().max(1),
            n_ctxs,
            nvshmem,
            ib,
            pcie_read_flush: config.has(Modifier::PcieReadFlush),
            nbi_unfenced: config.has(Modifier::NbiUnfenced),
            ib_coherent: config.has(Modifier::IbCoherent),
            network: config.network_transport(),
        })
    }

    /// The state before any transition: initial memory, nothing issued.
    pub fn initial(&self, test: &Litmus) -> State {
        let mut mem = vec![0; self.n_pes * self.n_vars];
        for (loc, value) in &test.init {
            mem[loc.pe as usize * self.n_vars + loc.var.0 as usize] = *value;
        }
        State {
            pcs: vec![0; self.n_pes],
            barriers_passed: vec![0; self.n_pes * self.teams.len()],
            regs: vec![0; self.n_pes * N_REGS],
            epochs: vec![0; self.n_pes * self.n_ctxs],
            mem,
            pending: vec![Vec::new(); self.n_pes],
            in_flight: Vec::new(),
        }
    }

    /// The team whose rendezvous `instr` is: 0 for barrier_all and sync_all, and for a
    /// team of every PE.
    pub fn team_of(&self, instr: &Instr) -> usize {
        match instr {
            Instr::Team { pes, .. } => self
                .teams
                .iter()
                .position(|t| {
                    t.len() == pes.len() && t.iter().zip(pes).all(|(&a, &b)| a == b as usize)
                })
                .expect("every team of the programs is listed"),
            _ => 0,
        }
    }

    /// Whether `pe` has run its whole program.
    pub fn done(&self, s: &State, pe: usize) -> bool {
        usize::from(s.pcs[pe]) == self.programs[pe].len()
    }
}
