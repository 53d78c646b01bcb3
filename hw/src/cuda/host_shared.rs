//! Host memory shared between the processes of a run: the `Host` segments and the static data
//! of a PE when each PE is a process of its own.
//!
//! Such memory is a memfd every PE maps, as in the process backend (`crate::common::memfd`;
//! the static data is the program's own pages remapped onto one, `crate::common::static_data`),
//! and each mapping, the owner's and every importer's, is registered with CUDA
//! (`cuMemHostRegister`, portable and device-mapped). Why register: host-initiated operations
//! on host memory are done by the CPU (`queue/cpu.rs`), but a copy between a GPU's memory and
//! host memory (a put from a device buffer into a host segment) stays a copy on the stream,
//! and the copy engine reaches host memory only when it is pinned. With unified addressing the
//! registered range has the same address on the host and on the GPUs.

use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;

use cudarc::driver::{CudaContext, sys};

use super::error::{DriverCallError, During};
use crate::common::fd_sharing::{SharedMemory, take_shared};
use crate::common::memfd::{Mapping, shared_memory};
use crate::common::static_data;
use crate::types::MemKind;

/// A mapping of shared host memory, registered with CUDA while it lives.
#[derive(Debug)]
pub(crate) struct HostShared {
    /// Declared before `mapping`, so that it is unregistered before it is unmapped; `None` for
    /// an empty mapping.
    _registered: Option<Registered>,
    mapping: Mapping,
}

/// A host range registered with `cuMemHostRegister`; dropping it unregisters it.
#[derive(Debug)]
struct Registered {
    ctx: Arc<CudaContext>,
    addr: u64,
}

impl Registered {
    /// Registers the `len` (> 0) bytes at `addr`, portable and device-mapped.
    fn new(ctx: &Arc<CudaContext>, addr: u64, len: usize) -> Result<Registered, DriverCallError> {
        ctx.bind_to_thread().during("cuCtxSetCurrent")?;
        let flags = sys::CU_MEMHOSTREGISTER_PORTABLE | sys::CU_MEMHOSTREGISTER_DEVICEMAP;
        // SAFETY: the range is a page-aligned mapping of this process, read/write, which the
        // owner of the returned value keeps mapped until it is dropped.
        unsafe { sys::cuMemHostRegister_v2(addr as *mut _, len, flags) }
            .during("cuMemHostRegister")?;
        Ok(Registered {
            ctx: Arc::clone(ctx),
            addr,
        })
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        // The dropping thread may have no context current.
        let bound = self.ctx.bind_to_thread();
        // SAFETY: the range was registered by `new` and is unregistered once, while mapped.
        let done = unsafe { sys::cuMemHostUnregister(self.addr as *mut _) };
        if bound.is_err() || done != sys::CUresult::CUDA_SUCCESS {
            tracing::warn!(target: "rshmem::hw::cuda", ?done, "cuMemHostUnregister failed");
        }
    }
}

impl HostShared {
    /// `mapping`, registered (unless it is empty).
    fn register(ctx: &Arc<CudaContext>, mapping: Mapping) -> Result<HostShared, DriverCallError> {
        let addr = mapping.span(0, 0, "register") as u64;
        let registered = match mapping.len() {
            0 => None,
            len => Some(Registered::new(ctx, addr, len)?),
        };
        Ok(HostShared {
            _registered: registered,
            mapping,
        })
    }

    /// A new zeroed memfd of `len` bytes for this PE's segment of `kind`, mapped and
    /// registered, and the descriptor peers take it from.
    ///
    /// # Errors
    /// What the system or the driver said, as text naming the call.
    pub(crate) fn create(
        ctx: &Arc<CudaContext>,
        kind: MemKind,
        len: usize,
    ) -> Result<(OwnedFd, HostShared), String> {
        let name = match kind {
            MemKind::Static => c"rshmem-cuda-static-data",
            _ => c"rshmem-cuda-host-segment",
        };
        let (fd, mapping) =
            shared_memory(name, len).map_err(|e| format!("memfd_create/mmap: {e}"))?;
        let shared = HostShared::register(ctx, mapping).map_err(|e| e.to_string())?;
        Ok((fd, shared))
    }

    /// The program's static data remapped onto a new memfd (`crate::common::static_data`),
    /// registered, and the descriptor peers take it from.
    ///
    /// # Errors
    /// As [`HostShared::create`].
    pub(crate) fn static_data(ctx: &Arc<CudaContext>) -> Result<(OwnedFd, HostShared), String> {
        let (fd, mapping) = static_data::share().map_err(|e| e.to_string())?;
        let shared = HostShared::register(ctx, mapping).map_err(|e| e.to_string())?;
        Ok((fd, shared))
    }

    /// Another process's memory, from the descriptor `shared` names, mapped here and
    /// registered.
    ///
    /// # Errors
    /// As [`HostShared::create`], or taking the descriptor failed.
    pub(crate) fn import(
        ctx: &Arc<CudaContext>,
        shared: &SharedMemory,
    ) -> Result<HostShared, String> {
        let (fd, size) = take_shared(shared)?;
        let mapping = Mapping::map(fd.as_fd(), size).map_err(|e| format!("mmap: {e}"))?;
        HostShared::register(ctx, mapping).map_err(|e| e.to_string())
    }

    /// The base address, on the host and, through unified addressing, on the GPUs.
    pub(crate) fn addr(&self) -> u64 {
        self.mapping.span(0, 0, "addr") as u64
    }

    /// The length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.mapping.len()
    }
}
