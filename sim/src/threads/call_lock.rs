//! The PE's call lock: one thread of a PE in its runtime at a time (see the module docs of
//! `sim::threads`).

use super::schedule::park_on;
use super::{PeThreads, ThreadError, ThreadId, running};
use crate::handle::PeHandle;

/// Takes the running PE's call lock for one call of its runtime, waiting while another of its
/// threads holds it; nested calls count. With `keep`, the caller keeps it even while it waits
/// for memory, for calls whose state is the PE's and not the thread's (a distributed lock,
/// whose queue has one place per PE). Nothing outside a simulated PE.
///
/// # Errors
/// As [`park`](super::park).
pub fn enter_call(keep: bool) -> Result<(), ThreadError> {
    let Ok(h) = running() else { return Ok(()) };
    h.threads.lock(&h, 1)?;
    if keep {
        h.threads.table.borrow_mut().lock_kept = true;
    }
    Ok(())
}

/// Releases what [`enter_call`] took.
pub fn leave_call() {
    if let Ok(h) = running() {
        let mut table = h.threads.table.borrow_mut();
        if table.lock_owner == Some(h.threads.current.get()) {
            table.lock_depth -= 1;
            if table.lock_depth == 0 {
                drop(table);
                h.threads.hand_lock_over();
            }
        }
    }
}

impl PeThreads {
    /// Takes the call lock for thread `current` at `depth`, waiting for it if another thread
    /// holds it: a releasing holder hands it to the first waiter.
    pub(super) fn lock(&self, h: &PeHandle, depth: u32) -> Result<(), ThreadError> {
        let me = self.current.get();
        loop {
            {
                let mut table = self.table.borrow_mut();
                match table.lock_owner {
                    None => {
                        table.lock_owner = Some(me);
                        table.lock_depth = depth;
                        return Ok(());
                    }
                    Some(owner) if owner == me => {
                        table.lock_depth += depth;
                        return Ok(());
                    }
                    Some(_) => {
                        if !table.lock_waiters.contains(&me) {
                            table.lock_waiters.push_back(me);
                        }
                    }
                }
            }
            let owner = self.table.borrow().lock_owner.unwrap_or(0);
            park_on(
                h,
                format!("waits for the PE's call lock, which thread {owner} holds"),
                None,
            )?;
        }
    }

    /// Releases the call lock if thread `me` holds it; returns the depth it held.
    pub(super) fn release_lock(&self, me: ThreadId) -> Option<u32> {
        let depth = {
            let table = self.table.borrow();
            (table.lock_owner == Some(me) && !table.lock_kept).then_some(table.lock_depth)
        };
        if depth.is_some() {
            self.hand_lock_over();
        }
        depth
    }

    /// Frees the call lock, waking its first waiter, which takes it when it runs (unless a
    /// thread that runs before it took it: then it waits again).
    pub(super) fn hand_lock_over(&self) {
        let waiter = {
            let mut table = self.table.borrow_mut();
            table.lock_owner = None;
            table.lock_depth = 0;
            table.lock_kept = false;
            table.lock_waiters.pop_front()
        };
        if let Some(waiter) = waiter {
            self.unpark(waiter);
        }
    }
}
