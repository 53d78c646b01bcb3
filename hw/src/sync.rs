//! The synchronisation facade: the only place in the host backend's synchronisation that
//! names `std::sync`, `std::thread`, `loom` or `shuttle` (the bootstrap of multi-process runs,
//! `crate::bootstrap`, is socket I/O between processes and uses `std` directly).
//!
//! Code built on it (the host backend, [`crate::host`]) runs unchanged under three schedulers:
//!
//! - normal builds: `std`;
//! - `RUSTFLAGS="--cfg rshmem_loom"`: loom, which explores every interleaving *and* every
//!   weak-memory outcome the C11 model allows, for models of at most 4 threads;
//! - `RUSTFLAGS="--cfg rshmem_shuttle"`: shuttle, which explores thread schedules (all atomics
//!   behave as SeqCst) of programs with many threads and many operations.
//!
//! Rules for code that uses it, so that the checkers see everything:
//!
//! - Every shared atomic, mutex, condvar and thread comes from here; one imported from `std`
//!   is invisible to loom and shuttle.
//! - Nothing spins. Every wait blocks on a [`Condvar`] through [`wait`]: spin loops exceed
//!   loom's branch limit at 3 threads and make shuttle's schedules unfair.
//! - Ordering that relies on a single total order uses an explicit `fence(SeqCst)`, never a
//!   SeqCst *access*: loom models SeqCst accesses like AcqRel (loom PR #108, issue #180), so
//!   an algorithm that needs SeqCst accesses would pass loom while broken.
//! - Time does not exist under the checkers: [`wait`] ignores deadlines there, so a wait that
//!   can never be satisfied is a deadlock the checker reports, not a timeout.

#[cfg(rshmem_loom)]
mod imp {
    pub(crate) use loom::sync::atomic::{AtomicU64, Ordering, fence};
    pub(crate) use loom::sync::{Arc, Condvar, Mutex, MutexGuard};
}

#[cfg(all(rshmem_shuttle, not(rshmem_loom)))]
mod imp {
    pub(crate) use shuttle::sync::atomic::{AtomicU64, Ordering, fence};
    pub(crate) use shuttle::sync::{Arc, Condvar, Mutex, MutexGuard};
    pub(crate) use shuttle::thread::{Scope, ScopedJoinHandle, scope};
}

#[cfg(not(any(rshmem_loom, rshmem_shuttle)))]
mod imp {
    pub(crate) use std::sync::atomic::{AtomicU64, Ordering, fence};
    pub(crate) use std::sync::{Arc, Condvar, Mutex, MutexGuard};
    pub(crate) use std::thread::{Scope, ScopedJoinHandle, scope};
}

pub(crate) use imp::*;

/// The CPU's atomics and fences under every build, for memory that other processes map too
/// (`crate::common::memfd`, `crate::common::cpu_atomics`): a checker schedules the threads of
/// one process and cannot see another process's accesses, so modelling these would prove
/// nothing. Nothing that only threads of one process share may use them.
#[cfg(any(feature = "cuda", feature = "process"))]
pub(crate) mod cross_process {
    pub(crate) use std::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};
}

/// A point on the monotonic clock, or nothing under the model checkers.
#[cfg(not(any(rshmem_loom, rshmem_shuttle)))]
pub(crate) type Clock = std::time::Instant;
/// Under the model checkers there is no clock: time must not decide anything there.
#[cfg(any(rshmem_loom, rshmem_shuttle))]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Clock;

/// The clock's current reading.
pub(crate) fn clock_now() -> Clock {
    #[cfg(not(any(rshmem_loom, rshmem_shuttle)))]
    {
        std::time::Instant::now()
    }
    #[cfg(any(rshmem_loom, rshmem_shuttle))]
    {
        Clock
    }
}

/// Nanoseconds from `start` to now (always 0 under the checkers: time must not matter there).
pub(crate) fn nanos_since(start: &Clock) -> u64 {
    #[cfg(not(any(rshmem_loom, rshmem_shuttle)))]
    {
        u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }
    #[cfg(any(rshmem_loom, rshmem_shuttle))]
    {
        let _ = start;
        0
    }
}

/// The clock reading `nanos` after `start`, `None` for "never" (overflow, or the checkers).
pub(crate) fn clock_after(start: &Clock, nanos: u64) -> Option<Clock> {
    #[cfg(not(any(rshmem_loom, rshmem_shuttle)))]
    {
        start.checked_add(std::time::Duration::from_nanos(nanos))
    }
    #[cfg(any(rshmem_loom, rshmem_shuttle))]
    {
        let _ = (start, nanos);
        None
    }
}

/// Locks `m`. A poisoned lock is taken anyway: the state it guards is kept consistent by every
/// critical section before anything can panic, and one PE's panic must not take down others.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Blocks on `cv`, releasing `guard`, until notified or `deadline` passes; returns the guard
/// and whether the deadline passed. The one wait of the crate: callers re-check their
/// condition in a loop (wake-ups may be spurious). `None` waits without a deadline; under the
/// model checkers every deadline is `None`.
pub(crate) fn wait<'a, T>(
    cv: &Condvar,
    guard: MutexGuard<'a, T>,
    deadline: Option<Clock>,
) -> (MutexGuard<'a, T>, bool) {
    match deadline {
        None => (cv.wait(guard).unwrap_or_else(|e| e.into_inner()), false),
        #[cfg(not(any(rshmem_loom, rshmem_shuttle)))]
        Some(deadline) => {
            let now = std::time::Instant::now();
            if now >= deadline {
                return (guard, true);
            }
            let (guard, _) = cv
                .wait_timeout(guard, deadline - now)
                .unwrap_or_else(|e| e.into_inner());
            (guard, std::time::Instant::now() >= deadline)
        }
        #[cfg(any(rshmem_loom, rshmem_shuttle))]
        Some(_) => (cv.wait(guard).unwrap_or_else(|e| e.into_inner()), false),
    }
}

/// `n` zeroed atomic words, without touching their memory in normal builds: a 1 GiB heap
/// costs only the pages a program writes. `None` if the allocator refuses.
pub(crate) fn zeroed_words(n: usize) -> Option<Box<[AtomicU64]>> {
    #[cfg(not(any(rshmem_loom, rshmem_shuttle)))]
    {
        use std::alloc::{Layout, alloc_zeroed};
        if n == 0 {
            return Some(Box::new([]));
        }
        let layout = Layout::array::<AtomicU64>(n).ok()?;
        // SAFETY: `layout` has a non-zero size (n > 0 words of 8 bytes).
        let ptr = unsafe { alloc_zeroed(layout) }.cast::<AtomicU64>();
        if ptr.is_null() {
            return None;
        }
        // SAFETY: `ptr` comes from the global allocator with the layout of `[AtomicU64; n]`,
        // which is what `Box<[AtomicU64]>` frees it with; all-zero bytes are a valid
        // `AtomicU64` (it has the in-memory representation of `u64`), so all n are initialised.
        Some(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, n)) })
    }
    #[cfg(any(rshmem_loom, rshmem_shuttle))]
    {
        // The checkers' atomics are tracked objects that must be constructed one by one;
        // their segments are small.
        Some((0..n).map(|_| AtomicU64::new(0)).collect())
    }
}
