//! Kernels: a grid of blocks of threads on one PE, each thread an async closure, with thread-,
//! warp- and block-scoped SHMEM operations (NVSHMEM's plain, `_warp` and `_block` variants),
//! so device-side algorithms can be written and checked on any backend, the simulator
//! included. docs/kernels.md describes the model and what simulated time means in it.
//!
//! A thread suspends only at its scoped calls: waits on memory, gets, and the meetings of its
//! warp or block. [`crate::Shmem::launch_kernel`] polls every thread of the grid in turn until
//! each is done (`exec.rs`), so threads interleave at those calls and a thread that waits
//! does not stop the others.
//!
//! - `dims.rs`: [`Dim3`], sizes and indices of a launch.
//! - `launch.rs`: `Shmem::launch_kernel` and the state every thread of a launch shares.
//! - `exec.rs`: the executor, and what the PE does when every thread waits.
//! - `park.rs`: the waits a thread suspends in (tickets, memory words, its group).
//! - `group.rs`: where the threads of a warp or block meet for a scoped call.
//! - `thread.rs`: [`KernelThread`], a thread's ids and its thread-only calls; `atomic.rs` its
//!   atomics.
//! - `scope.rs`: [`Scoped`], RMA, signals and ordering from a thread, warp or block.
//! - `collectives.rs`: barrier, broadcast, fcollect, alltoall and sum reduction over every
//!   PE, from a scope.
//! - `error.rs`: [`KernelError`].

mod atomic;
mod collectives;
mod dims;
mod error;
mod exec;
mod group;
mod launch;
mod park;
mod scope;
mod thread;
mod what;

pub use collectives::SumElement;
pub use dims::{Dim3, MAX_BLOCK_THREADS, MAX_LAUNCH_THREADS, WARP_SIZE};
pub use error::KernelError;
pub use scope::Scoped;
pub use thread::KernelThread;
