//! alltoall and alltoalls: member `i`'s block `j` goes to member `j`'s block `i`. alltoall is
//! alltoalls with both strides 1, so one implementation serves both.
//!
//! Every topology runs the same algorithm, a direct exchange: each member pushes each block
//! straight to its owner, starting with the member after it so that the members' first pushes
//! go to different targets. The data of an all-to-all must cross every pair anyway, so routing
//! it through intermediate members (Bruck's algorithm) would only save latency, at the price of
//! `log2 n` times the bytes and a landing buffer the API does not provide. Each place of every
//! dest is written once per call.

use hw::Backend;

use crate::TRACING_TARGET;
use crate::collectives::agree::{Proposal, type_word};
use crate::collectives::call::Call;
use crate::collectives::checks::long_enough;
use crate::collectives::{Kind, PUSH};
use crate::error::ShmemError;
use crate::memory::allocator::Span;
use crate::memory::sym::{Element, Sym, as_bytes};
use crate::shmem::Shmem;
use crate::team::Team;

/// Where an exchange's elements are: element `k` of the block for member `j` is
/// `source[(j * nelems + k) * src_stride]`, and lands in `dest[(i * nelems + k) * dst_stride]`
/// on member `j`, for sender `i`.
#[derive(Clone, Copy, Debug)]
struct Layout {
    dst_stride: u64,
    src_stride: u64,
    nelems: u64,
}

impl Layout {
    /// The elements a buffer of `stride` needs for `n_pes` blocks.
    fn needed(&self, stride: u64, n_pes: u32) -> u64 {
        match (u64::from(n_pes) * self.nelems).checked_sub(1) {
            Some(last) => last * stride + 1,
            None => 0,
        }
    }
}

impl<B: Backend> Shmem<B> {
    /// Sends block `j` of `source` to member `j` of `team`, where it lands as block `i` of
    /// `dest` for this member `i` (`shmem_alltoall`). `source` holds `n_pes` equal blocks;
    /// `dest` needs as many elements as `source`.
    ///
    /// Collective over `team`.
    ///
    /// # Ordering
    /// Quiets the default context first. On return this PE's `dest` holds every member's
    /// block and `source` may be reused.
    ///
    /// # Errors
    /// On every member: [`ShmemError::CollectiveUnevenBlocks`] if `source` does not split into
    /// `n_pes` equal blocks; [`ShmemError::CollectiveBufferTooSmall`] if `dest` is shorter
    /// (`dest` may overlap `source`: each member reads its source before any data moves); an
    /// address error (`NotInHeap`,
    /// `OutsideAllocation`, `Misaligned`, `FreedAllocation`), with
    /// [`ShmemError::CollectiveFailedOnPeer`] on the members without it;
    /// [`ShmemError::CollectiveMismatch`] if the members' arguments differ;
    /// [`ShmemError::TeamDestroyed`]; [`ShmemError::Queue`] if a member does not arrive.
    #[doc(alias = "shmem_alltoall")]
    #[doc(alias = "shmem_alltoallmem")]
    pub fn alltoall<T: Element>(
        &self,
        team: &Team,
        dest: Sym<T>,
        source: Sym<T>,
    ) -> Result<(), ShmemError> {
        let n_pes = team.n_pes()?;
        let len = source.len();
        let layout = Layout {
            dst_stride: 1,
            src_stride: 1,
            nelems: (len / n_pes as usize) as u64,
        };
        let uneven = !len.is_multiple_of(n_pes as usize);
        self.exchange(Kind::Alltoall, team, dest, source, layout, uneven)
    }

    /// Strided [`Shmem::alltoall`] (`shmem_alltoalls`): element `k` of the block for member
    /// `j` is `source[(j * nelems + k) * src_stride]`, and it lands in
    /// `dest[(i * nelems + k) * dst_stride]` on member `j`, for this member `i`. Elements
    /// between the strides are untouched.
    ///
    /// Collective over `team`.
    ///
    /// # Ordering
    /// As [`Shmem::alltoall`].
    ///
    /// # Errors
    /// As [`Shmem::alltoall`], with [`ShmemError::CollectiveZeroStride`] for a stride of 0
    /// and [`ShmemError::CollectiveBufferTooSmall`] if either buffer cannot hold the strided
    /// blocks.
    #[doc(alias = "shmem_alltoalls")]
    #[doc(alias = "shmem_alltoallsmem")]
    pub fn alltoalls<T: Element>(
        &self,
        team: &Team,
        dest: Sym<T>,
        source: Sym<T>,
        dst_stride: usize,
        src_stride: usize,
        nelems: usize,
    ) -> Result<(), ShmemError> {
        let layout = Layout {
            dst_stride: dst_stride as u64,
            src_stride: src_stride as u64,
            nelems: nelems as u64,
        };
        self.exchange(Kind::Alltoalls, team, dest, source, layout, false)
    }

    /// The exchange of `layout` (`kind` names it), refused if `uneven`.
    fn exchange<T: Element>(
        &self,
        kind: Kind,
        team: &Team,
        dest: Sym<T>,
        source: Sym<T>,
        layout: Layout,
        uneven: bool,
    ) -> Result<(), ShmemError> {
        let op = kind.name();
        let n_pes = team.n_pes()?;
        let checked = (|| {
            if uneven {
                return Err(ShmemError::CollectiveUnevenBlocks {
                    op,
                    len: source.len(),
                    n_pes,
                });
            }
            if layout.dst_stride == 0 || layout.src_stride == 0 {
                return Err(ShmemError::CollectiveZeroStride { op });
            }
            let (d, _) = (self.span_of(dest)?, self.span_of(source)?);
            long_enough(
                op,
                "source",
                source.len(),
                layout.needed(layout.src_stride, n_pes),
            )?;
            long_enough(
                op,
                "dest",
                dest.len(),
                layout.needed(layout.dst_stride, n_pes),
            )?;
            // Why dest may overlap source (OpenSHMEM forbids neither): the source is read here,
            // before the agreement, and no member writes a dest before the agreement.
            Ok((d, self.local(source)?))
        })();
        let (call, (dest, mine)) = self.agree_collective(
            team,
            Proposal {
                kind,
                shared: vec![
                    type_word::<T>(),
                    layout.dst_stride,
                    layout.src_stride,
                    dest.addr().0,
                    dest.len() as u64,
                    source.addr().0,
                    source.len() as u64,
                ],
                nelems: layout.nelems,
                checked,
            },
        )?;
        tracing::debug!(target: TRACING_TARGET, pe = self.my_pe, op, nelems = layout.nelems, algorithm = "Direct", "plan");
        direct(&call, dest, &mine, layout)
    }
}

/// Pushes every block to its member, this member's own with stores, and waits for the others.
fn direct<B: Backend, T: Element>(
    call: &Call<'_, B>,
    dest: Span,
    source: &[T],
    layout: Layout,
) -> Result<(), ShmemError> {
    let elem_bytes = std::mem::size_of::<T>() as u64;
    let nelems = layout.nelems;
    let arrivals = call.counter(PUSH, u64::from(call.n - 1));
    for k in 0..call.n {
        let member = call.ahead(k);
        let block: Vec<T> = (0..nelems)
            .map(|e| source[((u64::from(member) * nelems + e) * layout.src_stride) as usize])
            .collect();
        let place = |e: u64| (u64::from(call.me) * nelems + e) * layout.dst_stride * elem_bytes;
        // Why one piece per element when strided: the gaps between them are not ours to write.
        let pieces: Vec<(Span, &[u8])> = if layout.dst_stride == 1 {
            vec![(span(dest, place(0), nelems * elem_bytes), as_bytes(&block))]
        } else {
            block
                .iter()
                .enumerate()
                .map(|(e, value)| {
                    let span = span(dest, place(e as u64), elem_bytes);
                    (span, as_bytes(std::slice::from_ref(value)))
                })
                .collect()
        };
        if member == call.me {
            for (span, data) in pieces {
                call.write(span, data);
            }
        } else {
            call.send(member, &pieces, PUSH)?;
        }
    }
    call.wait(arrivals, u64::from(call.n - 1))
}

/// `len_bytes` of `buffer` from byte `offset`.
fn span(buffer: Span, offset: u64, len_bytes: u64) -> Span {
    Span {
        offset: buffer.offset + offset,
        len_bytes,
    }
}
