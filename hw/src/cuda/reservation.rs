//! The address range of a segment that grows ([`Reservation`]): memory mapped into it piece
//! by piece, this GPU's own, a peer process's, or a buffer the program allocated itself.

use std::os::fd::OwnedFd;
use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaStream, sys};

use super::error::{DriverCallError, During};
use super::memory::{Physical, allocation_prop, granularity, rounded_size, set_access, zero};

/// An address range reserved for a segment that grows: memory is mapped into it chunk after
/// chunk from its start, this GPU's own ([`Reservation::grow`]), a peer process's
/// ([`Reservation::map_imported`]) or the program's ([`Reservation::adopt`]), and stays mapped
/// until [`Reservation::unmap_chunk`] or until the range is dropped.
#[derive(Debug)]
pub(crate) struct Reservation {
    ctx: Arc<CudaContext>,
    base: sys::CUdeviceptr,
    size: usize,
    /// Bytes from the start up to the end of the last chunk mapped.
    mapped: usize,
    /// The allocation granularity: chunks are multiples of it.
    granularity: usize,
    /// The mapped chunks, for unmapping.
    chunks: Vec<Chunk>,
}

/// One mapping of a [`Reservation`].
#[derive(Debug)]
struct Chunk {
    offset: usize,
    size: usize,
    /// For a program's buffer shared between processes: its descriptor, open while peers may
    /// take copies of it.
    export: Option<OwnedFd>,
}

impl Reservation {
    /// `len_bytes` of address space (rounded up to the granularity of `ctx`'s GPU, as
    /// `shareable` memory has it), with nothing mapped.
    pub(crate) fn new(
        ctx: &Arc<CudaContext>,
        len_bytes: u64,
        shareable: bool,
    ) -> Result<Reservation, DriverCallError> {
        ctx.bind_to_thread().during("cuCtxSetCurrent")?;
        let granularity = granularity(&allocation_prop(ctx, shareable))?;
        let size = rounded_size(len_bytes, granularity).ok_or(DriverCallError {
            call: "cuMemAddressReserve",
            error: "CUDA_ERROR_OUT_OF_MEMORY".into(),
        })?;
        let mut base = 0;
        // SAFETY: `base` is a valid place for the result; the driver chooses the address.
        unsafe { sys::cuMemAddressReserve(&mut base, size, 0, 0, 0) }
            .during("cuMemAddressReserve")?;
        Ok(Reservation {
            ctx: Arc::clone(ctx),
            base,
            size,
            mapped: 0,
            granularity,
            chunks: Vec::new(),
        })
    }

    /// The base address.
    pub(crate) fn addr(&self) -> u64 {
        self.base
    }

    /// The reserved size.
    pub(crate) fn size(&self) -> usize {
        self.size
    }

    /// The bytes from the start to the end of the last chunk mapped.
    pub(crate) fn mapped(&self) -> usize {
        self.mapped
    }

    /// The allocation granularity: chunk sizes are multiples of it.
    pub(crate) fn granularity(&self) -> usize {
        self.granularity
    }

    /// Maps new zeroed memory of this GPU after what is mapped, so that at least the first
    /// `len_bytes` are (rounded up to the granularity), readable and writable by the GPUs of
    /// `access`. Returns the new chunk's size and, for `shareable` memory, a descriptor of it
    /// that another process can import; `None` if that much was mapped already.
    ///
    /// # Errors
    /// `CUDA_ERROR_OUT_OF_MEMORY` beyond the reservation, or a driver error.
    pub(crate) fn grow(
        &mut self,
        len_bytes: u64,
        access: &[u32],
        stream: &CudaStream,
        shareable: bool,
    ) -> Result<Option<(usize, Option<OwnedFd>)>, DriverCallError> {
        let oom = || DriverCallError {
            call: "cuMemCreate",
            error: "CUDA_ERROR_OUT_OF_MEMORY".into(),
        };
        let end = rounded_size(len_bytes, self.granularity).ok_or_else(oom)?;
        if end <= self.mapped {
            return Ok(None);
        }
        if end > self.size {
            return Err(oom());
        }
        self.ctx.bind_to_thread().during("cuCtxSetCurrent")?;
        let chunk = end - self.mapped;
        let physical = Physical::create(&allocation_prop(&self.ctx, shareable), chunk)?;
        let fd = if shareable {
            Some(physical.export_fd()?)
        } else {
            None
        };
        self.map_chunk(physical, chunk, access, None)?;
        zero(self.base + (end - chunk) as u64, chunk, stream)?;
        Ok(Some((chunk, fd)))
    }

    /// Maps `size` bytes of another process's memory, exported as `fd`, right after what is
    /// mapped, for the GPUs of `access`.
    ///
    /// # Errors
    /// `CUDA_ERROR_OUT_OF_MEMORY` beyond the reservation, or a driver error.
    pub(crate) fn map_imported(
        &mut self,
        fd: &OwnedFd,
        size: usize,
        access: &[u32],
    ) -> Result<(), DriverCallError> {
        self.check_room(size)?;
        self.ctx.bind_to_thread().during("cuCtxSetCurrent")?;
        self.map_chunk(Physical::import(fd)?, size, access, None)
    }

    /// Maps the first `size` bytes of the program's allocation `physical` right after what is
    /// mapped, for the GPUs of `access`, keeping `export` (its descriptor for the peers) until
    /// the chunk is unmapped. The program's own mapping stays as it is: both addresses reach
    /// the same memory.
    ///
    /// # Errors
    /// `CUDA_ERROR_OUT_OF_MEMORY` beyond the reservation, or a driver error.
    pub(super) fn adopt(
        &mut self,
        physical: Physical,
        size: usize,
        access: &[u32],
        export: Option<OwnedFd>,
    ) -> Result<(), DriverCallError> {
        self.check_room(size)?;
        self.ctx.bind_to_thread().during("cuCtxSetCurrent")?;
        self.map_chunk(physical, size, access, export)
    }

    /// Unmaps the chunk that starts at `offset` and is `size` bytes long. If it was the last,
    /// the next chunk maps at `offset` again; otherwise its range stays without memory.
    ///
    /// # Errors
    /// A driver error, or `CUDA_ERROR_INVALID_VALUE` if no such chunk is mapped (the caller's
    /// records and the reservation's disagree).
    pub(crate) fn unmap_chunk(
        &mut self,
        offset: usize,
        size: usize,
    ) -> Result<(), DriverCallError> {
        let index = self
            .chunks
            .iter()
            .position(|chunk| (chunk.offset, chunk.size) == (offset, size))
            .ok_or(DriverCallError {
                call: "cuMemUnmap",
                error: "CUDA_ERROR_INVALID_VALUE".into(),
            })?;
        self.ctx.bind_to_thread().during("cuCtxSetCurrent")?;
        // SAFETY: the chunk was mapped once by `map_chunk` and is unmapped once (it leaves
        // `chunks` now); the caller's barrier has completed every access to it.
        unsafe { sys::cuMemUnmap(self.base + offset as u64, size) }.during("cuMemUnmap")?;
        // The descriptor of a program's buffer closes with its chunk: every peer took its copy
        // when the buffer was attached.
        drop(self.chunks.remove(index).export);
        if offset + size == self.mapped {
            self.mapped = offset;
        }
        Ok(())
    }

    /// Refuses a chunk of `size` bytes that does not fit after what is mapped.
    fn check_room(&self, size: usize) -> Result<(), DriverCallError> {
        if self.mapped + size > self.size {
            return Err(DriverCallError {
                call: "cuMemMap",
                error: "CUDA_ERROR_OUT_OF_MEMORY".into(),
            });
        }
        Ok(())
    }

    /// Maps `physical` (`size` bytes) after what is mapped and grants `access`.
    fn map_chunk(
        &mut self,
        physical: Physical,
        size: usize,
        access: &[u32],
        export: Option<OwnedFd>,
    ) -> Result<(), DriverCallError> {
        let at = self.base + self.mapped as u64;
        // SAFETY: `at..at + size` lies in the reservation (the callers check) after every
        // mapped chunk, so nothing is mapped there.
        unsafe { sys::cuMemMap(at, size, 0, physical.0, 0) }.during("cuMemMap")?;
        self.chunks.push(Chunk {
            offset: self.mapped,
            size,
            export,
        });
        self.mapped += size;
        drop(physical);
        set_access(at, size, access)
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let bound = self.ctx.bind_to_thread();
        let mut failed = bound.is_err();
        for chunk in &self.chunks {
            // SAFETY: each chunk was mapped once by `map_chunk` and is unmapped once; no copy
            // reaches it any more (the run keeps segments until every queue is drained).
            let unmapped = unsafe { sys::cuMemUnmap(self.base + chunk.offset as u64, chunk.size) };
            failed |= unmapped != sys::CUresult::CUDA_SUCCESS;
        }
        // SAFETY: the range was reserved by `new` with this size and is freed once.
        let freed = unsafe { sys::cuMemAddressFree(self.base, self.size) };
        if failed || freed != sys::CUresult::CUDA_SUCCESS {
            tracing::warn!(target: "rshmem::hw::cuda", ?freed, "freeing a growable segment failed");
        }
    }
}
