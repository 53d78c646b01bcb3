//! Making and ending teams: split_strided, split_2d, destroy, and translate_pe.
//!
//! A split is collective over the parent. Every parent member gathers (over the parent) its
//! free team slots and a fingerprint of its arguments; so PEs that disagree all fail with the
//! same error instead of hanging, and the members of each new team all pick the lowest slot
//! free on every one of them, without further communication.

use hw::Device;

use crate::TRACING_TARGET;
use crate::error::ShmemError;
use crate::pe::local;
use crate::shmem::Shmem;
use crate::team::{Members, Team, TeamConfig, TeamKind};
use hw::Backend;

impl<B: Backend> Shmem<B> {
    /// Makes a team of the parent's PEs `start, start + stride, ...` (`size` of them, parent
    /// numbering) (`shmem_team_split_strided`). Returns `None` on the parent's PEs that are
    /// not in it. A negative `stride` numbers the new team's PEs downwards from `start`, in
    /// the reverse of their parent order.
    ///
    /// Collective over `parent`: every member calls it with the same arguments.
    ///
    /// # Errors
    /// On every parent PE: [`ShmemError::CollectiveMismatch`] if the arguments differ;
    /// [`ShmemError::InvalidTeamSplit`] if the team would be empty or reach past the parent;
    /// [`ShmemError::TeamsExhausted`] on the new members if no slot is free on all of them;
    /// [`ShmemError::TeamDestroyed`] if `parent` was destroyed; [`ShmemError::Queue`] if a
    /// parent member does not arrive.
    pub fn team_split_strided(
        &self,
        parent: &Team,
        start: u32,
        stride: i32,
        size: u32,
        config: TeamConfig,
    ) -> Result<Option<Team>, ShmemError> {
        let args = fingerprint(&[
            1,
            start.into(),
            i64::from(stride) as u64,
            size.into(),
            config.num_contexts.into(),
        ]);
        let all = self.team_gather(parent, [self.free_team_slots(), args])?;
        agree_on_arguments("team_split_strided arguments", &all)?;
        let parent_size = parent.n_pes()?;
        check_strided(parent_size, start, stride.into(), size)?;
        let members = parent.members()?.pick(start, stride.into(), size);
        let Some(my_index) = members.index_of(self.my_pe) else {
            return Ok(None);
        };
        let masks = masks_of(parent, &members, &all)?;
        let slot = lowest_common_slot(&masks, |_| 0, self.config.teams_max)?;
        Ok(Some(self.take_slot(slot, members, my_index, config)))
    }

    /// Splits `parent` into a grid `xrange` PEs wide (`shmem_team_split_2d`): parent PE `i`
    /// sits in row `i / xrange` and column `i % xrange`, and gets its row as the x-team and
    /// its column as the y-team. An `xrange` wider than the parent is clipped to it.
    ///
    /// Collective over `parent`.
    ///
    /// # Errors
    /// As [`Shmem::team_split_strided`]; [`ShmemError::InvalidTeamSplit`] if `xrange` is 0.
    pub fn team_split_2d(
        &self,
        parent: &Team,
        xrange: u32,
        x_config: TeamConfig,
        y_config: TeamConfig,
    ) -> Result<(Team, Team), ShmemError> {
        let args = fingerprint(&[
            2,
            xrange.into(),
            x_config.num_contexts.into(),
            y_config.num_contexts.into(),
        ]);
        let all = self.team_gather(parent, [self.free_team_slots(), args])?;
        agree_on_arguments("team_split_2d arguments", &all)?;
        if xrange == 0 {
            return Err(ShmemError::InvalidTeamSplit {
                reason: "xrange is 0; pass the width of the grid's rows, at least 1".to_owned(),
            });
        }
        let parent_members = parent.members()?;
        let n = parent_members.len();
        let xrange = xrange.min(n);
        let me = parent.my_pe()?;
        let row = |i: u32| {
            let y = i / xrange;
            parent_members.pick(y * xrange, 1, xrange.min(n - y * xrange))
        };
        let column = |i: u32| {
            let x = i % xrange;
            parent_members.pick(x, xrange.into(), (n - x).div_ceil(xrange))
        };
        // The x-slot of parent PE i's row, as every member of that row computes it.
        let x_slot = |i: u32| -> Result<u32, ShmemError> {
            let masks = masks_of(parent, &row(i), &all)?;
            lowest_common_slot(&masks, |_| 0, self.config.teams_max)
        };
        let my_x_slot = x_slot(me)?;
        let y_members = column(me);
        let y_masks = masks_of(parent, &y_members, &all)?;
        let y_indices: Vec<u32> = (0..y_members.len())
            .map(|k| parent_members.index_of(y_members.world_pe(k)).unwrap_or(0))
            .collect();
        let my_y_slot = lowest_common_slot(
            &y_masks,
            |k| x_slot(y_indices[k]).map_or(u64::MAX, |slot| 1 << slot),
            self.config.teams_max,
        )?;
        let x_members = row(me);
        let x_index = x_members
            .index_of(self.my_pe)
            .expect("a PE is in its own row");
        let y_index = y_members
            .index_of(self.my_pe)
            .expect("a PE is in its own column");
        let x_team = self.take_slot(my_x_slot, x_members, x_index, x_config);
        let y_team = self.take_slot(my_y_slot, y_members, y_index, y_config);
        Ok((x_team, y_team))
    }

    /// Ends `team` on this PE (`shmem_team_destroy`); every clone of the handle then fails
    /// with [`ShmemError::TeamDestroyed`], contexts made on it included.
    ///
    /// Collective over the team: every member calls it.
    ///
    /// # Errors
    /// [`ShmemError::PredefinedTeam`] for the world, shared and node teams;
    /// [`ShmemError::TeamDestroyed`] if already destroyed; [`ShmemError::Queue`] if a member
    /// does not arrive.
    pub fn team_destroy(&self, team: &Team) -> Result<(), ShmemError> {
        if team.kind() != TeamKind::Split {
            return Err(ShmemError::PredefinedTeam {
                team: team.kind().name(),
                op: "team_destroy",
            });
        }
        // Why a sync: afterwards no member sends to this PE's area of the slot any more, so
        // it can be cleared for the next team that takes the slot.
        self.quiet()?;
        self.team_sync(team)?;
        let area = self.team_layout.area(team.slot());
        let bytes = crate::team::SlotLayout::slot_bytes(self.n_pes);
        self.device.write_local(
            local(crate::memory::allocator::Span {
                offset: area.sync_counter(0).offset,
                len_bytes: bytes,
            }),
            &vec![0; bytes as usize],
        );
        self.team_slots_free
            .set(self.team_slots_free.get() | 1 << team.slot());
        team.mark_destroyed();
        tracing::debug!(target: TRACING_TARGET, pe = self.my_pe, slot = team.slot(), "team_destroy");
        Ok(())
    }

    /// The number in `dest` of `src`'s PE `pe` (`shmem_team_translate_pe`), or `None` if that
    /// PE is not in `dest`.
    ///
    /// # Errors
    /// [`ShmemError::TeamDestroyed`] if either team was destroyed;
    /// [`ShmemError::PeNotInTeam`] if `pe` is not a PE of `src`.
    pub fn team_translate_pe(
        &self,
        src: &Team,
        pe: u32,
        dest: &Team,
    ) -> Result<Option<u32>, ShmemError> {
        let world = src.to_world(pe)?;
        Ok(dest.members()?.index_of(world))
    }

    /// Team slots free on this PE, as a bit mask.
    pub(super) fn free_team_slots(&self) -> u64 {
        self.team_slots_free.get()
    }

    /// Marks `slot` used and makes the team that holds it.
    pub(super) fn take_slot(
        &self,
        slot: u32,
        members: Members,
        my_index: u32,
        config: TeamConfig,
    ) -> Team {
        self.team_slots_free
            .set(self.team_slots_free.get() & !(1 << slot));
        tracing::debug!(target: TRACING_TARGET, pe = self.my_pe, slot, size = members.len(), "team_split");
        let team = Team::new(
            TeamKind::Split,
            slot,
            members,
            my_index,
            config,
            self.team_layout,
        );
        crate::team::name_team_counters(&self.pe.names, &team);
        team
    }
}

/// Checks a strided split of a parent of `parent_size` PEs: every PE `start + i * stride`
/// (`i < size`) must be a parent PE, with no wrap-around (OpenSHMEM 1.5 section 9.4.6).
pub(super) fn check_strided(
    parent_size: u32,
    start: u32,
    stride: i64,
    size: u32,
) -> Result<(), ShmemError> {
    let invalid = |reason: String| Err(ShmemError::InvalidTeamSplit { reason });
    if size == 0 {
        return invalid("size is 0; a team needs at least one PE".to_owned());
    }
    if stride == 0 && size > 1 {
        return invalid(format!(
            "stride is 0 with size {size}; pass a non-zero stride, or size 1"
        ));
    }
    let last = i128::from(start) + i128::from(size - 1) * i128::from(stride);
    if start >= parent_size || !(0..i128::from(parent_size)).contains(&last) {
        return invalid(format!(
            "PEs {start}, {}, ... ({size} of them) reach parent PE {last}, but the parent has \
             PEs 0 to {}; shrink start, stride or size",
            i128::from(start) + i128::from(stride),
            i64::from(parent_size) - 1
        ));
    }
    Ok(())
}

/// The free-slot masks, from the parent's gather `all`, of the members of a new team.
fn masks_of(parent: &Team, members: &Members, all: &[[u64; 2]]) -> Result<Vec<u64>, ShmemError> {
    let parent_members = parent.members()?;
    Ok((0..members.len())
        .map(|k| {
            let index = parent_members
                .index_of(members.world_pe(k))
                .expect("a split's members are in its parent");
            all[index as usize][0]
        })
        .collect())
}

/// The lowest slot free in every mask, leaving out `taken(k)` of mask `k`. A PE's mask has
/// no bit at or above its `RSHMEM_TEAMS_MAX` ([`crate::team::free_slots_at_init`]), so the
/// result is a slot every member has; `teams_max` is for the error.
fn lowest_common_slot(
    masks: &[u64],
    taken: impl Fn(usize) -> u64,
    teams_max: u32,
) -> Result<u32, ShmemError> {
    let common = masks
        .iter()
        .enumerate()
        .fold(u64::MAX, |acc, (k, mask)| acc & mask & !taken(k));
    if common == 0 {
        Err(ShmemError::TeamsExhausted { max: teams_max })
    } else {
        Ok(common.trailing_zeros())
    }
}

/// Checks that every parent PE passed the same arguments (second gather word).
fn agree_on_arguments(what: &'static str, all: &[[u64; 2]]) -> Result<(), ShmemError> {
    let first = all.first().map_or(0, |cell| cell[1]);
    let differing: Vec<u32> = (0..)
        .zip(all)
        .filter(|(_, cell)| cell[1] != first)
        .map(|(pe, _)| pe)
        .collect();
    if differing.is_empty() {
        Ok(())
    } else {
        Err(ShmemError::CollectiveMismatch {
            what,
            values: format!("parent PEs {differing:?} passed arguments other than parent PE 0's"),
        })
    }
}

/// A 64-bit FNV-1a digest of `words`: equal arguments give equal digests.
pub(crate) fn fingerprint(words: &[u64]) -> u64 {
    words
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .fold(0xcbf2_9ce4_8422_2325, |h, byte| {
            (h ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
        })
}
