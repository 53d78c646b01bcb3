//! Teams: `shmem_team_my_pe`, `n_pes`, `get_config`, `translate_pe`, `split_strided`,
//! `split_2d`, `destroy` and `shmem_team_ptr`.
//!
//! A team is the runtime's [`rshmem::Team`], boxed behind a handle (`handles.rs`). The
//! queries return -1 for `SHMEM_TEAM_INVALID` as the specification asks; a split that cannot
//! make its team (an invalid triplet, no free slot) returns non-zero with
//! `SHMEM_TEAM_INVALID`, on every PE alike (the runtime agrees on the arguments first); other
//! misuse ends the job.

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

/// A split's configuration: what the runtime is asked for, and what `shmem_team_get_config`
/// reports afterwards.
#[derive(Clone, Copy)]
struct Asked {
    runtime: TeamConfig,
    /// `num_contexts` as the team was configured: the value passed under
    /// `SHMEM_TEAM_NUM_CONTEXTS`, else the default, 0 (OpenSHMEM 1.5 section 9.4.3).
    num_contexts: c_int,
}

/// The configuration of a split for a C configuration and mask. Why the runtime keeps its own
/// default when the mask leaves `num_contexts` out: the text's 0 reserves nothing, and
/// contexts beyond a reservation are the library's best effort, which may succeed.
fn config_of(config: *const shmem_team_config_t, mask: c_long) -> Result<Asked, CallError> {
    if mask & TEAM_NUM_CONTEXTS == 0 {
        return Ok(Asked {
            runtime: TeamConfig::default(),
            num_contexts: 0,
        });
    }
    if config.is_null() {
        return Err(CallError::Argument(
            "config is a null pointer but config_mask has SHMEM_TEAM_NUM_CONTEXTS; pass a \
             shmem_team_config_t or a mask of 0"
                .to_owned(),
        ));
    }
    // SAFETY: a non-null config points to a readable shmem_team_config_t.
    let wanted = unsafe { config.read() }.num_contexts;
    let num_contexts = u32::try_from(wanted).map_err(|_| {
        CallError::Argument(format!("num_contexts {wanted} is negative; pass 0 or more"))
    })?;
    Ok(Asked {
        runtime: TeamConfig { num_contexts },
        num_contexts: wanted,
    })
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

/// Stores `team`'s configuration, the fields `config_mask` names, in `*config`: 0, or
/// non-zero for `SHMEM_TEAM_INVALID` (OpenSHMEM 1.5 section 9.4.4). A team the program split
/// reports the `num_contexts` it was configured with (0 when its split's mask left it out);
/// a predefined team, which no program configured, the library's limit of contexts on it at
/// once (`RSHMEM_CONTEXTS_MAX`; on the world team the default context is one of them).
///
/// # Safety
/// `config` points to a writable `shmem_team_config_t`, or `config_mask` is 0.
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
        let runtime_team = pe.team(team)?;
        if config_mask & TEAM_NUM_CONTEXTS == 0 {
            return Ok(0);
        }
        if config.is_null() {
            return Err(CallError::Argument(
                "config is a null pointer but config_mask has SHMEM_TEAM_NUM_CONTEXTS; pass a \
                 shmem_team_config_t to fill, or a mask of 0"
                    .to_owned(),
            ));
        }
        let num_contexts = match pe.handles.team_num_contexts(team)? {
            Some(asked) => asked,
            None => c_int::try_from(runtime_team.config()?.num_contexts).unwrap_or(c_int::MAX),
        };
        // SAFETY: the caller passes a writable shmem_team_config_t (checked non-null above).
        unsafe { (*config).num_contexts = num_contexts };
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
            // A src_pe outside src_team is not in both teams: -1 (OpenSHMEM 1.5 section 9.4.5).
            Err(ShmemError::PeNotInTeam { .. } | ShmemError::PeOutOfRange { .. }) => Ok(-1),
            Err(err) => Err(err.into()),
        }
    })
}

/// Stores a handle for `team` (or `SHMEM_TEAM_INVALID` for none), configured with
/// `num_contexts`, in `*out`.
fn hand_out(
    pe: &Pe,
    team: Option<Team>,
    num_contexts: c_int,
    out: *mut shmem_team_t,
) -> Result<(), CallError> {
    if out.is_null() {
        return Err(CallError::Argument(
            "new_team is a null pointer; pass the address of a shmem_team_t".to_owned(),
        ));
    }
    let handle = team.map_or(predefined::TEAM_INVALID as shmem_team_t, |team| {
        pe.handles.add_team(team, num_contexts)
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
            hand_out(pe, None, 0, new_team)?;
            return Ok(1);
        }
        let parent = pe.team(parent_team)?;
        let asked = config_of(config, config_mask)?;
        // A negative start or size is an invalid triplet: SHMEM_TEAM_INVALID and non-zero on
        // every PE, which all pass the same triplet (OpenSHMEM 1.5 section 9.4.6). A negative
        // stride is valid: the new team lists its PEs downwards from start.
        let (Ok(start), Ok(size)) = (u32::try_from(start), u32::try_from(size)) else {
            hand_out(pe, None, 0, new_team)?;
            return Ok(1);
        };
        let made =
            split_status(
                pe.shmem
                    .team_split_strided(parent, start, stride, size, asked.runtime),
            )?;
        let status = c_int::from(made.is_none());
        hand_out(pe, made.flatten(), asked.num_contexts, new_team)?;
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
        let invalid = |pe: &Pe| -> Result<c_int, CallError> {
            hand_out(pe, None, 0, xaxis_team)?;
            hand_out(pe, None, 0, yaxis_team)?;
            Ok(1)
        };
        // A negative xrange, like 0, describes no grid: both teams invalid, non-zero on every
        // PE (OpenSHMEM 1.5 section 9.4.7).
        let (false, Ok(xrange)) = (is_invalid(parent_team), u32::try_from(xrange)) else {
            return invalid(pe);
        };
        let parent = pe.team(parent_team)?;
        let (x_asked, y_asked) = (
            config_of(xaxis_config, xaxis_mask)?,
            config_of(yaxis_config, yaxis_mask)?,
        );
        let made =
            split_status(
                pe.shmem
                    .team_split_2d(parent, xrange, x_asked.runtime, y_asked.runtime),
            )?;
        let status = c_int::from(made.is_none());
        let (x, y) = made.map_or((None, None), |(x, y)| (Some(x), Some(y)));
        hand_out(pe, x, x_asked.num_contexts, xaxis_team)?;
        hand_out(pe, y, y_asked.num_contexts, yaxis_team)?;
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
