//! The CUDA runtime's errors and device queries: `cudaError_t` with CUDA's values, the last
//! error of each PE, and one simulated GPU per PE (an H100/H200-like device).
//!
//! Why per PE: on the simulator every PE is a coroutine of one process, and a PE must not see
//! another's last error or current device.

use std::collections::HashMap;
use std::ffi::{c_char, c_int};
use std::io::Write;
use std::sync::Mutex;

use crate::cuda_sim::guard;
use crate::cuda_sim::shared::DYNAMIC_SHARED_BYTES;

/// `cudaError_t`: the codes this emulation returns, with CUDA's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub(crate) enum CudaError {
    Success = 0,
    InvalidValue = 1,
    MemoryAllocation = 2,
    InvalidConfiguration = 9,
    InvalidSymbol = 13,
    InvalidDevicePointer = 17,
    InvalidMemcpyDirection = 21,
    InvalidDeviceFunction = 98,
    InvalidDevice = 101,
    InvalidResourceHandle = 400,
    NotReady = 600,
}

/// Every code, its name and its text, for `cudaGetErrorName` and `cudaGetErrorString`.
const ERRORS: [(CudaError, &str, &str); 11] = [
    (CudaError::Success, "cudaSuccess\0", "no error\0"),
    (
        CudaError::InvalidValue,
        "cudaErrorInvalidValue\0",
        "invalid argument\0",
    ),
    (
        CudaError::MemoryAllocation,
        "cudaErrorMemoryAllocation\0",
        "out of memory\0",
    ),
    (
        CudaError::InvalidConfiguration,
        "cudaErrorInvalidConfiguration\0",
        "invalid configuration argument\0",
    ),
    (
        CudaError::InvalidSymbol,
        "cudaErrorInvalidSymbol\0",
        "invalid device symbol\0",
    ),
    (
        CudaError::InvalidDevicePointer,
        "cudaErrorInvalidDevicePointer\0",
        "invalid device pointer\0",
    ),
    (
        CudaError::InvalidMemcpyDirection,
        "cudaErrorInvalidMemcpyDirection\0",
        "invalid copy direction for memcpy\0",
    ),
    (
        CudaError::InvalidDeviceFunction,
        "cudaErrorInvalidDeviceFunction\0",
        "invalid device function\0",
    ),
    (
        CudaError::InvalidDevice,
        "cudaErrorInvalidDevice\0",
        "invalid device ordinal\0",
    ),
    (
        CudaError::InvalidResourceHandle,
        "cudaErrorInvalidResourceHandle\0",
        "invalid resource handle\0",
    ),
    (
        CudaError::NotReady,
        "cudaErrorNotReady\0",
        "device not ready\0",
    ),
];

/// The PE a call is made for: its number, or `u32::MAX` before `shmem_init`.
pub(crate) fn this_pe() -> u32 {
    crate::state::running_pe().map_or(u32::MAX, |pe| pe.shmem.my_pe())
}

/// Each PE's last error and current device.
#[derive(Default, Clone, Copy)]
struct PeCuda {
    last_error: Option<CudaError>,
    device: c_int,
}

static PES: Mutex<Option<HashMap<u32, PeCuda>>> = Mutex::new(None);

fn with_this_pe<R>(body: impl FnOnce(&mut PeCuda) -> R) -> R {
    let mut pes = PES.lock().unwrap_or_else(|poison| poison.into_inner());
    body(
        pes.get_or_insert_with(HashMap::new)
            .entry(this_pe())
            .or_default(),
    )
}

/// Returns `error` from a runtime call, remembering it as the PE's last error, and tells why on
/// standard error (the program may not check the code).
pub(crate) fn refuse(call: &str, error: CudaError, why: &str) -> CudaError {
    with_this_pe(|pe| pe.last_error = Some(error));
    say(call, why);
    error
}

/// Says on standard error why the PE's `call` failed.
fn say(call: &str, why: &str) {
    let who = match this_pe() {
        u32::MAX => String::new(),
        pe => format!("PE {pe}: "),
    };
    // One write of the whole line: standard error is unbuffered, and PEs that are processes
    // share it, so a line written in pieces interleaves with theirs. Why ignore a failed
    // write: the code is returned either way.
    let line = format!("rshmem: {who}{call}: {why}\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
}

/// Says why the PE's `call` failed for `what` (an argument), only the first time, so that a
/// loop of failing calls does not flood standard error.
pub(crate) fn say_once(call: &str, what: &str, why: &str) {
    static SAID: Mutex<Option<std::collections::HashSet<String>>> = Mutex::new(None);
    let first = SAID
        .lock()
        .unwrap_or_else(|poison| poison.into_inner())
        .get_or_insert_with(Default::default)
        .insert(format!("{} {call} {what}", this_pe()));
    if first {
        say(call, &format!("{what}: {why}"));
    }
}

/// As [`refuse`], but says why only the first time the PE's `call` is refused for `what`.
pub(crate) fn refuse_once(call: &str, what: &str, error: CudaError, why: &str) -> CudaError {
    with_this_pe(|pe| pe.last_error = Some(error));
    say_once(call, what, why);
    error
}

/// `cudaGetLastError`: the last error, which is then cleared.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cudaGetLastError() -> c_int {
    guard("cudaGetLastError", || {
        with_this_pe(|pe| pe.last_error.take()).unwrap_or(CudaError::Success) as c_int
    })
}

/// `cudaPeekAtLastError`: the last error, kept.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cudaPeekAtLastError() -> c_int {
    guard("cudaPeekAtLastError", || {
        with_this_pe(|pe| pe.last_error).unwrap_or(CudaError::Success) as c_int
    })
}

fn describe(
    code: c_int,
    pick: fn(&(CudaError, &'static str, &'static str)) -> &'static str,
) -> *const c_char {
    let entry = ERRORS.iter().find(|entry| entry.0 as c_int == code);
    entry.map_or(c"unrecognized error code".as_ptr(), |entry| {
        pick(entry).as_ptr().cast()
    })
}

/// `cudaGetErrorName`.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cudaGetErrorName(code: c_int) -> *const c_char {
    describe(code, |entry| entry.1)
}

/// `cudaGetErrorString`.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cudaGetErrorString(code: c_int) -> *const c_char {
    describe(code, |entry| entry.2)
}

/// How many devices a PE sees: one per PE of its node, so that `cudaSetDevice(node rank)` of
/// NVSHMEM programs works; every one of them is the PE's own simulated GPU.
pub(crate) fn device_count() -> c_int {
    crate::state::running_pe().map_or(1, |pe| pe.shmem.n_pes().max(1) as c_int)
}

/// `cudaGetDeviceCount`.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cudaGetDeviceCount(count: *mut c_int) -> c_int {
    guard("cudaGetDeviceCount", || {
        // SAFETY: the program passes a pointer to an int, or null (refused).
        match unsafe { count.as_mut() } {
            Some(count) => {
                *count = device_count();
                CudaError::Success
            }
            None => refuse(
                "cudaGetDeviceCount",
                CudaError::InvalidValue,
                "count is null",
            ),
        }
    }) as c_int
}

/// `cudaSetDevice`: any device of [`device_count`]; all are the PE's GPU.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cudaSetDevice(device: c_int) -> c_int {
    guard("cudaSetDevice", || {
        // Before shmem_init the number of PEs is not known: any device is taken.
        let limit = if crate::state::running_pe().is_some() {
            device_count()
        } else {
            c_int::MAX
        };
        if !(0..limit).contains(&device) {
            let why = format!("device {device} does not exist: the PE sees devices 0..{limit}");
            return refuse("cudaSetDevice", CudaError::InvalidDevice, &why);
        }
        with_this_pe(|pe| pe.device = device);
        CudaError::Success
    }) as c_int
}

/// The device `cudaSetDevice` made current for the PE.
pub(crate) fn current_device() -> c_int {
    with_this_pe(|pe| pe.device)
}

/// `cudaGetDevice`.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cudaGetDevice(device: *mut c_int) -> c_int {
    guard("cudaGetDevice", || {
        // SAFETY: the program passes a pointer to an int, or null (refused).
        match unsafe { device.as_mut() } {
            Some(device) => {
                *device = current_device();
                CudaError::Success
            }
            None => refuse("cudaGetDevice", CudaError::InvalidValue, "device is null"),
        }
    }) as c_int
}

/// The simulated GPU's name, for `cudaDeviceProp::name`.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_device_name() -> *const c_char {
    c"rshmem simulated GPU".as_ptr()
}

/// `cudaDeviceGetAttribute`'s value of `attribute` (`cudaDeviceAttr`, CUDA's numbers), or -1
/// for one the emulation does not describe. The header's `cudaGetDeviceProperties` is written
/// over it.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_device_attribute(attribute: c_int) -> i64 {
    const MIB: i64 = 1024 * 1024;
    match attribute {
        1 => 1024,                         // MaxThreadsPerBlock
        2 | 3 => 1024,                     // MaxBlockDimX, Y
        4 => 64,                           // MaxBlockDimZ
        5 => i64::from(i32::MAX),          // MaxGridDimX
        6 | 7 => 65535,                    // MaxGridDimY, Z
        8 => 48 * 1024,                    // MaxSharedMemoryPerBlock
        9 => 64 * 1024,                    // TotalConstantMemory
        10 => 32,                          // WarpSize
        12 | 82 => 65536,                  // MaxRegistersPerBlock, PerMultiprocessor
        13 => 1_980_000,                   // ClockRate (kHz)
        16 => 132,                         // MultiProcessorCount
        36 => 2_619_000,                   // MemoryClockRate (kHz)
        37 => 5120,                        // GlobalMemoryBusWidth
        38 => 50 * MIB,                    // L2CacheSize
        39 => 2048,                        // MaxThreadsPerMultiProcessor
        15 | 19 | 31 | 41 | 95 => 1, // overlap, map host memory, concurrent kernels, UVA, cooperative launch
        40 => 2,                     // AsyncEngineCount
        75 => 9,                     // ComputeCapabilityMajor
        76 => 0,                     // ComputeCapabilityMinor
        81 => 228 * 1024,            // MaxSharedMemoryPerMultiprocessor
        83 => 0,                     // ManagedMemory
        97 => DYNAMIC_SHARED_BYTES as i64, // MaxSharedMemoryPerBlockOptin
        _ => -1,
    }
}

/// The simulated GPU's memory in bytes (`totalGlobalMem`): an H200's.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_device_memory_bytes() -> u64 {
    141 * 1024 * 1024 * 1024
}

/// `cudaDeviceSynchronize`: launches and copies are synchronous, so there is nothing to wait
/// for.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cudaDeviceSynchronize() -> c_int {
    CudaError::Success as c_int
}

/// `cudaDeviceReset`: clears the PE's last error; memory stays (the emulation keeps no
/// device context to tear down).
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cudaDeviceReset() -> c_int {
    guard("cudaDeviceReset", || {
        with_this_pe(|pe| pe.last_error = None)
    });
    CudaError::Success as c_int
}
