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
    if let Some(range) = symmetric_range(addr, bytes) {
        local_access(range, write != 0);
    }
}

/// The part of this PE's symmetric memory that `bytes` bytes at `addr` are, if they are in
/// it: an access that runs past the end of the PE's memory is taken as far as it is there.
/// `None` outside a PE, and for the stack, malloc'ed memory and the program's other data.
pub(crate) fn symmetric_range(addr: *const c_void, bytes: usize) -> Option<LocalRange> {
    let pe = state::running_pe()?;
    let start = addr as u64;
    let first = pe.shmem.symmetric_addr(start).ok()?;
    let len_bytes = (1..bytes as u64)
        .rev()
        .find(|back| pe.shmem.symmetric_addr(start + back).is_ok())
        .map_or(1, |back| back + 1);
    let (kind, offset) = SymAddr(first.0).locate();
    Some(LocalRange {
        kind,
        offset,
        len: len_bytes,
    })
}

/// This PE's load or store of `range`, recorded through its device: a load reads the bytes,
/// a store writes back the bytes that are there.
pub(crate) fn local_access(range: LocalRange, write: bool) {
    let Some(pe) = state::running_pe() else {
        return;
    };
    let mut there = [0u8; 16];
    let mut longer = Vec::new();
    let buffer = if range.len as usize <= there.len() {
        &mut there[..range.len as usize]
    } else {
        longer.resize(range.len as usize, 0);
        &mut longer[..]
    };
    let slot = state::slot();
    let device = pe.shmem.device();
    device.read_local(range, buffer);
    if write {
        device.write_local(range, buffer);
    }
    // Why: on the simulator the device may have let other PEs run, each of which made its own
    // slot current; this PE's program goes on with its own.
    // SAFETY: `slot` was current at entry, so it lives as long as `enter_slot` promised.
    unsafe { state::enter_slot(slot) };
}
