//! All-reduce (`shmem_TYPE_OP_reduce`): every member's dest gets the element-wise reduction of
//! every member's source.
//!
//! - One-shot (load/store teams): read every member's source, combine, wait until every member
//!   has read this one's source, store.
//! - Two-shot (load/store teams): read piece `me` of every source, combine it, store it and
//!   push it to every member (the allgather engine, one-shot).
//! - Recursive doubling: partners `2^k` apart swap partial results through each other's dest;
//!   a handshake per round frees the landing area, since dest is the only landing space.
//! - Ring: a ring reduce-scatter into dest, then the allgather engine.
//!
//! Every member ends with the same bits, floats included: each piece is combined once and
//! copied (one-shot and two-shot combine in team order; the ring combines each piece once),
//! or both partners combine the same two values the same way (recursive doubling).
//!
//! Members read their source into local memory before the agreement, so source may be dest
//! itself (an in-place reduction): no peer writes this member's dest before the agreement, and
//! the pull-based algorithms store into dest only after every peer has read its source.

use hw::Backend;

use crate::TRACING_TARGET;
use crate::collectives::agree::{Proposal, type_word};
use crate::collectives::allgather::allgather;
use crate::collectives::blocks::Blocks;
use crate::collectives::call::Call;
use crate::collectives::checks::{Overlap, long_enough, prefix, separate};
use crate::collectives::ops::{ReduceOp, combine_into};
use crate::collectives::plan::{self, Allgather, Reduce, Shape, largest_power_of_two};
use crate::collectives::{DONE, FIRST, Kind, PUSH, ROUND0};
use crate::error::ShmemError;
use crate::memory::allocator::Span;
use crate::memory::sym::{Element, Sym, as_bytes};
use crate::shmem::Shmem;
use crate::team::Team;

/// What a reduction-like call (reduce, reduce_scatter, the scans) asks of its buffers.
pub(crate) struct Operands {
    pub(crate) kind: Kind,
    /// The elements dest must hold.
    pub(crate) dest_needed: u64,
    pub(crate) overlap: Overlap,
    /// Whether source fails to split into one block per member (reduce_scatter).
    pub(crate) uneven: bool,
    /// Names the operator, for the agreement.
    pub(crate) op_word: u64,
}

/// A reduction-like call after agreement: the written part of dest, source, and this member's
/// source as elements.
pub(crate) struct Reduction<'a, B: Backend, T> {
    pub(crate) call: Call<'a, B>,
    pub(crate) dest: Span,
    pub(crate) source: Span,
    pub(crate) mine: Vec<T>,
}

impl<B: Backend> Shmem<B> {
    /// Reduces every member's `source` element-wise with `op` into `dest` on every member of
    /// `team` (`shmem_TYPE_OP_reduce`; the operators are in [`crate::ops`]): `dest` gets
    /// `source.len()` elements, the rest is untouched. `source` may be `dest` itself.
    ///
    /// Which operators an element type supports is checked at compile time: `And`, `Or` and
    /// `Xor` take integers; `Max` and `Min` integers and floats; `Sum` and `Prod` integers,
    /// floats and complex numbers. Integer arithmetic wraps. Every member gets the same bits;
    /// for floats the order of combination depends on the algorithm.
    ///
    /// Collective over `team`.
    ///
    /// # Ordering
    /// Quiets the default context first. On return this PE's `dest` holds the result and
    /// `source` may be reused.
    ///
    /// # Errors
    /// On every member: [`ShmemError::CollectiveBufferTooSmall`] if `dest` is shorter than
    /// `source`; [`ShmemError::CollectiveOverlap`] if they overlap without being the same
    /// array; an address error (`NotInHeap`, `OutsideAllocation`, `Misaligned`,
    /// `FreedAllocation`), with [`ShmemError::CollectiveFailedOnPeer`] on the members
    /// without it; [`ShmemError::CollectiveMismatch`] if the members' lengths, operators,
    /// types or buffers differ; [`ShmemError::TeamDestroyed`]; [`ShmemError::Queue`] if a
    /// member does not arrive.
    #[doc(alias = "shmem_and_reduce")]
    #[doc(alias = "shmem_or_reduce")]
    #[doc(alias = "shmem_xor_reduce")]
    #[doc(alias = "shmem_max_reduce")]
    #[doc(alias = "shmem_min_reduce")]
    #[doc(alias = "shmem_sum_reduce")]
    #[doc(alias = "shmem_prod_reduce")]
    #[doc(alias = "shmem_int_sum_reduce")]
    #[doc(alias = "allreduce")]
    pub fn reduce<T: Element, Op: ReduceOp<T>>(
        &self,
        team: &Team,
        op: Op,
        dest: Sym<T>,
        source: Sym<T>,
    ) -> Result<(), ShmemError> {
        self.reduce_by(team, op, dest, source, plan::reduce)
    }

    /// [`Shmem::reduce`] by the algorithm `pick` chooses.
    pub(crate) fn reduce_by<T: Element, Op: ReduceOp<T>>(
        &self,
        team: &Team,
        _op: Op,
        dest: Sym<T>,
        source: Sym<T>,
        pick: impl Fn(&Shape) -> Reduce,
    ) -> Result<(), ShmemError> {
        let operands = Operands {
            kind: Kind::Reduce,
            dest_needed: source.len() as u64,
            overlap: Overlap::InPlace,
            uneven: false,
            op_word: type_word::<Op>(),
        };
        let reduction = self.begin_reduction(team, dest, source, operands)?;
        let algorithm = pick(&reduction.call.shape(reduction.source.len_bytes));
        tracing::debug!(target: TRACING_TARGET, pe = self.my_pe, op = "reduce", operator = Op::NAME, bytes = reduction.source.len_bytes, ?algorithm, "plan");
        match algorithm {
            Reduce::OneShot => one_shot::<B, T, Op>(reduction),
            Reduce::TwoShot => two_shot::<B, T, Op>(reduction),
            Reduce::RecursiveDoubling => recursive_doubling::<B, T, Op>(reduction),
            Reduce::Ring(ag) => ring::<B, T, Op>(reduction, ag),
        }
    }

    /// Checks a reduction-like call's buffers, reads source, and agrees on the call.
    ///
    /// # Errors
    /// As [`Shmem::reduce`].
    pub(crate) fn begin_reduction<'a, T: Element>(
        &'a self,
        team: &'a Team,
        dest: Sym<T>,
        source: Sym<T>,
        operands: Operands,
    ) -> Result<Reduction<'a, B, T>, ShmemError> {
        let op = operands.kind.name();
        let n_pes = team.n_pes()?;
        let checked = (|| {
            if operands.uneven {
                return Err(ShmemError::CollectiveUnevenBlocks {
                    op,
                    len: source.len(),
                    n_pes,
                });
            }
            let (d, s) = (self.span_of(dest)?, self.span_of(source)?);
            long_enough(op, "dest", dest.len(), operands.dest_needed)?;
            separate(op, d, s, operands.overlap)?;
            let written = operands.dest_needed * std::mem::size_of::<T>() as u64;
            Ok((prefix(d, written), s, self.local(source)?))
        })();
        let (call, (dest, source, mine)) = self.agree_collective(
            team,
            Proposal {
                kind: operands.kind,
                shared: vec![
                    type_word::<T>(),
                    operands.op_word,
                    dest.addr().0,
                    dest.len() as u64,
                    source.addr().0,
                ],
                nelems: source.len() as u64,
                checked,
            },
        )?;
        Ok(Reduction {
            call,
            dest,
            source,
            mine,
        })
    }
}

/// Combines `parts` (member `me + i`'s at index `i`, wrapping) in team order.
pub(crate) fn fold_in_team_order<T: Element, Op: ReduceOp<T>>(
    me: u32,
    mut parts: Vec<Vec<T>>,
) -> Vec<T> {
    // Why this rotation: index i holds member me + i, so member j sits at j - me (mod n).
    let n = parts.len();
    parts.rotate_left((n - me as usize) % n);
    let mut parts = parts.into_iter();
    let mut acc = parts.next().unwrap_or_default();
    for part in parts {
        combine_into::<T, Op>(&mut acc, &part);
    }
    acc
}

/// `mine` followed by what was read from the members after this one, in that order.
fn with_mine<T>(mine: Vec<T>, theirs: Vec<Vec<T>>) -> Vec<Vec<T>> {
    std::iter::once(mine).chain(theirs).collect()
}

fn one_shot<B: Backend, T: Element, Op: ReduceOp<T>>(
    r: Reduction<'_, B, T>,
) -> Result<(), ShmemError> {
    let call = &r.call;
    let n = call.n;
    let done = call.counter(DONE, u64::from(n - 1));
    let reads: Vec<(u32, Span)> = (1..n).map(|k| (call.ahead(k), r.source)).collect();
    let theirs = call.pull::<T>(&reads, DONE)?;
    let result = fold_in_team_order::<T, Op>(call.me, with_mine(r.mine, theirs));
    // Why wait before storing: dest may be this member's source, which peers may still read.
    call.wait(done, u64::from(n - 1))?;
    call.write(r.dest, &result);
    Ok(())
}

fn two_shot<B: Backend, T: Element, Op: ReduceOp<T>>(
    r: Reduction<'_, B, T>,
) -> Result<(), ShmemError> {
    let call = &r.call;
    let n = call.n;
    let elem_bytes = std::mem::size_of::<T>() as u64;
    let blocks = Blocks::balanced(r.mine.len() as u64, n, elem_bytes);
    let done = call.counter(DONE, u64::from(n - 1));
    // Only this member reads piece `me` of any source, and only this member writes piece `me`
    // of any dest, after reading it: so in-place calls are safe piece by piece.
    let reads: Vec<(u32, Span)> = (1..n)
        .map(|k| (call.ahead(k), blocks.span(r.source, call.me)))
        .collect();
    let theirs = call.pull::<T>(&reads, DONE)?;
    let mine = r.mine[blocks.elements(call.me)].to_vec();
    let piece = fold_in_team_order::<T, Op>(call.me, with_mine(mine, theirs));
    call.write(blocks.span(r.dest, call.me), &piece);
    allgather(call, r.dest, &blocks, Allgather::OneShot)?;
    call.wait(done, u64::from(n - 1))
}

/// Recursive doubling over the largest power of two `p` not above `n`; member `p + i` first
/// hands its source to member `i` and finally gets the result from it.
///
/// Round `k` lands the partner's partial result in this member's dest. A member may push into
/// its partner's dest only once the partner has consumed the previous round's landing there,
/// which the partner announces on the round's counter (its go-ahead, or its own push, which
/// comes after its go-ahead). So each round's counter counts two arrivals from the partner,
/// except in an unhindered first round: when `n` is a power of two, nothing has landed in any
/// dest before round 0.
fn recursive_doubling<B: Backend, T: Element, Op: ReduceOp<T>>(
    r: Reduction<'_, B, T>,
) -> Result<(), ShmemError> {
    let call = &r.call;
    let (me, n) = (call.me, call.n);
    let core = largest_power_of_two(n);
    let extras = n - core;
    if me >= core {
        let result = call.counter(PUSH, 1);
        call.send(me - core, &[(r.dest, as_bytes(&r.mine))], FIRST)?;
        return call.wait(result, 1);
    }
    let mut acc = r.mine;
    if me < extras {
        let handed = call.counter(FIRST, 1);
        call.wait(handed, 1)?;
        combine_into::<T, Op>(&mut acc, &call.read::<T>(r.dest));
    }
    for round in 0..core.trailing_zeros() {
        let partner = me ^ (1 << round);
        let index = ROUND0 + round;
        let handshake = round > 0 || extras > 0;
        let arrivals = call.counter(index, 1 + u64::from(handshake));
        if handshake {
            call.notify(partner, index)?;
            call.wait(arrivals, 1)?;
        }
        call.send(partner, &[(r.dest, as_bytes(&acc))], index)?;
        call.wait(arrivals, 1 + u64::from(handshake))?;
        let theirs = call.read::<T>(r.dest);
        // Both partners combine (lower half, upper half), so both get the same bits.
        if me < partner {
            combine_into::<T, Op>(&mut acc, &theirs);
        } else {
            let mut lower = theirs;
            combine_into::<T, Op>(&mut lower, &acc);
            acc = lower;
        }
    }
    call.write(r.dest, &acc);
    if me < extras {
        call.send(me + core, &[(r.dest, as_bytes(&acc))], PUSH)?;
    }
    Ok(())
}

/// A ring reduce-scatter: in step `s` this member passes its partial of piece `me - s - 1` to
/// its successor and gets the predecessor's partial of piece `me - s - 2` in its dest, adds its
/// own, and passes that on; after `n - 1` steps it holds piece `me` complete. Then the
/// allgather engine spreads the pieces.
///
/// Each piece of a dest receives one partial; the allgather later overwrites it with the
/// result, which exists only after the partial was consumed (the result is built from it).
fn ring<B: Backend, T: Element, Op: ReduceOp<T>>(
    r: Reduction<'_, B, T>,
    ag: Allgather,
) -> Result<(), ShmemError> {
    let call = &r.call;
    let n = call.n;
    let elem_bytes = std::mem::size_of::<T>() as u64;
    let blocks = Blocks::balanced(r.mine.len() as u64, n, elem_bytes);
    let partials = call.counter(FIRST, u64::from(n - 1));
    let mut outgoing = r.mine[blocks.elements(call.behind(1))].to_vec();
    for step in 0..n - 1 {
        // Why the fence: the successor counts this member's pushes on one counter, so they
        // must land in order.
        call.fence()?;
        let span = blocks.span(r.dest, call.behind(step + 1));
        call.send(call.ahead(1), &[(span, as_bytes(&outgoing))], FIRST)?;
        call.wait(partials, u64::from(step + 1))?;
        let piece = call.behind(step + 2);
        outgoing = call.read::<T>(blocks.span(r.dest, piece));
        combine_into::<T, Op>(&mut outgoing, &r.mine[blocks.elements(piece)]);
    }
    call.write(blocks.span(r.dest, call.me), &outgoing);
    allgather(call, r.dest, &blocks, ag)
}
