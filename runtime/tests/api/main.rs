//! The runtime's public API end to end on the simulator, one module per subject.
//!
//! Why one binary: each integration-test binary links the whole simulator on its own, so one
//! binary with modules builds far faster than one per subject. `common` holds what every
//! subject shares.

mod basics;
mod check;
mod collectives;
mod common;
mod contexts;
mod contexts_in_kernels;
mod heaps;
mod kernels;
mod on_stream;
mod p2p;
mod teams;
