//! Simulated memory: every PE's segments, and the InfiniBand writes not yet visible.
//!
//! Segments are sparse: a segment of 1 GiB costs nothing until it is written, and then only
//! the pages that hold a nonzero byte, so thousands of PEs fit in a laptop's memory even when
//! each touches words far apart (the teams' areas at the heap's start, data after them).
//!
//! Writes that arrive through a NIC (path class `Rdma`) land in a per-PE pending list first
//! (docs/ordering.md, the visibility rule: the NIC writes GPU memory over PCIe and the GPU's SMs
//! and NVLink peers may not see it yet). A pending write becomes visible at its drain time,
//! when the owner runs a consistency step (wait, test, quiet, barrier), or when a fetch
//! through the NIC reads the location (a PCIe read pushes posted writes ahead of it).
//!
//! Drain times are kept, not scheduled: the world applies a PE's due drains whenever it next
//! touches that PE's memory (`World::catch_up`), which gives the same memory at every access
//! as applying each at its time, without an event per write.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use hw::MemKind;

use crate::prefetch::prefetch;

/// Segments are materialised in pages: a PE that writes a few words costs a page, not more.
const GROWTH_STEP_BYTES: u64 = 4096;
const PAGE_BYTES: usize = GROWTH_STEP_BYTES as usize;

#[derive(Debug)]
struct Segment {
    capacity_bytes: u64,
    /// Page `i` holds bytes `i * PAGE_BYTES..`; a missing page reads as zeros.
    pages: Vec<Option<Box<[u8]>>>,
}

impl Segment {
    /// The pieces of `offset..offset + len` within single pages: (page, offset in it, bytes).
    fn pieces(offset: usize, len: usize) -> impl Iterator<Item = (usize, usize, usize)> {
        let mut at = offset;
        let end = offset + len;
        std::iter::from_fn(move || {
            (at < end).then(|| {
                let (page, within) = (at / PAGE_BYTES, at % PAGE_BYTES);
                let bytes = (PAGE_BYTES - within).min(end - at);
                at += bytes;
                (page, within, bytes)
            })
        })
    }
}

/// Writes of up to this many bytes are stored inline: a `p`, a signal, a block of an
/// all-to-all. 64 bytes keep a [`Payload`] at 72 bytes, no bigger than a small heap allocation
/// with its bookkeeping.
const INLINE_BYTES: usize = 64;

/// The bytes of a write in flight or pending. Most writes are small, and one allocation per
/// operation was a tenth of the simulator's time, so small ones live inline.
#[derive(Clone, Debug)]
pub(crate) enum Payload {
    Inline { len: u8, bytes: [u8; INLINE_BYTES] },
    Heap(Box<[u8]>),
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

    pub(crate) fn as_slice(&self) -> &[u8] {
        match self {
            Payload::Inline { len, bytes } => &bytes[..usize::from(*len)],
            Payload::Heap(bytes) => bytes,
        }
    }

    pub(crate) fn len(&self) -> u64 {
        self.as_slice().len() as u64
    }
}

/// Where one pending write goes.
#[derive(Clone, Copy, Debug)]
struct PendingSpan {
    /// When the write becomes visible on its own.
    drain_ns: u64,
    kind: MemKind,
    offset: u64,
    len: u64,
    /// False once applied. An applied write stays listed until it reaches the front, so
    /// that a write's place in the list follows from its id.
    live: bool,
}

/// One PE's delivered but invisible writes, oldest first. Where they go and what they hold
/// are kept apart so that a drain's scan for older overlapping writes reads small entries.
#[derive(Debug, Default)]
struct PendingList {
    /// The id of the write at the front; ids are numbered per PE, in arrival order.
    first_id: u64,
    spans: VecDeque<PendingSpan>,
    data: VecDeque<Payload>,
    /// (drain time, id) of the writes still pending, earliest first; entries of writes
    /// applied early (by a flush, or as older overlapping writes) are skipped when met.
    due: BinaryHeap<Reverse<(u64, u64)>>,
}

impl PendingList {
    fn pop_applied(&mut self) {
        while self.spans.front().is_some_and(|w| !w.live) {
            self.spans.pop_front();
            self.data.pop_front();
            self.first_id += 1;
        }
    }
}

/// A range made visible: (segment, offset, length).
pub(crate) type Range = (MemKind, u64, u64);

#[derive(Debug, Default)]
pub(crate) struct Memory {
    segments: Vec<[Option<Segment>; MemKind::COUNT]>,
    pending: Vec<PendingList>,
    resident_bytes: u64,
    pub(crate) resident_bytes_peak: u64,
}

fn overlaps(a_offset: u64, a_len: u64, b_offset: u64, b_len: u64) -> bool {
    a_offset < b_offset + b_len && b_offset < a_offset + a_len
}

impl Memory {
    pub(crate) fn new(n_pes: u32) -> Memory {
        Memory {
            segments: (0..n_pes).map(|_| [None, None, None]).collect(),
            pending: (0..n_pes).map(|_| PendingList::default()).collect(),
            ..Memory::default()
        }
    }

    pub(crate) fn create(&mut self, pe: u32, kind: MemKind, capacity_bytes: u64) -> bool {
        let seg = &mut self.segments[pe as usize][kind.index()];
        if seg.is_some() {
            return false;
        }
        *seg = Some(Segment {
            capacity_bytes,
            pages: Vec::new(),
        });
        true
    }

    pub(crate) fn capacity_bytes(&self, pe: u32, kind: MemKind) -> Option<u64> {
        self.segments[pe as usize][kind.index()]
            .as_ref()
            .map(|s| s.capacity_bytes)
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

    /// Reads visible memory.
    pub(crate) fn read(&self, pe: u32, kind: MemKind, offset: u64, out: &mut [u8]) {
        let seg = self.segment(pe, kind, offset, out.len() as u64);
        let mut done = 0;
        for (page, within, bytes) in Segment::pieces(offset as usize, out.len()) {
            let out = &mut out[done..done + bytes];
            match seg.pages.get(page).and_then(Option::as_ref) {
                Some(data) => out.copy_from_slice(&data[within..within + bytes]),
                None => out.fill(0),
            }
            done += bytes;
        }
    }

    /// Writes visible memory.
    pub(crate) fn write(&mut self, pe: u32, kind: MemKind, offset: u64, data: &[u8]) {
        self.segment(pe, kind, offset, data.len() as u64);
        let seg = self.segments[pe as usize][kind.index()]
            .as_mut()
            .expect("checked above");
        let mut done = 0;
        for (page, within, bytes) in Segment::pieces(offset as usize, data.len()) {
            let piece = &data[done..done + bytes];
            done += bytes;
            if seg.pages.len() <= page {
                // Why not materialise zeros: a missing page reads as zero already, and memory
                // that was cleared but never used then costs nothing.
                if piece.iter().all(|&b| b == 0) {
                    continue;
                }
                seg.pages.resize_with(page + 1, || None);
            }
            let slot = &mut seg.pages[page];
            if slot.is_none() {
                if piece.iter().all(|&b| b == 0) {
                    continue;
                }
                self.resident_bytes += GROWTH_STEP_BYTES;
                self.resident_bytes_peak = self.resident_bytes_peak.max(self.resident_bytes);
            }
            slot.get_or_insert_with(|| vec![0; PAGE_BYTES].into_boxed_slice())
                [within..within + bytes]
                .copy_from_slice(piece);
        }
    }

    /// Reads a little-endian word of `len` bytes (4 or 8).
    pub(crate) fn read_word(&self, pe: u32, kind: MemKind, offset: u64, len: u64) -> u64 {
        let mut buf = [0u8; 8];
        self.read(pe, kind, offset, &mut buf[..len as usize]);
        u64::from_le_bytes(buf)
    }

    /// Writes a little-endian word of `len` bytes (4 or 8).
    pub(crate) fn write_word(&mut self, pe: u32, kind: MemKind, offset: u64, len: u64, v: u64) {
        self.write(pe, kind, offset, &v.to_le_bytes()[..len as usize]);
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
        let list = &mut self.pending[pe as usize];
        let id = list.first_id + list.spans.len() as u64;
        list.due.push(Reverse((drain_ns, id)));
        list.spans.push_back(PendingSpan {
            drain_ns,
            kind,
            offset,
            len: data.len(),
            live: true,
        });
        list.data.push_back(data);
        id
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
            let live = id
                .checked_sub(list.first_id)
                .and_then(|pos| list.spans.get(pos as usize))
                .is_some_and(|w| w.live);
            if live {
                return Some((drain_ns, id));
            }
        }
        None
    }

    /// The pending writes of `pe` that overlap `[offset, offset + len)` of its `kind`
    /// segment, as (drain time, id).
    pub(crate) fn pending_over(
        &self,
        pe: u32,
        kind: MemKind,
        offset: u64,
        len: u64,
    ) -> impl Iterator<Item = (u64, u64)> + '_ {
        let list = &self.pending[pe as usize];
        (list.first_id..)
            .zip(&list.spans)
            .filter(move |(_, w)| {
                w.live && w.kind == kind && overlaps(w.offset, w.len, offset, len)
            })
            .map(|(id, w)| (w.drain_ns, id))
    }

    /// Makes one pending write visible, together with every older pending write it overlaps
    /// (so a location never shows an older value after a newer one), and appends the ranges
    /// made visible to `shown`: none if the write was already flushed.
    pub(crate) fn drain(&mut self, pe: u32, write_id: u64, shown: &mut Vec<Range>) {
        let list = &self.pending[pe as usize];
        let Some(pos) = write_id.checked_sub(list.first_id) else {
            return;
        };
        let pos = pos as usize;
        let target = list.spans[pos];
        if !target.live {
            return;
        }
        for i in 0..pos {
            let w = self.pending[pe as usize].spans[i];
            if w.live
                && w.kind == target.kind
                && overlaps(w.offset, w.len, target.offset, target.len)
            {
                self.apply(pe, i, shown);
            }
        }
        self.apply(pe, pos, shown);
        self.pending[pe as usize].pop_applied();
    }

    /// Whether `pe` has delivered writes that are not visible yet.
    pub(crate) fn has_pending(&self, pe: u32) -> bool {
        self.pending[pe as usize].spans.iter().any(|w| w.live)
    }

    /// Makes every pending write of `pe` visible, oldest first (the consistency step), and
    /// appends the ranges made visible to `shown`.
    pub(crate) fn flush(&mut self, pe: u32, shown: &mut Vec<Range>) {
        for i in 0..self.pending[pe as usize].spans.len() {
            if self.pending[pe as usize].spans[i].live {
                self.apply(pe, i, shown);
            }
        }
        let list = &mut self.pending[pe as usize];
        list.pop_applied();
        list.due.clear();
    }

    /// Applies the pending write at `index` of `pe`'s list.
    fn apply(&mut self, pe: u32, index: usize, shown: &mut Vec<Range>) {
        let list = &mut self.pending[pe as usize];
        let span = &mut list.spans[index];
        span.live = false;
        let (kind, offset, len) = (span.kind, span.offset, span.len);
        let data = std::mem::take(&mut list.data[index]);
        self.write(pe, kind, offset, data.as_slice());
        shown.push((kind, offset, len));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drained(m: &mut Memory, write_id: u64) -> Vec<Range> {
        let mut shown = Vec::new();
        m.drain(0, write_id, &mut shown);
        shown
    }

    #[test]
    fn unwritten_memory_reads_zero_and_costs_nothing() {
        let mut m = Memory::new(2);
        assert!(m.create(1, MemKind::Device, 1 << 30));
        let mut out = [7u8; 16];
        m.read(1, MemKind::Device, 4096, &mut out);
        assert_eq!(out, [0; 16]);
        assert_eq!(m.resident_bytes_peak, 0);
        m.write_word(1, MemKind::Device, 8, 8, 42);
        assert_eq!(m.read_word(1, MemKind::Device, 8, 8), 42);
        assert_eq!(m.resident_bytes_peak, GROWTH_STEP_BYTES);
    }

    #[test]
    fn words_far_apart_cost_a_page_each_and_writes_may_span_pages() {
        let mut m = Memory::new(1);
        m.create(0, MemKind::Device, 1 << 30);
        m.write_word(0, MemKind::Device, 8, 8, 1);
        m.write_word(0, MemKind::Device, 512 << 20, 8, 2);
        assert_eq!(m.resident_bytes_peak, 2 * GROWTH_STEP_BYTES);
        let across: Vec<u8> = (1..=16).collect();
        m.write(0, MemKind::Device, 3 * GROWTH_STEP_BYTES - 8, &across);
        let mut out = [0u8; 16];
        m.read(0, MemKind::Device, 3 * GROWTH_STEP_BYTES - 8, &mut out);
        assert_eq!(out.as_slice(), across.as_slice());
        assert_eq!(m.read_word(0, MemKind::Device, 512 << 20, 8), 2);
        assert_eq!(m.resident_bytes_peak, 4 * GROWTH_STEP_BYTES);
    }

    #[test]
    fn zeros_past_the_written_end_cost_nothing_but_zeros_inside_are_written() {
        let mut m = Memory::new(1);
        m.create(0, MemKind::Device, 1 << 20);
        m.write(0, MemKind::Device, 0, &[0; 100_000]);
        assert_eq!(
            m.resident_bytes_peak, 0,
            "clearing fresh memory materialises nothing"
        );
        m.write_word(0, MemKind::Device, 8, 8, 7);
        let mut buf = vec![0; 20_000];
        buf[0] = 1;
        m.write(0, MemKind::Device, 4, &buf);
        assert_eq!(m.resident_bytes_peak, GROWTH_STEP_BYTES);
        assert_eq!(
            m.read_word(0, MemKind::Device, 8, 8),
            0,
            "the 7 was overwritten"
        );
        assert_eq!(m.read_word(0, MemKind::Device, 0, 8), 1 << 32);
    }

    #[test]
    fn pending_writes_are_invisible_until_drained_or_flushed() {
        let mut m = Memory::new(1);
        m.create(0, MemKind::Device, 1024);
        let a = m.push_pending(0, MemKind::Device, 0, Payload::new(&[1; 8]), 10);
        let _b = m.push_pending(0, MemKind::Device, 8, Payload::new(&[2; 8]), 10);
        assert_eq!(m.read_word(0, MemKind::Device, 0, 8), 0);
        assert_eq!(drained(&mut m, a), vec![(MemKind::Device, 0, 8)]);
        assert_eq!(
            m.read_word(0, MemKind::Device, 0, 8),
            u64::from_le_bytes([1; 8])
        );
        assert_eq!(m.read_word(0, MemKind::Device, 8, 8), 0);
        assert!(drained(&mut m, a).is_empty());
        m.flush(0, &mut Vec::new());
        assert_eq!(
            m.read_word(0, MemKind::Device, 8, 8),
            u64::from_le_bytes([2; 8])
        );
        assert!(m.pending[0].spans.is_empty() && m.pending[0].data.is_empty());
    }

    #[test]
    fn draining_a_newer_write_first_applies_older_overlapping_ones() {
        let mut m = Memory::new(1);
        m.create(0, MemKind::Device, 1024);
        m.push_pending(0, MemKind::Device, 0, Payload::new(&[1; 8]), 10);
        let unrelated = m.push_pending(0, MemKind::Device, 64, Payload::new(&[3; 8]), 10);
        let newer = m.push_pending(0, MemKind::Device, 0, Payload::new(&[2; 8]), 10);
        let shown = drained(&mut m, newer);
        assert_eq!(
            shown,
            vec![(MemKind::Device, 0, 8), (MemKind::Device, 0, 8)]
        );
        assert_eq!(
            m.read_word(0, MemKind::Device, 0, 8),
            u64::from_le_bytes([2; 8])
        );
        assert_eq!(m.read_word(0, MemKind::Device, 64, 8), 0);
        assert_eq!(drained(&mut m, unrelated).len(), 1);
        assert!(
            m.pending[0].spans.is_empty(),
            "applied writes leave the list"
        );
    }

    #[test]
    fn out_of_range_access_is_a_contract_violation() {
        let mut m = Memory::new(1);
        m.create(0, MemKind::Device, 16);
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            m.write(0, MemKind::Device, 12, &[0; 8]);
        }));
        assert!(caught.is_err(), "an out-of-range write must panic");
    }
}
