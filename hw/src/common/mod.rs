//! What more than one backend uses, so that no backend imports another.
//!
//! The host and CUDA backends both run PEs as threads of one process ([`threads`]) and both
//! gather bytes from every PE of a process at a rendezvous ([`rendezvous`]). Each piece here
//! that synchronises threads is built on the [`crate::sync`] facade, so the host backend's
//! loom and shuttle suites check it for every backend that uses it. The CUDA and process
//! backends both share memory between the processes of a run as file descriptors
//! (`fd_sharing`), which is system calls, not thread synchronisation.

#[cfg(any(feature = "cuda", feature = "process"))]
pub(crate) mod fd_sharing;
pub(crate) mod rendezvous;
pub(crate) mod threads;
