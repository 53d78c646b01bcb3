//! Teams: `shmem_team_my_pe`, `n_pes`, `get_config`, `translate_pe`, `split_strided`,
//! `split_2d`, `destroy` and `shmem_team_ptr`.
//!
//! A team is the runtime's [`rshmem::Team`], boxed behind a handle (`handles.rs`). The
//! queries return -1 for `SHMEM_TEAM_INVALID` as the specification asks; a split that cannot
//! make its team returns non-zero with `SHMEM_TEAM_INVALID`, on every PE alike (the runtime
//! agrees on the arguments first); other misuse ends the job.

use std::ffi::{c_int, c_long, c_void};

use rshmem::{ShmemError, Team, TeamConfig};

use crate::fail::CallError;
use crate::handles::{predefined, shmem_team_t};
use crate::setup::pe_number;
use crate::state::{Pe, with_pe};

/// `shmem_team_config_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
#[allow(non_camel_case_types, reason = "the C type's name")]
pub struct shmem_team_config_t {
    /// How many contexts the team may have at once.
    pub num_contexts: c_int,
}

/// `SHMEM_TEAM_NUM_CONTEXTS`: the mask bit that says `num_contexts` is set.
pub const TEAM_NUM_CONTEXTS: c_long = 1;

/// Whether `team` is `SHMEM_TEAM_INVALID`.
fn is_invalid(team: shmem_team_t) -> bool {
    team as usize == predefined::TEAM_INVALID
}

/// The runtime's team configuration for a C configuration and mask.
fn config_of(config: *const shmem_team_config_t, mask: c_long) -> Result<TeamConfig, CallError> {
    let mut made = TeamConfig::default();
    if mask & TEAM_NUM_CONTEXTS != 0 && !config.is_null() {
        // SAFETY: a non-null config points to a readable shmem_team_config_t.
        let wanted = unsafe { config.read() }.num_contexts;
        made.num_contexts = u32::try_from(wanted).map_err(|_| {
            CallError::Argument(format!("num_contexts {wanted} is negative; pass 0 or more"))
        })?;
    }
    Ok(made)
}

/// This PE's number in `team`, or -1 for `SHMEM_TEAM_INVALID`.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_team_my_pe(team: shmem_team_t) -> c_int {
    if is_invalid(team) {
        return -1;
    }
    with_pe(
        "shmem_team_my_pe",
        |pe| Ok(pe.team(team)?.my_pe()? as c_int),
    )
}

/// The number of PEs of `team`, or -1 for `SHMEM_TEAM_INVALID`.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_team_n_pes(team: shmem_team_t) -> c_int {
    if is_invalid(team) {
        return -1;
    }
    with_pe(
        "shmem_team_n_pes",
        |pe| Ok(pe.team(team)?.n_pes()? as c_int),
    )
}

/// Stores `team`'s configuration in `*config`: 0, or non-zero for `SHMEM_TEAM_INVALID`.
///
/// # Safety
/// `config` points to a writable `shmem_team_config_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_team_get_config(
    team: shmem_team_t,
    config_mask: c_long,
    config: *mut shmem_team_config_t,
) -> c_int {
    if is_invalid(team) {
        return 1;
    }
    with_pe("shmem_team_get_config", |pe| {
        let made = pe.team(team)?.config()?;
        if config_mask & TEAM_NUM_CONTEXTS != 0 && !config.is_null() {
            // SAFETY: the caller passes a writable shmem_team_config_t.
            unsafe {
                (*config).num_contexts = c_int::try_from(made.num_contexts).unwrap_or(c_int::MAX);
            }
        }
        Ok(0)
    })
}

/// The number in `dest_team` of PE `src_pe` of `src_team`, or -1 if it is not a member (or
/// a team is `SHMEM_TEAM_INVALID`).
#[unsafe(no_mangle)]
pub extern "C" fn shmem_team_translate_pe(
    src_team: shmem_team_t,
    src_pe: c_int,
    dest_team: shmem_team_t,
) -> c_int {
    if is_invalid(src_team) || is_invalid(dest_team) || src_pe < 0 {
        return -1;
    }
    with_pe("shmem_team_translate_pe", |pe| {
        let (src, dest) = (pe.team(src_team)?, pe.team(dest_team)?);
        match pe.shmem.team_translate_pe(src, src_pe as u32, dest) {
            Ok(found) => Ok(found.map_or(-1, |n| n as c_int)),
            Err(ShmemError::PeNotInTeam { .. }) => Ok(-1),
            Err(err) => Err(err.into()),
        }
    })
}

/// Stores a handle for `team` (or `SHMEM_TEAM_INVALID` for none) in `*out`.
fn hand_out(pe: &Pe, team: Option<Team>, out: *mut shmem_team_t) -> Result<(), CallError> {
    if out.is_null() {
        return Err(CallError::Argument(
            "new_team is a null pointer; pass the address of a shmem_team_t".to_owned(),
        ));
    }
    let handle = team.map_or(predefined::TEAM_INVALID as shmem_team_t, |team| {
        pe.handles.add_team(team)
    });
    // SAFETY: the caller passes a writable shmem_team_t (checked non-null above).
    unsafe { out.write(handle) };
    Ok(())
}

/// What a split returns for the runtime's answer: 0, or 1 when the arguments describe no
/// valid team (every PE gets the same answer).
fn split_status<T>(made: Result<T, ShmemError>) -> Result<Option<T>, CallError> {
    match made {
        Ok(team) => Ok(Some(team)),
        Err(ShmemError::InvalidTeamSplit { .. } | ShmemError::TeamsExhausted { .. }) => Ok(None),
        Err(err) => Err(err.into()),
    }
}

/// Makes a team of the parent's PEs `start`, `start + stride`, ... (`size` of them);
/// collective over the parent.
///
/// # Safety
/// `config` is null or readable; `new_team` points to a writable `shmem_team_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_team_split_strided(
    parent_team: shmem_team_t,
    start: c_int,
    stride: c_int,
    size: c_int,
    config: *const shmem_team_config_t,
    config_mask: c_long,
    new_team: *mut shmem_team_t,
) -> c_int {
    with_pe("shmem_team_split_strided", |pe| {
        if is_invalid(parent_team) {
            hand_out(pe, None, new_team)?;
            return Ok(1);
        }
        let parent = pe.team(parent_team)?;
        let config = config_of(config, config_mask)?;
        let numbers = (
            u32::try_from(start),
            u32::try_from(stride),
            u32::try_from(size),
        );
        let (Ok(start), Ok(stride), Ok(size)) = numbers else {
            return Err(CallError::Argument(format!(
                "start {start}, stride {stride} and size {size} must not be negative"
            )));
        };
        let made = split_status(
            pe.shmem
                .team_split_strided(parent, start, stride, size, config),
        )?;
        let status = c_int::from(made.is_none());
        hand_out(pe, made.flatten(), new_team)?;
        Ok(status)
    })
}

/// Splits the parent into a 2-D grid of `xrange` columns: the row team and the column team
/// of this PE; collective over the parent.
///
/// # Safety
/// Configs are null or readable; the team pointers point to writable `shmem_team_t`s.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_team_split_2d(
    parent_team: shmem_team_t,
    xrange: c_int,
    xaxis_config: *const shmem_team_config_t,
    xaxis_mask: c_long,
    xaxis_team: *mut shmem_team_t,
    yaxis_config: *const shmem_team_config_t,
    yaxis_mask: c_long,
    yaxis_team: *mut shmem_team_t,
) -> c_int {
    with_pe("shmem_team_split_2d", |pe| {
        if is_invalid(parent_team) {
            hand_out(pe, None, xaxis_team)?;
            hand_out(pe, None, yaxis_team)?;
            return Ok(1);
        }
        let parent = pe.team(parent_team)?;
        let (x_config, y_config) = (
            config_of(xaxis_config, xaxis_mask)?,
            config_of(yaxis_config, yaxis_mask)?,
        );
        let xrange = u32::try_from(xrange)
            .map_err(|_| CallError::Argument(format!("xrange {xrange} must be positive")))?;
        let made = split_status(pe.shmem.team_split_2d(parent, xrange, x_config, y_config))?;
        let status = c_int::from(made.is_none());
        let (x, y) = made.map_or((None, None), |(x, y)| (Some(x), Some(y)));
        hand_out(pe, x, xaxis_team)?;
        hand_out(pe, y, yaxis_team)?;
        Ok(status)
    })
}

/// Destroys a team the program made; collective over the team. `SHMEM_TEAM_INVALID` does
/// nothing.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_team_destroy(team: shmem_team_t) {
    if is_invalid(team) {
        return;
    }
    with_pe("shmem_team_destroy", |pe| {
        if (team as usize) <= predefined::TEAM_NODE {
            // The runtime names the predefined team in its refusal.
            return Ok(pe.shmem.team_destroy(pe.team(team)?)?);
        }
        let owned = pe.handles.remove_team(team)?;
        Ok(pe.shmem.team_destroy(&owned)?)
    });
}

/// Where this process reaches PE `pe` (numbered in `team`)'s part of the symmetric object at
/// `dest` with loads and stores, or null.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_team_ptr(
    team: shmem_team_t,
    dest: *const c_void,
    pe: c_int,
) -> *mut c_void {
    if is_invalid(team) {
        return std::ptr::null_mut();
    }
    with_pe("shmem_team_ptr", |me| {
        let sym = me.sym(dest.cast::<u8>(), 1)?;
        let peer = me.shmem.team_ptr(me.team(team)?, sym, pe_number(pe)?)?;
        Ok(peer
            .and_then(|peer| peer.addr)
            .map_or(std::ptr::null_mut(), |addr| addr as *mut c_void))
    })
}
