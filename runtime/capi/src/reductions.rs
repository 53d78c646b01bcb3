//! Team reductions and scans: `shmem_TYPENAME_{and,or,xor,max,min,sum,prod}_reduce` over
//! `reduce_types!` (each row has the operator groups the specification gives its type), and
//! OpenSHMEM 1.6's `shmem_TYPENAME_sum_inscan` / `sum_exscan`; the helpers also serve the
//! deprecated `_to_all` reductions of `active_set.rs`.
//!
//! Design choices:
//!
//! - **The runtime reduces.** Each export calls `Shmem::reduce` with one of the runtime's
//!   operators (`rshmem::ops`), or the runtime's scans; the algorithms are not repeated here.
//! - **Complex numbers** are the runtime's `Complex32`/`Complex64`: `float _Complex` and
//!   `double _Complex` have the same layout, so their arithmetic is the runtime's.
//! - **`long double`** has no Rust type: its sum, product, maximum and minimum are C's own
//!   arithmetic (`csrc/long_double.c`, compiled by `build.rs`), so the result is what a C
//!   compiler on the same machine computes.

use std::ffi::c_int;

use rshmem::ops::{ArithElement, Complex32, Complex64, OrderedElement, ReduceOp};
use rshmem::{Element, ShmemError, Team};

use crate::fail::CallError;

use crate::handles::shmem_team_t;
use crate::state::{Pe, with_pe};
use crate::types::{ComplexD, ComplexF, LongDouble};

unsafe extern "C" {
    fn rshmem_capi_long_double_sum(
        a: *const LongDouble,
        b: *const LongDouble,
        out: *mut LongDouble,
    );
    fn rshmem_capi_long_double_prod(
        a: *const LongDouble,
        b: *const LongDouble,
        out: *mut LongDouble,
    );
    fn rshmem_capi_long_double_max(
        a: *const LongDouble,
        b: *const LongDouble,
        out: *mut LongDouble,
    );
    fn rshmem_capi_long_double_min(
        a: *const LongDouble,
        b: *const LongDouble,
        out: *mut LongDouble,
    );
}

/// Combines two long doubles with the C function `f`.
fn long_double(
    f: unsafe extern "C" fn(*const LongDouble, *const LongDouble, *mut LongDouble),
    a: LongDouble,
    b: LongDouble,
) -> LongDouble {
    let mut out = LongDouble::default();
    // SAFETY: the C function reads two long doubles and writes one, all valid locals here.
    unsafe { f(&a, &b, &mut out) };
    out
}

impl ArithElement for LongDouble {
    fn sum(a: Self, b: Self) -> Self {
        long_double(rshmem_capi_long_double_sum, a, b)
    }
    fn prod(a: Self, b: Self) -> Self {
        long_double(rshmem_capi_long_double_prod, a, b)
    }
}

impl OrderedElement for LongDouble {
    fn max(a: Self, b: Self) -> Self {
        long_double(rshmem_capi_long_double_max, a, b)
    }
    fn min(a: Self, b: Self) -> Self {
        long_double(rshmem_capi_long_double_min, a, b)
    }
}

/// Implements [`ArithElement`] for a C complex type as the runtime's complex type `$twin`.
macro_rules! complex_as {
    ($($t:ty => $twin:ty),*) => {$(
        impl ArithElement for $t {
            fn sum(a: Self, b: Self) -> Self {
                bytemuck::cast(<$twin>::sum(bytemuck::cast(a), bytemuck::cast(b)))
            }
            fn prod(a: Self, b: Self) -> Self {
                bytemuck::cast(<$twin>::prod(bytemuck::cast(a), bytemuck::cast(b)))
            }
        }
    )*};
}

complex_as!(ComplexF => Complex32, ComplexD => Complex64);

/// Reduces `nreduce` elements of `source` into `dest` with `op` over the runtime team `team`.
pub(crate) fn reduce_on<T: Element, Op: ReduceOp<T>>(
    me: &Pe,
    team: &Team,
    op: Op,
    dest: *mut T,
    source: *const T,
    nreduce: usize,
) -> Result<(), CallError> {
    if nreduce == 0 {
        return Ok(());
    }
    let (dest, source) = (
        me.sym(dest.cast_const(), nreduce)?,
        me.sym(source, nreduce)?,
    );
    Ok(me.shmem.reduce(team, op, dest, source)?)
}

/// `shmem_TYPENAME_OP_reduce`: reduces with `op` over the team `team`; 0 on success.
pub(crate) fn reduce<T: Element, Op: ReduceOp<T>>(
    call: &'static str,
    team: shmem_team_t,
    op: Op,
    dest: *mut T,
    source: *const T,
    nreduce: usize,
) -> c_int {
    with_pe(call, |me| {
        reduce_on(me, me.team(team)?, op, dest, source, nreduce)?;
        Ok(0)
    })
}

/// `shmem_TYPENAME_sum_inscan` (or `_exscan` if `exclusive`) over `team`; 0 on success.
pub(crate) fn scan<T: ArithElement>(
    call: &'static str,
    team: shmem_team_t,
    dest: *mut T,
    source: *const T,
    nelems: usize,
    exclusive: bool,
) -> c_int {
    with_pe(call, |me| {
        if nelems == 0 {
            return Ok(0);
        }
        let team = me.team(team)?;
        let (dest, source) = (me.sym(dest.cast_const(), nelems)?, me.sym(source, nelems)?);
        let done: Result<(), ShmemError> = if exclusive {
            me.shmem.sum_exscan(team, dest, source)
        } else {
            me.shmem.sum_inscan(team, dest, source)
        };
        done?;
        Ok(0)
    })
}

/// Hands each operator of the groups `$group` of the row `$name` to `$export!`: `bit`
/// (and, or, xor), `minmax` (max, min), `arith` (sum, prod, then `@scans`).
#[macro_export]
#[doc(hidden)]
macro_rules! reduce_groups {
    ($export:ident, $name:ident, $t:ty, [$($group:ident),*]) => {$(
        $crate::reduce_groups!(@ $group, $export, $name, $t);
    )*};
    (@ bit, $export:ident, $name:ident, $t:ty) => {
        $export!($name, $t, and, And);
        $export!($name, $t, or, Or);
        $export!($name, $t, xor, Xor);
    };
    (@ minmax, $export:ident, $name:ident, $t:ty) => {
        $export!($name, $t, max, Max);
        $export!($name, $t, min, Min);
    };
    (@ arith, $export:ident, $name:ident, $t:ty) => {
        $export!($name, $t, sum, Sum);
        $export!($name, $t, prod, Prod);
        $export!($name, $t, @scans);
    };
}

/// The exported team reductions and scans, one expansion per `reduce_types!` row.
pub mod exports {
    use std::ffi::c_int;

    use rshmem::ops::{And, Max, Min, Or, Prod, Sum, Xor};

    use crate::handles::shmem_team_t;

    /// `shmem_$name_$op_reduce` (or, for `@scans`, the two scans) of the row `$name`.
    macro_rules! team_reduce {
        ($name:ident, $t:ty, @scans) => {paste::paste! {
            #[doc = concat!("Inclusive prefix sum over `team` of `nelems` `", stringify!($name), "` elements; 0 on success.")]
            #[unsafe(no_mangle)]
            pub extern "C" fn [<shmem_ $name _sum_inscan>](team: shmem_team_t, dest: *mut $t, source: *const $t, nelems: usize) -> c_int {
                super::scan(stringify!([<shmem_ $name _sum_inscan>]), team, dest, source, nelems, false)
            }
            #[doc = concat!("Exclusive prefix sum over `team` of `nelems` `", stringify!($name), "` elements; 0 on success.")]
            #[unsafe(no_mangle)]
            pub extern "C" fn [<shmem_ $name _sum_exscan>](team: shmem_team_t, dest: *mut $t, source: *const $t, nelems: usize) -> c_int {
                super::scan(stringify!([<shmem_ $name _sum_exscan>]), team, dest, source, nelems, true)
            }
        }};
        ($name:ident, $t:ty, $op:ident, $Op:ident) => {paste::paste! {
            #[doc = concat!("Reduces `nreduce` `", stringify!($name), "` elements with ", stringify!($op), " over `team`; 0 on success.")]
            #[unsafe(no_mangle)]
            pub extern "C" fn [<shmem_ $name _ $op _reduce>](team: shmem_team_t, dest: *mut $t, source: *const $t, nreduce: usize) -> c_int {
                super::reduce(stringify!([<shmem_ $name _ $op _reduce>]), team, $Op, dest, source, nreduce)
            }
        }};
    }

    /// Every reduction of each row.
    macro_rules! team_reductions {
        ($(($name:ident, $t:ty, $c:literal, [$($group:ident),*])),* $(,)?) => {$(
            crate::reduce_groups!(team_reduce, $name, $t, [$($group),*]);
        )*};
    }

    crate::reduce_types!(team_reductions);
}

#[cfg(test)]
mod tests {
    use super::*;

    unsafe extern "C" {
        fn rshmem_capi_long_double_from_double(value: f64, out: *mut LongDouble);
        fn rshmem_capi_long_double_to_double(value: *const LongDouble) -> f64;
    }

    fn ld(value: f64) -> LongDouble {
        let mut out = LongDouble::default();
        // SAFETY: writes one long double into a valid local.
        unsafe { rshmem_capi_long_double_from_double(value, &mut out) };
        out
    }

    fn back(value: LongDouble) -> f64 {
        // SAFETY: reads one long double from a valid local.
        unsafe { rshmem_capi_long_double_to_double(&value) }
    }

    #[test]
    fn long_double_arithmetic_is_cs() {
        assert_eq!(back(LongDouble::sum(ld(1.5), ld(2.25))), 3.75);
        assert_eq!(back(LongDouble::prod(ld(-3.0), ld(0.5))), -1.5);
        assert_eq!(back(LongDouble::max(ld(-3.0), ld(0.5))), 0.5);
        assert_eq!(back(LongDouble::min(ld(-3.0), ld(0.5))), -3.0);
        assert_eq!(back(LongDouble::max(ld(f64::NAN), ld(2.0))), 2.0);
        assert_eq!(back(LongDouble::min(ld(2.0), ld(f64::NAN))), 2.0);
    }

    #[test]
    fn long_double_keeps_more_than_a_double() {
        // 1 + 2^-60 is 1 as a double, but not as an x87 or quad long double.
        let tiny = ld(2f64.powi(-60));
        let sum = LongDouble::sum(ld(1.0), tiny);
        let back_again = LongDouble::sum(sum, ld(-1.0));
        if std::mem::size_of::<LongDouble>() == 16
            && cfg!(any(target_arch = "x86_64", target_arch = "aarch64"))
        {
            assert_eq!(back(back_again), 2f64.powi(-60));
        }
    }

    #[test]
    fn complex_arithmetic_is_the_runtimes() {
        let i = ComplexD([0.0, 1.0]);
        assert_eq!(ComplexD::prod(i, i), ComplexD([-1.0, 0.0]));
        assert_eq!(
            ComplexF::sum(ComplexF([1.0, 2.0]), ComplexF([3.0, -1.0])),
            ComplexF([4.0, 1.0])
        );
        assert_eq!(
            ComplexF::prod(ComplexF([1.0, 2.0]), ComplexF([3.0, -1.0])),
            ComplexF([5.0, 5.0])
        );
    }
}
