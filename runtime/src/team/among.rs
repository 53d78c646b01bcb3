//! Teams made by their members alone: [`Shmem::team_create_strided`], for OpenSHMEM's
//! deprecated active-set collectives, which only the members of the set `(start, stride,
//! size)` call, so a split (collective over a parent) cannot make their team.
//!
//! The members still have to agree on a team slot free on all of them. They do it through a
//! small symmetric scratch array the caller provides (OpenSHMEM's `pSync` is exactly such an
//! array, and the specification already forbids overlapping active sets from sharing one):
//!
//! 1. every member ors the mask of its used slots into the first member's `scratch[0]`, then
//!    counts itself in its `scratch[1]`, both with fetching atomics so that the or is complete
//!    before the count;
//! 2. the first member waits until all have counted, takes the mask and clears its two words,
//!    picks the lowest slot free on every member and sends `slot + 1` (or -1 when none is
//!    free) to every other member's `scratch[2]`;
//! 3. each other member waits for its `scratch[2]`, and clears it.
//!
//! So the scratch array is zero again on every member when the call returns there, and a
//! member's slots cannot change during the call, since it is blocked in it.

use hw::{Backend, Cmp};

use crate::error::ShmemError;
use crate::memory::sym::Sym;
use crate::shmem::Shmem;
use crate::team::split::check_strided;
use crate::team::{Team, TeamConfig};

/// The `i64` words of scratch [`Shmem::team_create_strided`] needs.
pub const TEAM_CREATE_SCRATCH_WORDS: usize = 3;

/// Scratch word: the used slots of every member, or-ed on the first member.
const USED: usize = 0;
/// Scratch word: the members that have or-ed their mask in, on the first member.
const ARRIVED: usize = 1;
/// Scratch word: the slot plus one (or -1 for none), sent to every other member.
const SLOT: usize = 2;

impl<B: Backend> Shmem<B> {
    /// Makes the team of the world PEs `start, start + stride, ...` (`size` of them), called
    /// by those PEs only; `scratch` is a symmetric array of at least
    /// [`TEAM_CREATE_SCRATCH_WORDS`] `i64`s, zero on every member when the call starts, and
    /// zero again when it returns. Calls of overlapping sets of PEs that run at the same time
    /// need different scratch arrays.
    ///
    /// # Errors
    /// [`ShmemError::InvalidTeamSplit`] if the set is empty, reaches past the last PE, or
    /// does not hold this PE, or if `scratch` is too short; [`ShmemError::TeamsExhausted`] on
    /// every member if no slot is free on all of them; an address error for `scratch`;
    /// [`ShmemError::Queue`] if a member does not arrive within `RSHMEM_WAIT_TIMEOUT_MS`.
    pub fn team_create_strided(
        &self,
        start: u32,
        stride: u32,
        size: u32,
        scratch: Sym<i64>,
    ) -> Result<Team, ShmemError> {
        check_strided(self.n_pes, start, stride.into(), size)?;
        let members = self
            .team_world()
            .members()?
            .pick(start, stride.into(), size);
        let Some(my_index) = members.index_of(self.my_pe) else {
            return Err(ShmemError::InvalidTeamSplit {
                reason: format!(
                    "PE {} is not in the set of PEs {start}, {}, ... ({size} of them); only \
                     its members make the team",
                    self.my_pe,
                    u64::from(start) + u64::from(stride)
                ),
            });
        };
        if scratch.len() < TEAM_CREATE_SCRATCH_WORDS {
            return Err(ShmemError::InvalidTeamSplit {
                reason: format!(
                    "the scratch array has {} words, and the agreement needs \
                     {TEAM_CREATE_SCRATCH_WORDS}",
                    scratch.len()
                ),
            });
        }
        let (used, arrived, slot) = (scratch.at(USED)?, scratch.at(ARRIVED)?, scratch.at(SLOT)?);
        let first = members.world_pe(0);
        // Why fetching atomics: the or must be complete before the count says it is.
        self.atomic_fetch_or(used, !self.free_team_slots() as i64, first)?;
        self.atomic_fetch_inc(arrived, first)?;
        let code = if my_index == 0 {
            self.wait_word(arrived, Cmp::Eq, i64::from(size), "team_create_strided")?;
            let used_by_any = self.atomic_swap(used, 0, first)? as u64;
            self.atomic_swap(arrived, 0, first)?;
            let free = !used_by_any;
            let code = if free == 0 {
                -1
            } else {
                i64::from(free.trailing_zeros()) + 1
            };
            for k in 1..size {
                self.atomic_set(slot, code, members.world_pe(k))?;
            }
            self.quiet()?;
            code
        } else {
            let code = self.wait_word(slot, Cmp::Ne, 0, "team_create_strided")?;
            self.atomic_swap(slot, 0, self.my_pe)?;
            code
        };
        let Ok(slot) = u32::try_from(code - 1) else {
            return Err(ShmemError::TeamsExhausted {
                max: self.config.teams_max,
            });
        };
        Ok(self.take_slot(slot, members, my_index, TeamConfig::default()))
    }
}
