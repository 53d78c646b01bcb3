//! `getopt` for the simulator's copies of a program.
//!
//! Why: an executable reaches libc's `optind`, `optarg`, `opterr` and `optopt` through copy
//! relocations, its own copies of them, and libc's `getopt` updates the copies of the one
//! executable it was bound to (the original program, first in the lookup order). Each PE's
//! loaded copy has copies of its own that libc never sees, so `while ((c = getopt(...)) !=
//! -1)` would read a stale `optarg` and never advance. `libshmem` therefore defines
//! `getopt`, `getopt_long` and `getopt_long_only` (programs linked with it bind to them
//! first): on the simulator each call copies the running PE's variables into libc's, calls
//! libc's function, and copies them back; elsewhere it only calls libc's.
//!
//! A PE's first call sets `optind` to 0 for libc, which makes glibc start a new scan: the PEs
//! parse the same arguments one after another, and glibc keeps scanning state between calls.
//! A program with no copies of its own (clang's position-independent code reaches libc's
//! variables through the GOT, as `rshmem-nvcc` builds) shares libc's: each PE's values are then
//! kept between its calls and put back before the next.

use std::cell::Cell;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::OnceLock;

use crate::fail::{CallError, fail};
use crate::state;

/// Where one program copy (or libc) keeps `getopt`'s variables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GetoptVars {
    optind: *mut c_int,
    opterr: *mut c_int,
    optopt: *mut c_int,
    optarg: *mut *mut c_char,
}

// SAFETY: the pointers are addresses of variables that live as long as the process; only
// the one thread that runs a simulated run's PEs reads or writes through them.
unsafe impl Send for GetoptVars {}
// SAFETY: as for Send.
unsafe impl Sync for GetoptVars {}

/// A PE's `getopt` variables, set by the host before the PE starts.
#[derive(Debug)]
pub(crate) struct PeGetopt {
    vars: Cell<Option<GetoptVars>>,
    started: Cell<bool>,
    /// `optind`, `optopt` and `optarg` between this PE's calls when its program has no copies
    /// of its own and reaches libc's (code that takes them through the GOT, as clang's
    /// position-independent code does): one PE's calls must not resume another's scan.
    kept: Cell<(c_int, c_int, *mut c_char)>,
}

impl PeGetopt {
    /// No variables: a PE that is not simulated.
    pub(crate) const fn new() -> PeGetopt {
        PeGetopt {
            vars: Cell::new(None),
            started: Cell::new(false),
            kept: Cell::new((1, 0, std::ptr::null_mut())),
        }
    }

    /// This PE runs the copy whose variables are `vars`.
    pub(crate) fn set(&self, vars: GetoptVars) {
        self.vars.set(Some(vars));
    }
}

impl GetoptVars {
    /// The variables the object `handle` names (a loaded copy, or `RTLD_DEFAULT` for those
    /// libc uses) finds first; `None` if one is missing.
    pub(crate) fn of(handle: *mut c_void) -> Option<GetoptVars> {
        let find = |name: &CStr| {
            // SAFETY: dlsym takes a handle from dlopen or a pseudo-handle and a C string.
            let at = unsafe { libc::dlsym(handle, name.as_ptr()) };
            (!at.is_null()).then_some(at)
        };
        Some(GetoptVars {
            optind: find(c"optind")?.cast(),
            opterr: find(c"opterr")?.cast(),
            optopt: find(c"optopt")?.cast(),
            optarg: find(c"optarg")?.cast(),
        })
    }
}

/// libc's own variables, which its `getopt` updates.
fn libc_vars() -> Option<GetoptVars> {
    static VARS: OnceLock<Option<(usize, usize, usize, usize)>> = OnceLock::new();
    // Kept as addresses: raw pointers are not Sync.
    let found = VARS.get_or_init(|| {
        GetoptVars::of(libc::RTLD_DEFAULT).map(|v| {
            (
                v.optind as usize,
                v.opterr as usize,
                v.optopt as usize,
                v.optarg as usize,
            )
        })
    });
    found.map(|(optind, opterr, optopt, optarg)| GetoptVars {
        optind: optind as *mut c_int,
        opterr: opterr as *mut c_int,
        optopt: optopt as *mut c_int,
        optarg: optarg as *mut *mut c_char,
    })
}

/// libc's function `name` (the next definition after this library's), never null: a libc
/// without it ends the process with a message rather than call through null.
pub(crate) fn real(name: &CStr, slot: &OnceLock<usize>) -> usize {
    *slot.get_or_init(|| {
        // SAFETY: RTLD_NEXT and a C string; the result is checked just below.
        let found = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) as usize };
        if found == 0 {
            let err = CallError::Internal(format!("libc has no {}", name.to_string_lossy()));
            fail(&name.to_string_lossy(), None, &err);
        }
        found
    })
}

/// Runs libc's `call` with the running PE's variables, if a simulated PE runs.
fn around(call: impl FnOnce() -> c_int) -> c_int {
    let pe = state::running_getopt();
    let (Some(pe), Some(theirs)) = (pe, libc_vars()) else {
        return call();
    };
    let first = !pe.started.replace(true);
    let Some(mine) = pe.vars.get().filter(|mine| *mine != theirs) else {
        // SAFETY: libc's variables live as long as the process; one thread runs every
        // simulated PE.
        return unsafe {
            let (optind, optopt, optarg) = pe.kept.get();
            *theirs.optind = if first { 0 } else { optind };
            *theirs.optopt = optopt;
            *theirs.optarg = optarg;
            let result = call();
            pe.kept
                .set((*theirs.optind, *theirs.optopt, *theirs.optarg));
            result
        };
    };
    // SAFETY: both sets of pointers come from the loader: the running copy's variables and
    // libc's, valid for the life of the process; one thread runs every simulated PE.
    unsafe {
        *theirs.optind = if first && *mine.optind == 1 {
            0
        } else {
            *mine.optind
        };
        *theirs.opterr = *mine.opterr;
        let result = call();
        *mine.optind = *theirs.optind;
        *mine.optarg = *theirs.optarg;
        *mine.optopt = *theirs.optopt;
        result
    }
}

type Getopt = unsafe extern "C" fn(c_int, *const *mut c_char, *const c_char) -> c_int;
type GetoptLong = unsafe extern "C" fn(
    c_int,
    *const *mut c_char,
    *const c_char,
    *const c_void,
    *mut c_int,
) -> c_int;

/// `getopt(3)`, with the simulated PE's variables.
///
/// # Safety
/// As libc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn getopt(
    argc: c_int,
    argv: *const *mut c_char,
    optstring: *const c_char,
) -> c_int {
    static REAL: OnceLock<usize> = OnceLock::new();
    // SAFETY: libc's getopt has this signature.
    let real = unsafe { std::mem::transmute::<usize, Getopt>(real(c"getopt", &REAL)) };
    // SAFETY: the caller's arguments, passed on.
    around(|| unsafe { real(argc, argv, optstring) })
}

/// The long forms, which differ from each other only in libc's function `name`.
///
/// # Safety
/// As libc's `getopt_long`.
unsafe fn long_form(
    name: &CStr,
    slot: &OnceLock<usize>,
    (argc, argv, optstring): (c_int, *const *mut c_char, *const c_char),
    longopts: *const c_void,
    longindex: *mut c_int,
) -> c_int {
    // SAFETY: libc's getopt_long and getopt_long_only have this signature.
    let real = unsafe { std::mem::transmute::<usize, GetoptLong>(real(name, slot)) };
    // SAFETY: the caller's arguments, passed on.
    around(|| unsafe { real(argc, argv, optstring, longopts, longindex) })
}

/// `getopt_long(3)`, with the simulated PE's variables.
///
/// # Safety
/// As libc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn getopt_long(
    argc: c_int,
    argv: *const *mut c_char,
    optstring: *const c_char,
    longopts: *const c_void,
    longindex: *mut c_int,
) -> c_int {
    static REAL: OnceLock<usize> = OnceLock::new();
    let short = (argc, argv, optstring);
    // SAFETY: the caller's arguments, passed on.
    unsafe { long_form(c"getopt_long", &REAL, short, longopts, longindex) }
}

/// `getopt_long_only(3)`, with the simulated PE's variables.
///
/// # Safety
/// As libc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn getopt_long_only(
    argc: c_int,
    argv: *const *mut c_char,
    optstring: *const c_char,
    longopts: *const c_void,
    longindex: *mut c_int,
) -> c_int {
    static REAL: OnceLock<usize> = OnceLock::new();
    let short = (argc, argv, optstring);
    // SAFETY: the caller's arguments, passed on.
    unsafe { long_form(c"getopt_long_only", &REAL, short, longopts, longindex) }
}
