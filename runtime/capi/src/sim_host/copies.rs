//! One loaded copy of the program per PE: each with its own globals, its own static data and
//! its own `main`, all in the host's process.
//!
//! How: the patched image (`image.rs`) is written to a memfd per PE and `dlopen`ed through
//! `/proc/self/fd/N` with `RTLD_LOCAL`. Each memfd is a file of its own, so the loader, which
//! recognises an object it already loaded by its file, maps a fresh copy every time; the
//! copies' references to `libshmem` and libc resolve to the ones the host already has.
//! The descriptors stay open for the run: a reused number would name a path the loader has
//! seen, and it would hand back the earlier copy.

use std::ffi::{CString, c_char, c_int};
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd};

use crate::sim_host::HostError;
use crate::sim_host::getopt::GetoptVars;
use crate::sim_host::image::Image;

/// A program's `main`, as the host calls it: "C-unwind", since the simulator unwinds a PE's
/// program out of it when it ends a run early (a time limit).
pub(crate) type Main =
    unsafe extern "C-unwind" fn(c_int, *const *const c_char, *const *const c_char) -> c_int;

/// One PE's copy of the program.
#[derive(Debug)]
pub(crate) struct Copy {
    /// Where the loader put the copy: image addresses are relative to it.
    pub(crate) base: usize,
    pub(crate) main: Main,
    /// The copy's writable data, which is the PE's static data.
    pub(crate) data: std::ops::Range<usize>,
    /// Where the copy keeps `getopt`'s variables.
    pub(crate) getopt: Option<GetoptVars>,
    /// What `dlopen` returned for the copy.
    handle: usize,
    /// Keeps the memfd's number taken (see the module docs).
    _file: File,
}

/// Loads `image` once for each of `n_pes` PEs.
///
/// # Errors
/// [`HostError::Load`] naming the PE whose copy the system refused, and why.
pub(crate) fn load(image: &Image, n_pes: u32) -> Result<Vec<Copy>, HostError> {
    (0..n_pes).map(|pe| load_one(image, pe)).collect()
}

fn load_one(image: &Image, pe: u32) -> Result<Copy, HostError> {
    let fail = |reason: String| HostError::Load { pe, reason };
    // SAFETY: memfd_create takes a NUL-terminated name and flags; it has no other
    // preconditions.
    let fd = unsafe { libc::memfd_create(c"rshmem-sim-pe".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(fail(format!(
            "memfd_create: {}",
            std::io::Error::last_os_error()
        )));
    }
    // SAFETY: `fd` is a new descriptor that nothing else owns.
    let mut file = unsafe { File::from_raw_fd(fd) };
    file.write_all(&image.bytes)
        .map_err(|e| fail(format!("writing the copy: {e}")))?;
    let path = CString::new(format!("/proc/self/fd/{}", file.as_raw_fd())).expect("no NUL");
    // SAFETY: the path names the image just written; loading it runs the program's own
    // constructors for this copy, as starting the program would.
    let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if handle.is_null() {
        return Err(fail(dl_error()));
    }
    let base = load_base(handle).ok_or_else(|| fail("the loader did not say where".into()))?;
    let data = hw::process::loaded_data_range(base)
        .ok_or_else(|| fail("the copy has no writable data segment".into()))?;
    let main_addr = base.wrapping_add(image.main_vaddr as usize);
    // SAFETY: `main_addr` is the copy's `main`, whose C signature is `Main` (a `main` of fewer
    // parameters ignores the extra arguments, as with the C runtime's own call).
    let main = unsafe { std::mem::transmute::<usize, Main>(main_addr) };
    Ok(Copy {
        base,
        main,
        data,
        getopt: GetoptVars::of(handle),
        handle: handle as usize,
        _file: file,
    })
}

impl Copy {
    /// The address at which the copy's program sees the global `name`: its own copy of it, if
    /// a copy relocation made one, else the definition first in the process's lookup order
    /// (what its GOT holds); 0 where none is found.
    pub(crate) fn program_symbol(&self, name: &std::ffi::CStr) -> usize {
        // SAFETY: dlsym takes a handle from dlopen or a pseudo-handle and a C string.
        let own = unsafe { libc::dlsym(self.handle as *mut libc::c_void, name.as_ptr()) } as usize;
        if (self.base..self.data.end).contains(&own) {
            return own;
        }
        // SAFETY: as above.
        unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) as usize }
    }
}

/// The load base of the object `handle` names.
fn load_base(handle: *mut libc::c_void) -> Option<usize> {
    let mut map: *mut libc::c_void = std::ptr::null_mut();
    // SAFETY: `handle` came from dlopen; RTLD_DI_LINKMAP writes a `struct link_map *`.
    let rc = unsafe { libc::dlinfo(handle, libc::RTLD_DI_LINKMAP, (&raw mut map).cast()) };
    if rc != 0 || map.is_null() {
        return None;
    }
    // SAFETY: a `struct link_map` starts with `l_addr`, the load base (link.h).
    Some(unsafe { *map.cast::<usize>() })
}

/// The loader's last error.
fn dl_error() -> String {
    // SAFETY: dlerror returns null or a NUL-terminated string valid until the next dl call.
    let text = unsafe { libc::dlerror() };
    if text.is_null() {
        return "dlopen failed without saying why".into();
    }
    // SAFETY: non-null, NUL-terminated (above).
    unsafe { std::ffi::CStr::from_ptr(text) }
        .to_string_lossy()
        .into_owned()
}
