//! POSIX threads for the simulator's copies of a program: `libshmem` defines `pthread_create`,
//! `pthread_join`, `pthread_detach`, `pthread_exit` and `sched_yield` here, and the mutexes,
//! condition variables and barriers in `sync.rs` (programs linked with it bind to them first,
//! as to `getopt`, `getopt.rs`).
//!
//! Inside a simulated PE a thread the program starts is a thread of that PE in the simulator
//! (`sim::threads`): a coroutine scheduled from the run's seed, sharing its PE's memory, which
//! waits and wakes on its own. Outside one (a run as processes, a thread the OS runs) every
//! call goes to libc's function.
//!
//! A `pthread_t` of a simulated thread is [`TAG`] with its number: it means nothing to libc,
//! and `pthread_self` is libc's (every thread of a simulated run is the one OS thread).

/// The running simulated thread, or, outside a simulated PE, the return of libc's function
/// `$name` called with the caller's arguments `$arg` of types `$ty`.
macro_rules! simulated_or_libc {
    ($name:literal, ($($arg:ident: $ty:ty),*) -> $ret:ty) => {{
        static REAL: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        match crate::sim_host::threads::simulated() {
            Some(id) => id,
            // SAFETY: libc's function has this type; the caller's arguments, passed on.
            None => return unsafe {
                crate::sim_host::threads::libc_fn::<unsafe extern "C" fn($($ty),*) -> $ret>(
                    $name, &REAL,
                )($($arg),*)
            },
        }
    }};
}

pub(crate) mod spin;
mod sync;

use std::ffi::{c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;

use hw::{HostThreadEvent, SyncObject};
use sim::threads::{ThreadError, ThreadId};

unsafe extern "C" {
    /// libc's, which the `libc` crate does not declare.
    fn pthread_attr_getdetachstate(attr: *const libc::pthread_attr_t, state: *mut c_int) -> c_int;
}

use crate::fail::{CallError, fail};
use crate::sim_host::check::thread_event;
use crate::sim_host::getopt::real;
use crate::state;

/// The high bits of a simulated thread's `pthread_t`, far from any address libc uses for its
/// own.
const TAG: u64 = 0x5e5e_0000_0000_0000;

/// The stack of a thread whose attributes name no size: glibc's default.
const DEFAULT_STACK_BYTES: usize = 8 << 20;

/// The running simulated thread, or `None` where libc's functions serve.
pub(crate) fn simulated() -> Option<ThreadId> {
    if !state::simulated() {
        return None;
    }
    sim::threads::current()
}

/// The `pthread_t` of simulated thread `id`.
fn handle_of(id: ThreadId) -> u64 {
    TAG | u64::from(id)
}

/// The simulated thread `thread` names, if it names one.
fn id_of(thread: u64) -> Option<ThreadId> {
    (thread & TAG == TAG).then(|| ThreadId::try_from(thread & !TAG).ok())?
}

/// Runs `wait`, which may let other threads and PEs run, for the C function `call`: the
/// PE's slot is made current again after it, and a failed wait (a deadlock, the end of the
/// run) ends the run with the simulator's report. Other errors are the caller's to map.
pub(crate) fn waiting<R>(
    call: &str,
    wait: impl FnOnce() -> Result<R, ThreadError>,
) -> Result<R, ThreadError> {
    let slot = state::slot();
    let outcome = catch_unwind(AssertUnwindSafe(wait));
    // SAFETY: `slot` was current at entry, so it lives as long as `enter_slot` promised.
    unsafe { state::enter_slot(slot) };
    let pe = state::running_pe().map(|pe| pe.shmem.my_pe());
    match outcome {
        Ok(Err(ThreadError::Wait(err))) => fail(call, pe, &CallError::Argument(err.to_string())),
        Ok(other) => other,
        Err(payload) => fail(
            call,
            pe,
            &CallError::Internal(state::panic_text(payload.as_ref())),
        ),
    }
}

/// libc's `name`, as a function of type `F`.
///
/// # Safety
/// `F` must be the type of libc's `name`.
pub(crate) unsafe fn libc_fn<F: Copy>(name: &std::ffi::CStr, slot: &OnceLock<usize>) -> F {
    let at = real(name, slot);
    // SAFETY: the caller names the function's type; `real` never returns null.
    unsafe { std::mem::transmute_copy::<usize, F>(&at) }
}

type StartRoutine = extern "C" fn(*mut c_void) -> *mut c_void;

/// `pthread_create(3)`: in a simulated PE, a thread of that PE; its attributes' stack size and
/// detached state count, the rest (scheduling, affinity) means nothing there.
///
/// # Safety
/// As libc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_create(
    thread: *mut u64,
    attr: *const libc::pthread_attr_t,
    start: StartRoutine,
    arg: *mut c_void,
) -> c_int {
    simulated_or_libc!(c"pthread_create", (thread: *mut u64, attr: *const libc::pthread_attr_t, start: StartRoutine, arg: *mut c_void) -> c_int);
    let (mut stack_bytes, mut detach_state) = (DEFAULT_STACK_BYTES, libc::PTHREAD_CREATE_JOINABLE);
    if !attr.is_null() {
        // SAFETY: the caller's initialised attributes; the getters only read them.
        unsafe {
            libc::pthread_attr_getstacksize(attr, &mut stack_bytes);
            pthread_attr_getdetachstate(attr, &mut detach_state);
        }
    }
    let slot = state::slot();
    let arg = arg as usize;
    let body = Box::new(move || {
        // SAFETY: the slot of the PE that started the thread, which lives for the run.
        unsafe { state::enter_slot(slot) };
        let retval = start(arg as *mut c_void) as usize;
        released_end();
        retval
    });
    match sim::threads::spawn(body, stack_bytes) {
        Ok(id) => {
            thread_event(|parent| HostThreadEvent::Start { parent, child: id });
            if detach_state == libc::PTHREAD_CREATE_DETACHED {
                // A thread just started is neither detached nor joined.
                let _ = sim::threads::detach(id);
            }
            // SAFETY: the caller's out-parameter.
            unsafe { *thread = handle_of(id) };
            0
        }
        Err(_) => libc::EAGAIN,
    }
}

/// `pthread_join(3)`.
///
/// # Safety
/// As libc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_join(thread: u64, retval: *mut *mut c_void) -> c_int {
    simulated_or_libc!(c"pthread_join", (thread: u64, retval: *mut *mut c_void) -> c_int);
    let Some(id) = id_of(thread) else {
        return libc::ESRCH;
    };
    match waiting("pthread_join", || sim::threads::join(id)) {
        Ok(value) => {
            thread_event(|thread| HostThreadEvent::Acquire {
                thread,
                object: SyncObject::ThreadEnd(id),
            });
            if !retval.is_null() {
                // SAFETY: the caller's out-parameter.
                unsafe { *retval = value as *mut c_void };
            }
            0
        }
        Err(err) => errno_of(&err),
    }
}

/// `pthread_detach(3)`.
///
/// # Safety
/// As libc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_detach(thread: u64) -> c_int {
    simulated_or_libc!(c"pthread_detach", (thread: u64) -> c_int);
    match id_of(thread).map(sim::threads::detach) {
        Some(Ok(())) => 0,
        Some(Err(err)) => errno_of(&err),
        None => libc::ESRCH,
    }
}

/// `pthread_exit(3)`: a started thread ends here; the PE's first thread waits for the others
/// to end and then ends the PE with status 0, as the last thread of a process does.
///
/// # Safety
/// As libc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_exit(retval: *mut c_void) -> ! {
    type Real = unsafe extern "C" fn(*mut c_void) -> !;
    static REAL: OnceLock<usize> = OnceLock::new();
    if simulated().is_none() {
        // SAFETY: libc's pthread_exit has this type; the caller's argument, passed on.
        unsafe { libc_fn::<Real>(c"pthread_exit", &REAL)(retval) }
    }
    released_end();
    // Only thread 0 comes back, once the others ended. Ending the PE is `exit`'s, which the
    // simulator's host handles for every thread (`ending.rs`).
    let _ = waiting("pthread_exit", || {
        sim::threads::exit_current(retval as usize)
    });
    // SAFETY: exit runs the program's exit handlers, as when its last thread ends.
    unsafe { libc::exit(0) }
}

/// `sched_yield(2)`: in a simulated PE, the other ready threads of the PE run first; if none
/// is ready, the thread sleeps a microsecond of simulated time, so that a loop that yields
/// until a thread waiting in the world (or a peer) changes memory ends (`spin.rs`).
///
/// # Safety
/// As libc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sched_yield() -> c_int {
    simulated_or_libc!(c"sched_yield", () -> c_int);
    let _ = waiting("sched_yield", || {
        sim::threads::relax(spin::SPIN_SLEEP_NS, || "yields in a loop".to_owned())
    });
    0
}

/// The calling thread ends: a join of it is ordered after what it did.
fn released_end() {
    thread_event(|thread| HostThreadEvent::Release {
        thread,
        object: SyncObject::ThreadEnd(thread),
    });
}

/// The `errno` value POSIX gives a refused thread operation.
fn errno_of(err: &ThreadError) -> c_int {
    match err {
        ThreadError::NoSuchThread(_) | ThreadError::NotSimulated => libc::ESRCH,
        ThreadError::NotJoinable(_) => libc::EINVAL,
        ThreadError::JoinSelf(_) => libc::EDEADLK,
        ThreadError::Stack { .. } | ThreadError::Wait(_) => libc::EAGAIN,
    }
}
