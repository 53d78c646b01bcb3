//! Anonymous memory mappings whose pages the OS commits only when first written: the one place
//! the simulator maps memory, for coroutine stacks (`stacks.rs`) and addressable segments
//! (`memory/region.rs`), and where the C API maps its views of peers' memory.
//!
//! `MAP_NORESERVE` is the point: without it a private writable mapping is charged in full to
//! the OS's commit limit when it is made, so a thousand PEs with 8 MiB stacks and 1 GiB heaps
//! could be refused though they touch a few megabytes. With it, a mapping is address space
//! until written; the pages read as zero.

use std::io;
use std::ptr::NonNull;

/// Maps `len` bytes (more than 0) readable and writable, private and zero-filled.
///
/// # Errors
/// The OS's, when it refuses the mapping (no address space left).
pub fn map_lazily(len: usize) -> io::Result<NonNull<u8>> {
    // SAFETY: an anonymous mapping at an address of the kernel's choosing aliases nothing;
    // the result is checked before use.
    let at = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if at == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    NonNull::new(at.cast::<u8>()).ok_or_else(|| io::Error::other("mmap returned address 0"))
}

/// Unmaps what [`map_lazily`] mapped, logging a failure (nothing else can be done in a drop).
///
/// # Safety
/// `base` and `len` must be a mapping made by [`map_lazily`] that nothing uses any more.
pub(crate) unsafe fn unmap(base: NonNull<u8>, len: usize) {
    // SAFETY: the caller's contract.
    if unsafe { libc::munmap(base.as_ptr().cast(), len) } != 0 {
        tracing::warn!(
            target: crate::TRACING_TARGET,
            "munmap of {len} bytes failed: {}",
            io::Error::last_os_error()
        );
    }
}
