//! Where a long pending list's live writes are, so that a drain, an atomic or a wait finds
//! the writes it overlaps without reading the whole list.
//!
//! Two indexes, by the write's shape:
//!
//! - A write within one 64-byte line (a word, a signal, a small aligned block: most writes of
//!   the workloads that make lists long) is found through its line: a hash map from the line
//!   to the oldest and newest live writes on it, and from each write to the next newer one
//!   on its line ([`PendingSpan::newer_on_line`]). Adding, finding and removing cost one
//!   probe each: writes leave a line oldest first (a drain applies the older writes it
//!   overlaps before itself), so a removal rarely walks the line.
//! - A longer write is kept in an ordered tree by (segment, length class, offset, id), where a
//!   lookup searches each length class present from as far before the range as a write of
//!   that class can start.
//!
//! An ordered tree for every write, six descents each with a few cache misses, took an
//! eighth of an all-to-all's samples at 2048 PEs and a sixth of moe-dispatch's at 1024 (perf,
//! BENCHMARKS.md).

use std::collections::{BTreeSet, VecDeque};
use std::hash::BuildHasherDefault;

use hw::MemKind;

use super::overlaps;
use super::pending::PendingSpan;
use crate::hashing::IntHasher;

/// Bytes per line.
const LINE_BYTES: u64 = 64;

/// No write.
pub(super) const NO_WRITE: u64 = u64::MAX;

/// The (oldest, newest) live write on each line that live one-line writes touch, by
/// [`line_key`].
// Why a hash map in the simulator (sim/clippy.toml bans it): it is only looked up by key,
// never iterated, so its order cannot reach a run.
#[allow(
    clippy::disallowed_types,
    reason = "a fixed hasher (IntHasher), looked up by key and never iterated"
)]
type Lines = std::collections::HashMap<u64, (u64, u64), BuildHasherDefault<IntHasher>>;

/// Bits of a [`wide_key`] below the offset: the write's id.
const ID_BITS: u32 = 64;
/// Bits of a [`wide_key`] for the offset: 32 PiB, beyond any segment.
const OFFSET_BITS: u32 = 55;
/// Bits of a [`wide_key`] for the length class.
const CLASS_BITS: u32 = 6;

/// The line of byte `offset` of segment `kind`, as a key.
fn line_key(kind: MemKind, line: u64) -> u64 {
    debug_assert!(line < 1 << 60, "line {line:#x} beyond any segment");
    (kind.index() as u64) << 60 | line
}

/// The line a write of `len` bytes at `offset` lies in, if it lies in one.
fn one_line(offset: u64, len: u64) -> Option<u64> {
    let line = offset / LINE_BYTES;
    (len > 0 && (offset + len - 1) / LINE_BYTES == line).then_some(line)
}

/// The length class of a write of `len` bytes: the smallest `c` with `len <= 2^c`.
fn length_class(len: u64) -> u32 {
    u64::BITS - (len.max(1) - 1).leading_zeros()
}

/// A longer write's place in the tree: (segment, length class, offset, id) in one integer,
/// which the tree compares in two instructions.
fn wide_key(kind: MemKind, class: u32, offset: u64, id: u64) -> u128 {
    debug_assert!(
        offset < 1 << OFFSET_BITS,
        "offset {offset:#x} beyond any segment"
    );
    (u128::from(kind.index() as u8) << (ID_BITS + OFFSET_BITS + CLASS_BITS))
        | (u128::from(class) << (ID_BITS + OFFSET_BITS))
        | (u128::from(offset) << ID_BITS)
        | u128::from(id)
}

/// The live writes of one pending list by place; the list's spans hold the links between the
/// writes of a line.
#[derive(Debug, Default)]
pub(super) struct Places {
    lines: Lines,
    /// One-line writes listed in `lines`.
    on_lines: usize,
    /// [`wide_key`] of every live write that does not lie in one line.
    wide: BTreeSet<u128>,
    /// Bit `c` is set when a write of length class `c` may be in `wide`.
    wide_classes: u64,
}

impl Places {
    /// Lists write `id`, the newest of `spans` (which start at id `first_id`).
    pub(super) fn insert(&mut self, spans: &mut VecDeque<PendingSpan>, first_id: u64, id: u64) {
        let span = &mut spans[(id - first_id) as usize];
        span.newer_on_line = NO_WRITE;
        let Some(line) = one_line(span.offset, span.len) else {
            let class = length_class(span.len);
            self.wide_classes |= 1 << class;
            self.wide
                .insert(wide_key(span.kind, class, span.offset, id));
            return;
        };
        self.on_lines += 1;
        let key = line_key(span.kind, line);
        let Some((_, newest)) = self.lines.get_mut(&key) else {
            self.lines.insert(key, (id, id));
            return;
        };
        let before = std::mem::replace(newest, id);
        spans[(before - first_id) as usize].newer_on_line = id;
    }

    /// Unlists live write `id` of `spans`.
    pub(super) fn remove(&mut self, spans: &mut VecDeque<PendingSpan>, first_id: u64, id: u64) {
        let span = spans[(id - first_id) as usize];
        let Some(line) = one_line(span.offset, span.len) else {
            let class = length_class(span.len);
            self.wide
                .remove(&wide_key(span.kind, class, span.offset, id));
            return;
        };
        self.on_lines -= 1;
        let key = line_key(span.kind, line);
        let (oldest, newest) = self.lines.get_mut(&key).expect("a listed write's line");
        if *oldest == id {
            match span.newer_on_line {
                NO_WRITE => {
                    self.lines.remove(&key);
                }
                newer => *oldest = newer,
            }
            return;
        }
        // Not the oldest (a flush or a drain took it out of order): walk to the one before.
        let mut at = *oldest;
        loop {
            let older = &mut spans[(at - first_id) as usize];
            if older.newer_on_line == id {
                older.newer_on_line = span.newer_on_line;
                if *newest == id {
                    *newest = at;
                }
                return;
            }
            at = older.newer_on_line;
            assert_ne!(at, NO_WRITE, "write {id} is not on its line");
        }
    }

    /// The newest listed write, if it lies in the line of `[offset, offset + len)` of `kind`
    /// and covers that range whole, and no write longer than a line is listed (a newer one
    /// could show through): then no other write shows in the range.
    pub(super) fn newest_covering(
        &self,
        spans: &VecDeque<PendingSpan>,
        first_id: u64,
        (kind, offset, len): (MemKind, u64, u64),
    ) -> Option<u64> {
        let line = one_line(offset, len).filter(|_| self.wide.is_empty())?;
        let &(_, newest) = self.lines.get(&line_key(kind, line))?;
        let w = &spans[(newest - first_id) as usize];
        (w.offset <= offset && offset + len <= w.offset + w.len).then_some(newest)
    }

    /// Calls `f` with the id of each listed write older than `end_id` that overlaps
    /// `[offset, offset + len)` of `kind`, in no particular order.
    pub(super) fn each_overlapping(
        &self,
        spans: &VecDeque<PendingSpan>,
        first_id: u64,
        (kind, offset, len): (MemKind, u64, u64),
        end_id: u64,
        mut f: impl FnMut(u64),
    ) {
        if len == 0 {
            return;
        }
        let span_of = |id: u64| &spans[(id - first_id) as usize];
        let (first_line, last_line) = (offset / LINE_BYTES, (offset + len - 1) / LINE_BYTES);
        let lines = last_line - first_line + 1;
        if lines <= self.lines.len() as u64 {
            for line in first_line..=last_line {
                let Some(&(oldest, _)) = self.lines.get(&line_key(kind, line)) else {
                    continue;
                };
                // A line's writes are linked in id order: stop at the first too new.
                let mut id = oldest;
                while id < end_id {
                    let w = span_of(id);
                    if overlaps(w.offset, w.len, offset, len) {
                        f(id);
                    }
                    id = w.newer_on_line;
                }
            }
        } else if self.on_lines > 0 {
            // A range wider than there are lines listed: reading the list is cheaper.
            for (id, w) in (first_id..end_id).zip(spans) {
                let on_a_line = one_line(w.offset, w.len).is_some();
                if w.live && on_a_line && w.kind == kind && overlaps(w.offset, w.len, offset, len) {
                    f(id);
                }
            }
        }
        let mut classes = self.wide_classes;
        while classes != 0 {
            let class = classes.trailing_zeros();
            classes &= classes - 1;
            let from = offset.saturating_sub((1 << class) - 1);
            let range = wide_key(kind, class, from, 0)..wide_key(kind, class, offset + len, 0);
            for &key in self.wide.range(range) {
                let id = key as u64;
                let w = span_of(id);
                if id < end_id && overlaps(w.offset, w.len, offset, len) {
                    f(id);
                }
            }
        }
    }
}
