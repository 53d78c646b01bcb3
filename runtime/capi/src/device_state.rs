//! The device-side API's state for kernels that nvcc compiled into the program
//! (`rshmem/device_gpu.cuh`, docs/nvshmem-api.md).
//!
//! Every translation unit that includes the header has its own `static __constant__`
//! `rshmem_state` and registers, from a static constructor, a binder: a function of the
//! program that copies given bytes into that symbol with `cudaMemcpyToSymbol`. libshmem never
//! calls the CUDA runtime itself (it exports no CUDA runtime name; the program links the real
//! one), so the binders are how the state reaches the kernels.
//!
//! `rshmemx_bind_device_state` (called by `nvshmem_init` and after each `nvshmem_malloc`)
//! computes the PE's state on the CUDA backend and, if it differs from what was last bound,
//! calls every binder; a unit registered after init is bound at once. On other backends it
//! does nothing: the simulator runs device calls in libshmem. The binders are per process:
//! the CUDA backend runs one PE per process under the launcher.

use std::ffi::{c_int, c_void};
use std::sync::{Mutex, MutexGuard, PoisonError};

use hw::cuda::CudaDevice;

use crate::fail::CallError;
use crate::state::{is_running, with_pe};

/// A program's binder: copies `bytes` bytes at `state` into its unit's `rshmem_state` and
/// returns the CUDA runtime's status (0 is success).
pub type DeviceBinder = unsafe extern "C" fn(state: *const c_void, bytes: usize) -> c_int;

/// The registered binders, and the state they were last given (`None`: not bound yet).
struct Binders {
    all: Vec<DeviceBinder>,
    bound: Option<Vec<u8>>,
}

static BINDERS: Mutex<Binders> = Mutex::new(Binders {
    all: Vec::new(),
    bound: None,
});

/// The binders; a panic of an earlier holder left nothing half-written (pushes and whole
/// assignments only), so a poisoned lock is used as it is.
fn binders() -> MutexGuard<'static, Binders> {
    BINDERS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Registers a translation unit's binder (from its static constructor, possibly before
/// `main`); after init it is bound at once.
#[unsafe(no_mangle)]
pub extern "C" fn rshmemx_register_device_binder(binder: DeviceBinder) {
    let running = {
        let mut binders = binders();
        binders.all.push(binder);
        // Why forget the bound state: the new unit has none yet, and binding again is cheap.
        binders.bound = None;
        is_running()
    };
    if running {
        rshmemx_bind_device_state();
    }
}

/// Binds the PE's state into every registered unit if it changed since the last binding;
/// nothing on backends other than CUDA or when no unit registered.
#[unsafe(no_mangle)]
pub extern "C" fn rshmemx_bind_device_state() {
    crate::memory::note_nvshmem_program();
    with_pe("rshmemx_bind_device_state", |me| {
        let Some(device) = me.shmem.device().downcast_ref::<CudaDevice>() else {
            return Ok(());
        };
        let mut binders = binders();
        if binders.all.is_empty() {
            return Ok(());
        }
        let wait_timeout_ns = me.shmem.config().wait_timeout_ms.saturating_mul(1_000_000);
        let state = device
            .device_state(wait_timeout_ns)
            .map_err(|e| CallError::DeviceState(e.to_string()))?;
        if binders.bound.as_deref() == Some(&state[..]) {
            return Ok(());
        }
        for binder in &binders.all {
            // SAFETY: the binder is the program's, registered by rshmem/device_gpu.cuh; it
            // reads `state.len()` bytes at the pointer, which live until it returns.
            let status = unsafe { binder(state.as_ptr().cast(), state.len()) };
            if status != 0 {
                return Err(CallError::DeviceState(format!(
                    "cudaMemcpyToSymbol returned CUDA error {status}; check that the program \
                     runs on the GPU the launcher gave this PE (cudaSetDevice before nvshmem_init)"
                )));
            }
        }
        binders.bound = Some(state);
        Ok(())
    });
}
