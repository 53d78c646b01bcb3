//! The thread-sanitizer hooks of device code built with `rshmem-nvcc -rshmem-check`, renamed
//! `__rsim_tsan_*`: the plain-access set of `csrc/check_hooks.c`.
//!
//! Each access goes to initcheck (`initcheck.rs`, for `__shared__` bytes) and, while a checked
//! simulated run is on, to the race detector as the C program's hooks do
//! (`sim_host/check.rs`). The atomics of the thread sanitizer are not among them: device
//! atomics reach libshmem as `__rsim_atomic`.

use std::ffi::c_void;
use std::sync::atomic::Ordering;

use crate::cuda_sim::initcheck;
use crate::sim_host::check::{rshmem_check_access, rshmem_check_on};

/// One access of `len` bytes at `addr` by device code.
fn note(addr: *const c_void, len: usize, write: bool) {
    crate::cuda_sim::guard("a memory access", || {
        if write {
            initcheck::write(addr as usize, len);
        } else {
            initcheck::read(addr as usize, len, "a load");
        }
        // Relaxed: set before any PE starts, by the one thread that runs them all.
        if rshmem_check_on.load(Ordering::Relaxed) != 0 {
            rshmem_check_access(addr, len, i32::from(write));
        }
    });
}

macro_rules! hooks {
    ($($bytes:literal: $read:ident $write:ident $ur:ident $uw:ident $vr:ident $vw:ident $rpc:ident $wpc:ident;)*) => {$(
        #[doc = concat!("A ", stringify!($bytes), "-byte load.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $read(addr: *const c_void) { note(addr, $bytes, false) }
        #[doc = concat!("A ", stringify!($bytes), "-byte store.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $write(addr: *const c_void) { note(addr, $bytes, true) }
        #[doc = concat!("An unaligned ", stringify!($bytes), "-byte load.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $ur(addr: *const c_void) { note(addr, $bytes, false) }
        #[doc = concat!("An unaligned ", stringify!($bytes), "-byte store.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $uw(addr: *const c_void) { note(addr, $bytes, true) }
        #[doc = concat!("A volatile ", stringify!($bytes), "-byte load.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $vr(addr: *const c_void) { note(addr, $bytes, false) }
        #[doc = concat!("A volatile ", stringify!($bytes), "-byte store.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $vw(addr: *const c_void) { note(addr, $bytes, true) }
        #[doc = concat!("A ", stringify!($bytes), "-byte load, with its program counter.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $rpc(addr: *const c_void, _pc: *const c_void) { note(addr, $bytes, false) }
        #[doc = concat!("A ", stringify!($bytes), "-byte store, with its program counter.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $wpc(addr: *const c_void, _pc: *const c_void) { note(addr, $bytes, true) }
    )*};
}

hooks! {
    1: __rsim_tsan_read1 __rsim_tsan_write1 __rsim_tsan_unaligned_read1 __rsim_tsan_unaligned_write1
       __rsim_tsan_volatile_read1 __rsim_tsan_volatile_write1 __rsim_tsan_read1_pc __rsim_tsan_write1_pc;
    2: __rsim_tsan_read2 __rsim_tsan_write2 __rsim_tsan_unaligned_read2 __rsim_tsan_unaligned_write2
       __rsim_tsan_volatile_read2 __rsim_tsan_volatile_write2 __rsim_tsan_read2_pc __rsim_tsan_write2_pc;
    4: __rsim_tsan_read4 __rsim_tsan_write4 __rsim_tsan_unaligned_read4 __rsim_tsan_unaligned_write4
       __rsim_tsan_volatile_read4 __rsim_tsan_volatile_write4 __rsim_tsan_read4_pc __rsim_tsan_write4_pc;
    8: __rsim_tsan_read8 __rsim_tsan_write8 __rsim_tsan_unaligned_read8 __rsim_tsan_unaligned_write8
       __rsim_tsan_volatile_read8 __rsim_tsan_volatile_write8 __rsim_tsan_read8_pc __rsim_tsan_write8_pc;
    16: __rsim_tsan_read16 __rsim_tsan_write16 __rsim_tsan_unaligned_read16 __rsim_tsan_unaligned_write16
       __rsim_tsan_volatile_read16 __rsim_tsan_volatile_write16 __rsim_tsan_read16_pc __rsim_tsan_write16_pc;
}

/// A load of `len` bytes.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_tsan_read_range(addr: *const c_void, len: usize) {
    note(addr, len, false);
}

/// A store of `len` bytes.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_tsan_write_range(addr: *const c_void, len: usize) {
    note(addr, len, true);
}

/// A store of a vtable pointer.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_tsan_vptr_update(slot: *const c_void, _value: *const c_void) {
    note(slot, size_of::<usize>(), true);
}

/// A load of a vtable pointer.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_tsan_vptr_read(slot: *const c_void) {
    note(slot, size_of::<usize>(), false);
}

/// Nothing to set up.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_tsan_init() {}

/// Function entries are not tracked.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_tsan_func_entry(_caller: *const c_void) {}

/// Function exits are not tracked.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_tsan_func_exit() {}

/// Ignored regions are not tracked.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_tsan_ignore_thread_begin() {}

/// Ignored regions are not tracked.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_tsan_ignore_thread_end() {}
