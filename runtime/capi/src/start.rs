//! How `shmem_init` gets its PE: the backend, its device, and the configuration.
//!
//! A process started by `oshrun` (or on its own) runs one PE on the backend that
//! `RSHMEM_BACKEND` names ([`BACKEND_VAR`]): the process backend when it is unset or
//! `process`, the CUDA backend for `cuda` (what `oshrun --gpu` sets for every rank). The host
//! of a simulated run hands each PE's coroutine its device before the program starts
//! ([`Slot::provide`]), so the same `shmem_init` picks it up there.
//!
//! Each backend has its own defaults where the environment is silent: a PE of the process
//! backend has no GPU, so its heap is host memory ([`C_DEFAULTS`]); a PE on a GPU allocates
//! GPU memory, as NVSHMEM does ([`CUDA_DEFAULTS`]).

use std::cell::Cell;
use std::io::Write;
use std::sync::{Arc, Mutex};

use hw::any::AnyDevice;
use hw::bootstrap::Bootstrap;
use rshmem::{Config, Shmem};

use crate::fail::CallError;
use crate::state::{Backend, Slot};

/// The environment variable that picks the backend a PE starts on: `process` (the default)
/// or `cuda`.
pub(crate) const BACKEND_VAR: &str = "RSHMEM_BACKEND";

/// What a C program's PE gets where the environment is silent: its PEs have no GPU, so the
/// symmetric heap `shmem_malloc` uses is host memory sized by `SHMEM_SYMMETRIC_SIZE`, as in
/// other OpenSHMEM implementations, and there is no device heap unless asked for. Team slots
/// are the most the runtime allows, since each active set of the deprecated collectives
/// keeps one for the life of the process (`active_set.rs`).
pub(crate) const C_DEFAULTS: [(&str, &str); 4] = [
    ("SHMEM_SYMMETRIC_SIZE", "1g"),
    ("SHMEM_DEVICE_SYMMETRIC_SIZE", "0"),
    ("SHMEM_SYMMETRIC_HEAP_DEFAULT", "HOST"),
    ("RSHMEM_TEAMS_MAX", "64"),
];

/// The defaults of a PE on a GPU: `shmem_malloc` returns GPU memory of a device heap that
/// grows on demand up to 128 GiB, the default of NVSHMEM's `NVSHMEM_MAX_MEMORY_PER_GPU` (it
/// costs address space only until used; docs/heaps.md). A host heap of 256 MiB beside it (a memfd
/// every PE maps, registered with CUDA, which costs its memory once touched or registered)
/// serves `shmem_malloc_with_hints` and `SHMEM_SYMMETRIC_HEAP_DEFAULT=HOST`, for programs whose
/// host code loads and stores symmetric memory. Team slots as in [`C_DEFAULTS`].
const CUDA_DEFAULTS: [(&str, &str); 4] = [
    ("SHMEM_SYMMETRIC_SIZE", "256m"),
    ("SHMEM_DEVICE_SYMMETRIC_SIZE", "128g"),
    ("SHMEM_SYMMETRIC_HEAP_DEFAULT", "DEVICE"),
    ("RSHMEM_TEAMS_MAX", "64"),
];

/// The backends a PE of a C program starts on by itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Started {
    /// The process backend: a PE per process, memory in memfds.
    Process,
    /// The CUDA backend: a PE per process on its GPU.
    Cuda,
}

impl Started {
    /// The backend `RSHMEM_BACKEND` names; when it is unset or empty, the CUDA backend for a
    /// program built for GPUs (`gpu_program`: nvcc built its NVSHMEM initialisation, as on
    /// a machine where NVSHMEM runs it) and the process backend for others.
    ///
    /// # Errors
    /// [`CallError::Argument`] naming the accepted values for any other value.
    fn from_env(gpu_program: bool) -> Result<Started, CallError> {
        let value = std::env::var_os(BACKEND_VAR).map(|v| v.to_string_lossy().into_owned());
        match value.as_deref().map(str::trim) {
            None | Some("") if gpu_program => Ok(Started::Cuda),
            None | Some("" | "process") => Ok(Started::Process),
            Some("cuda") => Ok(Started::Cuda),
            Some(other) => Err(CallError::Argument(format!(
                "{BACKEND_VAR}={other:?} names no backend; set it to `process` (the default) \
                 or `cuda` (what `oshrun --gpu` sets), or leave it unset"
            ))),
        }
    }

    /// This backend's defaults where the environment is silent.
    fn defaults(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Started::Process => &C_DEFAULTS,
            Started::Cuda => &CUDA_DEFAULTS,
        }
    }
}

/// The most address space the simulator's heaps of one run take, in bytes: half of the 128
/// TiB a Linux process has on x86-64 (47-bit addresses; AArch64's 48-bit kernels give twice
/// that), so that stacks, the program's copies and the rest fit in the other half.
const SIM_HEAPS_ADDRESS_BYTES: u64 = 64 << 40;

/// The limit of each PE's heap on the simulator, where every PE's heap is a reservation in
/// one process ([`C_DEFAULTS`]' host heap, which `nvshmem_malloc` uses there): NVSHMEM's
/// 128 GiB while the run's reservations fit [`SIM_HEAPS_ADDRESS_BYTES`], less at more PEs
/// (16 GiB at 4096), a power of two so that the value reads well in messages.
pub(crate) fn sim_heap_limit_bytes(n_pes: u32) -> u64 {
    const NVSHMEM_MAX_MEMORY_PER_GPU_BYTES: u64 = 128 << 30;
    let share = SIM_HEAPS_ADDRESS_BYTES / u64::from(n_pes.max(1));
    let power_of_two = 1u64 << share.ilog2();
    power_of_two.min(NVSHMEM_MAX_MEMORY_PER_GPU_BYTES)
}

/// [`C_DEFAULTS`] for a simulated run of `n_pes` PEs: the heap limited to
/// [`sim_heap_limit_bytes`].
pub(crate) fn sim_defaults(n_pes: u32) -> Vec<(&'static str, String)> {
    C_DEFAULTS
        .iter()
        .map(|&(name, value)| match name {
            "SHMEM_SYMMETRIC_SIZE" => (name, sim_heap_limit_bytes(n_pes).to_string()),
            _ => (name, value.to_owned()),
        })
        .collect()
}

/// The environment's variables over `defaults`. Two passes so that the environment's
/// NVSHMEM names apply where the environment leaves the heap's own variable unset, whatever
/// the defaults set (`Config::with_lookup`).
pub(crate) fn config_with<V: AsRef<str>>(defaults: &[(&str, V)]) -> Result<Config, CallError> {
    let from_defaults = |name: &str| {
        defaults
            .iter()
            .find(|(var, _)| *var == name)
            .map(|(_, value)| value.as_ref().to_owned())
    };
    // Why lossy: a value that is not Unicode then fails to parse, naming the variable.
    let from_env = |name: &str| std::env::var_os(name).map(|v| v.to_string_lossy().into_owned());
    let config = Config::default()
        .with_lookup(from_defaults)
        .and_then(|config| config.with_lookup(from_env));
    Ok(config.map_err(rshmem::ShmemError::from)?)
}

/// A device and configuration handed to a PE before its program starts.
pub(crate) struct Provided {
    device: Cell<Option<(AnyDevice, Config)>>,
}

impl Provided {
    /// Nothing provided yet.
    pub(crate) const fn new() -> Provided {
        Provided {
            device: Cell::new(None),
        }
    }
}

impl Slot {
    /// Gives the PE of this slot `device` and `config`, which its `shmem_init` takes instead
    /// of starting a backend itself.
    pub(crate) fn provide(&self, device: AnyDevice, config: Config) {
        self.provided().device.set(Some((device, config)));
    }
}

/// What `nvshmemx_init_attr` asks of the `shmem_init` it runs ([`with_request`]).
#[derive(Debug, Default)]
pub(crate) struct Request {
    /// The bootstrap its flags name (the MPI communicator's, the unique id's); `None`: the
    /// environment's (`RSHMEM_BOOTSTRAP`, the launcher's variables).
    pub(crate) bootstrap: Option<Box<dyn Bootstrap>>,
    /// Whether nvcc built the program's initialisation for GPUs.
    pub(crate) gpu_program: bool,
}

/// The request of the `nvshmemx_init_attr` in progress, for [`start`].
static REQUEST: Mutex<Option<Request>> = Mutex::new(None);

/// Runs `init` (a `shmem_init`) with `request` for its [`start`]; whatever `start` did not
/// take is dropped after.
pub(crate) fn with_request<R>(request: Request, init: impl FnOnce() -> R) -> R {
    *REQUEST.lock().unwrap_or_else(|e| e.into_inner()) = Some(request);
    let result = init();
    REQUEST.lock().unwrap_or_else(|e| e.into_inner()).take();
    result
}

/// Joins the run on the backend of [`BACKEND_VAR`] and sets up the PE of `slot`, through the
/// bootstrap `nvshmemx_init_attr` opened, if any ([`with_request`]), or the environment's.
/// `around_sleep` is what the process backend runs around every sleep of a wait (the lock of
/// `SHMEM_THREAD_MULTIPLE`).
pub(crate) fn start(
    slot: &Slot,
    around_sleep: fn(&mut dyn FnMut()),
) -> Result<Shmem<Backend>, CallError> {
    if let Some((device, config)) = slot.provided().device.take() {
        return Ok(rshmem::attach(device, config)?);
    }
    let request = REQUEST
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
        .unwrap_or_default();
    let started = Started::from_env(request.gpu_program)?;
    let config = config_with(started.defaults())?;
    // What SHMEM_INFO names: the launchers that print the table (`rshmem run`) are not
    // there under mpirun or a unique id.
    let bootstrap_said = match &request.bootstrap {
        Some(given) => format!("{} (nvshmemx_init_attr)", given.name()),
        None => match hw::bootstrap::choose(|name| std::env::var_os(name)) {
            Ok(Some(choice)) => format!("{} ({})", choice.kind.name(), choice.why),
            _ => "none, a single PE".to_string(),
        },
    };
    let info = config.info;
    let device = match started {
        Started::Process => AnyDevice::new(
            hw::process::Process::builder()
                .static_data(true)
                .around_sleep(Arc::new(around_sleep))
                .bootstrap(request.bootstrap)
                .build()?
                .join()?,
        ),
        // Waits on a GPU poll rather than sleep, so there is no sleep to release the lock
        // of SHMEM_THREAD_MULTIPLE around.
        // Static data as on the process backend: shmem_init runs before the program's own
        // threads (the driver's threads do not write the program's globals).
        Started::Cuda => AnyDevice::new(
            hw::cuda::Cuda::builder()
                .static_data(true)
                .bootstrap(request.bootstrap)
                .build()?
                .join()?,
        ),
    };
    let shmem = rshmem::attach(device, config)?;
    if info && shmem.my_pe() == 0 {
        // Why stderr: SHMEM_INFO asks for it, beside the table the runtime logs.
        let _ = writeln!(std::io::stderr(), "rshmem: bootstrap: {bootstrap_said}");
    }
    Ok(shmem)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_simulator_s_heap_limit_is_nvshmem_s_until_the_pes_would_not_fit() {
        assert_eq!(sim_heap_limit_bytes(1), 128 << 30);
        assert_eq!(sim_heap_limit_bytes(512), 128 << 30);
        assert_eq!(sim_heap_limit_bytes(513), 64 << 30);
        assert_eq!(sim_heap_limit_bytes(4096), 16 << 30);
        for n_pes in [1, 7, 100, 1000, 4096, 100_000] {
            let total = sim_heap_limit_bytes(n_pes) * u64::from(n_pes);
            assert!(
                total <= SIM_HEAPS_ADDRESS_BYTES,
                "{n_pes} PEs reserve {total} bytes"
            );
        }
    }
}
