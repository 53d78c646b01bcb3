//! Distributed locks (`shmem_set_lock`, `shmem_test_lock`, `shmem_clear_lock`): an MCS queue
//! lock over remote atomics, laid out as Sandia OpenSHMEM lays out its locks.
//!
//! A lock is a symmetric `i64` that is zero before its first use, as OpenSHMEM's `long`. Its
//! two 32-bit halves are used with 32-bit atomics only:
//! - `tail` (bytes 0..4), used on PE 0 only: the last PE in the queue, plus one; 0 when the
//!   lock is free.
//! - `next` (bytes 4..8), on every PE: the PE queued right behind this one, plus one
//!   ([`LINK_MASK`]), and [`WAITING`], which a PE sets before it queues and its predecessor
//!   clears to hand the lock over.
//!
//! Why MCS: each PE that has to wait waits on its own word with `wait_until`, so it blocks
//! (the simulator runs the others, and reports a deadlock if nobody will hand over) instead of
//! polling a remote word, and the queue hands the lock over in arrival order, so no PE starves.

use std::cell::RefCell;
use std::collections::BTreeSet;

use hw::{Backend, Cmp};

use crate::error::ShmemError;
use crate::memory::sym::Sym;
use crate::pe::word_access;
use crate::shmem::Shmem;

/// The PE whose `tail` word is the lock's queue tail.
const HOME_PE: u32 = 0;
/// The bit of `next` that says its PE still waits for the lock.
const WAITING: u32 = 1 << 31;
/// The bits of `next` that hold the successor PE plus one.
const LINK_MASK: u32 = WAITING - 1;

/// The locks one PE holds, by heap offset: taking a held lock again would wait for itself,
/// and releasing one not held would corrupt the queue, so both are refused.
#[derive(Debug, Default)]
pub(crate) struct HeldLocks(RefCell<BTreeSet<u64>>);

impl HeldLocks {
    fn check_not_held(&self, op: &'static str, offset: u64) -> Result<(), ShmemError> {
        if self.0.borrow().contains(&offset) {
            return Err(ShmemError::LockAlreadyHeld { op, offset });
        }
        Ok(())
    }

    fn hold(&self, offset: u64) {
        self.0.borrow_mut().insert(offset);
    }

    fn release(&self, offset: u64) -> Result<(), ShmemError> {
        if self.0.borrow_mut().remove(&offset) {
            Ok(())
        } else {
            Err(ShmemError::LockNotHeld { offset })
        }
    }
}

/// The two halves of a lock.
#[derive(Clone, Copy, Debug)]
struct LockWords {
    /// The heap offset of the lock, which names it.
    offset: u64,
    tail: Sym<u32>,
    next: Sym<u32>,
}

impl<B: Backend> Shmem<B> {
    /// Acquires `lock`, waiting in line behind the PEs that asked first (`shmem_set_lock`).
    /// `lock` is a symmetric `i64` that was zero before its first use and that only the lock
    /// functions touch.
    ///
    /// # Ordering
    /// The stores of the previous holder's critical section are complete (its
    /// [`Shmem::clear_lock`] quieted them), so a get here sees them. With InfiniBand in the
    /// path the visibility rule of docs/ordering.md still holds: a store that crossed a NIC to a
    /// third PE is seen by gets through a NIC at once, but by that PE's NVLink peers only
    /// after the third PE's own wait, test, quiet or barrier.
    ///
    /// # Errors
    /// [`ShmemError::LockAlreadyHeld`] if this PE holds `lock`;
    /// [`ShmemError::LengthMismatch`] unless `lock` is one element; an address error
    /// ([`ShmemError::NotInHeap`], `OutsideAllocation`, `Misaligned`, `FreedAllocation`);
    /// [`ShmemError::Queue`] if the lock is not handed over within `RSHMEM_WAIT_TIMEOUT_MS`
    /// or no PE can make progress.
    pub fn set_lock(&self, lock: Sym<i64>) -> Result<(), ShmemError> {
        let words = self.lock_words(lock)?;
        self.locks.check_not_held("set_lock", words.offset)?;
        let me = self.my_pe;
        // Why fetching operations here: each must be complete before the next step, and a
        // fetch is the operation that waits for it.
        self.atomic_swap(words.next, WAITING, me)?;
        let prev = self.atomic_swap(words.tail, me + 1, HOME_PE)?;
        if prev == 0 {
            // Free: nobody hands over, so `next` keeps only the link a successor may add.
            self.atomic_fetch_and(words.next, LINK_MASK, me)?;
        } else {
            self.atomic_or(words.next, me + 1, prev - 1)?;
            self.wait_word(words.next, Cmp::Lt, WAITING, "set_lock")?;
        }
        self.locks.hold(words.offset);
        Ok(())
    }

    /// Acquires `lock` if no PE holds it or waits for it, without waiting
    /// (`shmem_test_lock`). Returns whether it acquired the lock (OpenSHMEM's 0).
    ///
    /// # Ordering
    /// As [`Shmem::set_lock`] when it returns `true`.
    ///
    /// # Errors
    /// As [`Shmem::set_lock`]; [`ShmemError::Queue`] if an atomic's value does not arrive
    /// within `RSHMEM_WAIT_TIMEOUT_MS`.
    pub fn test_lock(&self, lock: Sym<i64>) -> Result<bool, ShmemError> {
        let words = self.lock_words(lock)?;
        self.locks.check_not_held("test_lock", words.offset)?;
        let me = self.my_pe;
        self.atomic_swap(words.next, 0, me)?;
        let acquired = self.atomic_compare_swap(words.tail, 0, me + 1, HOME_PE)? == 0;
        if acquired {
            self.locks.hold(words.offset);
        }
        Ok(acquired)
    }

    /// Releases `lock`, handing it to the PE that queued next, if any
    /// (`shmem_clear_lock`).
    ///
    /// # Ordering
    /// Quiets the default context first, so the critical section's puts and atomics are
    /// complete before the next holder starts. Other contexts need their own
    /// [`crate::Ctx::quiet`] before this.
    ///
    /// # Errors
    /// [`ShmemError::LockNotHeld`] if this PE does not hold `lock`;
    /// [`ShmemError::LengthMismatch`] unless `lock` is one element; an address error
    /// ([`ShmemError::NotInHeap`], `OutsideAllocation`, `Misaligned`, `FreedAllocation`);
    /// [`ShmemError::Queue`] if the quiet, an atomic or the wait for a late successor does
    /// not complete within `RSHMEM_WAIT_TIMEOUT_MS`.
    pub fn clear_lock(&self, lock: Sym<i64>) -> Result<(), ShmemError> {
        let words = self.lock_words(lock)?;
        self.locks.release(words.offset)?;
        let me = self.my_pe;
        self.quiet()?;
        let mut link = self.atomic_fetch(words.next, me)? & LINK_MASK;
        if link == 0 {
            if self.atomic_compare_swap(words.tail, me + 1, 0, HOME_PE)? == me + 1 {
                return Ok(());
            }
            // A PE made itself the tail but has not linked behind this one yet.
            link = self.wait_word(words.next, Cmp::Ne, 0, "clear_lock")? & LINK_MASK;
        }
        self.atomic_and(words.next, LINK_MASK, link - 1)?;
        Ok(())
    }

    /// Checks `lock` and returns its halves.
    fn lock_words(&self, lock: Sym<i64>) -> Result<LockWords, ShmemError> {
        let access = word_access(lock)?;
        // Why check now: a bad lock is an error before any PE's queue is touched.
        self.local_range(access)?;
        Ok(LockWords {
            offset: access.offset,
            tail: Sym::new(access.offset, 1, access.owner),
            next: Sym::new(access.offset + 4, 1, access.owner),
        })
    }
}
