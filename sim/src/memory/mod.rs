//! Simulated memory: every PE's segments, and the InfiniBand writes not yet visible.
//!
//! A segment is stored one of two ways, chosen per run:
//!
//! - **Sparse** (the default, `sparse.rs`): pages materialised on the first nonzero write, so
//!   thousands of PEs with big heaps cost what they touch. No address to give out.
//! - **Addressable** (`region.rs`; [`crate::SimBuilder::addressable_memory`], and always for
//!   static data in place, [`crate::SimBuilder::static_data`]): one contiguous region at a
//!   stable address, so a PE's program (a C program's `shmem_malloc` pointers, its globals)
//!   loads and stores its own segments directly. The simulator still makes every change a
//!   simulated operation makes, at the moment it makes it, so what the program sees through
//!   its pointer is exactly what `Device::read_local` would return, pending writes included:
//!   a write still in the pending list is not in the region. Only the own PE gets an address
//!   (`Device::load_store_addr`): a peer's memory must change only through simulated
//!   operations, which take their time, routes and ordering; a plain store into it would
//!   bypass all three. Both ways read and write the same bytes at the same points of a run,
//!   so a seed gives the same events in either.
//!
//! Writes that arrive through a NIC (path class `Rdma`) land in a per-PE pending list first
//! (docs/ordering.md, the visibility rule: the NIC writes GPU memory over PCIe and the GPU's SMs
//! and NVLink peers may not see it yet). A pending write becomes visible at its drain time,
//! when the owner runs a consistency step (wait, test, quiet, barrier), or, under
//! `pcie-read-flush` only, when a get or atomic through the NIC reaches the PE. Atomics read
//! the newest bytes, pending ones included ([`Memory::read_newest`]).
//!
//! A run may drop the bytes of large puts (`SimBuilder::drop_payloads_from`): such a put
//! carries [`Payload::Dropped`], its range at the target is marked (`dropped.rs`), and the
//! first read that touches a marked byte is kept for the world, which stops the run there.
//!
//! Drain times are kept, not scheduled: the world applies a PE's due drains whenever it next
//! touches that PE's memory (`World::catch_up`), which gives the same memory at every access
//! as applying each at its time, without an event per write. A program reading its region
//! directly therefore sees a due drain only after its PE next goes through the simulator (any
//! device or queue call); seeing a pending write late is legal, as only a consistency step
//! promises it.

mod dropped;
mod pending;
mod places;
mod region;
mod sparse;

use std::cell::Cell;
use std::cmp::Reverse;
use std::io;

use hw::MemKind;

use crate::prefetch::prefetch;

use dropped::Dropped;
use pending::{PendingList, PendingSpan};
use region::Region;
pub use region::StaticRegion;
pub(crate) use region::check_static_regions;
use sparse::Pages;

/// The page size of the resident count (and of sparse segments' pages).
const PAGE_BYTES: usize = 4096;

/// Where a segment's bytes are.
#[derive(Debug)]
enum Storage {
    Sparse(Pages),
    Region(Region),
}

#[derive(Debug)]
struct Segment {
    capacity_bytes: u64,
    storage: Storage,
    /// What writes without their bytes covered ([`Payload::Dropped`]); empty unless
    /// [`crate::SimBuilder::drop_payloads_from`] is set.
    dropped: Dropped,
}

/// How a run's segments are stored (see the module doc).
#[derive(Clone, Debug, Default)]
pub(crate) struct Layout {
    /// Every segment a PE creates is a region mapped for it.
    pub(crate) addressable: bool,
    /// PE `i`'s static data is `static_regions[i]`, in place; empty when the simulator has
    /// no static data (`Device::share_static_data` declines).
    pub(crate) static_regions: Vec<StaticRegion>,
}

/// Why a segment cannot be created.
#[derive(Debug)]
pub(crate) enum CreateError {
    /// The PE has a segment of that kind already.
    Exists,
    /// Static data is shared, not created, when it lives in place.
    StaticInPlace,
    /// The region could not be mapped.
    Map(io::Error),
}

/// Writes of up to this many bytes are stored inline: a `p`, a signal, a block of an
/// all-to-all. 64 bytes keep a [`Payload`] at 72 bytes, no bigger than a small heap allocation
/// with its bookkeeping.
const INLINE_BYTES: usize = 64;

/// The bytes of a write in flight or pending. Most writes are small, and one allocation per
/// operation was a tenth of the simulator's time, so small ones live inline.
#[derive(Clone, Debug)]
pub(crate) enum Payload {
    Inline {
        len: u8,
        bytes: [u8; INLINE_BYTES],
    },
    Heap(Box<[u8]>),
    /// A write of `len` bytes that carries none ([`crate::SimBuilder::drop_payloads_from`]):
    /// where it lands no read may look.
    Dropped {
        len: u64,
    },
}

impl Default for Payload {
    /// Empty, without allocating: what is left where a payload was taken out.
    fn default() -> Self {
        Payload::Heap(Box::default())
    }
}

impl Payload {
    pub(crate) fn new(data: &[u8]) -> Payload {
        if data.len() <= INLINE_BYTES {
            let mut bytes = [0; INLINE_BYTES];
            bytes[..data.len()].copy_from_slice(data);
            Payload::Inline {
                len: data.len() as u8,
                bytes,
            }
        } else {
            Payload::Heap(data.into())
        }
    }

    /// The bytes; `None` for a dropped payload.
    pub(crate) fn bytes(&self) -> Option<&[u8]> {
        match self {
            Payload::Inline { len, bytes } => Some(&bytes[..usize::from(*len)]),
            Payload::Heap(bytes) => Some(bytes),
            Payload::Dropped { .. } => None,
        }
    }

    pub(crate) fn len(&self) -> u64 {
        match self {
            Payload::Inline { len, .. } => u64::from(*len),
            Payload::Heap(bytes) => bytes.len() as u64,
            Payload::Dropped { len } => *len,
        }
    }
}

/// A read that touched bytes a dropped payload wrote: the first of a run, which stops it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct UnkeptRead {
    pub(crate) pe: u32,
    pub(crate) kind: MemKind,
    pub(crate) offset: u64,
    pub(crate) len: u64,
    /// The dropped range it touched, `[start, end)`.
    pub(crate) dropped: (u64, u64),
}

/// Whether `[a_offset, a_offset + a_len)` and `[b_offset, b_offset + b_len)` share a byte.
pub(crate) fn overlaps(a_offset: u64, a_len: u64, b_offset: u64, b_len: u64) -> bool {
    a_offset < b_offset + b_len && b_offset < a_offset + a_len
}

/// A range made visible: (segment, offset, length).
pub(crate) type Range = (MemKind, u64, u64);

#[derive(Debug, Default)]
pub(crate) struct Memory {
    segments: Vec<[Option<Segment>; MemKind::COUNT]>,
    pending: Vec<PendingList>,
    layout: Layout,
    /// Ids of pending writes found by a lookup, kept to save an allocation per lookup.
    ids: Vec<u64>,
    /// The first read of bytes that no write kept (a cell: reads take `&self`).
    unkept_read: Cell<Option<UnkeptRead>>,
    resident_bytes: u64,
    pub(crate) resident_bytes_peak: u64,
}

impl Memory {
    /// The memory of `n_pes` PEs, none with a segment yet. `layout.static_regions` is empty
    /// or has one region per PE (`SimBuilder::build` checked).
    pub(crate) fn new(n_pes: u32, layout: Layout) -> Memory {
        Memory {
            segments: (0..n_pes).map(|_| [None, None, None]).collect(),
            pending: (0..n_pes).map(|_| PendingList::default()).collect(),
            layout,
            ..Memory::default()
        }
    }

    /// Creates `pe`'s `kind` segment of `capacity_bytes`, zero-filled: a region of its own in
    /// the addressable mode, sparse pages otherwise.
    pub(crate) fn create(
        &mut self,
        pe: u32,
        kind: MemKind,
        capacity_bytes: u64,
    ) -> Result<(), CreateError> {
        if kind == MemKind::Static && !self.layout.static_regions.is_empty() {
            return Err(CreateError::StaticInPlace);
        }
        let seg = &mut self.segments[pe as usize][kind.index()];
        if seg.is_some() {
            return Err(CreateError::Exists);
        }
        let storage = if self.layout.addressable {
            Storage::Region(Region::map(capacity_bytes).map_err(CreateError::Map)?)
        } else {
            Storage::Sparse(Pages::default())
        };
        *seg = Some(Segment {
            capacity_bytes,
            storage,
            dropped: Dropped::default(),
        });
        Ok(())
    }

    /// Makes `pe`'s static region its `Static` segment the first time, and returns the
    /// segment's length; `None` when the run has no static data.
    pub(crate) fn share_static(&mut self, pe: u32) -> Option<u64> {
        let region = *self.layout.static_regions.get(pe as usize)?;
        let seg = &mut self.segments[pe as usize][MemKind::Static.index()];
        let seg = seg.get_or_insert_with(|| Segment {
            capacity_bytes: region.len_bytes,
            dropped: Dropped::default(),
            // SAFETY: `SimBuilder::static_data`'s caller guarantees the regions stay valid
            // and untouched by others for the whole run, which this memory does not outlive.
            storage: Storage::Region(unsafe { Region::borrow(region) }),
        });
        Some(seg.capacity_bytes)
    }

    pub(crate) fn capacity_bytes(&self, pe: u32, kind: MemKind) -> Option<u64> {
        self.segments[pe as usize][kind.index()]
            .as_ref()
            .map(|s| s.capacity_bytes)
    }

    /// The address of byte `offset` of `pe`'s `kind` segment where it is a region; `None`
    /// for sparse segments (the caller checked the range).
    pub(crate) fn addr(&self, pe: u32, kind: MemKind, offset: u64) -> Option<u64> {
        match &self.segments[pe as usize][kind.index()].as_ref()?.storage {
            Storage::Region(region) => Some(region.addr(offset)),
            Storage::Sparse(_) => None,
        }
    }

    fn segment(&self, pe: u32, kind: MemKind, offset: u64, len: u64) -> &Segment {
        let seg = self.segments[pe as usize][kind.index()]
            .as_ref()
            .unwrap_or_else(|| panic!("PE {pe} has no {kind:?} segment (contract violation)"));
        assert!(
            offset
                .checked_add(len)
                .is_some_and(|end| end <= seg.capacity_bytes),
            "range {offset:#x}+{len} outside PE {pe}'s {kind:?} segment of {} bytes \
             (the runtime must validate ranges)",
            seg.capacity_bytes
        );
        seg
    }

    /// [`Memory::segment`], to change.
    fn segment_mut(&mut self, pe: u32, kind: MemKind, offset: u64, len: u64) -> &mut Segment {
        self.segment(pe, kind, offset, len);
        self.segments[pe as usize][kind.index()]
            .as_mut()
            .expect("checked above")
    }

    /// Reads visible memory. Bytes a dropped payload wrote read as whatever was there, and
    /// the first such read is kept for [`Memory::take_unkept_read`].
    pub(crate) fn read(&self, pe: u32, kind: MemKind, offset: u64, out: &mut [u8]) {
        let len = out.len() as u64;
        let seg = self.segment(pe, kind, offset, len);
        match &seg.storage {
            Storage::Sparse(pages) => pages.read(offset as usize, out),
            Storage::Region(region) => region.read(offset as usize, out),
        }
        if !seg.dropped.is_empty()
            && let Some(dropped) = seg.dropped.overlapping(offset, len)
        {
            self.note_unkept_read(UnkeptRead {
                pe,
                kind,
                offset,
                len,
                dropped,
            });
        }
    }

    fn note_unkept_read(&self, read: UnkeptRead) {
        if self.unkept_read.get().is_none() {
            self.unkept_read.set(Some(read));
        }
    }

    /// The first read of bytes a dropped payload wrote, once.
    pub(crate) fn take_unkept_read(&self) -> Option<UnkeptRead> {
        self.unkept_read.take()
    }

    /// Writes a payload's bytes to visible memory, or marks its range dropped.
    pub(crate) fn write_payload(&mut self, pe: u32, kind: MemKind, offset: u64, data: &Payload) {
        match data.bytes() {
            Some(bytes) => self.write(pe, kind, offset, bytes),
            None => {
                let len = data.len();
                self.segment_mut(pe, kind, offset, len)
                    .dropped
                    .add(offset, len);
            }
        }
    }

    /// Writes visible memory.
    pub(crate) fn write(&mut self, pe: u32, kind: MemKind, offset: u64, data: &[u8]) {
        let seg = self.segment_mut(pe, kind, offset, data.len() as u64);
        if !seg.dropped.is_empty() {
            seg.dropped.remove(offset, data.len() as u64);
        }
        let new_bytes = match &mut seg.storage {
            Storage::Sparse(pages) => pages.write(offset as usize, data),
            Storage::Region(region) => region.write(offset as usize, data),
        };
        if new_bytes > 0 {
            self.resident_bytes += new_bytes;
            self.resident_bytes_peak = self.resident_bytes_peak.max(self.resident_bytes);
        }
    }

    /// Reads a little-endian word of `len` bytes (4 or 8).
    pub(crate) fn read_word(&self, pe: u32, kind: MemKind, offset: u64, len: u64) -> u64 {
        let mut buf = [0u8; 8];
        self.read(pe, kind, offset, &mut buf[..len as usize]);
        u64::from_le_bytes(buf)
    }

    /// Queues a write that is delivered but not yet visible until `drain_ns`, and returns its
    /// id (unique among `pe`'s writes).
    pub(crate) fn push_pending(
        &mut self,
        pe: u32,
        kind: MemKind,
        offset: u64,
        data: Payload,
        drain_ns: u64,
    ) -> u64 {
        self.segment(pe, kind, offset, data.len());
        let span = PendingSpan {
            drain_ns,
            kind,
            offset,
            len: data.len(),
            live: true,
            newer_on_line: places::NO_WRITE,
        };
        self.pending[pe as usize].push(span, data)
    }

    /// Starts loading `pe`'s pending list (see [`crate::prefetch::prefetch`]).
    pub(crate) fn prefetch_list(&self, pe: u32) {
        prefetch(&self.pending[pe as usize]);
    }

    /// Starts loading what a write landing at `pe` touches: its segments' bounds and the
    /// end of its pending list.
    pub(crate) fn prefetch_landing(&self, pe: u32) {
        prefetch(&self.segments[pe as usize]);
        let list = &self.pending[pe as usize];
        if let (Some(span), Some(data)) = (list.spans.back(), list.data.back()) {
            prefetch(span);
            prefetch(data);
        }
    }

    /// Starts loading pending write `write_id` of `pe`.
    pub(crate) fn prefetch_write(&self, pe: u32, write_id: u64) {
        let list = &self.pending[pe as usize];
        let pos = write_id.wrapping_sub(list.first_id) as usize;
        if let (Some(span), Some(data)) = (list.spans.get(pos), list.data.get(pos)) {
            prefetch(span);
            prefetch(data);
        }
    }

    /// The earliest pending write of `pe` that drains at or before `until_ns`, as (drain time,
    /// id), taken off the schedule; the caller drains it.
    pub(crate) fn next_due(&mut self, pe: u32, until_ns: u64) -> Option<(u64, u64)> {
        let list = &mut self.pending[pe as usize];
        while let Some(&Reverse((drain_ns, id))) = list.due.peek() {
            if drain_ns > until_ns {
                return None;
            }
            list.due.pop();
            let live = list.span(id).is_some_and(|w| w.live);
            if live {
                return Some((drain_ns, id));
            }
        }
        None
    }

    /// The pending writes of `pe` that overlap `[offset, offset + len)` of its `kind`
    /// segment, as (drain time, id), oldest first.
    pub(crate) fn pending_over(
        &mut self,
        pe: u32,
        kind: MemKind,
        offset: u64,
        len: u64,
    ) -> Vec<(u64, u64)> {
        let list = &self.pending[pe as usize];
        let mut ids = std::mem::take(&mut self.ids);
        list.overlapping(kind, offset, len, u64::MAX, &mut ids);
        let over = ids
            .drain(..)
            .map(|id| (list.span(id).expect("listed").drain_ns, id))
            .collect();
        self.ids = ids;
        over
    }

    /// Makes one pending write visible, together with every older pending write it overlaps
    /// (so a location never shows an older value after a newer one), and appends the ranges
    /// made visible to `shown`: none if the write was already flushed.
    pub(crate) fn drain(&mut self, pe: u32, write_id: u64, shown: &mut Vec<Range>) {
        let list = &self.pending[pe as usize];
        let Some(&target) = list.span(write_id) else {
            return;
        };
        if !target.live {
            return;
        }
        let mut ids = std::mem::take(&mut self.ids);
        list.overlapping(target.kind, target.offset, target.len, write_id, &mut ids);
        ids.push(write_id);
        for id in ids.drain(..) {
            self.apply(pe, id, shown);
        }
        self.ids = ids;
        self.pending[pe as usize].pop_applied();
    }

    /// Reads `out.len()` bytes at `offset` as they will be once every pending write has
    /// drained: the newest value in coherence order, which atomics read.
    pub(crate) fn read_newest(&mut self, pe: u32, kind: MemKind, offset: u64, out: &mut [u8]) {
        self.read(pe, kind, offset, out);
        let len = out.len() as u64;
        let list = &self.pending[pe as usize];
        let mut ids = std::mem::take(&mut self.ids);
        list.showing(kind, offset, len, &mut ids);
        for id in ids.drain(..) {
            let span = list.span(id).expect("listed");
            let data = &list.data[(id - list.first_id) as usize];
            let from = span.offset.max(offset);
            let to = (span.offset + span.len).min(offset + len);
            let Some(bytes) = data.bytes() else {
                self.note_unkept_read(UnkeptRead {
                    pe,
                    kind,
                    offset,
                    len,
                    dropped: (span.offset, span.offset + span.len),
                });
                continue;
            };
            let src = &bytes[(from - span.offset) as usize..(to - span.offset) as usize];
            out[(from - offset) as usize..(to - offset) as usize].copy_from_slice(src);
        }
        self.ids = ids;
    }

    /// Whether `[offset, offset + len)` of `pe`'s `kind` segment has a pending write.
    pub(crate) fn pending_at(&self, pe: u32, kind: MemKind, offset: u64, len: u64) -> bool {
        self.pending[pe as usize].any_overlapping(kind, offset, len)
    }

    /// Whether `pe` has delivered writes that are not visible yet.
    pub(crate) fn has_pending(&self, pe: u32) -> bool {
        self.pending[pe as usize].has_live()
    }

    /// Makes every pending write of `pe` visible, oldest first (the consistency step), and
    /// appends the ranges made visible to `shown`.
    pub(crate) fn flush(&mut self, pe: u32, shown: &mut Vec<Range>) {
        let first_id = self.pending[pe as usize].first_id;
        for pos in 0..self.pending[pe as usize].spans.len() {
            if self.pending[pe as usize].spans[pos].live {
                self.apply(pe, first_id + pos as u64, shown);
            }
        }
        let list = &mut self.pending[pe as usize];
        list.pop_applied();
        list.due.clear();
    }

    /// Applies `pe`'s pending write `id`.
    fn apply(&mut self, pe: u32, id: u64, shown: &mut Vec<Range>) {
        let list = &mut self.pending[pe as usize];
        let (span, data) = list.take((id - list.first_id) as usize);
        self.write_payload(pe, span.kind, span.offset, &data);
        shown.push((span.kind, span.offset, span.len));
    }
}

#[cfg(test)]
mod tests;
