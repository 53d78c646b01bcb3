//! Mapped loads: where this PE may read every PE's part of a heap with plain loads instead of
//! get operations, on a backend that allows it ([`hw::Device::mapped_load_addr`]: the
//! simulator's fast path for kernels that read data no one writes meanwhile, such as a
//! matrix every PE reads after a barrier).
//!
//! Why a table handed out whole: a caller that makes a billion loads (a CUDA kernel's `g`
//! in the simulator's CPU emulation) looks the address up itself, with no call into the
//! runtime, and reports the bytes it loaded in batches ([`PeState::note_mapped_loads`]).

use hw::{Backend, Device, Pe, RemoteRange};

use crate::pe::PeState;

/// One heap as this PE may load it on every PE.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MappedHeap {
    /// The address of this PE's part of the heap in this process: a pointer `p` of the
    /// program lies in the heap when `p - local_base < len_bytes`.
    pub local_base: u64,
    /// The heap's size.
    pub len_bytes: u64,
    /// For every PE (world numbering), the address in this process from which the byte at
    /// the same offset of that PE's part may be loaded; `None` where loads must be get
    /// operations (the backend declines, or the PE is reached only through a NIC).
    pub peer_bases: Vec<Option<u64>>,
}

impl<B: Backend> PeState<B> {
    /// The heaps this process maps for its own PE, each with the addresses of every PE's part
    /// that mapped loads may read; empty where the backend maps nothing.
    pub fn mapped_heaps(&self) -> Vec<MappedHeap> {
        self.local_windows
            .iter()
            .map(|window| MappedHeap {
                local_base: window.base(),
                len_bytes: window.len_bytes(),
                peer_bases: (0..self.n_pes)
                    .map(|pe| {
                        self.device.mapped_load_addr(RemoteRange {
                            pe: Pe(pe),
                            kind: window.kind(),
                            offset: 0,
                            len: 1,
                        })
                    })
                    .collect(),
            })
            .collect()
    }

    /// Charges this PE for `bytes` it loaded from PE `pe` through [`PeState::mapped_heaps`].
    pub fn note_mapped_loads(&self, pe: u32, bytes: u64) {
        self.device.note_mapped_loads(Pe(pe), bytes);
    }
}
