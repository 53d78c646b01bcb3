//! Shadow memory: for every byte range of symmetric memory that was accessed, the last write
//! and the last read of each PE.
//!
//! Ranges, not words: one put of 256 MiB is one span, not 32 million words, and two PEs that
//! write neighbouring halves of a word do not conflict. A span is split where an access
//! starts or ends inside it, and neighbours with equal histories are merged again, so the
//! number of spans follows the number of distinct access patterns, not the bytes touched.

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use hw::MemKind;

use super::clock::{Channel, Component, VectorClock};
use super::report::RaceAccess;

/// A segment of one PE: where shadow histories live.
pub(crate) type Place = (u32, MemKind);

/// One recorded access.
#[derive(Debug)]
pub(crate) struct Access {
    /// What it was, for reports.
    pub(crate) site: RaceAccess,
    /// Its issuer's epoch.
    pub(crate) epoch: u64,
    /// Which of its issuer's clock components covers it.
    pub(crate) channel: Channel,
    /// For a write: what a PE that observes it learns (the issuer's released clock).
    pub(crate) released: Option<VectorClock>,
    /// A write that crossed InfiniBand into its target's memory, where it may stay invisible
    /// to others than the target until the target's consistency step (rule R8).
    pub(crate) via_nic: bool,
    /// For such a write: the number of the target's consistency step that made it visible;
    /// 0 while none has. Atomic only so that a shared access can be marked; the detector's
    /// lock orders every use.
    pub(crate) visible_at: AtomicU64,
}

impl Access {
    /// The clock component that orders this access.
    pub(crate) fn component(&self) -> Component {
        Component {
            issuer: self.site.pe,
            channel: self.channel,
        }
    }

    fn writes(&self) -> bool {
        self.site.kind.writes()
    }

    /// The target's consistency step that made this write visible, if one has.
    pub(crate) fn visible_at(&self) -> Option<u64> {
        // Relaxed: every access happens under the detector's lock.
        Some(self.visible_at.load(Ordering::Relaxed)).filter(|&step| step > 0)
    }

    /// Marks this write visible from the target's consistency step `step` on.
    pub(crate) fn make_visible(&self, step: u64) {
        // Relaxed: as in `visible_at`.
        self.visible_at.store(step, Ordering::Relaxed);
    }

    /// Whether this access and `other` conflict if unordered: different PEs, at least one
    /// writes, not both atomics (rule R6). Polling reads are never recorded, so they never
    /// conflict.
    fn conflicts_with(&self, other: &Access) -> bool {
        self.site.pe != other.site.pe
            && (self.writes() || other.writes())
            && !(self.site.kind.is_atomic() && other.site.kind.is_atomic())
    }
}

/// The accesses to one span that later accesses are checked against.
#[derive(Clone, Default, Debug)]
pub(crate) struct History {
    /// The last write of each PE that wrote here.
    writes: Vec<Arc<Access>>,
    /// The last read of each PE that read here.
    reads: Vec<Arc<Access>>,
}

impl PartialEq for History {
    fn eq(&self, other: &History) -> bool {
        let same = |a: &[Arc<Access>], b: &[Arc<Access>]| {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| Arc::ptr_eq(x, y))
        };
        same(&self.writes, &other.writes) && same(&self.reads, &other.reads)
    }
}

impl History {
    /// The last write of each PE.
    pub(crate) fn writes(&self) -> &[Arc<Access>] {
        &self.writes
    }

    /// The recorded accesses that `access` conflicts with.
    pub(crate) fn conflicts<'a>(&'a self, access: &'a Access) -> impl Iterator<Item = &'a Access> {
        self.writes
            .iter()
            .chain(&self.reads)
            .map(|a| &**a)
            .filter(|recorded| recorded.conflicts_with(access))
    }

    /// Makes `access` its issuer's last write or last read here.
    pub(crate) fn record(&mut self, access: &Arc<Access>) {
        let slots = if access.writes() {
            &mut self.writes
        } else {
            &mut self.reads
        };
        match slots.iter_mut().find(|a| a.site.pe == access.site.pe) {
            Some(slot) => *slot = Arc::clone(access),
            None => slots.push(Arc::clone(access)),
        }
    }
}

/// A byte range `[start, end)` with one history; `start` is its key in the map.
#[derive(Clone, Debug)]
struct Span<H> {
    end: u64,
    history: H,
}

/// The histories of every accessed range of every place: segments of PEs, with [`History`],
/// for races between PEs; the memories of a kernel launch for races between its threads
/// (`threads.rs`).
#[derive(Debug)]
pub(crate) struct Shadow<H = History, P = Place> {
    places: HashMap<P, BTreeMap<u64, Span<H>>>,
}

impl<H, P> Default for Shadow<H, P> {
    fn default() -> Self {
        Shadow {
            places: HashMap::new(),
        }
    }
}

impl<H: Clone + Default + PartialEq, P: Copy + Eq + Hash> Shadow<H, P> {
    /// Calls `f` with the start and history of every span of `[offset, offset + len_bytes)`
    /// of `place`, creating empty histories for bytes never accessed, then merges equal
    /// neighbours.
    pub(crate) fn update(
        &mut self,
        place: P,
        offset: u64,
        len_bytes: u64,
        mut f: impl FnMut(u64, &mut H),
    ) {
        if len_bytes == 0 {
            return;
        }
        let end = offset + len_bytes;
        let spans = self.places.entry(place).or_default();
        split_at(spans, offset);
        split_at(spans, end);
        fill_gaps(spans, offset, end);
        for (&start, span) in spans.range_mut(offset..end) {
            f(start, &mut span.history);
        }
        merge_equal(spans, offset, end);
    }

    /// Calls `f` with the history of every accessed span that overlaps
    /// `[offset, offset + len_bytes)` of `place`.
    pub(crate) fn visit(&self, place: P, offset: u64, len_bytes: u64, mut f: impl FnMut(&H)) {
        let Some(spans) = self.places.get(&place) else {
            return;
        };
        let end = offset + len_bytes;
        let before = spans
            .range(..offset)
            .next_back()
            .filter(|(_, span)| span.end > offset);
        for (_, span) in before.into_iter().chain(spans.range(offset..end)) {
            f(&span.history);
        }
    }

    /// How many spans are recorded, for tests of the merging.
    #[cfg(test)]
    fn span_count(&self) -> usize {
        self.places.values().map(BTreeMap::len).sum()
    }
}

/// Splits the span that contains `at` (if `at` is inside one, not at its start) in two.
fn split_at<H: Clone>(spans: &mut BTreeMap<u64, Span<H>>, at: u64) {
    if let Some((_, span)) = spans.range_mut(..at).next_back()
        && span.end > at
    {
        let tail = span.clone();
        span.end = at;
        spans.insert(at, tail);
    }
}

/// Inserts empty spans over the bytes of `[start, end)` that no span covers.
fn fill_gaps<H: Default>(spans: &mut BTreeMap<u64, Span<H>>, start: u64, end: u64) {
    let mut gaps = Vec::new();
    let mut cursor = start;
    for (&s, span) in spans.range(start..end) {
        if s > cursor {
            gaps.push((cursor, s));
        }
        cursor = span.end;
    }
    if cursor < end {
        gaps.push((cursor, end));
    }
    for (s, e) in gaps {
        spans.insert(
            s,
            Span {
                end: e,
                history: H::default(),
            },
        );
    }
}

/// Merges adjacent spans with equal histories from the span before `start` to the span at
/// `end`.
fn merge_equal<H: PartialEq>(spans: &mut BTreeMap<u64, Span<H>>, start: u64, end: u64) {
    let first = spans.range(..start).next_back().map_or(start, |(&s, _)| s);
    let keys: Vec<u64> = spans.range(first..=end).map(|(&s, _)| s).collect();
    let mut keys = keys.into_iter();
    let Some(mut current) = keys.next() else {
        return;
    };
    for next in keys {
        let (merged_end, mergeable) = {
            let a = &spans[&current];
            let b = &spans[&next];
            (b.end, a.end == next && a.history == b.history)
        };
        if mergeable {
            spans.remove(&next);
            if let Some(span) = spans.get_mut(&current) {
                span.end = merged_end;
            }
        } else {
            current = next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::report::AccessKind;

    fn access(pe: u32, kind: AccessKind, offset: u64, len_bytes: u64) -> Arc<Access> {
        Arc::new(Access {
            site: RaceAccess {
                pe,
                kind,
                target: 1,
                memory: hw::MemKind::Host,
                offset,
                len_bytes,
                thread: None,
            },
            epoch: 1,
            channel: Channel::Remote(1),
            released: None,
            via_nic: false,
            visible_at: AtomicU64::new(0),
        })
    }

    fn record(shadow: &mut Shadow, a: &Arc<Access>) {
        let (offset, len) = (a.site.offset, a.site.len_bytes);
        shadow.update((1, MemKind::Device), offset, len, |_, h| h.record(a));
    }

    #[test]
    fn overlapping_accesses_split_and_equal_neighbours_merge() {
        let mut shadow: Shadow = Shadow::default();
        let big = access(0, AccessKind::Put, 0, 64);
        record(&mut shadow, &big);
        assert_eq!(shadow.span_count(), 1);
        let small = access(1, AccessKind::LocalRead, 8, 8);
        record(&mut shadow, &small);
        assert_eq!(shadow.span_count(), 3);
        let again = access(0, AccessKind::Put, 0, 64);
        record(&mut shadow, &again);
        // PE 1's read still distinguishes [8, 16).
        assert_eq!(shadow.span_count(), 3);
        let cover = access(1, AccessKind::LocalRead, 0, 64);
        record(&mut shadow, &cover);
        assert_eq!(shadow.span_count(), 1);
    }

    #[test]
    fn conflicts_need_two_pes_a_write_and_a_non_atomic() {
        let mut history = History::default();
        history.record(&access(0, AccessKind::Put, 0, 8));
        history.record(&access(0, AccessKind::AtomicUpdate, 0, 8));
        history.record(&access(1, AccessKind::Get, 0, 8));
        let read = access(2, AccessKind::LocalRead, 0, 8);
        // PE 0's last write is the atomic; reads do not conflict with reads.
        assert_eq!(history.conflicts(&read).count(), 1);
        let atomic = access(2, AccessKind::AtomicUpdate, 0, 8);
        // An atomic conflicts with PE 1's plain get, not with PE 0's atomic.
        let kinds: Vec<AccessKind> = history.conflicts(&atomic).map(|a| a.site.kind).collect();
        assert_eq!(kinds, [AccessKind::Get]);
        let own = access(0, AccessKind::LocalWrite, 0, 8);
        assert_eq!(history.conflicts(&own).count(), 1, "only PE 1's get");
    }

    #[test]
    fn visit_sees_a_span_that_starts_before_the_range() {
        let mut shadow: Shadow = Shadow::default();
        record(&mut shadow, &access(0, AccessKind::Put, 0, 64));
        let mut seen = 0;
        shadow.visit((1, MemKind::Device), 32, 8, |h| seen += h.writes().len());
        assert_eq!(seen, 1);
        shadow.visit((1, MemKind::Device), 64, 8, |h| seen += h.writes().len());
        assert_eq!(seen, 1);
    }
}
