//! The thread-sanitizer hooks of device code built with `rshmem-nvcc -rshmem-check`, renamed
//! `__rsim_tsan_*`: the plain-access set of `csrc/check_hooks.c`.
//!
//! Each access goes to initcheck (`initcheck.rs`, for `__shared__` bytes) and, while a checked
//! simulated run is on, to the race detector: an access of symmetric memory as the C
//! program's hooks do (`sim_host/check.rs`), for races between PEs, and every access of
//! symmetric, `__shared__` or global memory as the running thread's, for races between the
//! threads of the launch (docs/check.md). An access through a view of a peer's memory
//! (`nvshmem_ptr`) is none of these but a get or put (`peer_views.rs`). The atomics of the thread sanitizer are not among
//! them: device atomics reach libshmem as `__rsim_atomic`, which calls [`thread_access`].

use std::ffi::c_void;
use std::sync::atomic::Ordering;

use hw::{Device, KernelEvent, KernelMemory, ThreadAccess};

use crate::cuda_sim::{fiber, initcheck, peer_views, stacks};
use crate::sim_host::check::{detecting, local_access, symmetric_range};

/// One access of `len` bytes at `addr` by device code.
fn note(addr: *const c_void, len: usize, access: ThreadAccess) {
    let write = matches!(access, ThreadAccess::Write | ThreadAccess::VolatileWrite);
    if peer_views::route(addr, len, write) {
        return;
    }
    crate::cuda_sim::guard("a memory access", || {
        if write {
            initcheck::write(addr as usize, len);
        } else {
            initcheck::read(addr as usize, len, "a load");
        }
        thread_access(addr, len, access);
    });
}

/// Tells the race detector, while a checked run is on, of the running GPU thread's access of
/// `len` bytes at `addr`: to symmetric memory also as the PE's local load or store.
pub(crate) fn thread_access(addr: *const c_void, len: usize, access: ThreadAccess) {
    if !detecting() {
        return;
    }
    let fiber = fiber::running();
    // `__shared__` variables are in the object's static data, which is symmetric: look for
    // the block's shared bytes first.
    let shared = fiber.and_then(|fiber| shared_offset(fiber, addr as usize));
    let symmetric = shared
        .is_none()
        .then(|| symmetric_range(addr, len))
        .flatten();
    if let Some(range) = symmetric {
        let write = !matches!(access, ThreadAccess::Read | ThreadAccess::VolatileRead);
        local_access(range, write);
        if let Some(fiber) = fiber {
            // Why: the device may have let other PEs' threads run, each of which made itself
            // running and put its block's shared bytes in place.
            fiber.enter();
        }
    }
    if fiber.is_none() {
        return;
    }
    let (memory, at, len_bytes) = if let Some(offset) = shared {
        (KernelMemory::Shared, offset as u64, len as u64)
    } else if let Some(range) = symmetric {
        (KernelMemory::Symmetric(range.kind), range.offset, range.len)
    } else if on_own_stack(addr as usize) {
        // A thread's locals: no other thread reaches them.
        return;
    } else {
        (KernelMemory::Global, addr as u64, len as u64)
    };
    let Some(pe) = crate::state::running_pe() else {
        return;
    };
    pe.shmem.device().note_kernel_event(KernelEvent::Access {
        memory,
        at,
        len_bytes,
        access,
    });
}

/// The offset of `addr` in the bytes of one block's `__shared__` memory, if it is there.
fn shared_offset(fiber: &fiber::Fiber<'_>, addr: usize) -> Option<usize> {
    let mut before = 0;
    for place in fiber.grid().shared.places() {
        if place.contains(&addr) {
            return Some(before + addr - place.start);
        }
        before += place.len();
    }
    None
}

/// Whether `addr` is on the running thread's stack: within a stack's length of this call's
/// own frame, which is on that stack (stacks are separate mappings, and `cudaMalloc`'s blocks
/// come from the heap).
fn on_own_stack(addr: usize) -> bool {
    let here = std::ptr::from_ref(&addr) as usize;
    addr.abs_diff(here) < stacks::STACK_BYTES
}

macro_rules! hooks {
    ($($bytes:literal: $read:ident $write:ident $ur:ident $uw:ident $vr:ident $vw:ident $rpc:ident $wpc:ident;)*) => {$(
        #[doc = concat!("A ", stringify!($bytes), "-byte load.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $read(addr: *const c_void) { note(addr, $bytes, ThreadAccess::Read) }
        #[doc = concat!("A ", stringify!($bytes), "-byte store.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $write(addr: *const c_void) { note(addr, $bytes, ThreadAccess::Write) }
        #[doc = concat!("An unaligned ", stringify!($bytes), "-byte load.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $ur(addr: *const c_void) { note(addr, $bytes, ThreadAccess::Read) }
        #[doc = concat!("An unaligned ", stringify!($bytes), "-byte store.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $uw(addr: *const c_void) { note(addr, $bytes, ThreadAccess::Write) }
        #[doc = concat!("A volatile ", stringify!($bytes), "-byte load.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $vr(addr: *const c_void) { note(addr, $bytes, ThreadAccess::VolatileRead) }
        #[doc = concat!("A volatile ", stringify!($bytes), "-byte store.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $vw(addr: *const c_void) { note(addr, $bytes, ThreadAccess::VolatileWrite) }
        #[doc = concat!("A ", stringify!($bytes), "-byte load, with its program counter.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $rpc(addr: *const c_void, _pc: *const c_void) { note(addr, $bytes, ThreadAccess::Read) }
        #[doc = concat!("A ", stringify!($bytes), "-byte store, with its program counter.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $wpc(addr: *const c_void, _pc: *const c_void) { note(addr, $bytes, ThreadAccess::Write) }
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
    note(addr, len, ThreadAccess::Read);
}

/// A store of `len` bytes.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_tsan_write_range(addr: *const c_void, len: usize) {
    note(addr, len, ThreadAccess::Write);
}

/// A store of a vtable pointer.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_tsan_vptr_update(slot: *const c_void, _value: *const c_void) {
    note(slot, size_of::<usize>(), ThreadAccess::Write);
}

/// A load of a vtable pointer.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_tsan_vptr_read(slot: *const c_void) {
    note(slot, size_of::<usize>(), ThreadAccess::Read);
}

/// Device code with the hooks is here: `nvshmem_ptr` may give views of peers.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_tsan_init() {
    // Relaxed: module constructors run before main and before any PE starts.
    peer_views::DEVICE_HOOKED.store(true, Ordering::Relaxed);
}

/// Function entries are not tracked.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_tsan_func_entry(_caller: *const c_void) {}

/// A function returns: a store it made through a view becomes a put now, before the thread
/// may end. Function exits are not tracked otherwise.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_tsan_func_exit() {
    peer_views::flush();
}

/// Ignored regions are not tracked.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_tsan_ignore_thread_begin() {}

/// Ignored regions are not tracked.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_tsan_ignore_thread_end() {}
