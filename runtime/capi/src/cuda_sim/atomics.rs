//! Device atomics (`atomicAdd` and friends) on the PE's own memory, global or shared.
//!
//! A plain read-modify-write: GPU threads switch only inside calls, so no other thread of the
//! PE comes between the read and the write, and another process's PE reaches this memory only
//! through SHMEM, whose atomics the runtime orders. A misaligned or null address is a GPU
//! trap: the run ends naming the thread.

use std::ffi::{c_int, c_void};

use crate::cuda_sim::{fiber, guard, initcheck};

/// `RSHMEMD_AMO_*` and `RSIM_ATOMIC_*` of the headers.
mod op {
    pub(super) const FETCH: i32 = 0;
    pub(super) const SET: i32 = 1;
    pub(super) const SWAP: i32 = 2;
    pub(super) const COMPARE_SWAP: i32 = 3;
    pub(super) const FETCH_INC: i32 = 4;
    pub(super) const INC: i32 = 5;
    pub(super) const FETCH_ADD: i32 = 6;
    pub(super) const ADD: i32 = 7;
    pub(super) const FETCH_AND: i32 = 8;
    pub(super) const AND: i32 = 9;
    pub(super) const FETCH_OR: i32 = 10;
    pub(super) const OR: i32 = 11;
    pub(super) const FETCH_XOR: i32 = 12;
    pub(super) const XOR: i32 = 13;
    pub(super) const MIN: i32 = 100;
    pub(super) const MAX: i32 = 101;
    pub(super) const INC_WRAP: i32 = 102;
    pub(super) const DEC_WRAP: i32 = 103;
}

/// The CUDA name of `op`, for messages.
pub(crate) fn name(op: c_int) -> &'static str {
    match op {
        op::FETCH => "atomic load",
        op::SET => "atomic store",
        op::SWAP => "atomicExch",
        op::COMPARE_SWAP => "atomicCAS",
        op::FETCH_INC | op::INC | op::FETCH_ADD | op::ADD => "atomicAdd",
        op::FETCH_AND | op::AND => "atomicAnd",
        op::FETCH_OR | op::OR => "atomicOr",
        op::FETCH_XOR | op::XOR => "atomicXor",
        op::MIN => "atomicMin",
        op::MAX => "atomicMax",
        op::INC_WRAP => "atomicInc",
        op::DEC_WRAP => "atomicDec",
        _ => "an atomic",
    }
}

/// The new value of an integer operation, or `None` for an operation integers lack.
macro_rules! int_op {
    ($t:ty, $old:expr, $op:expr, $v:expr, $c:expr) => {{
        let (old, v, c): ($t, $t, $t) = ($old, $v, $c);
        match $op {
            op::FETCH => Some(old),
            op::SET | op::SWAP => Some(v),
            op::COMPARE_SWAP => Some(if old == c { v } else { old }),
            op::FETCH_INC | op::INC => Some(old.wrapping_add(1)),
            op::FETCH_ADD | op::ADD => Some(old.wrapping_add(v)),
            op::FETCH_AND | op::AND => Some(old & v),
            op::FETCH_OR | op::OR => Some(old | v),
            op::FETCH_XOR | op::XOR => Some(old ^ v),
            op::MIN => Some(old.min(v)),
            op::MAX => Some(old.max(v)),
            op::INC_WRAP => Some(if old >= v { 0 } else { old.wrapping_add(1) }),
            op::DEC_WRAP => Some(if old == 0 || old > v { v } else { old - 1 }),
            _ => None,
        }
    }};
}

/// The new value of a floating-point operation, or `None` for one floats lack.
macro_rules! float_op {
    ($t:ty, $old:expr, $op:expr, $v:expr, $c:expr) => {{
        let (old, v, c): ($t, $t, $t) = ($old, $v, $c);
        match $op {
            op::FETCH => Some(old),
            op::SET | op::SWAP => Some(v),
            op::COMPARE_SWAP => Some(if old.to_bits() == c.to_bits() { v } else { old }),
            op::FETCH_ADD | op::ADD => Some(old + v),
            op::MIN => Some(old.min(v)),
            op::MAX => Some(old.max(v)),
            _ => None,
        }
    }};
}

/// Does `op` on the element of `type_code` at `addr`; the old bits, or why it cannot.
///
/// # Safety
/// `addr` is aligned to the element and points at memory of this PE.
unsafe fn apply(
    addr: *mut c_void,
    op: c_int,
    type_code: c_int,
    value: u64,
    compare: u64,
) -> Result<u64, String> {
    macro_rules! rmw {
        ($t:ty, $kind:ident, $from:expr, $to:expr) => {{
            let at = addr.cast::<$t>();
            // SAFETY: the caller's contract.
            let old = unsafe { at.read() };
            let new = $kind!($t, old, op, $from(value), $from(compare));
            let new = new.ok_or_else(|| format!("{} has no {}", stringify!($t), name(op)))?;
            // SAFETY: as above.
            unsafe { at.write(new) };
            Ok($to(old))
        }};
    }
    match type_code {
        0x004 => rmw!(i32, int_op, |v: u64| v as i32, |o: i32| u64::from(o as u32)),
        0x008 => rmw!(i64, int_op, |v: u64| v as i64, |o: i64| o as u64),
        0x102 => rmw!(u16, int_op, |v: u64| v as u16, u64::from),
        0x104 => rmw!(u32, int_op, |v: u64| v as u32, u64::from),
        0x108 => rmw!(u64, int_op, |v: u64| v, |o: u64| o),
        0x204 => rmw!(
            f32,
            float_op,
            |v: u64| f32::from_bits(v as u32),
            |o: f32| u64::from(o.to_bits())
        ),
        0x208 => rmw!(f64, float_op, f64::from_bits, f64::to_bits),
        _ => Err(format!(
            "element type {type_code:#x} is not one device atomics take"
        )),
    }
}

/// A device atomic on this PE's memory: `op` as `RSHMEMD_AMO_*` or `RSIM_ATOMIC_*`, `type_code`
/// as `RSHMEMD_TYPE`; returns the old bits.
///
/// # Safety
/// `addr` points at an element of `type_code` in memory of this PE.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __rsim_atomic(
    addr: *mut c_void,
    op: c_int,
    type_code: c_int,
    value: u64,
    compare: u64,
) -> u64 {
    guard("atomic", || {
        let size = (type_code & 0xff) as usize;
        if addr.is_null() || size == 0 || !(addr as usize).is_multiple_of(size) {
            fiber::fail(
                name(op),
                &format!("misaligned or null address {addr:p} for a {size}-byte atomic"),
            );
        }
        initcheck::read(addr as usize, size, name(op));
        let fetch = hw::ThreadAccess::Atomic { fetch: true };
        crate::cuda_sim::tsan_hooks::thread_access(addr, size, fetch);
        // SAFETY: checked aligned and non-null above; the caller's contract for the rest.
        match unsafe { apply(addr, op, type_code, value, compare) } {
            Ok(old) => {
                initcheck::write(addr as usize, size);
                old
            }
            Err(why) => fiber::fail(name(op), &why),
        }
    })
}
