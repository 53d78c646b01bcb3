//! Addressable segments: one contiguous region of real memory at a stable address.
//!
//! In the addressable mode ([`crate::SimBuilder::addressable_memory`]) a PE's program
//! dereferences its own segments, so each segment is a region it can point into rather than
//! the simulator's sparse pages. Two origins:
//!
//! - **Mapped here.** An anonymous private mapping of the segment's whole capacity with
//!   `MAP_NORESERVE`: the address space is reserved at once and the OS commits a page only
//!   when it is first written, so a thousand PEs with a gibibyte each cost page tables, not
//!   memory. A growable segment reserves its maximum, so it grows in place and its address
//!   never changes. Unmapped when the run's memory is dropped.
//! - **The caller's.** A PE's static data ([`StaticRegion`]): memory the caller owns and keeps
//!   valid for the run; the simulator writes into it and never frees it.
//!
//! The simulator copies in and out with raw-pointer copies and never makes a Rust reference
//! to a region, because the program holds pointers into the same bytes. Both run on the one
//! simulator thread, one at a time (a PE's program runs only while the world is suspended),
//! so no access of the simulator overlaps one of the program.
//!
//! Resident bytes: the OS state is not read (a run depends on nothing outside it), so what a
//! mapped region counts is the pages the simulator itself wrote, whatever the bytes. The
//! program's own stores through the pointer commit pages the count never sees, so the number
//! is a lower bound of what the OS committed. Regions of the caller count nothing: that
//! memory exists without the simulator.

use std::io;
use std::ptr::NonNull;

use super::PAGE_BYTES;
use crate::mapping::{map_lazily, unmap};

/// A PE's static data, in place: `len_bytes` of the caller's memory at address `base`, which
/// becomes that PE's [`hw::MemKind::Static`] segment ([`crate::SimBuilder::static_data`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StaticRegion {
    /// The address of the first byte.
    pub base: usize,
    /// The length of the region in bytes.
    pub len_bytes: u64,
}

/// A contiguous segment: mapped here, or the caller's.
#[derive(Debug)]
pub(super) struct Region {
    /// The first byte; dangling when `len` is 0.
    base: NonNull<u8>,
    len: usize,
    /// For a region mapped here, one bit per page the simulator wrote (bit `i % 64` of word
    /// `i / 64`), grown as far as the furthest page written; `None` for the caller's memory.
    touched: Option<Vec<u64>>,
}

impl Region {
    /// Reserves `len_bytes` of zeroed address space, committed page by page as it is written.
    pub(super) fn map(len_bytes: u64) -> io::Result<Region> {
        let len = usize::try_from(len_bytes).map_err(|_| {
            io::Error::new(io::ErrorKind::InvalidInput, "larger than the address space")
        })?;
        if len == 0 {
            return Ok(Region {
                base: NonNull::dangling(),
                len,
                touched: Some(Vec::new()),
            });
        }
        let base = map_lazily(len)?;
        Ok(Region {
            base,
            len,
            touched: Some(Vec::new()),
        })
    }

    /// The caller's memory as a region.
    ///
    /// # Safety
    /// `region` must be valid for reads and writes for as long as the returned value lives,
    /// and nothing but the simulator and the PE's own program (on the simulator's thread)
    /// may access it meanwhile.
    pub(super) unsafe fn borrow(region: StaticRegion) -> Region {
        let base = NonNull::new(region.base as *mut u8).unwrap_or(NonNull::dangling());
        Region {
            base,
            len: region.len_bytes as usize,
            touched: None,
        }
    }

    /// The address of the byte at `offset`.
    pub(super) fn addr(&self, offset: u64) -> u64 {
        self.base.as_ptr() as u64 + offset
    }

    /// Panics unless `offset..offset + len` lies inside the region (the caller checked it
    /// against the segment's capacity, which is the region's length: this guards the copy).
    fn check(&self, offset: usize, len: usize) {
        assert!(
            offset.checked_add(len).is_some_and(|end| end <= self.len),
            "region access {offset:#x}+{len} past its {} bytes",
            self.len
        );
    }

    /// Copies the bytes at `offset` into `out`.
    pub(super) fn read(&self, offset: usize, out: &mut [u8]) {
        self.check(offset, out.len());
        if out.is_empty() {
            return;
        }
        // SAFETY: the range lies inside the region (checked above), which is mapped for its
        // whole length or the caller's valid memory (`borrow`); `out` is the simulator's own
        // buffer, so the two do not overlap; nothing else runs during the copy (module doc).
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.base.as_ptr().add(offset),
                out.as_mut_ptr(),
                out.len(),
            );
        }
    }

    /// Copies `data` to `offset`, and returns how many bytes of pages the simulator wrote for
    /// the first time (0 for the caller's memory).
    pub(super) fn write(&mut self, offset: usize, data: &[u8]) -> u64 {
        self.check(offset, data.len());
        if data.is_empty() {
            return 0;
        }
        // SAFETY: as in `read`, with `data` the simulator's buffer.
        unsafe {
            std::ptr::copy_nonoverlapping(
                data.as_ptr(),
                self.base.as_ptr().add(offset),
                data.len(),
            );
        }
        let Some(touched) = &mut self.touched else {
            return 0;
        };
        let mut new_pages = 0;
        for page in offset / PAGE_BYTES..=(offset + data.len() - 1) / PAGE_BYTES {
            let (word, bit) = (page / 64, 1u64 << (page % 64));
            if touched.len() <= word {
                touched.resize(word + 1, 0);
            }
            if touched[word] & bit == 0 {
                touched[word] |= bit;
                new_pages += 1;
            }
        }
        new_pages * PAGE_BYTES as u64
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // The caller's memory (no page count) is not this region's to unmap.
        if self.touched.is_none() || self.len == 0 {
            return;
        }
        // SAFETY: this region was mapped by `map` with this base and length, and the run that
        // handed out addresses into it is over (the memory is dropped with the world).
        unsafe { unmap(self.base, self.len) };
    }
}

/// Checks static regions before a run: one per PE, all of PE 0's length (every PE runs the
/// same program), none wrapping past the address space or overlapping another. The error
/// names the PEs and the fix.
pub(crate) fn check_static_regions(regions: &[StaticRegion], n_pes: u32) -> Result<(), String> {
    if regions.len() != n_pes as usize {
        return Err(format!(
            "static data: {} regions for {n_pes} PEs; give one region per PE",
            regions.len()
        ));
    }
    let len_bytes = regions[0].len_bytes;
    let differ: Vec<String> = (0..)
        .zip(regions)
        .filter(|(_, r)| r.len_bytes != len_bytes)
        .map(|(pe, r)| format!("PE {pe} has {}", r.len_bytes))
        .collect();
    if !differ.is_empty() {
        return Err(format!(
            "static data: PE 0's region has {len_bytes} bytes but {}; every PE runs the same \
             program, so give every PE a region of the same length",
            differ.join(", ")
        ));
    }
    let mut spans = Vec::with_capacity(regions.len());
    for (pe, r) in (0u32..).zip(regions) {
        let end = usize::try_from(r.len_bytes)
            .ok()
            .and_then(|len| r.base.checked_add(len))
            .filter(|_| r.base != 0 || r.len_bytes == 0);
        let Some(end) = end else {
            return Err(format!(
                "static data: PE {pe}'s region at {:#x} of {} bytes is not memory of this \
                 process; pass the address and length of the PE's data",
                r.base, r.len_bytes
            ));
        };
        spans.push((r.base, end, pe));
    }
    spans.sort_unstable();
    for pair in spans.windows(2) {
        let ((_, a_end, a), (b_base, _, b)) = (pair[0], pair[1]);
        if b_base < a_end {
            return Err(format!(
                "static data: the regions of PE {a} and PE {b} overlap; give every PE its own \
                 copy of the data"
            ));
        }
    }
    Ok(())
}
