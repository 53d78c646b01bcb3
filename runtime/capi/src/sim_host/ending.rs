//! How a simulated run ends when a PE ends the process: every PE shares it, so `exit`, a
//! failed call (`fail.rs`), `shmem_global_exit` or a fatal signal in one PE ends them all.
//! The run must still say which PE did it and why, never end silently.
//!
//! - An exit (the program's `exit`, or the library's own after a failed call or a global
//!   exit) runs `on_exit`'s hook, which writes the report with that PE and status, unless the
//!   host finished the run itself.
//! - A fatal signal runs a handler, on a stack of its own (a PE's stack may be the one that
//!   overflowed), that names the PE on standard error with async-signal-safe writes only,
//!   then lets the signal end the process as it would have; the launcher says the run
//!   crashed.

use std::ffi::{c_int, c_void};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::sim_host::report::{self, Report};
use crate::state;

/// Set when the host wrote the report itself: an exit after that is the host's own.
static FINISHED: AtomicBool = AtomicBool::new(false);

/// Why the PE that ends the process does so, when the library knows better than "exit".
static WHY: Mutex<Option<String>> = Mutex::new(None);

/// The report written if the run ends early: the run's fields, without results.
static EARLY: Mutex<Option<Report>> = Mutex::new(None);

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

/// Records why the current PE is about to end the process (a failed call, a global exit).
pub(crate) fn note_why(why: String) {
    *WHY.lock().unwrap_or_else(|p| p.into_inner()) = Some(why);
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
    let who = current_pe().map_or_else(|| "a PE".to_owned(), |pe| format!("PE {pe}"));
    let why = WHY.lock().unwrap_or_else(|p| p.into_inner()).take();
    let message = why.unwrap_or_else(|| {
        format!(
            "{who} called exit({status}) before the other PEs finished: on the simulator every \
             PE is a coroutine of one process, so exit ends them all; return from main instead \
             (or call shmem_global_exit to end the job on purpose)"
        )
    });
    early.fail(message);
    report::write_early(&early);
}

/// The PE whose coroutine runs now, if it has initialised.
fn current_pe() -> Option<u32> {
    state::running_pe().map(|pe| pe.shmem.my_pe())
}

/// The signals that end a process with a fault.
const FATAL: [c_int; 5] = [
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGFPE,
    libc::SIGILL,
    libc::SIGABRT,
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
    for signal in FATAL {
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
    let mut line = [0u8; 160];
    let mut at = 0;
    let mut put = |bytes: &[u8]| {
        let n = bytes.len().min(line.len() - at);
        line[at..at + n].copy_from_slice(&bytes[..n]);
        at += n;
    };
    put(b"rshmem: simulated ");
    // Reads the PE's state only; no allocation, no lock.
    match current_pe() {
        Some(pe) => {
            put(b"PE ");
            put(decimal(u64::from(pe), &mut [0; 20]));
        }
        None => put(b"PE (before shmem_init)"),
    }
    put(b" crashed with signal ");
    put(decimal(signal as u64, &mut [0; 20]));
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
