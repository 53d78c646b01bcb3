//! What more than one backend uses, so that no backend imports another.
//!
//! The host and CUDA backends both run PEs as threads of one process ([`threads`]) and both
//! gather bytes from every PE of a process at a rendezvous ([`rendezvous`]). Each piece here is
//! built on the [`crate::sync`] facade, so the host backend's loom and shuttle suites check it
//! for every backend that uses it.

pub(crate) mod rendezvous;
pub(crate) mod threads;
