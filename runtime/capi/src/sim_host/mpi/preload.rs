//! Putting the MPI shim first in a simulated program's lookup order.
//!
//! A program built against Open MPI links `libmpi.so.40`, whose `MPI_*` functions and
//! `ompi_mpi_*` objects the loader binds it to. The copies the host loads per PE bind to what
//! the process's lookup order finds first, so the shim, which `libshmem` carries in its
//! image (`build_mpi_shim.rs`), must come before Open MPI there: only `LD_PRELOAD` puts a
//! library before an executable's own dependencies. So when the host finds `libmpi.so.40`
//! loaded and the shim absent, it writes the shim to a memfd and starts the program again
//! with `LD_PRELOAD` naming it, the run's request restored. In the new process it puts
//! `LD_PRELOAD` back as it was, so that what the PEs start does not inherit the shim.
//! `dlsym(RTLD_DEFAULT, "MPI_Comm_rank")` from `libshmem` then finds the served function too.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::os::fd::{FromRawFd, IntoRawFd};

use crate::sim_host::HostError;

/// The shim, built with `libshmem` (empty if no C compiler was at hand).
static SHIM: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libshmem_mpi_shim.so"));

/// The descriptor of the shim's memfd in the restarted process.
const FD_VAR: &str = "RSHMEM_SIM_MPI_SHIM_FD";
/// `LD_PRELOAD` before the restart, if it was set.
const PRELOAD_WAS_VAR: &str = "RSHMEM_SIM_LD_PRELOAD_WAS";

/// Makes sure the shim serves the program's MPI calls: returns where it does or where the
/// program has no MPI, else restarts the program (`request`, `argv`) with the shim first.
///
/// # Errors
/// [`HostError::Image`] for an MPI library other than Open MPI 4's, a library built without
/// the shim, or a restart the system refused.
pub(crate) fn ensure_shim(
    request: &std::ffi::OsStr,
    argv: *const *const c_char,
) -> Result<(), HostError> {
    let fail = |reason: String| HostError::Image {
        path: "the program".into(),
        reason,
    };
    // SAFETY: dlsym takes a pseudo-handle and a C string.
    if !unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"rshmem_sim_mpi_shim".as_ptr()) }.is_null() {
        restore_environment();
        return Ok(());
    }
    let Some(mpi) = loaded_mpi() else {
        return Ok(());
    };
    if mpi != "libmpi.so.40" {
        return Err(fail(format!(
            "it links {mpi}, and the simulator serves MPI to programs built against Open MPI \
             4 (libmpi.so.40) only; build it with Open MPI's mpicc"
        )));
    }
    if SHIM.is_empty() {
        return Err(fail(
            "it uses MPI, and this libshmem was built without its MPI shim (no C compiler at \
             build time); rebuild libshmem with a C compiler on the PATH"
                .into(),
        ));
    }
    let fd = shim_memfd().map_err(|e| fail(format!("writing the MPI shim to a memfd: {e}")))?;
    let was = std::env::var_os("LD_PRELOAD");
    let mut preload = std::ffi::OsString::from(format!("/proc/self/fd/{fd}"));
    if let Some(was) = &was {
        preload.push(":");
        preload.push(was);
    }
    // SAFETY: constructors run before the program could start a thread, so nothing reads the
    // environment concurrently.
    unsafe {
        std::env::set_var(FD_VAR, fd.to_string());
        if let Some(was) = &was {
            std::env::set_var(PRELOAD_WAS_VAR, was);
        }
        std::env::set_var("LD_PRELOAD", preload);
        std::env::set_var(super::super::REQUEST_VAR, request);
    }
    // SAFETY: `argv` is the program's own, NUL-terminated array; execv returns only on failure.
    unsafe { libc::execv(c"/proc/self/exe".as_ptr(), argv) };
    Err(fail(format!(
        "starting it again with the MPI shim: {}",
        std::io::Error::last_os_error()
    )))
}

/// The shim in a memfd the restarted process inherits; its descriptor.
fn shim_memfd() -> std::io::Result<c_int> {
    // SAFETY: memfd_create takes a NUL-terminated name and flags. No MFD_CLOEXEC: the
    // restarted process's loader opens it.
    let fd = unsafe { libc::memfd_create(c"libshmem_mpi_shim.so".as_ptr(), 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` is a new descriptor that nothing else owns.
    let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
    std::io::Write::write_all(&mut file, SHIM)?;
    Ok(file.into_raw_fd())
}

/// In the restarted process: `LD_PRELOAD` as it was, and the memfd kept from what the PEs
/// start.
fn restore_environment() {
    let fd = std::env::var(FD_VAR)
        .ok()
        .and_then(|fd| fd.parse::<c_int>().ok());
    let was = std::env::var_os(PRELOAD_WAS_VAR);
    // SAFETY: constructors run before the program could start a thread.
    unsafe {
        std::env::remove_var(FD_VAR);
        std::env::remove_var(PRELOAD_WAS_VAR);
        match was {
            Some(was) => std::env::set_var("LD_PRELOAD", was),
            None => std::env::remove_var("LD_PRELOAD"),
        }
    }
    if let Some(fd) = fd {
        // Why not closed: the loader knows the shim by its path, `/proc/self/fd/N`, and would
        // take a copy of the program that `copies.rs` loads through a reused N for the shim.
        // SAFETY: the descriptor this module opened before the restart; only its flags change.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
}

/// The file name of the MPI library the process loaded (`libmpi.so.40`), if any.
fn loaded_mpi() -> Option<String> {
    let mut found: Option<String> = None;
    // SAFETY: the callback only reads the loader's entries for the duration of the call and
    // writes `found`, which outlives it.
    unsafe { libc::dl_iterate_phdr(Some(note_mpi), (&raw mut found).cast()) };
    found
}

unsafe extern "C" fn note_mpi(
    info: *mut libc::dl_phdr_info,
    _size: usize,
    data: *mut c_void,
) -> c_int {
    // SAFETY: the loader passes a valid entry; `data` is `loaded_mpi`'s `found`.
    let (info, found) = unsafe { (&*info, &mut *data.cast::<Option<String>>()) };
    if info.dlpi_name.is_null() {
        return 0;
    }
    // SAFETY: a non-null name is NUL-terminated.
    let path = unsafe { CStr::from_ptr(info.dlpi_name) }.to_string_lossy();
    let file = path.rsplit('/').next().unwrap_or_default();
    if file.starts_with("libmpi.so.") {
        *found = Some(file.to_owned());
        return 1;
    }
    0
}
