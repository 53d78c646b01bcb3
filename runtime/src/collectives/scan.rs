//! Prefix sums (OpenSHMEM 1.6's `shmem_TYPE_sum_inscan` and `sum_exscan`): member `i`'s dest
//! gets the element-wise sum of the sources of members `0..=i` (inclusive) or `0..i`
//! (exclusive; member 0 gets zeros, the sum's identity).
//!
//! - Direct (load/store teams): read the sources of the members before this one, add them up
//!   in team order, wait until the members after this one have read its source, store.
//! - Chain: member `i` waits for the prefix of members `0..i` in its dest, adds its source and
//!   passes the result to member `i + 1`. The vector goes in pieces, so member `i` works on
//!   piece `k` while member `i + 1` works on piece `k - 1`. Each piece of a dest is written
//!   once, by the predecessor, and then by its owner.
//!
//! Both add in team order, so the result is the sequential one, floats included.

use hw::Backend;

use crate::TRACING_TARGET;
use crate::collectives::agree::type_word;
use crate::collectives::blocks::Blocks;
use crate::collectives::checks::Overlap;
use crate::collectives::ops::{ArithElement, Sum, combine_into};
use crate::collectives::plan::{self, Scan, Shape};
use crate::collectives::reduce::{Operands, Reduction};
use crate::collectives::{DONE, Kind, PUSH};
use crate::error::ShmemError;
use crate::memory::allocator::Span;
use crate::memory::sym::{Sym, as_bytes};
use crate::shmem::Shmem;
use crate::team::Team;

impl<B: Backend> Shmem<B> {
    /// Inclusive prefix sum over `team` (`shmem_TYPE_sum_inscan`): `dest` on team PE `i` gets
    /// the element-wise sum of `source` on team PEs `0..=i`; `dest` needs `source.len()`
    /// elements (the rest is untouched). `source` may be `dest` itself. Integer sums wrap.
    ///
    /// Collective over `team`.
    ///
    /// # Ordering
    /// Quiets the default context first. On return this PE's `dest` holds its prefix and
    /// `source` may be reused.
    ///
    /// # Errors
    /// As [`Shmem::reduce`].
    #[doc(alias = "shmem_sum_inscan")]
    #[doc(alias = "scan")]
    pub fn sum_inscan<T: ArithElement>(
        &self,
        team: &Team,
        dest: Sym<T>,
        source: Sym<T>,
    ) -> Result<(), ShmemError> {
        self.scan_by(Kind::Inscan, team, dest, source, plan::scan)
    }

    /// Exclusive prefix sum over `team` (`shmem_TYPE_sum_exscan`): `dest` on team PE `i` gets
    /// the element-wise sum of `source` on team PEs `0..i`, zeros on team PE 0. Otherwise as
    /// [`Shmem::sum_inscan`].
    ///
    /// # Ordering
    /// As [`Shmem::sum_inscan`].
    ///
    /// # Errors
    /// As [`Shmem::reduce`].
    #[doc(alias = "shmem_sum_exscan")]
    pub fn sum_exscan<T: ArithElement>(
        &self,
        team: &Team,
        dest: Sym<T>,
        source: Sym<T>,
    ) -> Result<(), ShmemError> {
        self.scan_by(Kind::Exscan, team, dest, source, plan::scan)
    }

    /// The scan `kind` (inclusive or exclusive) by the algorithm `pick` chooses.
    pub(crate) fn scan_by<T: ArithElement>(
        &self,
        kind: Kind,
        team: &Team,
        dest: Sym<T>,
        source: Sym<T>,
        pick: impl Fn(&Shape) -> Scan,
    ) -> Result<(), ShmemError> {
        let operands = Operands {
            kind,
            dest_needed: source.len() as u64,
            overlap: Overlap::InPlace,
            uneven: false,
            op_word: type_word::<Sum>(),
        };
        let reduction = self.begin_reduction(team, dest, source, operands)?;
        let algorithm = pick(&reduction.call.shape(reduction.source.len_bytes));
        tracing::debug!(target: TRACING_TARGET, pe = self.my_pe, op = kind.name(), bytes = reduction.source.len_bytes, ?algorithm, "plan");
        let inclusive = kind == Kind::Inscan;
        match algorithm {
            Scan::Direct => direct(reduction, inclusive),
            Scan::Chain { chunks } => chain(reduction, inclusive, chunks),
        }
    }
}

fn direct<B: Backend, T: ArithElement>(
    r: Reduction<'_, B, T>,
    inclusive: bool,
) -> Result<(), ShmemError> {
    let call = &r.call;
    let me = call.me;
    let done = call.counter(DONE, u64::from(call.n - 1 - me));
    let reads: Vec<(u32, Span)> = (0..me).map(|member| (member, r.source)).collect();
    let before = call.pull::<T>(&reads, DONE)?;
    let mut sum = vec![T::zeroed(); r.mine.len()];
    for part in before.iter().chain(inclusive.then_some(&r.mine)) {
        combine_into::<T, Sum>(&mut sum, part);
    }
    // Why wait before storing: dest may be this member's source, which later members read.
    call.wait(done, u64::from(call.n - 1 - me))?;
    call.write(r.dest, &sum);
    Ok(())
}

fn chain<B: Backend, T: ArithElement>(
    r: Reduction<'_, B, T>,
    inclusive: bool,
    chunks: u32,
) -> Result<(), ShmemError> {
    let call = &r.call;
    let (me, n) = (call.me, call.n);
    let blocks = Blocks::balanced(r.mine.len() as u64, chunks, std::mem::size_of::<T>() as u64);
    let first = me == 0;
    let prefixes = call.counter(PUSH, if first { 0 } else { u64::from(chunks) });
    for chunk in 0..chunks {
        let span = blocks.span(r.dest, chunk);
        let mine = &r.mine[blocks.elements(chunk)];
        let before = if first {
            vec![T::zeroed(); mine.len()]
        } else {
            call.wait(prefixes, u64::from(chunk + 1))?;
            call.read::<T>(span)
        };
        let mut through_me = before.clone();
        combine_into::<T, Sum>(&mut through_me, mine);
        if inclusive {
            call.write(span, &through_me);
        } else if first {
            // Others' exclusive prefix is already in place: the predecessor put it there.
            call.write(span, &before);
        }
        if me + 1 < n {
            // Why the fence: the successor counts pieces on one counter, in order.
            call.fence()?;
            call.send(me + 1, &[(span, as_bytes(&through_me))], PUSH)?;
        }
    }
    Ok(())
}
