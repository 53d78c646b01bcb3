//! A symmetric segment in host memory: little-endian bytes stored in 64-bit atomic words.
//!
//! Byte `b` of the segment is byte `b % 8` (little-endian) of word `b / 8`. Every access is an
//! atomic access of a whole word, so concurrent puts, gets and atomics on one segment are never
//! a data race in the Rust sense; what a racing reader sees is decided by the orderings below.

use crate::amo::{AmoKind, AmoOp, AmoWidth};
use crate::sync::{AtomicU64, Ordering, zeroed_words};

/// The bytes of a segment.
pub(crate) struct Segment {
    words: Box<[AtomicU64]>,
    len_bytes: u64,
}

impl std::fmt::Debug for Segment {
    /// The length only: the contents may be a gigabyte.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Segment({} bytes)", self.len_bytes)
    }
}

/// The mask of bytes `lo..hi` (0..=8) of a word.
fn byte_mask(lo: usize, hi: usize) -> u64 {
    let bits = |b: usize| {
        if b >= 8 {
            u64::MAX
        } else {
            (1u64 << (8 * b)) - 1
        }
    };
    bits(hi) & !bits(lo)
}

/// The load ordering that matches `order`: its acquire half (a load cannot release).
fn load_order(order: Ordering) -> Ordering {
    match order {
        Ordering::AcqRel => Ordering::Acquire,
        Ordering::Release => Ordering::Relaxed,
        // Relaxed, Acquire and SeqCst are load orderings already.
        other => other,
    }
}

impl Segment {
    /// A zero-filled segment of `len_bytes`, or `None` if the memory cannot be had.
    pub(crate) fn zeroed(len_bytes: u64) -> Option<Segment> {
        let n = usize::try_from(len_bytes.div_ceil(8)).ok()?;
        Some(Segment {
            words: zeroed_words(n)?,
            len_bytes,
        })
    }

    pub(crate) fn len_bytes(&self) -> u64 {
        self.len_bytes
    }

    /// The words covering `offset..offset + len`, checked against the segment's length.
    pub(crate) fn span(&self, offset: u64, len: u64, what: &str) -> std::ops::Range<usize> {
        let end = offset.checked_add(len);
        assert!(
            end.is_some_and(|end| end <= self.len_bytes),
            "{what}: bytes {offset}+{len} outside a segment of {} bytes (contract violation)",
            self.len_bytes
        );
        // Both fit in usize: the words exist.
        (offset / 8) as usize..(offset + len).div_ceil(8) as usize
    }

    /// For word `w` of an access starting at byte `offset`: the byte range of the word it
    /// covers and where those bytes are in the caller's buffer.
    fn piece(w: usize, offset: u64, len: u64) -> (usize, usize, usize) {
        let word_start = w as u64 * 8;
        let lo = offset.max(word_start) - word_start;
        let hi = (offset + len).min(word_start + 8) - word_start;
        let buf = (word_start + lo - offset) as usize;
        (lo as usize, hi as usize, buf)
    }

    /// Copies `out.len()` bytes at `offset` into `out`, each word loaded with `order`.
    pub(crate) fn read(&self, offset: u64, out: &mut [u8], order: Ordering) {
        let len = out.len() as u64;
        for w in self.span(offset, len, "read") {
            let bytes = self.words[w].load(order).to_le_bytes();
            let (lo, hi, buf) = Self::piece(w, offset, len);
            out[buf..buf + hi - lo].copy_from_slice(&bytes[lo..hi]);
        }
    }

    /// Stores `data` at `offset` word by word with Relaxed stores: ordering with other
    /// operations is the caller's fences' job. A partly covered word is merged with one CAS
    /// loop, so the bytes outside the range (a neighbour's 32-bit atomic, say) are kept.
    pub(crate) fn write(&self, offset: u64, data: &[u8]) {
        let len = data.len() as u64;
        for w in self.span(offset, len, "write") {
            let (lo, hi, buf) = Self::piece(w, offset, len);
            let mut bytes = [0u8; 8];
            bytes[lo..hi].copy_from_slice(&data[buf..buf + hi - lo]);
            let bits = u64::from_le_bytes(bytes);
            if hi - lo == 8 {
                self.words[w].store(bits, Ordering::Relaxed);
            } else {
                let mask = byte_mask(lo, hi);
                let merge = |old: u64| Some((old & !mask) | bits);
                // The closure never returns None, so this cannot fail.
                let _ = self.words[w].fetch_update(Ordering::Relaxed, Ordering::Relaxed, merge);
            }
        }
    }

    /// Applies `op` to the word at `offset` (aligned to the op's width) as one atomic
    /// read-modify-write with `order`, and returns the old value (truncated to the width).
    pub(crate) fn amo(&self, offset: u64, op: AmoOp, order: Ordering) -> u64 {
        let width = op.width.bytes();
        assert!(
            offset.is_multiple_of(width),
            "amo: offset {offset} not aligned to {width} bytes (contract violation)"
        );
        let w = self.span(offset, width, "amo").start;
        let word = &self.words[w];
        let failure = load_order(order);
        match op.width {
            AmoWidth::W64 => match op.kind {
                AmoKind::Fetch => word.load(failure),
                AmoKind::Set | AmoKind::Swap => word.swap(op.operand, order),
                AmoKind::CompareSwap { compare } => {
                    match word.compare_exchange(compare, op.operand, order, failure) {
                        Ok(old) | Err(old) => old,
                    }
                }
                AmoKind::Add => word.fetch_add(op.operand, order),
                AmoKind::And => word.fetch_and(op.operand, order),
                AmoKind::Or => word.fetch_or(op.operand, order),
                AmoKind::Xor => word.fetch_xor(op.operand, order),
            },
            AmoWidth::W32 => {
                // Half a word: one CAS loop on the whole word, so the other half is untouched.
                let shift = 8 * (offset % 8);
                let half = |v: u64| (v >> shift) & 0xffff_ffff;
                if op.kind == AmoKind::Fetch {
                    return half(word.load(failure));
                }
                let mask = 0xffff_ffffu64 << shift;
                let update = |v: u64| Some((v & !mask) | (op.apply(half(v)) << shift));
                match word.fetch_update(order, failure, update) {
                    Ok(old) | Err(old) => half(old),
                }
            }
        }
    }
}

#[cfg(all(test, not(any(rshmem_loom, rshmem_shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn unaligned_bytes_round_trip_and_keep_neighbours() {
        let s = Segment::zeroed(24).unwrap();
        s.write(0, &[0xff; 24]);
        s.write(3, &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        let mut out = [0u8; 24];
        s.read(0, &mut out, Ordering::Relaxed);
        let mut want = [0xffu8; 24];
        want[3..13].copy_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        assert_eq!(out, want);
    }

    #[test]
    fn w32_atomics_touch_only_their_half() {
        let s = Segment::zeroed(8).unwrap();
        let add = |v| AmoOp {
            kind: AmoKind::Add,
            operand: v,
            width: AmoWidth::W32,
        };
        assert_eq!(s.amo(4, add(0xffff_ffff), Ordering::AcqRel), 0);
        assert_eq!(s.amo(0, add(2), Ordering::AcqRel), 0);
        assert_eq!(s.amo(4, add(1), Ordering::AcqRel), 0xffff_ffff);
        let mut out = [0u8; 8];
        s.read(0, &mut out, Ordering::Relaxed);
        assert_eq!(
            u64::from_le_bytes(out),
            2,
            "the high half wrapped to 0 alone"
        );
    }

    #[test]
    fn a_huge_segment_is_not_touched() {
        let s = Segment::zeroed(1 << 30).unwrap();
        assert_eq!(s.len_bytes(), 1 << 30);
    }
}
