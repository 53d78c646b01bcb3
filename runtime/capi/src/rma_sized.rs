//! The untyped RMA of the C API: the sized families (`shmem_put8` .. `shmem_put128`, and the
//! same for `get`, `iput`, `iget`, `ibput`, `ibget`, `put_nbi`, `get_nbi`) and the byte
//! families (`shmem_putmem`, `shmem_getmem` and their `_nbi` forms), with `ctx_` twins.
//!
//! A sized function moves elements of SIZE bits, so it is the typed family of `rma.rs` over
//! the unsigned integer of that size (`u8` .. `u128`): the runtime then checks that the
//! symmetric address is aligned to the element, as the specification asks. The byte
//! families are the same over `u8`, `nelems` counting bytes. The Rust parameters are typed
//! pointers where C declares `void *`; a pointer is passed alike whatever it points to.

use std::ffi::c_int;

use crate::handles::shmem_ctx_t;
use crate::rma::{BLOCKING, NBI, Way, blocks, elements, get, put, twins};

/// The exports of one SIZE.
macro_rules! sized_rma {
    ($($bits:literal => $t:ty),* $(,)?) => { paste::paste! { $(
        twins!([<shmem_ctx_put $bits>], [<shmem_put $bits>],
            concat!("Copies `nelems` ", $bits, "-bit elements to `dest` on `pe`."),
            (dest: *mut $t, source: *const $t, nelems: usize, pe: c_int) -> () => put, BLOCKING);
        twins!([<shmem_ctx_put $bits _nbi>], [<shmem_put $bits _nbi>],
            concat!("Copies `nelems` ", $bits, "-bit elements to `dest` on `pe`, completed \
                     by a quiet."),
            (dest: *mut $t, source: *const $t, nelems: usize, pe: c_int) -> () => put, NBI);
        twins!([<shmem_ctx_get $bits>], [<shmem_get $bits>],
            concat!("Copies `nelems` ", $bits, "-bit elements at `source` on `pe` into `dest`."),
            (dest: *mut $t, source: *const $t, nelems: usize, pe: c_int) -> () => get, BLOCKING);
        twins!([<shmem_ctx_get $bits _nbi>], [<shmem_get $bits _nbi>],
            concat!("Copies `nelems` ", $bits, "-bit elements at `source` on `pe` into \
                     `dest`, completed by a quiet."),
            (dest: *mut $t, source: *const $t, nelems: usize, pe: c_int) -> () => get, NBI);
        twins!([<shmem_ctx_iput $bits>], [<shmem_iput $bits>],
            concat!("Copies `nelems` strided ", $bits, "-bit elements to `dest` on `pe`."),
            (dest: *mut $t, source: *const $t, dst: isize, sst: isize, nelems: usize,
             pe: c_int) -> () => elements, Way::Put);
        twins!([<shmem_ctx_iget $bits>], [<shmem_iget $bits>],
            concat!("Copies `nelems` strided ", $bits, "-bit elements at `source` on `pe` \
                     into `dest`."),
            (dest: *mut $t, source: *const $t, dst: isize, sst: isize, nelems: usize,
             pe: c_int) -> () => elements, Way::Get);
        twins!([<shmem_ctx_ibput $bits>], [<shmem_ibput $bits>],
            concat!("Copies `nblocks` strided blocks of `bsize` ", $bits, "-bit elements to \
                     `dest` on `pe`."),
            (dest: *mut $t, source: *const $t, dst: isize, sst: isize, bsize: usize,
             nblocks: usize, pe: c_int) -> () => blocks, Way::Put);
        twins!([<shmem_ctx_ibget $bits>], [<shmem_ibget $bits>],
            concat!("Copies `nblocks` strided blocks of `bsize` ", $bits, "-bit elements at \
                     `source` on `pe` into `dest`."),
            (dest: *mut $t, source: *const $t, dst: isize, sst: isize, bsize: usize,
             nblocks: usize, pe: c_int) -> () => blocks, Way::Get);
    )* } };
}

sized_rma!(8 => u8, 16 => u16, 32 => u32, 64 => u64, 128 => u128);

twins!(shmem_ctx_putmem, shmem_putmem, "Copies `nelems` bytes to `dest` on `pe`.",
    (dest: *mut u8, source: *const u8, nelems: usize, pe: c_int) -> () => put, BLOCKING);
twins!(shmem_ctx_putmem_nbi, shmem_putmem_nbi,
    "Copies `nelems` bytes to `dest` on `pe`, completed by a quiet.",
    (dest: *mut u8, source: *const u8, nelems: usize, pe: c_int) -> () => put, NBI);
twins!(shmem_ctx_getmem, shmem_getmem, "Copies `nelems` bytes at `source` on `pe` into `dest`.",
    (dest: *mut u8, source: *const u8, nelems: usize, pe: c_int) -> () => get, BLOCKING);
twins!(shmem_ctx_getmem_nbi, shmem_getmem_nbi,
    "Copies `nelems` bytes at `source` on `pe` into `dest`, completed by a quiet.",
    (dest: *mut u8, source: *const u8, nelems: usize, pe: c_int) -> () => get, NBI);
