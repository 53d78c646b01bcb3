//! The part of OpenPMIx's C ABI (`pmix_common.h`, `pmix.h`, v2 to v5) the client uses,
//! written by hand so that no header is needed to build: `tests/pmix_abi.rs` compares it with
//! the real header where `libpmix-dev` is installed.

use std::ffi::{c_char, c_int, c_void};
use std::mem::{offset_of, size_of};

/// `PMIX_MAX_NSLEN + 1`.
pub(super) const NSPACE_BYTES: usize = 256;
/// `PMIX_MAX_KEYLEN + 1`.
pub(super) const KEY_BYTES: usize = 512;

/// `pmix_proc_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct Proc {
    pub(super) nspace: [c_char; NSPACE_BYTES],
    pub(super) rank: u32,
}

/// `pmix_value_t`: a type tag and a union of 24 bytes, of which the client reads integers,
/// booleans and byte objects.
#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct Value {
    pub(super) kind: u16,
    pub(super) data: [u64; 3],
}

/// `pmix_byte_object_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct ByteObject {
    pub(super) bytes: *mut c_char,
    pub(super) size: usize,
}

/// `pmix_info_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct Info {
    pub(super) key: [c_char; KEY_BYTES],
    pub(super) flags: u32,
    pub(super) value: Value,
}

/// `pmix_status_t` values.
pub(super) const SUCCESS: c_int = 0;
/// `pmix_data_type_t` values.
pub(super) const BOOL: u16 = 1;
pub(super) const STRING: u16 = 3;
pub(super) const SIZE: u16 = 4;
pub(super) const INT: u16 = 6;
pub(super) const INT32: u16 = 9;
pub(super) const UINT: u16 = 11;
pub(super) const UINT16: u16 = 13;
pub(super) const UINT32: u16 = 14;
pub(super) const UINT64: u16 = 15;
pub(super) const BYTE_OBJECT: u16 = 27;
pub(super) const PROC_RANK: u16 = 40;
/// `pmix_scope_t` `PMIX_GLOBAL`: shared with every rank of the job.
pub(super) const GLOBAL: u8 = 3;
/// `PMIX_RANK_WILDCARD`: the job rather than one rank.
pub(super) const RANK_WILDCARD: u32 = u32::MAX - 1;

/// The functions of `libpmix.so.2` the client calls.
pub(super) type InitFn = unsafe extern "C" fn(*mut Proc, *mut Info, usize) -> c_int;
pub(super) type GetFn =
    unsafe extern "C" fn(*const Proc, *const c_char, *const Info, usize, *mut *mut Value) -> c_int;
pub(super) type PutFn = unsafe extern "C" fn(u8, *const c_char, *mut Value) -> c_int;
pub(super) type CommitFn = unsafe extern "C" fn() -> c_int;
pub(super) type FenceFn = unsafe extern "C" fn(*const Proc, usize, *const Info, usize) -> c_int;
pub(super) type AbortFn = unsafe extern "C" fn(c_int, *const c_char, *mut Proc, usize) -> c_int;
pub(super) type FinalizeFn = unsafe extern "C" fn(*const Info, usize) -> c_int;
pub(super) type ValueLoadFn = unsafe extern "C" fn(*mut Value, *const c_void, u16);
pub(super) type ValueDestructFn = unsafe extern "C" fn(*mut Value);
pub(super) type InfoLoadFn = unsafe extern "C" fn(*mut Info, *const c_char, *const c_void, u16);
pub(super) type ErrorStringFn = unsafe extern "C" fn(c_int) -> *const c_char;

/// What this crate assumes of `pmix_common.h`, by the header's own names: sizes and offsets
/// in bytes, and constants. `tests/pmix_abi.rs` prints the same names from C and compares.
pub const PMIX_ABI: &[(&str, u64)] = &[
    ("sizeof(pmix_proc_t)", size_of::<Proc>() as u64),
    ("offsetof(pmix_proc_t, rank)", offset_of!(Proc, rank) as u64),
    ("sizeof(pmix_value_t)", size_of::<Value>() as u64),
    (
        "offsetof(pmix_value_t, data)",
        offset_of!(Value, data) as u64,
    ),
    ("sizeof(pmix_byte_object_t)", size_of::<ByteObject>() as u64),
    ("sizeof(pmix_info_t)", size_of::<Info>() as u64),
    (
        "offsetof(pmix_info_t, flags)",
        offset_of!(Info, flags) as u64,
    ),
    (
        "offsetof(pmix_info_t, value)",
        offset_of!(Info, value) as u64,
    ),
    ("PMIX_MAX_NSLEN", (NSPACE_BYTES - 1) as u64),
    ("PMIX_MAX_KEYLEN", (KEY_BYTES - 1) as u64),
    ("PMIX_SUCCESS", SUCCESS as u64),
    ("PMIX_BOOL", BOOL as u64),
    ("PMIX_STRING", STRING as u64),
    ("PMIX_SIZE", SIZE as u64),
    ("PMIX_INT", INT as u64),
    ("PMIX_INT32", INT32 as u64),
    ("PMIX_UINT", UINT as u64),
    ("PMIX_UINT16", UINT16 as u64),
    ("PMIX_UINT32", UINT32 as u64),
    ("PMIX_UINT64", UINT64 as u64),
    ("PMIX_BYTE_OBJECT", BYTE_OBJECT as u64),
    ("PMIX_PROC_RANK", PROC_RANK as u64),
    ("PMIX_GLOBAL", GLOBAL as u64),
    ("PMIX_RANK_WILDCARD", RANK_WILDCARD as u64),
];
