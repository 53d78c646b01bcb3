//! How a new piece of a PE's growable segment reaches every PE: heap growth
//! ([`crate::Device::grow_segment`]) and a program's registered buffer
//! ([`crate::Device::attach_buffer`]) both map a chunk after what is mapped, trade its
//! descriptor in one exchange, and map the peers' chunks into this process's ranges of theirs;
//! [`crate::Device::detach_buffer`] unmaps a buffer's chunk everywhere.

use std::os::fd::OwnedFd;

use super::device::CudaDevice;
use super::program_buffer;
use super::segments::REFUSED;
use crate::common::fd_sharing::{SharedMemory, take_shared};
use crate::error::DeviceError;
use crate::types::{Instant, MemKind, Pe};

/// What one PE brings to [`CudaDevice::share_chunk`].
pub(super) enum NewChunk {
    /// It mapped nothing new (its segment was backed that far already).
    Nothing,
    /// It mapped a chunk; between processes, where the peers take it from.
    Mapped(Option<SharedMemory>),
    /// It could not; every PE fails with this PE's error or with a pointer to it.
    Refused(DeviceError),
}

impl CudaDevice {
    /// Trades this PE's `mine` with every PE, then maps each peer's new chunk (between
    /// processes) after what this process maps of that peer's `kind` segment, and records
    /// every PE's new length. Collective. `what` names the operation in the errors.
    pub(super) fn share_chunk(
        &self,
        kind: MemKind,
        mine: NewChunk,
        what: &str,
        deadline: Instant,
    ) -> Result<(), DeviceError> {
        let world = &self.ctx.world;
        let pe = self.ctx.pe;
        // Every PE takes part in the exchange, a refused one too (it sends REFUSED), so that
        // a refusal fails every PE at once instead of leaving the others to their deadline.
        let (bytes, refused) = match mine {
            NewChunk::Refused(e) => (REFUSED.to_vec(), Some(e)),
            NewChunk::Mapped(Some(shared)) => (shared.to_bytes(), None),
            NewChunk::Mapped(None) | NewChunk::Nothing => (Vec::new(), None),
        };
        let all = world
            .exchange(pe, &bytes, deadline)
            .map_err(|e| DeviceError::Lost(format!("{what}: {e}")))?;
        if let Some(e) = refused {
            return Err(e);
        }
        if let Some(refuser) = all.iter().position(|theirs| theirs.as_slice() == REFUSED) {
            return Err(DeviceError::Refused(format!(
                "{what}: PE {refuser} was refused (its own error says why)"
            )));
        }
        let shareable = world.multi_process();
        for (peer, theirs) in all.iter().enumerate() {
            let peer = Pe(peer as u32);
            let remote = world.remote_to(peer).is_some();
            let shared = (shareable && peer != pe && !remote && !theirs.is_empty())
                .then(|| SharedMemory::from_bytes(theirs))
                .flatten();
            let access = [self.ctx.gpu.ordinal];
            let map = |reservation: &mut super::reservation::Reservation| {
                if let Some(shared) = &shared {
                    let (fd, size) = take_shared(shared).map_err(DeviceError::Lost)?;
                    reservation
                        .map_imported(&fd, size, &access)
                        .map_err(|e| self.or_out_of_memory(e, kind, size as u64))?;
                }
                Ok::<_, DeviceError>(reservation.mapped())
            };
            self.record_mapped(peer, kind, map)?;
        }
        Ok(())
    }

    /// Runs `update` on this process's range of `peer`'s growable `kind` segment (the peer's
    /// own in one process or for this PE itself; this process's import of it between
    /// processes) and records the length it returns as what this PE reaches of `peer`.
    fn record_mapped(
        &self,
        peer: Pe,
        kind: MemKind,
        update: impl FnOnce(&mut super::reservation::Reservation) -> Result<usize, DeviceError>,
    ) -> Result<(), DeviceError> {
        let world = &self.ctx.world;
        let kind_idx = kind.index();
        let mapped = if peer == self.ctx.pe || !world.multi_process() {
            let own = |r: &mut super::reservation::Reservation| Ok(r.mapped());
            match peer == self.ctx.pe {
                true => world.with_growable(peer, kind, update),
                false => world.with_growable(peer, kind, own),
            }
        } else {
            world.with_growable_import(self.ctx.pe, peer, kind_idx, update)
        }
        .transpose()?;
        if let (Some(mapped), Some((base, _))) = (mapped, self.ctx.segment(peer, kind)) {
            self.ctx.set_reachable(peer, kind_idx, base, mapped as u64);
        }
        Ok(())
    }

    /// [`crate::Device::attach_buffer`]: checks the program's buffer, maps it after what this
    /// PE's segment maps, and shares it as a chunk.
    pub(super) fn attach(
        &self,
        kind: MemKind,
        offset_bytes: u64,
        buffer_addr: u64,
        len_bytes: u64,
        deadline: Instant,
    ) -> Result<(), DeviceError> {
        let world = &self.ctx.world;
        let shareable = world.multi_process();
        let access = self.chunk_access();
        let attached = world
            .with_growable(self.ctx.pe, kind, |reservation| {
                if reservation.mapped() as u64 != offset_bytes {
                    return Err(DeviceError::Lost(format!(
                        "the {kind:?} segment maps {:#x} bytes, not the {offset_bytes:#x} the \
                         runtime backed (contract violation)",
                        reservation.mapped()
                    )));
                }
                let gpu = &self.ctx.gpu;
                let buffer = program_buffer::inspect(
                    &gpu.ctx,
                    buffer_addr,
                    len_bytes,
                    gpu.ordinal,
                    reservation.granularity(),
                    shareable,
                )
                .map_err(|why| {
                    DeviceError::Refused(format!("PE {}'s buffer: {why}", self.ctx.pe.0))
                })?;
                let shared = buffer
                    .export
                    .as_ref()
                    .map(|fd: &OwnedFd| SharedMemory::of(fd, buffer.size));
                reservation
                    .adopt(buffer.physical, buffer.size, &access, buffer.export)
                    .map_err(|e| self.or_out_of_memory(e, kind, len_bytes))?;
                Ok(shared)
            })
            .unwrap_or_else(|| {
                Err(DeviceError::Refused(format!(
                    "this PE has no growable {kind:?} segment to take a buffer into"
                )))
            });
        let adopted = attached.is_ok();
        let mine = match attached {
            Ok(shared) => NewChunk::Mapped(shared),
            Err(e) => NewChunk::Refused(e),
        };
        let shared = self.share_chunk(kind, mine, "registering a buffer", deadline);
        if shared.is_err() && adopted {
            // A peer was refused: the runtime gives the range up on every PE, so this PE's
            // segment must end where it did, or its next growth would map after the buffer
            // and leave the buffer's pages in the heap.
            let (offset, size) = (offset_bytes as usize, len_bytes as usize);
            self.record_mapped(self.ctx.pe, kind, |reservation| {
                reservation.unmap_chunk(offset, size)?;
                Ok(reservation.mapped())
            })?;
        }
        shared
    }

    /// [`crate::Device::detach_buffer`]: unmaps the buffer's chunk from this PE's segment and
    /// from this process's ranges of the peers' segments.
    pub(super) fn detach(
        &self,
        kind: MemKind,
        offset_bytes: u64,
        len_bytes: u64,
    ) -> Result<(), DeviceError> {
        let (offset, size) = (offset_bytes as usize, len_bytes as usize);
        let unmap = |reservation: &mut super::reservation::Reservation| {
            reservation.unmap_chunk(offset, size)?;
            Ok(reservation.mapped())
        };
        for peer in 0..self.ctx.world.n_pes {
            let peer = Pe(peer);
            if peer == self.ctx.pe || self.ctx.world.multi_process() {
                self.record_mapped(peer, kind, unmap)?;
            } else {
                // In one process the owner unmaps its own chunk; this PE only records it.
                self.record_mapped(peer, kind, |r| Ok(r.mapped()))?;
            }
        }
        Ok(())
    }
}
