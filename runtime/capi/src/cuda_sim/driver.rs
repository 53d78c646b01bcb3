//! The CUDA driver API's calls around its memory management, for programs built by
//! `rshmem-nvcc`: `CUresult` and its names, `cuInit`, devices (every one the PE's simulated
//! GPU, as the runtime API's), and what the driver's calls share: the refusal of a misuse with
//! CUDA's code, said once per PE, call and argument (`driver_vmm.rs` the memory calls).

use std::ffi::{c_char, c_int, c_uint};

use crate::cuda_sim::guard;
use crate::cuda_sim::runtime_api::{current_device, device_count, say_once};

/// `CUresult`: the codes this emulation returns, with CUDA's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub(crate) enum CuResult {
    Success = 0,
    InvalidValue = 1,
    OutOfMemory = 2,
    InvalidDevice = 101,
    NotSupported = 801,
}

/// Every code, its name and its text, for `cuGetErrorName` and `cuGetErrorString`.
const RESULTS: [(CuResult, &str, &str); 5] = [
    (CuResult::Success, "CUDA_SUCCESS\0", "no error\0"),
    (
        CuResult::InvalidValue,
        "CUDA_ERROR_INVALID_VALUE\0",
        "invalid argument\0",
    ),
    (
        CuResult::OutOfMemory,
        "CUDA_ERROR_OUT_OF_MEMORY\0",
        "out of memory\0",
    ),
    (
        CuResult::InvalidDevice,
        "CUDA_ERROR_INVALID_DEVICE\0",
        "invalid device ordinal\0",
    ),
    (
        CuResult::NotSupported,
        "CUDA_ERROR_NOT_SUPPORTED\0",
        "operation not supported\0",
    ),
];

/// `CU_MEM_LOCATION_TYPE_DEVICE`.
const LOCATION_DEVICE: c_int = 1;

/// `CUmemLocation`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct MemLocation {
    pub(super) kind: c_int,
    pub(super) id: c_int,
}

/// Why a call fails: its code, the argument at fault and what was wrong with it.
pub(super) struct Refusal {
    code: CuResult,
    what: &'static str,
    why: String,
}

pub(super) fn refuse(code: CuResult, what: &'static str, why: impl Into<String>) -> Refusal {
    Refusal {
        code,
        what,
        why: why.into(),
    }
}

/// Writes `value` to `out`, refusing a null pointer named `what`.
pub(super) fn write_out<T>(out: *mut T, what: &'static str, value: T) -> Result<(), Refusal> {
    if out.is_null() {
        return Err(refuse(
            CuResult::InvalidValue,
            what,
            format!("{what} is null"),
        ));
    }
    // SAFETY: checked non-null; the program passes a pointer to a `T`.
    unsafe { out.write(value) };
    Ok(())
}
/// Runs the body of the exported driver call `call`, returning its code as an int, after
/// saying once what was wrong if it failed.
pub(super) fn driver_call(call: &str, body: impl FnOnce() -> Result<(), Refusal>) -> c_int {
    guard(call, || match body() {
        Ok(()) => CuResult::Success,
        Err(refusal) => {
            say_once(call, refusal.what, &refusal.why);
            refusal.code
        }
    }) as c_int
}

/// Checks that `location` is a device the PE sees.
pub(super) fn check_device_location(
    what: &'static str,
    location: MemLocation,
) -> Result<(), Refusal> {
    if location.kind != LOCATION_DEVICE {
        return Err(refuse(
            CuResult::InvalidValue,
            what,
            format!(
                "{what}.type {} is not CU_MEM_LOCATION_TYPE_DEVICE: only device memory is emulated",
                location.kind
            ),
        ));
    }
    if !(0..device_count()).contains(&location.id) {
        return Err(refuse(
            CuResult::InvalidDevice,
            what,
            format!(
                "{what}.id {} is not a device: the PE sees devices 0..{}",
                location.id,
                device_count()
            ),
        ));
    }
    Ok(())
}

/// `cuInit`: the emulated driver needs no set-up; flags must be 0.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cuInit(flags: c_uint) -> c_int {
    driver_call("cuInit", || {
        if flags != 0 {
            return Err(refuse(CuResult::InvalidValue, "flags", "flags must be 0"));
        }
        Ok(())
    })
}

/// `cuDeviceGetCount`: as `cudaGetDeviceCount`.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cuDeviceGetCount(count: *mut c_int) -> c_int {
    driver_call("cuDeviceGetCount", || {
        write_out(count, "count", device_count())
    })
}

/// `cuDeviceGet`: the device of `ordinal`, its own number.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cuDeviceGet(device: *mut c_int, ordinal: c_int) -> c_int {
    driver_call("cuDeviceGet", || {
        if !(0..device_count()).contains(&ordinal) {
            return Err(refuse(
                CuResult::InvalidDevice,
                "ordinal",
                format!(
                    "device {ordinal} does not exist: the PE sees devices 0..{}",
                    device_count()
                ),
            ));
        }
        write_out(device, "device", ordinal)
    })
}

/// `cuCtxGetDevice`: the device `cudaSetDevice` made current.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cuCtxGetDevice(device: *mut c_int) -> c_int {
    driver_call("cuCtxGetDevice", || {
        write_out(device, "device", current_device())
    })
}

type Pick = fn(&(CuResult, &'static str, &'static str)) -> &'static str;

fn describe(code: c_int, out: *mut *const c_char, pick: Pick) -> c_int {
    let entry = RESULTS.iter().find(|entry| entry.0 as c_int == code);
    let text = entry.map_or(std::ptr::null(), |entry| pick(entry).as_ptr().cast());
    if !out.is_null() {
        // SAFETY: checked non-null; the program passes a pointer to a string pointer.
        unsafe { out.write(text) };
    }
    let known = entry.is_some() && !out.is_null();
    (if known {
        CuResult::Success
    } else {
        CuResult::InvalidValue
    }) as c_int
}

/// `cuGetErrorName`.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cuGetErrorName(code: c_int, name: *mut *const c_char) -> c_int {
    describe(code, name, |entry| entry.1)
}

/// `cuGetErrorString`.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cuGetErrorString(code: c_int, text: *mut *const c_char) -> c_int {
    describe(code, text, |entry| entry.2)
}
