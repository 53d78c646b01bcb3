//! collect and fcollect: every member's source, concatenated in team order, in every member's
//! dest. Each member stores its own block, then the allgather engine spreads the blocks.
//! `dest` may overlap `source`, the very same array included: each member reads its source
//! before the agreement, and no member writes a dest before it.

use hw::Backend;

use crate::TRACING_TARGET;
use crate::collectives::Kind;
use crate::collectives::agree::{Proposal, type_word};
use crate::collectives::allgather::allgather;
use crate::collectives::blocks::Blocks;
use crate::collectives::checks::{long_enough, prefix};
use crate::collectives::plan::{self, Allgather, Shape};
use crate::error::ShmemError;
use crate::memory::sym::{Element, Sym, SymAddr};
use crate::shmem::Shmem;
use crate::team::Team;

/// The dest of a collect: a sized array, or a start whose length is the members' total.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Dest<T> {
    Sized(Sym<T>),
    Unsized(SymAddr),
}

impl<B: Backend> Shmem<B> {
    /// Concatenates every member's `source` in team order into `dest` on every member of
    /// `team` (`shmem_fcollect`); every member passes a `source` of the same length, and `dest`
    /// needs `n_pes * source.len()` elements (the rest is untouched).
    ///
    /// Collective over `team`.
    ///
    /// # Ordering
    /// Quiets the default context first. On return this PE's `dest` holds every block and
    /// `source` may be reused.
    ///
    /// # Errors
    /// On every member: [`ShmemError::CollectiveMismatch`] if the members' lengths or buffers
    /// differ; [`ShmemError::CollectiveBufferTooSmall`] if `dest` is too short; an address error
    /// (`NotInHeap`, `OutsideAllocation`, `Misaligned`, `FreedAllocation`), with
    /// [`ShmemError::CollectiveFailedOnPeer`] on the members without it;
    /// [`ShmemError::TeamDestroyed`]; [`ShmemError::Queue`] if a member does not arrive.
    #[doc(alias = "shmem_fcollect")]
    #[doc(alias = "shmem_fcollectmem")]
    pub fn fcollect<T: Element>(
        &self,
        team: &Team,
        dest: Sym<T>,
        source: Sym<T>,
    ) -> Result<(), ShmemError> {
        self.collect_by(
            Kind::Fcollect,
            team,
            Dest::Sized(dest),
            source,
            plan::allgather,
        )
    }

    /// Concatenates every member's `source` in team order into `dest` on every member of
    /// `team` (`shmem_collect`); the sources may differ in length, and `dest` needs their sum
    /// (the rest is untouched).
    ///
    /// Collective over `team`.
    ///
    /// # Ordering
    /// As [`Shmem::fcollect`].
    ///
    /// # Errors
    /// As [`Shmem::fcollect`], except that lengths may differ.
    #[doc(alias = "shmem_collect")]
    #[doc(alias = "shmem_collectmem")]
    pub fn collect<T: Element>(
        &self,
        team: &Team,
        dest: Sym<T>,
        source: Sym<T>,
    ) -> Result<(), ShmemError> {
        self.collect_by(
            Kind::Collect,
            team,
            Dest::Sized(dest),
            source,
            plan::allgather,
        )
    }

    /// [`Shmem::collect`] into the array that starts at `dest` and holds as many elements as
    /// the members' sources together, which is known only once they agree (C's
    /// `shmem_collect`, whose dest has no length).
    ///
    /// Collective over `team`.
    ///
    /// # Ordering
    /// As [`Shmem::fcollect`].
    ///
    /// # Errors
    /// As [`Shmem::collect`]; except that an address error of the whole `dest` shows only once
    /// the members agreed, and then only on the members whose `dest` has it.
    pub fn collect_unsized<T: Element>(
        &self,
        team: &Team,
        dest: SymAddr,
        source: Sym<T>,
    ) -> Result<(), ShmemError> {
        self.collect_by(
            Kind::Collect,
            team,
            Dest::Unsized(dest),
            source,
            plan::allgather,
        )
    }

    /// [`Shmem::collect`] or [`Shmem::fcollect`] (`kind`) by the allgather `pick` chooses.
    pub(crate) fn collect_by<T: Element>(
        &self,
        kind: Kind,
        team: &Team,
        dest: Dest<T>,
        source: Sym<T>,
        pick: impl Fn(&Shape) -> Allgather,
    ) -> Result<(), ShmemError> {
        let op = kind.name();
        // Why this PE's own block for an unsized dest: it must fit at least that much now,
        // and the rest is checked once the total is known.
        let (dest, dest_len_word) = match dest {
            Dest::Sized(dest) => (dest, dest.len() as u64),
            Dest::Unsized(addr) => (addr.cast(source.len()), u64::MAX),
        };
        // Why collect's members need not agree on source: each reads only its own, and one
        // that brings no elements may pass no array at all (the C API then passes its dest).
        let source_word = match kind {
            Kind::Collect => 0,
            _ => source.addr().0,
        };
        // Why dest may overlap source (OpenSHMEM forbids neither): the source is read here,
        // before the agreement, and no member writes a dest before the agreement.
        let checked = (|| {
            let (d, _) = (self.span_of(dest)?, self.span_of(source)?);
            Ok((d, self.local(source)?))
        })();
        let (call, (dest_span, mine)) = self.agree_collective(
            team,
            Proposal {
                kind,
                shared: vec![type_word::<T>(), dest.addr().0, dest_len_word, source_word],
                nelems: source.len() as u64,
                checked,
            },
        )?;
        let elem_bytes = std::mem::size_of::<T>() as u64;
        let blocks = Blocks::from_lens(&call.lens, elem_bytes);
        // Why after the agreement: the total is known only now; it is the same on every
        // member, so they all refuse together.
        let dest_span = if dest_len_word == u64::MAX {
            let whole = dest.addr().cast::<T>(blocks.total() as usize);
            self.span_of(whole)?
        } else {
            long_enough(op, "dest", dest.len(), blocks.total())?;
            dest_span
        };
        let dest = prefix(dest_span, blocks.total() * elem_bytes);
        call.write(blocks.span(dest, call.me), &mine);
        let average = blocks.total() * elem_bytes / u64::from(call.n);
        let algorithm = pick(&call.shape(average));
        tracing::debug!(target: TRACING_TARGET, pe = self.my_pe, op, bytes = dest.len_bytes, ?algorithm, "plan");
        allgather(&call, dest, &blocks, algorithm)
    }
}
