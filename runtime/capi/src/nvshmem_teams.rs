//! NVSHMEM's team handles: `nvshmem_team_t` is an `int32_t`, where the C API's teams are
//! pointers, so `nvshmem.h` maps one to the other through this table.
//!
//! Handles 0, 1 and 2 are NVSHMEM's world, shared and node teams, fixed; a team the program
//! splits gets the lowest free handle from 3 up, which `rshmemx_team_handle_release` frees when
//! the team is destroyed. The table lives in the PE's state (`state.rs`: `Pe`), so each
//! simulated PE, which runs in a process with the others, has its own; each entry is a thin
//! translation, the team itself stays in the C API's handles.

use std::cell::RefCell;

use crate::handles::{predefined, shmem_team_t};
use crate::state::with_pe;

/// NVSHMEM's predefined handles, in order: world, shared, node.
const PREDEFINED: [usize; 3] = [
    predefined::TEAM_WORLD,
    predefined::TEAM_SHARED,
    predefined::TEAM_NODE,
];

/// `NVSHMEM_TEAM_INVALID`.
const INVALID: i32 = -1;

/// One PE's split teams, by handle minus the predefined ones; `None` is a free handle.
#[derive(Debug, Default)]
pub(crate) struct NvshmemTeams {
    teams: RefCell<Vec<Option<usize>>>,
}

impl NvshmemTeams {
    /// The handle of `team`: the one it has, or a new one.
    fn handle(&self, team: usize) -> i32 {
        if team == predefined::TEAM_INVALID {
            return INVALID;
        }
        if let Some(index) = PREDEFINED.iter().position(|&known| known == team) {
            return index as i32;
        }
        let mut teams = self.teams.borrow_mut();
        let slot = match teams.iter().position(|&entry| entry == Some(team)) {
            Some(slot) => slot,
            None => match teams.iter().position(Option::is_none) {
                Some(free) => {
                    teams[free] = Some(team);
                    free
                }
                None => {
                    teams.push(Some(team));
                    teams.len() - 1
                }
            },
        };
        i32::try_from(slot + PREDEFINED.len()).unwrap_or(INVALID)
    }

    /// The team `handle` names, or `SHMEM_TEAM_INVALID`.
    pub(crate) fn team(&self, handle: i32) -> usize {
        let Ok(index) = usize::try_from(handle) else {
            return predefined::TEAM_INVALID;
        };
        if let Some(&known) = PREDEFINED.get(index) {
            return known;
        }
        self.teams
            .borrow()
            .get(index - PREDEFINED.len())
            .copied()
            .flatten()
            .unwrap_or(predefined::TEAM_INVALID)
    }

    /// How many handles there are: the predefined ones and every split one, free or not.
    pub(crate) fn handles(&self) -> usize {
        PREDEFINED.len() + self.teams.borrow().len()
    }

    /// Frees `handle` (a destroyed team's); predefined and unknown handles are left alone.
    fn release(&self, handle: i32) {
        let Some(index) = usize::try_from(handle)
            .ok()
            .and_then(|h| h.checked_sub(PREDEFINED.len()))
        else {
            return;
        };
        if let Some(entry) = self.teams.borrow_mut().get_mut(index) {
            *entry = None;
        }
    }
}

/// The NVSHMEM handle of `team` (a C API team handle), made on first use;
/// `NVSHMEM_TEAM_INVALID` (-1) for `SHMEM_TEAM_INVALID`.
#[unsafe(no_mangle)]
pub extern "C" fn rshmemx_team_handle(team: shmem_team_t) -> i32 {
    let handle = with_pe("rshmemx_team_handle", |pe| {
        Ok(pe.nvshmem_teams.handle(team as usize))
    });
    // Kernels compiled by nvcc look teams up in their own table (`device_teams.rs`).
    crate::device_teams::rshmemx_bind_device_teams();
    handle
}

/// The C API team an NVSHMEM handle names, or `SHMEM_TEAM_INVALID` for one no live team has.
#[unsafe(no_mangle)]
pub extern "C" fn rshmemx_team_of_handle(handle: i32) -> shmem_team_t {
    with_pe("rshmemx_team_of_handle", |pe| {
        Ok(pe.nvshmem_teams.team(handle) as shmem_team_t)
    })
}

/// Frees an NVSHMEM handle once its team is destroyed.
#[unsafe(no_mangle)]
pub extern "C" fn rshmemx_team_handle_release(handle: i32) {
    with_pe("rshmemx_team_handle_release", |pe| {
        pe.nvshmem_teams.release(handle);
        Ok(())
    });
    crate::device_teams::rshmemx_bind_device_teams();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predefined_teams_have_nvshmems_handles() {
        let table = NvshmemTeams::default();
        assert_eq!(table.handle(predefined::TEAM_WORLD), 0);
        assert_eq!(table.handle(predefined::TEAM_SHARED), 1);
        assert_eq!(table.handle(predefined::TEAM_NODE), 2);
        assert_eq!(table.handle(predefined::TEAM_INVALID), INVALID);
        assert_eq!(table.team(0), predefined::TEAM_WORLD);
        assert_eq!(table.team(-1), predefined::TEAM_INVALID);
        assert_eq!(table.team(7), predefined::TEAM_INVALID);
    }

    #[test]
    fn split_teams_get_free_handles_again_after_release() {
        let table = NvshmemTeams::default();
        let (a, b) = (0x1000, 0x2000);
        assert_eq!(table.handle(a), 3);
        assert_eq!(table.handle(b), 4);
        assert_eq!(table.handles(), 5, "the predefined three and two split");
        assert_eq!(table.handle(a), 3, "a team keeps its handle");
        assert_eq!(table.team(4), b);
        table.release(3);
        assert_eq!(table.team(3), predefined::TEAM_INVALID);
        assert_eq!(table.handle(0x3000), 3, "the freed handle is reused");
        table.release(0);
        assert_eq!(table.team(0), predefined::TEAM_WORLD);
    }
}
