//! Remote memory access of the C API: the typed `put`, `get`, `p`, `g`, `iput`, `iget`,
//! `ibput`, `ibget`, `put_nbi` and `get_nbi` over the `stdrmatypes` table, each with its
//! `ctx_` twin, and the argument conversion every RMA and signal export shares.
//!
//! Each family is one generic function here (`put::<T>`), which the typed exports
//! (`shmem_ctx_long_put`, over [`crate::rma_types`]) and the sized ones (`shmem_put64`, in
//! `rma_sized.rs`, over `u8`..`u128`) call with their own name for error messages. The plain
//! name passes the null handle, `SHMEM_CTX_DEFAULT`.
//!
//! Local buffers become slices after a check (not null unless empty, aligned for the element),
//! so a bad pointer is an error naming the call, not undefined behaviour; remote ones become
//! symmetric views, which the runtime checks. A transfer of no elements moves nothing and
//! looks at neither buffer, so either may be null (OpenSHMEM 1.5 section 9.6 gives
//! `nelems` no lower bound). Non-blocking gets need a symmetric destination
//! in the runtime; into private memory a `get_nbi` is made blocking, which completes it
//! earlier than the specification requires and so keeps its contract.

use std::ffi::c_int;

use rshmem::Element;

use crate::fail::CallError;
use crate::handles::shmem_ctx_t;
use crate::setup::pe_number;
use crate::state::with_pe;

/// Defines a C function and its `ctx_` twin from one inner function that takes the call's
/// name, an optional flag (which form of the family) and the context first:
/// `twins!(shmem_ctx_long_put, shmem_long_put, "doc", (dest: *mut c_long, ...) -> () => put,
/// BLOCKING)`.
macro_rules! twins {
    ($ctx_fn:ident, $plain_fn:ident, $doc:expr,
     ($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty => $inner:path $(, $flag:expr)?) => {
        #[doc = $doc]
        ///
        /// # Safety
        /// Pointer arguments are as the OpenSHMEM specification describes for this call:
        /// local buffers valid for the elements named, remote ones symmetric.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $ctx_fn(ctx: shmem_ctx_t, $($arg: $ty),*) -> $ret {
            // SAFETY: the caller keeps this call's contract, which is the inner function's.
            unsafe { $inner(stringify!($ctx_fn), $($flag,)? ctx, $($arg),*) }
        }

        #[doc = $doc]
        /// On the default context.
        ///
        /// # Safety
        /// As the `ctx_` form.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $plain_fn($($arg: $ty),*) -> $ret {
            // SAFETY: the caller keeps this call's contract, which is the inner function's.
            unsafe { $inner(stringify!($plain_fn), $($flag,)? std::ptr::null_mut(), $($arg),*) }
        }
    };
}
pub(crate) use twins;

/// The `count` elements at the local pointer `ptr` (a source).
///
/// # Errors
/// [`CallError::Argument`] for a null or misaligned pointer with `count` above 0.
///
/// # Safety
/// A non-null, aligned `ptr` points to `count` readable elements.
pub(crate) unsafe fn source<'a, T>(ptr: *const T, count: usize) -> Result<&'a [T], CallError> {
    if count == 0 {
        return Ok(&[]);
    }
    check_local(ptr, count)?;
    // SAFETY: checked non-null and aligned; the caller passes count readable elements.
    Ok(unsafe { std::slice::from_raw_parts(ptr, count) })
}

/// The `count` elements at the local pointer `ptr` (a destination).
///
/// # Errors
/// As [`source`].
///
/// # Safety
/// A non-null, aligned `ptr` points to `count` writable elements that nothing else reads or
/// writes during the call.
pub(crate) unsafe fn target<'a, T>(ptr: *mut T, count: usize) -> Result<&'a mut [T], CallError> {
    if count == 0 {
        return Ok(&mut []);
    }
    check_local(ptr, count)?;
    // SAFETY: checked non-null and aligned; the caller passes count writable elements.
    Ok(unsafe { std::slice::from_raw_parts_mut(ptr, count) })
}

/// Refuses a null or misaligned local pointer to `count` elements.
fn check_local<T>(ptr: *const T, count: usize) -> Result<(), CallError> {
    if ptr.is_null() {
        return Err(CallError::Argument(format!(
            "a null local buffer for {count} elements; pass a buffer of at least that many"
        )));
    }
    if !ptr.is_aligned() {
        return Err(CallError::Argument(format!(
            "local buffer {ptr:p} is not aligned to {} bytes, as its elements need; align it",
            std::mem::align_of::<T>()
        )));
    }
    Ok(())
}

/// A stride from C (`ptrdiff_t`), in elements.
///
/// # Errors
/// [`CallError::Argument`] for a negative stride.
pub(crate) fn stride(value: isize) -> Result<usize, CallError> {
    usize::try_from(value).map_err(|_| {
        CallError::Argument(format!(
            "stride {value} is negative; strides count elements forward and are at least 1"
        ))
    })
}

/// The elements a side of a strided operation spans: `nblocks` blocks of `block_len`, one
/// every `stride` elements.
///
/// # Errors
/// [`CallError::Argument`] if the span does not fit in memory.
pub(crate) fn span(stride: usize, block_len: usize, nblocks: usize) -> Result<usize, CallError> {
    if nblocks == 0 || block_len == 0 {
        return Ok(0);
    }
    (nblocks - 1)
        .checked_mul(stride)
        .and_then(|start| start.checked_add(block_len))
        .ok_or_else(|| {
            CallError::Argument(format!(
                "{nblocks} blocks of {block_len} elements every {stride} elements reach past \
                 the end of memory; check the stride and counts"
            ))
        })
}

/// Whether a put or get returns at once, completed by the next quiet (`_nbi`).
pub(crate) const NBI: bool = true;
/// Whether a put or get is the blocking form.
pub(crate) const BLOCKING: bool = false;

/// `shmem_put` (`shmem_put_nbi` when `nbi`): copies `nelems` elements from `source` to
/// `dest` on `pe`.
///
/// # Safety
/// `source` points to `nelems` readable elements.
pub(crate) unsafe fn put<T: Element>(
    call: &'static str,
    nbi: bool,
    ctx: shmem_ctx_t,
    dest: *mut T,
    source: *const T,
    nelems: usize,
    pe: c_int,
) {
    with_pe(call, |me| {
        let (ctx, pe) = (me.ctx(ctx)?, pe_number(pe)?);
        if nelems == 0 {
            return Ok(());
        }
        // SAFETY: the caller passes nelems readable elements.
        let data = unsafe { self::source(source, nelems) }?;
        let dst = me.sym(dest.cast_const(), nelems)?;
        if nbi {
            Ok(ctx.put_nbi(dst, data, pe)?)
        } else {
            Ok(ctx.put(dst, data, pe)?)
        }
    });
}

/// `shmem_p`: writes `value` to `dest` on `pe`.
///
/// # Safety
/// None beyond the C contract: `dest` is only translated, never dereferenced here.
pub(crate) unsafe fn p<T: Element>(
    call: &'static str,
    ctx: shmem_ctx_t,
    dest: *mut T,
    value: T,
    pe: c_int,
) {
    with_pe(call, |me| {
        let dst = me.sym(dest.cast_const(), 1)?;
        Ok(me.ctx(ctx)?.p(dst, value, pe_number(pe)?)?)
    });
}

/// `shmem_g`: reads `source` on `pe`.
///
/// # Safety
/// None beyond the C contract: `source` is only translated, never dereferenced here.
pub(crate) unsafe fn g<T: Element>(
    call: &'static str,
    ctx: shmem_ctx_t,
    source: *const T,
    pe: c_int,
) -> T {
    with_pe(call, |me| {
        let src = me.sym(source, 1)?;
        Ok(me.ctx(ctx)?.g(src, pe_number(pe)?)?)
    })
}

/// `shmem_get` (`shmem_get_nbi` when `nbi`): copies `nelems` elements of `source` on `pe`
/// into `dest`. A non-blocking get into memory that is not symmetric is made blocking (see
/// the module's notes).
///
/// # Safety
/// `dest` points to `nelems` writable elements.
pub(crate) unsafe fn get<T: Element>(
    call: &'static str,
    nbi: bool,
    ctx: shmem_ctx_t,
    dest: *mut T,
    source: *const T,
    nelems: usize,
    pe: c_int,
) {
    with_pe(call, |me| {
        let (ctx, pe) = (me.ctx(ctx)?, pe_number(pe)?);
        if nelems == 0 {
            return Ok(());
        }
        let src = me.sym(source, nelems)?;
        if nbi && let Ok(dst) = me.sym(dest.cast_const(), nelems) {
            return Ok(ctx.get_nbi(dst, src, pe)?);
        }
        // SAFETY: the caller passes nelems writable elements.
        let out = unsafe { target(dest, nelems) }?;
        Ok(ctx.get_into(src, pe, out)?)
    });
}

/// Which way a strided operation moves data: to the remote PE (`iput`, `ibput`) or from it
/// (`iget`, `ibget`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Way {
    /// From the local `source` to the remote `dest`.
    Put,
    /// From the remote `source` to the local `dest`.
    Get,
}

/// `shmem_ibput` and `shmem_ibget`: `nblocks` blocks of `bsize` elements, one every `sst`
/// of `source`, to one every `dst` of `dest`, the remote side on `pe`.
///
/// # Safety
/// The local side points to the elements its stride reaches (readable for a put, writable
/// for a get).
#[allow(
    clippy::too_many_arguments,
    reason = "the C call's arguments, its name and way"
)]
pub(crate) unsafe fn blocks<T: Element>(
    call: &'static str,
    way: Way,
    ctx: shmem_ctx_t,
    dest: *mut T,
    source: *const T,
    dst: isize,
    sst: isize,
    bsize: usize,
    nblocks: usize,
    pe: c_int,
) {
    with_pe(call, |me| {
        let (dst, sst) = (stride(dst)?, stride(sst)?);
        let (ctx, pe) = (me.ctx(ctx)?, pe_number(pe)?);
        if bsize == 0 || nblocks == 0 {
            return Ok(());
        }
        let (dst_span, src_span) = (span(dst, bsize, nblocks)?, span(sst, bsize, nblocks)?);
        match way {
            Way::Put => {
                // SAFETY: the caller passes the elements the source stride reaches.
                let data = unsafe { self::source(source, src_span) }?;
                let remote = me.sym(dest.cast_const(), dst_span)?;
                Ok(ctx.ibput(remote, data, dst, sst, bsize, nblocks, pe)?)
            }
            Way::Get => {
                // SAFETY: the caller passes the elements the destination stride reaches.
                let out = unsafe { target(dest, dst_span) }?;
                let remote = me.sym(source, src_span)?;
                Ok(ctx.ibget(out, remote, dst, sst, bsize, nblocks, pe)?)
            }
        }
    });
}

/// `shmem_iput` and `shmem_iget`: [`blocks`] of one element.
///
/// # Safety
/// As [`blocks`].
#[allow(
    clippy::too_many_arguments,
    reason = "the C call's arguments, its name and way"
)]
pub(crate) unsafe fn elements<T: Element>(
    call: &'static str,
    way: Way,
    ctx: shmem_ctx_t,
    dest: *mut T,
    source: *const T,
    dst: isize,
    sst: isize,
    nelems: usize,
    pe: c_int,
) {
    // SAFETY: the caller keeps blocks' contract with blocks of one element.
    unsafe { blocks(call, way, ctx, dest, source, dst, sst, 1, nelems, pe) }
}

/// `shmem_p` and `shmem_g` of one row, which pass an element by value.
macro_rules! scalar_rma {
    // Why long double is left out: C passes and returns it in the x87 class (on the stack, in
    // st0), which no Rust type declares; the families that take it by pointer cover it.
    (longdouble, $t:ty, $c:literal) => {};
    ($name:ident, $t:ty, $c:literal) => {
        paste::paste! {
            twins!([<shmem_ctx_ $name _p>], [<shmem_ $name _p>],
                concat!("Writes one `", $c, "` to `dest` on `pe`."),
                (dest: *mut $t, value: $t, pe: c_int) -> () => p);
            twins!([<shmem_ctx_ $name _g>], [<shmem_ $name _g>],
                concat!("Reads one `", $c, "` at `source` on `pe`."),
                (source: *const $t, pe: c_int) -> $t => g);
        }
    };
}

/// The typed exports of the rows of `stdrmatypes`.
macro_rules! typed_rma {
    ($(($name:ident, $t:ty, $c:literal)),* $(,)?) => { paste::paste! { $(
        twins!([<shmem_ctx_ $name _put>], [<shmem_ $name _put>],
            concat!("Copies `nelems` `", $c, "`s to `dest` on `pe`."),
            (dest: *mut $t, source: *const $t, nelems: usize, pe: c_int) -> () => put, BLOCKING);
        twins!([<shmem_ctx_ $name _put_nbi>], [<shmem_ $name _put_nbi>],
            concat!("Copies `nelems` `", $c, "`s to `dest` on `pe`, completed by a quiet."),
            (dest: *mut $t, source: *const $t, nelems: usize, pe: c_int) -> () => put, NBI);
        scalar_rma!($name, $t, $c);
        twins!([<shmem_ctx_ $name _get>], [<shmem_ $name _get>],
            concat!("Copies `nelems` `", $c, "`s at `source` on `pe` into `dest`."),
            (dest: *mut $t, source: *const $t, nelems: usize, pe: c_int) -> () => get, BLOCKING);
        twins!([<shmem_ctx_ $name _get_nbi>], [<shmem_ $name _get_nbi>],
            concat!("Copies `nelems` `", $c, "`s at `source` on `pe` into `dest`, completed \
                     by a quiet."),
            (dest: *mut $t, source: *const $t, nelems: usize, pe: c_int) -> () => get, NBI);
        twins!([<shmem_ctx_ $name _iput>], [<shmem_ $name _iput>],
            concat!("Copies `nelems` strided `", $c, "`s to `dest` on `pe`."),
            (dest: *mut $t, source: *const $t, dst: isize, sst: isize, nelems: usize,
             pe: c_int) -> () => elements, Way::Put);
        twins!([<shmem_ctx_ $name _iget>], [<shmem_ $name _iget>],
            concat!("Copies `nelems` strided `", $c, "`s at `source` on `pe` into `dest`."),
            (dest: *mut $t, source: *const $t, dst: isize, sst: isize, nelems: usize,
             pe: c_int) -> () => elements, Way::Get);
        twins!([<shmem_ctx_ $name _ibput>], [<shmem_ $name _ibput>],
            concat!("Copies `nblocks` strided blocks of `bsize` `", $c, "`s to `dest` on `pe`."),
            (dest: *mut $t, source: *const $t, dst: isize, sst: isize, bsize: usize,
             nblocks: usize, pe: c_int) -> () => blocks, Way::Put);
        twins!([<shmem_ctx_ $name _ibget>], [<shmem_ $name _ibget>],
            concat!("Copies `nblocks` strided blocks of `bsize` `", $c, "`s at `source` on \
                     `pe` into `dest`."),
            (dest: *mut $t, source: *const $t, dst: isize, sst: isize, bsize: usize,
             nblocks: usize, pe: c_int) -> () => blocks, Way::Get);
    )* } };
}

crate::rma_types!(typed_rma);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strides_are_forward() {
        assert_eq!(stride(3).unwrap(), 3);
        let err = stride(-1).unwrap_err().to_string();
        assert!(err.contains("stride -1 is negative"), "{err}");
    }

    #[test]
    fn spans_reach_the_last_block() {
        assert_eq!(span(4, 2, 3).unwrap(), 10);
        assert_eq!(span(1, 1, 5).unwrap(), 5);
        assert_eq!(span(7, 0, 5).unwrap(), 0);
        assert_eq!(span(7, 3, 0).unwrap(), 0);
        assert!(span(usize::MAX, 2, 3).is_err());
    }

    #[test]
    fn local_buffers_are_checked() {
        let values = [1u64, 2, 3];
        // SAFETY: values holds three readable elements.
        assert_eq!(unsafe { source(values.as_ptr(), 3) }.unwrap(), &values);
        // SAFETY: a null pointer with no elements is never read.
        let empty = unsafe { source::<u64>(std::ptr::null(), 0) }.unwrap();
        assert!(empty.is_empty());
        // SAFETY: the null pointer is refused before any read.
        let err = unsafe { source::<u64>(std::ptr::null(), 2) }.unwrap_err();
        assert!(err.to_string().contains("null local buffer for 2"), "{err}");
        let misaligned = values.as_ptr().cast::<u8>().wrapping_add(1).cast::<u64>();
        // SAFETY: the misaligned pointer is refused before any read.
        let err = unsafe { source(misaligned, 1) }.unwrap_err();
        assert!(err.to_string().contains("not aligned to 8 bytes"), "{err}");
    }
}
