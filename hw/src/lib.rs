//! The hardware contract of rshmem.
//!
//! `hw` names what a backend (the deterministic simulator, CUDA over NVLink, InfiniBand) must
//! provide so that the SHMEM runtime can run on it. Design choices:
//!
//! - **Static dispatch.** [`Backend`] bundles associated types only; the runtime is generic
//!   over it and never names a concrete backend.
//! - **Ordering is documented per method.** Every operation of [`Queue`] and [`Device`] states
//!   its `# Ordering` and visibility contract (`docs/ordering.md`). A backend may
//!   be stronger than the contract; the simulator is the weakest legal implementation.
//! - **Validation is the caller's job.** The runtime checks PE ranges, heap bounds and
//!   alignment before it calls `hw`. Passing a range outside a segment is a contract violation
//!   (a panic), not an error value. Errors cover only what a correct caller can hit: running out
//!   of memory, a peer that died, a wait whose deadline passed.
//! - **Capabilities, not identities.** The runtime branches on [`Caps`], never on which backend
//!   it runs on.
//! - **No drivers at build time.** With default features this crate builds with no CUDA and no
//!   verbs; real backends load their drivers at run time.
//! - **The contract only.** What one backend prices or models (the simulator's costs) lives in
//!   that backend; what several backends share lives in `common/`, so no backend imports
//!   another.

#![deny(missing_docs)]

mod amo;
pub mod any;
mod backend;
pub mod bootstrap;
mod caps;
mod common;
#[cfg(feature = "cuda")]
pub mod cuda;
mod error;
mod exchanged;
mod hang_report;
pub mod host;
mod kernel_event;
#[cfg(any(feature = "process", feature = "cuda"))]
pub mod ofi;
#[cfg(all(
    feature = "process",
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
pub mod process;
mod sync;
pub mod topology;
mod types;

pub use amo::{AmoKind, AmoOp, AmoWidth, Cmp, SignalOp};
pub use backend::{Backend, Device, LaunchOutput, Launcher, Queue, WaitSpec, waiting_for_any};
pub use caps::{Caps, Semantics, UnknownSemantics};
pub use error::{DeviceError, LaunchError, PeFailure, QueueError, WaitReport};
pub use exchanged::{Exchanged, append_segment_key};
pub use hang_report::{KernelWait, WordNames, WordRule, describe_word, nvshmem_cmp_name};
pub use kernel_event::{HostThreadEvent, KernelEvent, KernelMemory, SyncObject, ThreadAccess};
pub use topology::{Path, PathClass, Topology};
pub use types::{
    Copier, Duration, Instant, LocalRange, MemKind, Pe, RemoteRange, SegmentKey, Ticket,
};
