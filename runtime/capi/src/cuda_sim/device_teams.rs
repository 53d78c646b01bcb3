//! The team calls of kernels on the simulator: a team's numbering (`nvshmem_team_my_pe`,
//! `_n_pes`, `nvshmem_team_translate_pe`), its barrier and sync, and its collectives
//! (broadcast, fcollect, alltoall, the reductions), at thread, warp or block scope.
//!
//! A kernel names a team by NVSHMEM's `int32_t` handle (`nvshmem_teams.rs`): the world, shared
//! and node teams, or one the host split (`nvshmem_team_split_strided`, `_2d`). Each call is the
//! kernel model's collective on that team (`runtime/src/kernel/collectives.rs`), whose barrier
//! is the team's own dissemination barrier, so a kernel's barrier `k` on a team meets barrier
//! (or sync) `k` of that team on its other members, host or kernel.

use std::ffi::{c_int, c_void};

use rshmem::{Sym, Team};

use crate::cuda_sim::device_shmem::{device_call, pe_number, scoped, size_of_type};
use crate::cuda_sim::{fiber, reduce};
use crate::fail::CallError;
use crate::handles::{predefined, shmem_team_t};
use crate::state::Pe;

/// The live team PE `pe`'s handle `handle` names.
fn team_of(pe: &'static Pe, handle: i32) -> Result<&'static Team, CallError> {
    let raw = pe.nvshmem_teams.team(handle);
    if raw == predefined::TEAM_INVALID {
        return Err(CallError::Argument(format!(
            "team {handle} is no live team of PE {}: pass a team this PE belongs to \
             (a split gives NVSHMEM_TEAM_INVALID to the PEs it leaves out)",
            pe.shmem.my_pe()
        )));
    }
    pe.team(raw as shmem_team_t)
}

/// `nvshmem_team_my_pe` in a kernel: this PE's number in `team`.
#[unsafe(no_mangle)]
pub extern "C" fn rshmemd_team_my_pe(team: i32) -> c_int {
    device_call("nvshmem_team_my_pe", |_, p| {
        Ok(team_of(p, team)?.my_pe()? as c_int)
    })
}

/// `nvshmem_team_n_pes` in a kernel.
#[unsafe(no_mangle)]
pub extern "C" fn rshmemd_team_n_pes(team: i32) -> c_int {
    device_call("nvshmem_team_n_pes", |_, p| {
        Ok(team_of(p, team)?.n_pes()? as c_int)
    })
}

/// `nvshmem_team_translate_pe` to the world in a kernel: the world number of `team`'s PE
/// `pe`, or -1 for a number outside the team.
#[unsafe(no_mangle)]
pub extern "C" fn rshmemd_team_translate_to_world(team: i32, pe: c_int) -> c_int {
    device_call("nvshmem_team_translate_pe", |_, p| {
        let from = team_of(p, team)?;
        let Some(pe) = u32::try_from(pe)
            .ok()
            .filter(|&pe| pe < from.n_pes().unwrap_or(0))
        else {
            return Ok(-1);
        };
        let world = p.shmem.team_world();
        Ok(p.shmem
            .team_translate_pe(from, pe, world)?
            .map_or(-1, |w| w as c_int))
    })
}

/// `nvshmem_barrier`/`barrier_all` and their forms, on `team`.
#[unsafe(no_mangle)]
pub extern "C" fn rshmemd_barrier(team: i32, scope: c_int) {
    barrier("nvshmem_barrier", team, scope);
}

/// `nvshmem_sync`/`sync_all` and their forms: a barrier, whose quiet a sync may skip but
/// need not.
#[unsafe(no_mangle)]
pub extern "C" fn rshmemd_sync(team: i32, scope: c_int) {
    barrier("nvshmem_sync", team, scope);
}

/// `team`'s barrier at `scope`, for the device call `call`.
fn barrier(call: &'static str, team: i32, scope: c_int) {
    device_call(call, |t, p| {
        let team = team_of(p, team)?;
        Ok(fiber::block_on(scoped(t, scope)?.barrier(team))?)
    });
}

/// The collectives a kernel calls on a team, as `device_abi.h` numbers them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Collective {
    Broadcast,
    Fcollect,
    Alltoall,
    Reduce,
}

impl Collective {
    fn of(kind: c_int) -> Result<Collective, CallError> {
        match kind {
            0 => Ok(Collective::Broadcast),
            1 => Ok(Collective::Fcollect),
            2 => Ok(Collective::Alltoall),
            3 => Ok(Collective::Reduce),
            other => Err(CallError::Argument(format!(
                "collective {other} is unknown"
            ))),
        }
    }

    fn name(kind: c_int) -> &'static str {
        match Collective::of(kind) {
            Ok(Collective::Broadcast) => "nvshmem_broadcast",
            Ok(Collective::Fcollect) => "nvshmem_fcollect",
            Ok(Collective::Alltoall) => "nvshmem_alltoall",
            _ => "nvshmem_reduce",
        }
    }
}

/// The team collectives in a kernel: broadcast, fcollect, alltoall and the reductions, on
/// `team`, `root` numbered in it. Returns 0.
///
/// # Safety
/// `dest` and `src` are symmetric addresses of `nelems` elements of `type` (times the team's
/// size for fcollect's `dest`, alltoall's both).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmemd_collective(
    kind: c_int,
    team: i32,
    dest: *mut c_void,
    src: *const c_void,
    nelems: usize,
    type_code: c_int,
    op: c_int,
    root: c_int,
    scope: c_int,
) -> c_int {
    device_call(Collective::name(kind), |t, p| {
        let collective = Collective::of(kind)?;
        let team = team_of(p, team)?;
        let scope = scoped(t, scope)?;
        if collective == Collective::Reduce {
            return reduce::reduce(p, scope, team, type_code, op, dest, src, nelems);
        }
        let n_pes = team.n_pes()? as usize;
        let (dest_len, src_len) = match collective {
            Collective::Fcollect => (nelems * n_pes, nelems),
            Collective::Alltoall => (nelems * n_pes, nelems * n_pes),
            _ => (nelems, nelems),
        };
        macro_rules! moved {
            ($t:ty) => {{
                let dest: Sym<$t> = p.sym(dest.cast::<$t>().cast_const(), dest_len)?;
                let source: Sym<$t> = p.sym(src.cast::<$t>(), src_len)?;
                match collective {
                    Collective::Broadcast => {
                        fiber::block_on(scope.team_broadcast(team, dest, source, pe_number(root)?))?
                    }
                    Collective::Fcollect => {
                        fiber::block_on(scope.team_fcollect(team, dest, source))?
                    }
                    _ => fiber::block_on(scope.team_alltoall(team, dest, source))?,
                }
            }};
        }
        match size_of_type(type_code) {
            1 => moved!(u8),
            2 => moved!(u16),
            4 => moved!(u32),
            8 => moved!(u64),
            16 => moved!(u128),
            other => {
                return Err(CallError::Argument(format!(
                    "elements of {other} bytes are unknown"
                )));
            }
        }
        Ok(0)
    })
}
