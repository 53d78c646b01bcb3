//! Point-to-point synchronisation: `shmem_TYPENAME_wait_until`, `_all`, `_any`, `_some`, their
//! `_vector` forms, the `test` family, and the deprecated `shmem_TYPENAME_wait` and untyped
//! `shmem_wait`/`shmem_wait_until` of OpenSHMEM 1.0, over `p2p_types!`.
//!
//! Design choices:
//!
//! - **The runtime waits.** Every call becomes one runtime call: `Ctx::wait_until` and
//!   `Ctx::test` for one word, the wait-set calls (`wait_until_any` and friends), which sleep on
//!   many words at once, for arrays, and `Ctx::wait_until_narrow` for `short` and
//!   `unsigned short`, whose 16-bit words the hardware contract does not compare. No loop here
//!   polls memory.
//! - **The comparison codes** are the `SHMEM_CMP_*` values of `cmp.rs`, which `shmem.h`
//!   defines the same; any other code ends the job with a message naming it.
//! - **Arrays of nothing.** `nelems` of 0 (or every element left out by `status`) returns at
//!   once: `SIZE_MAX` from the `_any` forms, 0 from the `_some` forms, 1 from `test_all`.

use std::ffi::{c_int, c_long};

use rshmem::{Cmp, Ctx, NarrowMode, ShmemError, Sym};

use crate::fail::CallError;
use crate::state::{Backend, with_pe};

/// What a call on an array looks for, and whether it waits for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SetOp {
    /// `wait_until_all`.
    WaitAll,
    /// `wait_until_any`.
    WaitAny,
    /// `wait_until_some`.
    WaitSome,
    /// `test_all`.
    TestAll,
    /// `test_any`.
    TestAny,
    /// `test_some`.
    TestSome,
}

/// What a call on an array found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Found {
    /// Whether every element held (`_all`).
    All(bool),
    /// The element that held, if any (`_any`).
    First(Option<usize>),
    /// The elements that held (`_some`).
    Indices(Vec<usize>),
}

/// What each element is compared with: one value, or one per element (`_vector`).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Values<'a, T> {
    /// One value for all.
    Same(T),
    /// One value per element.
    Each(&'a [T]),
}

/// A C type of the point-to-point synchronisation calls, and how the runtime waits on it.
pub(crate) trait P2pValue: rshmem::Element {
    /// Blocks until `ivar cmp value` holds.
    fn wait_one(
        ctx: &Ctx<Backend>,
        ivar: Sym<Self>,
        cmp: Cmp,
        value: Self,
    ) -> Result<(), ShmemError>;
    /// Whether `ivar cmp value` holds now.
    fn test_one(
        ctx: &Ctx<Backend>,
        ivar: Sym<Self>,
        cmp: Cmp,
        value: Self,
    ) -> Result<bool, ShmemError>;
    /// Does `op` on the array `ivars`.
    fn set(
        ctx: &Ctx<Backend>,
        ivars: Sym<Self>,
        status: Option<&[i32]>,
        cmp: Cmp,
        values: Values<'_, Self>,
        op: SetOp,
    ) -> Result<Found, ShmemError>;
}

/// Calls the runtime's method `$same` or its `_vector` twin `$each`.
macro_rules! same_or_each {
    ($ctx:ident.$same:ident / $each:ident($ivars:ident, $status:ident, $cmp:ident, $values:ident)) => {
        match $values {
            Values::Same(value) => $ctx.$same($ivars, $status, $cmp, value),
            Values::Each(values) => $ctx.$each($ivars, $status, $cmp, values),
        }
    };
}

/// Implements [`P2pValue`] for 32- and 64-bit types through the runtime's word waits.
macro_rules! wide_p2p {
    ($($t:ty),*) => {$(
        impl P2pValue for $t {
            fn wait_one(ctx: &Ctx<Backend>, ivar: Sym<$t>, cmp: Cmp, value: $t) -> Result<(), ShmemError> {
                ctx.wait_until(ivar, cmp, value).map(drop)
            }
            fn test_one(ctx: &Ctx<Backend>, ivar: Sym<$t>, cmp: Cmp, value: $t) -> Result<bool, ShmemError> {
                ctx.test(ivar, cmp, value)
            }
            fn set(
                ctx: &Ctx<Backend>,
                ivars: Sym<$t>,
                status: Option<&[i32]>,
                cmp: Cmp,
                values: Values<'_, $t>,
                op: SetOp,
            ) -> Result<Found, ShmemError> {
                Ok(match op {
                    SetOp::WaitAll => {
                        same_or_each!(ctx.wait_until_all / wait_until_all_vector(ivars, status, cmp, values))?;
                        Found::All(true)
                    }
                    SetOp::WaitAny => Found::First(same_or_each!(
                        ctx.wait_until_any / wait_until_any_vector(ivars, status, cmp, values)
                    )?),
                    SetOp::WaitSome => Found::Indices(same_or_each!(
                        ctx.wait_until_some / wait_until_some_vector(ivars, status, cmp, values)
                    )?),
                    SetOp::TestAll => Found::All(same_or_each!(
                        ctx.test_all / test_all_vector(ivars, status, cmp, values)
                    )?),
                    SetOp::TestAny => Found::First(same_or_each!(
                        ctx.test_any / test_any_vector(ivars, status, cmp, values)
                    )?),
                    SetOp::TestSome => Found::Indices(same_or_each!(
                        ctx.test_some / test_some_vector(ivars, status, cmp, values)
                    )?),
                })
            }
        }
    )*};
}

wide_p2p!(i32, u32, i64, u64, isize, usize);

/// Implements [`P2pValue`] for 16-bit types through the runtime's narrow waits.
macro_rules! narrow_p2p {
    ($($t:ty),*) => {$(
        impl P2pValue for $t {
            fn wait_one(ctx: &Ctx<Backend>, ivar: Sym<$t>, cmp: Cmp, value: $t) -> Result<(), ShmemError> {
                ctx.wait_until_narrow(ivar, None, cmp, &[value], NarrowMode::All, true).map(drop)
            }
            fn test_one(ctx: &Ctx<Backend>, ivar: Sym<$t>, cmp: Cmp, value: $t) -> Result<bool, ShmemError> {
                Ok(!ctx.wait_until_narrow(ivar, None, cmp, &[value], NarrowMode::All, false)?.is_empty())
            }
            fn set(
                ctx: &Ctx<Backend>,
                ivars: Sym<$t>,
                status: Option<&[i32]>,
                cmp: Cmp,
                values: Values<'_, $t>,
                op: SetOp,
            ) -> Result<Found, ShmemError> {
                let values = match values {
                    Values::Same(ref value) => std::slice::from_ref(value),
                    Values::Each(values) => values,
                };
                narrow_set(op, status, ivars.len(), |mode, block| {
                    ctx.wait_until_narrow(ivars, status, cmp, values, mode, block)
                })
            }
        }
    )*};
}

narrow_p2p!(i16, u16);

/// Runs `op` on a narrow array of `len` elements with `run(mode, block)`, which returns the
/// indices found to hold.
fn narrow_set(
    op: SetOp,
    status: Option<&[i32]>,
    len: usize,
    run: impl FnOnce(NarrowMode, bool) -> Result<Vec<usize>, ShmemError>,
) -> Result<Found, ShmemError> {
    let (mode, block) = match op {
        SetOp::WaitAll => (NarrowMode::All, true),
        SetOp::WaitAny => (NarrowMode::Any, true),
        SetOp::WaitSome => (NarrowMode::Some, true),
        SetOp::TestAll => (NarrowMode::All, false),
        SetOp::TestAny => (NarrowMode::Any, false),
        SetOp::TestSome => (NarrowMode::Some, false),
    };
    let found = run(mode, block)?;
    Ok(match mode {
        NarrowMode::All => {
            let included = status.map_or(len, |status| status.iter().filter(|&&s| s == 0).count());
            Found::All(found.len() == included)
        }
        NarrowMode::Any => Found::First(found.first().copied()),
        NarrowMode::Some => Found::Indices(found),
    })
}

/// `wait_until` (if `block`) or `test` of the C call `call` on the one element `ivar`.
pub(crate) fn one<T: P2pValue>(
    call: &'static str,
    ivar: *const T,
    cmp: c_int,
    value: T,
    block: bool,
) -> bool {
    with_pe(call, |me| {
        let cmp = crate::cmp::cmp_of(cmp)?;
        let ivar = me.sym(ivar, 1)?;
        if block {
            T::wait_one(&me.shmem, ivar, cmp, value)?;
            Ok(true)
        } else {
            Ok(T::test_one(&me.shmem, ivar, cmp, value)?)
        }
    })
}

/// The values of a C call on an array: one, or `nelems` behind a pointer.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ValuesIn<T> {
    /// One value for all.
    Same(T),
    /// `nelems` values at this address.
    Each(*const T),
}

/// `op` of the C call `call` on the array `ivars` of `nelems`, with the optional mask
/// `status`.
///
/// # Safety
/// `status` is null or points to `nelems` readable `int`s; a `ValuesIn::Each` points to
/// `nelems` readable values.
pub(crate) unsafe fn array<T: P2pValue>(
    call: &'static str,
    ivars: *const T,
    nelems: usize,
    status: *const c_int,
    cmp: c_int,
    values: ValuesIn<T>,
    op: SetOp,
) -> Found {
    with_pe(call, |me| {
        let cmp = crate::cmp::cmp_of(cmp)?;
        if nelems == 0 {
            return Ok(match op {
                SetOp::WaitAll | SetOp::TestAll => Found::All(true),
                SetOp::WaitAny | SetOp::TestAny => Found::First(None),
                SetOp::WaitSome | SetOp::TestSome => Found::Indices(Vec::new()),
            });
        }
        // SAFETY: the caller passes nelems readable ints, or null.
        let status =
            (!status.is_null()).then(|| unsafe { std::slice::from_raw_parts(status, nelems) });
        let values = match values {
            ValuesIn::Same(value) => Values::Same(value),
            ValuesIn::Each(values) if values.is_null() => {
                return Err(CallError::Argument(
                    "cmp_values is null; pass an array of nelems comparison values".to_owned(),
                ));
            }
            ValuesIn::Each(values) => {
                // SAFETY: the caller passes nelems readable values.
                Values::Each(unsafe { std::slice::from_raw_parts(values, nelems) })
            }
        };
        let ivars = me.sym(ivars, nelems)?;
        Ok(T::set(&me.shmem, ivars, status, cmp, values, op)?)
    })
}

/// The C result of `_any`: the index, or `SIZE_MAX` for none.
pub(crate) fn any_index(found: Found) -> usize {
    match found {
        Found::First(Some(index)) => index,
        _ => usize::MAX,
    }
}

/// The C result of `_all`: 1 if every element held, else 0.
pub(crate) fn all_held(found: Found) -> c_int {
    c_int::from(matches!(found, Found::All(true)))
}

/// The C result of `_some`: writes the indices to `indices` and returns how many.
///
/// # Safety
/// `indices` points to room for `nelems` `size_t`s, which no found set exceeds.
pub(crate) unsafe fn some_indices(found: Found, indices: *mut usize) -> usize {
    let Found::Indices(found) = found else {
        return 0;
    };
    if !found.is_empty() {
        // SAFETY: the caller gives room for nelems indices, and at most nelems are found.
        unsafe { std::ptr::copy_nonoverlapping(found.as_ptr(), indices, found.len()) };
    }
    found.len()
}

/// The deprecated `shmem_wait(ivar, cmp_value)` of OpenSHMEM 1.0 on a `long`: waits until
/// `*ivar` differs from `cmp_value`.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_wait(ivar: *mut c_long, cmp_value: c_long) {
    one("shmem_wait", ivar, crate::cmp::NE, cmp_value, true);
}

/// The untyped `shmem_wait_until(ivar, cmp, cmp_value)` of OpenSHMEM 1.0 on a `long`.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_wait_until(ivar: *mut c_long, cmp: c_int, cmp_value: c_long) {
    one("shmem_wait_until", ivar, cmp, cmp_value, true);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_results_take_the_shape_of_their_call() {
        let found = |op, status: Option<&[i32]>, held: Vec<usize>| {
            narrow_set(op, status, 3, |_, _| Ok(held)).unwrap()
        };
        assert_eq!(found(SetOp::TestAll, None, vec![0, 2]), Found::All(false));
        assert_eq!(
            found(SetOp::TestAll, Some(&[0, 1, 0]), vec![0, 2]),
            Found::All(true)
        );
        assert_eq!(found(SetOp::TestAny, None, vec![1]), Found::First(Some(1)));
        assert_eq!(found(SetOp::WaitAny, None, vec![]), Found::First(None));
        assert_eq!(
            found(SetOp::TestSome, None, vec![0, 1]),
            Found::Indices(vec![0, 1])
        );
        assert_eq!(any_index(Found::First(None)), usize::MAX);
        assert_eq!(all_held(Found::All(true)), 1);
    }
}
