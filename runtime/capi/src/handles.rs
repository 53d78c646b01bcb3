//! The C handles of contexts (`shmem_ctx_t`) and teams (`shmem_team_t`).
//!
//! A handle the program created is the address of a boxed runtime object, so a valid handle
//! costs one pointer dereference. The predefined handles are small constants `shmem.h`
//! defines (`SHMEM_CTX_DEFAULT` is null, `SHMEM_TEAM_WORLD` is 1, ...). Why keep a list of
//! live handles too: a handle the program destroyed, never had, or left uninitialised is
//! then an error that names it, not a read of freed memory.

use std::cell::RefCell;
use std::ffi::{c_int, c_void};

use rshmem::{Ctx, Shmem, Team};

use crate::fail::CallError;
use crate::state::Backend;

/// A context handle, as `shmem.h` declares it (an opaque pointer).
#[allow(non_camel_case_types, reason = "the C type's name")]
pub type shmem_ctx_t = *mut c_void;

/// A team handle, as `shmem.h` declares it (an opaque pointer).
#[allow(non_camel_case_types, reason = "the C type's name")]
pub type shmem_team_t = *mut c_void;

/// The values of the predefined handles; `shmem.h` defines the same numbers.
pub mod predefined {
    /// `SHMEM_CTX_DEFAULT`.
    pub const CTX_DEFAULT: usize = 0;
    /// `SHMEM_CTX_INVALID`.
    pub const CTX_INVALID: usize = usize::MAX;
    /// `SHMEM_TEAM_INVALID`.
    pub const TEAM_INVALID: usize = 0;
    /// `SHMEM_TEAM_WORLD`.
    pub const TEAM_WORLD: usize = 1;
    /// `SHMEM_TEAM_SHARED`.
    pub const TEAM_SHARED: usize = 2;
    /// `SHMEMX_TEAM_NODE`.
    pub const TEAM_NODE: usize = 3;
}

/// A team the program made, and the `num_contexts` it was configured with.
#[derive(Clone, Copy)]
struct LiveTeam {
    handle: usize,
    num_contexts: c_int,
}

/// The contexts and teams the program created and has not destroyed.
#[derive(Default)]
pub(crate) struct Handles {
    ctxs: RefCell<Vec<usize>>,
    teams: RefCell<Vec<LiveTeam>>,
}

impl Handles {
    /// The context `handle` names.
    pub(crate) fn ctx<'a>(
        &'a self,
        shmem: &'a Shmem<Backend>,
        handle: shmem_ctx_t,
    ) -> Result<&'a Ctx<Backend>, CallError> {
        let raw = handle as usize;
        if raw == predefined::CTX_DEFAULT {
            return Ok(shmem);
        }
        if !self.ctxs.borrow().contains(&raw) {
            return Err(CallError::InvalidContext(raw));
        }
        // SAFETY: `raw` is in the live list, so it came from `Box::into_raw` in `add_ctx` and
        // was not yet taken back by `remove_ctx`.
        Ok(unsafe { &*(handle as *const Ctx<Backend>) })
    }

    /// A handle for `ctx`, which the program now owns.
    pub(crate) fn add_ctx(&self, ctx: Ctx<Backend>) -> shmem_ctx_t {
        let handle = Box::into_raw(Box::new(ctx));
        self.ctxs.borrow_mut().push(handle as usize);
        handle.cast()
    }

    /// Takes the context `handle` back from the program.
    pub(crate) fn remove_ctx(&self, handle: shmem_ctx_t) -> Result<Ctx<Backend>, CallError> {
        let raw = handle as usize;
        let mut ctxs = self.ctxs.borrow_mut();
        let Some(index) = ctxs.iter().position(|&live| live == raw) else {
            return Err(CallError::InvalidContext(raw));
        };
        ctxs.swap_remove(index);
        // SAFETY: `raw` was live, so it came from `Box::into_raw` in `add_ctx`; it is now out
        // of the list, so no one takes it back twice.
        Ok(*unsafe { Box::from_raw(handle.cast::<Ctx<Backend>>()) })
    }

    /// The team `handle` names.
    pub(crate) fn team<'a>(
        &'a self,
        shmem: &'a Shmem<Backend>,
        handle: shmem_team_t,
    ) -> Result<&'a Team, CallError> {
        let raw = handle as usize;
        match raw {
            predefined::TEAM_WORLD => return Ok(shmem.team_world()),
            predefined::TEAM_SHARED => return Ok(shmem.team_shared()),
            predefined::TEAM_NODE => return Ok(shmem.team_node()),
            _ => {}
        }
        self.live_team(raw)?;
        // SAFETY: `raw` is in the live list, so it came from `Box::into_raw` in `add_team`
        // and was not yet taken back by `remove_team`.
        Ok(unsafe { &*(handle as *const Team) })
    }

    /// The live team of the program's handle `raw`.
    fn live_team(&self, raw: usize) -> Result<LiveTeam, CallError> {
        self.teams
            .borrow()
            .iter()
            .find(|live| live.handle == raw)
            .copied()
            .ok_or(CallError::InvalidTeam(raw))
    }

    /// The `num_contexts` the program's team `handle` was made with, as `shmem_team_config_t`
    /// reports it; `None` for a predefined team, which was configured by no one.
    pub(crate) fn team_num_contexts(
        &self,
        handle: shmem_team_t,
    ) -> Result<Option<c_int>, CallError> {
        if (handle as usize) <= predefined::TEAM_NODE {
            return Ok(None);
        }
        Ok(Some(self.live_team(handle as usize)?.num_contexts))
    }

    /// A handle for `team`, which the program now owns, configured with `num_contexts`.
    pub(crate) fn add_team(&self, team: Team, num_contexts: c_int) -> shmem_team_t {
        let handle = Box::into_raw(Box::new(team));
        self.teams.borrow_mut().push(LiveTeam {
            handle: handle as usize,
            num_contexts,
        });
        handle.cast()
    }

    /// Takes the team `handle` back from the program.
    pub(crate) fn remove_team(&self, handle: shmem_team_t) -> Result<Team, CallError> {
        let raw = handle as usize;
        let mut teams = self.teams.borrow_mut();
        let Some(index) = teams.iter().position(|live| live.handle == raw) else {
            return Err(CallError::InvalidTeam(raw));
        };
        teams.swap_remove(index);
        // SAFETY: `raw` was live, so it came from `Box::into_raw` in `add_team`; it is now out
        // of the list, so no one takes it back twice.
        Ok(*unsafe { Box::from_raw(handle.cast::<Team>()) })
    }

    /// The handle of `team`: a predefined one, or the program's handle of the same team.
    pub(crate) fn handle_of(&self, shmem: &Shmem<Backend>, team: &Team) -> shmem_team_t {
        if team.same_as(shmem.team_world()) {
            return predefined::TEAM_WORLD as shmem_team_t;
        }
        if team.same_as(shmem.team_shared()) {
            return predefined::TEAM_SHARED as shmem_team_t;
        }
        if team.same_as(shmem.team_node()) {
            return predefined::TEAM_NODE as shmem_team_t;
        }
        self.teams
            .borrow()
            .iter()
            // SAFETY: every entry of the live list is a boxed team (see `team`).
            .find(|live| unsafe { &*(live.handle as *const Team) }.same_as(team))
            .map_or(predefined::TEAM_INVALID as shmem_team_t, |live| {
                live.handle as shmem_team_t
            })
    }
}
