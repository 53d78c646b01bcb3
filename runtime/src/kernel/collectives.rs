//! Collectives over the PEs of a team, called from a scope: barrier, broadcast, fcollect,
//! alltoall and the reductions (NVSHMEM's `_block` collectives on any team, and their warp and
//! thread variants); the `_all` forms and the unprefixed ones are on the world team.
//!
//! They are built on the scope's own RMA and on the team's barrier words, with no
//! scratch memory: each starts with a barrier (every PE has entered, so its `dest` is free
//! and its `source` written), moves data, and ends with a barrier that makes the data
//! complete and visible. Data moves as pushes (one put per PE) except in the reduction,
//! which pulls every PE's `source` (one get per PE, all in flight at once) and sums in PE
//! order, so every PE computes the same floating-point sum.
//!
//! The barrier is the dissemination barrier of `team/barrier.rs` on the same counters and
//! epochs, so barrier `k` of a team in a kernel meets barrier (or sync) `k` of that team on
//! every other member, host or kernel; its waits are kernel waits, so the PE's other threads
//! run while it waits.

use hw::{AmoKind, AmoOp, AmoWidth, Backend, Cmp, Pe, Queue};

use crate::TRACING_TARGET;
use crate::collectives::checks::{Overlap, separate};
use crate::error::ShmemError;
use crate::kernel::group::Shared;
use crate::kernel::scope::Scoped;
use crate::kernel::what::What;
use crate::memory::sym::{Element, Sym, as_bytes_mut};
use crate::p2p::wait::word_spec;
use crate::pe::{local, remote, same_len};
use crate::team::Team;

/// At most this many bytes of an alltoall's source are read at once (at least one block): a
/// source this small is read whole, as before pieces were read.
const ALLTOALL_READ_BYTES: usize = 16 << 10;

/// An element type the sum reduction adds: integers wrap, floats round as IEEE 754 does.
pub trait SumElement: Element {
    /// `self + other`.
    fn sum_with(self, other: Self) -> Self;
}

/// Implements [`SumElement`] by wrapping addition for integer types.
macro_rules! wrapping_sum {
    ($($t:ty),*) => {
        $(impl SumElement for $t {
            fn sum_with(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
        })*
    };
}

wrapping_sum!(i32, u32, i64, u64);

impl SumElement for f32 {
    fn sum_with(self, other: Self) -> Self {
        self + other
    }
}

impl SumElement for f64 {
    fn sum_with(self, other: Self) -> Self {
        self + other
    }
}

/// The barrier's signal: one more arrival.
const ADD_ONE: AmoOp = AmoOp {
    kind: AmoKind::Add,
    operand: 1,
    width: AmoWidth::W64,
};

impl<B: Backend> Scoped<'_, B> {
    /// Completes the context's operations and waits until every PE has called it
    /// (`barrier_all`, `barrier_all_warp`, `barrier_all_block`).
    ///
    /// # Ordering
    /// As [`crate::Shmem::barrier_all`], for this scope's context.
    ///
    /// # Errors
    /// [`crate::KernelError::WorldCollectiveGroups`] if another group of the launch called
    /// collectives; [`ShmemError::Queue`] if a PE does not arrive within
    /// `RSHMEM_WAIT_TIMEOUT_MS`; the group errors of [`Scoped`].
    pub async fn barrier_all(&self) -> Result<(), ShmemError> {
        self.barrier(self.world()).await
    }

    /// Completes the context's operations and waits until every PE of `team` has called it
    /// (`nvshmem_barrier`, `_warp`, `_block`); a sync (`nvshmem_team_sync`) is this barrier.
    ///
    /// # Errors
    /// As [`Scoped::barrier_all`]; [`ShmemError::TeamDestroyed`].
    pub async fn barrier(&self, team: &Team) -> Result<(), ShmemError> {
        let call = self.call(
            What::Described(format!("barrier({})", team.kind().name())),
            &[],
        );
        self.meet(call, async || {
            self.claim_world()?;
            self.team_barrier(team).await?;
            Ok(Shared::Nothing)
        })
        .await
        .map(drop)
    }

    /// Copies PE `root`'s `source` into `dest` on every PE (`broadcast_block`, ...).
    /// `dest` and `source` must not overlap, unless they are the very same array (the root's
    /// `dest` is then its `source`).
    ///
    /// # Errors
    /// [`ShmemError::LengthMismatch`] if they differ in length; [`ShmemError::PeOutOfRange`]
    /// for `root`; as [`Scoped::barrier_all`].
    pub async fn broadcast<T: Element>(
        &self,
        dest: Sym<T>,
        source: Sym<T>,
        root: u32,
    ) -> Result<(), ShmemError> {
        self.team_broadcast(self.world(), dest, source, root).await
    }

    /// As [`Scoped::broadcast`] over the PEs of `team`, `root` numbered in it.
    ///
    /// # Errors
    /// As [`Scoped::broadcast`]; [`ShmemError::PeNotInTeam`] for `root`.
    pub async fn team_broadcast<T: Element>(
        &self,
        team: &Team,
        dest: Sym<T>,
        source: Sym<T>,
        root: u32,
    ) -> Result<(), ShmemError> {
        let call = self.call(
            What::Described(format!("broadcast({dest:?}, {source:?}, root {root})")),
            &[],
        );
        self.meet(call, async || {
            self.claim_world()?;
            same_len(dest.len(), source.len())?;
            self.separate("broadcast", dest, source, Overlap::InPlace)?;
            team.to_world(root)?;
            self.team_barrier(team).await?;
            if team.my_pe()? == root {
                let data = self.ctx().local(source)?;
                for (_, pe) in pes_from_next(team)? {
                    self.ctx().put(dest, &data, pe)?;
                }
            }
            self.team_barrier(team).await?;
            Ok(Shared::Nothing)
        })
        .await
        .map(drop)
    }

    /// Concatenates every PE's `source` into `dest` on every PE, in PE order
    /// (`fcollect_block`, ...): `dest` holds `n_pes` times as many elements.
    ///
    /// # Errors
    /// [`ShmemError::LengthMismatch`] if `dest` is not `n_pes` times `source`; as
    /// [`Scoped::barrier_all`].
    pub async fn fcollect<T: Element>(
        &self,
        dest: Sym<T>,
        source: Sym<T>,
    ) -> Result<(), ShmemError> {
        self.team_fcollect(self.world(), dest, source).await
    }

    /// As [`Scoped::fcollect`] over the PEs of `team`, in the team's order.
    ///
    /// # Errors
    /// As [`Scoped::fcollect`].
    pub async fn team_fcollect<T: Element>(
        &self,
        team: &Team,
        dest: Sym<T>,
        source: Sym<T>,
    ) -> Result<(), ShmemError> {
        let call = self.call(
            What::Described(format!("fcollect({dest:?}, {source:?})")),
            &[],
        );
        self.meet(call, async || {
            self.claim_world()?;
            let (me, n) = (team.my_pe()? as usize, team.n_pes()? as usize);
            let len = source.len();
            same_len(dest.len(), len * n)?;
            self.separate("fcollect", dest, source, Overlap::Forbidden)?;
            self.team_barrier(team).await?;
            let data = self.ctx().local(source)?;
            let mine = dest.slice(me * len..(me + 1) * len)?;
            for (_, pe) in pes_from_next(team)? {
                self.ctx().put(mine, &data, pe)?;
            }
            self.team_barrier(team).await?;
            Ok(Shared::Nothing)
        })
        .await
        .map(drop)
    }

    /// Sends block `j` of `source` to PE `j`, where it lands as block `me` of `dest`
    /// (`alltoall_block`, ...): both hold `n_pes` blocks of equal length.
    ///
    /// # Errors
    /// [`ShmemError::LengthMismatch`] if `dest` and `source` differ in length or are not a
    /// multiple of `n_pes`; as [`Scoped::barrier_all`].
    pub async fn alltoall<T: Element>(
        &self,
        dest: Sym<T>,
        source: Sym<T>,
    ) -> Result<(), ShmemError> {
        self.team_alltoall(self.world(), dest, source).await
    }

    /// As [`Scoped::alltoall`] over the PEs of `team`: block `j` goes to the team's PE `j`.
    ///
    /// # Errors
    /// As [`Scoped::alltoall`].
    pub async fn team_alltoall<T: Element>(
        &self,
        team: &Team,
        dest: Sym<T>,
        source: Sym<T>,
    ) -> Result<(), ShmemError> {
        let call = self.call(
            What::Described(format!("alltoall({dest:?}, {source:?})")),
            &[],
        );
        self.meet(call, async || {
            self.claim_world()?;
            let (me, n) = (team.my_pe()? as usize, team.n_pes()? as usize);
            same_len(dest.len(), source.len())?;
            let block = source.len() / n;
            same_len(source.len(), block * n)?;
            self.separate("alltoall", dest, source, Overlap::Forbidden)?;
            self.team_barrier(team).await?;
            // Why the source is read a piece at a time: a put may let other PEs run before it
            // returns (on the simulator), so a copy of the whole source held across the loop
            // was, with every PE inside it at once, a second copy of every byte the exchange
            // moves (1 GiB at 4096 PEs). A read per block would cost a scheduling point per
            // put (a third more events at 1024 PEs).
            let mine = dest.slice(me * block..(me + 1) * block)?;
            let block_bytes = block * std::mem::size_of::<T>();
            let per_read = (ALLTOALL_READ_BYTES / block_bytes.max(1)).max(1);
            let mut held: Option<(usize, Vec<T>)> = None;
            for (j, pe) in pes_from_next(team)? {
                let j = j as usize;
                let first = j - j % per_read;
                if held.as_ref().is_none_or(|(at, _)| *at != first) {
                    let last = (first + per_read).min(n);
                    let piece = source.slice(first * block..last * block)?;
                    held = Some((first, self.ctx().local(piece)?));
                }
                let (_, data) = held.as_ref().expect("read above");
                let at = (j - first) * block;
                self.ctx().put(mine, &data[at..at + block], pe)?;
            }
            drop(held);
            self.team_barrier(team).await?;
            Ok(Shared::Nothing)
        })
        .await
        .map(drop)
    }

    /// Sums `source` over every PE, element by element, into `dest` on every PE
    /// (`sum_reduce_block`, ...). `dest` may be `source` itself.
    ///
    /// # Errors
    /// As [`Scoped::reduce`].
    pub async fn sum_reduce<T: SumElement>(
        &self,
        dest: Sym<T>,
        source: Sym<T>,
    ) -> Result<(), ShmemError> {
        self.reduce(dest, source, "sum", T::sum_with).await
    }

    /// Combines `source` over every PE, element by element and in PE order, with `combine`
    /// (the reduction named `op`: `sum`, `prod`, `min`, `max`, `and`, `or`, `xor`) into
    /// `dest` on every PE (`TYPE_OP_reduce_block`, ...). Every PE combines in the same order,
    /// so floating-point results agree. `dest` may be `source` itself.
    ///
    /// # Errors
    /// [`ShmemError::LengthMismatch`] if they differ in length; [`ShmemError::Queue`] if a
    /// get does not complete; as [`Scoped::barrier_all`].
    pub async fn reduce<T: Element>(
        &self,
        dest: Sym<T>,
        source: Sym<T>,
        op: &'static str,
        combine: fn(T, T) -> T,
    ) -> Result<(), ShmemError> {
        self.team_reduce(self.world(), dest, source, op, combine)
            .await
    }

    /// As [`Scoped::reduce`] over the PEs of `team`, combined in the team's order.
    ///
    /// # Errors
    /// As [`Scoped::reduce`].
    pub async fn team_reduce<T: Element>(
        &self,
        team: &Team,
        dest: Sym<T>,
        source: Sym<T>,
        op: &'static str,
        combine: fn(T, T) -> T,
    ) -> Result<(), ShmemError> {
        let call = self.call(
            What::Described(format!("{op}_reduce({dest:?}, {source:?})")),
            &[],
        );
        self.meet(call, async || {
            self.claim_world()?;
            same_len(dest.len(), source.len())?;
            self.team_barrier(team).await?;
            let ctx = self.ctx();
            let mut tickets = vec![None; team.n_pes()? as usize];
            for (j, pe) in pes_from_next(team)? {
                let range = ctx.read_range(source.access(), pe)?;
                tracing::trace!(target: TRACING_TARGET, pe = ctx.my_pe(), peer = pe, op = "reduce get", bytes = range.len);
                tickets[j as usize] = Some(ctx.queue.get(range)?);
            }
            let mut acc: Option<Vec<T>> = None;
            for ticket in tickets.into_iter().flatten() {
                self.launch().ticket(self.index(), &ctx.queue, ticket).await?;
                let mut values = vec![T::zeroed(); source.len()];
                as_bytes_mut(&mut values).copy_from_slice(&ctx.queue.take_fetched(ticket));
                acc = Some(match acc {
                    None => values,
                    Some(acc) => acc.into_iter().zip(values).map(|(a, v)| combine(a, v)).collect(),
                });
            }
            // Why a barrier before writing: `dest` may be `source`, which peers may still read.
            self.team_barrier(team).await?;
            ctx.set_local(dest, &acc.unwrap_or_default())?;
            Ok(Shared::Nothing)
        })
        .await
        .map(drop)
    }

    /// Refuses `dest` and `source` that share memory, except as `allowed` says: a peer's
    /// put could land in this PE's `source` before it was read.
    fn separate<T: Element>(
        &self,
        op: &'static str,
        dest: Sym<T>,
        source: Sym<T>,
        allowed: Overlap,
    ) -> Result<(), ShmemError> {
        let shmem = self.launch().shmem;
        separate(op, shmem.span_of(dest)?, shmem.span_of(source)?, allowed)
    }

    /// The world team.
    fn world(&self) -> &Team {
        self.launch().shmem.team_world()
    }

    /// Refuses a second group of the launch calling collectives.
    fn claim_world(&self) -> Result<(), ShmemError> {
        self.launch().claim_world(self.index(), self.scope())
    }

    /// Completes this scope's context, then waits until every PE of `team` has arrived: the
    /// team's dissemination barrier (`team/barrier.rs`), with kernel waits.
    async fn team_barrier(&self, team: &Team) -> Result<(), ShmemError> {
        self.ctx().quiet()?;
        let shmem = self.launch().shmem;
        let members = team.members()?;
        let size = members.len();
        let me = team.my_pe()?;
        let epoch = team.next_sync_epoch();
        tracing::debug!(target: TRACING_TARGET, pe = shmem.my_pe(), epoch, "team barrier in a kernel");
        let mut round = 0;
        while 1u64 << round < u64::from(size) {
            let ahead = members.world_pe((me + (1 << round)) % size);
            let counter = team.area().sync_counter(round);
            shmem
                .ctx
                .queue
                .amo(remote(counter, Pe(ahead)), ADD_ONE, false)?;
            let spec =
                word_spec::<u64>(local(counter), Cmp::Ge, epoch, "a team barrier in a kernel");
            self.launch().memory(self.index(), spec).await?;
            round += 1;
        }
        Ok(())
    }
}

/// Every PE of `team` once, as its number in the team and in the world, starting with the
/// one after this PE, so that PEs do not all start at the team's first.
fn pes_from_next(team: &Team) -> Result<impl Iterator<Item = (u32, u32)> + use<>, ShmemError> {
    let (me, n) = (team.my_pe()?, team.n_pes()?);
    let members = team.members()?.clone();
    Ok((1..=n).map(move |step| {
        let j = (me + step) % n;
        (j, members.world_pe(j))
    }))
}
