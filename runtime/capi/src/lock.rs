//! Distributed locks: `shmem_set_lock`, `shmem_test_lock` and `shmem_clear_lock` on a
//! symmetric `long` (in a heap or static data) that is zero before its first use, as the
//! specification asks. The runtime's MCS queue lock does the work (`rshmem`'s `p2p/lock.rs`);
//! a lock taken twice, or cleared by a PE that does not hold it, ends the job with a message.

use std::ffi::{c_int, c_long};

use crate::state::with_pe;

/// Acquires the lock `lock`, waiting in line behind the PEs that asked first.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_set_lock(lock: *mut c_long) {
    with_pe("shmem_set_lock", |me| {
        Ok(me.shmem.set_lock(me.sym(lock.cast_const(), 1)?)?)
    });
}

/// Acquires `lock` if no PE holds it, without waiting: 0 if this call acquired it, 1 if not.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_test_lock(lock: *mut c_long) -> c_int {
    with_pe("shmem_test_lock", |me| {
        let acquired = me.shmem.test_lock(me.sym(lock.cast_const(), 1)?)?;
        Ok(c_int::from(!acquired))
    })
}

/// Releases `lock`, after completing this PE's operations on the default context.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_clear_lock(lock: *mut c_long) {
    with_pe("shmem_clear_lock", |me| {
        Ok(me.shmem.clear_lock(me.sym(lock.cast_const(), 1)?)?)
    });
}
