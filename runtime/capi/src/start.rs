//! How `shmem_init` gets its PE: the backend, its device, and the configuration.
//!
//! A process started by `oshrun` (or on its own) runs one PE on the process backend. The host
//! of a simulated run hands each PE's coroutine its device before the program starts
//! ([`Slot::provide`]), so the same `shmem_init` picks it up there.

use std::cell::Cell;
use std::sync::Arc;

use hw::any::AnyDevice;
use rshmem::{Config, Shmem};

use crate::fail::CallError;
use crate::state::{Backend, Slot};

/// What a C program's PE gets where the environment is silent: its PEs have no GPU, so the
/// symmetric heap `shmem_malloc` uses is host memory sized by `SHMEM_SYMMETRIC_SIZE`, as in
/// other OpenSHMEM implementations, and there is no device heap unless asked for. Team slots
/// are the most the runtime allows, since each active set of the deprecated collectives
/// keeps one for the life of the process (`active_set.rs`).
const C_DEFAULTS: [(&str, &str); 4] = [
    ("SHMEM_SYMMETRIC_SIZE", "1g"),
    ("SHMEM_DEVICE_SYMMETRIC_SIZE", "0"),
    ("SHMEM_SYMMETRIC_HEAP_DEFAULT", "HOST"),
    ("RSHMEM_TEAMS_MAX", "64"),
];

/// The configuration: the environment's variables, [`C_DEFAULTS`] where it has none.
pub(crate) fn config() -> Result<Config, CallError> {
    let lookup = |name: &str| match std::env::var_os(name) {
        // Why lossy: a value that is not Unicode then fails to parse, naming the variable.
        Some(value) => Some(value.to_string_lossy().into_owned()),
        None => C_DEFAULTS
            .iter()
            .find(|(var, _)| *var == name)
            .map(|(_, value)| (*value).to_owned()),
    };
    Ok(Config::from_lookup(lookup).map_err(rshmem::ShmemError::from)?)
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

/// Joins the run and sets up the PE of `slot`. `around_sleep` is what the process backend
/// runs around every sleep of a wait (the lock of `SHMEM_THREAD_MULTIPLE`).
pub(crate) fn start(
    slot: &Slot,
    around_sleep: fn(&mut dyn FnMut()),
) -> Result<Shmem<Backend>, CallError> {
    if let Some((device, config)) = slot.provided().device.take() {
        return Ok(rshmem::attach(device, config)?);
    }
    let config = config()?;
    let device = hw::process::Process::builder()
        .static_data(true)
        .around_sleep(Arc::new(around_sleep))
        .build()?
        .join()?;
    Ok(rshmem::attach(AnyDevice::new(device), config)?)
}
