//! The program's static data as shared memory: the main executable's writable data segment
//! remapped onto a memfd, so that peers map it like any segment ([`crate::MemKind::Static`]).
//!
//! How: `dl_iterate_phdr`'s first object is the main program (also when the caller is a
//! shared library, as `libshmem.so` is). Its writable `PT_LOAD` segment holds `.data` and
//! `.bss`; the part of it under `PT_GNU_RELRO` (`.got`, `.data.rel.ro`) is made read-only by
//! the loader after relocation and is left alone, as glibc protects it: from the relro end
//! rounded down to a page. The rest, to the page-aligned end of the segment's memory (`.bss`
//! included), is copied into a memfd of the same length, and the memfd is then mapped
//! `MAP_SHARED | MAP_FIXED` over it. Copy first, then map over: there is no moment at which
//! the program's data is unmapped, and the program's own addresses stay as they were, so
//! `&x` on the PE itself is the variable and a peer reaches it at `its base + (&x - base)`.
//!
//! Limits, as in other OpenSHMEM implementations: only the main program's globals and statics
//! are symmetric, not a shared library's; and the remap must run before the program has
//! other threads (`shmem_init`), since a store another thread makes between the copy and the
//! map is lost. A PIE (the loader's bias in `dlpi_addr`), a static PIE and a non-PIE (bias 0)
//! are all handled alike: addresses are bias plus the segment's virtual address. Pages of
//! `.bss` that read as zero are not copied, so a large zero array costs no memory until used.

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::ptr::NonNull;

use super::memfd::{Mapping, memfd};

/// The address range of the program's writable, non-relro data: page-aligned start and end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DataRange {
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// One program header, as much of it as the choice of the range needs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Header {
    pub(crate) kind: u32,
    pub(crate) writable: bool,
    /// The segment's address in this process (bias included).
    pub(crate) addr: usize,
    pub(crate) mem_bytes: usize,
}

/// The data range of a program with `headers`, pages of `page` bytes: the writable load
/// segment with the highest address that still has something outside the relro region.
/// `None` if it has none.
pub(crate) fn data_range(headers: &[Header], page: usize) -> Option<DataRange> {
    let down = |a: usize| a & !(page - 1);
    let up = |a: usize| a.div_ceil(page) * page;
    let relro_end = headers
        .iter()
        .find(|h| h.kind == libc::PT_GNU_RELRO)
        .map(|h| down(h.addr + h.mem_bytes));
    headers
        .iter()
        .filter(|h| h.kind == libc::PT_LOAD && h.writable && h.mem_bytes > 0)
        .filter_map(|h| {
            let mut start = down(h.addr);
            let end = up(h.addr + h.mem_bytes);
            if let Some(relro_end) = relro_end.filter(|e| (start..=end).contains(e)) {
                start = relro_end;
            }
            (start < end).then_some(DataRange { start, end })
        })
        .max_by_key(|r| r.start)
}

/// The program headers of a loaded object: the main program (`None`), or the object loaded
/// at `Some(base)`.
fn object_headers(base: Option<usize>) -> Vec<Header> {
    struct Walk {
        base: Option<usize>,
        headers: Vec<Header>,
    }
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut libc::c_void,
    ) -> libc::c_int {
        // SAFETY: the loader passes a valid info for the duration of the call, and `data` is
        // the `Walk` that `object_headers` passed in.
        let (info, walk) = unsafe { (&*info, &mut *data.cast::<Walk>()) };
        if walk
            .base
            .is_some_and(|base| base != info.dlpi_addr as usize)
        {
            return 0;
        }
        let count = usize::from(info.dlpi_phnum);
        let phdrs = if info.dlpi_phdr.is_null() || count == 0 {
            &[][..]
        } else {
            // SAFETY: the loader's table has `dlpi_phnum` entries at `dlpi_phdr`.
            unsafe { std::slice::from_raw_parts(info.dlpi_phdr, count) }
        };
        walk.headers.extend(phdrs.iter().map(|p| Header {
            kind: p.p_type,
            writable: p.p_flags & libc::PF_W != 0,
            addr: (info.dlpi_addr as usize).wrapping_add(p.p_vaddr as usize),
            mem_bytes: p.p_memsz as usize,
        }));
        // Non-zero stops the walk: the first object is the main program.
        1
    }
    let mut walk = Walk {
        base,
        headers: Vec::new(),
    };
    // SAFETY: the callback only reads the loader's info and writes `walk`, which outlives
    // the call.
    unsafe { libc::dl_iterate_phdr(Some(visit), (&raw mut walk).cast()) };
    walk.headers
}

/// The writable data (from the end of its read-only-after-relocation part to the end of its
/// `.bss`, in whole pages) of the object loaded at `base`, as `start..end` addresses: what
/// the host of a simulated run shares as the static data of the PE that runs that copy of
/// the program. `None` if no object is loaded there or it has no writable data.
#[cfg(feature = "process")]
pub fn loaded_data_range(base: usize) -> Option<std::ops::Range<usize>> {
    data_range(&object_headers(Some(base)), page_bytes()).map(|r| r.start..r.end)
}

/// The page size.
fn page_bytes() -> usize {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(page).unwrap_or(4096)
}

/// Remaps the main program's static data onto a new memfd (see the module docs) and returns
/// the memfd and a view of the data at its own addresses.
///
/// # Errors
/// What the system said, with the call named; or that the program has no writable data.
pub(crate) fn share() -> io::Result<(OwnedFd, Mapping)> {
    let page = page_bytes();
    let range = data_range(&object_headers(None), page).ok_or_else(|| {
        io::Error::other("the main program has no writable data segment to share")
    })?;
    let len = range.end - range.start;
    let fd = memfd(c"rshmem-static-data", len)
        .map_err(|e| io::Error::new(e.kind(), format!("memfd_create/ftruncate: {e}")))?;
    {
        let copy = Mapping::map(fd.as_fd(), len)
            .map_err(|e| io::Error::new(e.kind(), format!("mmap of the copy: {e}")))?;
        for page_start in (0..len).step_by(page) {
            let src = (range.start + page_start) as *const u8;
            // SAFETY: the range is the program's mapped, readable data, one page at a time;
            // no other thread runs yet (the module's precondition).
            let bytes = unsafe { std::slice::from_raw_parts(src, page) };
            if bytes.iter().any(|&b| b != 0) {
                // SAFETY: `copy` is a fresh mapping of `len` bytes; the pages do not overlap.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        src,
                        copy.span(page_start as u64, page as u64, "copy"),
                        page,
                    )
                };
            }
        }
    }
    // SAFETY: maps the memfd, now holding the same bytes, over the program's data pages,
    // which are replaced atomically by the kernel; the addresses stay valid and read/write.
    let addr = unsafe {
        libc::mmap(
            range.start as *mut libc::c_void,
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_FIXED,
            fd.as_raw_fd(),
            0,
        )
    };
    if addr == libc::MAP_FAILED {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(
            e.kind(),
            format!("mmap MAP_FIXED over the data: {e}"),
        ));
    }
    let base = NonNull::new(range.start as *mut u8)
        .ok_or_else(|| io::Error::other("the program's data starts at address 0"))?;
    // SAFETY: the program's data stays mapped for the life of the process.
    Ok((fd, unsafe { Mapping::borrowed(base, len) }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(addr: usize, mem_bytes: usize, writable: bool) -> Header {
        Header {
            kind: libc::PT_LOAD,
            writable,
            addr,
            mem_bytes,
        }
    }

    #[test]
    fn the_range_starts_after_relro_and_ends_on_the_page_after_bss() {
        // The GNU ld layout: one writable segment, relro at its start.
        let headers = [
            load(0x1000, 0x800, false),
            load(0x3df0, 0x1300, true),
            Header {
                kind: libc::PT_GNU_RELRO,
                writable: false,
                addr: 0x3df0,
                mem_bytes: 0x210,
            },
        ];
        assert_eq!(
            data_range(&headers, 0x1000),
            Some(DataRange {
                start: 0x4000,
                end: 0x6000
            })
        );
    }

    #[test]
    fn a_relro_only_segment_is_skipped() {
        // The lld layout: relro in a writable segment of its own, then .data and .bss.
        let headers = [
            load(0x3000, 0x1000, true),
            Header {
                kind: libc::PT_GNU_RELRO,
                writable: false,
                addr: 0x3000,
                mem_bytes: 0x1000,
            },
            load(0x4000, 0x10, true),
        ];
        assert_eq!(
            data_range(&headers, 0x1000),
            Some(DataRange {
                start: 0x4000,
                end: 0x5000
            })
        );
    }

    #[test]
    fn without_relro_the_segment_start_is_rounded_down() {
        let headers = [load(0x601e10, 0x230, true)];
        assert_eq!(
            data_range(&headers, 0x1000),
            Some(DataRange {
                start: 0x601000,
                end: 0x603000
            })
        );
        assert_eq!(data_range(&[load(0x1000, 0x10, false)], 0x1000), None);
    }

    #[test]
    fn this_test_programs_data_range_holds_its_globals() {
        static mut A_GLOBAL: u64 = 7;
        let range = data_range(&object_headers(None), page_bytes()).expect("a data range");
        let addr = (&raw const A_GLOBAL) as usize;
        assert!(
            (range.start..range.end).contains(&addr),
            "{addr:#x} outside {range:x?}"
        );
    }
}
