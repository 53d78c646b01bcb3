//! The one type table of the C API: every C type the OpenSHMEM typed families take, with its
//! `TYPENAME` (the part of a function's name, as in `shmem_long_put`), its Rust type and the
//! families it belongs to (the specification's tables `stdrmatypes`, `stdamotypes`,
//! `extamotypes`, `bitamotypes`, `p2psynctypes` and `teamreducetypes` with the reductions each
//! type has).
//!
//! Each table is a macro that hands its rows to a callback macro, so that the exports (a
//! family's `macro_rules!` called once per row) and the header generator (which turns the
//! rows into data) read the same rows: a type added here appears in both, and nothing is
//! written out once per type by hand.
//!
//! A row is `(TYPENAME, RustType, "C type")`.

use std::ffi::{c_char, c_int, c_long, c_longlong, c_schar, c_short, c_uchar, c_uint};
use std::ffi::{c_ulong, c_ulonglong, c_ushort};

/// C's `long double` on x86-64 and AArch64 Linux: 16 bytes, moved as bytes by RMA; the
/// reductions, which must compute with it, do so in C arithmetic.
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct LongDouble(pub [u8; 16]);

/// C's `float _Complex`: two floats.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ComplexF(pub [f32; 2]);

/// C's `double _Complex`: two doubles.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ComplexD(pub [f64; 2]);

/// Aliases the rows use, so a row names its C type's Rust twin in one token.
pub mod c {
    pub use super::{ComplexD, ComplexF, LongDouble};
    pub use std::ffi::{c_char, c_int, c_long, c_longlong, c_schar, c_short, c_uchar, c_uint};
    pub use std::ffi::{c_ulong, c_ulonglong, c_ushort};
}

// Why these asserts: the rows below use Rust twins whose sizes must equal the C types'.
const _: () = assert!(std::mem::size_of::<LongDouble>() == 16);
const _: () = assert!(std::mem::size_of::<c_long>() == 8, "LP64 targets only");
const _: () = {
    let _ = (
        c_char::MIN,
        c_int::MIN,
        c_longlong::MIN,
        c_schar::MIN,
        c_short::MIN,
        c_uchar::MIN,
        c_uint::MIN,
        c_ulong::MIN,
        c_ulonglong::MIN,
        c_ushort::MIN,
    );
};

/// The standard RMA types (`stdrmatypes`, 24 rows): put, get, p, g, iput, iget, ibput,
/// ibget, nbi, put_signal.
#[macro_export]
macro_rules! rma_types {
    ($m:ident) => {
        $m! {
            (float, f32, "float"),
            (double, f64, "double"),
            (longdouble, $crate::types::c::LongDouble, "long double"),
            (char, $crate::types::c::c_char, "char"),
            (schar, $crate::types::c::c_schar, "signed char"),
            (short, $crate::types::c::c_short, "short"),
            (int, $crate::types::c::c_int, "int"),
            (long, $crate::types::c::c_long, "long"),
            (longlong, $crate::types::c::c_longlong, "long long"),
            (uchar, $crate::types::c::c_uchar, "unsigned char"),
            (ushort, $crate::types::c::c_ushort, "unsigned short"),
            (uint, $crate::types::c::c_uint, "unsigned int"),
            (ulong, $crate::types::c::c_ulong, "unsigned long"),
            (ulonglong, $crate::types::c::c_ulonglong, "unsigned long long"),
            (int8, i8, "int8_t"),
            (int16, i16, "int16_t"),
            (int32, i32, "int32_t"),
            (int64, i64, "int64_t"),
            (uint8, u8, "uint8_t"),
            (uint16, u16, "uint16_t"),
            (uint32, u32, "uint32_t"),
            (uint64, u64, "uint64_t"),
            (size, usize, "size_t"),
            (ptrdiff, isize, "ptrdiff_t"),
        }
    };
}

/// The standard AMO types (`stdamotypes`, 12 rows): fetch_inc, inc, fetch_add, add,
/// compare_swap, and everything of `extamotypes`.
#[macro_export]
macro_rules! std_amo_types {
    ($m:ident) => {
        $m! {
            (int, $crate::types::c::c_int, "int"),
            (long, $crate::types::c::c_long, "long"),
            (longlong, $crate::types::c::c_longlong, "long long"),
            (uint, $crate::types::c::c_uint, "unsigned int"),
            (ulong, $crate::types::c::c_ulong, "unsigned long"),
            (ulonglong, $crate::types::c::c_ulonglong, "unsigned long long"),
            (int32, i32, "int32_t"),
            (int64, i64, "int64_t"),
            (uint32, u32, "uint32_t"),
            (uint64, u64, "uint64_t"),
            (size, usize, "size_t"),
            (ptrdiff, isize, "ptrdiff_t"),
        }
    };
}

/// The extended AMO types (`extamotypes`, 14 rows): fetch, set, swap. The floating rows
/// are moved as their bit patterns by 32- and 64-bit atomics.
#[macro_export]
macro_rules! ext_amo_types {
    ($m:ident) => {
        $m! {
            (float, f32, "float"),
            (double, f64, "double"),
            (int, $crate::types::c::c_int, "int"),
            (long, $crate::types::c::c_long, "long"),
            (longlong, $crate::types::c::c_longlong, "long long"),
            (uint, $crate::types::c::c_uint, "unsigned int"),
            (ulong, $crate::types::c::c_ulong, "unsigned long"),
            (ulonglong, $crate::types::c::c_ulonglong, "unsigned long long"),
            (int32, i32, "int32_t"),
            (int64, i64, "int64_t"),
            (uint32, u32, "uint32_t"),
            (uint64, u64, "uint64_t"),
            (size, usize, "size_t"),
            (ptrdiff, isize, "ptrdiff_t"),
        }
    };
}

/// The bitwise AMO types (`bitamotypes`, 7 rows): fetch_and, and, fetch_or, or, fetch_xor,
/// xor.
#[macro_export]
macro_rules! bit_amo_types {
    ($m:ident) => {
        $m! {
            (uint, $crate::types::c::c_uint, "unsigned int"),
            (ulong, $crate::types::c::c_ulong, "unsigned long"),
            (ulonglong, $crate::types::c::c_ulonglong, "unsigned long long"),
            (int32, i32, "int32_t"),
            (int64, i64, "int64_t"),
            (uint32, u32, "uint32_t"),
            (uint64, u64, "uint64_t"),
        }
    };
}

/// The point-to-point synchronisation types (`p2psynctypes`, 14 rows): wait_until, test
/// and their `_all`, `_any`, `_some` and `_vector` forms.
#[macro_export]
macro_rules! p2p_types {
    ($m:ident) => {
        $m! {
            (short, $crate::types::c::c_short, "short"),
            (int, $crate::types::c::c_int, "int"),
            (long, $crate::types::c::c_long, "long"),
            (longlong, $crate::types::c::c_longlong, "long long"),
            (ushort, $crate::types::c::c_ushort, "unsigned short"),
            (uint, $crate::types::c::c_uint, "unsigned int"),
            (ulong, $crate::types::c::c_ulong, "unsigned long"),
            (ulonglong, $crate::types::c::c_ulonglong, "unsigned long long"),
            (int32, i32, "int32_t"),
            (int64, i64, "int64_t"),
            (uint32, u32, "uint32_t"),
            (uint64, u64, "uint64_t"),
            (size, usize, "size_t"),
            (ptrdiff, isize, "ptrdiff_t"),
        }
    };
}

/// The team reduction types (`teamreducetypes`, 26 rows), each with the reductions it has:
/// `bit` (and, or, xor), `minmax` (max, min), `arith` (sum, prod, and the 1.6 scans).
#[macro_export]
macro_rules! reduce_types {
    ($m:ident) => {
        $m! {
            (char, $crate::types::c::c_char, "char", [minmax, arith]),
            (schar, $crate::types::c::c_schar, "signed char", [minmax, arith]),
            (short, $crate::types::c::c_short, "short", [minmax, arith]),
            (int, $crate::types::c::c_int, "int", [minmax, arith]),
            (long, $crate::types::c::c_long, "long", [minmax, arith]),
            (longlong, $crate::types::c::c_longlong, "long long", [minmax, arith]),
            (ptrdiff, isize, "ptrdiff_t", [minmax, arith]),
            (uchar, $crate::types::c::c_uchar, "unsigned char", [bit, minmax, arith]),
            (ushort, $crate::types::c::c_ushort, "unsigned short", [bit, minmax, arith]),
            (uint, $crate::types::c::c_uint, "unsigned int", [bit, minmax, arith]),
            (ulong, $crate::types::c::c_ulong, "unsigned long", [bit, minmax, arith]),
            (ulonglong, $crate::types::c::c_ulonglong, "unsigned long long", [bit, minmax, arith]),
            (int8, i8, "int8_t", [bit, minmax, arith]),
            (int16, i16, "int16_t", [bit, minmax, arith]),
            (int32, i32, "int32_t", [bit, minmax, arith]),
            (int64, i64, "int64_t", [bit, minmax, arith]),
            (uint8, u8, "uint8_t", [bit, minmax, arith]),
            (uint16, u16, "uint16_t", [bit, minmax, arith]),
            (uint32, u32, "uint32_t", [bit, minmax, arith]),
            (uint64, u64, "uint64_t", [bit, minmax, arith]),
            (size, usize, "size_t", [bit, minmax, arith]),
            (float, f32, "float", [minmax, arith]),
            (double, f64, "double", [minmax, arith]),
            (longdouble, $crate::types::c::LongDouble, "long double", [minmax, arith]),
            (complexd, $crate::types::c::ComplexD, "double _Complex", [arith]),
            (complexf, $crate::types::c::ComplexF, "float _Complex", [arith]),
        }
    };
}

/// The types of the AMOs OpenSHMEM 1.3 named without `atomic_` and 1.4 deprecated
/// (`shmem_TYPENAME_fetch`, `set`, `swap`; 5 rows).
#[macro_export]
macro_rules! deprecated_ext_amo_types {
    ($m:ident) => {
        $m! {
            (float, f32, "float"),
            (double, f64, "double"),
            (int, $crate::types::c::c_int, "int"),
            (long, $crate::types::c::c_long, "long"),
            (longlong, $crate::types::c::c_longlong, "long long"),
        }
    };
}

/// The types of the deprecated arithmetic AMOs of OpenSHMEM 1.3 (`shmem_TYPENAME_cswap`,
/// `finc`, `inc`, `fadd`, `add`; 3 rows).
#[macro_export]
macro_rules! deprecated_std_amo_types {
    ($m:ident) => {
        $m! {
            (int, $crate::types::c::c_int, "int"),
            (long, $crate::types::c::c_long, "long"),
            (longlong, $crate::types::c::c_longlong, "long long"),
        }
    };
}

/// The types of the deprecated `shmem_TYPENAME_wait(ivar, cmp_value)` of OpenSHMEM 1.0
/// (4 rows).
#[macro_export]
macro_rules! deprecated_wait_types {
    ($m:ident) => {
        $m! {
            (short, $crate::types::c::c_short, "short"),
            (int, $crate::types::c::c_int, "int"),
            (long, $crate::types::c::c_long, "long"),
            (longlong, $crate::types::c::c_longlong, "long long"),
        }
    };
}

/// The types of the deprecated active-set reductions
/// `shmem_TYPENAME_OP_to_all(dest, source, nreduce, PE_start, logPE_stride, PE_size, pWrk,
/// pSync)` (OpenSHMEM 1.4's table, 9 rows), each with its reductions as in
/// [`reduce_types!`].
#[macro_export]
macro_rules! to_all_types {
    ($m:ident) => {
        $m! {
            (short, $crate::types::c::c_short, "short", [bit, minmax, arith]),
            (int, $crate::types::c::c_int, "int", [bit, minmax, arith]),
            (long, $crate::types::c::c_long, "long", [bit, minmax, arith]),
            (longlong, $crate::types::c::c_longlong, "long long", [bit, minmax, arith]),
            (float, f32, "float", [minmax, arith]),
            (double, f64, "double", [minmax, arith]),
            (longdouble, $crate::types::c::LongDouble, "long double", [minmax, arith]),
            (complexd, $crate::types::c::ComplexD, "double _Complex", [arith]),
            (complexf, $crate::types::c::ComplexF, "float _Complex", [arith]),
        }
    };
}
