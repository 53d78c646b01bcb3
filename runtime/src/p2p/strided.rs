//! Strided RMA: `iput`/`iget` move one element every stride, `ibput`/`ibget` (OpenSHMEM 1.6)
//! a block of elements every stride.
//!
//! All four share one walk: a [`Shape`] is checked against both sides once (strides of at
//! least 1, every block inside its side), the remote side's whole
//! span passes the heap check once, and then each block is one put or get through the checked
//! paths of `rma.rs`. A shape whose blocks touch end to end on both sides is moved as one
//! block.

use std::ops::Range;

use hw::{Backend, Copier, RemoteRange};

use crate::ctx::Ctx;
use crate::error::ShmemError;
use crate::memory::sym::{Element, Sym, as_bytes, as_bytes_mut};

/// Which elements a strided operation moves: `nblocks` blocks of `block_len` elements, block
/// `i` at element `i * dst_stride` of the destination and `i * src_stride` of the source.
#[derive(Clone, Copy, Debug)]
struct Shape {
    op: &'static str,
    dst_stride: usize,
    src_stride: usize,
    block_len: usize,
    nblocks: usize,
}

impl Shape {
    /// Checks the shape against a destination of `dst_len` and a source of `src_len`
    /// elements.
    fn check(&self, dst_len: usize, src_len: usize) -> Result<(), ShmemError> {
        self.check_side("destination", self.dst_stride, dst_len)?;
        self.check_side("source", self.src_stride, src_len)
    }

    fn check_side(&self, side: &'static str, stride: usize, len: usize) -> Result<(), ShmemError> {
        // Why only 0 is refused: OpenSHMEM asks only that strides be at least 1 (1.5 section
        // 9.6, shmem_iput; 1.6, shmem_ibput), so blocks may overlap: on the source that reads
        // elements twice, on the destination later blocks may land over earlier ones in any
        // order. Why only with two blocks or more of some elements: otherwise the stride is
        // never used.
        if self.nblocks > 1 && self.block_len > 0 && stride == 0 {
            return Err(ShmemError::StrideTooShort {
                op: self.op,
                side,
                stride,
                block_len: self.block_len,
            });
        }
        let end = self.span(stride);
        if end > len {
            return Err(ShmemError::StridedOutOfBounds {
                op: self.op,
                side,
                stride,
                block_len: self.block_len,
                nblocks: self.nblocks,
                end,
                len,
            });
        }
        Ok(())
    }

    /// One past the last element touched on a side with `stride` (saturating: a shape that
    /// overflows reaches past any side).
    fn span(&self, stride: usize) -> usize {
        if self.nblocks == 0 || self.block_len == 0 {
            return 0;
        }
        (self.nblocks - 1)
            .checked_mul(stride)
            .and_then(|start| start.checked_add(self.block_len))
            .unwrap_or(usize::MAX)
    }

    /// The blocks as (destination, source) element ranges, merged into one when they touch
    /// end to end on both sides. Call after [`Shape::check`].
    fn blocks(self) -> impl Iterator<Item = (Range<usize>, Range<usize>)> {
        let contiguous = self.dst_stride == self.block_len && self.src_stride == self.block_len;
        let (block_len, nblocks) = if contiguous {
            (self.block_len * self.nblocks, self.nblocks.min(1))
        } else {
            (self.block_len, self.nblocks)
        };
        let nblocks = if block_len == 0 { 0 } else { nblocks };
        (0..nblocks).map(move |i| {
            let (dst, src) = (i * self.dst_stride, i * self.src_stride);
            (dst..dst + block_len, src..src + block_len)
        })
    }
}

/// The part of `range` (which starts at element 0 of `T`s) holding `elements`.
fn sub_range<T>(range: RemoteRange, elements: Range<usize>) -> RemoteRange {
    let size_bytes = std::mem::size_of::<T>() as u64;
    RemoteRange {
        offset: range.offset + elements.start as u64 * size_bytes,
        len: elements.len() as u64 * size_bytes,
        ..range
    }
}

impl<B: Backend> Ctx<B> {
    /// Copies `nelems` elements of `src`, one every `src_stride`, to `dst` on PE `pe`, one
    /// every `dst_stride` (`shmem_iput`): `dst[i * dst_stride] = src[i * src_stride]`.
    /// Strides count elements and are at least 1 (1 is contiguous). Returns once `src` may
    /// be reused.
    ///
    /// # Ordering
    /// As [`Ctx::put`]: each element is a put, unordered with the others and complete at the
    /// next [`Ctx::quiet`].
    ///
    /// # Errors
    /// [`ShmemError::StrideTooShort`] for a stride of 0 (with two elements or more);
    /// [`ShmemError::StridedOutOfBounds`] if an element lies past the end of `dst` or `src`;
    /// as [`Ctx::put`] otherwise.
    pub fn iput<T: Element>(
        &self,
        dst: Sym<T>,
        src: &[T],
        dst_stride: usize,
        src_stride: usize,
        nelems: usize,
        pe: u32,
    ) -> Result<(), ShmemError> {
        let shape = Shape {
            op: "iput",
            dst_stride,
            src_stride,
            block_len: 1,
            nblocks: nelems,
        };
        self.put_strided(shape, dst, src, pe)
    }

    /// Copies `nblocks` blocks of `block_len` elements from `src`, one block every
    /// `src_stride` elements, to `dst` on PE `pe`, one block every `dst_stride` elements
    /// (`shmem_ibput` of OpenSHMEM 1.6). Strides are at least 1; blocks may overlap, and
    /// where destination blocks do, which lands last is unspecified. Returns once `src` may
    /// be reused.
    ///
    /// # Ordering
    /// As [`Ctx::put`]: each block is a put, unordered with the others and complete at the
    /// next [`Ctx::quiet`].
    ///
    /// # Errors
    /// [`ShmemError::StrideTooShort`] for a stride of 0 (with two blocks or
    /// more); [`ShmemError::StridedOutOfBounds`] if a block reaches past the end of `dst` or
    /// `src`; as [`Ctx::put`] otherwise.
    // Why eight arguments: the parameter list of shmem_ibput, in its order.
    #[allow(clippy::too_many_arguments)]
    pub fn ibput<T: Element>(
        &self,
        dst: Sym<T>,
        src: &[T],
        dst_stride: usize,
        src_stride: usize,
        block_len: usize,
        nblocks: usize,
        pe: u32,
    ) -> Result<(), ShmemError> {
        let shape = Shape {
            op: "ibput",
            dst_stride,
            src_stride,
            block_len,
            nblocks,
        };
        self.put_strided(shape, dst, src, pe)
    }

    /// Reads `nelems` elements of `src` on PE `pe`, one every `src_stride`, into `dst`, one
    /// every `dst_stride` (`shmem_iget`): `dst[i * dst_stride] = src[i * src_stride]`.
    /// Elements of `dst` in between are left as they were.
    ///
    /// # Ordering
    /// As [`Ctx::get`]; the elements are read in flight together and all have arrived when it
    /// returns.
    ///
    /// # Errors
    /// [`ShmemError::StrideTooShort`] for a stride of 0 (with two elements or more);
    /// [`ShmemError::StridedOutOfBounds`] if an element lies past the end of `dst` or `src`;
    /// as [`Ctx::get`] otherwise.
    pub fn iget<T: Element>(
        &self,
        dst: &mut [T],
        src: Sym<T>,
        dst_stride: usize,
        src_stride: usize,
        nelems: usize,
        pe: u32,
    ) -> Result<(), ShmemError> {
        let shape = Shape {
            op: "iget",
            dst_stride,
            src_stride,
            block_len: 1,
            nblocks: nelems,
        };
        self.get_strided(shape, dst, src, pe)
    }

    /// Reads `nblocks` blocks of `block_len` elements of `src` on PE `pe`, one block every
    /// `src_stride` elements, into `dst`, one block every `dst_stride` elements
    /// (`shmem_ibget` of OpenSHMEM 1.6).
    ///
    /// # Ordering
    /// As [`Ctx::iget`].
    ///
    /// # Errors
    /// [`ShmemError::StrideTooShort`] for a stride of 0 (with two blocks or
    /// more); [`ShmemError::StridedOutOfBounds`] if a block reaches past the end of `dst` or
    /// `src`; as [`Ctx::get`] otherwise.
    // Why eight arguments: the parameter list of shmem_ibget, in its order.
    #[allow(clippy::too_many_arguments)]
    pub fn ibget<T: Element>(
        &self,
        dst: &mut [T],
        src: Sym<T>,
        dst_stride: usize,
        src_stride: usize,
        block_len: usize,
        nblocks: usize,
        pe: u32,
    ) -> Result<(), ShmemError> {
        let shape = Shape {
            op: "ibget",
            dst_stride,
            src_stride,
            block_len,
            nblocks,
        };
        self.get_strided(shape, dst, src, pe)
    }

    /// Puts the blocks of `shape` from `src` to `dst` on `pe`.
    fn put_strided<T: Element>(
        &self,
        shape: Shape,
        dst: Sym<T>,
        src: &[T],
        pe: u32,
    ) -> Result<(), ShmemError> {
        shape.check(dst.len(), src.len())?;
        let span = dst.slice(..shape.span(shape.dst_stride))?;
        let range = self.store_range(span.access(), pe, shape.op)?;
        for (dst_block, src_block) in shape.blocks() {
            self.put_checked(
                sub_range::<T>(range, dst_block),
                as_bytes(&src[src_block]),
                Copier::Device,
            )?;
        }
        Ok(())
    }

    /// Gets the blocks of `shape` from `src` on `pe` into `dst`: every get is issued before
    /// the first is waited for, so they are in flight together.
    fn get_strided<T: Element>(
        &self,
        shape: Shape,
        dst: &mut [T],
        src: Sym<T>,
        pe: u32,
    ) -> Result<(), ShmemError> {
        shape.check(dst.len(), src.len())?;
        let span = src.slice(..shape.span(shape.src_stride))?;
        let range = self.read_range(span.access(), pe)?;
        let issued = shape
            .blocks()
            .map(|(dst_block, src_block)| {
                Ok((self.get_issue(sub_range::<T>(range, src_block))?, dst_block))
            })
            .collect::<Result<Vec<_>, ShmemError>>()?;
        let deadline = self.deadline();
        for (ticket, dst_block) in issued {
            self.get_finish(ticket, as_bytes_mut(&mut dst[dst_block]), deadline)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(dst_stride: usize, src_stride: usize, block_len: usize, nblocks: usize) -> Shape {
        Shape {
            op: "ibput",
            dst_stride,
            src_stride,
            block_len,
            nblocks,
        }
    }

    #[test]
    fn blocks_walk_both_strides() {
        let blocks: Vec<_> = shape(4, 2, 2, 3).blocks().collect();
        assert_eq!(blocks, [(0..2, 0..2), (4..6, 2..4), (8..10, 4..6)]);
    }

    #[test]
    fn touching_blocks_merge_into_one() {
        let blocks: Vec<_> = shape(3, 3, 3, 4).blocks().collect();
        assert_eq!(blocks, [(0..12, 0..12)]);
        assert_eq!(shape(1, 1, 0, 4).blocks().count(), 0);
        assert_eq!(shape(1, 1, 1, 0).blocks().count(), 0);
    }

    #[test]
    fn spans_reach_the_last_block_and_saturate() {
        assert_eq!(shape(4, 2, 2, 3).span(4), 10);
        assert_eq!(shape(4, 2, 2, 0).span(4), 0);
        assert_eq!(shape(usize::MAX, 1, 2, 3).span(usize::MAX), usize::MAX);
    }

    #[test]
    fn checks_name_the_side_and_the_fix() {
        let err = shape(0, 2, 2, 3).check(100, 100).unwrap_err();
        assert!(
            matches!(
                err,
                ShmemError::StrideTooShort {
                    side: "destination",
                    stride: 0,
                    block_len: 2,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("at least 1"), "{err}");
        // Overlapping blocks are allowed: the text asks only for strides of at least 1.
        assert!(shape(1, 1, 2, 3).check(100, 100).is_ok());
        let err = shape(4, 2, 2, 3).check(10, 5).unwrap_err();
        assert!(
            matches!(
                err,
                ShmemError::StridedOutOfBounds {
                    side: "source",
                    end: 6,
                    len: 5,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("element 5 of the source"), "{err}");
        // A single block needs no stride.
        shape(0, 0, 2, 1).check(2, 2).expect("one block");
    }
}
