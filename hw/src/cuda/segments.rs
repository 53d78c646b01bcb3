//! A PE's segments on its GPU: what a segment key carries between PEs ([`Key`]), and how a
//! device creates, refuses and keeps its own segments (the lifecycle helpers the `Device`
//! methods in `device.rs` are written with).

use std::os::fd::OwnedFd;

use super::device::CudaDevice;
use super::error::DriverCallError;
use super::host_shared::HostShared;
use super::memory::{Pinned, Segment, Vmm};
use super::world::already_has;
use crate::common::fd_sharing::{SHARED_MEMORY_BYTES, SharedMemory};
use crate::error::DeviceError;
use crate::types::{MemKind, Pe, SegmentKey};

/// What a segment key names: the owner, the kind, the base address in the owner's process,
/// the length, and for a segment shared between processes where to take it from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Key {
    pub(super) pe: Pe,
    pub(super) kind_idx: usize,
    pub(super) base: u64,
    /// The bytes backed (all of a segment that does not grow).
    pub(super) len_bytes: u64,
    /// For a growable segment, the address space reserved for it; 0 for one that does not
    /// grow.
    pub(super) reserved_bytes: u64,
    /// For a segment of another process: where to take its memory from (for a growable one,
    /// its first chunk).
    pub(super) shared: Option<SharedMemory>,
}

/// The bytes of a key without [`Key::shared`].
const KEY_BYTES: usize = 4 + 1 + 8 + 8 + 8;

impl Key {
    /// Little-endian fields in order, the shared part appended when there is one.
    pub(super) fn to_bytes(self) -> Vec<u8> {
        let mut key = self.pe.0.to_le_bytes().to_vec();
        key.push(self.kind_idx as u8);
        key.extend_from_slice(&self.base.to_le_bytes());
        key.extend_from_slice(&self.len_bytes.to_le_bytes());
        key.extend_from_slice(&self.reserved_bytes.to_le_bytes());
        if let Some(shared) = self.shared {
            key.extend_from_slice(&shared.to_bytes());
        }
        key
    }

    /// The key `bytes` hold, if they hold one.
    pub(super) fn from_bytes(bytes: &[u8]) -> Option<Key> {
        let (head, tail) = bytes.split_at_checked(KEY_BYTES)?;
        let (pe, rest) = head.split_first_chunk::<4>()?;
        let (kind, rest) = rest.split_first()?;
        let (base, rest) = rest.split_first_chunk::<8>()?;
        let (len, reserved) = rest.split_first_chunk::<8>()?;
        let shared = match tail.len() {
            0 => None,
            SHARED_MEMORY_BYTES => Some(SharedMemory::from_bytes(tail)?),
            _ => return None,
        };
        Some(Key {
            pe: Pe(u32::from_le_bytes(*pe)),
            kind_idx: usize::from(*kind),
            base: u64::from_le_bytes(*base),
            len_bytes: u64::from_le_bytes(*len),
            reserved_bytes: u64::from_le_bytes(reserved.try_into().ok()?),
            shared,
        })
    }
}

/// What a PE that could not grow its segment sends in [`Device::grow_segment`]'s exchange
/// (a chunk's description is 16 bytes, no chunk is empty).
pub(super) const REFUSED: &[u8] = b"refused";

impl CudaDevice {
    /// A new zeroed segment of `kind` and `len_bytes` for this PE, and, between processes,
    /// where peers take it from. `Device`: GPU memory (exported between processes). `Host` and
    /// `Static`: pinned memory in one process; a memfd every PE maps between processes
    /// (`host_shared.rs`).
    pub(super) fn new_segment(
        &self,
        kind: MemKind,
        len_bytes: u64,
    ) -> Result<(Segment, Option<SharedMemory>), DeviceError> {
        let ctx = &self.ctx.gpu.ctx;
        let world = &self.ctx.world;
        let oom = |e: DriverCallError| self.or_out_of_memory(e, kind, len_bytes);
        let len = usize::try_from(len_bytes).map_err(|_| self.out_of_memory(kind, len_bytes))?;
        match kind {
            MemKind::Device => {
                let access = world.ordinals();
                let shareable = world.multi_process();
                let vmm = Vmm::new(ctx, len_bytes, &access, &self.local, shareable).map_err(oom)?;
                let shared = match shareable {
                    true => Some(self.keep_export(vmm.export_fd()?, vmm.size())),
                    false => None,
                };
                Ok((Segment::Device(vmm), shared))
            }
            MemKind::Host | MemKind::Static if world.multi_process() => {
                let (fd, host) = HostShared::create(ctx, kind, len).map_err(|reason| {
                    tracing::warn!(target: "rshmem::hw::cuda", "a {len}-byte {kind:?} segment: {reason}");
                    self.out_of_memory(kind, len_bytes)
                })?;
                let shared = self.keep_export(fd, host.len());
                Ok((Segment::Shared(host), Some(shared)))
            }
            MemKind::Host | MemKind::Static => {
                let mut pinned = Pinned::new(ctx, len).map_err(oom)?;
                // SAFETY: the buffer is new: nothing else uses it.
                unsafe { pinned.bytes_mut(len) }.fill(0);
                Ok((Segment::Host(pinned), None))
            }
        }
    }

    /// Refuses a segment of `kind` and `len_bytes` this PE cannot create.
    pub(super) fn check_new_segment(
        &self,
        kind: MemKind,
        len_bytes: u64,
    ) -> Result<(), DeviceError> {
        let world = &self.ctx.world;
        let pe = self.ctx.pe;
        if len_bytes > world.caps.max_segment_bytes {
            return Err(self.out_of_memory(kind, len_bytes));
        }
        if world.has_segment(pe, kind) {
            return Err(already_has(pe, kind));
        }
        Ok(())
    }

    pub(super) fn out_of_memory(&self, kind: MemKind, requested_bytes: u64) -> DeviceError {
        DeviceError::OutOfMemory {
            kind,
            requested_bytes,
            limit_bytes: self.ctx.world.caps.max_segment_bytes,
        }
    }

    /// `e` as the error of a request for `requested_bytes` of `kind`.
    pub(super) fn or_out_of_memory(
        &self,
        e: DriverCallError,
        kind: MemKind,
        requested_bytes: u64,
    ) -> DeviceError {
        if e.is_out_of_memory() {
            self.out_of_memory(kind, requested_bytes)
        } else {
            e.into()
        }
    }

    /// The GPUs that get access to a chunk of this PE's growable segment as it is mapped:
    /// every GPU of the run in one process; this PE's own between processes, where the
    /// peers map the exported chunk themselves.
    pub(super) fn chunk_access(&self) -> Vec<u32> {
        if self.ctx.world.multi_process() {
            vec![self.ctx.gpu.ordinal]
        } else {
            self.ctx.world.ordinals()
        }
    }

    /// Keeps `fd` (of `size` exported bytes) open for the peers and returns where they take
    /// it from.
    pub(super) fn keep_export(&self, fd: OwnedFd, size: usize) -> SharedMemory {
        let shared = SharedMemory::of(&fd, size);
        self.ctx.world.keep_export(fd);
        shared
    }

    /// Keeps this PE's new `segment` for the run, records it as reachable, and returns `key`.
    pub(super) fn keep_own(
        &self,
        kind: MemKind,
        segment: Segment,
        key: Key,
    ) -> Result<SegmentKey, DeviceError> {
        self.ctx.world.keep_segment(self.ctx.pe, kind, segment)?;
        self.ctx
            .set_reachable(self.ctx.pe, kind.index(), key.base, key.len_bytes);
        Ok(SegmentKey(key.to_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_and_reject_other_bytes() {
        let mut key = Key {
            pe: Pe(3),
            kind_idx: MemKind::Device.index(),
            base: 0x7f00_0000_0000,
            len_bytes: 4 << 20,
            reserved_bytes: 64 << 20,
            shared: None,
        };
        for shared in [
            None,
            Some(SharedMemory {
                pid: 77,
                fd: 9,
                size: 4 << 20,
            }),
        ] {
            key.shared = shared;
            let bytes = key.to_bytes();
            assert_eq!(Key::from_bytes(&bytes), Some(key));
            assert_eq!(Key::from_bytes(&bytes[..bytes.len() - 1]), None);
            assert_eq!(Key::from_bytes(&[bytes.clone(), vec![0]].concat()), None);
        }
        assert_eq!(Key::from_bytes(&[]), None);
    }
}
