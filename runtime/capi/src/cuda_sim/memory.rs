//! Device memory and copies: `cudaMalloc` and friends, `cudaMemcpy`, `cudaMemset`, and the
//! symbol copies of `__device__` variables.
//!
//! Device memory from `cudaMalloc` is PE-private host memory, zeroed. Symmetric memory (what
//! `nvshmem_malloc` returns, and the program's static data) is written through the runtime's
//! local write, so the simulator and the race detector see the stores. Copies are synchronous;
//! every `cudaMemcpyKind` is a copy of the PE's own memory.

use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::sync::Mutex;

use crate::cuda_sim::host_range;
use crate::cuda_sim::registry;
use crate::cuda_sim::runtime_api::{CudaError, refuse, refuse_once};
use crate::cuda_sim::{guard, peer_views};

/// Alignment of `cudaMalloc` blocks: CUDA's 256 bytes.
const ALIGN_BYTES: usize = 256;

/// Live allocations: address → size, so a bad free is refused, not corruption.
static LIVE: Mutex<Option<HashMap<usize, usize>>> = Mutex::new(None);

fn allocate(call: &str, out: *mut *mut c_void, bytes: usize) -> CudaError {
    if out.is_null() {
        return refuse(
            call,
            CudaError::InvalidValue,
            "the pointer to return the block in is null",
        );
    }
    let mut block = std::ptr::null_mut();
    // SAFETY: posix_memalign writes a block of `bytes.max(1)` bytes aligned to ALIGN_BYTES.
    if unsafe { libc::posix_memalign(&mut block, ALIGN_BYTES, bytes.max(1)) } != 0 {
        return refuse(
            call,
            CudaError::MemoryAllocation,
            &format!("cannot allocate {bytes} bytes"),
        );
    }
    // SAFETY: the new block has `bytes` bytes; `out` was checked non-null.
    unsafe {
        block.cast::<u8>().write_bytes(0, bytes);
        out.write(block);
    }
    LIVE.lock()
        .unwrap_or_else(|p| p.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(block as usize, bytes);
    CudaError::Success
}

fn release(call: &str, block: *mut c_void) -> CudaError {
    if block.is_null() {
        return CudaError::Success;
    }
    let known = LIVE
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get_or_insert_with(HashMap::new)
        .remove(&(block as usize));
    if known.is_none() {
        return refuse(
            call,
            CudaError::InvalidDevicePointer,
            &format!(
                "{block:p} is not a block from cudaMalloc or cudaMallocHost that is still allocated"
            ),
        );
    }
    // SAFETY: a block posix_memalign returned and that was not freed (it was live).
    unsafe { libc::free(block) };
    CudaError::Success
}

/// `cudaMalloc`.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cudaMalloc(out: *mut *mut c_void, bytes: usize) -> c_int {
    guard("cudaMalloc", || allocate("cudaMalloc", out, bytes)) as c_int
}

/// `cudaMallocHost` and `cudaHostAlloc` (flags do not matter on the emulator).
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cudaMallocHost(out: *mut *mut c_void, bytes: usize) -> c_int {
    guard("cudaMallocHost", || allocate("cudaMallocHost", out, bytes)) as c_int
}

/// `cudaFree` and `cudaFreeHost`.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cudaFree(block: *mut c_void) -> c_int {
    guard("cudaFree", || release("cudaFree", block)) as c_int
}

/// Copies `bytes` from `src` to `dst` as a store of this PE: through the runtime's local write
/// when `dst` is symmetric memory, a plain copy otherwise.
///
/// # Safety
/// `dst` and `src` hold `bytes` bytes of this PE's memory.
unsafe fn store(call: &str, dst: *mut c_void, src: &[u8]) -> CudaError {
    if let Some(pe) = crate::state::running_pe()
        && let Ok(sym) = pe.sym::<u8>(dst.cast_const().cast(), src.len())
    {
        return match pe.shmem.set_local(sym, src) {
            Ok(()) => CudaError::Success,
            Err(err) => refuse(call, CudaError::InvalidValue, &err.to_string()),
        };
    }
    // SAFETY: the caller's contract; `src` may overlap `dst` (memmove semantics).
    unsafe { std::ptr::copy(src.as_ptr(), dst.cast::<u8>(), src.len()) };
    CudaError::Success
}

/// Reads `bytes` from `src` as a load of this PE: through its device when `src` is symmetric
/// memory, so that the race detector sees the read (a copy to the host of what a peer put,
/// with no barrier between, is a race), a plain copy otherwise.
///
/// # Safety
/// `src` holds `bytes` bytes of this PE's memory.
unsafe fn load(src: *const c_void, bytes: usize) -> Vec<u8> {
    if let Some(pe) = crate::state::running_pe()
        && let Some(range) = crate::sim_host::check::symmetric_range(src, bytes)
        && range.len as usize == bytes
    {
        let mut out = vec![0; bytes];
        let slot = crate::state::slot();
        hw::Device::read_local(pe.shmem.device(), range, &mut out);
        // Why: the simulator may have run other PEs meanwhile, each making its own slot current.
        // SAFETY: `slot` was current at entry.
        unsafe { crate::state::enter_slot(slot) };
        return out;
    }
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts(src.cast::<u8>(), bytes) }.to_vec()
}

/// The first of `ranges` (an argument's name, its address and size) that is not memory of
/// this process, refused for `call` as the CUDA runtime refuses it.
fn check_ranges(call: &str, ranges: &[(&str, *const c_void, usize)]) -> Result<(), CudaError> {
    for &(what, addr, bytes) in ranges {
        if let Some(why) = host_range::not_mapped(addr as usize, bytes) {
            return Err(refuse_once(call, what, CudaError::InvalidValue, &why));
        }
    }
    Ok(())
}

/// Copies `bytes` from `src` to `dst` for `call`, after checking both are this process's.
///
/// # Safety
/// `dst` and `src` hold `bytes` bytes, or are not mapped at all (refused).
unsafe fn copy(call: &str, dst: *mut c_void, src: *const c_void, bytes: usize) -> CudaError {
    if bytes == 0 {
        return CudaError::Success;
    }
    if dst.is_null() || src.is_null() {
        return refuse(call, CudaError::InvalidValue, "a null pointer");
    }
    if let Err(code) = check_ranges(
        call,
        &[
            ("the source", src, bytes),
            ("the destination", dst.cast_const(), bytes),
        ],
    ) {
        return code;
    }
    // A copy from or into a view of a peer (`nvshmem_ptr`) is a get or a put.
    peer_views::route(src, bytes, false);
    // SAFETY: the caller's contract.
    let from = unsafe { load(src, bytes) };
    if peer_views::route(dst, bytes, true) {
        // SAFETY: the caller's contract; the view holds `bytes` bytes at `dst`.
        unsafe { std::ptr::copy_nonoverlapping(from.as_ptr(), dst.cast::<u8>(), bytes) };
        peer_views::flush();
        return CudaError::Success;
    }
    // SAFETY: the caller's contract.
    unsafe { store(call, dst, &from) }
}

/// `cudaMemcpy` (and `cudaMemcpyAsync`: streams are synchronous).
///
/// # Safety
/// `dst` and `src` hold `bytes` bytes, or are not mapped at all (refused).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __rsim_cudaMemcpy(
    dst: *mut c_void,
    src: *const c_void,
    bytes: usize,
    kind: c_int,
) -> c_int {
    guard("cudaMemcpy", || {
        if !(0..=4).contains(&kind) {
            return refuse(
                "cudaMemcpy",
                CudaError::InvalidMemcpyDirection,
                &format!("kind {kind} is not a cudaMemcpyKind (0 to 4)"),
            );
        }
        // SAFETY: the caller's contract.
        unsafe { copy("cudaMemcpy", dst, src, bytes) }
    }) as c_int
}

/// `cudaMemset` (and `cudaMemsetAsync`).
///
/// # Safety
/// `dst` holds `bytes` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __rsim_cudaMemset(dst: *mut c_void, value: c_int, bytes: usize) -> c_int {
    guard("cudaMemset", || {
        if bytes == 0 {
            return CudaError::Success;
        }
        if dst.is_null() {
            return refuse("cudaMemset", CudaError::InvalidValue, "a null pointer");
        }
        if let Err(code) = check_ranges(
            "cudaMemset",
            &[("the destination", dst.cast_const(), bytes)],
        ) {
            return code;
        }
        // SAFETY: the caller's contract.
        unsafe { store("cudaMemset", dst, &vec![value as u8; bytes]) }
    }) as c_int
}

/// The address of the device variable whose host shadow is `symbol`, checked for `bytes` at
/// `offset`.
fn symbol_range(
    call: &str,
    symbol: *const c_void,
    bytes: usize,
    offset: usize,
) -> Result<*mut u8, CudaError> {
    let Some((addr, size)) = registry::variable(symbol) else {
        return Err(refuse(
            call,
            CudaError::InvalidSymbol,
            &format!(
                "{symbol:p} is not a __device__ or __constant__ variable of a file built with rshmem-nvcc"
            ),
        ));
    };
    if offset
        .checked_add(bytes)
        .is_none_or(|end| end as u64 > size)
    {
        return Err(refuse(
            call,
            CudaError::InvalidValue,
            &format!("{bytes} bytes at offset {offset} run past the variable's {size} bytes"),
        ));
    }
    Ok((addr + offset) as *mut u8)
}

/// `cudaMemcpyToSymbol`.
///
/// # Safety
/// `src` holds `bytes` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __rsim_cudaMemcpyToSymbol(
    symbol: *const c_void,
    src: *const c_void,
    bytes: usize,
    offset: usize,
) -> c_int {
    guard("cudaMemcpyToSymbol", || {
        match symbol_range("cudaMemcpyToSymbol", symbol, bytes, offset) {
            // SAFETY: the variable holds the range (checked); `src` the caller's contract.
            Ok(dst) => unsafe { copy("cudaMemcpyToSymbol", dst.cast(), src, bytes) as c_int },
            Err(code) => code as c_int,
        }
    })
}

/// `cudaMemcpyFromSymbol`.
///
/// # Safety
/// `dst` holds `bytes` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __rsim_cudaMemcpyFromSymbol(
    dst: *mut c_void,
    symbol: *const c_void,
    bytes: usize,
    offset: usize,
) -> c_int {
    guard("cudaMemcpyFromSymbol", || {
        match symbol_range("cudaMemcpyFromSymbol", symbol, bytes, offset) {
            // SAFETY: as in cudaMemcpyToSymbol.
            Ok(src) => unsafe { copy("cudaMemcpyFromSymbol", dst, src.cast(), bytes) as c_int },
            Err(code) => code as c_int,
        }
    })
}

/// `cudaGetSymbolAddress`.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cudaGetSymbolAddress(
    out: *mut *mut c_void,
    symbol: *const c_void,
) -> c_int {
    guard("cudaGetSymbolAddress", || {
        if out.is_null() {
            return refuse(
                "cudaGetSymbolAddress",
                CudaError::InvalidValue,
                "the pointer to return the address in is null",
            );
        }
        match symbol_range("cudaGetSymbolAddress", symbol, 0, 0) {
            Ok(addr) => {
                // SAFETY: checked non-null.
                unsafe { out.write(addr.cast()) };
                CudaError::Success
            }
            Err(code) => code,
        }
    }) as c_int
}
