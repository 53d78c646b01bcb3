//! Put-with-signal and signal words in the C API: `put_signal` and `put_signal_nbi` (typed
//! over `stdrmatypes`, sized, and `putmem_signal`), with `ctx_` twins; `shmem_signal_fetch`,
//! `shmem_signal_add` and `shmem_signal_set` (OpenSHMEM 1.6, with `ctx_` twins) and
//! `shmem_signal_wait_until`.
//!
//! As in `rma.rs`, each family is one generic function that the typed, sized and byte exports
//! call with their own names; the signal word is a symmetric `uint64_t`.

use std::ffi::c_int;

use hw::SignalOp;
use rshmem::Element;

use crate::fail::CallError;
use crate::handles::shmem_ctx_t;
use crate::rma::{BLOCKING, NBI, source, twins};
use crate::setup::pe_number;
use crate::state::with_pe;

/// `SHMEM_SIGNAL_SET`: the signal word becomes the value.
pub const SIGNAL_SET: c_int = 0;
/// `SHMEM_SIGNAL_ADD`: the value is added to the signal word.
pub const SIGNAL_ADD: c_int = 1;

/// The runtime's signal operation for the C value `sig_op`.
///
/// # Errors
/// [`CallError::Argument`] for a value that is neither `SHMEM_SIGNAL_SET` nor `_ADD`.
pub(crate) fn op_of(sig_op: c_int) -> Result<SignalOp, CallError> {
    match sig_op {
        SIGNAL_SET => Ok(SignalOp::Set),
        SIGNAL_ADD => Ok(SignalOp::Add),
        other => Err(CallError::Argument(format!(
            "signal operation {other} is neither SHMEM_SIGNAL_SET nor SHMEM_SIGNAL_ADD; pass \
             one of those constants of shmem.h"
        ))),
    }
}

/// `shmem_put_signal` (`shmem_put_signal_nbi` when `nbi`): copies `nelems` elements to
/// `dest` on `pe`, then updates `sig_addr` there with `sig_op` and `signal`.
///
/// # Safety
/// `source` points to `nelems` readable elements.
#[allow(
    clippy::too_many_arguments,
    reason = "the C call's arguments, its name and form"
)]
unsafe fn put_signal<T: Element>(
    call: &'static str,
    nbi: bool,
    ctx: shmem_ctx_t,
    dest: *mut T,
    source_ptr: *const T,
    nelems: usize,
    sig_addr: *mut u64,
    signal: u64,
    sig_op: c_int,
    pe: c_int,
) {
    with_pe(call, |me| {
        let sig = me.sym(sig_addr.cast_const(), 1)?;
        let (op, pe) = (op_of(sig_op)?, pe_number(pe)?);
        let ctx = me.ctx(ctx)?;
        if nelems == 0 {
            // No data, so neither buffer is looked at; the signal is still delivered
            // (OpenSHMEM 1.5 section 9.8, shmem_put_signal). Done at once, which also
            // completes the `_nbi` form earlier than required.
            return Ok(ctx.signal_op(sig, signal, op, pe)?);
        }
        // SAFETY: the caller passes nelems readable elements.
        let data = unsafe { source(source_ptr, nelems) }?;
        let dst = me.sym(dest.cast_const(), nelems)?;
        if nbi {
            Ok(ctx.put_signal_nbi(dst, data, sig, signal, op, pe)?)
        } else {
            Ok(ctx.put_signal(dst, data, sig, signal, op, pe)?)
        }
    });
}

/// `shmem_signal_add` and `shmem_signal_set`: updates `sig_addr` on `pe` with `op` and
/// `signal`.
///
/// # Safety
/// None beyond the C contract: `sig_addr` is only translated, never dereferenced here.
unsafe fn signal_op(
    call: &'static str,
    op: SignalOp,
    ctx: shmem_ctx_t,
    sig_addr: *mut u64,
    signal: u64,
    pe: c_int,
) {
    with_pe(call, |me| {
        let sig = me.sym(sig_addr.cast_const(), 1)?;
        Ok(me.ctx(ctx)?.signal_op(sig, signal, op, pe_number(pe)?)?)
    });
}

/// The typed exports of the rows of `stdrmatypes`.
macro_rules! typed_put_signal {
    ($(($name:ident, $t:ty, $c:literal)),* $(,)?) => { paste::paste! { $(
        twins!([<shmem_ctx_ $name _put_signal>], [<shmem_ $name _put_signal>],
            concat!("Copies `nelems` `", $c, "`s to `dest` on `pe`, then updates the signal \
                     word `sig_addr` there."),
            (dest: *mut $t, source: *const $t, nelems: usize, sig_addr: *mut u64,
             signal: u64, sig_op: c_int, pe: c_int) -> () => put_signal, BLOCKING);
        twins!([<shmem_ctx_ $name _put_signal_nbi>], [<shmem_ $name _put_signal_nbi>],
            concat!("Copies `nelems` `", $c, "`s to `dest` on `pe`, then updates the signal \
                     word `sig_addr` there; completed by a quiet."),
            (dest: *mut $t, source: *const $t, nelems: usize, sig_addr: *mut u64,
             signal: u64, sig_op: c_int, pe: c_int) -> () => put_signal, NBI);
    )* } };
}

crate::rma_types!(typed_put_signal);

/// The sized exports (`shmem_put64_signal`), elements of SIZE bits.
macro_rules! sized_put_signal {
    ($($bits:literal => $t:ty),* $(,)?) => { paste::paste! { $(
        twins!([<shmem_ctx_put $bits _signal>], [<shmem_put $bits _signal>],
            concat!("Copies `nelems` ", $bits, "-bit elements to `dest` on `pe`, then \
                     updates the signal word `sig_addr` there."),
            (dest: *mut $t, source: *const $t, nelems: usize, sig_addr: *mut u64,
             signal: u64, sig_op: c_int, pe: c_int) -> () => put_signal, BLOCKING);
        twins!([<shmem_ctx_put $bits _signal_nbi>], [<shmem_put $bits _signal_nbi>],
            concat!("Copies `nelems` ", $bits, "-bit elements to `dest` on `pe`, then \
                     updates the signal word `sig_addr` there; completed by a quiet."),
            (dest: *mut $t, source: *const $t, nelems: usize, sig_addr: *mut u64,
             signal: u64, sig_op: c_int, pe: c_int) -> () => put_signal, NBI);
    )* } };
}

sized_put_signal!(8 => u8, 16 => u16, 32 => u32, 64 => u64, 128 => u128);

twins!(shmem_ctx_putmem_signal, shmem_putmem_signal,
    "Copies `nelems` bytes to `dest` on `pe`, then updates the signal word `sig_addr` there.",
    (dest: *mut u8, source: *const u8, nelems: usize, sig_addr: *mut u64, signal: u64,
     sig_op: c_int, pe: c_int) -> () => put_signal, BLOCKING);
twins!(shmem_ctx_putmem_signal_nbi, shmem_putmem_signal_nbi,
    "Copies `nelems` bytes to `dest` on `pe`, then updates the signal word `sig_addr` there; \
     completed by a quiet.",
    (dest: *mut u8, source: *const u8, nelems: usize, sig_addr: *mut u64, signal: u64,
     sig_op: c_int, pe: c_int) -> () => put_signal, NBI);
twins!(shmem_ctx_signal_add, shmem_signal_add,
    "Adds `signal` to the signal word `sig_addr` on `pe` (OpenSHMEM 1.6).",
    (sig_addr: *mut u64, signal: u64, pe: c_int) -> () => signal_op, SignalOp::Add);
twins!(shmem_ctx_signal_set, shmem_signal_set,
    "Sets the signal word `sig_addr` on `pe` to `signal` (OpenSHMEM 1.6).",
    (sig_addr: *mut u64, signal: u64, pe: c_int) -> () => signal_op, SignalOp::Set);

/// This PE's signal word `sig_addr`, read atomically.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_signal_fetch(sig_addr: *const u64) -> u64 {
    with_pe("shmem_signal_fetch", |me| {
        Ok(me.shmem.signal_fetch(me.sym(sig_addr, 1)?)?)
    })
}

/// Blocks until this PE's signal word `sig_addr` satisfies `cmp` with `cmp_value`, and
/// returns the value that did.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_signal_wait_until(sig_addr: *mut u64, cmp: c_int, cmp_value: u64) -> u64 {
    with_pe("shmem_signal_wait_until", |me| {
        let sig = me.sym(sig_addr.cast_const(), 1)?;
        let cmp = crate::cmp::cmp_of(cmp)?;
        Ok(me.shmem.signal_wait_until(sig, cmp, cmp_value)?)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signal_operations_map_and_others_are_refused() {
        assert_eq!(op_of(SIGNAL_SET).unwrap(), SignalOp::Set);
        assert_eq!(op_of(SIGNAL_ADD).unwrap(), SignalOp::Add);
        let err = op_of(7).unwrap_err().to_string();
        assert!(err.contains("signal operation 7"), "{err}");
    }
}
