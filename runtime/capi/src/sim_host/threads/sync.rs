//! Mutexes, condition variables and barriers between the threads of a simulated PE.
//!
//! Why not libc's: every simulated thread is the one OS thread, so a contended libc mutex
//! would block the whole simulator (or, recursive or error-checking, think its owner is the
//! caller). In a simulated PE these functions keep each object's state here, keyed by its
//! address (a PE's objects are in its own copy's memory, so no two PEs share one), and a thread
//! that must wait parks in the simulator (`sim::threads::park`), naming the object for a
//! deadlock report. libc's object is left as initialised; only its kind is read.
//!
//! Timed waits wait in simulated time: the timeout is the absolute time less the real clock's
//! time at the call, rounded up to a millisecond so that a run stays the same from one day to
//! the next, counted on the PE's clock.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::ffi::{c_int, c_uint, c_void};

use hw::{HostThreadEvent, SyncObject};
use sim::threads::{ThreadId, Unparked};

use super::waiting;
use crate::sim_host::check::thread_event;

/// What `pthread_barrier_wait` returns to the thread that opened the barrier (glibc's value).
const PTHREAD_BARRIER_SERIAL_THREAD: c_int = -1;

/// What glibc's mutex kind says about relocking (`PTHREAD_MUTEX_*`, the low bits of
/// `__data.__kind`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Relocking deadlocks (normal and adaptive mutexes).
    Normal,
    Recursive,
    ErrorCheck,
}

/// One mutex's state in a simulated PE.
#[derive(Default)]
struct Mutex {
    owner: Option<ThreadId>,
    /// How many times the owner locked it (recursive mutexes).
    count: u32,
    waiters: VecDeque<ThreadId>,
}

/// One barrier's state.
struct Barrier {
    count: usize,
    arrived: Vec<ThreadId>,
    /// How many times it opened: a waiter leaves when this moves.
    generation: u64,
}

/// The synchronisation objects of every simulated PE, by address.
#[derive(Default)]
struct Objects {
    mutexes: HashMap<usize, Mutex>,
    /// The threads waiting on each condition variable, first come first woken.
    conditions: HashMap<usize, VecDeque<ThreadId>>,
    barriers: HashMap<usize, Barrier>,
}

thread_local! {
    /// Only the simulator's thread runs simulated PEs, so only it ever holds any.
    static OBJECTS: RefCell<Objects> = RefCell::new(Objects::default());
}

/// The kind of the mutex at `mutex`, from glibc's `struct __pthread_mutex_s`.
fn kind_of(mutex: *const c_void) -> Kind {
    /// Where `__kind` is in glibc's mutex on 64-bit Linux: after `__lock`, `__count`,
    /// `__owner` and `__nusers`, four ints.
    const KIND_OFFSET: usize = 16;
    // SAFETY: the caller's mutex, an initialised pthread_mutex_t of at least 40 bytes.
    let kind = unsafe { mutex.cast::<u8>().add(KIND_OFFSET).cast::<c_int>().read() };
    match kind & 3 {
        libc::PTHREAD_MUTEX_RECURSIVE => Kind::Recursive,
        libc::PTHREAD_MUTEX_ERRORCHECK => Kind::ErrorCheck,
        _ => Kind::Normal,
    }
}

/// What an attempt to lock found.
enum Attempt {
    /// Locked (or, for the caller, a result to return).
    Done(c_int),
    /// Held by another thread, or by the caller for a mutex that deadlocks.
    Held(ThreadId),
}

/// Tells the race detector of thread `event`'s synchronisation (`sim_host/check.rs`).
fn synchronises(event: HostThreadEvent) {
    thread_event(|_| event);
}

/// Tries to lock `mutex` for thread `me`; `queue` puts `me` in line when it is held.
fn try_lock(mutex: *const c_void, me: ThreadId, queue: bool) -> Attempt {
    OBJECTS.with_borrow_mut(|objects| {
        let state = objects.mutexes.entry(mutex as usize).or_default();
        match state.owner {
            None => {
                state.owner = Some(me);
                state.count = 1;
                state.waiters.retain(|&w| w != me);
                synchronises(HostThreadEvent::Acquire {
                    thread: me,
                    object: SyncObject::Address(mutex as u64),
                });
                Attempt::Done(0)
            }
            Some(owner) if owner == me && kind_of(mutex) == Kind::Recursive => {
                state.count += 1;
                Attempt::Done(0)
            }
            Some(owner) if owner == me && kind_of(mutex) == Kind::ErrorCheck => {
                Attempt::Done(libc::EDEADLK)
            }
            Some(owner) => {
                if queue && !state.waiters.contains(&me) {
                    state.waiters.push_back(me);
                }
                Attempt::Held(owner)
            }
        }
    })
}

/// Locks `mutex` for thread `me`, parking while another thread holds it, until `deadline_ns`.
fn lock(call: &str, mutex: *const c_void, me: ThreadId, deadline_ns: Option<u64>) -> c_int {
    loop {
        let owner = match try_lock(mutex, me, true) {
            Attempt::Done(result) => return result,
            Attempt::Held(owner) => owner,
        };
        let why = if owner == me {
            format!("waits for mutex {mutex:p}, which it holds itself")
        } else {
            format!("waits for mutex {mutex:p}, held by thread {owner}")
        };
        if let Ok(Unparked::TimedOut) = waiting(call, || sim::threads::park(why, deadline_ns)) {
            OBJECTS.with_borrow_mut(|objects| {
                if let Some(state) = objects.mutexes.get_mut(&(mutex as usize)) {
                    state.waiters.retain(|&w| w != me);
                }
            });
            return libc::ETIMEDOUT;
        }
    }
}

/// Unlocks `mutex` for thread `me`, waking the first thread in line.
fn unlock(mutex: *const c_void, me: ThreadId) -> c_int {
    let woken = OBJECTS.with_borrow_mut(|objects| {
        let state = objects.mutexes.entry(mutex as usize).or_default();
        if state.owner != Some(me) {
            return Err(libc::EPERM);
        }
        state.count -= 1;
        if state.count > 0 {
            return Ok(None);
        }
        state.owner = None;
        synchronises(HostThreadEvent::Release {
            thread: me,
            object: SyncObject::Address(mutex as u64),
        });
        Ok(state.waiters.pop_front())
    });
    match woken {
        Ok(Some(waiter)) => {
            sim::threads::unpark(waiter);
            0
        }
        Ok(None) => 0,
        // Why only these kinds refuse: unlocking a normal mutex one does not hold is undefined,
        // and glibc lets it pass.
        Err(err) if kind_of(mutex) != Kind::Normal => err,
        Err(_) => 0,
    }
}

/// The simulated deadline of the absolute time `abstime`, or `None` without one.
fn deadline_of(abstime: *const libc::timespec) -> Option<u64> {
    const NS_PER_MS: i128 = 1_000_000;
    // SAFETY: the caller's timespec, as libc's timed waits read it.
    let at = unsafe { abstime.as_ref() }?;
    let ns = |t: &libc::timespec| i128::from(t.tv_sec) * 1_000_000_000 + i128::from(t.tv_nsec);
    let now = |clock| {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes the timespec it is given.
        unsafe { libc::clock_gettime(clock, &mut t) };
        ns(&t)
    };
    let mut left = ns(at) - now(libc::CLOCK_REALTIME);
    // A time a year away from the real clock's is on the monotonic clock (a condition made
    // with `pthread_condattr_setclock`).
    if left.abs() > 365 * 86_400 * 1_000_000_000 {
        left = ns(at) - now(libc::CLOCK_MONOTONIC);
    }
    let left_ms = (left.max(0) + NS_PER_MS - 1) / NS_PER_MS;
    let start = sim::threads::now_ns().unwrap_or(0);
    Some(start.saturating_add(u64::try_from(left_ms * NS_PER_MS).unwrap_or(u64::MAX)))
}

/// `pthread_mutex_lock(3)`.
///
/// # Safety
/// As libc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_mutex_lock(mutex: *mut c_void) -> c_int {
    let me = simulated_or_libc!(c"pthread_mutex_lock", (mutex: *mut c_void) -> c_int);
    lock("pthread_mutex_lock", mutex, me, None)
}

/// `pthread_mutex_timedlock(3)`: the timeout in simulated time.
///
/// # Safety
/// As libc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_mutex_timedlock(
    mutex: *mut c_void,
    abstime: *const libc::timespec,
) -> c_int {
    let me = simulated_or_libc!(
        c"pthread_mutex_timedlock",
        (mutex: *mut c_void, abstime: *const libc::timespec) -> c_int
    );
    lock("pthread_mutex_timedlock", mutex, me, deadline_of(abstime))
}

/// `pthread_mutex_trylock(3)`.
///
/// # Safety
/// As libc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_mutex_trylock(mutex: *mut c_void) -> c_int {
    let me = simulated_or_libc!(c"pthread_mutex_trylock", (mutex: *mut c_void) -> c_int);
    match try_lock(mutex, me, false) {
        Attempt::Done(0) => 0,
        Attempt::Done(_) | Attempt::Held(_) => libc::EBUSY,
    }
}

/// `pthread_mutex_unlock(3)`.
///
/// # Safety
/// As libc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_mutex_unlock(mutex: *mut c_void) -> c_int {
    let me = simulated_or_libc!(c"pthread_mutex_unlock", (mutex: *mut c_void) -> c_int);
    unlock(mutex, me)
}

/// Waits on `cond`, with `mutex` released meanwhile, until signalled or `deadline_ns`.
fn cond_wait(
    call: &str,
    cond: *const c_void,
    mutex: *const c_void,
    me: ThreadId,
    deadline_ns: Option<u64>,
) -> c_int {
    let depth = OBJECTS.with_borrow_mut(|objects| {
        let state = objects.mutexes.get_mut(&(mutex as usize))?;
        (state.owner == Some(me)).then(|| std::mem::replace(&mut state.count, 1))
    });
    let Some(depth) = depth else {
        return libc::EPERM;
    };
    OBJECTS.with_borrow_mut(|objects| {
        objects
            .conditions
            .entry(cond as usize)
            .or_default()
            .push_back(me);
    });
    unlock(mutex, me);
    let why = format!("waits on condition variable {cond:p}");
    let woke = waiting(call, || sim::threads::park(why, deadline_ns));
    OBJECTS.with_borrow_mut(|objects| {
        if let Some(waiters) = objects.conditions.get_mut(&(cond as usize)) {
            waiters.retain(|&w| w != me);
        }
    });
    lock(call, mutex, me, None);
    OBJECTS.with_borrow_mut(|objects| {
        if let Some(state) = objects.mutexes.get_mut(&(mutex as usize)) {
            state.count = depth;
        }
    });
    match woke {
        Ok(Unparked::TimedOut) => libc::ETIMEDOUT,
        _ => 0,
    }
}

/// `pthread_cond_wait(3)`.
///
/// # Safety
/// As libc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_cond_wait(cond: *mut c_void, mutex: *mut c_void) -> c_int {
    let me = simulated_or_libc!(
        c"pthread_cond_wait",
        (cond: *mut c_void, mutex: *mut c_void) -> c_int
    );
    cond_wait("pthread_cond_wait", cond, mutex, me, None)
}

/// `pthread_cond_timedwait(3)`: the timeout in simulated time.
///
/// # Safety
/// As libc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_cond_timedwait(
    cond: *mut c_void,
    mutex: *mut c_void,
    abstime: *const libc::timespec,
) -> c_int {
    let me = simulated_or_libc!(
        c"pthread_cond_timedwait",
        (cond: *mut c_void, mutex: *mut c_void, abstime: *const libc::timespec) -> c_int
    );
    cond_wait(
        "pthread_cond_timedwait",
        cond,
        mutex,
        me,
        deadline_of(abstime),
    )
}

/// Wakes the first waiter on `cond`, or all of them.
fn cond_wake(cond: *const c_void, all: bool) -> c_int {
    let woken: Vec<ThreadId> = OBJECTS.with_borrow_mut(|objects| {
        let Some(waiters) = objects.conditions.get_mut(&(cond as usize)) else {
            return Vec::new();
        };
        let n = if all { waiters.len() } else { 1 };
        waiters.drain(..n.min(waiters.len())).collect()
    });
    for thread in woken {
        sim::threads::unpark(thread);
    }
    0
}

/// `pthread_cond_signal(3)`.
///
/// # Safety
/// As libc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_cond_signal(cond: *mut c_void) -> c_int {
    simulated_or_libc!(c"pthread_cond_signal", (cond: *mut c_void) -> c_int);
    cond_wake(cond, false)
}

/// `pthread_cond_broadcast(3)`.
///
/// # Safety
/// As libc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_cond_broadcast(cond: *mut c_void) -> c_int {
    simulated_or_libc!(c"pthread_cond_broadcast", (cond: *mut c_void) -> c_int);
    cond_wake(cond, true)
}

/// `pthread_barrier_init(3)`: libc's, and in a simulated PE the count kept here.
///
/// # Safety
/// As libc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_barrier_init(
    barrier: *mut c_void,
    attr: *const c_void,
    count: c_uint,
) -> c_int {
    type Real = unsafe extern "C" fn(*mut c_void, *const c_void, c_uint) -> c_int;
    static REAL: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    // SAFETY: libc's pthread_barrier_init has this type; the caller's arguments, passed on.
    let result =
        unsafe { super::libc_fn::<Real>(c"pthread_barrier_init", &REAL)(barrier, attr, count) };
    if result == 0 && super::simulated().is_some() {
        let state = Barrier {
            count: count as usize,
            arrived: Vec::new(),
            generation: 0,
        };
        OBJECTS.with_borrow_mut(|objects| objects.barriers.insert(barrier as usize, state));
    }
    result
}

/// `pthread_barrier_wait(3)`: the last thread to arrive opens it and gets
/// `PTHREAD_BARRIER_SERIAL_THREAD`.
///
/// # Safety
/// As libc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_barrier_wait(barrier: *mut c_void) -> c_int {
    let me = simulated_or_libc!(c"pthread_barrier_wait", (barrier: *mut c_void) -> c_int);
    let object = SyncObject::Address(barrier as u64);
    synchronises(HostThreadEvent::Release { thread: me, object });
    let arrival = OBJECTS.with_borrow_mut(|objects| {
        let state = objects.barriers.get_mut(&(barrier as usize))?;
        state.arrived.push(me);
        if state.arrived.len() < state.count {
            let (arrived, count) = (state.arrived.len(), state.count);
            return Some(Err((state.generation, arrived, count)));
        }
        state.generation += 1;
        Some(Ok(std::mem::take(&mut state.arrived)))
    });
    let (generation, arrived, count) = match arrival {
        // A barrier initialised before the run, or destroyed.
        None => return libc::EINVAL,
        Some(Ok(others)) => {
            for thread in others.into_iter().filter(|&t| t != me) {
                sim::threads::unpark(thread);
            }
            synchronises(HostThreadEvent::Acquire { thread: me, object });
            return PTHREAD_BARRIER_SERIAL_THREAD;
        }
        Some(Err(waiting_at)) => waiting_at,
    };
    let why = format!("waits at barrier {barrier:p} ({arrived} of {count} threads arrived)");
    loop {
        let _ = waiting("pthread_barrier_wait", || {
            sim::threads::park(why.clone(), None)
        });
        let opened = OBJECTS.with_borrow(|objects| {
            objects
                .barriers
                .get(&(barrier as usize))
                .is_none_or(|state| state.generation != generation)
        });
        if opened {
            synchronises(HostThreadEvent::Acquire { thread: me, object });
            return 0;
        }
    }
}

/// `pthread_barrier_destroy(3)`: libc's, and in a simulated PE the count kept here goes.
///
/// # Safety
/// As libc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_barrier_destroy(barrier: *mut c_void) -> c_int {
    type Real = unsafe extern "C" fn(*mut c_void) -> c_int;
    static REAL: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    if super::simulated().is_some() {
        OBJECTS.with_borrow_mut(|objects| objects.barriers.remove(&(barrier as usize)));
    }
    // SAFETY: libc's pthread_barrier_destroy has this type; the caller's argument.
    unsafe { super::libc_fn::<Real>(c"pthread_barrier_destroy", &REAL)(barrier) }
}
