//! What more than one backend uses, so that no backend imports another.
//!
//! The host and CUDA backends both run PEs as threads of one process ([`threads`]) and both
//! gather bytes from every PE of a process at a rendezvous ([`rendezvous`]). Each piece here
//! that synchronises threads is built on the [`crate::sync`] facade, so the host backend's
//! loom and shuttle suites check it for every backend that uses it. The CUDA and process
//! backends both share memory between the processes of a run as file descriptors
//! (`fd_sharing`), which is system calls, not thread synchronisation; and both keep host memory
//! of a PE as a memfd every PE maps (`memfd`), remap the program's static data onto one
//! (`static_data`), and apply the contract's atomics to such memory with CPU atomics
//! (`cpu_atomics`). Those order accesses of other processes, which loom and shuttle cannot
//! model, so they take the CPU's atomics under every build ([`crate::sync::cross_process`]).
//! Both choose the path to each peer by `paths` (the network path itself is `crate::ofi`'s).

#[cfg(any(feature = "cuda", feature = "process"))]
pub(crate) mod cpu_atomics;
#[cfg(any(feature = "cuda", feature = "process"))]
pub(crate) mod fd_sharing;
#[cfg(any(feature = "cuda", feature = "process"))]
pub(crate) mod memfd;
#[cfg(any(feature = "cuda", feature = "process"))]
pub(crate) mod paths;
pub(crate) mod rendezvous;
#[cfg(any(feature = "cuda", feature = "process"))]
pub(crate) mod static_data;
pub(crate) mod threads;
