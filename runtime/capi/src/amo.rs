//! Atomic memory operations: `shmem_TYPENAME_atomic_*` and their `shmem_ctx_` twins over the
//! specification's AMO tables (`types.rs`), the fetching `_nbi` forms, and the deprecated
//! names of OpenSHMEM 1.0 to 1.3 (`shmem_int_fadd`, `shmem_long_cswap`, ...).
//!
//! Design choices:
//!
//! - **One operation, one runtime call.** Each export names its operation as a `Fetching` or
//!   `Posting` value and hands it to one of three helpers, which translate the pointer and PE
//!   and call the runtime's `Ctx::atomic_*` method of that operation: no atomic is implemented
//!   here, and the hot path (`shmem_long_atomic_fetch_add`) is one pointer translation and
//!   one runtime call, without allocation or formatting.
//! - **Floats are words.** `float` and `double` (fetch, set, swap) move as the bit patterns of
//!   32- and 64-bit words ([`AmoValue`]); the target never sees a floating-point operation.
//! - **`_nbi` into any memory.** OpenSHMEM lets the `fetch` of a non-blocking atomic be any
//!   local memory. Where it is symmetric, the runtime's non-blocking atomic lands the old value
//!   at quiet; elsewhere (a stack variable, say) the atomic completes before the call returns
//!   and the value is stored at once, which the specification allows (the value must be there
//!   by quiet, and may be sooner).
//! - **Misuse names the call.** A misaligned or non-symmetric target, a PE out of range or a
//!   bad context ends the job with the runtime's message under the export's own name.

use std::ffi::c_int;

use rshmem::{AtomicElement, Ctx, ShmemError, Sym};

use crate::fail::CallError;
use crate::handles::shmem_ctx_t;
use crate::setup::pe_number;
use crate::state::{Backend, with_pe};

/// A C type atomics work on, and the runtime word that carries it.
pub trait AmoValue: Copy {
    /// The integer word of the same width.
    type Word: AtomicElement;
    /// The value as its word.
    fn to_word(self) -> Self::Word;
    /// The value a word holds.
    fn from_word(word: Self::Word) -> Self;
}

/// Implements [`AmoValue`] for integer types that are their own word.
macro_rules! word_is_value {
    ($($t:ty),*) => {$(
        impl AmoValue for $t {
            type Word = $t;
            fn to_word(self) -> $t {
                self
            }
            fn from_word(word: $t) -> $t {
                word
            }
        }
    )*};
}

word_is_value!(i32, u32, i64, u64, isize, usize);

/// Implements [`AmoValue`] for a float type as the bit pattern `$word`.
macro_rules! word_is_bits {
    ($($t:ty => $word:ty),*) => {$(
        impl AmoValue for $t {
            type Word = $word;
            fn to_word(self) -> $word {
                self.to_bits()
            }
            fn from_word(word: $word) -> $t {
                <$t>::from_bits(word)
            }
        }
    )*};
}

word_is_bits!(f32 => u32, f64 => u64);

/// An atomic that returns the target's old value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fetching<W> {
    /// `atomic_fetch`.
    Fetch,
    /// `atomic_swap`.
    Swap(W),
    /// `atomic_compare_swap`.
    CompareSwap {
        /// The value the target must hold for the swap.
        cond: W,
        /// The value swapped in.
        value: W,
    },
    /// `atomic_fetch_inc`.
    FetchInc,
    /// `atomic_fetch_add`.
    FetchAdd(W),
    /// `atomic_fetch_and`.
    FetchAnd(W),
    /// `atomic_fetch_or`.
    FetchOr(W),
    /// `atomic_fetch_xor`.
    FetchXor(W),
}

impl<W: AtomicElement> Fetching<W> {
    /// Does the atomic on `target` at `pe` and returns the old value.
    fn run(self, ctx: &Ctx<Backend>, target: Sym<W>, pe: u32) -> Result<W, ShmemError> {
        match self {
            Fetching::Fetch => ctx.atomic_fetch(target, pe),
            Fetching::Swap(value) => ctx.atomic_swap(target, value, pe),
            Fetching::CompareSwap { cond, value } => {
                ctx.atomic_compare_swap(target, cond, value, pe)
            }
            Fetching::FetchInc => ctx.atomic_fetch_inc(target, pe),
            Fetching::FetchAdd(value) => ctx.atomic_fetch_add(target, value, pe),
            Fetching::FetchAnd(value) => ctx.atomic_fetch_and(target, value, pe),
            Fetching::FetchOr(value) => ctx.atomic_fetch_or(target, value, pe),
            Fetching::FetchXor(value) => ctx.atomic_fetch_xor(target, value, pe),
        }
    }

    /// Issues the atomic on `target` at `pe`; the old value lands in `fetch` at quiet.
    fn run_nbi(
        self,
        ctx: &Ctx<Backend>,
        fetch: Sym<W>,
        target: Sym<W>,
        pe: u32,
    ) -> Result<(), ShmemError> {
        match self {
            Fetching::Fetch => ctx.atomic_fetch_nbi(fetch, target, pe),
            Fetching::Swap(value) => ctx.atomic_swap_nbi(fetch, target, value, pe),
            Fetching::CompareSwap { cond, value } => {
                ctx.atomic_compare_swap_nbi(fetch, target, cond, value, pe)
            }
            Fetching::FetchInc => ctx.atomic_fetch_inc_nbi(fetch, target, pe),
            Fetching::FetchAdd(value) => ctx.atomic_fetch_add_nbi(fetch, target, value, pe),
            Fetching::FetchAnd(value) => ctx.atomic_fetch_and_nbi(fetch, target, value, pe),
            Fetching::FetchOr(value) => ctx.atomic_fetch_or_nbi(fetch, target, value, pe),
            Fetching::FetchXor(value) => ctx.atomic_fetch_xor_nbi(fetch, target, value, pe),
        }
    }
}

/// An atomic that returns nothing; it completes at the context's next quiet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Posting<W> {
    /// `atomic_set`.
    Set(W),
    /// `atomic_inc`.
    Inc,
    /// `atomic_add`.
    Add(W),
    /// `atomic_and`.
    And(W),
    /// `atomic_or`.
    Or(W),
    /// `atomic_xor`.
    Xor(W),
}

impl<W: AtomicElement> Posting<W> {
    /// Issues the atomic on `target` at `pe`.
    fn run(self, ctx: &Ctx<Backend>, target: Sym<W>, pe: u32) -> Result<(), ShmemError> {
        match self {
            Posting::Set(value) => ctx.atomic_set(target, value, pe),
            Posting::Inc => ctx.atomic_inc(target, pe),
            Posting::Add(value) => ctx.atomic_add(target, value, pe),
            Posting::And(value) => ctx.atomic_and(target, value, pe),
            Posting::Or(value) => ctx.atomic_or(target, value, pe),
            Posting::Xor(value) => ctx.atomic_xor(target, value, pe),
        }
    }
}

/// Runs the fetching atomic `op` of the C call `call` on `dest` at `pe`.
pub(crate) fn fetching<T: AmoValue>(
    call: &'static str,
    ctx: shmem_ctx_t,
    dest: *const T,
    pe: c_int,
    op: Fetching<T::Word>,
) -> T {
    with_pe(call, |me| {
        let ctx = me.ctx(ctx)?;
        let target = me.sym(dest.cast::<T::Word>(), 1)?;
        Ok(T::from_word(op.run(ctx, target, pe_number(pe)?)?))
    })
}

/// Runs the atomic `op` of the C call `call` on `dest` at `pe`, its old value going to `fetch`.
///
/// # Safety
/// `fetch` points to a writable `T`.
pub(crate) unsafe fn fetching_nbi<T: AmoValue>(
    call: &'static str,
    ctx: shmem_ctx_t,
    fetch: *mut T,
    dest: *const T,
    pe: c_int,
    op: Fetching<T::Word>,
) {
    with_pe(call, |me| {
        let ctx = me.ctx(ctx)?;
        let target = me.sym(dest.cast::<T::Word>(), 1)?;
        let pe = pe_number(pe)?;
        if fetch.is_null() {
            return Err(CallError::Argument(
                "fetch is null; pass the address where the old value should go".to_owned(),
            ));
        }
        match me.sym(fetch.cast::<T::Word>().cast_const(), 1) {
            Ok(word) => op.run_nbi(ctx, word, target, pe)?,
            Err(_) => {
                let old = T::from_word(op.run(ctx, target, pe)?);
                // SAFETY: the caller passes a writable T, and it is not null (checked above).
                unsafe { fetch.write(old) };
            }
        }
        Ok(())
    });
}

/// Issues the atomic `op` of the C call `call` on `dest` at `pe`.
pub(crate) fn posting<T: AmoValue>(
    call: &'static str,
    ctx: shmem_ctx_t,
    dest: *const T,
    pe: c_int,
    op: Posting<T::Word>,
) {
    with_pe(call, |me| {
        let ctx = me.ctx(ctx)?;
        let target = me.sym(dest.cast::<T::Word>(), 1)?;
        Ok(op.run(ctx, target, pe_number(pe)?)?)
    });
}

/// Exports a fetching atomic `$plain(dest, args.., pe)` and, given `$ctx`, its context twin;
/// `$make` builds the [`Fetching`] from the arguments as words.
macro_rules! fetch_export {
    ($ctx:ident / $plain:ident, $t:ty, [$($arg:ident),*], $make:expr) => {
        #[doc = concat!("`", stringify!($ctx), "`: ", stringify!($make), " on `dest` at PE `pe`, returning the old value.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $ctx(ctx: $crate::handles::shmem_ctx_t, dest: *mut $t, $($arg: $t,)* pe: ::std::ffi::c_int) -> $t {
            $(let $arg = $crate::amo::AmoValue::to_word($arg);)*
            $crate::amo::fetching(stringify!($ctx), ctx, dest, pe, $make)
        }
        #[doc = concat!("[`", stringify!($ctx), "`] on the default context.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $plain(dest: *mut $t, $($arg: $t,)* pe: ::std::ffi::c_int) -> $t {
            $(let $arg = $crate::amo::AmoValue::to_word($arg);)*
            $crate::amo::fetching(stringify!($plain), ::std::ptr::null_mut(), dest, pe, $make)
        }
    };
    ($plain:ident, $t:ty, [$($arg:ident),*], $make:expr) => {
        #[doc = concat!("Deprecated: ", stringify!($make), " on `dest` at PE `pe`, returning the old value.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $plain(dest: *mut $t, $($arg: $t,)* pe: ::std::ffi::c_int) -> $t {
            $(let $arg = $crate::amo::AmoValue::to_word($arg);)*
            $crate::amo::fetching(stringify!($plain), ::std::ptr::null_mut(), dest, pe, $make)
        }
    };
}

/// Exports the non-blocking form `$plain(fetch, dest, args.., pe)` of a fetching atomic and
/// its context twin `$ctx`.
macro_rules! fetch_nbi_export {
    ($ctx:ident / $plain:ident, $t:ty, [$($arg:ident),*], $make:expr) => {
        #[doc = concat!("`", stringify!($ctx), "`: ", stringify!($make), " on `dest` at PE `pe`; the old value is in `*fetch` by the next quiet.")]
        ///
        /// # Safety
        /// `fetch` points to a writable value of the type.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $ctx(ctx: $crate::handles::shmem_ctx_t, fetch: *mut $t, dest: *mut $t, $($arg: $t,)* pe: ::std::ffi::c_int) {
            $(let $arg = $crate::amo::AmoValue::to_word($arg);)*
            // SAFETY: the caller passes a writable fetch.
            unsafe { $crate::amo::fetching_nbi(stringify!($ctx), ctx, fetch, dest, pe, $make) }
        }
        #[doc = concat!("[`", stringify!($ctx), "`] on the default context.")]
        ///
        /// # Safety
        #[doc = concat!("As [`", stringify!($ctx), "`].")]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $plain(fetch: *mut $t, dest: *mut $t, $($arg: $t,)* pe: ::std::ffi::c_int) {
            $(let $arg = $crate::amo::AmoValue::to_word($arg);)*
            // SAFETY: the caller passes a writable fetch.
            unsafe { $crate::amo::fetching_nbi(stringify!($plain), ::std::ptr::null_mut(), fetch, dest, pe, $make) }
        }
    };
}

/// Exports an atomic that fetches nothing, `$plain(dest, args.., pe)`, and, given `$ctx`,
/// its context twin.
macro_rules! post_export {
    ($ctx:ident / $plain:ident, $t:ty, [$($arg:ident),*], $make:expr) => {
        #[doc = concat!("`", stringify!($ctx), "`: ", stringify!($make), " on `dest` at PE `pe`; complete at the next quiet.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $ctx(ctx: $crate::handles::shmem_ctx_t, dest: *mut $t, $($arg: $t,)* pe: ::std::ffi::c_int) {
            $(let $arg = $crate::amo::AmoValue::to_word($arg);)*
            $crate::amo::posting(stringify!($ctx), ctx, dest, pe, $make)
        }
        #[doc = concat!("[`", stringify!($ctx), "`] on the default context.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $plain(dest: *mut $t, $($arg: $t,)* pe: ::std::ffi::c_int) {
            $(let $arg = $crate::amo::AmoValue::to_word($arg);)*
            $crate::amo::posting(stringify!($plain), ::std::ptr::null_mut(), dest, pe, $make)
        }
    };
    ($plain:ident, $t:ty, [$($arg:ident),*], $make:expr) => {
        #[doc = concat!("Deprecated: ", stringify!($make), " on `dest` at PE `pe`.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $plain(dest: *mut $t, $($arg: $t,)* pe: ::std::ffi::c_int) {
            $(let $arg = $crate::amo::AmoValue::to_word($arg);)*
            $crate::amo::posting(stringify!($plain), ::std::ptr::null_mut(), dest, pe, $make)
        }
    };
}

/// A fetching atomic with its `_nbi` form, in both context forms, for the row `$name`.
macro_rules! fetch_family {
    ($name:ident, $t:ty, $op:ident, [$($arg:ident),*], $make:expr) => {
        paste::paste! {
            fetch_export!([<shmem_ctx_ $name _atomic_ $op>] / [<shmem_ $name _atomic_ $op>], $t, [$($arg),*], $make);
            fetch_nbi_export!([<shmem_ctx_ $name _atomic_ $op _nbi>] / [<shmem_ $name _atomic_ $op _nbi>], $t, [$($arg),*], $make);
        }
    };
}

/// A non-fetching atomic in both context forms, for the row `$name`.
macro_rules! post_family {
    ($name:ident, $t:ty, $op:ident, [$($arg:ident),*], $make:expr) => {
        paste::paste! {
            post_export!([<shmem_ctx_ $name _atomic_ $op>] / [<shmem_ $name _atomic_ $op>], $t, [$($arg),*], $make);
        }
    };
}

/// The extended AMOs of each `ext_amo_types!` row: fetch, set, swap.
macro_rules! ext_amos {
    ($(($name:ident, $t:ty, $c:literal)),* $(,)?) => {$(
        fetch_family!($name, $t, fetch, [], Fetching::Fetch);
        post_family!($name, $t, set, [value], Posting::Set(value));
        fetch_family!($name, $t, swap, [value], Fetching::Swap(value));
    )*};
}

/// The standard AMOs of each `std_amo_types!` row: compare_swap, fetch_inc, inc, fetch_add,
/// add.
macro_rules! std_amos {
    ($(($name:ident, $t:ty, $c:literal)),* $(,)?) => {$(
        fetch_family!($name, $t, compare_swap, [cond, value], Fetching::CompareSwap { cond, value });
        fetch_family!($name, $t, fetch_inc, [], Fetching::FetchInc);
        post_family!($name, $t, inc, [], Posting::Inc);
        fetch_family!($name, $t, fetch_add, [value], Fetching::FetchAdd(value));
        post_family!($name, $t, add, [value], Posting::Add(value));
    )*};
}

/// The bitwise AMOs of each `bit_amo_types!` row: fetch_and, and, fetch_or, or, fetch_xor,
/// xor.
macro_rules! bit_amos {
    ($(($name:ident, $t:ty, $c:literal)),* $(,)?) => {$(
        fetch_family!($name, $t, fetch_and, [value], Fetching::FetchAnd(value));
        post_family!($name, $t, and, [value], Posting::And(value));
        fetch_family!($name, $t, fetch_or, [value], Fetching::FetchOr(value));
        post_family!($name, $t, or, [value], Posting::Or(value));
        fetch_family!($name, $t, fetch_xor, [value], Fetching::FetchXor(value));
        post_family!($name, $t, xor, [value], Posting::Xor(value));
    )*};
}

/// The deprecated names of OpenSHMEM 1.3 for each `deprecated_ext_amo_types!` row:
/// `shmem_TYPENAME_fetch`, `set`, `swap`.
macro_rules! deprecated_ext_amos {
    ($(($name:ident, $t:ty, $c:literal)),* $(,)?) => {$(
        paste::paste! {
            fetch_export!([<shmem_ $name _fetch>], $t, [], Fetching::Fetch);
            post_export!([<shmem_ $name _set>], $t, [value], Posting::Set(value));
            fetch_export!([<shmem_ $name _swap>], $t, [value], Fetching::Swap(value));
        }
    )*};
}

/// The deprecated names of OpenSHMEM 1.3 for each `deprecated_std_amo_types!` row:
/// `shmem_TYPENAME_cswap`, `finc`, `inc`, `fadd`, `add`.
macro_rules! deprecated_std_amos {
    ($(($name:ident, $t:ty, $c:literal)),* $(,)?) => {$(
        paste::paste! {
            fetch_export!([<shmem_ $name _cswap>], $t, [cond, value], Fetching::CompareSwap { cond, value });
            fetch_export!([<shmem_ $name _finc>], $t, [], Fetching::FetchInc);
            post_export!([<shmem_ $name _inc>], $t, [], Posting::Inc);
            fetch_export!([<shmem_ $name _fadd>], $t, [value], Fetching::FetchAdd(value));
            post_export!([<shmem_ $name _add>], $t, [value], Posting::Add(value));
        }
    )*};
}

/// The exported functions, out of the way of the helpers above.
pub mod exports {
    use super::{Fetching, Posting};

    crate::ext_amo_types!(ext_amos);
    crate::std_amo_types!(std_amos);
    crate::bit_amo_types!(bit_amos);
    crate::deprecated_ext_amo_types!(deprecated_ext_amos);
    crate::deprecated_std_amo_types!(deprecated_std_amos);
}

#[cfg(test)]
mod tests {
    use super::AmoValue;

    #[test]
    fn floats_travel_as_their_bit_patterns() {
        assert_eq!(1.5f32.to_word(), 0x3fc0_0000);
        assert_eq!(f64::from_word((-2.25f64).to_word()), -2.25);
        let nan = f32::from_bits(0x7fc0_1234);
        assert_eq!(f32::from_word(nan.to_word()).to_bits(), 0x7fc0_1234);
        assert_eq!((-7i64).to_word(), -7);
    }
}
