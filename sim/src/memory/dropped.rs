//! The byte ranges of a segment that writes without their bytes covered
//! ([`crate::SimBuilder::drop_payloads_from`]): what no read may see.

use std::collections::BTreeMap;

/// Disjoint, non-adjacent ranges, by start: `start -> end`.
#[derive(Debug, Default)]
pub(super) struct Dropped {
    ranges: BTreeMap<u64, u64>,
}

impl Dropped {
    pub(super) fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// The first dropped range that shares a byte with `[offset, offset + len)`.
    pub(super) fn overlapping(&self, offset: u64, len: u64) -> Option<(u64, u64)> {
        let end = offset + len;
        // The range that starts at or before `offset` may reach into it; else the first one
        // that starts inside it.
        let before = self
            .ranges
            .range(..=offset)
            .next_back()
            .filter(|&(_, &e)| e > offset);
        let inside = || self.ranges.range(offset..end).next();
        before.or_else(inside).map(|(&s, &e)| (s, e))
    }

    /// Marks `[offset, offset + len)` dropped, merged with the ranges it touches.
    pub(super) fn add(&mut self, offset: u64, len: u64) {
        let (mut start, mut end) = (offset, offset + len);
        if let Some((&s, &e)) = self.ranges.range(..=start).next_back()
            && e >= start
        {
            start = s;
            end = end.max(e);
        }
        let touched: Vec<u64> = self.ranges.range(start..=end).map(|(&s, _)| s).collect();
        for s in touched {
            let e = self.ranges.remove(&s).expect("listed");
            end = end.max(e);
        }
        self.ranges.insert(start, end);
    }

    /// Marks `[offset, offset + len)` kept again (its bytes were written).
    pub(super) fn remove(&mut self, offset: u64, len: u64) {
        let end = offset + len;
        let mut cut = Vec::new();
        if let Some((&s, &e)) = self.ranges.range(..offset).next_back()
            && e > offset
        {
            cut.push((s, e));
        }
        cut.extend(self.ranges.range(offset..end).map(|(&s, &e)| (s, e)));
        for (s, e) in cut {
            self.ranges.remove(&s);
            if s < offset {
                self.ranges.insert(s, offset);
            }
            if e > end {
                self.ranges.insert(end, e);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Dropped;

    fn ranges(d: &Dropped) -> Vec<(u64, u64)> {
        d.ranges.iter().map(|(&s, &e)| (s, e)).collect()
    }

    #[test]
    fn ranges_merge_when_they_touch_and_split_when_rewritten() {
        let mut d = Dropped::default();
        d.add(100, 50);
        d.add(200, 50);
        assert_eq!(ranges(&d), [(100, 150), (200, 250)]);
        d.add(150, 50);
        assert_eq!(ranges(&d), [(100, 250)]);
        d.remove(120, 10);
        assert_eq!(ranges(&d), [(100, 120), (130, 250)]);
        d.remove(0, 125);
        assert_eq!(ranges(&d), [(130, 250)]);
        d.remove(240, 100);
        assert_eq!(ranges(&d), [(130, 240)]);
        d.add(0, 1000);
        assert_eq!(ranges(&d), [(0, 1000)]);
        d.remove(0, 1000);
        assert!(d.is_empty());
    }

    #[test]
    fn overlap_is_found_from_either_side_and_not_at_the_edges() {
        let mut d = Dropped::default();
        d.add(100, 50);
        assert_eq!(d.overlapping(90, 20), Some((100, 150)));
        assert_eq!(d.overlapping(140, 20), Some((100, 150)));
        assert_eq!(d.overlapping(120, 1), Some((100, 150)));
        assert_eq!(d.overlapping(0, 100), None);
        assert_eq!(d.overlapping(150, 8), None);
    }
}
