//! The runtime's public API end to end on the simulator, one module per subject.
//!
//! Why one binary: each integration-test binary is compiled and linked against the runtime and
//! the simulator on its own, so one binary with a module per subject does that work once.
//! `common` holds what every subject shares.

mod basics;
mod buffers;
mod check;
mod check_kernels;
mod check_visibility;
mod collectives;
mod common;
mod contexts;
mod contexts_in_kernels;
mod heaps;
mod kernels;
mod on_stream;
mod p2p;
mod teams;
