//! A program's own GPU memory taken into a growable segment ([`crate::Device::attach_buffer`]):
//! what the driver says the buffer is, checked before anything is mapped, so that memory that
//! does not qualify is refused with the fix, never mapped as something else.

use std::ffi::c_void;
use std::os::fd::OwnedFd;

use cudarc::driver::{CudaContext, sys};

use super::error::During;
use super::memory::Physical;

/// A buffer that qualifies: its allocation (retained), the bytes to map, and between processes
/// its descriptor for the peers.
pub(super) struct ProgramBuffer {
    pub(super) physical: Physical,
    pub(super) size: usize,
    pub(super) export: Option<OwnedFd>,
}

/// The program's buffer of `len_bytes` at `addr`, if it is the start of one allocation of GPU
/// `ordinal` that the program mapped with the driver's virtual-memory API (`cuMemCreate`,
/// `cuMemMap`), at least `len_bytes` long, `len_bytes` a multiple of `granularity`, and, when
/// `shareable` (PEs in processes), exportable as a POSIX file descriptor. Otherwise why not, with
/// the fix.
pub(super) fn inspect(
    ctx: &CudaContext,
    addr: u64,
    len_bytes: u64,
    ordinal: u32,
    granularity: usize,
    shareable: bool,
) -> Result<ProgramBuffer, String> {
    let size = usize::try_from(len_bytes)
        .ok()
        .filter(|&size| size > 0 && size.is_multiple_of(granularity))
        .ok_or_else(|| {
            format!(
                "its size {len_bytes:#x} is not a positive multiple of the allocation granularity \
                 ({granularity:#x} bytes, cuMemGetAllocationGranularity)"
            )
        })?;
    ctx.bind_to_thread()
        .during("cuCtxSetCurrent")
        .map_err(|e| e.to_string())?;
    let mut handle = 0;
    // SAFETY: `handle` is a valid place for the result; the driver checks `addr` itself and
    // fails for an address it did not map.
    unsafe { sys::cuMemRetainAllocationHandle(&mut handle, addr as *mut c_void) }
        .during("cuMemRetainAllocationHandle")
        .map_err(|e| {
            format!(
                "{addr:#x} is not memory mapped with the driver's virtual-memory API ({e}); \
                 allocate the buffer with cuMemCreate and map it with cuMemMap (cudaMalloc'ed \
                 memory cannot be registered)"
            )
        })?;
    // From here the handle is released on every path.
    let physical = Physical(handle);
    let (mut base, mut mapped) = (0, 0);
    // SAFETY: both results have valid places; `addr` is mapped (the handle was retained).
    unsafe { sys::cuMemGetAddressRange_v2(&mut base, &mut mapped, addr) }
        .during("cuMemGetAddressRange")
        .map_err(|e| e.to_string())?;
    if base != addr {
        return Err(format!(
            "{addr:#x} lies inside the allocation mapped at {base:#x}: register the address \
             where the allocation is mapped"
        ));
    }
    if size > mapped {
        return Err(format!(
            "it runs past its allocation ({mapped:#x} bytes at {addr:#x}): a registered buffer is \
             one cuMemCreate allocation"
        ));
    }
    let prop = properties(&physical)?;
    let device = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
    if prop.location.type_ != device || prop.location.id != ordinal as i32 {
        return Err(format!(
            "it is not memory of this PE's GPU {ordinal} (its location is {:?} {}); create it \
             with location.id = the device this PE uses",
            prop.location.type_, prop.location.id
        ));
    }
    let export = if shareable {
        let fd_type = sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        if prop.requestedHandleTypes.0 & fd_type.0 == 0 {
            return Err(
                "it was created without CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR in \
                 requestedHandleTypes, so the other PEs' processes cannot map it; set it in the \
                 CUmemAllocationProp passed to cuMemCreate"
                    .into(),
            );
        }
        Some(physical.export_fd().map_err(|e| e.to_string())?)
    } else {
        None
    };
    Ok(ProgramBuffer {
        physical,
        size,
        export,
    })
}

/// The allocation's properties as the driver reports them.
fn properties(physical: &Physical) -> Result<sys::CUmemAllocationProp, String> {
    // SAFETY: every field of the struct is an integer, a newtype of one, a C enum whose zero
    // is a value, or a pointer, so zero is a valid value.
    let mut prop: sys::CUmemAllocationProp = unsafe { std::mem::zeroed() };
    // SAFETY: `prop` is valid for writes, and the handle is live.
    unsafe { sys::cuMemGetAllocationPropertiesFromHandle(&mut prop, physical.0) }
        .during("cuMemGetAllocationPropertiesFromHandle")
        .map_err(|e| e.to_string())?;
    Ok(prop)
}
