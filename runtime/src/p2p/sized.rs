//! Sized RMA (`shmem_putSIZE`/`shmem_getSIZE`): bytes moved as elements of 8 to 128 bits.
//!
//! They differ from the `*_bytes` operations only in what is checked: the length must be a
//! whole number of elements and the symmetric address aligned to the element size, as
//! OpenSHMEM asks of them. The data then travels as a put or get of those bytes.

use hw::{Backend, Copier};

use crate::ctx::Ctx;
use crate::error::ShmemError;
use crate::memory::allocator::Access;
use crate::memory::sym::SymAddr;

/// Generates `$put`/`$get` for `$size_bytes`-byte elements.
macro_rules! sized {
    ($($put:ident, $get:ident => $size_bytes:literal;)*) => {$(
        #[doc = concat!(
            "Copies `src`, a whole number of ", stringify!($size_bytes), "-byte elements, to \
             `dst` on PE `pe` (`shmem_", stringify!($put), "`); `dst` is aligned to ",
            stringify!($size_bytes), " bytes. Returns once `src` may be reused."
        )]
        ///
        /// # Ordering
        /// As [`Ctx::put`].
        ///
        /// # Errors
        /// [`ShmemError::SizedLength`] unless `src.len()` is a multiple of the element size;
        /// [`ShmemError::Misaligned`] unless `dst` is aligned to it; as [`Ctx::put_bytes`]
        /// otherwise.
        pub fn $put(&self, dst: SymAddr, src: &[u8], pe: u32) -> Result<(), ShmemError> {
            let access = sized_access(stringify!($put), dst, src.len(), $size_bytes)?;
            self.put_checked(
                self.store_range(access, pe, stringify!($put))?,
                src,
                Copier::Device,
            )
        }

        #[doc = concat!(
            "Reads `len_bytes` bytes, a whole number of ", stringify!($size_bytes),
            "-byte elements, at `src` from PE `pe` (`shmem_", stringify!($get), "`); `src` \
             is aligned to ", stringify!($size_bytes), " bytes."
        )]
        ///
        /// # Ordering
        /// As [`Ctx::get`].
        ///
        /// # Errors
        /// [`ShmemError::SizedLength`] unless `len_bytes` is a multiple of the element size;
        /// [`ShmemError::Misaligned`] unless `src` is aligned to it; as [`Ctx::get_bytes`]
        /// otherwise.
        pub fn $get(&self, src: SymAddr, len_bytes: usize, pe: u32) -> Result<Vec<u8>, ShmemError> {
            let access = sized_access(stringify!($get), src, len_bytes, $size_bytes)?;
            let mut out = vec![0; len_bytes];
            self.get_checked(self.read_range(access, pe)?, &mut out)?;
            Ok(out)
        }
    )*};
}

impl<B: Backend> Ctx<B> {
    sized! {
        put8, get8 => 1;
        put16, get16 => 2;
        put32, get32 => 4;
        put64, get64 => 8;
        put128, get128 => 16;
    }
}

/// What `op` on `len_bytes` at `addr` in `size_bytes`-byte elements claims.
///
/// # Errors
/// [`ShmemError::SizedLength`] unless `len_bytes` is a whole number of elements.
fn sized_access(
    op: &'static str,
    addr: SymAddr,
    len_bytes: usize,
    size_bytes: u64,
) -> Result<Access, ShmemError> {
    if !(len_bytes as u64).is_multiple_of(size_bytes) {
        return Err(ShmemError::SizedLength {
            op,
            len_bytes,
            size_bytes,
        });
    }
    Ok(Access {
        offset: addr.0,
        len_bytes: len_bytes as u64,
        align: size_bytes,
        owner: None,
    })
}
