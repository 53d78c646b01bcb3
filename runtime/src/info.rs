//! Queries about the run and the library: which PEs and objects this PE can reach
//! (`shmem_pe_accessible`, `shmem_addr_accessible`) and which library and specification this
//! is (`shmem_info_get_version`, `shmem_info_get_name`).

use hw::Backend;

use crate::memory::sym::{Element, Sym};
use crate::pe::PeState;

/// The version of the OpenSHMEM specification whose API this library follows, as
/// `(major, minor)` (`shmem_info_get_version`, `SHMEM_MAJOR_VERSION` and
/// `SHMEM_MINOR_VERSION`).
///
/// It is 1.5: the point-to-point API is that of 1.5, plus two calls of 1.6
/// ([`crate::Ctx::ibput`]/[`crate::Ctx::ibget`] and [`crate::Ctx::pe_quiet`]), which do not
/// make this a 1.6 library.
pub fn info_get_version() -> (u32, u32) {
    (1, 5)
}

/// The library's name and version (`shmem_info_get_name`, OpenSHMEM's
/// `SHMEM_VENDOR_STRING`).
pub fn info_get_name() -> &'static str {
    concat!("rshmem ", env!("CARGO_PKG_VERSION"))
}

impl<B: Backend> PeState<B> {
    /// Whether this PE's RMA and atomics reach PE `pe`, numbered in the world
    /// (`shmem_pe_accessible`). Every PE of the run is reachable, since init imports every
    /// PE's heap; any other number is not.
    pub fn pe_accessible(&self, pe: u32) -> bool {
        pe < self.n_pes
    }

    /// Whether `sym` is a live symmetric object that this PE's RMA and atomics reach on PE
    /// `pe`, numbered in the world (`shmem_addr_accessible`): `pe` is accessible and `sym`
    /// lies inside one live allocation of the symmetric heap, aligned for `T`. Every PE's heap
    /// has the same allocations, so what is true here is true on `pe`.
    pub fn addr_accessible<T: Element>(&self, sym: Sym<T>, pe: u32) -> bool {
        self.pe_accessible(pe) && self.heaps.borrow().check(sym.access()).is_ok()
    }
}
