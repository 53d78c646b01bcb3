//! One PE's symmetric heaps (docs/heaps.md): a device heap and a host heap, each with its own
//! allocator ([`Heap`]) and its own segment of the backend, either absent when its size is 0,
//! and the default heap that `malloc` uses. Which heap an address is in follows from the
//! address (`space.rs`).
//!
//! `segments.rs` creates the segments at init and trades their keys; the queries of the
//! public API (default heap, heap of an object, sizes and use) are at the end.

mod backing;
mod segments;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use hw::{Backend, MemKind};

pub(crate) use segments::share_segments;

use crate::config::{
    Config, ConfigError, DEFAULT_HEAP_VAR, format_size, heap_kind_name, heap_size_var,
};
use crate::error::ShmemError;
use crate::memory::allocator::{Access, Heap, MIN_ALIGN_BYTES, Span};
use crate::memory::space;
use crate::memory::sym::{Element, Sym};
use crate::pe::PeState;

/// A PE's heaps.
#[derive(Debug)]
pub(crate) struct Heaps {
    /// The device heap, then the host heap, then the program's static data where the backend
    /// shares it: one allocation that spans it, so accesses are checked like the heaps' and
    /// nothing is ever allocated there (see [`index`]).
    heaps: [Option<Heap>; 3],
    default: MemKind,
    /// The registered buffers (`buffers.rs`) by symmetric address.
    buffers: BTreeMap<u64, Registered>,
}

/// A registered buffer (`buffers.rs`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Registered {
    /// Its length.
    pub(crate) len_bytes: u64,
    /// Whether the backend mapped it where the device heap's backing ended (else the caller
    /// mapped it over an allocation of the default heap).
    pub(crate) by_backend: bool,
}

/// Where the heap of `kind` is in [`Heaps::heaps`].
fn index(kind: MemKind) -> usize {
    match kind {
        MemKind::Device => 0,
        MemKind::Host => 1,
        MemKind::Static => 2,
    }
}

impl Heaps {
    /// The heaps `config` asks for, all free.
    ///
    /// # Errors
    /// [`ShmemError::Config`] naming the variable of a heap larger than its address window;
    /// [`ShmemError::NoSuchHeap`] if the default heap has size 0.
    pub(crate) fn new(config: &Config) -> Result<Heaps, ShmemError> {
        let heap = |kind| {
            let bytes = config.heap_bytes(kind);
            if bytes > space::WINDOW_BYTES {
                return Err(ConfigError::Invalid {
                    name: heap_size_var(kind),
                    value: format_size(bytes),
                    expected: "a heap size of at most 4194304t (a heap's address window)",
                    example: "1g",
                });
            }
            Ok((bytes > 0).then(|| Heap::new(kind, bytes)))
        };
        let heaps = Heaps {
            heaps: [heap(MemKind::Device)?, heap(MemKind::Host)?, None],
            default: config.default_heap,
            buffers: BTreeMap::new(),
        };
        heaps.get(heaps.default, || default_setting(heaps.default))?;
        Ok(heaps)
    }

    /// The kind of the default heap, which exists.
    pub(crate) fn default_kind(&self) -> MemKind {
        self.default
    }

    /// The default heap, to allocate from.
    ///
    /// # Errors
    /// None once [`Heaps::new`] has checked that it exists; as [`Heaps::get`] otherwise.
    pub(crate) fn default_mut(&mut self) -> Result<&mut Heap, ShmemError> {
        let kind = self.default;
        self.get_mut(kind, || default_setting(kind))
    }

    /// The registered buffer at `offset`, if one is registered there.
    pub(crate) fn buffer_at(&self, offset: u64) -> Option<Registered> {
        self.buffers.get(&offset).copied()
    }

    /// Records (`Some`) or forgets (`None`) the registered buffer at `offset`.
    pub(crate) fn set_buffer(&mut self, offset: u64, registered: Option<Registered>) {
        match registered {
            Some(registered) => self.buffers.insert(offset, registered),
            None => self.buffers.remove(&offset),
        };
    }

    /// The heaps that exist, the device heap first.
    pub(crate) fn existing(&self) -> impl Iterator<Item = &Heap> {
        self.heaps.iter().flatten()
    }

    /// The heap of `kind`, if the run has one.
    pub(crate) fn find(&self, kind: MemKind) -> Option<&Heap> {
        self.heaps[index(kind)].as_ref()
    }

    /// The heap of `kind`, if this run has one, to change.
    pub(crate) fn find_mut(&mut self, kind: MemKind) -> Option<&mut Heap> {
        self.heaps[index(kind)].as_mut()
    }

    /// The heap of `kind`, which `wanted_by` (for the error) asks for.
    ///
    /// # Errors
    /// [`ShmemError::NoSuchHeap`] if this run has no heap of `kind`.
    pub(crate) fn get(
        &self,
        kind: MemKind,
        wanted_by: impl FnOnce() -> String,
    ) -> Result<&Heap, ShmemError> {
        self.find(kind).ok_or_else(|| no_such_heap(kind, wanted_by))
    }

    /// As [`Heaps::get`], to change the heap.
    ///
    /// # Errors
    /// As [`Heaps::get`].
    pub(crate) fn get_mut(
        &mut self,
        kind: MemKind,
        wanted_by: impl FnOnce() -> String,
    ) -> Result<&mut Heap, ShmemError> {
        self.heaps[index(kind)]
            .as_mut()
            .ok_or_else(|| no_such_heap(kind, wanted_by))
    }

    /// The heap whose window holds the address `offset`, to free or resize an allocation.
    ///
    /// # Errors
    /// [`ShmemError::NotInHeap`] if that heap does not exist, or `offset` is static data,
    /// which no one allocated.
    pub(crate) fn holding_mut(&mut self, offset: u64) -> Result<&mut Heap, ShmemError> {
        let (kind, _) = space::locate(offset);
        if kind == MemKind::Static {
            return Err(ShmemError::NotInHeap { offset });
        }
        self.heaps[index(kind)]
            .as_mut()
            .ok_or(ShmemError::NotInHeap { offset })
    }

    /// Adds the program's static data, `len_bytes` long, as one allocation that spans it.
    ///
    /// # Errors
    /// [`ShmemError::HeapExhausted`] if it is larger than its address window.
    pub(crate) fn add_static(&mut self, len_bytes: u64) -> Result<(), ShmemError> {
        let mut heap = Heap::new(MemKind::Static, len_bytes);
        heap.alloc(len_bytes, MIN_ALIGN_BYTES, false)?;
        heap.set_backed_bytes(len_bytes);
        self.heaps[index(MemKind::Static)] = Some(heap);
        Ok(())
    }

    /// Checks `access` against the heap its address lies in.
    ///
    /// # Errors
    /// As [`Heap::check`]; [`ShmemError::NotInHeap`] if that heap does not exist.
    pub(crate) fn check(&self, access: Access) -> Result<Span, ShmemError> {
        let (kind, _) = space::locate(access.offset);
        self.find(kind)
            .ok_or(ShmemError::NotInHeap {
                offset: access.offset,
            })?
            .check(access)
    }
}

/// The setting that makes `kind` the default heap, as the user writes it.
pub(crate) fn default_setting(kind: MemKind) -> String {
    format!("{DEFAULT_HEAP_VAR}={}", heap_kind_name(kind))
}

fn no_such_heap(kind: MemKind, wanted_by: impl FnOnce() -> String) -> ShmemError {
    ShmemError::NoSuchHeap {
        kind,
        wanted_by: wanted_by(),
    }
}

impl<B: Backend> PeState<B> {
    /// The kind of heap `malloc`, `calloc` and `align` allocate from
    /// (`SHMEM_SYMMETRIC_HEAP_DEFAULT`).
    pub fn default_heap_kind(&self) -> MemKind {
        self.heaps.borrow().default_kind()
    }

    /// The heap `sym` lies in: the query of docs/heaps.md, which OpenSHMEM programs answer
    /// from a pointer.
    ///
    /// # Errors
    /// An address error if `sym` is not a live symmetric object ([`ShmemError::NotInHeap`],
    /// `OutsideAllocation`, `Misaligned`, `FreedAllocation`).
    pub fn heap_kind_of<T: Element>(&self, sym: Sym<T>) -> Result<MemKind, ShmemError> {
        let span = self.heaps.borrow().check(sym.access())?;
        Ok(space::locate(span.offset).0)
    }

    /// The size of this PE's heap of `kind` in bytes; 0 when the run has no such heap.
    pub fn heap_size_bytes(&self, kind: MemKind) -> u64 {
        self.heaps.borrow().find(kind).map_or(0, Heap::size_bytes)
    }

    /// The bytes of this PE's heap of `kind` that live allocations take, the runtime's own
    /// (team areas) included and each rounded up to 8 bytes; 0 when the run has no such heap.
    pub fn heap_used_bytes(&self, kind: MemKind) -> u64 {
        self.heaps
            .borrow()
            .find(kind)
            .map_or(0, |heap| heap.size_bytes() - heap.free_bytes())
    }
}
