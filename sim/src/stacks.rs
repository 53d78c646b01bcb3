//! A per-thread pool of coroutine stacks.
//!
//! Allocating a stack maps memory, protects a guard page and faults its pages in; unmapping it
//! tears all that down again. That costs tens of microseconds per PE, more than a whole run of
//! a litmus test, and an exploration runs thousands of them one after another on one thread.
//! Stacks of finished coroutines therefore come back here and serve the next run. The pool is
//! small: a big run returns at most [`KEPT`] stacks, so it keeps no memory worth mentioning.

use std::cell::RefCell;

use corosensei::stack::DefaultStack;

/// Stacks kept per thread: enough for the largest explored programs.
const KEPT: usize = 16;

thread_local! {
    /// Free stacks, with the size each was asked for.
    static FREE: RefCell<Vec<(usize, DefaultStack)>> = const { RefCell::new(Vec::new()) };
}

/// A stack of `bytes`, reused if one is free.
pub(crate) fn take(bytes: usize) -> std::io::Result<DefaultStack> {
    let reused = FREE.with_borrow_mut(|free| {
        let i = free.iter().position(|&(b, _)| b == bytes)?;
        Some(free.swap_remove(i).1)
    });
    match reused {
        Some(stack) => Ok(stack),
        None => DefaultStack::new(bytes),
    }
}

/// Returns a stack of `bytes` that no coroutine uses any more.
pub(crate) fn give_back(bytes: usize, stack: DefaultStack) {
    FREE.with_borrow_mut(|free| {
        if free.len() < KEPT {
            free.push((bytes, stack));
        }
    });
}
