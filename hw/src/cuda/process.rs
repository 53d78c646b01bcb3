//! Sharing GPU memory between the processes of a multi-process run (`rshmem run -n`).
//!
//! A segment made for sharing is exported as a POSIX file descriptor
//! (`cuMemExportToShareableHandle`); an importer takes a copy of it as every backend with a
//! process per PE does (`crate::common::fd_sharing`: the key, `pidfd_getfd`, the ptrace
//! permission), imports it (`cuMemImportFromShareableHandle`) and maps it at an address of
//! its own.

use std::sync::Arc;

use cudarc::driver::CudaContext;

use super::memory::Vmm;
use crate::common::fd_sharing::{SharedMemory, take_shared};

/// Maps another process's exported memory into this one, for the GPUs of `access`.
///
/// # Errors
/// Taking the descriptor (the owner exited, or ptrace permission is missing) or a driver
/// error, as text that names the fix.
pub(crate) fn map_shared(
    ctx: &Arc<CudaContext>,
    shared: &SharedMemory,
    access: &[u32],
) -> Result<Vmm, String> {
    let (fd, size) = take_shared(shared)?;
    Vmm::import(ctx, &fd, size, access).map_err(|e| e.to_string())
}
