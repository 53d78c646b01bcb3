//! How a simulated run ends when something ends the process: every PE shares it, so a
//! failed call (`fail.rs`), `shmem_global_exit` or a fatal signal in one PE ends them all.
//! (`exit` ends only its PE: `exit.rs`.) The run must still say which PE did it and why,
//! never end silently.
//!
//! - The host records each PE that ended (its status) as it ends, so that a report written
//!   early still names every PE that exited non-zero, and the process's status is the first
//!   such PE's, as the process launcher's would be.
//! - An end of the process (the library's own after a failed call or a global exit) runs
//!   `on_exit`'s hook, which writes the report with that PE and status, unless the host
//!   finished the run itself. A global exit with status 0 is a success.
//! - A fatal signal runs a handler, on a stack of its own (a PE's stack may be the one that
//!   overflowed), that names the PE and the signal on standard error with async-signal-safe
//!   writes only (and the allocation that returned NULL to that PE, if one did, since the
//!   crash may be the program using it), then lets the signal end the process as it would
//!   have; the launcher says the run crashed and exits with 128 + the signal.

use std::collections::BTreeMap;
use std::ffi::{c_int, c_void};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::sim_host::report::{self, Report};
use crate::state;

/// Set when the host wrote the report itself: an exit after that is the host's own.
static FINISHED: AtomicBool = AtomicBool::new(false);

/// Why the PE that ends the process does so, when the library knows better than "exit".
static WHY: Mutex<Option<String>> = Mutex::new(None);

/// The report written if the run ends early: the run's fields, and the PEs that ended.
static EARLY: Mutex<Option<Report>> = Mutex::new(None);

/// The status of the first PE that exited non-zero: the run's status.
static FIRST_FAILED: Mutex<Option<c_int>> = Mutex::new(None);

/// The PE that called `shmem_global_exit`, and its status.
static GLOBAL_EXIT: Mutex<Option<(u32, c_int)>> = Mutex::new(None);

/// Per PE, the first allocation that returned NULL to it, as its crash line would say it.
static FAILED_ALLOCS: Mutex<BTreeMap<u32, String>> = Mutex::new(BTreeMap::new());

/// Installs the hooks; `early` is the report to complete if a PE ends the process.
pub(crate) fn install(early: Report) {
    *EARLY.lock().unwrap_or_else(|p| p.into_inner()) = Some(early);
    // SAFETY: on_exit (glibc) takes a function of this signature and an argument it passes on.
    unsafe { on_exit(on_exit_hook, std::ptr::null_mut()) };
    install_crash_handler();
}

/// The host finished the run and wrote the report.
pub(crate) fn finished() {
    FINISHED.store(true, Ordering::SeqCst);
}

/// Records why the current PE is about to end the process (a failed call).
pub(crate) fn note_why(why: String) {
    *WHY.lock().unwrap_or_else(|p| p.into_inner()) = Some(why);
}

/// Records that PE `pe` is about to end the run with `shmem_global_exit(status)`.
pub(crate) fn note_global_exit(pe: u32, status: c_int) {
    *GLOBAL_EXIT.lock().unwrap_or_else(|p| p.into_inner()) = Some((pe, status));
}

/// Records that PE `pe` ended with `status` (the low 8 bits, as a process's).
pub(crate) fn pe_ended(pe: u32, status: c_int) {
    if let Some(early) = EARLY.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
        early.pe_ended(pe, status);
    }
    if status != 0 {
        FIRST_FAILED
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(status);
    }
}

/// The run's status: the first PE's that exited non-zero, else `otherwise`.
pub(crate) fn run_status(otherwise: c_int) -> c_int {
    FIRST_FAILED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .unwrap_or(otherwise)
}

/// Records that an allocation returned NULL to PE `pe` (`what` says which and why); returns
/// whether it is the first for that PE.
pub(crate) fn note_failed_alloc(pe: u32, what: impl FnOnce() -> String) -> bool {
    let mut failed = FAILED_ALLOCS.lock().unwrap_or_else(|p| p.into_inner());
    if failed.contains_key(&pe) {
        return false;
    }
    failed.insert(pe, what());
    true
}

unsafe extern "C" {
    /// glibc's `on_exit`: like `atexit`, with the exit status (the libc crate lacks it).
    fn on_exit(hook: extern "C" fn(c_int, *mut c_void), arg: *mut c_void) -> c_int;
}

extern "C" fn on_exit_hook(status: c_int, _arg: *mut c_void) {
    if FINISHED.load(Ordering::SeqCst) {
        return;
    }
    let Some(mut early) = EARLY.lock().unwrap_or_else(|p| p.into_inner()).take() else {
        return;
    };
    let why = WHY.lock().unwrap_or_else(|p| p.into_inner()).take();
    let global = GLOBAL_EXIT.lock().unwrap_or_else(|p| p.into_inner()).take();
    match (why, global) {
        (Some(why), _) => early.fail(why),
        (None, Some((pe, status))) => early.end_globally(
            format!("PE {pe} called shmem_global_exit({status})"),
            status,
        ),
        (None, None) => {
            let who = current_pe().map_or_else(|| "a PE".to_owned(), |pe| format!("PE {pe}"));
            early.fail(format!(
                "{who} ended the process with status {status} in a way libshmem does not \
                 see (exit_group, or a thread's exit): every PE shares the process, so the \
                 run ended; call exit or return from main"
            ))
        }
    }
    report::write_early(&early);
}

/// The PE whose coroutine runs now: any PE in its `main`, or one in the library after it.
fn current_pe() -> Option<u32> {
    crate::sim_host::exit::running_pe().or_else(|| state::running_pe().map(|pe| pe.shmem.my_pe()))
}

/// The signals that end a process with a fault, and their names.
const FATAL: [(c_int, &[u8]); 5] = [
    (libc::SIGSEGV, b"SIGSEGV"),
    (libc::SIGBUS, b"SIGBUS"),
    (libc::SIGFPE, b"SIGFPE"),
    (libc::SIGILL, b"SIGILL"),
    (libc::SIGABRT, b"SIGABRT"),
];

fn install_crash_handler() {
    const ALT_STACK_BYTES: usize = 64 << 10;
    // Leaked on purpose: the handler may run until the process ends.
    let stack = Box::leak(vec![0u8; ALT_STACK_BYTES].into_boxed_slice());
    let alt = libc::stack_t {
        ss_sp: stack.as_mut_ptr().cast(),
        ss_flags: 0,
        ss_size: ALT_STACK_BYTES,
    };
    // SAFETY: `alt` describes memory that lives for the rest of the process.
    unsafe { libc::sigaltstack(&alt, std::ptr::null_mut()) };
    for (signal, _) in FATAL {
        // SAFETY: a zeroed sigaction is a valid start; the handler has the SA_SIGINFO form.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = crash_handler as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_RESETHAND;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

extern "C" fn crash_handler(signal: c_int, _info: *mut libc::siginfo_t, _context: *mut c_void) {
    let mut line = [0u8; 1024];
    let mut at = 0;
    let mut put = |bytes: &[u8]| {
        let n = bytes.len().min(line.len() - at);
        line[at..at + n].copy_from_slice(&bytes[..n]);
        at += n;
    };
    put(b"rshmem: simulated ");
    // Reads the PE's state only; no allocation, no blocking lock.
    let pe = current_pe();
    match pe {
        Some(pe) => {
            put(b"PE ");
            put(decimal(u64::from(pe), &mut [0; 20]));
        }
        None => put(b"PE (outside its main)"),
    }
    put(b" crashed with signal ");
    put(decimal(signal as u64, &mut [0; 20]));
    if let Some((_, name)) = FATAL.iter().find(|(s, _)| *s == signal) {
        put(b" (");
        put(name);
        put(b")");
    }
    // try_lock: the crash may have come while the lock was held, and a handler must not wait.
    let failed = FAILED_ALLOCS.try_lock().ok();
    if let Some(what) = pe.and_then(|pe| failed.as_ref()?.get(&pe)) {
        put(b" after ");
        put(what.as_bytes());
    }
    put(b"; the run ends (every PE shares one process)\n");
    // SAFETY: write(2) is async-signal-safe; the buffer is ours.
    unsafe { libc::write(2, line.as_ptr().cast(), at) };
    // SA_RESETHAND restored the default action: returning re-runs the faulting instruction
    // (or, for abort, glibc raises again), which ends the process with this signal.
}

/// `n` in decimal, in `buffer`.
fn decimal(mut n: u64, buffer: &mut [u8; 20]) -> &[u8] {
    let mut at = buffer.len();
    loop {
        at -= 1;
        buffer[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buffer[at..];
        }
    }
}
