//! A program's own GPU buffer registered as symmetric memory on the CUDA backend with PEs as
//! threads of one process (`Shmem::register_buffer`, `hw::Device::attach_buffer`): each PE
//! makes a buffer with the driver's virtual-memory API, registers it, a neighbour puts into it,
//! and the PE reads the put through its own mapping; unregistered, registered again; memory
//! that is not such a buffer is refused on every PE. The C API's processes are checked by
//! `tools/gpu/cuda-programs.sh`. Skips, printing why, where CUDA is missing; with fewer GPUs
//! than PEs the PEs share them.

use std::ffi::c_void;

use conformance::BodyError;
use conformance::cuda::{run_on_cuda, unavailable};
use cudarc::driver::sys;
use hw::cuda::CudaBackend;
use rshmem::Shmem;

/// The granularity of an H200 and of every GPU CUDA 13 runs on: 2 MiB.
const BUFFER_BYTES: usize = 2 << 20;

fn driver(call: &str, result: sys::CUresult) -> Result<(), BodyError> {
    match result {
        sys::CUresult::CUDA_SUCCESS => Ok(()),
        other => Err(BodyError::Violated(format!("{call} failed: {other:?}"))),
    }
}

/// A buffer of the current context's GPU: created, reserved, mapped, readable and writable.
struct Buffer {
    handle: sys::CUmemGenericAllocationHandle,
    addr: sys::CUdeviceptr,
}

impl Buffer {
    fn new() -> Result<Buffer, BodyError> {
        let mut device = 0;
        // SAFETY: a valid place for the result; the launcher made the PE's context current.
        driver("cuCtxGetDevice", unsafe {
            sys::cuCtxGetDevice(&mut device)
        })?;
        // SAFETY: every field of the struct is an integer, a C enum whose zero is a value, or
        // a pointer.
        let mut prop: sys::CUmemAllocationProp = unsafe { std::mem::zeroed() };
        prop.type_ = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = device;
        let mut buffer = Buffer { handle: 0, addr: 0 };
        // SAFETY: valid places and properties; the size is a multiple of the granularity.
        unsafe {
            driver(
                "cuMemCreate",
                sys::cuMemCreate(&mut buffer.handle, BUFFER_BYTES, &prop, 0),
            )?;
            driver(
                "cuMemAddressReserve",
                sys::cuMemAddressReserve(&mut buffer.addr, BUFFER_BYTES, 0, 0, 0),
            )?;
            driver(
                "cuMemMap",
                sys::cuMemMap(buffer.addr, BUFFER_BYTES, 0, buffer.handle, 0),
            )?;
            let access = sys::CUmemAccessDesc {
                location: prop.location,
                flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
            };
            driver(
                "cuMemSetAccess",
                sys::cuMemSetAccess(buffer.addr, BUFFER_BYTES, &access, 1),
            )?;
        }
        Ok(buffer)
    }

    /// The first word, read through this mapping.
    fn first_word(&self) -> Result<u64, BodyError> {
        let mut word = 0u64;
        // SAFETY: the buffer is mapped and at least 8 bytes long.
        driver("cuMemcpyDtoH", unsafe {
            sys::cuMemcpyDtoH_v2((&raw mut word).cast::<c_void>(), self.addr, 8)
        })?;
        Ok(word)
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: mapped, reserved and created once by `new`; nothing reaches it any more.
        unsafe {
            sys::cuMemUnmap(self.addr, BUFFER_BYTES);
            sys::cuMemAddressFree(self.addr, BUFFER_BYTES);
            sys::cuMemRelease(self.handle);
        }
    }
}

fn registered_buffers(shmem: &Shmem<CudaBackend>) -> Result<(), BodyError> {
    let (me, n) = (shmem.my_pe(), shmem.n_pes());
    let buffer = Buffer::new()?;
    for round in 0..2u64 {
        let sym = shmem.register_buffer(buffer.addr, BUFFER_BYTES as u64)?;
        let word = 100 * round + u64::from(me) + 1;
        shmem.put(sym.slice(..8)?, &word.to_le_bytes(), (me + 1) % n)?;
        shmem.barrier_all()?;
        let want = 100 * round + u64::from((me + n - 1) % n) + 1;
        let seen = buffer.first_word()?;
        if seen != want {
            return Err(BodyError::Violated(format!(
                "round {round}: the buffer holds {seen}, not the {want} its neighbour put"
            )));
        }
        shmem.unregister_buffer(sym, BUFFER_BYTES as u64)?;
    }
    // Host memory is no buffer of the driver's virtual-memory API: every PE is refused.
    let host = vec![0u8; BUFFER_BYTES];
    match shmem.register_buffer(host.as_ptr() as u64, BUFFER_BYTES as u64) {
        Err(e) if e.to_string().contains("virtual-memory API") => Ok(()),
        Err(e) => Err(BodyError::Violated(format!(
            "refused for another reason: {e}"
        ))),
        Ok(_) => Err(BodyError::Violated("host memory was registered".into())),
    }
}

#[test]
fn a_program_buffer_takes_puts_on_pes_as_threads_and_unregisters() {
    for n_pes in [1, 2] {
        if let Some(reason) = unavailable(n_pes) {
            eprintln!("skipped {n_pes} PEs: {reason}");
            continue;
        }
        if let Err(e) = run_on_cuda(n_pes, registered_buffers) {
            panic!("{e}");
        }
    }
}
