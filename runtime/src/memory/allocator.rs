//! The symmetric heap allocator: bookkeeping of the addresses of one heap's window of the
//! symmetric address space (`space.rs`), `[base, base + size)`.
//!
//! The allocator is deterministic (first fit in offset order, no randomness, no hashing), so
//! every PE that makes the same sequence of collective calls gets the same offsets: that is
//! what makes the heap symmetric without exchanging addresses.
//!
//! It also remembers every live allocation, so that any address can be resolved to the
//! allocation it lies in and an access can be checked before it reaches the hardware.

#[cfg(test)]
mod tests;

use std::cell::Cell;
use std::collections::BTreeMap;

use hw::MemKind;

use crate::error::ShmemError;
use crate::memory::space;

/// The smallest alignment and size granule of an allocation, in bytes: every atomic word and
/// every element type up to `u64` is naturally aligned without further thought.
pub(crate) const MIN_ALIGN_BYTES: u64 = 8;

/// The identity of one allocation: its serial number is unique over the life of a heap, so a
/// handle to a freed (or reallocated) allocation is recognised even after its bytes were
/// handed out again.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) struct AllocId {
    serial: u64,
    /// Where the allocation starts.
    offset: u64,
}

/// A live allocation.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Allocation {
    /// Where it starts.
    pub(crate) offset: u64,
    /// The length the caller asked for; accesses must stay within it.
    pub(crate) len_bytes: u64,
    /// The length taken from the free list (`len_bytes` rounded up to the granule).
    pub(crate) reserved_bytes: u64,
    /// Its identity.
    pub(crate) id: AllocId,
    /// Whether the runtime owns it (barrier counters): users' addresses never resolve to it.
    pub(crate) internal: bool,
}

/// A checked byte range of a heap, in symmetric addresses (`pe::remote` and `pe::local` turn
/// it into a range of the heap's segment).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Span {
    /// Where it starts.
    pub(crate) offset: u64,
    /// Its length.
    pub(crate) len_bytes: u64,
}

/// What an access claims about itself; [`Heap::check`] verifies it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Access {
    /// Where it starts.
    pub(crate) offset: u64,
    /// Its length.
    pub(crate) len_bytes: u64,
    /// The alignment its element type needs (1 for byte operations).
    pub(crate) align: u64,
    /// The allocation the handle came from, if known (a raw address has none).
    pub(crate) owner: Option<AllocId>,
}

/// The allocator of one of a PE's symmetric heaps. Offsets here are symmetric addresses.
#[derive(Debug)]
pub(crate) struct Heap {
    kind: MemKind,
    size_bytes: u64,
    /// The bytes from the start that have memory behind them on every PE (`heaps/backing.rs`).
    backed_bytes: u64,
    /// Free blocks, offset to length; maximal (no two adjacent), so first fit is exact.
    free: BTreeMap<u64, u64>,
    /// Live allocations by offset.
    live: BTreeMap<u64, Allocation>,
    /// The user allocation the last raw address resolved to. Why: a program that works on one
    /// object (the C API resolves every pointer) pays for the tree walk once, not per call.
    /// Cleared whenever `live` changes, so it never names a freed allocation.
    last_resolved: Cell<Option<Allocation>>,
    next_id: u64,
}

impl Heap {
    /// A heap of `kind` of `size_bytes` (at most [`space::WINDOW_BYTES`]), all free.
    pub(crate) fn new(kind: MemKind, size_bytes: u64) -> Heap {
        debug_assert!(size_bytes <= space::WINDOW_BYTES, "checked by Heaps::new");
        let free = if size_bytes == 0 {
            BTreeMap::new()
        } else {
            BTreeMap::from([(space::base_of(kind), size_bytes)])
        };
        Heap {
            kind,
            size_bytes,
            backed_bytes: 0,
            free,
            live: BTreeMap::new(),
            last_resolved: Cell::new(None),
            next_id: 0,
        }
    }

    /// The heap's kind.
    pub(crate) fn kind(&self) -> MemKind {
        self.kind
    }

    /// The heap's size in bytes.
    pub(crate) fn size_bytes(&self) -> u64 {
        self.size_bytes
    }

    /// The bytes from the heap's start that have memory behind them on every PE.
    pub(crate) fn backed_bytes(&self) -> u64 {
        self.backed_bytes
    }

    /// Records that every PE's first `bytes` of the heap have memory behind them.
    pub(crate) fn set_backed_bytes(&mut self, bytes: u64) {
        self.backed_bytes = bytes;
    }

    /// The bytes from the heap's start to the end of its highest live allocation: what must
    /// have memory behind it.
    pub(crate) fn high_water_bytes(&self) -> u64 {
        self.live
            .last_key_value()
            .map_or(0, |(offset, allocation)| {
                offset + allocation.reserved_bytes - space::base_of(self.kind)
            })
    }

    /// The free bytes in total (they may be fragmented).
    pub(crate) fn free_bytes(&self) -> u64 {
        self.free.values().sum()
    }

    /// Allocates `len_bytes` at the lowest offset aligned to `align` (raised to
    /// [`MIN_ALIGN_BYTES`]) where it fits.
    ///
    /// # Errors
    /// [`ShmemError::InvalidAlignment`] if `align` is not a power of two;
    /// [`ShmemError::HeapExhausted`] if no free block holds it.
    pub(crate) fn alloc(
        &mut self,
        len_bytes: u64,
        align: u64,
        internal: bool,
    ) -> Result<Allocation, ShmemError> {
        if !align.is_power_of_two() {
            return Err(ShmemError::InvalidAlignment { align });
        }
        let align = align.max(MIN_ALIGN_BYTES);
        let exhausted = || ShmemError::HeapExhausted {
            kind: self.kind,
            requested_bytes: len_bytes,
            free_bytes: self.free_bytes(),
            heap_bytes: self.size_bytes,
        };
        // Why a granule even for zero bytes: every allocation then has a distinct offset, so
        // an address resolves to exactly one allocation.
        let reserved_bytes = round_up(len_bytes.max(1), MIN_ALIGN_BYTES).ok_or_else(exhausted)?;
        let (block_offset, block_len, start) = self
            .free
            .iter()
            .find_map(|(&block_offset, &block_len)| {
                let start = round_up(block_offset, align)?;
                let end = start.checked_add(reserved_bytes)?;
                (end <= block_offset + block_len).then_some((block_offset, block_len, start))
            })
            .ok_or_else(exhausted)?;
        self.take(
            block_offset,
            block_offset + block_len,
            start,
            reserved_bytes,
        );
        Ok(self.enter(start, len_bytes, reserved_bytes, internal))
    }

    /// Takes `reserved_bytes` at `start` out of the free block `[block_offset, block_end)`
    /// that holds them, leaving what is free on either side.
    fn take(&mut self, block_offset: u64, block_end: u64, start: u64, reserved_bytes: u64) {
        self.free.remove(&block_offset);
        if start > block_offset {
            self.free.insert(block_offset, start - block_offset);
        }
        let end = start + reserved_bytes;
        if block_end > end {
            self.free.insert(end, block_end - end);
        }
    }

    /// Allocates exactly `[start, start + len_bytes)` (`len_bytes` a multiple of
    /// [`MIN_ALIGN_BYTES`]), for a range the caller must have at a given place: a buffer taken
    /// into the heap where its backing ends (`memory/buffers.rs`).
    ///
    /// # Errors
    /// [`ShmemError::HeapExhausted`] if some of the range is taken or past the heap's end.
    pub(crate) fn alloc_at(
        &mut self,
        start: u64,
        len_bytes: u64,
    ) -> Result<Allocation, ShmemError> {
        let end = start.checked_add(len_bytes);
        let block = self
            .free
            .range(..=start)
            .next_back()
            .map(|(&offset, &len)| (offset, offset + len))
            .filter(|&(_, block_end)| end.is_some_and(|end| end <= block_end));
        let Some((block_offset, block_end)) = block else {
            return Err(ShmemError::HeapExhausted {
                kind: self.kind,
                requested_bytes: len_bytes,
                free_bytes: self.free_bytes(),
                heap_bytes: self.size_bytes,
            });
        };
        self.take(block_offset, block_end, start, len_bytes);
        Ok(self.enter(start, len_bytes, len_bytes, false))
    }

    /// Keeps the user allocation at `offset` from ever being handed out again, without its
    /// memory: it becomes the runtime's, so no user address resolves to it any more.
    ///
    /// # Errors
    /// As [`Heap::free`].
    pub(crate) fn retire(
        &mut self,
        offset: u64,
        owner: Option<AllocId>,
    ) -> Result<Allocation, ShmemError> {
        let allocation = self.start_of(offset, owner)?;
        let retired = Allocation {
            internal: true,
            ..allocation
        };
        self.live.insert(offset, retired);
        self.last_resolved.set(None);
        Ok(allocation)
    }

    /// Records a live allocation with a fresh identity.
    fn enter(
        &mut self,
        offset: u64,
        len_bytes: u64,
        reserved_bytes: u64,
        internal: bool,
    ) -> Allocation {
        let allocation = Allocation {
            offset,
            len_bytes,
            reserved_bytes,
            id: AllocId {
                serial: self.next_id,
                offset,
            },
            internal,
        };
        self.next_id += 1;
        self.live.insert(offset, allocation);
        self.last_resolved.set(None);
        allocation
    }

    /// Gives the user allocation that starts at `offset` (from a handle of `owner`, if known)
    /// the length `len_bytes`: in place when it shrinks or the free block right after it has
    /// room, else at the lowest offset aligned to `align` where it fits, with the old block
    /// still taken so the two never overlap. Either way the result has a new identity, so
    /// handles to the old allocation fail.
    ///
    /// Returns the new allocation and, if it moved, the old one: still live, for the caller
    /// to copy from and then [`Heap::free`].
    ///
    /// # Errors
    /// As [`Heap::free`] for the old allocation; as [`Heap::alloc`] for the new one, and then
    /// the old allocation is unchanged.
    pub(crate) fn realloc(
        &mut self,
        offset: u64,
        owner: Option<AllocId>,
        len_bytes: u64,
        align: u64,
    ) -> Result<(Allocation, Option<Allocation>), ShmemError> {
        let old = self.start_of(offset, owner)?;
        let reserved_bytes = round_up(len_bytes.max(1), MIN_ALIGN_BYTES);
        let old_end = old.offset + old.reserved_bytes;
        let aligned = old.offset.is_multiple_of(align.max(MIN_ALIGN_BYTES));
        let fits_in_place = |reserved: u64| {
            let next_has_room = || {
                self.free
                    .get(&old_end)
                    .is_some_and(|&after| reserved - old.reserved_bytes <= after)
            };
            aligned && (reserved <= old.reserved_bytes || next_has_room())
        };
        let in_place = reserved_bytes.filter(|&reserved| fits_in_place(reserved));
        let Some(reserved_bytes) = in_place else {
            let moved = self.alloc(len_bytes, align, false)?;
            return Ok((moved, Some(old)));
        };
        self.live.remove(&old.offset);
        self.last_resolved.set(None);
        if reserved_bytes > old.reserved_bytes {
            let after = self.free.remove(&old_end).unwrap_or(0);
            let taken = reserved_bytes - old.reserved_bytes;
            if after > taken {
                self.free.insert(old_end + taken, after - taken);
            }
        } else if reserved_bytes < old.reserved_bytes {
            self.release(
                old.offset + reserved_bytes,
                old.reserved_bytes - reserved_bytes,
            );
        }
        Ok((
            self.enter(old.offset, len_bytes, reserved_bytes, false),
            None,
        ))
    }

    /// Frees the user allocation that starts at `offset` and returns it; `owner` is the
    /// allocation the handle came from, if known.
    ///
    /// # Errors
    /// As [`Heap::check`]; [`ShmemError::NotAllocationStart`] if `offset` is inside an
    /// allocation but not at its start.
    pub(crate) fn free(
        &mut self,
        offset: u64,
        owner: Option<AllocId>,
    ) -> Result<Allocation, ShmemError> {
        let allocation = self.start_of(offset, owner)?;
        self.live.remove(&offset);
        self.last_resolved.set(None);
        self.release(allocation.offset, allocation.reserved_bytes);
        Ok(allocation)
    }

    /// The user allocation that starts at `offset`, for free and realloc.
    ///
    /// # Errors
    /// As [`Heap::free`].
    fn start_of(&self, offset: u64, owner: Option<AllocId>) -> Result<Allocation, ShmemError> {
        let allocation = self.resolve(offset, owner)?;
        if allocation.offset != offset {
            return Err(ShmemError::NotAllocationStart {
                offset,
                alloc_offset: allocation.offset,
            });
        }
        Ok(allocation)
    }

    /// Returns `[offset, offset + len_bytes)` to the free list, merged with its neighbours.
    fn release(&mut self, offset: u64, len_bytes: u64) {
        let mut start = offset;
        let mut end = offset + len_bytes;
        let before = self.free.range(..offset).next_back().map(|(&o, &l)| (o, l));
        if let Some((before_offset, before_len)) = before
            && before_offset + before_len == start
        {
            self.free.remove(&before_offset);
            start = before_offset;
        }
        if let Some(after_len) = self.free.remove(&end) {
            end += after_len;
        }
        self.free.insert(start, end - start);
    }

    /// Checks an access against the live user allocations.
    ///
    /// # Errors
    /// [`ShmemError::Misaligned`] if the offset is not a multiple of `align`;
    /// [`ShmemError::FreedAllocation`] if the owner was freed;
    /// [`ShmemError::NotInHeap`] if the offset is in no live allocation;
    /// [`ShmemError::OutsideAllocation`] if the access runs past its allocation's end.
    pub(crate) fn check(&self, access: Access) -> Result<Span, ShmemError> {
        let Access {
            offset,
            len_bytes,
            align,
            owner,
        } = access;
        if !offset.is_multiple_of(align) {
            return Err(ShmemError::Misaligned { offset, align });
        }
        let allocation = self.resolve(offset, owner)?;
        let end = offset.checked_add(len_bytes);
        let inside = offset >= allocation.offset
            && end.is_some_and(|end| end <= allocation.offset + allocation.len_bytes);
        if !inside {
            return Err(ShmemError::OutsideAllocation {
                offset,
                len_bytes,
                alloc_offset: allocation.offset,
                alloc_len_bytes: allocation.len_bytes,
            });
        }
        Ok(Span { offset, len_bytes })
    }

    /// The live user allocation of an access at `offset`: `owner` if the handle knows it
    /// (so an empty view at its very end still belongs to it), else the allocation `offset`
    /// lies in, its padding included.
    fn resolve(&self, offset: u64, owner: Option<AllocId>) -> Result<Allocation, ShmemError> {
        match owner {
            Some(id) => self
                .live
                .get(&id.offset)
                .filter(|a| a.id == id)
                .copied()
                .ok_or(ShmemError::FreedAllocation { offset }),
            None => {
                let holds = |a: &Allocation| {
                    (a.offset..a.offset + a.reserved_bytes).contains(&offset) && !a.internal
                };
                if let Some(hit) = self.last_resolved.get().filter(holds) {
                    return Ok(hit);
                }
                let found = self
                    .live
                    .range(..=offset)
                    .next_back()
                    .map(|(_, a)| *a)
                    .filter(holds)
                    .ok_or(ShmemError::NotInHeap { offset })?;
                self.last_resolved.set(Some(found));
                Ok(found)
            }
        }
    }
}

/// `value` rounded up to a multiple of the power of two `align`; `None` on overflow.
fn round_up(value: u64, align: u64) -> Option<u64> {
    Some(value.checked_add(align - 1)? & !(align - 1))
}
