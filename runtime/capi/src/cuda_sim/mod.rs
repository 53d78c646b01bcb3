//! The CUDA runtime and the CUDA language's built-ins, emulated for programs built by
//! `rshmem-nvcc` for the simulator and for processes (`include-cuda-sim/rshmem/cuda_sim_abi.h`,
//! docs/cuda-sim-runtime.md).
//!
//! Design choices:
//!
//! - **A GPU thread is a coroutine of its PE** (`fiber.rs`), run by the runtime's kernel model
//!   (`Shmem::launch_kernel`): the kernel model decides which thread runs, and a device call
//!   that must wait suspends the thread's coroutine. Threads switch only inside calls.
//! - **Launches are synchronous.** A launch runs every thread to its end inside
//!   `cudaLaunchKernel`, so streams have nothing left to do and the argument array stays valid.
//! - **No CUDA names are exported.** Every function is `__rsim_` prefixed; the shipped headers
//!   give them CUDA's names as `static inline` wrappers, so a program built by nvcc links the
//!   real CUDA runtime beside libshmem.
//! - **No panic crosses C frames**: every `extern "C"` entry catches panics ([`guard`]), and a
//!   failed device call ends the run naming the PE, kernel, block and thread, as a GPU trap.
//!
//! Files: `registry.rs` what the compiler passes register; `launch.rs` configurations and
//! launches; `fiber.rs` threads as coroutines and the API device calls use; `stacks.rs` their
//! stacks; `shared.rs` `__shared__` memory per block; `initcheck.rs` reads of shared bytes no
//! thread wrote; `builtins.rs` and `vprintf.rs` the language's built-ins; `runtime_api.rs`
//! errors and devices, `memory.rs` allocation and copies (`host_range.rs` the check of their
//! addresses), `driver.rs` the driver API's errors and devices, `driver_vmm.rs` its virtual-memory calls, `streams.rs` streams and events;
//! `residency.rs` how many blocks run at once; `device_shmem.rs` the device SHMEM calls (`rshmem/device_abi.h`), `device_teams.rs`
//! their team calls and collectives, `reduce.rs` the reductions (`half.rs` their 16-bit floating formats), `mapped.rs` the table of
//! mapped loads that the inline `g` reads, `peer_views.rs` the views `nvshmem_ptr` gives of
//! peers' memory.

pub(crate) mod atomics;
pub(crate) mod builtins;
pub(crate) mod device_shmem;
pub(crate) mod device_teams;
pub(crate) mod driver;
pub(crate) mod driver_vmm;
pub(crate) mod fiber;
pub(crate) mod half;
pub(crate) mod host_range;
pub(crate) mod initcheck;
pub(crate) mod launch;
pub(crate) mod mapped;
pub(crate) mod memory;
pub(crate) mod peer_views;
pub(crate) mod reduce;
pub(crate) mod registry;
pub(crate) mod residency;
pub(crate) mod runtime_api;
pub(crate) mod shared;
pub(crate) mod stacks;
pub(crate) mod streams;
pub(crate) mod tsan_hooks;
pub(crate) mod vprintf;

use std::panic::{AssertUnwindSafe, catch_unwind};

/// Runs the body of the exported function `call`, ending the run with a message if it panics
/// (a bug of rshmem): a panic must not unwind into the program's C and C++ frames. Afterwards
/// the caller's slot and GPU thread are current again: the body may have let other PEs run
/// (a store to symmetric memory waits for the simulated world to reach the PE's clock), each
/// of which made its own current, as `with_pe` does for the C API.
pub(crate) fn guard<R>(call: &str, body: impl FnOnce() -> R) -> R {
    let slot = crate::state::slot();
    let thread = fiber::running();
    let outcome = catch_unwind(AssertUnwindSafe(body));
    // SAFETY: `slot` was current at entry, so it lives as long as `enter_slot` asks.
    unsafe { crate::state::enter_slot(slot) };
    if let Some(thread) = thread {
        thread.enter();
    }
    match outcome {
        Ok(value) => value,
        Err(payload) => fiber::fail(
            call,
            &format!(
                "internal error (please report it): {}",
                crate::state::panic_text(payload.as_ref())
            ),
        ),
    }
}
