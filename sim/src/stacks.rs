//! Coroutine stacks: mapped lazily, and kept in a per-thread pool.
//!
//! A C program on the simulator needs a real program's stack (megabytes), and a run may have
//! a thousand PEs. A stack is therefore an anonymous mapping with `MAP_NORESERVE` and a guard
//! page below it: address space only, which the OS commits page by page as the coroutine
//! touches it, so 1024 stacks of 8 MiB cost 8 GiB of address space and the few pages each PE
//! uses. (corosensei's `DefaultStack` maps without `MAP_NORESERVE`, which charges the whole
//! size to the commit limit.) An overflow hits the guard page and faults, as on a thread.
//!
//! Mapping a stack and unmapping it costs system calls, more than a whole run of a litmus
//! test, and an exploration runs thousands of runs one after another on one thread. Stacks of
//! finished coroutines therefore come back here and serve the next run. The pool is small: a
//! big run returns at most [`KEPT`] stacks, so it keeps no memory worth mentioning.

use std::cell::RefCell;
use std::io;
use std::ptr::NonNull;

use corosensei::stack::{MIN_STACK_SIZE, Stack, StackPointer};

use crate::mapping::{map_lazily, unmap};

/// Stacks kept per thread: enough for the largest explored programs.
const KEPT: usize = 16;

/// The OS's page size: the guard page's size, and what the mapping is rounded to.
fn page_bytes() -> usize {
    // SAFETY: sysconf reads a constant of the system; no memory is involved.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(page).unwrap_or(4096)
}

/// A coroutine stack: a guard page at the bottom, then the usable bytes.
#[derive(Debug)]
pub(crate) struct LazyStack {
    /// The lowest address of the mapping, which is the guard page.
    bottom: NonNull<u8>,
    /// The mapping's length, guard page included.
    len: usize,
}

impl LazyStack {
    /// Maps a stack of at least `bytes` usable bytes.
    fn new(bytes: usize) -> io::Result<LazyStack> {
        let guard_bytes = page_bytes();
        let len = bytes
            .max(MIN_STACK_SIZE)
            .checked_next_multiple_of(guard_bytes)
            .and_then(|usable| usable.checked_add(guard_bytes))
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "stack too large"))?;
        let bottom = map_lazily(len)?;
        // Owned from here, so an early return below unmaps it.
        let stack = LazyStack { bottom, len };
        // SAFETY: the first page of the mapping just made; nothing uses it yet.
        if unsafe { libc::mprotect(bottom.as_ptr().cast(), guard_bytes, libc::PROT_NONE) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(stack)
    }
}

impl Drop for LazyStack {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, which no coroutine runs on any more: a stack is
        // dropped only after its coroutine finished or was unwound.
        unsafe { unmap(self.bottom, self.len) };
    }
}

// SAFETY: the mapping has a guard page at its lowest address (mapped `PROT_NONE` in `new`)
// and at least `MIN_STACK_SIZE` usable bytes above it; both ends are page-aligned, so aligned
// to `STACK_ALIGNMENT`, and the mapping lives as long as the value.
unsafe impl Stack for LazyStack {
    fn base(&self) -> StackPointer {
        StackPointer::new(self.bottom.as_ptr() as usize + self.len).expect("a mapping's end")
    }

    fn limit(&self) -> StackPointer {
        StackPointer::new(self.bottom.as_ptr() as usize).expect("a mapping's start")
    }
}

thread_local! {
    /// Free stacks, with the size each was asked for.
    static FREE: RefCell<Vec<(usize, LazyStack)>> = const { RefCell::new(Vec::new()) };
}

/// A stack of `bytes`, reused if one is free.
pub(crate) fn take(bytes: usize) -> io::Result<LazyStack> {
    let reused = FREE.with_borrow_mut(|free| {
        let i = free.iter().position(|&(b, _)| b == bytes)?;
        Some(free.swap_remove(i).1)
    });
    match reused {
        Some(stack) => Ok(stack),
        None => LazyStack::new(bytes),
    }
}

/// Returns a stack of `bytes` that no coroutine uses any more.
pub(crate) fn give_back(bytes: usize, stack: LazyStack) {
    FREE.with_borrow_mut(|free| {
        if free.len() < KEPT {
            free.push((bytes, stack));
        }
    });
}
