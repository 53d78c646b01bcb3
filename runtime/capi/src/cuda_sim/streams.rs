//! Streams and events. Launches and copies are synchronous on the emulator, so a stream has
//! nothing pending: synchronising returns at once and a query says done. An event records the
//! PE's clock (simulated time on the simulator), and `cudaEventElapsedTime` is the difference.

use std::collections::HashMap;
use std::ffi::{c_float, c_int, c_void};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::cuda_sim::guard;
use crate::cuda_sim::runtime_api::{CudaError, refuse};

/// Handles are numbers from 1, never reused: a destroyed handle stays invalid.
static NEXT: AtomicUsize = AtomicUsize::new(1);

/// Live handles: a stream (`None`) or an event and the clock it recorded, if it did.
static LIVE: Mutex<Option<HashMap<usize, Option<Option<u64>>>>> = Mutex::new(None);

fn with_live<R>(body: impl FnOnce(&mut HashMap<usize, Option<Option<u64>>>) -> R) -> R {
    body(
        LIVE.lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert_with(HashMap::new),
    )
}

fn create(call: &str, out: *mut *mut c_void, event: bool) -> CudaError {
    if out.is_null() {
        return refuse(
            call,
            CudaError::InvalidValue,
            "the pointer to return the handle in is null",
        );
    }
    // Relaxed: a counter; only uniqueness matters.
    let handle = NEXT.fetch_add(1, Ordering::Relaxed);
    with_live(|live| live.insert(handle, event.then_some(None)));
    // SAFETY: checked non-null.
    unsafe { out.write(handle as *mut c_void) };
    CudaError::Success
}

/// Checks that `handle` is a live stream (null is the default stream).
fn stream(call: &str, handle: *mut c_void) -> CudaError {
    let live =
        handle.is_null() || with_live(|live| matches!(live.get(&(handle as usize)), Some(None)));
    if live {
        CudaError::Success
    } else {
        refuse(
            call,
            CudaError::InvalidResourceHandle,
            &format!("{handle:p} is not a live stream"),
        )
    }
}

/// `cudaStreamCreate` and `cudaStreamCreateWithFlags`.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cudaStreamCreate(out: *mut *mut c_void) -> c_int {
    guard("cudaStreamCreate", || {
        create("cudaStreamCreate", out, false)
    }) as c_int
}

/// `cudaStreamDestroy`.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cudaStreamDestroy(handle: *mut c_void) -> c_int {
    guard("cudaStreamDestroy", || {
        match stream("cudaStreamDestroy", handle) {
            CudaError::Success => {
                with_live(|live| live.remove(&(handle as usize)));
                CudaError::Success
            }
            refused => refused,
        }
    }) as c_int
}

/// `cudaStreamSynchronize` and `cudaStreamQuery`: nothing is pending on a stream.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cudaStreamSynchronize(handle: *mut c_void) -> c_int {
    guard("cudaStreamSynchronize", || {
        stream("cudaStreamSynchronize", handle)
    }) as c_int
}

/// `cudaEventCreate` and `cudaEventCreateWithFlags`.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cudaEventCreate(out: *mut *mut c_void) -> c_int {
    guard("cudaEventCreate", || create("cudaEventCreate", out, true)) as c_int
}

/// Runs `body` on the recorded clock of the live event `handle`.
fn event(
    call: &str,
    handle: *mut c_void,
    body: impl FnOnce(&mut Option<u64>) -> CudaError,
) -> CudaError {
    let outcome = with_live(|live| {
        live.get_mut(&(handle as usize))
            .and_then(Option::as_mut)
            .map(body)
    });
    outcome.unwrap_or_else(|| {
        refuse(
            call,
            CudaError::InvalidResourceHandle,
            &format!("{handle:p} is not a live event"),
        )
    })
}

/// `cudaEventRecord`: the PE's clock now.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cudaEventRecord(handle: *mut c_void, stream_handle: *mut c_void) -> c_int {
    guard("cudaEventRecord", || {
        let checked = stream("cudaEventRecord", stream_handle);
        if checked != CudaError::Success {
            return checked;
        }
        let now_ns = crate::state::running_pe().map_or(0, |pe| pe.shmem.now_ns());
        event("cudaEventRecord", handle, |recorded| {
            *recorded = Some(now_ns);
            CudaError::Success
        })
    }) as c_int
}

/// `cudaEventSynchronize` and `cudaEventQuery`: a recorded event is complete.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cudaEventSynchronize(handle: *mut c_void) -> c_int {
    guard("cudaEventSynchronize", || {
        event("cudaEventSynchronize", handle, |_| CudaError::Success)
    }) as c_int
}

/// `cudaEventElapsedTime`: milliseconds of the PE's clock from `start` to `end`.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cudaEventElapsedTime(
    ms: *mut c_float,
    start: *mut c_void,
    end: *mut c_void,
) -> c_int {
    guard("cudaEventElapsedTime", || {
        let mut clocks = [None, None];
        for (clock, handle) in clocks.iter_mut().zip([start, end]) {
            let code = event("cudaEventElapsedTime", handle, |recorded| {
                *clock = *recorded;
                CudaError::Success
            });
            if code != CudaError::Success {
                return code;
            }
        }
        let ([Some(from), Some(to)], false) = (clocks, ms.is_null()) else {
            return refuse(
                "cudaEventElapsedTime",
                CudaError::InvalidResourceHandle,
                "an event was not recorded, or ms is null",
            );
        };
        // SAFETY: checked non-null.
        unsafe { ms.write((to.saturating_sub(from) as f64 / 1e6) as c_float) };
        CudaError::Success
    }) as c_int
}

/// `cudaEventDestroy`.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cudaEventDestroy(handle: *mut c_void) -> c_int {
    guard("cudaEventDestroy", || {
        let code = event("cudaEventDestroy", handle, |_| CudaError::Success);
        if code == CudaError::Success {
            with_live(|live| live.remove(&(handle as usize)));
        }
        code
    }) as c_int
}
