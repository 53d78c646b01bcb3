//! `exit` and `atexit` for the simulator's PEs: a PE that calls `exit(status)` (or `_exit`,
//! `_Exit`, `quick_exit`) ends that PE with `status`, as it would end its process, and the
//! run goes on for the others; a PE's `atexit` handlers (and the C++ destructors its copy
//! registers while it runs) run when that PE exits, once, on that PE, in reverse order.
//!
//! How: `libshmem` defines `exit`, `_exit`, `_Exit`, `quick_exit` and `__cxa_atexit`, which a
//! program linked with it binds to first (glibc's `atexit`, linked into each copy, calls
//! `__cxa_atexit` through the PLT), as `getopt.rs` does for `getopt`. Outside a simulated PE
//! each forwards to libc's (`RTLD_NEXT`). Inside one:
//! - `__cxa_atexit` keeps a handler registered by the PE's own copy (its `__dso_handle` lies
//!   in the copy) in the PE's list; one registered for another object (libstdc++'s own
//!   statics, shared by every PE) goes to libc's list, as before.
//! - The PE's `main` runs on a coroutine of its own ([`run_main`]), on a stack of its own.
//!   `exit` runs the PE's handlers, newest first, each taken off the list before it runs (a
//!   handler that calls `exit` does not run twice), then suspends that coroutine with the
//!   status, and [`run_main`] discards it without unwinding and returns the status as if
//!   `main` had returned it; returning from `main` runs the handlers the same way. `_exit`,
//!   `_Exit` and `quick_exit` end it without running them. A wait of the PE inside `main`
//!   suspends the simulator's coroutine of the PE from `main`'s stack, which stays as it is
//!   until the simulator resumes the PE.
//!
//! Why discard the stack rather than unwind it: a process's `exit` runs no destructors of the
//! objects on its stack, and an unwind cannot pass C++ frames anyway. glibc declares `exit`
//! `noexcept` (`__THROW`), so clang and gcc call it from a frame with C++ cleanups (a local
//! `std::vector`, a `try` block) without a landing pad, and the C++ personality routine ends
//! such an unwind with `std::terminate`: a CUDA program's `exit` after a failed CUDA call,
//! the usual `CUDA_CHECK`, aborted every PE. Discarding also keeps the PE's coroutine, which
//! must finish for the simulator to count the PE done (its deadlock report names the PEs that
//! finished), and lets the implicit `shmem_finalize` run on the PE's own stack. What a
//! discarded stack holds is lost as at a process's exit: C++ objects on it are not destroyed.
//!
//! Threads of a PE: `exit` from a thread the PE started (not its `main`) ends the PE the same
//! way, after its handlers: the PE's other threads are dropped as they wait
//! (`sim::threads::end_all_but_first`), and the thread suspends the PE's `main` coroutine from
//! its own stack, which runs nested in it (the first thread waits in the dispatch that resumed
//! it, as it waits whenever another of its PE's threads runs), so [`run_main`] discards both.

use std::cell::{Cell, RefCell};
use std::ffi::{CStr, c_int, c_void};
use std::ops::Range;
use std::sync::OnceLock;

use corosensei::{Coroutine, CoroutineResult, Yielder};

use crate::cuda_sim::stacks::FiberStack;
use crate::sim_host::getopt::real;
use crate::state::{self, Slot};

/// The stack a PE's `main` runs on, in bytes: a process's main thread's usual 8 MiB, committed
/// page by page as it is touched.
const MAIN_STACK_BYTES: usize = 8 << 20;

/// What a PE's `main` coroutine yields when the PE exits: its status. It is never resumed.
type MainYielder = Yielder<(), c_int>;

/// The coroutine a PE's `main` runs on.
type MainCoroutine = Coroutine<(), c_int, c_int, FiberStack>;

/// A PE's `main` that ended: its exit status, and the stack it ran on, kept until the PE's
/// implicit finalize has completed what may still write into it (a non-blocking get into a
/// local array just before `exit`).
pub(crate) struct EndedMain {
    /// The status, as a process's (the low 8 bits).
    pub(crate) status: c_int,
    _main: MainCoroutine,
}

/// An `atexit` handler (or a C++ destructor) and its argument.
type Handler = unsafe extern "C-unwind" fn(*mut c_void);

/// One PE's exit state.
struct PeExits {
    /// Its handlers, oldest first.
    handlers: RefCell<Vec<(Handler, *mut c_void)>>,
    /// Whether its `main` (or its handlers after `main`) runs.
    in_main: Cell<bool>,
    /// The yielder of the coroutine its `main` runs on, while it runs; null otherwise.
    main_yielder: Cell<*const MainYielder>,
    /// The addresses of its copy of the program.
    copy: Range<usize>,
}

/// Every PE's exit state, found by the slot that is current while the PE runs.
struct Table {
    slots: &'static [Slot],
    pes: Box<[PeExits]>,
}

// SAFETY: the table is read and written only on the host's thread (`running` checks it).
unsafe impl Sync for Table {}
// SAFETY: as for Sync.
unsafe impl Send for Table {}

static TABLE: OnceLock<Table> = OnceLock::new();

thread_local! {
    /// Whether this thread runs the simulated PEs.
    static HOST_THREAD: Cell<bool> = const { Cell::new(false) };
}

/// Makes this thread the one whose PEs `exit` ends: PE `n` has `slots[n]` and the copy at
/// `copies[n]`.
pub(crate) fn install(slots: &'static [Slot], copies: impl Iterator<Item = Range<usize>>) {
    let pes = copies
        .map(|copy| PeExits {
            handlers: RefCell::new(Vec::new()),
            in_main: Cell::new(false),
            main_yielder: Cell::new(std::ptr::null()),
            copy,
        })
        .collect();
    let _ = TABLE.set(Table { slots, pes });
    HOST_THREAD.set(true);
}

/// The simulated PE whose program runs now, and its exit state.
fn running() -> Option<(u32, &'static PeExits)> {
    if !HOST_THREAD.get() {
        return None;
    }
    let table = TABLE.get()?;
    let current = state::slot();
    let pe = table.slots.iter().position(|s| std::ptr::eq(s, current))?;
    let exits = &table.pes[pe];
    exits.in_main.get().then_some((pe as u32, exits))
}

/// The number of the simulated PE whose program runs now, if one does (before its
/// `shmem_init` too).
pub(crate) fn running_pe() -> Option<u32> {
    running().map(|(pe, _)| pe)
}

/// Runs PE `pe`'s `main` (`call_main`) and then its handlers, on a coroutine of its own, and
/// returns its exit status as a process's would be (the low 8 bits), whether `main` returned
/// or the PE called `exit`, with the stack `main` ran on.
pub(crate) fn run_main(pe: u32, call_main: impl FnOnce() -> c_int) -> EndedMain {
    let exits = &TABLE.get().expect("install runs before the PEs").pes[pe as usize];
    let stack = FiberStack::map(MAIN_STACK_BYTES).unwrap_or_else(|e| {
        crate::sim_host::note_why(format!(
            "cannot map a {MAIN_STACK_BYTES}-byte stack for the main of PE {pe}: {e}"
        ));
        exit_process(1)
    });
    let body = move |yielder: &MainYielder, ()| {
        exits.main_yielder.set(std::ptr::from_ref(yielder));
        let status = call_main();
        run_handlers(exits);
        status
    };
    // SAFETY: the body uses `exits` (static) and what `call_main` borrows only while the
    // coroutine runs, which is inside this function: when it returns the coroutine has
    // finished or been reset (a panic out of it leaves it finished), and only its stack is
    // kept.
    let mut main: MainCoroutine = unsafe { Coroutine::with_stack_unchecked(stack, body) };
    exits.in_main.set(true);
    let step = main.resume(());
    exits.in_main.set(false);
    exits.main_yielder.set(std::ptr::null());
    let status = match step {
        CoroutineResult::Return(status) => status,
        CoroutineResult::Yield(status) => {
            // SAFETY: `exit` suspended the coroutine for good; its frames are the program's
            // and `exit`'s, which hold no borrow of ours and, as a process's at exit, are
            // dropped without running anything (module docs).
            unsafe { main.force_reset() };
            status
        }
    };
    EndedMain {
        status: status & 0xff,
        _main: main,
    }
}

/// Runs `exits`'s handlers, newest first, each once.
fn run_handlers(exits: &PeExits) {
    loop {
        let next = exits.handlers.borrow_mut().pop();
        let Some((handler, arg)) = next else { return };
        // SAFETY: the program registered `handler` with `arg`, to be called once at exit.
        unsafe { handler(arg) };
    }
}

/// Ends the running PE with `status`: suspends its `main` coroutine for [`run_main`] to
/// discard, from its first thread or from one it started (whose coroutine runs nested in
/// `main`'s, so the same suspension leaves both); the PE's other threads end first.
fn end_pe(status: c_int) -> ! {
    let yielder = running().map_or(std::ptr::null(), |(_, exits)| exits.main_yielder.get());
    if yielder.is_null() {
        exit_process(status)
    }
    if crate::sim_host::threads::simulated().is_some_and(|thread| thread != 0)
        && let Err(err) = sim::threads::end_all_but_first()
    {
        crate::sim_host::note_why(format!("cannot end the PE's threads at its exit: {err}"));
        exit_process(status)
    }
    // SAFETY: the yielder of the running PE's `main` coroutine, set while that coroutine runs;
    // the code here runs on that coroutine's stack or on a thread's coroutine resumed from it,
    // and nothing resumes the suspended coroutine again (`run_main` discards it).
    unsafe { &*yielder }.suspend(status);
    unreachable!("a PE's main was resumed after its exit")
}

/// Ends the process with `status` through libc's `exit` (its `atexit` handlers, its stdio
/// flush, the host's report hook), whatever PE runs.
pub(crate) fn exit_process(status: c_int) -> ! {
    static REAL: OnceLock<usize> = OnceLock::new();
    libc_end(c"exit", &REAL)(status)
}

/// libc's `name`, one of the `exit` family.
fn libc_end(name: &CStr, slot: &OnceLock<usize>) -> extern "C" fn(c_int) -> ! {
    // SAFETY: libc's `exit`, `_exit`, `_Exit` and `quick_exit` take an int and never return.
    unsafe { std::mem::transmute::<usize, extern "C" fn(c_int) -> !>(real(name, slot)) }
}

/// `exit`: ends the running simulated PE after its handlers, else the process.
#[unsafe(no_mangle)]
pub extern "C-unwind" fn exit(status: c_int) -> ! {
    match running() {
        Some((_, exits)) => {
            run_handlers(exits);
            end_pe(status)
        }
        None => exit_process(status),
    }
}

/// Ends the running simulated PE without its handlers, else calls libc's `name`.
fn end_without_handlers(name: &CStr, slot: &OnceLock<usize>, status: c_int) -> ! {
    if running().is_some() {
        end_pe(status)
    }
    libc_end(name, slot)(status)
}

/// `_exit`: ends the running simulated PE at once, else the process.
#[unsafe(no_mangle)]
pub extern "C-unwind" fn _exit(status: c_int) -> ! {
    static REAL: OnceLock<usize> = OnceLock::new();
    end_without_handlers(c"_exit", &REAL, status)
}

/// `_Exit`: as `_exit`.
#[unsafe(no_mangle)]
pub extern "C-unwind" fn _Exit(status: c_int) -> ! {
    static REAL: OnceLock<usize> = OnceLock::new();
    end_without_handlers(c"_Exit", &REAL, status)
}

/// `quick_exit`: ends the running simulated PE without its `atexit` handlers, else the
/// process after its `at_quick_exit` handlers.
#[unsafe(no_mangle)]
pub extern "C-unwind" fn quick_exit(status: c_int) -> ! {
    static REAL: OnceLock<usize> = OnceLock::new();
    end_without_handlers(c"quick_exit", &REAL, status)
}

/// `__cxa_atexit`: a handler the running simulated PE's copy registers is the PE's; any
/// other goes to libc.
///
/// # Safety
/// As libc's: `handler` may be called once with `arg` at exit.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __cxa_atexit(
    handler: Handler,
    arg: *mut c_void,
    dso: *mut c_void,
) -> c_int {
    if let Some((_, exits)) = running()
        && exits.copy.contains(&(dso as usize))
    {
        exits.handlers.borrow_mut().push((handler, arg));
        return 0;
    }
    type CxaAtexit = unsafe extern "C" fn(Handler, *mut c_void, *mut c_void) -> c_int;
    static REAL: OnceLock<usize> = OnceLock::new();
    // SAFETY: libc's `__cxa_atexit` has this signature.
    let real_atexit =
        unsafe { std::mem::transmute::<usize, CxaAtexit>(real(c"__cxa_atexit", &REAL)) };
    // SAFETY: the caller's arguments, as libc takes them.
    unsafe { real_atexit(handler, arg, dso) }
}
