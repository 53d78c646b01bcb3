//! The race detector's view of a program's own loads and stores: what the hooks of a program
//! built with `oshcc -rshmem-check` report (`csrc/check_hooks.c`).
//!
//! Why: the detector (docs/check.md) sees what goes through the runtime, and a C program
//! reads the data a peer put with a plain load. The compiler's thread-sanitizer
//! instrumentation calls a hook before every load and store of the program; while a checked
//! simulated run is on, a hook on this PE's symmetric memory becomes the PE's local read or
//! write through its device, which the detector records like the Rust API's `local` and
//! `set_local`. A write is recorded with the bytes that are there (the store itself follows
//! the hook), so it changes nothing.

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicI32, Ordering};

use hw::{Device, LocalRange};
use rshmem::SymAddr;

use crate::state;

/// Non-zero while a checked simulated run is on: the hooks' fast path reads it.
#[unsafe(no_mangle)]
pub static rshmem_check_on: AtomicI32 = AtomicI32::new(0);

/// Turns the hooks on for this process (the host of a checked run).
pub(crate) fn turn_on() {
    // Relaxed: the one thread that runs every PE sets it before any PE starts.
    rshmem_check_on.store(1, Ordering::Relaxed);
}

/// A hook: the program is about to load (`write` 0) or store `bytes` bytes at `addr`.
#[unsafe(no_mangle)]
pub extern "C" fn rshmem_check_access(addr: *const c_void, bytes: usize, write: c_int) {
    let Some(pe) = state::running_pe() else {
        return;
    };
    let start = addr as u64;
    let Ok(first) = pe.shmem.symmetric_addr(start) else {
        // The stack, malloc'ed memory, the program's other data: not symmetric.
        return;
    };
    // An access that runs past the end of the PE's memory is recorded as far as it is there.
    let len_bytes = (1..bytes as u64)
        .rev()
        .find(|back| pe.shmem.symmetric_addr(start + back).is_ok())
        .map_or(1, |back| back + 1);
    let (kind, offset) = SymAddr(first.0).locate();
    let range = LocalRange {
        kind,
        offset,
        len: len_bytes,
    };
    let mut there = [0u8; 16];
    let mut longer = Vec::new();
    let buffer = if len_bytes as usize <= there.len() {
        &mut there[..len_bytes as usize]
    } else {
        longer.resize(len_bytes as usize, 0);
        &mut longer[..]
    };
    let device = pe.shmem.device();
    device.read_local(range, buffer);
    if write != 0 {
        device.write_local(range, buffer);
    }
}
