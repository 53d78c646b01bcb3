//! One PE's delivered but invisible writes (the module doc of `memory` says why they exist),
//! with an index by address (`places.rs`) so that a drain or an atomic finds the writes it
//! overlaps without reading the whole list: at thousands of PEs an all-to-all leaves
//! thousands of writes pending at one PE, and scanning them per access made the run
//! quadratic.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use hw::MemKind;

use super::places::Places;
use super::{Payload, overlaps};

/// Where one pending write goes.
#[derive(Clone, Copy, Debug)]
pub(super) struct PendingSpan {
    /// When the write becomes visible on its own.
    pub(super) drain_ns: u64,
    pub(super) kind: MemKind,
    pub(super) offset: u64,
    pub(super) len: u64,
    /// False once applied. An applied write stays listed until it reaches the front, so
    /// that a write's place in the list follows from its id.
    pub(super) live: bool,
    /// The next newer live write on the same line, while this one is indexed by its line
    /// (`places.rs`); `NO_WRITE` otherwise.
    pub(super) newer_on_line: u64,
}

/// A list gets its index when it grows past this many writes, and keeps it until no write is
/// live: most lists hold a few writes, and scanning those is cheaper than keeping an index
/// (an index of every list cost `msg-rate` on 256 PEs 3 % more instructions, BENCHMARKS.md).
const INDEX_LEN: usize = 64;

/// One PE's pending writes, oldest first. Where they go and what they hold are kept apart so
/// that a scan reads small entries.
#[derive(Debug, Default)]
pub(super) struct PendingList {
    /// The id of the write at the front; ids are numbered per PE, in arrival order.
    pub(super) first_id: u64,
    pub(super) spans: VecDeque<PendingSpan>,
    pub(super) data: VecDeque<Payload>,
    /// (drain time, id) of the writes still pending, earliest first; entries of writes
    /// applied early (by a flush, or as older overlapping writes) are skipped when met.
    pub(super) due: BinaryHeap<Reverse<(u64, u64)>>,
    /// Writes not yet applied.
    live: usize,
    /// Where the live writes are, for a list that grew long.
    by_place: Option<Places>,
}

impl PendingList {
    /// Appends a write; returns its id.
    pub(super) fn push(&mut self, span: PendingSpan, data: Payload) -> u64 {
        let id = self.first_id + self.spans.len() as u64;
        self.due.push(Reverse((span.drain_ns, id)));
        self.live += 1;
        self.spans.push_back(span);
        self.data.push_back(data);
        match &mut self.by_place {
            Some(places) => places.insert(&mut self.spans, self.first_id, id),
            None if self.spans.len() > INDEX_LEN => {
                let mut places = Places::default();
                for listed in self.first_id..=id {
                    if self.spans[(listed - self.first_id) as usize].live {
                        places.insert(&mut self.spans, self.first_id, listed);
                    }
                }
                self.by_place = Some(places);
            }
            None => {}
        }
        id
    }

    /// The write with id `id`, if still listed.
    pub(super) fn span(&self, id: u64) -> Option<&PendingSpan> {
        let pos = id.checked_sub(self.first_id)?;
        self.spans.get(pos as usize)
    }

    /// Whether any write is live.
    pub(super) fn has_live(&self) -> bool {
        self.live > 0
    }

    /// The ids of the live writes older than `before_id` that overlap `[offset, offset +
    /// len)` of `kind`, oldest first, appended to `ids`.
    pub(super) fn overlapping(
        &self,
        kind: MemKind,
        offset: u64,
        len: u64,
        before_id: u64,
        ids: &mut Vec<u64>,
    ) {
        let start = ids.len();
        self.each_overlapping(kind, offset, len, before_id, |id| ids.push(id));
        ids[start..].sort_unstable();
    }

    /// The ids of the live writes that overlap `[offset, offset + len)` of `kind` and show in
    /// it once all have drained, oldest first, appended to `ids`: in a long list, only the
    /// newest when it covers the range whole (an atomic's word, on which every PE's `ADD`
    /// may be pending at once).
    pub(super) fn showing(&self, kind: MemKind, offset: u64, len: u64, ids: &mut Vec<u64>) {
        let newest = self.by_place.as_ref().and_then(|places| {
            places.newest_covering(&self.spans, self.first_id, (kind, offset, len))
        });
        match newest {
            Some(id) => ids.push(id),
            None => self.overlapping(kind, offset, len, u64::MAX, ids),
        }
    }

    /// Whether a live write overlaps `[offset, offset + len)` of `kind`.
    pub(super) fn any_overlapping(&self, kind: MemKind, offset: u64, len: u64) -> bool {
        let mut any = false;
        self.each_overlapping(kind, offset, len, u64::MAX, |_| any = true);
        any
    }

    /// Calls `f` with the id of each live write older than `before_id` that overlaps
    /// `[offset, offset + len)` of `kind`, in no particular order.
    fn each_overlapping(
        &self,
        kind: MemKind,
        offset: u64,
        len: u64,
        before_id: u64,
        mut f: impl FnMut(u64),
    ) {
        let end_id = before_id.min(self.first_id + self.spans.len() as u64);
        let Some(places) = &self.by_place else {
            for (id, w) in (self.first_id..end_id).zip(&self.spans) {
                if w.live && w.kind == kind && overlaps(w.offset, w.len, offset, len) {
                    f(id);
                }
            }
            return;
        };
        let range = (kind, offset, len);
        places.each_overlapping(&self.spans, self.first_id, range, end_id, f);
    }

    /// Marks the write at `pos` applied and takes its bytes.
    pub(super) fn take(&mut self, pos: usize) -> (PendingSpan, Payload) {
        let span = &mut self.spans[pos];
        span.live = false;
        let span = *span;
        self.live -= 1;
        if self.live == 0 {
            self.by_place = None;
        } else if let Some(places) = &mut self.by_place {
            places.remove(&mut self.spans, self.first_id, self.first_id + pos as u64);
        }
        (span, std::mem::take(&mut self.data[pos]))
    }

    /// Drops the applied writes at the front.
    pub(super) fn pop_applied(&mut self) {
        while self.spans.front().is_some_and(|w| !w.live) {
            self.spans.pop_front();
            self.data.pop_front();
            self.first_id += 1;
        }
    }
}
