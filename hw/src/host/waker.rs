//! How a PE sleeps until a peer writes its memory, without a lost wake-up and without making
//! every write take a lock.
//!
//! Only the owning PE's thread ever waits on its memory, so a writer needs to wake at most
//! that one thread. A writer takes the lock only when the owner announced that it sleeps
//! (`waiters > 0`). The race between "the writer checks `waiters`" and "the waiter checks the
//! word" is the store-buffering shape: writer `store word; read waiters`, waiter
//! `store waiters; read word`. Both sides put a `fence(SeqCst)` between their store and their
//! read, so at least one of them sees the other's store: either the writer sees the waiter
//! and notifies it under the lock (which the waiter holds from announcing until it sleeps, so
//! the notification cannot slip in between), or the waiter sees the word and does not sleep.
//! The fences are explicit because loom models SeqCst *accesses* only as AcqRel.

use crate::sync::{self, AtomicU64, Clock, Condvar, Mutex, Ordering, fence};

/// One PE's sleep and wake-up.
#[derive(Debug)]
pub(crate) struct Waker {
    /// How many threads announced that they may sleep (0 or 1: the owner).
    waiters: AtomicU64,
    lock: Mutex<()>,
    cv: Condvar,
}

impl Waker {
    pub(crate) fn new() -> Waker {
        Waker {
            waiters: AtomicU64::new(0),
            lock: Mutex::new(()),
            cv: Condvar::new(),
        }
    }

    /// Called by a writer after its stores to the owner's memory: wakes the owner if it may
    /// be asleep. `sc_fence` is false only in the deliberately broken loom variant.
    pub(crate) fn notify(&self, sc_fence: bool) {
        if sc_fence {
            // Orders the caller's stores before the read of `waiters` (see the module docs).
            fence(Ordering::SeqCst);
        }
        if self.waiters.load(Ordering::Relaxed) != 0 {
            let _guard = sync::lock(&self.lock);
            self.cv.notify_all();
        }
    }

    /// Runs `check` until it returns `Some`, sleeping between tries until a writer notifies;
    /// `Err(())` once `deadline` passes.
    pub(crate) fn wait_for<T>(
        &self,
        mut check: impl FnMut() -> Option<T>,
        deadline: Option<Clock>,
        sc_fence: bool,
    ) -> Result<T, ()> {
        if let Some(v) = check() {
            return Ok(v);
        }
        let mut guard = sync::lock(&self.lock);
        // Relaxed: the fence below orders this store before the checks.
        self.waiters.fetch_add(1, Ordering::Relaxed);
        if sc_fence {
            fence(Ordering::SeqCst);
        }
        let result = loop {
            if let Some(v) = check() {
                break Ok(v);
            }
            let (g, timed_out) = sync::wait(&self.cv, guard, deadline);
            guard = g;
            if timed_out {
                break check().ok_or(());
            }
        };
        // A writer that still sees 1 only takes the lock once more for nothing.
        self.waiters.fetch_sub(1, Ordering::Relaxed);
        drop(guard);
        result
    }
}
