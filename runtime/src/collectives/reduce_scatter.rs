//! Reduce-scatter (NVSHMEM's `reducescatter`): source holds one block per member, and member
//! `i`'s dest gets block `i` of the element-wise reduction of every member's source.
//!
//! - Direct (load/store teams): read block `me` of every member's source, combine in team
//!   order, wait until every member has read this one's source, store.
//! - Ring: in step `s` this member passes its partial of block `me - s - 1` to its successor
//!   and gets the predecessor's partial of block `me - s - 2`. dest (one block) is the only
//!   landing space, so after consuming each landing but the last a member sends its
//!   predecessor a credit, and a member pushes a step only once it holds the credit for it.

use hw::Backend;

use crate::TRACING_TARGET;
use crate::collectives::agree::type_word;
use crate::collectives::blocks::Blocks;
use crate::collectives::checks::Overlap;
use crate::collectives::ops::{ReduceOp, combine_into};
use crate::collectives::plan::{self, ReduceScatter, Shape};
use crate::collectives::reduce::{Operands, Reduction, fold_in_team_order};
use crate::collectives::{DONE, Kind, PUSH};
use crate::error::ShmemError;
use crate::memory::allocator::Span;
use crate::memory::sym::{Element, Sym, as_bytes};
use crate::shmem::Shmem;
use crate::team::Team;

impl<B: Backend> Shmem<B> {
    /// Reduces every member's `source` element-wise with `op` and leaves block `i` of the
    /// result in `dest` on member `i` of `team` (NVSHMEM's `nvshmem_TYPE_OP_reducescatter`):
    /// `source` holds `n_pes` equal blocks, `dest` needs one block (the rest is untouched).
    /// Operators and element types as [`Shmem::reduce`].
    ///
    /// Collective over `team`.
    ///
    /// # Ordering
    /// Quiets the default context first. On return this PE's `dest` holds its block and
    /// `source` may be reused.
    ///
    /// # Errors
    /// On every member: [`ShmemError::CollectiveUnevenBlocks`] if `source` does not split into
    /// `n_pes` equal blocks; [`ShmemError::CollectiveBufferTooSmall`] if `dest` is shorter
    /// than a block; [`ShmemError::CollectiveOverlap`] if they overlap; an address error
    /// (`NotInHeap`, `OutsideAllocation`, `Misaligned`, `FreedAllocation`), with
    /// [`ShmemError::CollectiveFailedOnPeer`] on the members without it;
    /// [`ShmemError::CollectiveMismatch`] if the members' arguments differ;
    /// [`ShmemError::TeamDestroyed`]; [`ShmemError::Queue`] if a member does not arrive.
    #[doc(alias = "reducescatter")]
    #[doc(alias = "nvshmem_sum_reducescatter")]
    pub fn reduce_scatter<T: Element, Op: ReduceOp<T>>(
        &self,
        team: &Team,
        op: Op,
        dest: Sym<T>,
        source: Sym<T>,
    ) -> Result<(), ShmemError> {
        self.reduce_scatter_by(team, op, dest, source, plan::reduce_scatter)
    }

    /// [`Shmem::reduce_scatter`] by the algorithm `pick` chooses.
    pub(crate) fn reduce_scatter_by<T: Element, Op: ReduceOp<T>>(
        &self,
        team: &Team,
        _op: Op,
        dest: Sym<T>,
        source: Sym<T>,
        pick: impl Fn(&Shape) -> ReduceScatter,
    ) -> Result<(), ShmemError> {
        let n_pes = team.n_pes()? as usize;
        let operands = Operands {
            kind: Kind::ReduceScatter,
            dest_needed: (source.len() / n_pes) as u64,
            overlap: Overlap::Forbidden,
            uneven: !source.len().is_multiple_of(n_pes),
            op_word: type_word::<Op>(),
        };
        let reduction = self.begin_reduction(team, dest, source, operands)?;
        let algorithm = pick(&reduction.call.shape(reduction.dest.len_bytes));
        tracing::debug!(target: TRACING_TARGET, pe = self.my_pe, op = "reduce_scatter", operator = Op::NAME, bytes = reduction.dest.len_bytes, ?algorithm, "plan");
        match algorithm {
            ReduceScatter::Direct => direct::<B, T, Op>(reduction),
            ReduceScatter::Ring => ring::<B, T, Op>(reduction),
        }
    }
}

fn direct<B: Backend, T: Element, Op: ReduceOp<T>>(
    r: Reduction<'_, B, T>,
) -> Result<(), ShmemError> {
    let call = &r.call;
    let n = call.n;
    let blocks = Blocks::balanced(r.mine.len() as u64, n, std::mem::size_of::<T>() as u64);
    let done = call.counter(DONE, u64::from(n - 1));
    let reads: Vec<(u32, Span)> = (1..n)
        .map(|k| (call.ahead(k), blocks.span(r.source, call.me)))
        .collect();
    let theirs = call.pull::<T>(&reads, DONE)?;
    let mine = r.mine[blocks.elements(call.me)].to_vec();
    let parts = std::iter::once(mine).chain(theirs).collect();
    call.write(r.dest, &fold_in_team_order::<T, Op>(call.me, parts));
    call.wait(done, u64::from(n - 1))
}

fn ring<B: Backend, T: Element, Op: ReduceOp<T>>(r: Reduction<'_, B, T>) -> Result<(), ShmemError> {
    let call = &r.call;
    let n = call.n;
    let blocks = Blocks::balanced(r.mine.len() as u64, n, std::mem::size_of::<T>() as u64);
    let partials = call.counter(PUSH, u64::from(n - 1));
    let credits = call.counter(DONE, u64::from(n.saturating_sub(2)));
    let mut outgoing = r.mine[blocks.elements(call.behind(1))].to_vec();
    for step in 0..n - 1 {
        if step > 0 {
            call.wait(credits, u64::from(step))?;
        }
        call.send(call.ahead(1), &[(r.dest, as_bytes(&outgoing))], PUSH)?;
        call.wait(partials, u64::from(step + 1))?;
        outgoing = call.read::<T>(r.dest);
        combine_into::<T, Op>(
            &mut outgoing,
            &r.mine[blocks.elements(call.behind(step + 2))],
        );
        if step + 2 < n {
            call.notify(call.behind(1), DONE)?;
        }
    }
    call.write(r.dest, &outgoing);
    Ok(())
}
