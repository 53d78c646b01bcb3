//! Broadcast: the root's source reaches every member's dest, the root's own included
//! (OpenSHMEM 1.5's team broadcast updates dest on the root too).
//!
//! - One-shot (load/store teams): the root pushes the message to every member.
//! - Binomial tree: a member passes the message on once it has it, to the roots of ever
//!   smaller subtrees; `ceil(log2 n)` rounds.
//! - Scatter-allgather: the root pushes piece `i` to member `i`, which it announces on the
//!   first-phase counter, then the members allgather the pieces.
//!
//! Each place of every dest is written once per call (the root's pieces come back to it in the
//! allgather with the bytes it already holds), so no landing area is overwritten while read.
//!
//! `dest` and `source` may overlap, the very same array included (a broadcast in place, which
//! OpenSHMEM allows): only the root reads its source, into local memory before it writes any
//! dest, so on the root the copy is a `memmove`, and on the others the source is not read.

use hw::Backend;

use crate::TRACING_TARGET;
use crate::collectives::agree::{Proposal, type_word};
use crate::collectives::allgather::allgather;
use crate::collectives::blocks::Blocks;
use crate::collectives::call::Call;
use crate::collectives::checks::{long_enough, prefix};
use crate::collectives::plan::{self, Broadcast, Shape};
use crate::collectives::{FIRST, Kind, PUSH};
use crate::error::ShmemError;
use crate::memory::allocator::Span;
use crate::memory::sym::{Element, Sym};
use crate::shmem::Shmem;
use crate::team::Team;

impl<B: Backend> Shmem<B> {
    /// Copies `source` of team PE `root` into `dest` on every member of `team`, the root
    /// included (`shmem_broadcast`): `dest[..source.len()]` receives it, the rest of `dest`
    /// is untouched.
    ///
    /// Collective over `team`: every member calls it with the same arguments (`source` only
    /// matters on the root, but its length must agree everywhere).
    ///
    /// # Ordering
    /// Quiets the default context first (so `source` may be filled by stores just before).
    /// On return this PE's `dest` holds the message and `source` may be reused; other members'
    /// `dest` hold it once their own call returns.
    ///
    /// # Errors
    /// On every member: [`ShmemError::PeNotInTeam`] (or `PeOutOfRange` on the world team) if
    /// `root` is not a team PE; [`ShmemError::CollectiveBufferTooSmall`] if `dest` is shorter
    /// than `source`; an address error
    /// (`NotInHeap`, `OutsideAllocation`, `Misaligned`, `FreedAllocation`); the members
    /// without the error get [`ShmemError::CollectiveFailedOnPeer`].
    /// [`ShmemError::CollectiveMismatch`] if the members' arguments differ;
    /// [`ShmemError::TeamDestroyed`]; [`ShmemError::Queue`] if a member does not arrive.
    #[doc(alias = "shmem_broadcast")]
    #[doc(alias = "shmem_broadcastmem")]
    pub fn broadcast<T: Element>(
        &self,
        team: &Team,
        dest: Sym<T>,
        source: Sym<T>,
        root: u32,
    ) -> Result<(), ShmemError> {
        self.broadcast_by(team, dest, source, root, plan::broadcast)
    }

    /// [`Shmem::broadcast`] by the algorithm `pick` chooses.
    pub(crate) fn broadcast_by<T: Element>(
        &self,
        team: &Team,
        dest: Sym<T>,
        source: Sym<T>,
        root: u32,
        pick: impl Fn(&Shape) -> Broadcast,
    ) -> Result<(), ShmemError> {
        let op = Kind::Broadcast.name();
        let nelems = source.len() as u64;
        let checked = (|| {
            team.to_world(root)?;
            let (d, s) = (self.span_of(dest)?, self.span_of(source)?);
            long_enough(op, "dest", dest.len(), nelems)?;
            Ok((prefix(d, s.len_bytes), s))
        })();
        let (call, (dest, source)) = self.agree_collective(
            team,
            Proposal {
                kind: Kind::Broadcast,
                shared: vec![
                    type_word::<T>(),
                    root.into(),
                    dest.addr().0,
                    dest.len() as u64,
                    source.addr().0,
                ],
                nelems,
                checked,
            },
        )?;
        let algorithm = pick(&call.shape(source.len_bytes));
        tracing::debug!(target: TRACING_TARGET, pe = self.my_pe, op, bytes = source.len_bytes, ?algorithm, "plan");
        let elem_bytes = std::mem::size_of::<T>() as u64;
        match algorithm {
            Broadcast::OneShot => one_shot(&call, dest, source, root),
            Broadcast::Tree => tree(&call, dest, source, root),
            Broadcast::ScatterAllgather(ag) => {
                let blocks = Blocks::balanced(nelems, call.n, elem_bytes);
                scatter(&call, dest, source, root, &blocks)?;
                allgather(&call, dest, &blocks, ag)
            }
        }
    }
}

/// On the root: copies its source into its own dest and returns the message.
fn root_copy<B: Backend>(call: &Call<'_, B>, dest: Span, source: Span) -> Vec<u8> {
    let message = call.read::<u8>(source);
    call.write(dest, &message);
    message
}

fn one_shot<B: Backend>(
    call: &Call<'_, B>,
    dest: Span,
    source: Span,
    root: u32,
) -> Result<(), ShmemError> {
    if call.me != root {
        let arrival = call.counter(PUSH, 1);
        return call.wait(arrival, 1);
    }
    let message = root_copy(call, dest, source);
    for k in 1..call.n {
        call.send(call.ahead(k), &[(dest, &message)], PUSH)?;
    }
    Ok(())
}

/// A binomial tree over ranks relative to the root: rank `r` gets the message from
/// `r - lowbit(r)` and passes it to `r + m` for each power of two `m < lowbit(r)`, largest
/// (the largest subtree) first.
fn tree<B: Backend>(
    call: &Call<'_, B>,
    dest: Span,
    source: Span,
    root: u32,
) -> Result<(), ShmemError> {
    let n = call.n;
    let rank = (call.me + n - root) % n;
    let (message, top) = if rank == 0 {
        (root_copy(call, dest, source), n.next_power_of_two())
    } else {
        let arrival = call.counter(PUSH, 1);
        call.wait(arrival, 1)?;
        (call.read::<u8>(dest), 1 << rank.trailing_zeros())
    };
    let mut mask = top >> 1;
    while mask > 0 {
        if rank + mask < n {
            call.send(call.ahead(mask), &[(dest, &message)], PUSH)?;
        }
        mask >>= 1;
    }
    Ok(())
}

/// The root pushes block `i` of its message into member `i`'s dest; every member's own block
/// is in its dest when this returns.
fn scatter<B: Backend>(
    call: &Call<'_, B>,
    dest: Span,
    source: Span,
    root: u32,
    blocks: &Blocks,
) -> Result<(), ShmemError> {
    if call.me != root {
        let arrival = call.counter(FIRST, 1);
        return call.wait(arrival, 1);
    }
    let message = root_copy(call, dest, source);
    for k in 1..call.n {
        let member = call.ahead(k);
        let piece = &message[blocks.bytes(member)];
        call.send(member, &[(blocks.span(dest, member), piece)], FIRST)?;
    }
    Ok(())
}
