//! Communication contexts: `shmem_ctx_create`, `shmem_team_create_ctx`, `shmem_ctx_destroy`,
//! `shmem_ctx_get_team`, and the 1.6 session hints.
//!
//! A context is the runtime's [`rshmem::Ctx`], boxed behind a handle (`handles.rs`). Creating
//! one can fail for lack of resources; as the specification asks, that is a non-zero return
//! and `SHMEM_CTX_INVALID` in `*ctx`, not the end of the job.

use std::ffi::{c_int, c_long};

use rshmem::{CtxOptions, ShmemError};

use crate::fail::CallError;
use crate::handles::{predefined, shmem_ctx_t, shmem_team_t};
use crate::state::{Pe, with_pe};

/// `SHMEM_CTX_SERIALIZED`.
pub const CTX_SERIALIZED: c_long = 1;
/// `SHMEM_CTX_PRIVATE`.
pub const CTX_PRIVATE: c_long = 1 << 1;
/// `SHMEM_CTX_NOSTORE`.
pub const CTX_NOSTORE: c_long = 1 << 2;

/// The runtime's options for the C option bits `options`.
fn options_of(options: c_long) -> Result<CtxOptions, CallError> {
    if options & !(CTX_SERIALIZED | CTX_PRIVATE | CTX_NOSTORE) != 0 {
        return Err(CallError::Argument(format!(
            "unknown context options {options:#x}; pass 0 or a combination of \
             SHMEM_CTX_SERIALIZED, SHMEM_CTX_PRIVATE and SHMEM_CTX_NOSTORE"
        )));
    }
    let mut made = CtxOptions::default();
    for (bit, option) in [
        (CTX_SERIALIZED, CtxOptions::SERIALIZED),
        (CTX_PRIVATE, CtxOptions::PRIVATE),
        (CTX_NOSTORE, CtxOptions::NOSTORE),
    ] {
        if options & bit != 0 {
            made = made.with(option);
        }
    }
    Ok(made)
}

/// Creates a context on `team` and stores its handle in `*ctx`: 0 on success, else 1 and
/// `SHMEM_CTX_INVALID` when the team has no contexts left or is `SHMEM_TEAM_INVALID`.
fn create(
    pe: &Pe,
    team: shmem_team_t,
    options: c_long,
    ctx: *mut shmem_ctx_t,
) -> Result<c_int, CallError> {
    let options = options_of(options)?;
    if ctx.is_null() {
        return Err(CallError::Argument(
            "ctx is a null pointer; pass the address of a shmem_ctx_t".to_owned(),
        ));
    }
    if team as usize == predefined::TEAM_INVALID {
        // SAFETY: the caller passes a writable shmem_ctx_t (checked non-null above).
        unsafe { ctx.write(predefined::CTX_INVALID as shmem_ctx_t) };
        return Ok(1);
    }
    let team = pe.team(team)?;
    let (handle, status) = match pe.shmem.team_create_ctx(team, options) {
        Ok(made) => (pe.handles.add_ctx(made), 0),
        Err(ShmemError::ContextsExhausted { .. }) => (predefined::CTX_INVALID as shmem_ctx_t, 1),
        Err(err) => return Err(err.into()),
    };
    // SAFETY: the caller passes a writable shmem_ctx_t (checked non-null above).
    unsafe { ctx.write(handle) };
    Ok(status)
}

/// Creates a context on the world team (`shmem_ctx_create`).
///
/// # Safety
/// `ctx` points to a writable `shmem_ctx_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_ctx_create(options: c_long, ctx: *mut shmem_ctx_t) -> c_int {
    with_pe("shmem_ctx_create", |pe| {
        create(pe, predefined::TEAM_WORLD as shmem_team_t, options, ctx)
    })
}

/// Creates a context on `team` (`shmem_team_create_ctx`).
///
/// # Safety
/// `ctx` points to a writable `shmem_ctx_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_team_create_ctx(
    team: shmem_team_t,
    options: c_long,
    ctx: *mut shmem_ctx_t,
) -> c_int {
    with_pe("shmem_team_create_ctx", |pe| create(pe, team, options, ctx))
}

/// Completes and destroys a context; `SHMEM_CTX_INVALID` does nothing.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_ctx_destroy(ctx: shmem_ctx_t) {
    with_pe("shmem_ctx_destroy", |pe| {
        match ctx as usize {
            predefined::CTX_INVALID => return Ok(()),
            predefined::CTX_DEFAULT => {
                return Err(CallError::Argument(
                    "SHMEM_CTX_DEFAULT cannot be destroyed; destroy only contexts that \
                     shmem_ctx_create made"
                        .to_owned(),
                ));
            }
            _ => {}
        }
        let owned = pe.handles.remove_ctx(ctx)?;
        Ok(pe.shmem.ctx_destroy(owned)?)
    });
}

/// Stores the team `ctx` was created on in `*team`: 0, or non-zero and
/// `SHMEM_TEAM_INVALID` for `SHMEM_CTX_INVALID`.
///
/// # Safety
/// `team` points to a writable `shmem_team_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_ctx_get_team(ctx: shmem_ctx_t, team: *mut shmem_team_t) -> c_int {
    with_pe("shmem_ctx_get_team", |pe| {
        let (handle, status) = if ctx as usize == predefined::CTX_INVALID {
            (predefined::TEAM_INVALID as shmem_team_t, 1)
        } else {
            let on = pe.ctx(ctx)?.team();
            (pe.handles.handle_of(&pe.shmem, on), 0)
        };
        if !team.is_null() {
            // SAFETY: the caller passes a writable shmem_team_t.
            unsafe { team.write(handle) };
        }
        Ok(status)
    })
}

/// Hint that a run of operations on `ctx` starts (`options`, `config` and `config_mask`
/// describe it); checks the handle. The runtime has no use for the hint: it batches nothing.
/// `SHMEM_CTX_INVALID` does nothing, as the specification asks.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_ctx_session_start(
    ctx: shmem_ctx_t,
    options: c_long,
    config: *const std::ffi::c_void,
    config_mask: c_long,
) {
    let _ = (options, config, config_mask);
    if ctx as usize == predefined::CTX_INVALID {
        return;
    }
    with_pe("shmem_ctx_session_start", |pe| pe.ctx(ctx).map(|_| ()));
}

/// Hint that a run of operations on `ctx` ends; checks the handle.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_ctx_session_stop(ctx: shmem_ctx_t) {
    if ctx as usize == predefined::CTX_INVALID {
        return;
    }
    with_pe("shmem_ctx_session_stop", |pe| pe.ctx(ctx).map(|_| ()));
}
