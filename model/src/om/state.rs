//! One state of SHMEM-OM, encoded so that equal states hash equal.
//!
//! Everything is a small integer: PEs, variables, registers and contexts are indices, and
//! the in-flight messages are kept sorted, so two interleavings that reach the same machine
//! state produce the same `State` and the explorer visits it once.

use crate::litmus::{Cmp, SignalOp};

/// The whole machine between two transitions.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub(super) struct State {
    /// Per PE, the index of the next instruction.
    pub pcs: Vec<u8>,
    /// `barriers_passed[pe * n_teams + team]`: how many episodes of the team's rendezvous
    /// (barrier_all, sync_all, team_sync, team_barrier) the PE has left; team 0 is all PEs.
    pub barriers_passed: Vec<u8>,
    /// `regs[pe * N_REGS + reg]`.
    pub regs: Vec<u64>,
    /// `epochs[pe * n_ctxs + ctx]`: the fence epoch of the PE's context (R1).
    pub epochs: Vec<u8>,
    /// `mem[pe * n_vars + var]`: the memory the PE's loads and NVLink peers see.
    pub mem: Vec<u64>,
    /// Per PE, writes delivered over InfiniBand and not yet visible (R8), in delivery order.
    /// Only the order among writes to one word matters, so it is kept stably sorted by word.
    pub pending: Vec<Vec<(u16, u64)>>,
    /// Messages issued and not yet delivered, sorted.
    pub in_flight: Vec<Msg>,
}

/// Registers per PE (`r0` to `r15`).
pub(super) const N_REGS: usize = 16;

/// An operation on its way from `src` to `dst`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub(super) struct Msg {
    pub src: u8,
    pub dst: u8,
    pub ctx: u8,
    /// The issuer's fence epoch on `ctx` at issue.
    pub epoch: u8,
    /// A blocking fetch: the issuer stalls on it at a use of the register, fence, quiet and
    /// barrier_all (R7), or at once under OpenSHMEM rules.
    pub blocking_fetch: bool,
    /// A spin's read (`until`): delivered only when the value it reads satisfies the
    /// comparison (`Cmp` as its index in [`CMPS`], and the operand). The reads that fail
    /// change nothing a drain could not, so the model keeps only the one that succeeds.
    pub until: Option<(u8, u64)>,
    /// A non-blocking operation under `nbi-unfenced`: fence does not order it.
    pub unfenced: bool,
    pub body: Body,
}

/// The comparisons in the order [`Msg::until`] numbers them.
pub(super) const CMPS: [Cmp; 6] = [Cmp::Eq, Cmp::Ne, Cmp::Gt, Cmp::Ge, Cmp::Lt, Cmp::Le];

impl Msg {
    /// Whether fence orders this message (R1 table): every update, but not gets, nor the
    /// non-blocking operations under `nbi-unfenced`.
    pub fn ordered(&self) -> bool {
        !self.unfenced && !matches!(self.body, Body::Get { .. })
    }
}

/// What a message does at its target. Operands are resolved at issue.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub(super) enum Body {
    /// put, p, put_nbi.
    Write { var: u16, value: u64 },
    /// put_signal: the data word, then the signal, in one delivery (R5).
    PutSignal {
        var: u16,
        value: u64,
        signal: u16,
        add: bool,
        signal_value: u64,
    },
    /// An atomic; `reg` receives the old value for the fetching forms. A `narrow` (32-bit)
    /// atomic acts on the low half of the word and fetches it zero-extended.
    Amo {
        var: u16,
        op: Rmw,
        reg: Option<u8>,
        narrow: bool,
    },
    /// get, g, get_nbi.
    Get { var: u16, reg: u8 },
    /// The write half of a put-with-signal `ADD`, whose read half was the delivery of its
    /// `PutSignal`: the sum to store (signals are atomic only against the same operator).
    SignalWrite { var: u16, value: u64 },
    /// The signal of a put-with-signal over the network transport (`os-net`), whose data
    /// travels as a `Write` of its own: one atomic at the target (an add or a set),
    /// performed once no put of its PE to that target is in flight.
    Signal { var: u16, add: bool, value: u64 },
}

/// A read-modify-write with its operands resolved.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub(super) enum Rmw {
    Fetch,
    Set(u64),
    Swap(u64),
    CompareSwap { cond: u64, new: u64 },
    Add(u64),
    And(u64),
    Or(u64),
    Xor(u64),
}

impl Rmw {
    /// The word's new value given its old one.
    pub fn apply(self, old: u64) -> u64 {
        match self {
            Rmw::Fetch => old,
            Rmw::Set(v) | Rmw::Swap(v) => v,
            Rmw::CompareSwap { cond, new } => {
                if old == cond {
                    new
                } else {
                    old
                }
            }
            Rmw::Add(v) => old.wrapping_add(v),
            Rmw::And(v) => old & v,
            Rmw::Or(v) => old | v,
            Rmw::Xor(v) => old ^ v,
        }
    }
}

impl Rmw {
    /// The word's new value and the value fetched, given its old value; a narrow atomic
    /// leaves the high half alone.
    pub fn apply_width(self, old: u64, narrow: bool) -> (u64, u64) {
        if !narrow {
            return (self.apply(old), old);
        }
        const LOW: u64 = 0xffff_ffff;
        let low = old & LOW;
        ((old & !LOW) | (self.apply(low) & LOW), low)
    }
}

/// Whether a signal operation adds (else it sets).
pub(super) fn signal_adds(op: SignalOp) -> bool {
    matches!(op, SignalOp::Add)
}

impl State {
    /// Adds a message, keeping the set sorted.
    pub fn send(&mut self, msg: Msg) {
        let at = self.in_flight.partition_point(|m| *m <= msg);
        self.in_flight.insert(at, msg);
    }

    /// Appends a write to `pending[pe]`, after every pending write to the same word.
    pub fn push_pending(&mut self, pe: usize, var: u16, value: u64) {
        let list = &mut self.pending[pe];
        let at = list.partition_point(|(v, _)| *v <= var);
        list.insert(at, (var, value));
    }

    /// The newest value of `pe`'s word `var` in coherence order: its last pending write, or
    /// the visible value if none is pending.
    pub fn newest(&self, pe: usize, var: u16, n_vars: usize) -> u64 {
        self.pending[pe]
            .iter()
            .rev()
            .find(|(v, _)| *v == var)
            .map_or(self.mem[pe * n_vars + usize::from(var)], |(_, value)| {
                *value
            })
    }

    /// Whether `pe`'s word `var` has a pending write.
    pub fn has_pending(&self, pe: usize, var: u16) -> bool {
        self.pending[pe].iter().any(|(v, _)| *v == var)
    }

    /// The consistency step of `pe` (and the flush a PCIe read performs under
    /// `pcie-read-flush`): every pending write becomes visible, in delivery order per word.
    pub fn flush(&mut self, pe: usize, n_vars: usize) {
        for (var, value) in std::mem::take(&mut self.pending[pe]) {
            self.mem[pe * n_vars + var as usize] = value;
        }
    }
}
