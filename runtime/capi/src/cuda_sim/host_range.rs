//! Whether a range of addresses that a runtime call is given is memory of this process, so
//! that a wild pointer or a size past the end of a buffer is `cudaErrorInvalidValue`, as the
//! CUDA runtime returns it, and never a crash of every simulated PE (they share the process)
//! nor an allocation the size of the bogus count.
//!
//! How: `mincore(2)` on the range's pages, which fails with `ENOMEM` where a page is not
//! mapped, in chunks so that its result vector stays small whatever the size. It sees mappings,
//! not their permissions: a copy into read-only memory of the program still faults.

use std::ffi::c_void;

/// The pages `mincore` is asked about at once: 16 MiB of 4 KiB pages.
const CHUNK_PAGES: usize = 4096;

/// Why the `bytes` at `addr` are not all mapped memory of this process, if they are not.
pub(crate) fn not_mapped(addr: usize, bytes: usize) -> Option<String> {
    // Why first: a reservation of the driver API is mapped (`PROT_NONE`) where nothing is.
    if let Some(why) = crate::cuda_sim::driver_vmm::not_accessible(addr, bytes) {
        return Some(why);
    }
    let Some(end) = addr.checked_add(bytes) else {
        return Some(format!(
            "{bytes} bytes at {addr:#x} run past the end of the address space"
        ));
    };
    // SAFETY: sysconf only reads a constant of the system.
    let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
    let mut residency = vec![0u8; CHUNK_PAGES];
    let mut at = addr & !(page - 1);
    while at < end {
        let len = (end - at).min(CHUNK_PAGES * page);
        // SAFETY: mincore only reads the page tables; `residency` has a byte for each of the
        // at most CHUNK_PAGES pages of `len` bytes from the page-aligned `at`.
        if unsafe { libc::mincore(at as *mut c_void, len, residency.as_mut_ptr()) } != 0 {
            return Some(format!(
                "{bytes} bytes at {addr:#x} are not all memory of this process (nothing is \
                 mapped from {at:#x} on): a wild or freed pointer, or a size past the end of \
                 its buffer"
            ));
        }
        at += len;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_is_mapped_and_a_wild_pointer_or_huge_size_is_not() {
        let buffer = vec![7u8; 10_000];
        let at = buffer.as_ptr() as usize;
        assert_eq!(not_mapped(at, buffer.len()), None);
        assert!(not_mapped(16, 8).is_some());
        assert!(not_mapped(at, 1 << 46).is_some());
        assert!(
            not_mapped(at, usize::MAX)
                .unwrap()
                .contains("end of the address space")
        );
    }
}
