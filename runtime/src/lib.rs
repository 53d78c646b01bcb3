//! rshmem: an OpenSHMEM/NVSHMEM-style PGAS runtime over a pluggable hardware contract.
//!
//! A program is a function that every PE runs with its own [`Shmem`] handle. [`run()`] starts
//! the PEs on a [`hw::Launcher`] (the deterministic simulator, or real GPUs), sets each one up,
//! runs the function, and tears the PE down again. Inside, a PE allocates symmetric arrays
//! with [`Shmem::malloc`] (every PE gets the same [`Sym`] handle), moves data with
//! [`put`](Ctx::put) and [`get`](Ctx::get), updates words with the `atomic_*` family,
//! orders its operations with [`fence`](Ctx::fence) and [`quiet`](Ctx::quiet), and
//! synchronises with [`Shmem::barrier_all`], [`wait_until`](Ctx::wait_until) and
//! [`put_signal`](Ctx::put_signal). The operations are methods of the default context,
//! [`Ctx`], which `Shmem` dereferences to.
//!
//! For example, a ring: each PE allocates one `u64` with `malloc::<u64>(1)`, puts its PE
//! number into the next PE's element with `put(sym, &[me], (me + 1) % n)`, calls
//! `barrier_all()`, and reads its own element with `local(sym)`, finding its predecessor's
//! number there.
//!
//! Design choices:
//!
//! - **Generic over the hardware.** Everything is generic over `B: hw::Backend`; this crate
//!   never names a concrete backend and branches only on [`hw::Caps`]. Devices and queues are
//!   never required to be `Send` or `Sync` (the simulator runs every PE on one thread).
//! - **Check, then call the hardware.** Every operation checks its PE, that its address lies
//!   inside one live allocation, and its alignment, before `hw` sees it: `hw` treats a bad
//!   range as a contract violation and panics, while here it is a [`ShmemError`] that says
//!   what to fix.
//! - **A deterministic symmetric heap.** Allocation is first fit over byte offsets, so PEs
//!   that make the same collective calls get the same offsets without exchanging them. Each
//!   collective call trades its arguments through the bootstrap exchange first, so PEs that
//!   disagree all fail with [`ShmemError::CollectiveMismatch`] instead of corrupting memory.
//! - **Two heaps, one address space.** A device heap (`SHMEM_DEVICE_SYMMETRIC_SIZE`) and a
//!   host heap (`SHMEM_SYMMETRIC_SIZE`) can exist at once, each in its own window of
//!   symmetric addresses, so an address says which heap it is in; `malloc` uses the default
//!   heap (`SHMEM_SYMMETRIC_HEAP_DEFAULT`), [`Shmem::malloc_with_hints`] picks one
//!   (`docs/heaps.md`).
//! - **Handles, not pointers.** A [`Sym`] is a symmetric address, a length and the identity
//!   of its allocation; it is `Copy` and checked at every use, so a handle to freed memory is an
//!   error, not a silent overwrite. [`SymAddr`] is the raw address for the `*_bytes`
//!   operations.
//! - **Every wait has a deadline.** Blocking calls give up after `RSHMEM_WAIT_TIMEOUT_MS` of
//!   the backend's clock (virtual time on the simulator) and report who waited for what.
//! - **One configuration table.** [`config::table`] lists every environment variable; only
//!   [`Config::from_env`] reads the environment.
//! - **Races are checkable.** [`check::Checked`] wraps any launcher and reports the data
//!   races on symmetric memory that no ordering rule prevents (`docs/check.md`).
//! - **Tracing, not printing.** Collectives log at debug level and single operations at
//!   trace level under the target [`TRACING_TARGET`].

#![warn(missing_docs)]

pub mod check;
mod collectives;
pub mod config;
mod ctx;
mod error;
mod exit;
mod info;
mod kernel;
mod memory;
mod p2p;
mod pe;
mod run;
mod shmem;
mod team;

pub use collectives::ops;
pub use config::{Config, ConfigError, ConfigVar, VarKind};
pub use ctx::{Ctx, CtxOptions};
pub use error::ShmemError;
pub use hw::{Cmp, MemKind, SignalOp};
pub use info::{info_get_name, info_get_version};
pub use kernel::{
    Dim3, KernelError, KernelThread, MAX_BLOCK_THREADS, MAX_LAUNCH_THREADS, Scoped, SumElement,
    WARP_SIZE,
};
pub use memory::hints::MallocHints;
pub use memory::mapped::MappedHeap;
pub use memory::ptr::PeerPtr;
pub use memory::sym::{AtomicElement, Element, Sym, SymAddr};
pub use p2p::wait_narrow::{NarrowElement, NarrowMode};
pub use pe::PeState;
pub use run::{PeError, RunError, RunOutput, attach, run};
pub use shmem::Shmem;
pub use team::{TEAM_CREATE_SCRATCH_WORDS, Team, TeamConfig, TeamKind};

/// The `tracing` target of every event this crate emits.
pub const TRACING_TARGET: &str = "rshmem::runtime";
