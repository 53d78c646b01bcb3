//! The checks each member makes of its own arguments before the agreement: they give the same
//! verdict on every member that passes the same arguments, and the agreement spreads any
//! refusal to the rest.

use hw::Backend;

use crate::error::ShmemError;
use crate::memory::allocator::Span;
use crate::memory::sym::{Element, Sym};
use crate::shmem::Shmem;

impl<B: Backend> Shmem<B> {
    /// The heap range `sym` names, checked.
    ///
    /// # Errors
    /// An address error ([`ShmemError::NotInHeap`], `OutsideAllocation`, `Misaligned`,
    /// `FreedAllocation`).
    pub(crate) fn span_of<T: Element>(&self, sym: Sym<T>) -> Result<Span, ShmemError> {
        self.heaps.borrow().check(sym.access())
    }
}

/// Checks that `buffer` (`len` elements) holds the `needed` elements the call moves.
///
/// # Errors
/// [`ShmemError::CollectiveBufferTooSmall`] if not.
pub(crate) fn long_enough(
    op: &'static str,
    buffer: &'static str,
    len: usize,
    needed: u64,
) -> Result<(), ShmemError> {
    if len as u64 >= needed {
        Ok(())
    } else {
        Err(ShmemError::CollectiveBufferTooSmall {
            op,
            buffer,
            len,
            needed,
        })
    }
}

/// Whether `dest` and `source` may share memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Overlap {
    Forbidden,
    /// Only as the very same array (an in-place reduction or scan).
    InPlace,
}

/// Checks that `dest` and `source` do not overlap, except as `allowed` says.
///
/// # Errors
/// [`ShmemError::CollectiveOverlap`] if they do.
pub(crate) fn separate(
    op: &'static str,
    dest: Span,
    source: Span,
    allowed: Overlap,
) -> Result<(), ShmemError> {
    let overlap = dest.offset < source.offset + source.len_bytes
        && source.offset < dest.offset + dest.len_bytes;
    let in_place = allowed == Overlap::InPlace && dest.offset == source.offset;
    if !overlap || in_place {
        Ok(())
    } else {
        Err(ShmemError::CollectiveOverlap {
            op,
            allowed: match allowed {
                Overlap::Forbidden => "",
                Overlap::InPlace => " (or the very same array, for an in-place call)",
            },
        })
    }
}

/// The first `len_bytes` of `span`.
pub(crate) fn prefix(span: Span, len_bytes: u64) -> Span {
    debug_assert!(len_bytes <= span.len_bytes);
    Span {
        offset: span.offset,
        len_bytes,
    }
}
