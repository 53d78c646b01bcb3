//! Loops that spin on a C11 atomic, on the simulator: one thread runs at a time there, and a
//! PE's clock moves only when its program calls the simulator, so a thread that loads an
//! atomic until another thread (or a peer's put) changes it would spin forever.
//!
//! The atomics of a program built with `oshcc -rshmem-check` reach the library as calls
//! (`csrc/check_hooks.c`). At each atomic load the PE's other ready threads may run first;
//! once one thread has loaded the same word [`SPIN_LOADS`] times in a row with no other atomic
//! between, it lets them run or, if none is ready, sleeps [`SPIN_SLEEP_NS`] of simulated time
//! (`sim::threads::relax`), so the world (and the threads that wait in it) goes on.
//! `sched_yield` does the same at every call. A program built without the flag has its atomics inlined, which
//! nothing sees: there, a loop must call `sched_yield` or SHMEM (docs/c-api.md).

use std::cell::Cell;

use super::{simulated, waiting};

/// Loads of one word in a row by one thread after which it is taken to spin.
pub(crate) const SPIN_LOADS: u32 = 16;

/// How long a spinning thread sleeps in simulated time: about one poll of a word a peer
/// writes over NVLink.
pub(crate) const SPIN_SLEEP_NS: u64 = 1_000;

thread_local! {
    /// The last atomic load: the PE, its thread, the word, and how many times in a row.
    static LAST_LOAD: Cell<(u32, u32, usize, u32)> = const { Cell::new((u32::MAX, 0, 0, 0)) };
}

/// The program does an atomic of the word at `addr`; `load` if it only reads it.
pub(crate) fn atomic(addr: usize, load: bool) {
    let Some(thread) = simulated() else {
        return;
    };
    let Some(pe) = crate::state::running_pe().map(|pe| pe.shmem.my_pe()) else {
        return;
    };
    if !load {
        LAST_LOAD.set((u32::MAX, 0, 0, 0));
        return;
    }
    let (last_pe, last_thread, last_addr, count) = LAST_LOAD.get();
    let count = if (last_pe, last_thread, last_addr) == (pe, thread, addr) {
        count + 1
    } else {
        1
    };
    if count < SPIN_LOADS {
        LAST_LOAD.set((pe, thread, addr, count));
        let _ = waiting("an atomic load", || {
            sim::threads::yield_now();
            Ok(())
        });
        return;
    }
    LAST_LOAD.set((pe, thread, addr, 0));
    let _ = waiting("an atomic load", || {
        sim::threads::relax(SPIN_SLEEP_NS, || {
            format!("spins on the atomic at {addr:#x}")
        })
    });
}
