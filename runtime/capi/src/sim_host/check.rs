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
//!
//! Once the PE's program has started threads (`threads/`), each access is also the running
//! thread's, for races between the threads ([`thread_event`]), and the program's C11 atomics
//! (which the instrumentation turns into calls, `rshmem_check_atomic`) synchronise them.

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicI32, Ordering};

use hw::{Device, HostThreadEvent, KernelMemory, LocalRange, ThreadAccess};
use rshmem::SymAddr;

use crate::state;

/// Non-zero while the hooks have work: bit [`DETECTING`] while a checked simulated run is on,
/// bit [`ROUTING`] once a view of a peer's memory exists (`cuda_sim/peer_views.rs`). The
/// hooks' fast path reads it.
#[unsafe(no_mangle)]
pub static rshmem_check_on: AtomicI32 = AtomicI32::new(0);

/// The bit of [`rshmem_check_on`] that says the race detector is on.
const DETECTING: i32 = 1;
/// The bit of [`rshmem_check_on`] that says accesses may be through a view of a peer.
const ROUTING: i32 = 2;

/// Whether the race detector is on (a checked simulated run).
pub(crate) fn detecting() -> bool {
    // Relaxed: set before any PE starts, by the one thread that runs them all.
    rshmem_check_on.load(Ordering::Relaxed) & DETECTING != 0
}

/// Makes the host hooks call [`rshmem_check_access`] even with the detector off, so that
/// accesses through views become operations.
pub(crate) fn routing() {
    // Relaxed: the one thread that runs every PE sets it.
    rshmem_check_on.fetch_or(ROUTING, Ordering::Relaxed);
}

/// Non-zero while a simulated run is on: the atomics' hooks read it (`threads/spin.rs`).
#[unsafe(no_mangle)]
pub static rshmem_sim_on: AtomicI32 = AtomicI32::new(0);

/// Turns the atomics' hooks on for this process (the host of a simulated run).
pub(crate) fn simulating() {
    // Relaxed: the one thread that runs every PE sets it before any PE starts.
    rshmem_sim_on.store(1, Ordering::Relaxed);
}

/// Turns the hooks on for this process (the host of a checked run).
pub(crate) fn turn_on() {
    // Relaxed: the one thread that runs every PE sets it before any PE starts.
    rshmem_check_on.fetch_or(DETECTING, Ordering::Relaxed);
}

/// A hook: the program is about to load (`write` 0) or store `bytes` bytes at `addr`: through
/// a view of a peer, an operation (`cuda_sim/peer_views.rs`); elsewhere, while the detector is
/// on, an access it records.
#[unsafe(no_mangle)]
pub extern "C" fn rshmem_check_access(addr: *const c_void, bytes: usize, write: c_int) {
    if crate::cuda_sim::peer_views::route(addr, bytes, write != 0) || !detecting() {
        return;
    }
    let symmetric = symmetric_range(addr, bytes);
    if let Some(range) = symmetric {
        local_access(range, write != 0);
    }
    let access = if write != 0 {
        ThreadAccess::Write
    } else {
        ThreadAccess::Read
    };
    thread_access(addr, bytes, symmetric, access);
}

/// What a C11 atomic of the program does: `how` 0 loads, 1 stores, 2 reads, modifies and
/// writes (the hooks' codes, `csrc/check_hooks.c`).
const ATOMIC_LOAD: c_int = 0;
const ATOMIC_STORE: c_int = 1;

/// A hook: the program is about to do a C11 atomic of `bytes` bytes at `addr` (`how` says
/// which kind). In a checked run it is the running thread's synchronising access; on the
/// simulator an atomic load may let the PE's other threads, or time, go on
/// (`threads::spin`), so that a loop that spins on an atomic does not hang the run.
#[unsafe(no_mangle)]
pub extern "C" fn rshmem_check_atomic(addr: *const c_void, bytes: usize, how: c_int) {
    // First the turn of the others: the atomic itself is done after the hook returns, so it
    // sees what they did, and is recorded after it.
    crate::cuda_sim::peer_views::flush();
    crate::sim_host::threads::spin::atomic(addr as usize, how == ATOMIC_LOAD);
    if detecting() {
        let access = match how {
            ATOMIC_LOAD => ThreadAccess::VolatileRead,
            ATOMIC_STORE => ThreadAccess::VolatileWrite,
            _ => ThreadAccess::Atomic { fetch: true },
        };
        thread_access(addr, bytes, symmetric_range(addr, bytes), access);
    }
}

/// Tells the detector of the running thread's access of `bytes` bytes at `addr` (`symmetric`
/// if they are this PE's symmetric memory), once the PE's program has started threads. The
/// thread's own stack is left out: no other thread reaches it but through a pointer it was
/// given, which is rare, and its every local would cost a record.
fn thread_access(
    addr: *const c_void,
    bytes: usize,
    symmetric: Option<LocalRange>,
    access: ThreadAccess,
) {
    if !sim::threads::any_started() {
        return;
    }
    let (memory, at, len_bytes) = match symmetric {
        Some(range) => (KernelMemory::Symmetric(range.kind), range.offset, range.len),
        None => {
            if sim::threads::current_stack().is_some_and(|stack| stack.contains(&(addr as usize))) {
                return;
            }
            (KernelMemory::Global, addr as u64, bytes as u64)
        }
    };
    thread_event(|thread| HostThreadEvent::Access {
        thread,
        memory,
        at,
        len_bytes,
        access,
    });
}

/// Tells the race detector, while a checked simulated run is on and once any PE started a
/// thread, what the calling thread of the running PE did: `event` is given its number.
pub(crate) fn thread_event(event: impl FnOnce(u32) -> HostThreadEvent) {
    if !detecting() || !sim::threads::any_started() {
        return;
    }
    let (Some(thread), Some(pe)) = (sim::threads::current(), state::running_pe()) else {
        return;
    };
    pe.shmem.device().note_host_thread_event(event(thread));
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
