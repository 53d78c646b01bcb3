//! Host memory shared between the processes of a run: memfds mapped `MAP_SHARED`, this
//! process's and its peers'. Every segment of the process backend, and every `Host` segment of
//! the CUDA backend with a process per PE, is one.
//!
//! A segment is a `memfd_create` file sized with
//! `ftruncate`: the file is sparse, so a 1 GiB heap costs only the pages that are touched,
//! and it reads as zero. The owner maps it read/write and keeps the descriptor open until its
//! device is dropped, so that peers can take copies of it (`crate::common::fd_sharing`) and map
//! it at addresses of their own. A [`Mapping`] is one such view: a base address and a length.
//!
//! Why raw pointers rather than slices: the bytes are written by other processes at any time,
//! so no Rust reference to them may exist; every access goes through a pointer, as plain
//! copies ordered by the backend queue's fences or as atomics (`cpu_atomics.rs`).

#[cfg(feature = "process")]
use crate::sync::cross_process::{Ordering, fence};
use std::ffi::CStr;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::ptr::NonNull;

/// A view of shared memory in this process.
#[derive(Debug)]
pub(crate) struct Mapping {
    base: NonNull<u8>,
    len: usize,
    /// Whether dropping the view unmaps it: not for the program's own static data, which
    /// stays where the program expects it.
    unmap_on_drop: bool,
}

// SAFETY: a mapping is an address range; every access through it is a raw-pointer copy or an
// atomic whose ordering the backend states, and other processes race with it anyway, so
// another thread of this process is no different.
unsafe impl Send for Mapping {}
// SAFETY: as for Send: `&Mapping` only hands out the base address.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Maps `len` bytes of `fd` shared and read/write, at a base aligned as
    /// [`base_alignment`] says. Length 0 maps nothing.
    ///
    /// # Errors
    /// What `mmap` said.
    pub(crate) fn map(fd: BorrowedFd<'_>, len: usize) -> io::Result<Mapping> {
        if len == 0 {
            return Ok(Mapping {
                base: NonNull::dangling(),
                len: 0,
                unmap_on_drop: false,
            });
        }
        let addr = map_aligned(fd, len, base_alignment(len))?;
        let base = NonNull::new(addr.cast::<u8>()).ok_or_else(io::Error::last_os_error)?;
        Ok(Mapping {
            base,
            len,
            unmap_on_drop: true,
        })
    }

    /// A view of memory this process keeps mapped elsewhere (the program's static data),
    /// which dropping the view leaves alone.
    ///
    /// # Safety
    /// `base..base + len` must stay mapped read/write for as long as the view is used.
    pub(crate) unsafe fn borrowed(base: NonNull<u8>, len: usize) -> Mapping {
        Mapping {
            base,
            len,
            unmap_on_drop: false,
        }
    }

    /// The length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The address of `len` bytes at `offset`.
    ///
    /// # Panics
    /// If the range is not inside the mapping (contract violation: the runtime checks ranges).
    pub(crate) fn span(&self, offset: u64, len: u64, what: &str) -> *mut u8 {
        let inside = offset
            .checked_add(len)
            .is_some_and(|end| end <= self.len as u64);
        assert!(
            inside,
            "{what}: bytes {offset}..+{len} lie outside a segment of {} bytes",
            self.len
        );
        // SAFETY: offset + len <= self.len, so the result is inside the mapping (or one past
        // its end for an empty range).
        unsafe { self.base.as_ptr().add(offset as usize) }
    }

    /// Stores `data` at `offset` with plain stores (a put, a local write). Ordering with
    /// other operations is the caller's fences' job.
    #[cfg(feature = "process")]
    ///
    /// # Panics
    /// If the range is not inside the mapping.
    pub(crate) fn write(&self, offset: u64, data: &[u8], what: &str) {
        let to = self.span(offset, data.len() as u64, what);
        // SAFETY: `to` has `data.len()` bytes inside the mapping; `data` is the caller's buffer
        // or another mapping's bytes, and the ranges of one operation do not overlap (the
        // runtime's contract). Other PEs may read meanwhile: what they see is ordered by the
        // writer's fences and their waits.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), to, data.len()) };
    }

    /// Copies `len` bytes at `offset` to `to` with plain loads, then an Acquire fence: the
    /// loads are not reordered after later accesses (AArch64 `dmb ishld`; nothing on x86),
    /// so a read that sees a fenced flag also sees what came before it when a later read
    /// looks.
    ///
    /// # Safety
    /// `to` is valid for `len` bytes of writes and does not overlap the mapping's bytes read.
    ///
    /// # Panics
    /// If the range is not inside the mapping.
    #[cfg(feature = "process")]
    pub(crate) unsafe fn read_to(&self, offset: u64, len: u64, to: *mut u8, what: &str) {
        let from = self.span(offset, len, what);
        // SAFETY: `from` has `len` bytes inside the mapping; the caller promises `to` has as
        // many and does not overlap them.
        unsafe { std::ptr::copy_nonoverlapping(from, to, len as usize) };
        fence(Ordering::Acquire);
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        if self.unmap_on_drop {
            // SAFETY: the range was mapped by `map` and no reference into it exists (accesses
            // go through raw pointers of this mapping, which is being dropped).
            unsafe { libc::munmap(self.base.as_ptr().cast(), self.len) };
        }
    }
}

/// The most a mapping's base is aligned to: the alignment of a 1 GiB heap, the default size.
const MAX_BASE_ALIGN_BYTES: usize = 1 << 30;

/// The alignment of the base of a mapping of `len` bytes: `len` rounded up to a power of two,
/// at most [`MAX_BASE_ALIGN_BYTES`], at least a page.
///
/// Why: `shmem_align` aligns an allocation's offset in its segment, and that offset is the
/// same on every PE while each PE maps the segment at an address of its own; the address is
/// as aligned as asked only where the base is at least as aligned (OpenSHMEM 1.5 section 9.3,
/// shmem_align). The cost is address space only, never memory.
fn base_alignment(len: usize) -> usize {
    len.next_power_of_two()
        .clamp(page_bytes(), MAX_BASE_ALIGN_BYTES)
}

/// The size of a page.
fn page_bytes() -> usize {
    // SAFETY: sysconf only reads a system constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(page).unwrap_or(4096)
}

/// Maps `len` bytes of `fd` shared and read/write at an address that is a multiple of
/// `align` (a power of two, at least a page): reserves `len + align` bytes of address space,
/// maps the file over the aligned part and gives back the rest.
fn map_aligned(fd: BorrowedFd<'_>, len: usize, align: usize) -> io::Result<*mut libc::c_void> {
    let reserve_len = len.checked_add(align).ok_or(io::ErrorKind::InvalidInput)?;
    // SAFETY: a new reservation at an address the kernel picks; nothing else is affected.
    let reserved = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            reserve_len,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if reserved == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    let start = (reserved as usize).next_multiple_of(align);
    // SAFETY: `start..start + len` lies inside the reservation just made, which nothing else
    // uses, so MAP_FIXED replaces only it.
    let addr = unsafe {
        libc::mmap(
            start as *mut libc::c_void,
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_FIXED,
            fd.as_raw_fd(),
            0,
        )
    };
    let mapped = if addr == libc::MAP_FAILED {
        Err(io::Error::last_os_error())
    } else {
        Ok(addr)
    };
    let end = start + len.next_multiple_of(page_bytes());
    let reserved_end = reserved as usize + reserve_len;
    let (keep_from, keep_to) = if mapped.is_ok() {
        (start, end)
    } else {
        (reserved_end, reserved_end)
    };
    // SAFETY: both ranges are page-aligned parts of the reservation outside the file's
    // mapping (all of it when the mapping failed); unmapping them affects nothing else.
    unsafe {
        libc::munmap(reserved, keep_from - reserved as usize);
        if reserved_end > keep_to {
            libc::munmap(keep_to as *mut libc::c_void, reserved_end - keep_to);
        }
    }
    mapped
}

/// A new memfd named `name`, `len` bytes long, reading as zero.
///
/// # Errors
/// What `memfd_create` or `ftruncate` said.
pub(crate) fn memfd(name: &CStr, len: usize) -> io::Result<OwnedFd> {
    // SAFETY: `name` is a valid C string; the call returns a new descriptor or -1.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel just opened `fd` for us.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let len_off = libc::off_t::try_from(len).map_err(|_| io::ErrorKind::InvalidInput)?;
    // SAFETY: ftruncate on a descriptor we own.
    if unsafe { libc::ftruncate(fd.as_raw_fd(), len_off) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(fd)
}

/// A new memfd of `len` bytes and this process's mapping of it.
///
/// # Errors
/// What the system said, as for [`memfd`] and [`Mapping::map`].
pub(crate) fn shared_memory(name: &CStr, len: usize) -> io::Result<(OwnedFd, Mapping)> {
    let fd = memfd(name, len)?;
    let mapping = Mapping::map(fd.as_fd(), len)?;
    Ok((fd, mapping))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mappings_are_aligned_to_their_size() {
        for len in [1 << 20, (3 << 20) + 5, 4096] {
            let (fd, first) = shared_memory(c"rshmem-test", len).expect("a memfd");
            let second = Mapping::map(fd.as_fd(), len).expect("a mapping");
            let align = base_alignment(len);
            assert!(align >= len.min(MAX_BASE_ALIGN_BYTES) && align.is_power_of_two());
            for mapping in [&first, &second] {
                assert_eq!(
                    mapping.span(0, 0, "test") as usize % align,
                    0,
                    "{len} bytes"
                );
            }
        }
    }

    #[test]
    fn a_second_mapping_of_a_memfd_sees_the_first_ones_writes() {
        let (fd, first) = shared_memory(c"rshmem-test", 1 << 20).expect("a memfd");
        let second = Mapping::map(fd.as_fd(), 1 << 20).expect("a mapping");
        assert_ne!(first.span(0, 0, "test"), second.span(0, 0, "test"));
        // SAFETY: both point 4096 bytes into live mappings of 1 MiB.
        unsafe {
            assert_eq!(
                *second.span(4096, 1, "test"),
                0,
                "a new memfd reads as zero"
            );
            *first.span(4096, 1, "test") = 42;
            assert_eq!(*second.span(4096, 1, "test"), 42);
        }
    }

    #[test]
    #[should_panic(expected = "outside a segment")]
    fn a_range_past_the_end_is_a_contract_violation() {
        let (_fd, mapping) = shared_memory(c"rshmem-test", 64).expect("a memfd");
        mapping.span(60, 8, "test");
    }

    #[test]
    fn an_empty_segment_maps_nothing() {
        let (_fd, mapping) = shared_memory(c"rshmem-test", 0).expect("a memfd");
        assert_eq!(mapping.len(), 0);
        mapping.span(0, 0, "test");
    }
}
