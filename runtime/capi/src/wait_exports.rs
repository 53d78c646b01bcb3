//! The exported waits and tests: one `macro_rules!` expansion per row of `p2p_types!`
//! (`shmem_TYPENAME_wait_until`, `_all`, `_any`, `_some`, the `_vector` forms and the `test`
//! family) and of `deprecated_wait_types!` (`shmem_TYPENAME_wait`); the work is in `wait.rs`.

use crate::wait::{SetOp, ValuesIn, all_held, any_index, array, one, some_indices};

/// The waits and tests of each `p2p_types!` row.
macro_rules! p2p_exports {
    ($(($name:ident, $t:ty, $c:literal)),* $(,)?) => {$(paste::paste! {
        #[doc = concat!("Waits until `*ivar cmp cmp_value` holds (`", $c, "`).")]
        #[unsafe(no_mangle)]
        pub extern "C" fn [<shmem_ $name _wait_until>](ivar: *mut $t, cmp: ::std::ffi::c_int, cmp_value: $t) {
            one(stringify!([<shmem_ $name _wait_until>]), ivar, cmp, cmp_value, true);
        }

        #[doc = concat!("1 if `*ivar cmp cmp_value` holds now, else 0 (`", $c, "`).")]
        #[unsafe(no_mangle)]
        pub extern "C" fn [<shmem_ $name _test>](ivar: *mut $t, cmp: ::std::ffi::c_int, cmp_value: $t) -> ::std::ffi::c_int {
            ::std::ffi::c_int::from(one(stringify!([<shmem_ $name _test>]), ivar, cmp, cmp_value, false))
        }

        p2p_array!($name, $t, wait_until_all, WaitAll, (), all_drop, ValuesIn::Same, cmp_value: $t);
        p2p_array!($name, $t, wait_until_all_vector, WaitAll, (), all_drop, ValuesIn::Each, cmp_values: *const $t);
        p2p_array!($name, $t, test_all, TestAll, ::std::ffi::c_int, all_held, ValuesIn::Same, cmp_value: $t);
        p2p_array!($name, $t, test_all_vector, TestAll, ::std::ffi::c_int, all_held, ValuesIn::Each, cmp_values: *const $t);
        p2p_array!($name, $t, wait_until_any, WaitAny, usize, any_index, ValuesIn::Same, cmp_value: $t);
        p2p_array!($name, $t, wait_until_any_vector, WaitAny, usize, any_index, ValuesIn::Each, cmp_values: *const $t);
        p2p_array!($name, $t, test_any, TestAny, usize, any_index, ValuesIn::Same, cmp_value: $t);
        p2p_array!($name, $t, test_any_vector, TestAny, usize, any_index, ValuesIn::Each, cmp_values: *const $t);
        p2p_some!($name, $t, wait_until_some, WaitSome, ValuesIn::Same, cmp_value: $t);
        p2p_some!($name, $t, wait_until_some_vector, WaitSome, ValuesIn::Each, cmp_values: *const $t);
        p2p_some!($name, $t, test_some, TestSome, ValuesIn::Same, cmp_value: $t);
        p2p_some!($name, $t, test_some_vector, TestSome, ValuesIn::Each, cmp_values: *const $t);
    })*};
}

/// `shmem_$name_$call(ivars, nelems, status, cmp, value(s)) -> $ret`, the result made by
/// `$result`.
macro_rules! p2p_array {
    ($name:ident, $t:ty, $call:ident, $op:ident, $ret:ty, $result:ident, $values:path, $value:ident: $vt:ty) => {paste::paste! {
        #[doc = concat!("`", stringify!($call), "` on the `nelems` elements of `ivars` left in by `status`.")]
        ///
        /// # Safety
        /// `status` is null or points to `nelems` readable `int`s; a `cmp_values` array has
        /// `nelems` readable values.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn [<shmem_ $name _ $call>](
            ivars: *mut $t,
            nelems: usize,
            status: *const ::std::ffi::c_int,
            cmp: ::std::ffi::c_int,
            $value: $vt,
        ) -> $ret {
            let call = stringify!([<shmem_ $name _ $call>]);
            // SAFETY: the caller keeps this function's contract, which is array's.
            $result(unsafe { array(call, ivars, nelems, status, cmp, $values($value), SetOp::$op) })
        }
    }};
}

/// `shmem_$name_$call(ivars, nelems, indices, status, cmp, value(s)) -> size_t`.
macro_rules! p2p_some {
    ($name:ident, $t:ty, $call:ident, $op:ident, $values:path, $value:ident: $vt:ty) => {paste::paste! {
        #[doc = concat!("`", stringify!($call), "`: stores the indices of the elements of `ivars` that hold in `indices` and returns how many.")]
        ///
        /// # Safety
        /// `indices` has room for `nelems` `size_t`s; `status` is null or points to `nelems`
        /// readable `int`s; a `cmp_values` array has `nelems` readable values.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn [<shmem_ $name _ $call>](
            ivars: *mut $t,
            nelems: usize,
            indices: *mut usize,
            status: *const ::std::ffi::c_int,
            cmp: ::std::ffi::c_int,
            $value: $vt,
        ) -> usize {
            let call = stringify!([<shmem_ $name _ $call>]);
            // SAFETY: the caller keeps this function's contract, which is array's and
            // some_indices'.
            unsafe { some_indices(array(call, ivars, nelems, status, cmp, $values($value), SetOp::$op), indices) }
        }
    }};
}

/// The deprecated `shmem_TYPENAME_wait(ivar, cmp_value)` of each `deprecated_wait_types!`
/// row: waits until `*ivar` differs from `cmp_value`.
macro_rules! deprecated_waits {
    ($(($name:ident, $t:ty, $c:literal)),* $(,)?) => {$(paste::paste! {
        #[doc = concat!("Deprecated: waits until `*ivar != cmp_value` (`", $c, "`).")]
        #[unsafe(no_mangle)]
        pub extern "C" fn [<shmem_ $name _wait>](ivar: *mut $t, cmp_value: $t) {
            one(stringify!([<shmem_ $name _wait>]), ivar, crate::cmp::NE, cmp_value, true);
        }
    })*};
}

/// `_all` waits return nothing.
fn all_drop(_: crate::wait::Found) {}

crate::p2p_types!(p2p_exports);
crate::deprecated_wait_types!(deprecated_waits);
