//! The team barrier and the team gather, both dissemination algorithms (Hensgen, Finkel,
//! Manber 1988) over the team's slot area.
//!
//! In round `k` each member signals the member `2^k` places ahead (team order, wrapping) and
//! waits for the signal from the member `2^k` places behind, so after `ceil(log2 size)` rounds
//! every member has transitively heard from every other. Each round has its own 64-bit counter;
//! a member adds 1 to its successor's counter and waits until its own counter reaches the
//! epoch (how many times it has entered this algorithm on this team). Counters only grow, so
//! they never need a reset, and a fast member already in the next epoch only pushes a counter
//! beyond the epoch a slow one waits for.
//!
//! The gather carries data: in round `k` a member sends the cells it knows (its own and the
//! `2^k - 1` after it) to the member `2^k` behind, then fences and signals. The fence makes
//! the data arrive before the signal, and orders this epoch's signals before the next
//! epoch's, so a counter at the epoch means this epoch's data is there. Cells alternate
//! between two buffers by epoch parity: a member can be at most one epoch ahead of another.

use hw::{AmoKind, AmoOp, AmoWidth, Backend, Cmp, Copier, Device, Pe, Queue, WordNames};

use crate::TRACING_TARGET;
use crate::error::ShmemError;
use crate::p2p::wait::word_spec;
use crate::pe::{local, remote};
use crate::shmem::Shmem;
use crate::team::{GATHER_WORDS, Team};

/// One gather contribution.
pub(crate) type GatherCell = [u64; GATHER_WORDS];

const ADD_ONE: AmoOp = AmoOp {
    kind: AmoKind::Add,
    operand: 1,
    width: AmoWidth::W64,
};

/// Names `team`'s barrier and gather counters in this PE's reports of waits
/// ([`hw::WordNames`]): each by the member that adds to it, which is the one a member stuck
/// on it waits for. A destroyed team has nothing to name.
pub(crate) fn name_team_counters(names: &WordNames, team: &Team) {
    let (Ok(members), Ok(me)) = (team.members(), team.my_pe()) else {
        return;
    };
    let size = members.len();
    let team_name = team.kind().name();
    // Who adds to each round's counters: `(behind, ahead)` per round. The names themselves
    // are made only when a report asks, as a job of thousands of PEs never reports most.
    let peers: Vec<(u32, u32)> = (0..rounds(size))
        .map(|round| {
            let reach = (1u32 << round) % size;
            (
                members.world_pe((me + size - reach) % size),
                members.world_pe((me + reach) % size),
            )
        })
        .collect();
    let first = local(team.area().sync_counter(0));
    let gather_start = local(team.area().gather_counter(0)).offset - first.offset;
    let rule = move |at: u64| {
        let (gather, index) = if at < gather_start {
            (false, at / first.len)
        } else {
            (true, (at - gather_start) / first.len)
        };
        let round = u32::try_from(index).ok()?;
        let &(behind, ahead) = peers.get(round as usize)?;
        let (what, from) = if gather {
            ("gather", ahead)
        } else {
            ("barrier", behind)
        };
        Some(format!(
            "{team_name}'s {what} counter of round {round} (PE {from} adds to it)"
        ))
    };
    let len = 2 * gather_start;
    names.name_each(first.kind, first.offset, len, std::sync::Arc::new(rule));
}

/// `ceil(log2 size)`: the rounds after which `2^rounds >= size` members have been reached.
pub(crate) fn rounds(size: u32) -> u32 {
    u32::BITS - size.saturating_sub(1).leading_zeros()
}

impl<B: Backend> Shmem<B> {
    /// Waits until every member of `team` has called `team_sync` (`shmem_team_sync`).
    ///
    /// # Ordering
    /// Completes no memory operations: quiet first for that (docs/ordering.md).
    ///
    /// # Errors
    /// [`ShmemError::TeamDestroyed`]; [`ShmemError::Queue`] if a member does not arrive
    /// within `RSHMEM_WAIT_TIMEOUT_MS`, or no PE can make progress (a member skipped it).
    pub fn team_sync(&self, team: &Team) -> Result<(), ShmemError> {
        let members = team.members()?;
        let size = members.len();
        let me = team.my_pe()?;
        let epoch = team.next_sync_epoch();
        tracing::debug!(target: TRACING_TARGET, pe = self.my_pe, team = ?team.kind(), epoch, "team_sync");
        for round in 0..rounds(size) {
            let ahead = members.world_pe((me + (1 << round)) % size);
            let counter = team.area().sync_counter(round);
            self.queue.amo(remote(counter, Pe(ahead)), ADD_ONE, false)?;
            let spec = word_spec::<u64>(local(counter), Cmp::Ge, epoch, "team_sync");
            self.device.wait_until(spec, self.deadline())?;
        }
        Ok(())
    }

    /// Gathers one cell from every member of `team`: the result holds member `i`'s `mine` at
    /// index `i`.
    ///
    /// # Errors
    /// As [`Shmem::team_sync`].
    pub(crate) fn team_gather(
        &self,
        team: &Team,
        mine: GatherCell,
    ) -> Result<Vec<GatherCell>, ShmemError> {
        let members = team.members()?;
        let size = members.len();
        let me = team.my_pe()?;
        let epoch = team.next_gather_epoch();
        let parity = epoch % 2;
        let area = team.area();
        let cells = |first, count| area.gather_cells(parity, first, count, self.n_pes);
        // What this member knows, from its own cell on (wrapping): what it sends on.
        let mut known: Vec<GatherCell> = vec![mine];
        for round in 0..rounds(size) {
            let reach = 1u32 << round;
            let behind = members.world_pe((me + size - reach % size) % size);
            // Send what the member behind lacks: cells me.. (wrapping), at most size - reach.
            let count = reach.min(size - reach);
            let data: &[GatherCell] = &known[..count as usize];
            let first_run = count.min(size - me);
            let (head, tail) = data.split_at(first_run as usize);
            self.queue.put(
                remote(cells(me, first_run), Pe(behind)),
                bytemuck::cast_slice(head),
                Copier::Device,
            )?;
            if !tail.is_empty() {
                self.queue.put(
                    remote(cells(0, tail.len() as u32), Pe(behind)),
                    bytemuck::cast_slice(tail),
                    Copier::Device,
                )?;
            }
            self.queue.fence()?;
            let counter = area.gather_counter(round);
            self.queue
                .amo(remote(counter, Pe(behind)), ADD_ONE, false)?;
            let spec = word_spec::<u64>(local(counter), Cmp::Ge, epoch, "team gather");
            self.device.wait_until(spec, self.deadline())?;
            // What the member ahead sent: cells me + reach .. me + reach + count (wrapping).
            for i in 0..count {
                let index = (me + reach + i) % size;
                let mut cell: GatherCell = [0; GATHER_WORDS];
                self.device
                    .read_local(local(cells(index, 1)), bytemuck::cast_slice_mut(&mut cell));
                known.push(cell);
            }
        }
        // `known` holds cells me, me + 1, ... (wrapping); rotate into team order.
        known.rotate_right(me as usize);
        Ok(known)
    }
}
