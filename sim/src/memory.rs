//! Simulated memory: every PE's segments, and the InfiniBand writes not yet visible.
//!
//! Segments grow lazily: a segment of 1 GiB costs nothing until it is written, and then only
//! up to the highest byte written, so thousands of PEs fit in a laptop's memory.
//!
//! Writes that arrive through a NIC (path class `Rdma`) land in a per-PE pending list first
//! (SPEC section 3, the visibility rule: the NIC writes GPU memory over PCIe and the GPU's SMs
//! and NVLink peers may not see it yet). A pending write becomes visible when its drain event
//! fires, when the owner runs a consistency step (wait, test, quiet, barrier), or when a fetch
//! through the NIC reads the location (a PCIe read pushes posted writes ahead of it).

use std::collections::VecDeque;

use hw::MemKind;

/// Segments grow in steps of this many bytes so that small writes do not reallocate often.
const GROWTH_STEP_BYTES: u64 = 64 * 1024;

#[derive(Debug)]
struct Segment {
    capacity_bytes: u64,
    data: Vec<u8>,
}

#[derive(Debug)]
pub(crate) struct PendingWrite {
    pub(crate) id: u64,
    kind: MemKind,
    offset: u64,
    data: Vec<u8>,
}

#[derive(Debug, Default)]
pub(crate) struct Memory {
    segments: Vec<[Option<Segment>; 2]>,
    pending: Vec<VecDeque<PendingWrite>>,
    next_write_id: u64,
    resident_bytes: u64,
    pub(crate) resident_bytes_peak: u64,
}

fn slot(kind: MemKind) -> usize {
    match kind {
        MemKind::Host => 0,
        MemKind::Device => 1,
    }
}

fn overlaps(a_offset: u64, a_len: u64, b_offset: u64, b_len: u64) -> bool {
    a_offset < b_offset + b_len && b_offset < a_offset + a_len
}

impl Memory {
    pub(crate) fn new(n_pes: u32) -> Memory {
        Memory {
            segments: (0..n_pes).map(|_| [None, None]).collect(),
            pending: (0..n_pes).map(|_| VecDeque::new()).collect(),
            ..Memory::default()
        }
    }

    pub(crate) fn create(&mut self, pe: u32, kind: MemKind, capacity_bytes: u64) -> bool {
        let seg = &mut self.segments[pe as usize][slot(kind)];
        if seg.is_some() {
            return false;
        }
        *seg = Some(Segment {
            capacity_bytes,
            data: Vec::new(),
        });
        true
    }

    pub(crate) fn capacity_bytes(&self, pe: u32, kind: MemKind) -> Option<u64> {
        self.segments[pe as usize][slot(kind)]
            .as_ref()
            .map(|s| s.capacity_bytes)
    }

    fn segment(&self, pe: u32, kind: MemKind, offset: u64, len: u64) -> &Segment {
        let seg = self.segments[pe as usize][slot(kind)]
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
        let start = (offset as usize).min(seg.data.len());
        let have = (seg.data.len() - start).min(out.len());
        out[..have].copy_from_slice(&seg.data[start..start + have]);
        out[have..].fill(0);
    }

    /// Writes visible memory.
    pub(crate) fn write(&mut self, pe: u32, kind: MemKind, offset: u64, data: &[u8]) {
        self.segment(pe, kind, offset, data.len() as u64);
        let seg = self.segments[pe as usize][slot(kind)]
            .as_mut()
            .expect("checked above");
        let end = offset as usize + data.len();
        if end > seg.data.len() {
            let grown = (end as u64).div_ceil(GROWTH_STEP_BYTES) * GROWTH_STEP_BYTES;
            let grown = grown.min(seg.capacity_bytes) as usize;
            self.resident_bytes += (grown - seg.data.len()) as u64;
            self.resident_bytes_peak = self.resident_bytes_peak.max(self.resident_bytes);
            seg.data.resize(grown, 0);
        }
        seg.data[offset as usize..end].copy_from_slice(data);
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

    /// Queues a write that is delivered but not yet visible, and returns its id.
    pub(crate) fn push_pending(
        &mut self,
        pe: u32,
        kind: MemKind,
        offset: u64,
        data: Vec<u8>,
    ) -> u64 {
        self.segment(pe, kind, offset, data.len() as u64);
        self.next_write_id += 1;
        let id = self.next_write_id;
        self.pending[pe as usize].push_back(PendingWrite {
            id,
            kind,
            offset,
            data,
        });
        id
    }

    /// Makes one pending write visible, together with every older pending write it overlaps
    /// (so a location never shows an older value after a newer one). Returns the ranges made
    /// visible; empty if the write was already flushed.
    pub(crate) fn drain(&mut self, pe: u32, write_id: u64) -> Vec<(MemKind, u64, u64)> {
        let queue = &mut self.pending[pe as usize];
        let Some(pos) = queue.iter().position(|w| w.id == write_id) else {
            return Vec::new();
        };
        let target = &queue[pos];
        let (t_kind, t_offset, t_len) = (target.kind, target.offset, target.data.len() as u64);
        let mut chosen: Vec<PendingWrite> = Vec::new();
        let mut i = 0;
        let mut remaining_to_target = pos;
        while i < queue.len() {
            let w = &queue[i];
            let older_overlapping = remaining_to_target > 0
                && w.kind == t_kind
                && overlaps(w.offset, w.data.len() as u64, t_offset, t_len);
            if w.id == write_id || older_overlapping {
                let is_target = w.id == write_id;
                chosen.push(queue.remove(i).expect("index in range"));
                if is_target {
                    break;
                }
                remaining_to_target -= 1;
            } else {
                i += 1;
                remaining_to_target = remaining_to_target.saturating_sub(1);
            }
        }
        self.apply(pe, chosen)
    }

    /// Makes every pending write of `pe` visible, oldest first (the consistency step).
    pub(crate) fn flush(&mut self, pe: u32) -> Vec<(MemKind, u64, u64)> {
        let all: Vec<PendingWrite> = self.pending[pe as usize].drain(..).collect();
        self.apply(pe, all)
    }

    fn apply(&mut self, pe: u32, writes: Vec<PendingWrite>) -> Vec<(MemKind, u64, u64)> {
        writes
            .into_iter()
            .map(|w| {
                self.write(pe, w.kind, w.offset, &w.data);
                (w.kind, w.offset, w.data.len() as u64)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn pending_writes_are_invisible_until_drained_or_flushed() {
        let mut m = Memory::new(1);
        m.create(0, MemKind::Device, 1024);
        let a = m.push_pending(0, MemKind::Device, 0, vec![1; 8]);
        let _b = m.push_pending(0, MemKind::Device, 8, vec![2; 8]);
        assert_eq!(m.read_word(0, MemKind::Device, 0, 8), 0);
        assert_eq!(m.drain(0, a), vec![(MemKind::Device, 0, 8)]);
        assert_eq!(
            m.read_word(0, MemKind::Device, 0, 8),
            u64::from_le_bytes([1; 8])
        );
        assert_eq!(m.read_word(0, MemKind::Device, 8, 8), 0);
        assert!(m.drain(0, a).is_empty());
        m.flush(0);
        assert_eq!(
            m.read_word(0, MemKind::Device, 8, 8),
            u64::from_le_bytes([2; 8])
        );
        assert!(m.pending[0].is_empty());
    }

    #[test]
    fn draining_a_newer_write_first_applies_older_overlapping_ones() {
        let mut m = Memory::new(1);
        m.create(0, MemKind::Device, 1024);
        m.push_pending(0, MemKind::Device, 0, vec![1; 8]);
        let unrelated = m.push_pending(0, MemKind::Device, 64, vec![3; 8]);
        let newer = m.push_pending(0, MemKind::Device, 0, vec![2; 8]);
        let shown = m.drain(0, newer);
        assert_eq!(
            shown,
            vec![(MemKind::Device, 0, 8), (MemKind::Device, 0, 8)]
        );
        assert_eq!(
            m.read_word(0, MemKind::Device, 0, 8),
            u64::from_le_bytes([2; 8])
        );
        assert_eq!(m.read_word(0, MemKind::Device, 64, 8), 0);
        assert_eq!(m.drain(0, unrelated).len(), 1);
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
