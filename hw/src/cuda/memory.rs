//! Memory the CUDA backend owns: device segments on CUDA virtual memory management, and
//! page-locked host memory (host segments and the staging buffers of copies).
//!
//! Every address here is a unified virtual address: in one process it means the same memory
//! to the host and to every GPU, which is why importing a peer's segment only records its
//! base address.

use std::ffi::{c_int, c_void};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaStream, sys};

use super::error::{DriverCallError, During};
use super::host_shared::HostShared;

/// Page-locked host memory from `cuMemHostAlloc`, portable (usable from every context) and
/// mapped (its address is valid on the GPUs).
#[derive(Debug)]
pub(crate) struct Pinned {
    ctx: Arc<CudaContext>,
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the allocation is plain memory owned by this value alone; nothing in it is tied to
// the thread that allocated it (it is portable across contexts), and freeing binds a context.
unsafe impl Send for Pinned {}

impl Pinned {
    /// `len` bytes (at least 1), not initialised.
    pub(crate) fn new(ctx: &Arc<CudaContext>, len: usize) -> Result<Pinned, DriverCallError> {
        ctx.bind_to_thread().during("cuCtxSetCurrent")?;
        let flags = sys::CU_MEMHOSTALLOC_PORTABLE | sys::CU_MEMHOSTALLOC_DEVICEMAP;
        let mut ptr = std::ptr::null_mut();
        // SAFETY: `ptr` is a valid place for the result; a context is current.
        unsafe { sys::cuMemHostAlloc(&mut ptr, len.max(1), flags) }.during("cuMemHostAlloc")?;
        let ptr = NonNull::new(ptr.cast::<u8>()).ok_or(DriverCallError {
            call: "cuMemHostAlloc",
            error: "a null pointer".into(),
        })?;
        Ok(Pinned {
            ctx: Arc::clone(ctx),
            ptr,
            len: len.max(1),
        })
    }

    /// The address on the host and, through unified addressing, on every GPU.
    pub(crate) fn addr(&self) -> u64 {
        self.ptr.as_ptr() as u64
    }

    /// The length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The first `len` bytes.
    ///
    /// # Safety
    /// No copy or kernel that writes them may be in flight.
    pub(crate) unsafe fn bytes(&self, len: usize) -> &[u8] {
        assert!(
            len <= self.len,
            "pinned buffer of {} bytes read past its end",
            self.len
        );
        // SAFETY: the allocation holds `self.len >= len` bytes, and the caller guarantees that
        // no device writes them meanwhile.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), len) }
    }

    /// The first `len` bytes, to write.
    ///
    /// # Safety
    /// No copy or kernel that reads or writes them may be in flight.
    pub(crate) unsafe fn bytes_mut(&mut self, len: usize) -> &mut [u8] {
        assert!(
            len <= self.len,
            "pinned buffer of {} bytes written past its end",
            self.len
        );
        // SAFETY: as in `bytes`, and `&mut self` excludes other borrows on the host.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), len) }
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        // The dropping thread may have no context current (the launcher's thread, say).
        let bound = self.ctx.bind_to_thread();
        // SAFETY: the pointer came from cuMemHostAlloc and is freed once; owners keep a
        // pinned buffer until no copy that uses it is in flight.
        let freed = unsafe { sys::cuMemFreeHost(self.ptr.as_ptr().cast()) };
        if bound.is_err() || freed != sys::CUresult::CUDA_SUCCESS {
            tracing::warn!(target: "rshmem::hw::cuda", ?freed, "cuMemFreeHost failed");
        }
    }
}

/// Device memory mapped at a reserved virtual address range, readable and writable by every
/// GPU of the run: `cuMemCreate`, `cuMemAddressReserve`, `cuMemMap`, `cuMemSetAccess`.
#[derive(Debug)]
pub(crate) struct Vmm {
    ctx: Arc<CudaContext>,
    base: sys::CUdeviceptr,
    size: usize,
    mapped: bool,
}

/// The physical allocation until it is mapped: the mapping then holds the memory, so the
/// handle is released right after `cuMemMap` (or on any failure before).
pub(super) struct Physical(pub(super) sys::CUmemGenericAllocationHandle);

impl Physical {
    /// `size` bytes (a multiple of the granularity) of `prop`'s memory.
    pub(super) fn create(
        prop: &sys::CUmemAllocationProp,
        size: usize,
    ) -> Result<Physical, DriverCallError> {
        let mut handle = 0;
        // SAFETY: `handle` and `prop` are valid; the caller rounds `size` to the granularity.
        unsafe { sys::cuMemCreate(&mut handle, size, prop, 0) }.during("cuMemCreate")?;
        Ok(Physical(handle))
    }

    /// A POSIX descriptor of the allocation, for another process to import.
    pub(super) fn export_fd(&self) -> Result<OwnedFd, DriverCallError> {
        let mut fd: c_int = -1;
        // SAFETY: the handle is live, and a POSIX descriptor is written to `fd` as an int.
        unsafe {
            sys::cuMemExportToShareableHandle(
                (&raw mut fd).cast(),
                self.0,
                sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                0,
            )
        }
        .during("cuMemExportToShareableHandle")?;
        // SAFETY: the driver just opened `fd` for us; we own it.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }

    /// The allocation another process exported as `fd`.
    pub(super) fn import(fd: &OwnedFd) -> Result<Physical, DriverCallError> {
        let mut handle = 0;
        // SAFETY: for POSIX descriptors the driver takes the descriptor's value as the pointer
        // argument; `fd` is open for the whole call.
        unsafe {
            sys::cuMemImportFromShareableHandle(
                &mut handle,
                fd.as_raw_fd() as isize as *mut c_void,
                sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
            )
        }
        .during("cuMemImportFromShareableHandle")?;
        Ok(Physical(handle))
    }
}

/// Pinned device memory of `ctx`'s GPU, exportable as a POSIX descriptor when `shareable`.
pub(super) fn allocation_prop(ctx: &CudaContext, shareable: bool) -> sys::CUmemAllocationProp {
    sys::CUmemAllocationProp {
        type_: sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
        requestedHandleTypes: if shareable {
            sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
        } else {
            sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE
        },
        location: device_location(ctx.ordinal() as u32),
        win32HandleMetaData: std::ptr::null_mut(),
        allocFlags: sys::CUmemAllocationProp_st__bindgen_ty_1 {
            compressionType: 0,
            gpuDirectRDMACapable: 0,
            usage: 0,
            reserved: [0; 4],
        },
    }
}

/// The allocation granularity of `prop`'s memory: sizes and mapping offsets are multiples.
pub(super) fn granularity(prop: &sys::CUmemAllocationProp) -> Result<usize, DriverCallError> {
    let mut granularity = 0usize;
    // SAFETY: `granularity` and `prop` are valid for the call, which only reads `prop`.
    unsafe {
        sys::cuMemGetAllocationGranularity(
            &mut granularity,
            prop,
            sys::CUmemAllocationGranularity_flags::CU_MEM_ALLOC_GRANULARITY_MINIMUM,
        )
    }
    .during("cuMemGetAllocationGranularity")?;
    Ok(granularity.max(1))
}

/// Zeroes `size` mapped bytes at `base` on `stream` and waits: the legacy stream's memset
/// would not be ordered with the non-blocking streams that peers write with.
pub(super) fn zero(
    base: sys::CUdeviceptr,
    size: usize,
    stream: &CudaStream,
) -> Result<(), DriverCallError> {
    // SAFETY: the caller passes a range mapped and writable by the stream's GPU.
    unsafe { sys::cuMemsetD8Async(base, 0, size, stream.cu_stream()) }.during("cuMemsetD8Async")?;
    stream.synchronize().during("cuStreamSynchronize")
}

impl Drop for Physical {
    fn drop(&mut self) {
        // SAFETY: the handle came from cuMemCreate and is released once.
        let released = unsafe { sys::cuMemRelease(self.0) };
        if released != sys::CUresult::CUDA_SUCCESS {
            tracing::warn!(target: "rshmem::hw::cuda", ?released, "cuMemRelease failed");
        }
    }
}

fn device_location(ordinal: u32) -> sys::CUmemLocation {
    sys::CUmemLocation {
        type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
        id: ordinal as i32,
    }
}

impl Vmm {
    /// At least `len_bytes` (rounded up to the allocation granularity) of zeroed memory on
    /// `ctx`'s GPU, mapped for every GPU of `access`; zeroed on `stream` (of `ctx`). With
    /// `shareable`, other processes may map it ([`Vmm::export_fd`], [`Vmm::import`]).
    pub(crate) fn new(
        ctx: &Arc<CudaContext>,
        len_bytes: u64,
        access: &[u32],
        stream: &CudaStream,
        shareable: bool,
    ) -> Result<Vmm, DriverCallError> {
        ctx.bind_to_thread().during("cuCtxSetCurrent")?;
        let prop = allocation_prop(ctx, shareable);
        let size = rounded_size(len_bytes, granularity(&prop)?).ok_or(DriverCallError {
            call: "cuMemCreate",
            error: "CUDA_ERROR_OUT_OF_MEMORY".into(),
        })?;
        let vmm = Self::map(ctx, Physical::create(&prop, size)?, size, access)?;
        zero(vmm.base, size, stream)?;
        Ok(vmm)
    }

    /// The base address, valid on every GPU of the run.
    pub(crate) fn addr(&self) -> u64 {
        self.base
    }

    /// The mapped size: `len_bytes` rounded up to the granularity.
    pub(crate) fn size(&self) -> usize {
        self.size
    }

    /// A file descriptor of the memory that another process can import with [`Vmm::import`]
    /// (once it holds a copy of it: `process.rs`). Only for memory made `shareable`.
    pub(crate) fn export_fd(&self) -> Result<OwnedFd, DriverCallError> {
        self.ctx.bind_to_thread().during("cuCtxSetCurrent")?;
        let mut handle = 0;
        // SAFETY: `base` is the start of a live mapping made by `new`.
        unsafe { sys::cuMemRetainAllocationHandle(&mut handle, self.base as *mut c_void) }
            .during("cuMemRetainAllocationHandle")?;
        Physical(handle).export_fd()
    }

    /// Maps another process's memory, exported as `fd` with `size` bytes, at a new address of
    /// this process, readable and writable by the GPUs of `access`.
    pub(crate) fn import(
        ctx: &Arc<CudaContext>,
        fd: &OwnedFd,
        size: usize,
        access: &[u32],
    ) -> Result<Vmm, DriverCallError> {
        ctx.bind_to_thread().during("cuCtxSetCurrent")?;
        Self::map(ctx, Physical::import(fd)?, size, access)
    }

    /// Reserves `size` bytes of address space, maps `physical` there and grants `access`.
    fn map(
        ctx: &Arc<CudaContext>,
        physical: Physical,
        size: usize,
        access: &[u32],
    ) -> Result<Vmm, DriverCallError> {
        let mut base = 0;
        // SAFETY: `base` is a valid place for the result; 0 for alignment, address and flags
        // lets the driver choose (the granularity divides `size`).
        unsafe { sys::cuMemAddressReserve(&mut base, size, 0, 0, 0) }
            .during("cuMemAddressReserve")?;
        let mut vmm = Vmm {
            ctx: Arc::clone(ctx),
            base,
            size,
            mapped: false,
        };
        // SAFETY: the range was just reserved with this size and nothing is mapped in it.
        unsafe { sys::cuMemMap(base, size, 0, physical.0, 0) }.during("cuMemMap")?;
        vmm.mapped = true;
        drop(physical);
        set_access(base, size, access)?;
        Ok(vmm)
    }
}

/// Lets the GPUs of `access` read and write the mapped range.
pub(super) fn set_access(
    base: sys::CUdeviceptr,
    size: usize,
    access: &[u32],
) -> Result<(), DriverCallError> {
    let descs: Vec<sys::CUmemAccessDesc> = access
        .iter()
        .map(|&gpu| sys::CUmemAccessDesc {
            location: device_location(gpu),
            flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        })
        .collect();
    // SAFETY: the range is mapped, and `descs` holds `descs.len()` descriptors.
    unsafe { sys::cuMemSetAccess(base, size, descs.as_ptr(), descs.len()) }.during("cuMemSetAccess")
}

impl Drop for Vmm {
    fn drop(&mut self) {
        let bound = self.ctx.bind_to_thread();
        let unmapped = if self.mapped {
            // SAFETY: the range was mapped by `new` and is unmapped once; no copy reaches it
            // any more (the run keeps segments until every PE's queues are drained).
            unsafe { sys::cuMemUnmap(self.base, self.size) }
        } else {
            sys::CUresult::CUDA_SUCCESS
        };
        // SAFETY: the range was reserved by `new` with this size and is freed once.
        let freed = unsafe { sys::cuMemAddressFree(self.base, self.size) };
        if bound.is_err()
            || unmapped != sys::CUresult::CUDA_SUCCESS
            || freed != sys::CUresult::CUDA_SUCCESS
        {
            tracing::warn!(target: "rshmem::hw::cuda", ?unmapped, ?freed, "freeing a device segment failed");
        }
    }
}

/// The memory of one segment.
#[derive(Debug)]
pub(crate) enum Segment {
    /// GPU memory of the owning PE.
    Device(Vmm),
    /// GPU memory of the owning PE that grows on demand.
    Growable(super::reservation::Reservation),
    /// Pinned host memory (PEs as threads of one process).
    Host(Pinned),
    /// Host memory shared with the run's other processes: a `Host` segment or the static data
    /// (a process per PE).
    Shared(HostShared),
}

impl Segment {
    /// The base address, valid on the host and every GPU of the run.
    pub(crate) fn addr(&self) -> u64 {
        match self {
            Segment::Device(vmm) => vmm.addr(),
            Segment::Growable(reservation) => reservation.addr(),
            Segment::Host(pinned) => pinned.addr(),
            Segment::Shared(host) => host.addr(),
        }
    }
}

/// `len_bytes` (at least 1) rounded up to a multiple of `granularity`, if it fits.
pub(super) fn rounded_size(len_bytes: u64, granularity: usize) -> Option<usize> {
    let len = usize::try_from(len_bytes.max(1)).ok()?;
    len.checked_next_multiple_of(granularity.max(1))
}

#[cfg(test)]
mod tests {
    use super::rounded_size;

    #[test]
    fn sizes_round_up_to_the_granularity() {
        let two_mib = 2 << 20;
        assert_eq!(rounded_size(0, two_mib), Some(two_mib));
        assert_eq!(rounded_size(1, two_mib), Some(two_mib));
        assert_eq!(rounded_size(two_mib as u64, two_mib), Some(two_mib));
        assert_eq!(rounded_size(two_mib as u64 + 1, two_mib), Some(2 * two_mib));
        assert_eq!(rounded_size(u64::MAX, two_mib), None);
    }
}
