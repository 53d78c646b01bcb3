//! Typed handles to symmetric memory, and the element types operations move.

#[cfg(test)]
mod tests;

use std::fmt;
use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};

use hw::AmoWidth;

use crate::error::ShmemError;
use crate::memory::allocator::{Access, AllocId};

/// A type that RMA operations can move: plain old data, copied as its bytes.
pub trait Element: bytemuck::Pod {}

impl<T: bytemuck::Pod> Element for T {}

/// An integer type that atomics and point-to-point waits work on.
pub trait AtomicElement: Element {
    /// The width of the atomic word.
    const WIDTH: AmoWidth;
    /// Whether comparisons treat the word as signed.
    const SIGNED: bool;

    /// The value as the little-endian bit pattern of its width, zero-extended.
    fn to_bits(self) -> u64;

    /// The value of the low `WIDTH` bits of `bits`.
    fn from_bits(bits: u64) -> Self;
}

/// Implements [`AtomicElement`] for integer `$t`, whose unsigned twin of the same width is `$u`.
macro_rules! atomic_element {
    ($t:ty, $u:ty, $width:expr, $signed:expr) => {
        impl AtomicElement for $t {
            const WIDTH: AmoWidth = $width;
            const SIGNED: bool = $signed;

            fn to_bits(self) -> u64 {
                // Why the unsigned twin: it zero-extends, as the contract's operands are.
                u64::from(self as $u)
            }

            fn from_bits(bits: u64) -> Self {
                // Why truncating casts: the word is exactly WIDTH bits wide.
                bits as $u as $t
            }
        }
    };
}

atomic_element!(i32, u32, AmoWidth::W32, true);
atomic_element!(u32, u32, AmoWidth::W32, false);
atomic_element!(i64, u64, AmoWidth::W64, true);
atomic_element!(u64, u64, AmoWidth::W64, false);
#[cfg(target_pointer_width = "64")]
atomic_element!(isize, u64, AmoWidth::W64, true);
#[cfg(target_pointer_width = "64")]
atomic_element!(usize, u64, AmoWidth::W64, false);

/// A raw symmetric address, for the `*_bytes` operations: an offset into the symmetric
/// address space, where each heap has a window of its own (the device heap's starts at 0), so
/// the address says which heap it is in.
///
/// The same address names the same object on every PE.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct SymAddr(pub u64);

impl SymAddr {
    /// The memory this address lies in (a heap or the static data) and its offset there.
    pub fn locate(self) -> (hw::MemKind, u64) {
        crate::memory::space::locate(self.0)
    }

    /// The address `bytes` further on.
    pub fn byte_add(self, bytes: u64) -> SymAddr {
        SymAddr(self.0.wrapping_add(bytes))
    }

    /// A view of `len` elements of `T` starting here. The view is not checked now: each
    /// operation that uses it checks that it lies inside one live allocation and is aligned
    /// for `T` ([`ShmemError::NotInHeap`], [`ShmemError::OutsideAllocation`],
    /// [`ShmemError::Misaligned`]).
    pub fn cast<T: Element>(self, len: usize) -> Sym<T> {
        Sym::new(self.0, len, None)
    }
}

/// A symmetric array of `T`: the same elements exist on every PE, at the same address of the
/// same heap on each PE (its address says which heap, see [`SymAddr`]). Returned by `malloc`;
/// views of part of it come from [`Sym::slice`] and [`Sym::at`].
///
/// A `Sym` is a plain handle (copyable, no lifetime): operations check it against the heap
/// at each use, so a handle to freed memory yields [`ShmemError::FreedAllocation`] instead
/// of touching memory that now belongs to someone else.
pub struct Sym<T> {
    offset_bytes: u64,
    len: usize,
    /// The allocation the handle came from; `None` for a view made from a raw address.
    owner: Option<AllocId>,
    // Why fn() -> T: the handle holds no T, so it is Send, Sync and covariant whatever T is.
    element: PhantomData<fn() -> T>,
}

impl<T> Clone for Sym<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Sym<T> {}

impl<T> PartialEq for Sym<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.offset_bytes, self.len, self.owner) == (other.offset_bytes, other.len, other.owner)
    }
}

impl<T> Eq for Sym<T> {}

impl<T> fmt::Debug for Sym<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Sym<{}>[{:#x}; {}]",
            std::any::type_name::<T>(),
            self.offset_bytes,
            self.len
        )
    }
}

impl<T: Element> Sym<T> {
    pub(crate) fn new(offset_bytes: u64, len: usize, owner: Option<AllocId>) -> Sym<T> {
        Sym {
            offset_bytes,
            len,
            owner,
            element: PhantomData,
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the view has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The address of the first element.
    pub fn addr(&self) -> SymAddr {
        SymAddr(self.offset_bytes)
    }

    /// The view of elements `range` of this view.
    ///
    /// # Errors
    /// [`ShmemError::OutOfBounds`] if `range` does not lie within `0..self.len()`.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<Sym<T>, ShmemError> {
        let start = match range.start_bound() {
            Bound::Included(&s) => Some(s),
            Bound::Excluded(&s) => s.checked_add(1),
            Bound::Unbounded => Some(0),
        };
        let end = match range.end_bound() {
            Bound::Included(&e) => e.checked_add(1),
            Bound::Excluded(&e) => Some(e),
            Bound::Unbounded => Some(self.len),
        };
        match (start, end) {
            (Some(start), Some(end)) if start <= end && end <= self.len => Ok(Sym::new(
                self.offset_bytes.saturating_add(element_bytes::<T>(start)),
                end - start,
                self.owner,
            )),
            // Why usize::MAX: only an overflowing bound gets here without a value.
            (start, end) => Err(ShmemError::OutOfBounds {
                start: start.unwrap_or(usize::MAX),
                end: end.unwrap_or(usize::MAX),
                len: self.len,
            }),
        }
    }

    /// The one-element view of element `index`.
    ///
    /// # Errors
    /// [`ShmemError::OutOfBounds`] if `index` is not below `self.len()`.
    pub fn at(&self, index: usize) -> Result<Sym<T>, ShmemError> {
        self.slice(index..=index)
    }

    /// The view's length in bytes (saturating: an absurd raw view fails its heap check).
    /// Where the object starts in its heap, in bytes.
    pub(crate) fn offset_bytes(&self) -> u64 {
        self.offset_bytes
    }

    pub(crate) fn len_bytes(&self) -> u64 {
        element_bytes::<T>(self.len)
    }

    /// What an operation on the view claims, for the heap to check.
    pub(crate) fn access(&self) -> Access {
        Access {
            offset: self.offset_bytes,
            len_bytes: self.len_bytes(),
            align: std::mem::align_of::<T>() as u64,
            owner: self.owner,
        }
    }
}

/// The size of `count` elements of `T` in bytes, saturating (a size that overflows cannot
/// fit, and the heap check says so).
pub(crate) fn element_bytes<T>(count: usize) -> u64 {
    (count as u64).saturating_mul(std::mem::size_of::<T>() as u64)
}

/// The bytes of `values`.
pub(crate) fn as_bytes<T: Element>(values: &[T]) -> &[u8] {
    // Why the fallback: the cast to bytes fails only for zero-sized `T`, which has no bytes.
    bytemuck::try_cast_slice(values).unwrap_or(&[])
}

/// The bytes of `values`, writable.
pub(crate) fn as_bytes_mut<T: Element>(values: &mut [T]) -> &mut [u8] {
    // Why the fallback: as in `as_bytes`.
    bytemuck::try_cast_slice_mut(values).unwrap_or(&mut [])
}
