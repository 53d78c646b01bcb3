//! The dispatch both MoE workloads make (`moe-dispatch`, `deepep-ll`): the warps of a block put
//! every token into its slot at its expert's PE, the block fences, and then each PE gets this
//! PE's counts for its experts with a signal that adds one to its arrival counter, so that a
//! PE whose counter shows every PE knows every token has landed.

use hw::Backend;
use rshmem::{KernelThread, ShmemError, SignalOp, Sym};

/// One token sent to one expert: which token, its expert's PE, and where its slot starts in
/// that PE's receive buffer.
pub(super) struct Send {
    pub(super) token: u32,
    pub(super) pe: u32,
    pub(super) at: usize,
}

/// What a PE scatters: its sends and tokens, and where the counts go.
pub(super) struct Scatter<'a> {
    /// Warps of the block; warp `w` does the sends `w, w + warps, ...`.
    pub(super) warps: u32,
    pub(super) sends: &'a [Send],
    /// Each token's words, by token.
    pub(super) tokens: &'a [Vec<u64>],
    /// The receive buffer the slots are in.
    pub(super) recv: Sym<u64>,
    /// The tokens sent to each expert (`per_pe` a PE, PE by PE).
    pub(super) sent: &'a [u64],
    pub(super) per_pe: usize,
    /// This PE's counts' place at every PE, and the counter that counts the PEs that sent.
    pub(super) counts: Sym<u64>,
    pub(super) arrivals: Sym<u64>,
}

impl Scatter<'_> {
    /// Thread `t`'s part of the scatter (every thread of the block calls it).
    ///
    /// # Errors
    /// What the puts, the fence and the put-with-signals return.
    pub(super) async fn run<B: Backend>(&self, t: &KernelThread<'_, B>) -> Result<(), ShmemError> {
        for send in self
            .sends
            .iter()
            .skip(t.warp_id() as usize)
            .step_by(self.warps as usize)
        {
            let words = self.tokens[send.token as usize].len();
            let slot = self.recv.slice(send.at..send.at + words)?;
            t.warp()
                .put_nbi(slot, &self.tokens[send.token as usize], send.pe)
                .await?;
        }
        // Every token before any count: the fence orders the context's puts to each PE.
        t.block().fence().await?;
        let threads = self.warps * rshmem::WARP_SIZE;
        for pe in (t.thread_rank()..t.n_pes()).step_by(threads as usize) {
            let first = pe as usize * self.per_pe;
            let to_pe = &self.sent[first..first + self.per_pe];
            t.put_signal(self.counts, to_pe, self.arrivals, 1, SignalOp::Add, pe)
                .await?;
        }
        Ok(())
    }
}
