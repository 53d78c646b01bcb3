//! Library setup, queries and the ordering calls of the default context: `shmem_init` and
//! friends, `shmem_my_pe`, `shmem_n_pes`, `shmem_global_exit`, `shmem_info_*`,
//! `shmem_pe_accessible`, `shmem_barrier_all`, `shmem_sync_all`, `shmem_fence`,
//! `shmem_quiet`, `shmem_pe_quiet`, and the names older programs use (`start_pes`, `_my_pe`,
//! `_num_pes`).

use std::ffi::{c_char, c_int};
use std::io::Write;

use crate::fail::CallError;
use crate::handles::{predefined, shmem_ctx_t};
use crate::state::{self, thread_level, with_pe};

/// A PE number from C, checked to be non-negative (the runtime checks the upper bound).
pub(crate) fn pe_number(pe: c_int) -> Result<u32, CallError> {
    u32::try_from(pe).map_err(|_| {
        CallError::Argument(format!(
            "PE {pe} is negative; pass a PE number from 0 to shmem_n_pes() - 1"
        ))
    })
}

/// Sets the library up; collective over every PE of the job.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_init() {
    state::init("shmem_init", thread_level::SINGLE);
}

/// Sets the library up at thread level `requested` and stores the level granted in
/// `*provided` (if not null); returns 0.
///
/// # Safety
/// `provided` is null or points to a writable `int`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_init_thread(requested: c_int, provided: *mut c_int) -> c_int {
    let level = state::init("shmem_init_thread", requested);
    if !provided.is_null() {
        // SAFETY: the caller passes a writable int or null.
        unsafe { provided.write(level) };
    }
    0
}

/// Stores the thread level granted in `*provided`.
///
/// # Safety
/// `provided` points to a writable `int`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_query_thread(provided: *mut c_int) {
    let level = with_pe("shmem_query_thread", |pe| Ok(pe.thread_level));
    if !provided.is_null() {
        // SAFETY: the caller passes a writable int.
        unsafe { provided.write(level) };
    }
}

/// Stores 1 in `*initialized` if the library is initialised and not finalised, else 0.
///
/// # Safety
/// `initialized` points to a writable `int`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_query_initialized(initialized: *mut c_int) {
    if !initialized.is_null() {
        // SAFETY: the caller passes a writable int.
        unsafe { initialized.write(c_int::from(state::is_running())) };
    }
}

/// Stores 1 in `*finalized` if the library was finalised, else 0.
///
/// # Safety
/// `finalized` points to a writable `int`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_query_finalized(finalized: *mut c_int) {
    if !finalized.is_null() {
        // SAFETY: the caller passes a writable int.
        unsafe { finalized.write(c_int::from(state::is_finalized())) };
    }
}

/// Completes this PE's operations and waits for every PE; collective.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_finalize() {
    state::finalize("shmem_finalize");
}

/// Ends every PE of the job with `status`.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_global_exit(status: c_int) -> ! {
    // Why flush: the other PEs are ended from outside, and what this one printed should
    // not be lost with it.
    let _ = std::io::stdout().flush();
    crate::sim_host::global_exit_if_simulated(status);
    state::global_exit(status)
}

/// This PE's number.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_my_pe() -> c_int {
    with_pe("shmem_my_pe", |pe| Ok(pe.shmem.my_pe() as c_int))
}

/// The number of PEs of the job.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_n_pes() -> c_int {
    with_pe("shmem_n_pes", |pe| Ok(pe.shmem.n_pes() as c_int))
}

/// 1 if PE `pe` can be reached, else 0.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_pe_accessible(pe: c_int) -> c_int {
    with_pe("shmem_pe_accessible", |me| {
        Ok(u32::try_from(pe).map_or(0, |pe| c_int::from(me.shmem.pe_accessible(pe))))
    })
}

/// The version of the OpenSHMEM specification the library implements.
///
/// # Safety
/// `major` and `minor` point to writable `int`s.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_info_get_version(major: *mut c_int, minor: *mut c_int) {
    let (spec_major, spec_minor) = rshmem::info_get_version();
    // SAFETY: the caller passes writable ints.
    unsafe {
        major.write(spec_major as c_int);
        minor.write(spec_minor as c_int);
    }
}

/// Copies the vendor's name, NUL-terminated, into `name` (at least
/// `SHMEM_MAX_NAME_LEN` bytes).
///
/// # Safety
/// `name` points to `SHMEM_MAX_NAME_LEN` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_info_get_name(name: *mut c_char) {
    let text = rshmem::info_get_name();
    let bytes = &text.as_bytes()[..text.len().min(crate::MAX_NAME_LEN - 1)];
    // SAFETY: the caller passes MAX_NAME_LEN writable bytes, and at most MAX_NAME_LEN - 1
    // are written before the NUL.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), name.cast::<u8>(), bytes.len());
        name.add(bytes.len()).write(0);
    }
}

/// Waits until every PE arrives, after completing this PE's operations; collective.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_barrier_all() {
    with_pe("shmem_barrier_all", |pe| Ok(pe.shmem.barrier_all()?));
}

/// Waits until every PE arrives, completing nothing; collective.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_sync_all() {
    with_pe("shmem_sync_all", |pe| Ok(pe.shmem.sync_all()?));
}

/// Orders the delivery of the default context's operations to each PE.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_fence() {
    with_pe("shmem_fence", |pe| Ok(pe.shmem.fence()?));
}

/// Completes the default context's operations.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_quiet() {
    with_pe("shmem_quiet", |pe| Ok(pe.shmem.quiet()?));
}

/// Whether `ctx` is `SHMEM_CTX_INVALID`, on which fence and quiet do nothing: a PE outside a
/// team gets that handle from `shmem_team_create_ctx`, and the specification's own example of
/// `shmem_team_create_ctx` then quiets it on every PE like any other context, so a quiet of
/// it must be harmless (as `shmem_ctx_destroy` of it is). RMA and atomics on it stay refused:
/// the example guards them, and the text leaves them undefined.
fn no_context(ctx: shmem_ctx_t) -> bool {
    ctx as usize == predefined::CTX_INVALID
}

/// Orders the delivery of `ctx`'s operations to each PE; `SHMEM_CTX_INVALID` does nothing.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_ctx_fence(ctx: shmem_ctx_t) {
    if no_context(ctx) {
        return;
    }
    with_pe("shmem_ctx_fence", |pe| Ok(pe.ctx(ctx)?.fence()?));
}

/// Completes `ctx`'s operations; `SHMEM_CTX_INVALID` does nothing.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_ctx_quiet(ctx: shmem_ctx_t) {
    if no_context(ctx) {
        return;
    }
    with_pe("shmem_ctx_quiet", |pe| Ok(pe.ctx(ctx)?.quiet()?));
}

/// Completes `ctx`'s operations to the `npes` PEs of `target_pes`.
///
/// # Safety
/// `target_pes` points to `npes` readable `int`s.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_ctx_pe_quiet(
    ctx: shmem_ctx_t,
    target_pes: *const c_int,
    npes: usize,
) {
    if no_context(ctx) {
        return;
    }
    with_pe("shmem_ctx_pe_quiet", |pe| {
        let count = npes;
        let pes: &[c_int] = if count == 0 || target_pes.is_null() {
            &[]
        } else {
            // SAFETY: the caller passes npes readable ints.
            unsafe { std::slice::from_raw_parts(target_pes, count) }
        };
        let pes = pes
            .iter()
            .map(|&p| pe_number(p))
            .collect::<Result<Vec<u32>, _>>()?;
        Ok(pe.ctx(ctx)?.pe_quiet(&pes)?)
    });
}

/// [`shmem_ctx_pe_quiet`] on the default context.
///
/// # Safety
/// As [`shmem_ctx_pe_quiet`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_pe_quiet(target_pes: *const c_int, npes: usize) {
    // SAFETY: the caller keeps shmem_ctx_pe_quiet's contract.
    unsafe { shmem_ctx_pe_quiet(std::ptr::null_mut(), target_pes, npes) }
}

/// Deprecated setup call of OpenSHMEM 1.0; `npes` is ignored, as it always was.
#[unsafe(no_mangle)]
pub extern "C" fn start_pes(npes: c_int) {
    let _ = npes;
    state::init("start_pes", thread_level::SINGLE);
}

/// Deprecated name of [`shmem_my_pe`].
#[unsafe(no_mangle)]
pub extern "C" fn _my_pe() -> c_int {
    shmem_my_pe()
}

/// Deprecated name of [`shmem_n_pes`].
#[unsafe(no_mangle)]
pub extern "C" fn _num_pes() -> c_int {
    shmem_n_pes()
}

/// The cache-management calls of OpenSHMEM 1.0, deprecated since 1.3: there is no cache to
/// manage (every remote update is visible to the program's loads once its ordering rules say
/// so), so each does nothing, as the specification allows.
macro_rules! no_cache_to_manage {
    ($($name:ident($($arg:ident: $ty:ty),*);)*) => {$(
        #[doc = concat!("Deprecated `", stringify!($name), "`: nothing to do.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $name($($arg: $ty),*) {
            let _ = ($($arg,)*);
        }
    )*};
}

no_cache_to_manage! {
    shmem_clear_cache_inv();
    shmem_set_cache_inv();
    shmem_clear_cache_line_inv(dest: *mut std::ffi::c_void);
    shmem_set_cache_line_inv(dest: *mut std::ffi::c_void);
    shmem_udcflush();
    shmem_udcflush_line(dest: *mut std::ffi::c_void);
}

/// Profiling control (`shmem_pcontrol`): rshmem has no profiling interface to control, so
/// every level is accepted and ignored, as the specification allows.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_pcontrol(level: c_int) {
    let _ = level;
}
