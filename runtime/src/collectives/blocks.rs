//! How a buffer splits into one block per team member: whole contributions (collect,
//! fcollect), or balanced pieces of one vector (a broadcast's scatter, a reduction's
//! reduce-scatter, a scan's chunks).

use std::ops::Range;

use crate::memory::allocator::Span;

/// Consecutive blocks of a buffer, in elements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Blocks {
    /// Where each block starts, and where the last ends: one more entry than blocks.
    bounds: Vec<u64>,
    elem_bytes: u64,
}

impl Blocks {
    /// Blocks of `lens[i]` elements, one after another.
    pub(crate) fn from_lens(lens: &[u64], elem_bytes: u64) -> Blocks {
        let bounds = std::iter::once(0)
            .chain(lens.iter().scan(0, |end, len| {
                *end += len;
                Some(*end)
            }))
            .collect();
        Blocks { bounds, elem_bytes }
    }

    /// `count` blocks that share `nelems` elements as evenly as they can: block `i` starts at
    /// `i * nelems / count`.
    pub(crate) fn balanced(nelems: u64, count: u32, elem_bytes: u64) -> Blocks {
        let count = u64::from(count);
        let bounds = (0..=count)
            .map(|i| (u128::from(i) * u128::from(nelems) / u128::from(count.max(1))) as u64)
            .collect();
        Blocks { bounds, elem_bytes }
    }

    /// The number of blocks.
    pub(crate) fn count(&self) -> u32 {
        (self.bounds.len() - 1) as u32
    }

    /// The elements of all blocks.
    pub(crate) fn total(&self) -> u64 {
        self.bounds[self.bounds.len() - 1]
    }

    /// The elements of block `i`, as indices of the whole.
    pub(crate) fn elements(&self, i: u32) -> Range<usize> {
        self.run(i, 1)
    }

    /// The elements of blocks `first..first + count`, which must not wrap.
    pub(crate) fn run(&self, first: u32, count: u32) -> Range<usize> {
        let (start, end) = (first as usize, (first + count) as usize);
        self.bounds[start] as usize..self.bounds[end] as usize
    }

    /// The bytes of block `i`, as offsets into the whole.
    pub(crate) fn bytes(&self, i: u32) -> Range<usize> {
        let elements = self.elements(i);
        let elem_bytes = self.elem_bytes as usize;
        elements.start * elem_bytes..elements.end * elem_bytes
    }

    /// Block `i` of the buffer `buffer`.
    pub(crate) fn span(&self, buffer: Span, i: u32) -> Span {
        self.run_span(buffer, i, 1)
    }

    /// Blocks `first..first + count` of `buffer`, which must not wrap.
    pub(crate) fn run_span(&self, buffer: Span, first: u32, count: u32) -> Span {
        let elements = self.run(first, count);
        Span {
            offset: buffer.offset + elements.start as u64 * self.elem_bytes,
            len_bytes: (elements.end - elements.start) as u64 * self.elem_bytes,
        }
    }

    /// Blocks `first, first + 1, ...` (`count` of them, wrapping past the last block to the
    /// first) as at most two runs `(first, count)` that do not wrap.
    pub(crate) fn wrapping_runs(&self, first: u32, count: u32) -> Vec<(u32, u32)> {
        let head = count.min(self.count() - first);
        let mut runs = vec![(first, head)];
        if count > head {
            runs.push((0, count - head));
        }
        runs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn balanced_blocks_cover_the_vector_and_differ_by_at_most_one() {
        let blocks = Blocks::balanced(10, 4, 8);
        let lens: Vec<usize> = (0..4).map(|i| blocks.elements(i).len()).collect();
        assert_eq!(lens, [2, 3, 2, 3]);
        assert_eq!(blocks.total(), 10);
        let few = Blocks::balanced(2, 4, 8);
        assert_eq!(few.total(), 2);
        assert_eq!((0..4).map(|i| few.elements(i).len()).sum::<usize>(), 2);
    }

    #[test]
    fn spans_are_in_bytes_and_runs_wrap_in_two() {
        let blocks = Blocks::from_lens(&[1, 0, 3, 2], 4);
        let buffer = Span {
            offset: 100,
            len_bytes: 24,
        };
        assert_eq!(
            blocks.span(buffer, 2),
            Span {
                offset: 104,
                len_bytes: 12
            }
        );
        assert_eq!(blocks.run_span(buffer, 0, 4), buffer);
        assert_eq!(blocks.wrapping_runs(3, 3), [(3, 1), (0, 2)]);
        assert_eq!(blocks.wrapping_runs(1, 3), [(1, 3)]);
    }
}
