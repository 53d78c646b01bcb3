//! Where this process holds its own part of symmetric memory: the bridge between the
//! symmetric addresses of the API ([`SymAddr`]) and the plain pointers of a program that
//! loads and stores its symmetric objects itself (the C API: `shmem_malloc` returns a
//! pointer, and every call takes one).
//!
//! Why a table made at init: the C API translates a pointer on every call, so the lookup is
//! a scan of at most one entry per heap, with no call into the backend. The table holds the
//! heaps whose memory the backend maps into this process
//! ([`hw::Device::load_store_addr`] of the own PE); on a backend without such an address it
//! is empty, and every pointer is refused.

use hw::{Backend, Device, MemKind, RemoteRange};

use crate::error::ShmemError;
use crate::memory::heaps::Heaps;
use crate::memory::space;
use crate::memory::sym::SymAddr;
use crate::pe::PeState;

/// One heap's memory as this process maps it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LocalWindow {
    kind: MemKind,
    /// The address of the heap's first byte in this process.
    base: u64,
    len_bytes: u64,
}

impl LocalWindow {
    pub(crate) fn kind(&self) -> MemKind {
        self.kind
    }

    pub(crate) fn base(&self) -> u64 {
        self.base
    }

    pub(crate) fn len_bytes(&self) -> u64 {
        self.len_bytes
    }
}

/// The windows of every heap in `heaps` that `device` maps into this process.
pub(crate) fn local_windows<D: Device>(device: &D, heaps: &Heaps) -> Vec<LocalWindow> {
    heaps
        .existing()
        .filter_map(|heap| {
            // Why one byte: a growable heap's segment is backed only as far as it grew, and a
            // segment's bytes lie at consecutive addresses, so its first byte's address gives
            // every other's.
            let range = RemoteRange {
                pe: device.pe(),
                kind: heap.kind(),
                offset: 0,
                len: 1,
            };
            let base = device.load_store_addr(range)?;
            Some(LocalWindow {
                kind: heap.kind(),
                base,
                len_bytes: heap.size_bytes(),
            })
        })
        .collect()
}

impl<B: Backend> PeState<B> {
    /// The symmetric address of the byte this process holds at `addr`, where `addr` lies in
    /// this PE's own part of a heap (or of the program's static data) that the backend maps
    /// into this process.
    ///
    /// # Errors
    /// [`ShmemError::NotSymmetric`] if no heap holds `addr` here.
    pub fn symmetric_addr(&self, addr: u64) -> Result<SymAddr, ShmemError> {
        self.local_windows
            .iter()
            .find(|w| addr.wrapping_sub(w.base) < w.len_bytes)
            .map(|w| SymAddr(space::base_of(w.kind) + (addr - w.base)))
            .ok_or(ShmemError::NotSymmetric { addr })
    }

    /// The address at which this process holds this PE's part of the symmetric byte `addr`,
    /// if the backend maps that heap into this process; the inverse of
    /// [`PeState::symmetric_addr`]. It checks no allocation.
    pub fn local_addr(&self, addr: SymAddr) -> Option<u64> {
        let (kind, offset) = space::locate(addr.0);
        self.local_windows
            .iter()
            .find(|w| w.kind == kind && offset < w.len_bytes)
            .map(|w| w.base + offset)
    }
}
